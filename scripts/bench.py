#!/usr/bin/env python3
"""Whole-process benchmark of `tracebook render`: every performance target beside its threshold,
in one table.

usage: scripts/bench.py [--harness claude-code,codex,gemini-cli,opencode] [--sizes 1,10,100]
                        [--targets LIST|all] [--runs 3] [--out DIR] [--exe PATH]
                        [--batch N] [--peer claude-code-log] [--peer-venv DIR]
                        [--no-browser] [--stages] [--cores N] [--page FILE]

The targets (`--targets`, comma-separated; default: every one the chosen sizes allow except
`shapes` and `batch`, which take minutes):

- `throughput`: MB/s on the 100 MB session of each harness, with one thread
  (`RAYON_NUM_THREADS=1`, ≥ 100 MB/s) and with every core (≥ 200 MB/s on two);
- `small`: wall seconds of the 10 MB session (≤ 0.1 s);
- `memory`: peak resident memory at 100 MB (≤ 0.5× the input);
- `size`: notebook bytes at 100 MB (≤ 0.2× the input);
- `threads`: the report (`--format json`) is the same bytes on one thread and on many (every
  measured size; every run is stamped with the same `TRACEBOOK_GENERATED_AT`, and folder
  pseudonyms, keyed at random for each report, are renamed in order of appearance);
- `paint`: first contentful paint of the 100 MB notebook in headless Chromium, against the
  1 MB one's (≤ 1.25×); needs Chromium and both sizes;
- `responsive`: the longest main-thread task (the browser's long-task timing, read over the
  DevTools protocol) while the 100 MB Claude Code notebook in headless Chromium searches for
  a common term and for a rare one, filters on Status = error and Status = unknown, and
  scrolls 40 screens through the errors, each on a freshly loaded page (≤ 200 ms); with the
  total of the long tasks, the time until the page answered and its element count after.
  Needs Chromium and the 100 MB size; `--page FILE` measures a notebook written elsewhere;
- `shapes`: a Claude Code session of one 200 MB line, and one of two million tiny lines
  (one million turns): peak ≤ 1.5× the input;
- `batch`: `render --all` over `--batch N` generated Claude Code sessions (default 40, about
  4 MB each): sessions/s, MB/s, CPU over wall, and peak memory against the largest session;
- `peer`: with `--peer claude-code-log`, the peer's time over tracebook's on the 10 MB Claude
  Code session, run pair by pair in turn (≥ 40×). The peer is looked for in `--peer-venv`
  (default OUT/peers-venv) and installed there with pip when missing; when that fails, the
  table says so.

Sessions are generated with fixed seeds, so every run reads the same bytes: Claude Code ones by
../shared/tools/gen-claude-session.py (or $TRACEBOOK_GEN_CLAUDE), Codex rollouts, Gemini CLI
recordings and OpenCode storage trees by scripts/gen-session.py. They are kept in --out and
reused by later runs. Each figure is the median of --runs runs after one warm-up; peak memory
is the highest resident set the binary itself reports (VmHWM, in its `TRACEBOOK_TIMINGS`
lines), since a child's own maximum starts at its parent's. `--exe` measures a binary built elsewhere (to
compare two versions with the same script); without it the release build is made first.
--stages adds a second table with each stage's wall time and the peak resident memory once it
is done, in one more run (the lines `TRACEBOOK_TIMINGS=1` makes the binary print). Only the
Python standard library is used.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HARNESSES = ["claude-code", "codex", "gemini-cli", "opencode"]
# --turns giving about 1, 10 and 100 MB sessions, and the subagent counts used in perf.md.
SIZES = {1: (20, 1), 10: (200, 13), 100: (1880, 125)}
TARGETS = ["throughput", "small", "memory", "size", "threads", "paint", "responsive", "shapes",
           "batch", "peer"]
DEFAULT_TARGETS = ["throughput", "small", "memory", "size", "threads", "paint", "responsive", "peer"]


class Run:
    """One child's wall seconds, CPU seconds (user + system) and peak RSS in bytes."""

    def __init__(self, wall: float, cpu: float, peak: int):
        self.wall, self.cpu, self.peak = wall, cpu, peak


# Every notebook is stamped with the same time, so the same input gives the same bytes.
STAMP = {"TRACEBOOK_GENERATED_AT": "2026-01-01T00:00:00Z"}


PEAK_LINE = re.compile(r"memory: .+ [0-9.]+ MiB resident, ([0-9.]+) MiB peak")


def run_child(cmd: list[str], env: dict[str, str] | None = None) -> Run:
    """Runs `cmd` once. Its peak memory is the highest `MiB peak` (the process's own VmHWM)
    tracebook prints with `TRACEBOOK_TIMINGS`: a child's `ru_maxrss` starts at its parent's
    high-water mark when it execs (Linux carries it over), so after this process has
    generated a large session every child would seem to peak at least that high. A command
    that prints no such line (a peer) falls back to `ru_maxrss`."""
    start = time.perf_counter()
    env = dict(env or os.environ, TRACEBOOK_TIMINGS="1", **STAMP)
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").splitlines()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {' '.join(cmd)}")
    peaks = [float(m.group(1)) for line in lines if (m := PEAK_LINE.fullmatch(line))]
    peak = int(max(peaks) * 1048576) if peaks else usage.ru_maxrss * 1024
    return Run(wall, usage.ru_utime + usage.ru_stime, peak)


class Median:
    """The median of --runs runs after one warm-up, with the spread."""

    def __init__(self, runs: list[Run]):
        walls = [r.wall for r in runs]
        self.wall = statistics.median(walls)
        self.lo, self.hi = min(walls), max(walls)
        self.cpu = statistics.median(r.cpu for r in runs)
        self.peak = max(r.peak for r in runs)

    def shown(self) -> str:
        return f"{self.wall:.3f} s ({self.lo:.3f}–{self.hi:.3f})"


def median_run(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> Median:
    run_child(cmd, env)  # warm-up
    return Median([run_child(cmd, env) for _ in range(runs)])


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def paint_times(browser: str, page: Path, runs: int) -> tuple[float, float] | None:
    """Median milliseconds from the page's first bytes to its first contentful paint and to
    its load event, from a Chromium trace (what a reader waits for, without browser start-up);
    None when the trace holds neither."""
    paints, loads = [], []
    for _ in range(runs + 1):
        with tempfile.TemporaryDirectory() as profile:
            trace = Path(profile) / "trace.json"
            cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   f"--user-data-dir={profile}", "--trace-startup=loading,devtools.timeline,rail",
                   "--trace-startup-format=json", f"--trace-startup-file={trace}",
                   "--trace-startup-duration=5", "--dump-dom", page.as_uri()]
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            try:
                data = json.loads(trace.read_text())
            except (OSError, ValueError):
                continue
        events = data["traceEvents"] if isinstance(data, dict) else data
        starts = [e["ts"] for e in events if e.get("name") == "NavigationBodyLoader::StartLoadingBody"
                  and e.get("args", {}).get("url") == page.as_uri()]
        if not starts:
            continue
        t0 = min(starts)
        first = {}
        for e in events:
            name = e.get("name")
            if name in ("firstContentfulPaint", "MarkLoad") and e["ts"] >= t0 and name not in first:
                first[name] = (e["ts"] - t0) / 1000
        if len(first) == 2:
            paints.append(first["firstContentfulPaint"])
            loads.append(first["MarkLoad"])
    if len(paints) < 2:
        return None
    return statistics.median(paints[1:]), statistics.median(loads[1:])


class Cdp:
    """Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
    the browser reads commands on its fd 3 and writes answers on fd 4, each JSON message ended
    by a NUL byte), so only the standard library is needed."""

    def __init__(self, browser: str, width: int = 1280, height: int = 900):
        self.profile = tempfile.TemporaryDirectory()
        to_child, self._out = os.pipe()
        self._in, from_child = os.pipe()
        args = [browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--hide-scrollbars", f"--user-data-dir={self.profile.name}",
                f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank"]
        # The pipe's ends go to fds 3 and 4 in the child, from copies numbered past them.
        import fcntl
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]

        def place() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     close_fds=False, preexec_fn=place)
        for fd in high + [to_child, from_child]:
            os.close(fd)
        self._buf, self._id, self.events = b"", 0, []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def _read(self, timeout: float) -> dict | None:
        import select
        while b"\0" not in self._buf:
            ready, _, _ = select.select([self._in], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method: str, session: bool = False, timeout: float = 120, **params) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            got = self._read(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise TimeoutError(method)
            if got.get("id") == self._id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})
            self.events.append(got)

    def eval(self, expr: str, timeout: float = 120):
        got = self.call("Runtime.evaluate", session=True, timeout=timeout, expression=expr,
                        returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in got:
            raise RuntimeError(f"{expr}: {got['exceptionDetails']}")
        return got["result"].get("value")

    def load(self, url: str) -> None:
        self.events = [e for e in self.events if e.get("method") != "Page.loadEventFired"]
        self.call("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + 120
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            got = self._read(max(0.0, deadline - time.monotonic()))
            if got is None:
                raise TimeoutError(f"loading {url}")
            self.events.append(got)

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=10)
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        os.close(self._in)
        os.close(self._out)
        self.profile.cleanup()


# What the responsive target does on the page, and when the page has answered: a search
# typed and run with Enter (it has answered when the count line reads "n of m" or "no
# matches", the match shown), or a status filter chosen (when the review's count line is
# written and no work is under way).
SEARCH = """(() => {{ const q = document.getElementById('q'); q.value = {q};
  q.dispatchEvent(new KeyboardEvent('keydown', {{ key: 'Enter', bubbles: true }})); }})()"""
SEARCHED = "/^(\\d+ of \\d+\\+?|no matches)$/.test(document.getElementById('q-count').textContent)"
FILTER = """(() => {{ const s = document.getElementById('f-status'); s.value = {status};
  s.dispatchEvent(new Event('change')); }})()"""
FILTERED = ("document.getElementById('f-count').textContent !== '' && "
            "!/…/.test(document.getElementById('q-count').textContent)")
# Reading on in review mode: a screen further every 100 ms, 40 times.
SCROLL = """; (() => { let n = 0; const t = setInterval(() => { scrollBy(0, innerHeight);
  if (++n === 40) { clearInterval(t); window.__scrolled = true; } }, 100); })()"""
RESPONSIVE_CASES = [
    ("search \"timer.py\"", SEARCH.format(q=json.dumps("timer.py")), SEARCHED),
    ("search \"116639 tokens\"", SEARCH.format(q=json.dumps("116639 tokens")), SEARCHED),
    ("Status = error", FILTER.format(status=json.dumps("error")), FILTERED),
    ("Status = unknown", FILTER.format(status=json.dumps("unknown")), FILTERED),
    ("Status = error, then 40 screens scrolled", FILTER.format(status=json.dumps("error")) + SCROLL,
     "window.__scrolled === true && " + FILTERED),
]
# Every long task (over 50 ms) of the page from its first script on, kept for reading.
LONG_TASKS = """window.__long = [];
new PerformanceObserver(l => l.getEntries().forEach(e => __long.push([e.startTime, e.duration])))
  .observe({ type: 'longtask', buffered: true });"""


def long_tasks(browser: str, page: Path, runs: int, settle: float = 1.5) -> list[dict]:
    """For each responsive case, on a freshly loaded page each run: the longest task (ms), the
    sum of the long tasks, the milliseconds until the page answered, and the document's element
    count once it settled (what was inserted). Tasks are counted from the action until `settle`
    seconds after the answer, so work the answer sets off (stored turns placed as they near the
    view) counts too."""
    results = []
    cdp = Cdp(browser)
    try:
        cdp.call("Page.addScriptToEvaluateOnNewDocument", session=True, source=LONG_TASKS)
        for name, action, answered in RESPONSIVE_CASES:
            seen = []
            for _ in range(runs):
                cdp.load(page.as_uri())
                # The page's own start-up settles before the action.
                time.sleep(1.0)
                start = cdp.eval("performance.now()")
                cdp.eval(action)
                deadline = time.monotonic() + 120
                while not cdp.eval(answered) and time.monotonic() < deadline:
                    time.sleep(0.05)
                done = cdp.eval("performance.now()")
                time.sleep(settle)
                tasks = [d for t, d in cdp.eval("__long") if t + d >= start]
                seen.append({"longest": max(tasks, default=0.0), "total": sum(tasks),
                             "answer": done - start,
                             "nodes": cdp.eval("document.getElementsByTagName('*').length")})
            results.append({"case": name, "runs": seen})
    finally:
        cdp.close()
    return results


def responsive_rows(label: str, results: list[dict]) -> list[dict[str, str]]:
    rows = []
    for r in results:
        runs = r["runs"]
        longest = [x["longest"] for x in runs]
        med = statistics.median(longest)

        def ms(t: float) -> str:
            # The browser reports only tasks over 50 ms.
            return f"{t:.0f} ms" if t else "≤ 50 ms"

        rows.append(row("longest task", f"{label}: {r['case']}",
                        f"{ms(med)} (runs: {', '.join(ms(x) for x in longest)}; long tasks "
                        f"{statistics.median(x['total'] for x in runs):.0f} ms in all; answered in "
                        f"{statistics.median(x['answer'] for x in runs) / 1000:.1f} s; "
                        f"{statistics.median(x['nodes'] for x in runs) / 1000:.0f}k elements)",
                        "≤ 200 ms", max(longest) <= 200))
    return rows


def stage_times(cmd: list[str]) -> dict[str, str]:
    """Each stage's wall seconds in one run, from the `timing: STAGE SECONDS s` lines, and the
    peak resident memory after it (MiB), from the `memory: STAGE … MiB peak` lines."""
    env = dict(os.environ, TRACEBOOK_TIMINGS="1", **STAMP)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    times = {}
    for line in done.stderr.splitlines():
        if line.startswith("timing: ") and line.endswith(" s"):
            stage, _, secs = line[len("timing: "):-2].rpartition(" ")
            times[stage] = secs
        elif m := re.fullmatch(r"memory: (.+) [0-9.]+ MiB resident, ([0-9.]+) MiB peak", line):
            times[f"{m.group(1)} peak MiB"] = m.group(2)
    return times


def table(rows: list[dict[str, str]]) -> None:
    head: list[str] = []
    for r in rows:
        head += [k for k in r if k not in head]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r.get(h, "") for h in head) + " |")


def input_size(path: Path) -> int:
    """Bytes of a session file, or of every file under a session folder (an OpenCode tree)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def report_digest(path: Path) -> str:
    """SHA-256 of a JSON report with its folder pseudonyms renamed in order of appearance."""
    names: dict[str, str] = {}
    text = re.sub(r"<path-[0-9a-f]{6}>",
                  lambda m: names.setdefault(m.group(0), f"<path-{len(names)}>"),
                  path.read_text())
    return hashlib.sha256(text.encode()).hexdigest()


def generate(harness: str, size: int, out: Path, claude_gen: Path) -> Path:
    """The session for one harness and size, generated once and kept in `out`."""
    turns, subagents = SIZES.get(size, (size * 19, max(1, size)))
    if harness == "claude-code":
        session = out / f"claude-{size}m.jsonl"
        cmd = [sys.executable, str(claude_gen), "--turns", str(turns), "--seed", "42",
               "--subagents", str(subagents), "--out", str(session)]
    else:
        # An OpenCode session is its storage tree: the data folder is what gets rendered.
        session = out / (f"{harness}-{size}m" + ("" if harness == "opencode" else ".jsonl"))
        cmd = [sys.executable, str(ROOT / "scripts" / "gen-session.py"), "--harness", harness,
               "--turns", str(turns), "--seed", "42", "--out", str(session)]
    if not session.exists():
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return session


def claude_line(uuid: str, parent: str | None, kind: str, content) -> str:
    return json.dumps({"parentUuid": parent, "isSidechain": False, "cwd": "/home/carol/proj",
                       "sessionId": "s", "version": "2.1.39", "type": kind, "uuid": uuid,
                       "timestamp": "2026-03-02T10:00:01.000Z",
                       "message": {"role": "user" if kind == "user" else "assistant",
                                   "content": content}}, separators=(",", ":"))


def one_line_session(out: Path) -> Path:
    """A Claude Code session whose one tool result is a single 200 MB line of output."""
    path = out / "claude-one-200mb-line.jsonl"
    if path.exists():
        return path
    block = "".join(f"[{i:06d}] worker ok: processed batch of 512 items in 41 ms; " for i in range(1000))
    payload = (block * (200_000_000 // len(block) + 1))[:200_000_000]
    with path.open("w") as f:
        f.write(claude_line("u1", None, "user", "run the job and show its log") + "\n")
        f.write(claude_line("a1", "u1", "assistant", [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash",
             "input": {"command": "./job --verbose"}}]) + "\n")
        f.write(claude_line("u2", "a1", "user", [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": payload}]) + "\n")
    return path


def tiny_lines_session(out: Path) -> Path:
    """A Claude Code session of two million tiny lines: one million one-line prompts, each
    answered in one line."""
    path = out / "claude-2m-tiny-lines.jsonl"
    if path.exists():
        return path
    with path.open("w") as f:
        parent = None
        for i in range(1_000_000):
            u, a = f"u{i}", f"a{i}"
            f.write(json.dumps({"type": "user", "uuid": u, "parentUuid": parent, "sessionId": "s",
                                "message": {"role": "user", "content": f"q {i}"}},
                               separators=(",", ":")) + "\n")
            f.write(json.dumps({"type": "assistant", "uuid": a, "parentUuid": u, "sessionId": "s",
                                "message": {"role": "assistant",
                                            "content": [{"type": "text", "text": f"a {i}"}]}},
                               separators=(",", ":")) + "\n")
            parent = a
    return path


SHAPES = {"one-line": one_line_session, "tiny-lines": tiny_lines_session}


def batch_home(out: Path, claude_gen: Path, n: int) -> Path:
    """A Claude Code config folder holding `n` generated sessions of about 4 MB each, in ten
    projects."""
    home = out / f"batch-{n}" / "claude"
    done = home / ".done"
    if done.exists():
        return home
    for i in range(n):
        folder = home / "projects" / f"-home-carol-proj{i % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        session = folder / f"00000000-0000-4000-8000-{i:012d}.jsonl"
        subprocess.run([sys.executable, str(claude_gen), "--turns", "80", "--seed", str(1000 + i),
                        "--subagents", "5", "--subagent-layout", "inline", "--out", str(session)],
                       check=True, stdout=subprocess.DEVNULL)
    done.write_text("")
    return home


def peer_command(venv: Path) -> tuple[list[str] | None, str]:
    """The claude-code-log executable in `venv` (installed there with pip when missing), or
    why there is none."""
    exe = venv / "bin" / "claude-code-log"
    if exe.exists():
        return [str(exe)], ""
    try:
        if not (venv / "bin" / "pip").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True,
                           capture_output=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "claude-code-log"],
                       check=True, capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        detail = getattr(e, "stderr", b"") or b""
        last = detail.decode(errors="replace").strip().splitlines()[-1:] or [str(e)]
        return None, f"claude-code-log could not be installed in {venv}: {last[0]}"
    if exe.exists():
        return [str(exe)], ""
    return None, f"pip installed no claude-code-log executable in {venv}"


def row(target: str, case: str, figure: str, threshold: str, met: bool | None) -> dict[str, str]:
    return {"target": target, "case": case, "figure": figure, "threshold": threshold,
            "met": {True: "yes", False: "**no**", None: "-"}[met]}


def mib(n: float) -> str:
    return f"{n / 2**20:.1f} MiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--harness", default=",".join(HARNESSES),
                    help="comma-separated harnesses to measure (default: all four)")
    ap.add_argument("--sizes", default="1,10,100",
                    help="session sizes in MB to measure (the targets name 10 and 100; "
                         "paint compares 100 with 1)")
    ap.add_argument("--targets", default=",".join(DEFAULT_TARGETS),
                    help=f"comma-separated targets, or all: {', '.join(TARGETS)}")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "target" / "bench")
    ap.add_argument("--exe", type=Path, help="the tracebook binary to measure (no build)")
    ap.add_argument("--batch", type=int, default=40, metavar="N",
                    help="sessions the batch target renders (default 40)")
    ap.add_argument("--peer", choices=["claude-code-log"],
                    help="also time this peer side by side on the 10 MB Claude Code session")
    ap.add_argument("--peer-venv", type=Path, help="the peer's venv (default OUT/peers-venv)")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--stages", action="store_true",
                    help="also print each stage's wall time and peak memory")
    ap.add_argument("--cores", type=int,
                    help="run tracebook on this many cores only (taskset); default: all of them")
    ap.add_argument("--page", type=Path,
                    help="the responsive target measures this notebook (no session rendered)")
    ap.add_argument("--make-shape", choices=sorted(SHAPES), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make_shape:
        args.out.mkdir(parents=True, exist_ok=True)
        SHAPES[args.make_shape](args.out)
        return
    harnesses = [h.strip() for h in args.harness.split(",") if h.strip()]
    unknown = [h for h in harnesses if h not in HARNESSES]
    if unknown:
        sys.exit(f"unknown harness {', '.join(unknown)}: expected some of {', '.join(HARNESSES)}")
    targets = TARGETS if args.targets == "all" else [t.strip() for t in args.targets.split(",")]
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        sys.exit(f"unknown target {', '.join(unknown)}: expected some of {', '.join(TARGETS)}")
    sizes = [int(s) for s in args.sizes.split(",")]
    browsing = {"paint", "responsive"} & set(targets)
    browser = None if args.no_browser or not browsing else chromium()
    if args.page:
        if browser is None or "responsive" not in targets:
            sys.exit("--page needs Chromium and the responsive target")
        table(responsive_rows(args.page.name, long_tasks(browser, args.page.resolve(), args.runs)))
        return

    gen = Path(os.environ.get("TRACEBOOK_GEN_CLAUDE", ROOT.parent / "shared/tools/gen-claude-session.py"))
    if ("claude-code" in harnesses or {"shapes", "batch", "peer"} & set(targets)) and not gen.is_file():
        sys.exit(f"generator not found: {gen} (set TRACEBOOK_GEN_CLAUDE)")
    if args.exe:
        exe = args.exe.resolve()
    else:
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
        exe = ROOT / "target" / "release" / "tracebook"
    args.out.mkdir(parents=True, exist_ok=True)

    pin = []
    if args.cores:
        if not shutil.which("taskset"):
            sys.exit("--cores needs taskset (util-linux)")
        pin = ["taskset", "-c", f"0-{args.cores - 1}"]
    cores = args.cores or os.cpu_count() or 1
    one_thread = dict(os.environ, RAYON_NUM_THREADS="1")
    rows, stages = [], []
    paints: dict[tuple[str, int], tuple[float, float] | None] = {}

    def render_cmd(session: Path, page: Path) -> list[str]:
        return pin + [str(exe), "render", str(session), "-o", str(page), "--quiet"]

    for harness, size in [(h, s) for h in harnesses for s in sizes]:
        session = generate(harness, size, args.out, gen)
        page = args.out / f"{harness}-{size}m.html"
        cmd = render_cmd(session, page)
        case = f"{harness} {size} MB"
        in_bytes = input_size(session)
        mb = in_bytes / 1e6
        many = median_run(cmd, args.runs)
        out_bytes = page.stat().st_size
        if size == 100 and "throughput" in targets:
            single = median_run(cmd, args.runs, one_thread)
            rows.append(row("throughput, 1 thread", case,
                            f"{mb / single.wall:.0f} MB/s ({single.shown()})", "≥ 100 MB/s",
                            mb / single.wall >= 100))
            rows.append(row(f"throughput, {cores} cores", case,
                            f"{mb / many.wall:.0f} MB/s ({many.shown()}, CPU {many.cpu:.2f} s)",
                            f"≥ {100 * cores} MB/s", mb / many.wall >= 100 * cores))
        if size == 10 and "small" in targets:
            rows.append(row("10 MB wall", case, many.shown(), "≤ 0.1 s", many.wall <= 0.1))
        if size == 100 and "memory" in targets:
            rows.append(row("peak memory", case, f"{many.peak / in_bytes:.2f}× ({mib(many.peak)})",
                            "≤ 0.5× input", many.peak <= 0.5 * in_bytes))
        if size == 100 and "size" in targets:
            rows.append(row("notebook size", case,
                            f"{out_bytes / in_bytes:.3f}× ({out_bytes / 1e6:.1f} MB)",
                            "≤ 0.2× input", out_bytes <= 0.2 * in_bytes))
        if "threads" in targets:
            # A folder outside the project gets a pseudonym keyed at random for each report:
            # the reports are compared with each pseudonym renamed in order of appearance.
            digests = []
            for env in (None, one_thread):
                report = page.with_suffix(".json")
                run_child(render_cmd(session, report) + ["--format", "json"], env)
                digests.append(report_digest(report))
                report.unlink()
            same = digests[0] == digests[1]
            rows.append(row("same report, 1 and many threads", case,
                            f"sha256 {digests[0][:16]}" + ("" if same else f" vs {digests[1][:16]}"),
                            "equal", same))
        if browser and size in (1, 100) and "paint" in targets:
            paints[(harness, size)] = paint_times(browser, page, args.runs)
        if browser and size == 100 and harness == "claude-code" and "responsive" in targets:
            rows += responsive_rows(case, long_tasks(browser, page, args.runs))
        if args.stages:
            stages.append({"harness": harness, "input": f"{mb:.1f} MB", **stage_times(cmd)})
        print(f"{case} done", file=sys.stderr)

    if "paint" in targets:
        for harness in harnesses:
            small, big = paints.get((harness, 1)), paints.get((harness, 100))
            if browser is None:
                note = "no Chromium" if not args.no_browser else "--no-browser"
                rows.append(row("first paint", f"{harness} 100 MB", f"not measured ({note})",
                                "≤ 1.25× the 1 MB page's", None))
            elif small and big:
                rows.append(row("first paint", f"{harness} 100 MB",
                                f"{big[0]:.0f} ms (1 MB page: {small[0]:.0f} ms; load {big[1]:.0f} ms)",
                                "≤ 1.25× the 1 MB page's", big[0] <= 1.25 * small[0]))
            elif {1, 100} <= set(sizes):
                rows.append(row("first paint", f"{harness} 100 MB", "no trace", "≤ 1.25× the 1 MB page's", None))

    if "shapes" in targets:
        for name, kind in [("one 200 MB line", "one-line"), ("2M tiny lines", "tiny-lines")]:
            # Made by a child: a child started from this process once it held the 200 MB
            # would count this process's pages in its own peak.
            subprocess.run([sys.executable, __file__, "--make-shape", kind, "--out", str(args.out)],
                           check=True)
            session = SHAPES[kind](args.out)
            page = args.out / f"{session.stem}.html"
            in_bytes = input_size(session)
            m = median_run(render_cmd(session, page), args.runs)
            rows.append(row("peak memory, shape", f"claude-code {name} ({in_bytes / 1e6:.0f} MB)",
                            f"{m.peak / in_bytes:.2f}× ({mib(m.peak)}; {m.shown()})",
                            "≤ 1.5× input", m.peak <= 1.5 * in_bytes))
            print(f"{name} done", file=sys.stderr)

    if "batch" in targets:
        home = batch_home(args.out, gen, args.batch)
        files = sorted(home.glob("projects/*/*.jsonl"))
        total = sum(f.stat().st_size for f in files)
        largest = max(f.stat().st_size for f in files)
        folder = args.out / f"batch-{args.batch}" / "notebooks"
        empty_home = args.out / f"batch-{args.batch}" / "home"
        empty_home.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, CLAUDE_CONFIG_DIR=str(home), HOME=str(empty_home),
                   XDG_DATA_HOME=str(empty_home))
        cmd = pin + [str(exe), "render", "--all", "--harness", "claude-code", "--force",
                     "-o", str(folder), "--quiet"]
        m = median_run(cmd, args.runs, env)
        case = f"render --all, {len(files)} sessions, {total / 1e6:.0f} MB"
        rows.append(row("batch throughput", case,
                        f"{len(files) / m.wall:.1f} sessions/s, {total / 1e6 / m.wall:.0f} MB/s ({m.shown()})",
                        "-", None))
        rows.append(row("batch uses every core", case, f"CPU/wall {m.cpu / m.wall:.2f}",
                        f"≥ {0.9 * cores:.1f}", m.cpu / m.wall >= 0.9 * cores))
        rows.append(row("batch peak memory", case,
                        f"{mib(m.peak)} ({m.peak / largest:.2f}× the largest session, "
                        f"{m.peak / total:.3f}× the sum)",
                        f"≤ {cores} × 0.5× the largest + 64 MiB",
                        m.peak <= cores * 0.5 * largest + 64 * 2**20))
        print("batch done", file=sys.stderr)

    if "peer" in targets and args.peer:
        session = generate("claude-code", 10, args.out, gen)
        peer, why = peer_command(args.peer_venv or args.out / "peers-venv")
        if peer is None:
            rows.append(row(f"{args.peer} / tracebook", "claude-code 10 MB", why, "≥ 40×", None))
        else:
            ours_cmd = render_cmd(session, args.out / "peer-ours.html")
            theirs_cmd = peer + [str(session), "-o", str(args.out / "peer-theirs.html"), "--no-cache"]
            run_child(ours_cmd)
            run_child(theirs_cmd)
            pairs = [(run_child(ours_cmd), run_child(theirs_cmd)) for _ in range(args.runs)]
            wall = statistics.median(t.wall / o.wall for o, t in pairs)
            cpu = statistics.median(t.cpu / max(o.cpu, 1e-9) for o, t in pairs)
            theirs = statistics.median(t.wall for _, t in pairs)
            rows.append(row(f"{args.peer} / tracebook", "claude-code 10 MB",
                            f"{wall:.1f}× wall, {cpu:.1f}× CPU (peer {theirs:.2f} s)", "≥ 40×",
                            wall >= 40))

    if rows:
        table(rows)
    if stages:
        print("\neach stage's wall seconds, and the peak resident memory (MiB) once it is done, one run:\n")
        table(stages)


if __name__ == "__main__":
    main()

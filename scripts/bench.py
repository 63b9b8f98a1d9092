#!/usr/bin/env python3
"""Whole-process benchmark of `tracebook render`: throughput, peak memory, notebook size and
the time headless Chromium takes to open the notebook (the whole `--dump-dom` run against an
empty page's, and from a trace, the page's first contentful paint and load event).

usage: scripts/bench.py [--harness claude-code,codex,gemini-cli,opencode] [--sizes 1,10,100]
                        [--runs 3] [--out DIR] [--no-browser] [--stages]

Sessions are generated with fixed seeds, so every run reads the same bytes: Claude Code ones by
../shared/tools/gen-claude-session.py (or $TRACEBOOK_GEN_CLAUDE), Codex rollouts, Gemini CLI
recordings and OpenCode storage trees by scripts/gen-session.py. They are kept in --out and
reused by later runs. Each figure is the median of --runs runs after one warm-up; peak memory
is the child's maximum resident set size. Only the Python standard library is used. Figures
are printed as a Markdown table, one row per harness and size; --stages adds a second table
with each stage's wall time and the peak resident memory once it is done, in one more run
(the lines `TRACEBOOK_TIMINGS=1` makes the binary print).
"""

from __future__ import annotations

import argparse
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


def run_child(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"command failed: {' '.join(cmd)}")
    return wall, usage.ru_maxrss * 1024


def median_run(cmd: list[str], runs: int) -> tuple[float, float, float, int]:
    run_child(cmd)  # warm-up
    walls, peaks = [], []
    for _ in range(runs):
        w, p = run_child(cmd)
        walls.append(w)
        peaks.append(p)
    return statistics.median(walls), min(walls), max(walls), max(peaks)


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def open_time(browser: str, page: Path, runs: int) -> float:
    walls = []
    for _ in range(runs + 1):
        with tempfile.TemporaryDirectory() as profile:
            cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu",
                   "--disable-background-networking", "--disable-component-update",
                   "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                   "--dump-dom", page.as_uri()]
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            walls.append(time.perf_counter() - start)
    return statistics.median(walls[1:])


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


def stage_times(cmd: list[str]) -> dict[str, str]:
    """Each stage's wall seconds in one run, from the `timing: STAGE SECONDS s` lines, and the
    peak resident memory after it (MiB), from the `memory: STAGE … MiB peak` lines."""
    env = dict(os.environ, TRACEBOOK_TIMINGS="1")
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
    head = list(rows[0].keys())
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r.get(h, "") for h in head) + " |")


def input_size(path: Path) -> int:
    """Bytes of a session file, or of every file under a session folder (an OpenCode tree)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--harness", default=",".join(HARNESSES),
                    help="comma-separated harnesses to measure (default: all four)")
    ap.add_argument("--sizes", default="1,10,100")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "target" / "bench")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--stages", action="store_true",
                    help="also print each stage's wall time and peak memory")
    ap.add_argument("--cores", type=int,
                    help="run tracebook on this many cores only (taskset); default: all of them")
    args = ap.parse_args()
    harnesses = [h.strip() for h in args.harness.split(",") if h.strip()]
    unknown = [h for h in harnesses if h not in HARNESSES]
    if unknown:
        sys.exit(f"unknown harness {', '.join(unknown)}: expected some of {', '.join(HARNESSES)}")

    gen = Path(os.environ.get("TRACEBOOK_GEN_CLAUDE", ROOT.parent / "shared/tools/gen-claude-session.py"))
    if "claude-code" in harnesses and not gen.is_file():
        sys.exit(f"generator not found: {gen} (set TRACEBOOK_GEN_CLAUDE)")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    exe = ROOT / "target" / "release" / "tracebook"
    args.out.mkdir(parents=True, exist_ok=True)
    browser = None if args.no_browser else chromium()

    pin = []
    if args.cores:
        if not shutil.which("taskset"):
            sys.exit("--cores needs taskset (util-linux)")
        pin = ["taskset", "-c", f"0-{args.cores - 1}"]
    rows, stages = [], []
    empty = None
    if browser:
        blank = args.out / "empty.html"
        blank.write_text("<!doctype html><title>empty</title>")
        empty = open_time(browser, blank, args.runs)
    sizes = [int(s) for s in args.sizes.split(",")]
    for harness, size in [(h, s) for h in harnesses for s in sizes]:
        session = generate(harness, size, args.out, gen)
        page = args.out / f"{harness}-{size}m.html"
        cmd = pin + [str(exe), "render", str(session), "-o", str(page), "--quiet"]
        med, lo, hi, peak = median_run(cmd, args.runs)
        in_bytes = input_size(session)
        out_bytes = page.stat().st_size
        row = {
            "harness": harness,
            "input": f"{in_bytes / 1e6:.1f} MB",
            "wall s": f"{med:.3f} ({lo:.3f}–{hi:.3f})",
            "MB/s": f"{in_bytes / 1e6 / med:.0f}",
            "peak MiB": f"{peak / 2**20:.1f}",
            "mem × input": f"{peak / in_bytes:.2f}",
            "notebook": f"{out_bytes / 1e6:.1f} MB",
            "out × input": f"{out_bytes / in_bytes:.2f}",
        }
        if browser and empty is not None:
            t = open_time(browser, page, args.runs)
            row["open s (over empty)"] = f"{t:.2f} (+{t - empty:.2f})"
            paint = paint_times(browser, page, args.runs)
            row["first paint / load ms"] = f"{paint[0]:.0f} / {paint[1]:.0f}" if paint else "-"
        rows.append(row)
        if args.stages:
            stages.append({"harness": harness, "input": row["input"], **stage_times(cmd)})
        print(f"{harness} {size} MB done", file=sys.stderr)

    table(rows)
    if stages:
        print("\neach stage's wall seconds, and the peak resident memory (MiB) once it is done, one run:\n")
        table(stages)
    if empty is not None:
        print(f"\nempty page opens in {empty:.2f} s")


if __name__ == "__main__":
    main()

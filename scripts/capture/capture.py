#!/usr/bin/env python3
"""capture.py [--harness H[,H...]] [--version V] [--scenario NAME ...] [--keep] [--no-diff]

Runs the real, pinned release of each coding-agent CLI against a scripted mock of its model API
on 127.0.0.1, once per scenario in scenarios/<harness>/, and writes the session files it wrote
into tests/fixtures/captured/<harness>-<version>/<scenario>/, then prints what changed in
tracebook's reading of each capture (its JSON report, ids and times left out) against the
capture committed before. HARNESS: claude-code, codex, gemini-cli, opencode (default: all).
--version captures another release than the pinned one and, when every scenario of it was
captured, pins it in versions.json. See README.md for the scenario format.

Python 3 standard library only; needs node + npm (to fetch the pinned package, and to run
Gemini CLI) and cargo (to build tracebook for the reading). Every process it starts (the mock,
each harness run and its process group) is stopped by pid before it exits; the throwaway HOME
and work folder are removed unless --keep is given.
"""
import argparse
import difflib
import fcntl
import getpass
import glob
import re
import json
import os
import platform
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
MOCKS = os.path.join(HERE, "mocks")
REPO = os.path.dirname(os.path.dirname(HERE))
SCENARIOS = os.path.join(HERE, "scenarios")
CAPTURED = os.path.join(REPO, "tests", "fixtures", "captured")
# Keys of a scenario that say what to expect; everything else is the script the mock and the
# rig follow, copied into each capture's capture.json so a changed script is noticed.
EXPECTATION_KEYS = ("about", "expect", "forms", "known_gaps")
HARNESSES = ("claude-code", "codex", "gemini-cli", "opencode")
MOCK_OF = {"claude-code": "mock_anthropic.py", "codex": "mock_responses.py",
           "gemini-cli": "mock_gemini.py", "opencode": "mock_chat.py"}
TRIPLES = {"linux-x64": "x86_64-unknown-linux-musl", "linux-arm64": "aarch64-unknown-linux-musl",
           "darwin-x64": "x86_64-apple-darwin", "darwin-arm64": "aarch64-apple-darwin"}


def say(*a):
    print("capture:", *a, file=sys.stderr, flush=True)


def platform_tag():
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if not system or not arch:
        sys.exit(f"capture: unsupported platform {platform.system()} {platform.machine()}")
    return f"{system}-{arch}"


# --------------------------------------------------------------------------- install

def install(harness, cache, version=None):
    """Fetch the pinned package (or VERSION of it) with `npm pack` into CACHE (once); return the
    argv prefix to run it, the version and the package spec."""
    with open(os.path.join(HERE, "versions.json"), encoding="utf-8") as fh:
        pin = dict(json.load(fh)[harness])
    if version:
        pin["version"] = version + ("-{platform}" if "{platform}" in pin["version"] else "")
    plat = platform_tag()
    fill = lambda s: s.replace("{platform}", plat).replace("{triple}", TRIPLES[plat])
    spec = f"{fill(pin['package'])}@{fill(pin['version'])}"
    dest = os.path.join(cache, spec.replace("/", "+"))
    exe = os.path.join(dest, "package", fill(pin["bin"]))
    if not os.path.exists(exe):
        os.makedirs(cache, exist_ok=True)
        work = tempfile.mkdtemp(prefix=".fetch-", dir=cache)
        try:
            say(f"fetching {spec} from the npm registry (once per cache)")
            t0 = time.time()
            r = subprocess.run(["npm", "pack", spec, "--pack-destination", work, "--silent"],
                               cwd=work, capture_output=True, text=True, timeout=1800)
            tgz = [f for f in os.listdir(work) if f.endswith(".tgz")]
            if r.returncode != 0 or not tgz:
                sys.exit(f"capture: npm pack {spec} failed: {(r.stderr or r.stdout).strip()[-600:]}")
            unpack = os.path.join(work, "unpacked")
            os.makedirs(unpack)
            subprocess.run(["tar", "-xzf", os.path.join(work, tgz[0]), "-C", unpack], check=True)
            if os.path.exists(dest):
                shutil.rmtree(dest)
            os.rename(unpack, dest)
            say(f"fetched {spec} in {time.time() - t0:.0f} s")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    if not os.path.exists(exe):
        sys.exit(f"capture: {spec} has no {pin['bin']} (see versions.json)")
    version = pin["version"].replace("-{platform}", "")
    if pin.get("runner") == "node":
        return ["node", exe], version, spec
    os.chmod(exe, 0o755)
    return [exe], version, spec


# --------------------------------------------------------------------------- processes

class Proc:
    """One harness run: its own process group, stdout copied line by line to a file."""

    def __init__(self, argv, cwd, env, stdout_path, stderr_path, stdin_pipe=False):
        self.out_fh = open(stdout_path, "wb")
        self.err_fh = open(stderr_path, "ab")
        self.lines = []
        self.p = subprocess.Popen(argv, cwd=cwd, env=env, start_new_session=True,
                                  stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=self.err_fh)
        self.pgid = self.p.pid
        self.t = threading.Thread(target=self._pump, daemon=True)
        self.t.start()

    def _pump(self):
        for line in iter(self.p.stdout.readline, b""):
            self.out_fh.write(line)
            self.out_fh.flush()
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                pass

    def send(self, obj):
        if self.p.stdin and not self.p.stdin.closed:
            try:
                self.p.stdin.write((json.dumps(obj) + "\n").encode())
                self.p.stdin.flush()
            except (BrokenPipeError, OSError):
                pass

    def close_stdin(self):
        if self.p.stdin and not self.p.stdin.closed:
            try:
                self.p.stdin.close()
            except OSError:
                pass

    def signal(self, name):
        try:
            os.kill(self.p.pid, getattr(signal, "SIG" + name))
        except ProcessLookupError:
            pass

    def wait(self, timeout):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            say(f"run exceeded {timeout:.0f} s: killing it")
            self.kill_group()
            return self.p.wait()
        finally:
            self.t.join(timeout=5)
            self.out_fh.close()
            self.err_fh.close()

    def kill_group(self):
        """Stop whatever is left of this run (a tool's `sleep`, a relaunched child): by process group."""
        try:
            os.killpg(self.pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


# The mock's port is written into some sessions (Claude Code names its "inference gateway" in API
# error texts): a fixed port per harness keeps re-captures identical; a busy one falls back to any.
MOCK_PORTS = {"claude-code": 47101, "codex": 47102, "gemini-cli": 47103, "opencode": 47104}


def preferred_port(harness):
    port = MOCK_PORTS[harness]
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return 0
    return port


class Mock:
    def __init__(self, harness, scenario_path, root):
        self.log = os.path.join(root, "mock-requests.jsonl")
        self.port_file = os.path.join(root, "mock.port")
        self.err = open(os.path.join(root, "mock.err"), "ab")
        self.p = subprocess.Popen([sys.executable, "-B", os.path.join(MOCKS, MOCK_OF[harness]), "--scenario", scenario_path,
                                   "--port", str(preferred_port(harness)), "--port-file", self.port_file, "--log", self.log,
                                   "--bodies", os.path.join(root, "mock-bodies.jsonl")],
                                  stdin=subprocess.DEVNULL, stdout=self.err, stderr=self.err)
        for _ in range(200):
            if os.path.exists(self.port_file):
                break
            if self.p.poll() is not None:
                sys.exit("capture: the mock exited at start (see --keep, mock.err)")
            time.sleep(0.05)
        else:
            sys.exit("capture: the mock did not start")
        self.port = int(open(self.port_file).read())
        self.url = f"http://127.0.0.1:{self.port}"

    def call(self, path, body=None):
        req = urllib.request.Request(self.url + path, data=None if body is None else json.dumps(body).encode(),
                                     method="GET" if body is None else "POST",
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.loads(r.read())

    def set_turn(self, k):
        self.call("/_mock/turn", {"turn": k})

    def served(self, name):
        try:
            return self.call("/_mock/state").get("served", {}).get(name, 0)
        except OSError:
            return 0

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.err.close()


def become_subreaper():
    """Linux: orphans of a harness run (a tool's `sleep` started in its own session) become our
    children, so reap_strays() can stop them by pid. Elsewhere only process groups are stopped."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap_strays(keep):
    """Stop, by pid, every process that is now our child except `keep` (the mock)."""
    if not os.path.isdir("/proc"):
        return 0
    me, n = os.getpid(), 0
    for _ in range(50):
        kids = []
        for d in os.listdir("/proc"):
            if d.isdigit() and int(d) not in keep:
                try:
                    with open(f"/proc/{d}/stat") as fh:
                        if int(fh.read().rsplit(")", 1)[1].split()[1]) == me:
                            kids.append(int(d))
                except (OSError, ValueError, IndexError):
                    pass
        if not kids:
            break
        for pid in kids:
            try:
                os.kill(pid, signal.SIGKILL)
                n += 1
            except ProcessLookupError:
                pass
        for pid in kids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    return n


def wait_for(pred, timeout, proc=None):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        if proc is not None and proc.p.poll() is not None:
            return False
        time.sleep(0.1)
    return False


# --------------------------------------------------------------------------- harnesses

def deep_merge(base, extra):
    for k, v in (extra or {}).items():
        base[k] = deep_merge(base.get(k, {}), v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return base


class Harness:
    stdout_name = "stdout"

    def __init__(self, cmd, version, root, home, work, mock, scenario):
        self.cmd, self.version, self.root, self.home, self.work = cmd, version, root, home, work
        self.mock, self.scenario = mock, scenario
        self.opts = scenario.get("options") or {}
        self.session_id = None
        self.env = {"HOME": home, "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
                    "TERM": "dumb", "NO_COLOR": "1", "TMPDIR": os.path.join(root, "tmp"),
                    "XDG_CONFIG_HOME": os.path.join(home, ".config"),
                    "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
                    "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
                    "XDG_CACHE_HOME": os.path.join(home, ".cache")}
        os.makedirs(self.env["TMPDIR"], exist_ok=True)

    def finish_env(self):
        self.env.update({k: str(v) for k, v in (self.opts.get("env") or {}).items()})

    def argv(self, k, turn):
        raise NotImplementedError

    def after_run(self, k, proc):
        pass

    def collect(self, outdir):
        raise NotImplementedError


class Claude(Harness):
    stdout_name = "stream-json"

    def setup(self):
        self.session_id = str(uuid.uuid4())
        self.env.update({"ANTHROPIC_BASE_URL": self.mock.url, "ANTHROPIC_API_KEY": "sk-ant-mock-key",
                         "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
                         "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
                         "IS_SANDBOX": "1"})
        settings = deep_merge({"autoUpdates": False}, self.opts.get("settings"))
        os.makedirs(os.path.join(self.home, ".claude"), exist_ok=True)
        with open(os.path.join(self.home, ".claude", "settings.json"), "w") as fh:
            json.dump(settings, fh, indent=1)
        self.finish_env()

    def argv(self, k, turn):
        a = self.cmd + ["-p", "--output-format", "stream-json", "--verbose",
                        "--dangerously-skip-permissions"] + list(self.opts.get("args") or [])
        if self.opts.get("single_process"):
            return a + ["--input-format", "stream-json", "--session-id", self.session_id]
        if k == 0:
            return a + ["--session-id", self.session_id, turn["prompt"]]
        if turn.get("mode") == "continue":
            return a + ["--continue", turn["prompt"]]
        return a + ["--resume", self.session_id, turn["prompt"]]

    def user_message(self, text):
        return {"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": None,
                "session_id": self.session_id}

    def collect(self, outdir):
        projects = os.path.join(self.home, ".claude", "projects")
        n = 0
        for slug in sorted(os.listdir(projects)) if os.path.isdir(projects) else []:
            for name in sorted(os.listdir(os.path.join(projects, slug))):
                src = os.path.join(projects, slug, name)
                if name == "memory":
                    continue
                (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, os.path.join(outdir, name))
                n += 1
        return n


class Codex(Harness):
    stdout_name = "exec-json"

    def setup(self):
        self.codex_home = os.path.join(self.home, ".codex")
        os.makedirs(self.codex_home, exist_ok=True)
        # the scenario's own settings go with the top-level keys, before the first table
        config = [
            'model = "gpt-5.5"', 'model_provider = "mock"', 'check_for_update_on_startup = false',
            self.opts.get("config") or "",
            '[analytics]', 'enabled = false',
            '[model_providers.mock]', 'name = "mock"', f'base_url = "{self.mock.url}/v1"',
            'wire_api = "responses"', 'env_key = "MOCK_API_KEY"',
            'request_max_retries = 0', 'stream_max_retries = 0',
        ]
        with open(os.path.join(self.codex_home, "config.toml"), "w") as fh:
            fh.write("\n".join(config) + "\n")
        self.env.update({"CODEX_HOME": self.codex_home, "MOCK_API_KEY": "mock-key"})
        self.finish_env()

    def argv(self, k, turn):
        common = ["--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
        for feat in self.opts.get("enable") or []:
            common += ["--enable", feat]
        common += list(self.opts.get("args") or [])
        if k == 0:
            return self.cmd + ["exec"] + common + ["-C", self.work, turn["prompt"]]
        target = ["--last"] if turn.get("mode") == "continue" or not self.session_id else [self.session_id]
        return self.cmd + ["exec", "resume"] + common + target + [turn["prompt"]]

    def after_run(self, k, proc):
        for ev in proc.lines:
            if ev.get("type") == "thread.started" and not self.session_id:
                self.session_id = ev.get("thread_id")

    def collect(self, outdir):
        n = 0
        for sub in ("sessions", "archived_sessions"):
            src = os.path.join(self.codex_home, sub)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(outdir, sub))
                n += sum(len(f) for _, _, f in os.walk(src))
        return n


class Gemini(Harness):
    stdout_name = "stream-json"

    def setup(self):
        gdir = os.path.join(self.home, ".gemini")
        os.makedirs(gdir, exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
                    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                    "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}
        deep_merge(settings, self.opts.get("settings"))
        with open(os.path.join(gdir, "settings.json"), "w") as fh:
            json.dump(settings, fh, indent=1)
        self.env.update({"GEMINI_API_KEY": "mock-key", "GOOGLE_GEMINI_BASE_URL": self.mock.url,
                         "GEMINI_CLI_NO_RELAUNCH": "true", "GEMINI_CLI_TRUST_WORKSPACE": "true"})
        self.finish_env()

    def argv(self, k, turn):
        a = self.cmd + ["--output-format", "stream-json", "--yolo"] + list(self.opts.get("args") or [])
        if k > 0:
            a += ["--resume", "latest" if turn.get("mode") == "continue" or not self.session_id else self.session_id]
        return a + ["-p", turn["prompt"]]

    def after_run(self, k, proc):
        for ev in proc.lines:
            if ev.get("type") == "init" and ev.get("session_id") and not self.session_id:
                self.session_id = ev["session_id"]

    def collect(self, outdir):
        tmp = os.path.join(self.home, ".gemini", "tmp")
        n = 0
        for proj in sorted(os.listdir(tmp)) if os.path.isdir(tmp) else []:
            chats = os.path.join(tmp, proj, "chats")
            if os.path.isdir(chats):
                shutil.copytree(chats, os.path.join(outdir, "chats"), dirs_exist_ok=True)
                n += sum(len(f) for _, _, f in os.walk(chats))
        return n


class OpenCode(Harness):
    stdout_name = "run-json"

    def setup(self):
        cfg = {"$schema": "https://opencode.ai/config.json", "autoupdate": False, "share": "disabled",
               "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                     "options": {"baseURL": self.mock.url + "/v1", "apiKey": "mock-key"},
                                     "models": {"m1": {"name": "m1", "tool_call": True,
                                                       "limit": {"context": 200000, "output": 32000}}}}},
               "model": "mock/m1", "small_model": "mock/m1",
               "permission": {"bash": "allow", "edit": "allow", "webfetch": "allow", "external_directory": "allow"}}
        deep_merge(cfg, self.opts.get("config"))
        cdir = os.path.join(self.env["XDG_CONFIG_HOME"], "opencode")
        os.makedirs(cdir, exist_ok=True)
        with open(os.path.join(cdir, "opencode.json"), "w") as fh:
            json.dump(cfg, fh, indent=1)
        self.env.update({"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
                         "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1",
                         "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1"})
        self.finish_env()
        self.db = os.path.join(self.env["XDG_DATA_HOME"], "opencode", "opencode.db")

    def start_server(self):
        """`opencode serve` on a known port; runs attach to it (needed to abort a running turn)."""
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.server = Proc(self.cmd + ["serve", "--port", str(self.port), "--hostname", "127.0.0.1"], self.work,
                           self.env, os.path.join(self.root, "serve.out"), os.path.join(self.root, "serve.err"))
        def up():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                return False
        if not wait_for(up, 60, self.server):
            sys.exit("capture: opencode serve did not start (see --keep, serve.err)")

    def stop_server(self):
        if getattr(self, "server", None):
            self.server.signal("TERM")
            self.server.wait(10)
            self.server.kill_group()
            self.server = None

    def argv(self, k, turn):
        if turn.get("interrupt") and not turn["interrupt"].get("signal"):
            if not getattr(self, "server", None):
                self.start_server()
            a = self.cmd + ["run", "--format", "json", "--attach", f"http://127.0.0.1:{self.port}"]
        else:
            self.stop_server()
            a = self.cmd + ["run", "--format", "json"]
        a += list(self.opts.get("args") or [])
        if k > 0:
            a += ["--continue"] if turn.get("mode") == "continue" or not self.session_id else ["--session", self.session_id]
        # `opencode run` joins its message words with spaces and wraps a word holding a space in
        # double quotes, so a prompt passed as one argument is stored as "\"...\"". Pass words.
        if turn.get("one_arg") or self.opts.get("prompt_as_one_arg") or "\n" in turn["prompt"]:
            return a + ["--", turn["prompt"]]
        return a + ["--"] + turn["prompt"].split()

    def after_run(self, k, proc):
        for ev in proc.lines:
            sid = ev.get("sessionID") or (ev.get("part") or {}).get("sessionID")
            if sid and not self.session_id:
                self.session_id = sid

    def interrupt(self, proc):
        """What the TUI's Esc does: abort the running session through the run's local server."""
        sid = self.session_id
        for ev in list(proc.lines):
            sid = sid or ev.get("sessionID") or (ev.get("part") or {}).get("sessionID")
        base = f"http://127.0.0.1:{self.port}"
        try:
            if not sid:
                with urllib.request.urlopen(base + "/session", timeout=5) as r:
                    sid = sorted(json.loads(r.read()), key=lambda x: x["time"]["updated"])[-1]["id"]
            req = urllib.request.Request(f"{base}/session/{sid}/abort", data=b"{}", method="POST",
                                         headers={"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as r:
                return f"aborted session {sid} through the local server ({r.status})"
        except (OSError, ValueError, KeyError, IndexError) as exc:
            return f"abort through the local server failed: {exc}"

    def sessions(self):
        if not os.path.exists(self.db):
            return []
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return [r[0] for r in con.execute("select id from session order by time_created")]
        except sqlite3.Error:
            return []
        finally:
            con.close()

    def collect(self, outdir):
        self.stop_server()
        n = 0
        for sid in self.sessions():
            path = os.path.join(outdir, f"export-{sid}.json")
            with open(path, "wb") as out, open(os.path.join(self.root, "export.err"), "ab") as err:
                r = subprocess.run(self.cmd + ["export", sid], cwd=self.work, env=self.env, stdout=out,
                                   stderr=err, stdin=subprocess.DEVNULL, timeout=120, start_new_session=True)
            if r.returncode != 0:
                say(f"opencode export {sid} exited {r.returncode}")
            n += 1
        data = os.path.dirname(self.db)
        for name in ("opencode.db", "opencode.db-wal", "opencode.db-shm"):
            if os.path.exists(os.path.join(data, name)):
                shutil.copy2(os.path.join(data, name), os.path.join(outdir, name))
                n += 1
        if os.path.isdir(os.path.join(data, "storage")):
            shutil.copytree(os.path.join(data, "storage"), os.path.join(outdir, "storage"))
        return n


CLASSES = {"claude-code": Claude, "codex": Codex, "gemini-cli": Gemini, "opencode": OpenCode}


# --------------------------------------------------------------------------- driving a scenario

def actions_of(turn):
    """kill / interrupt / inject actions of a turn, each {what, after, delay_s, ...}."""
    acts = []
    if turn.get("kill"):
        acts.append(dict(turn["kill"], what="kill"))
    if turn.get("interrupt"):
        acts.append(dict(turn["interrupt"], what="interrupt"))
    for inj in turn.get("inject") or []:
        acts.append(dict(inj, what="inject"))
    return sorted(acts, key=lambda a: (a.get("after", 0), a.get("delay_s", 0)))


def do_actions(h, proc, k, turn, log):
    for act in actions_of(turn):
        target = int(act.get("after", 1))
        if not wait_for(lambda: h.mock.served(f"turn{k}") >= target, 120, proc):
            log.append(f"turn {k + 1}: {act['what']} skipped (the run ended before reply {target} was served)")
            continue
        time.sleep(float(act.get("delay_s", 1)))
        if act["what"] == "inject":
            proc.send(h.user_message(act["text"]))
            log.append(f"turn {k + 1}: injected a message after reply {target}")
        elif act["what"] == "interrupt" and isinstance(h, Claude) and h.opts.get("single_process"):
            proc.send({"type": "control_request", "request_id": f"interrupt-{k}", "request": {"subtype": "interrupt"}})
            log.append(f"turn {k + 1}: sent an interrupt control request after reply {target}")
        elif act["what"] == "interrupt" and isinstance(h, OpenCode) and not act.get("signal"):
            log.append(f"turn {k + 1}: {h.interrupt(proc)} after reply {target}")
        else:
            name = act.get("signal", "KILL" if act["what"] == "kill" else "INT")
            proc.signal(name)
            log.append(f"turn {k + 1}: sent SIG{name} after reply {target}")


def run_claude_single(h, outdir, timeout, log):
    """Claude Code with --input-format stream-json: every prompt into one process, in order."""
    turns = h.scenario["turns"]
    argv = h.argv(0, turns[0])
    proc = Proc(argv, h.work, h.env, os.path.join(outdir, "stream-json-1.jsonl"),
                os.path.join(h.root, "harness.err"), stdin_pipe=True)
    t0 = time.time()
    results = lambda: sum(1 for ev in list(proc.lines) if ev.get("type") == "result")
    for k, turn in enumerate(turns):
        h.mock.set_turn(k)
        proc.send(h.user_message(turn["prompt"]))
        do_actions(h, proc, k, turn, log)
        if any(a["what"] == "kill" for a in actions_of(turn)):
            break
        wait_for(lambda: results() >= k + 1, timeout, proc)
    time.sleep(1.0)
    proc.close_stdin()
    rc = proc.wait(timeout)
    proc.kill_group()
    reap_strays({h.mock.p.pid})
    return [{"turn": 1, "argv": redact_argv(argv, h), "rc": rc, "seconds": round(time.time() - t0, 1)}]


def run_turns(h, outdir, timeout, log):
    runs = []
    for k, turn in enumerate(h.scenario["turns"]):
        h.mock.set_turn(k)
        argv = h.argv(k, turn)
        proc = Proc(argv, h.work, h.env, os.path.join(outdir, f"{h.stdout_name}-{k + 1}.jsonl"),
                    os.path.join(h.root, "harness.err"))
        t0 = time.time()
        do_actions(h, proc, k, turn, log)
        rc = proc.wait(timeout)
        proc.kill_group()
        strays = reap_strays({h.mock.p.pid})
        if strays:
            log.append(f"turn {k + 1}: stopped {strays} process(es) the run left behind")
        h.after_run(k, proc)
        runs.append({"turn": k + 1, "argv": redact_argv(argv, h), "rc": rc, "seconds": round(time.time() - t0, 1)})
        say(f"turn {k + 1}: exit {rc} after {time.time() - t0:.1f} s")
        if turn.get("pause_s"):
            time.sleep(float(turn["pause_s"]))
    return runs


def redact_argv(argv, h):
    """The command line without this machine's paths (for capture.json)."""
    out = []
    for a in argv:
        for prefix, name in ((h.work, "$WORK"), (h.home, "$HOME"), (HERE, "."), (os.path.dirname(h.cmd[-1]), "$PKG")):
            a = a.replace(prefix, name)
        out.append(a)
    out[0] = os.path.basename(out[0])
    return out


# --------------------------------------------------------------------------- what a capture holds

def forms_of(h, outdir, runs):
    """The session files a capture holds, each an output form tracebook reads on its own: its
    name, its path in the capture, the turns of the scenario it holds (1-based; "all") and
    whether the form records the prompt text at all."""
    forms = []
    n_turns = len(h.scenario["turns"])
    if isinstance(h, Claude):
        if h.session_id and os.path.exists(os.path.join(outdir, f"{h.session_id}.jsonl")):
            forms.append({"form": "transcript", "path": f"{h.session_id}.jsonl"})
    elif isinstance(h, Codex):
        main = sorted(glob.glob(os.path.join(outdir, "sessions", "*", "*", "*", f"rollout-*{h.session_id}.jsonl")))
        if h.session_id and main:
            forms.append({"form": "rollout", "path": os.path.relpath(main[0], outdir)})
    elif isinstance(h, Gemini):
        for path in sorted(glob.glob(os.path.join(outdir, "chats", "session-*.jsonl"))):
            if h.session_id and first_record(path).get("sessionId") == h.session_id:
                forms.append({"form": "recording", "path": os.path.relpath(path, outdir)})
                break
    elif isinstance(h, OpenCode):
        if os.path.exists(os.path.join(outdir, "opencode.db")):
            forms.append({"form": "db", "path": "opencode.db"})
        if h.session_id and os.path.exists(os.path.join(outdir, f"export-{h.session_id}.json")):
            forms.append({"form": "export", "path": f"export-{h.session_id}.json"})
    for f in forms:
        f.update(turns="all", prompts=True)
    # standard output of each run: one turn each, or every turn of a single Claude Code process
    echoes_prompt = isinstance(h, Gemini)
    for run in runs:
        name = f"{h.stdout_name}-{run['turn']}"
        path = os.path.join(outdir, name + ".jsonl")
        if os.path.exists(path) and os.path.getsize(path) > 0:
            turns = "all" if isinstance(h, Claude) and h.opts.get("single_process") else [run["turn"]]
            forms.append({"form": name, "path": name + ".jsonl", "turns": turns, "prompts": echoes_prompt})
    if n_turns == 1:
        for f in forms:
            f["turns"] = "all"
    return forms


def first_record(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.loads(fh.readline() or "{}")
    except (OSError, ValueError):
        return {}


def checkpoint_db(outdir):
    """OpenCode's opencode.db with its write-ahead log folded in and no -wal/-shm beside it: the
    same rows, one file (sqlite's own checkpoint, then VACUUM to drop the free pages)."""
    db = os.path.join(outdir, "opencode.db")
    if not os.path.exists(db):
        return
    con = sqlite3.connect(db)
    try:
        con.execute("pragma wal_checkpoint(TRUNCATE)")
        con.execute("pragma journal_mode=DELETE")
        con.execute("vacuum")
    finally:
        con.close()
    for extra in ("-wal", "-shm"):
        if os.path.exists(db + extra):
            os.remove(db + extra)


def identity_strings():
    """What would name this machine or its user in a capture: the real home folder, the folder
    the rig was started from, the host name and the user name."""
    out = []
    home = os.path.realpath(os.path.expanduser("~"))
    if home not in ("/", ""):
        out.append(("home folder", re.compile(rb"(?<![\w<.-])" + re.escape(home.encode()) + rb"(?![\w.-])")))
    cwd = os.path.realpath(os.getcwd())
    if cwd not in ("/", home):
        out.append(("working folder", re.compile(rb"(?<![\w<.-])" + re.escape(cwd.encode()) + rb"(?![\w.-])")))
    host = socket.gethostname().split(".")[0]
    if host:
        pat = re.escape(host.encode())
        # a short host name is only looked for where a host name is written
        out.append(("host name", re.compile((rb"(?<![\w.-])" + pat + rb"(?![\w-])") if len(host) >= 4 else
                                            (rb"(?:[\"'@]|host(?:name)?\W{1,4})" + pat + rb"[\"'.:]"), re.I)))
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = ""
    for real, _ in machine_text():
        out.append(("kernel release", re.compile(re.escape(real.encode()))))
    if user:
        out.append(("user name", re.compile(rb"(?:/home/|/Users/|\"user(?:name)?\"\s*:\s*\")" + re.escape(user.encode())
                                            + rb"(?![\w-])", re.I)))
    return out


# Text a harness writes that looks like an identity but is not one: Codex's multi-agent tree
# names its root agent `/root` and its children `/root/<task name>` (the same on every machine).
NOT_IDENTITY = {"codex": [re.compile(rb"(?<![\w.-])/root(?:/[a-z0-9_]+|/\.\.\.)*(?![\w.-]|/[.\w])")]}


def privacy_check(outdir, harness):
    """Every place a capture names this machine or its user, as 'file: what (text)'."""
    found = []
    pats = identity_strings()
    allowed = NOT_IDENTITY.get(harness, []) if os.path.realpath(os.path.expanduser("~")) == "/root" else []
    for dirpath, _, names in os.walk(outdir):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                data = fh.read()
            for pat in allowed:
                data = pat.sub(lambda m: b" " * len(m.group(0)), data)
            for what, pat in pats:
                m = pat.search(data)
                if m:
                    ctx = data[max(0, m.start() - 40):m.end() + 20].decode("utf-8", "replace")
                    found.append(f"{os.path.relpath(path, outdir)}: {what} ({ctx!r})")
    return found


# What a harness writes about this machine that is not the session's: replaced in every text file
# of a capture, so a capture made elsewhere reads the same (Claude Code writes the kernel release
# into its environment notes).
def machine_text():
    release = platform.release()
    return [(release, "0.0.0-capture")] if len(release) >= 3 else []


def normalize(outdir):
    """Replaces this machine's details in the capture's text files (never in a database)."""
    pairs = [(a.encode(), b.encode()) for a, b in machine_text()]
    for dirpath, _, names in os.walk(outdir):
        for name in names:
            if not name.endswith((".jsonl", ".json")):
                continue
            path = os.path.join(dirpath, name)
            with open(path, "rb") as fh:
                data = fh.read()
            new = data
            for a, b in pairs:
                new = new.replace(a, b)
            if new != data:
                with open(path, "wb") as fh:
                    fh.write(new)


def script_of(scenario):
    """The part of a scenario the mock and the rig follow (not what it expects)."""
    return {k: v for k, v in scenario.items() if k not in EXPECTATION_KEYS}


# --------------------------------------------------------------------------- one capture

class Lock:
    """One capture at a time on this machine: the throwaway root has a fixed path, so the paths
    written into the sessions are the same on every capture and re-captures diff cleanly."""

    def __init__(self, base):
        self.fh = open(os.path.join(base, "tracebook-capture.lock"), "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            sys.exit("capture: another capture is running on this machine (one at a time)")


def capture_one(harness, scenario_path, outdir, installed, timeout_default, keep, base):
    cmd, version, spec = installed
    with open(scenario_path, encoding="utf-8") as fh:
        scenario = json.load(fh)
    if scenario.get("harness") not in (None, harness):
        sys.exit(f"capture: {scenario_path} is a {scenario['harness']} scenario")
    if not scenario.get("turns"):
        sys.exit(f"capture: {scenario_path} has no turns")
    os.makedirs(outdir)
    # not /tmp by default: Codex refuses to set up its helper aliases when CODEX_HOME is under /tmp
    root = os.path.join(base, "tracebook-capture")
    shutil.rmtree(root, ignore_errors=True)
    home, work = os.path.join(root, "home"), os.path.join(root, "work")
    os.makedirs(home)
    os.makedirs(work)
    for rel, content in (scenario.get("files") or {}).items():
        path = os.path.join(work, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(content)
    become_subreaper()
    t0 = time.time()
    # the mock reads the script only
    script_path = os.path.join(root, "scenario.json")
    with open(script_path, "w") as fh:
        json.dump(script_of(scenario), fh)
    mock = Mock(harness, script_path, root)
    log = []
    h = CLASSES[harness](cmd, version, root, home, work, mock, scenario)
    try:
        h.setup()
        timeout = float((scenario.get("options") or {}).get("timeout_s") or timeout_default)
        if isinstance(h, Claude) and h.opts.get("single_process"):
            runs = run_claude_single(h, outdir, timeout, log)
        else:
            runs = run_turns(h, outdir, timeout, log)
        files = h.collect(outdir)
    finally:
        if isinstance(h, OpenCode):
            h.stop_server()
        reap_strays({mock.p.pid})
        mock.stop()
    if os.path.exists(mock.log):
        with open(mock.log) as src, open(os.path.join(outdir, "mock-requests.jsonl"), "w") as dst:
            for line in src:
                rec = json.loads(line)
                rec.pop("t", None)
                dst.write(json.dumps(rec) + "\n")
    checkpoint_db(outdir)
    normalize(outdir)
    meta = {"harness": harness, "version": version, "package": spec,
            "scenario": os.path.splitext(os.path.basename(scenario_path))[0],
            "session_id": h.session_id, "forms": forms_of(h, outdir, runs), "runs": runs, "actions": log,
            "seconds": round(time.time() - t0, 1), "script": script_of(scenario)}
    with open(os.path.join(outdir, "capture.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")
    for line in log:
        say(line)
    if keep:
        say(f"kept {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    say(f"{harness} {version} {meta['scenario']}: {files} session file(s), forms "
        f"{', '.join(f['form'] for f in meta['forms']) or 'none'} ({meta['seconds']} s)")
    return meta


# --------------------------------------------------------------------------- what tracebook reads

def reading(tracebook, path, full=False):
    """tracebook's reading of one capture's form, as lines to diff: by default what a reader
    relies on (per turn: the prompt, each step with each call's name, status and exit code, the
    response status and failure line; the warnings and skipped records), with --full-diff the
    whole JSON report without times, ids and the tool's version; or the error."""
    r = subprocess.run(tracebook + ["render", path, "--format", "json", "-o", "-", "-q"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return [f"exit {r.returncode}: {r.stderr.strip().replace(os.path.dirname(path) + os.sep, '')}"]
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        return ["not JSON"]
    if full:
        volatile = {"generated_at", "tool_version", "timestamp", "result_timestamp", "started_at",
                    "ended_at", "call_id", "agent_id", "source"}

        def strip(v):
            if isinstance(v, dict):
                return {k: strip(x) for k, x in v.items() if k not in volatile}
            if isinstance(v, list):
                return [strip(x) for x in v]
            return v
        rep = strip(rep)
        if isinstance(rep.get("session"), dict):
            rep["session"].pop("id", None)
            rep["session"].pop("parent", None)
        return json.dumps(rep, indent=1, sort_keys=True).splitlines()
    out = [f"harness {rep['session']['harness']}, {len(rep['turns'])} turn(s)"]

    def turns(ts, ind):
        for t in ts:
            prompt = (t.get("prompt") or {}).get("text")
            out.append(f"{ind}turn {t['number']}: prompt {prompt[:60]!r}" if prompt is not None
                       else f"{ind}turn {t['number']}: no prompt")
            for s in t["steps"]:
                if s["type"] == "tool_call":
                    code = f" exit {s['exit_code']}" if s.get("exit_code") is not None else ""
                    out.append(f"{ind}  call {s['name']} ({s['kind']}): {s['status']}{code}")
                    if s.get("failure"):
                        out.append(f"{ind}    failure {s['failure']}")
                    if s.get("subagent"):
                        turns(s["subagent"]["turns"], ind + "    ")
                else:
                    out.append(f"{ind}  {s['type']}")
            out.append(f"{ind}  response {t['response_status']}")
            if t.get("failure"):
                out.append(f"{ind}  failure {t['failure']}")
    turns(rep["turns"], "")
    for sub in rep.get("unlinked_subagents") or []:
        out.append(f"unlinked subagent with {len(sub['turns'])} turn(s)")
    out += [f"skipped {s['count']} {s['reason']}" for s in rep.get("skipped") or []]
    out += [f"warning: {w['message']}" for w in rep.get("warnings") or []]
    return out


def readings_of(tracebook, capdir, full=False):
    try:
        with open(os.path.join(capdir, "capture.json")) as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        return {}
    return {f["form"]: reading(tracebook, os.path.join(capdir, f["path"]), full) for f in meta.get("forms") or []}


def build_tracebook():
    r = subprocess.run(["cargo", "build", "--locked", "--quiet", "--bin", "tracebook"], cwd=REPO)
    if r.returncode != 0:
        sys.exit("capture: cargo build failed (or pass --no-diff)")
    return [os.path.join(os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target"), "debug", "tracebook")]


def print_diff(harness, scenario, before, after, old_label, new_label):
    changed = False
    for form in sorted(set(before) | set(after)):
        a, b = before.get(form), after.get(form)
        if a == b:
            continue
        changed = True
        if a is None:
            print(f"== {harness} {scenario} {form}: new form (no earlier capture)")
            continue
        if b is None:
            print(f"== {harness} {scenario} {form}: no longer written")
            continue
        print(f"== {harness} {scenario} {form}: the reading changed")
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(
            a, b, f"{old_label}/{scenario}/{form}", f"{new_label}/{scenario}/{form}", n=2, lineterm=""))
    if not changed and before:
        print(f"== {harness} {scenario}: the same reading")


def write_manifest(pins):
    """tests/fixtures/captured/MANIFEST.json: every captured folder, its release and scenarios."""
    out = {"_about": "Sessions written by the real harness releases against the scripted mock of "
                     "scripts/capture/ (one folder per release and scenario); the conformance test "
                     "reads every one. Written by scripts/capture/capture.py.",
           "pinned": {h: pins[h]["version"].replace("-{platform}", "") for h in HARNESSES},
           "captures": {}}
    for d in sorted(os.listdir(CAPTURED)) if os.path.isdir(CAPTURED) else []:
        full = os.path.join(CAPTURED, d)
        if not os.path.isdir(full):
            continue
        scen = {}
        for s in sorted(os.listdir(full)):
            try:
                with open(os.path.join(full, s, "capture.json")) as fh:
                    m = json.load(fh)
            except (OSError, ValueError):
                continue
            scen[s] = [f["form"] for f in m.get("forms") or []]
            out["captures"].setdefault(d, {"harness": m["harness"], "version": m["version"],
                                           "package": m["package"], "scenarios": {}})
        if d in out["captures"]:
            out["captures"][d]["scenarios"] = scen
    with open(os.path.join(CAPTURED, "MANIFEST.json"), "w") as fh:
        json.dump(out, fh, indent=1)
        fh.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    ap.add_argument("--harness", default=",".join(HARNESSES),
                    help="comma-separated harnesses (default: all four)")
    ap.add_argument("--version", help="capture this release instead of the pinned one (one harness), "
                                      "and pin it when every scenario was captured into the repository")
    ap.add_argument("--scenario", action="append", default=[], help="only this scenario (repeatable)")
    ap.add_argument("--out", default=CAPTURED, help="where the <harness>-<version>/ folders go")
    ap.add_argument("--cache", default=os.environ.get("CAPTURE_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tracebook-capture"))
    ap.add_argument("--timeout", type=float, default=180, help="seconds per harness run (default 180)")
    ap.add_argument("--keep", action="store_true", help="keep the throwaway HOME, work folder and mock logs")
    ap.add_argument("--no-diff", action="store_true", help="do not build tracebook nor print what changed")
    ap.add_argument("--full-diff", action="store_true",
                    help="diff the whole JSON report (times and ids left out), not only what a reader relies on")
    ap.add_argument("--allow-identity", action="store_true",
                    help="keep a capture that names this machine or user (default: refuse it)")
    args = ap.parse_args()

    harnesses = [h.strip() for h in args.harness.split(",") if h.strip()]
    for h in harnesses:
        if h not in HARNESSES:
            sys.exit(f"capture: unknown harness {h!r}; expected one of {', '.join(HARNESSES)}")
    if args.version and len(harnesses) != 1:
        sys.exit("capture: --version needs exactly one --harness")
    base = os.environ.get("CAPTURE_TMP") or ("/var/tmp" if os.path.isdir("/var/tmp") else tempfile.gettempdir())
    lock = Lock(base)  # noqa: F841 (held until exit)
    tracebook = None if args.no_diff else build_tracebook()
    with open(os.path.join(HERE, "versions.json"), encoding="utf-8") as fh:
        pins = json.load(fh)
    failed = []
    for harness in harnesses:
        names = args.scenario or sorted(os.path.splitext(f)[0] for f in os.listdir(os.path.join(SCENARIOS, harness))
                                        if f.endswith(".json"))
        if not names:
            continue
        installed = install(harness, os.path.abspath(args.cache), args.version)
        version = installed[1]
        old_version = pins[harness]["version"].replace("-{platform}", "")
        dest_root = os.path.join(os.path.abspath(args.out), f"{harness}-{version}")
        ok = 0
        for name in names:
            scen_path = os.path.join(SCENARIOS, harness, name + ".json")
            if not os.path.exists(scen_path):
                sys.exit(f"capture: no scenario {scen_path}")
            dest = os.path.join(dest_root, name)
            fresh = dest + ".new"
            shutil.rmtree(fresh, ignore_errors=True)
            meta = capture_one(harness, scen_path, fresh, installed, args.timeout, args.keep, base)
            leaks = privacy_check(fresh, harness)
            if leaks and not args.allow_identity:
                for leak in leaks:
                    say(f"{name}: names this machine: {leak}")
                say(f"{name}: not kept ({fresh}); normalize it in capture.py or pass --allow-identity")
                failed.append(f"{harness}/{name}")
                continue
            if not meta["forms"]:
                say(f"{name}: the harness wrote no session file; not kept ({fresh})")
                failed.append(f"{harness}/{name}")
                continue
            # what to compare with: the capture this one replaces, else the pinned release's
            candidates = [dest] + [os.path.join(root, f"{harness}-{v}", name)
                                   for root in (os.path.abspath(args.out), CAPTURED) for v in (version, old_version)]
            before_dir = next((c for c in candidates if os.path.isdir(c)), dest)
            before = readings_of(tracebook, before_dir, args.full_diff) if tracebook else {}
            after = readings_of(tracebook, fresh, args.full_diff) if tracebook else {}
            shutil.rmtree(dest, ignore_errors=True)
            os.rename(fresh, dest)
            ok += 1
            if tracebook:
                print_diff(harness, name, before, after,
                           os.path.basename(os.path.dirname(before_dir)), f"{harness}-{version}")
        if args.version and ok == len(names) and not args.scenario and os.path.abspath(args.out) == CAPTURED:
            pins[harness]["version"] = version + ("-{platform}" if "{platform}" in pins[harness]["version"] else "")
            with open(os.path.join(HERE, "versions.json"), "w", encoding="utf-8") as fh:
                json.dump(pins, fh, indent=2)
                fh.write("\n")
            say(f"pinned {harness} {version} in versions.json")
    if os.path.abspath(args.out) == CAPTURED:
        write_manifest(pins)
    if failed:
        say("not captured: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

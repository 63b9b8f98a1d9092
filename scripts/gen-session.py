#!/usr/bin/env python3
"""Deterministic generator of realistic Codex CLI, Gemini CLI and OpenCode sessions.

usage: gen-session.py --harness codex|gemini-cli|opencode --turns N --seed S --out PATH
                      [--tool-error-rate R] [--secret-rate R] [--manifest FILE]

The companion of ../shared/tools/gen-claude-session.py for the other three harnesses; the same
arguments give the same bytes (everything comes from one seeded RNG), and --turns gives about
the same sizes (20 ≈ 1 MB, 200 ≈ 10 MB, 1880 ≈ 100 MB).

What is written, per harness (shapes checked against the harnesses' sources and real logs):

- codex: a rollout file as Codex CLI 0.125 writes it to
  ~/.codex/sessions/YYYY/MM/DD/rollout-<local time>-<thread uuid v7>.jsonl: `{timestamp, type,
  payload}` lines; session_meta, then per turn task_started, turn_context, the injected
  developer/user context, the user's message (history item and user_message event), reasoning
  items (encrypted, some with a summary and its agent_reasoning event), commentary and final
  assistant messages with their agent_message events, exec_command function calls with the
  unified-exec output text (`Chunk ID … Process exited with code N … Output:`) and their
  exec_command_end events (aggregated output cut to 10 kB), apply_patch custom tool calls with
  patch_apply_end events, update_plan calls, token_count events and task_complete.
- gemini-cli: a chat recording as Gemini CLI v0.44+ writes it to
  ~/.gemini/tmp/<project>/chats/session-<start>-<id8>.jsonl: a header line, each message
  appended (and a model message appended again once its toolCalls finish), `$set lastUpdated`
  after every append, the synthetic functionResponse `user` message after each tool batch;
  tool calls with status success / error / cancelled, FileDiff and TodoList resultDisplays,
  shell output ending in `Exit Code: N` when the command failed.
- opencode: the JSON storage tree OpenCode ≤ 1.1 keeps under ~/.local/share/opencode: --out
  is the data folder; storage/project, storage/session/<project>/<ses>.json,
  storage/message/<ses>/<msg>.json and storage/part/<msg>/<prt>.json, pretty-printed with no
  trailing newline, ids in OpenCode's time-ordered form; one assistant message per model step
  (step-start, reasoning, text, tool parts, step-finish), tool parts completed or error, bash
  parts keeping the exit code in metadata.exit.

Content is varied as in the Claude generator: Markdown with code fences and tables, shell
commands with outputs of varied size (some tens of KB), file reads, edits and patches, failing
calls (--tool-error-rate), ANSI escapes, HTML-special characters, non-ASCII text, absolute home
paths (/home/alice/...) and clearly fake secrets ('AKIAFAKE...', 'ghp_FAKE...', passwords in
URLs starting 'fake'). --manifest writes the session id, the path to render, the statistics,
every planted secret and every tool call's id with the status a reader should show.

Only the Python 3.11 standard library is used.
"""

from __future__ import annotations

import argparse
import base64
import datetime as _dt
import hashlib
import json
import os
import random
import sys
import uuid

HOME = "/home/alice"
USER = "alice"

WORDS = (
    "cache config parser render session record stream buffer token index "
    "layout router handler client server request response payload schema "
    "field value entry batch queue worker task job event message channel "
    "writer reader encoder decoder filter theme template widget panel "
    "summary report metric counter timer limit offset cursor page frame "
    "column row table block node tree graph edge path file dir store"
).split()
VERBS = (
    "load parse render build fetch flush merge split resolve validate "
    "normalize encode decode apply collect emit register update compute "
    "format sanitize escape spawn drain reset init"
).split()
PROJECTS = ["ledger-sync", "transcript-viewer", "pixel-forge", "acme-billing",
            "trail-notes", "orbit-cli", "kiln", "harbor-api"]
BRANCHES = ["main", "feature/export-html", "fix/parser-edge-cases",
            "refactor/render-pipeline", "perf/streaming-reader", "dev"]
LANGS = [("py", "python"), ("rs", "rust"), ("ts", "typescript"), ("go", "go"), ("js", "javascript")]

SENTENCES = [
    "The parser currently reads the whole file into memory before it starts rendering.",
    "That explains why the memory peak grows linearly with the transcript size.",
    "I'll check how the `{w}` module handles an empty `{w2}` before changing anything.",
    "The failing test expects the `{w}` field to be optional, but the struct marks it as required.",
    "Streaming the records one by one keeps the working set bounded.",
    "Let me look at the call sites of `{v}_{w}()` to see who depends on the old behaviour.",
    "This is a small, self-contained change: only `{w}.{e}` needs to move.",
    "The benchmark shows most of the time is spent in JSON decoding, not in HTML escaping.",
    "We should escape `<`, `>` and `&` in tool output before inserting it into the page.",
    "A `</script>` inside embedded JSON would otherwise close the script element early.",
    "The CI job runs on two cores, so the thread pool should not assume more.",
    "I ran the full test suite again and everything passes now.",
    "The `{w}` cache is keyed by path and mtime, which breaks when files are copied.",
    "Note that `{v}` is called twice per record, once for the index and once for the body.",
    "The regression came in with the change to the `{w}_{w2}` helper last week.",
    "I'd rather keep the public API unchanged and fix this inside `{v}_{w}`.",
    "Both code paths now share one implementation, so they cannot drift apart again.",
    "The error message now names the file and the line that failed to parse.",
    "Long lines are wrapped at 120 columns in the rendered output.",
    "Timestamps are stored as UTC and only converted for display.",
]
THOUGHTS = [
    "The user wants {goal}. First I need to understand how {w} is structured.",
    "Let me think about the edge cases: empty input, a truncated last line, and records with unknown types.",
    "If I change the signature of `{v}_{w}` I also have to update the callers in the {w2} module.",
    "The test failure says the expected value was {n} but got {m}. That suggests an off-by-one in the offset handling.",
    "I should read the file before editing it, so the patch applies against the current text.",
    "Running the tests after each change keeps the feedback loop short.",
    "Maybe the simplest fix is to skip records whose type we do not know instead of failing.",
    "The output is large; I only need the summary lines at the end.",
]
SUBJECTS = ["Inspecting the {w} module", "Planning the {w} change", "Checking test failures",
            "Reviewing {v} call sites", "Locating the off-by-one", "Verifying the fix"]
GOALS = [
    "a streaming JSONL reader", "HTML export of sessions", "a fix for the flaky cache test",
    "dark mode in the report", "redaction of secrets in tool output",
    "faster rendering of large transcripts", "a --since filter on the CLI",
    "better error messages for malformed lines", "pagination of long sessions",
]
PROMPTS = [
    "Can you add {goal} to this project? Start by looking at how {w} works.",
    "The `{w}` tests are failing on CI since yesterday. Please investigate and fix.",
    "Refactor `{v}_{w}` so that it no longer allocates a new buffer per record.",
    "Please review src/{w}.{ext} and suggest improvements, then implement the safe ones.",
    "Run the test suite and fix whatever is broken.",
    "Why is the {w} step so slow on big inputs? Profile it and propose a fix.",
    "Add unit tests for the {w2} edge cases we discussed (empty file, trailing newline, bad UTF-8).",
    "Update the README with the new `--{w}` flag and an example.",
    "ok, looks good. now do the same for the {w2} module",
    "That didn't work, I still get `Error: unexpected token at line {n}`. Try again?",
    "Let's implement {goal}. Keep the change small and add a test.",
    "Peux-tu vérifier pourquoi `{w}` échoue ? Les données contiennent « {w2} » et des accents.",
]
TOOL_WEIGHTS = [("shell", 34), ("read", 28), ("edit", 18), ("grep", 9), ("write", 5),
                ("glob", 4), ("todo", 2)]

B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
UPPERDIG = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
EXEC_OUTPUT_CAP = 10_000  # exec_command_end.aggregated_output is cut to 10 kB


def compact(obj) -> str:
    """JavaScript's JSON.stringify(obj): compact, UTF-8 kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def pretty(obj) -> str:
    """JavaScript's JSON.stringify(obj, null, 2)."""
    return json.dumps(obj, ensure_ascii=False, indent=2)


def iso(t: _dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def ms(t: _dt.datetime) -> int:
    return int(t.timestamp() * 1000)


class Work:
    """The harness-neutral session: a project, its files, and the tool calls an agent makes."""

    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        r = self.rng
        self.project = r.choice(PROJECTS)
        self.cwd = f"{HOME}/src/{self.project}"
        self.branch = r.choice(BRANCHES)
        self.lang_ext, self.lang = r.choice(LANGS)
        self.t = _dt.datetime(2026, 3, 2, 9, 0, 0, tzinfo=_dt.timezone.utc) + _dt.timedelta(
            seconds=r.randrange(0, 86400 * 60))
        self.files: dict[str, str] = {}
        self.file_order: list[str] = []
        self.secrets: list[dict] = []
        self.calls: list[dict] = []
        self.stats = {"turns": 0, "tool_calls": 0, "tool_errors": 0}
        for _ in range(8):
            self.new_file_path()

    # ---------- primitives ----------
    def uuid4(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def uuid7(self, t: _dt.datetime) -> str:
        v = (ms(t) << 80) | (0x7 << 76) | (self.rng.getrandbits(12) << 64) | (0b10 << 62) | self.rng.getrandbits(62)
        return str(uuid.UUID(int=v))

    def tick(self, lo: float = 0.05, hi: float = 2.0) -> _dt.datetime:
        self.t += _dt.timedelta(milliseconds=int(self.rng.uniform(lo, hi) * 1000))
        return self.t

    def fill(self, s: str) -> str:
        r = self.rng
        return s.format(w=r.choice(WORDS), w2=r.choice(WORDS), v=r.choice(VERBS), e=r.choice(WORDS),
                        goal=r.choice(GOALS), n=r.randint(2, 400), m=r.randint(2, 400), ext=self.lang_ext)

    def ident(self) -> str:
        return f"{self.rng.choice(VERBS)}_{self.rng.choice(WORDS)}"

    def paragraph(self, lo=2, hi=5) -> str:
        return " ".join(self.fill(self.rng.choice(SENTENCES)) for _ in range(self.rng.randint(lo, hi)))

    def rel(self, p: str) -> str:
        return p[len(self.cwd) + 1:] if p.startswith(self.cwd + "/") else p

    # ---------- fake secrets (same shapes and draws as the Claude generator) ----------
    def aws_key(self) -> str:
        k = "AKIA" + "FAKE" + "".join(self.rng.choice(UPPERDIG) for _ in range(16))[4:]
        self.secrets.append({"kind": "aws_access_key_id", "value": k})
        return k

    def aws_secret(self) -> str:
        k = "FAKE" + "".join(self.rng.choice(ALNUM + "+/") for _ in range(40))[4:]
        self.secrets.append({"kind": "aws_secret_access_key", "value": k})
        return k

    def gh_token(self) -> str:
        k = "ghp_" + "FAKE" + "".join(self.rng.choice(ALNUM) for _ in range(36))[4:]
        self.secrets.append({"kind": "github_token", "value": k})
        return k

    def password(self) -> str:
        k = "fake" + "".join(self.rng.choice(ALNUM) for _ in range(14))[4:]
        self.secrets.append({"kind": "password", "value": k})
        return k

    def want_secret(self) -> bool:
        return self.rng.random() < self.a.secret_rate

    # ---------- files ----------
    def new_file_path(self, ext: str | None = None) -> str:
        r = self.rng
        ext = ext or self.lang_ext
        d = r.choice(["src", "src", "src/" + r.choice(WORDS), "tests", "lib"])
        p = f"{self.cwd}/{d}/{r.choice(WORDS)}_{r.choice(WORDS)}.{ext}"
        if p not in self.files:
            self.files[p] = self.source(ext, r.choice([1200, 3000, 6000, 12000, 30000]))
            self.file_order.append(p)
        return p

    def source(self, ext: str, target: int) -> str:
        r = self.rng
        out, size = [], 0
        if ext == "py":
            out.append(f'"""{self.paragraph(1, 2)}"""\n\nimport json\nimport os\nfrom pathlib import Path\n')
        elif ext == "rs":
            out.append("use std::collections::HashMap;\nuse std::io::{self, BufRead, Write};\n")
        elif ext in ("ts", "js"):
            out.append("import { readFile } from 'node:fs/promises';\nimport type { Entry } from './types';\n")
        else:
            out.append("package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n)\n")
        while size < target:
            name, a, b = self.ident(), r.choice(WORDS), r.choice(WORDS)
            n = r.randint(2, 12)
            if ext == "py":
                body = [f"def {name}({a}, {b}=None):", f'    """{self.fill(r.choice(SENTENCES))}"""']
                for i in range(n):
                    body.append(r.choice([
                        f"    {a}_{i} = {b}.get('{r.choice(WORDS)}', {r.randint(0, 99)})",
                        f"    if {a} is None or len({a}) < {r.randint(1, 64)}:\n        return []",
                        f"    for {r.choice(WORDS)} in {a}:\n        yield json.loads({b})",
                        f"    # TODO: handle <{r.choice(WORDS)}> & \"{r.choice(WORDS)}\" here",
                        f"    log.debug('{self.fill(r.choice(SENTENCES))[:60]}')",
                    ]))
                body.append(f"    return {a}\n")
            elif ext == "rs":
                body = [f"/// {self.fill(r.choice(SENTENCES))}",
                        f"pub fn {name}({a}: &str, {b}: usize) -> io::Result<Vec<String>> {{"]
                for i in range(n):
                    body.append(r.choice([
                        f"    let {a}_{i} = {b}.saturating_sub({r.randint(1, 64)});",
                        f"    if {a}.len() < {r.randint(1, 99)} {{\n        return Ok(Vec::new());\n    }}",
                        f"    let mut {r.choice(WORDS)}: HashMap<&str, usize> = HashMap::new();",
                        f"    // SAFETY: {r.choice(WORDS)} is checked above; see <{r.choice(WORDS)}> && \"{r.choice(WORDS)}\"",
                        f"    writeln!(io::stderr(), \"{r.choice(WORDS)}: {{}}\", {a})?;",
                    ]))
                body.append(f"    Ok(vec![{a}.to_string()])\n}}\n")
            elif ext in ("ts", "js"):
                body = [f"// {self.fill(r.choice(SENTENCES))}",
                        f"export async function {name}({a}: string, {b}?: number): Promise<Entry[]> {{"]
                for i in range(n):
                    body.append(r.choice([
                        f"  const {a}{i} = ({b} ?? {r.randint(0, 99)}) * 2;",
                        f"  if (!{a} || {a}.length < {r.randint(1, 64)}) return [];",
                        f"  const html = `<div class=\"{r.choice(WORDS)}\">${{{a}}}</div>`;",
                        f"  const tag = '</script><script>alert({r.randint(1, 9)})</script>';",
                        f"  console.log('{self.fill(r.choice(SENTENCES))[:60]}');",
                    ]))
                body.append(f"  return JSON.parse(await readFile({a}, 'utf8'));\n}}\n")
            else:
                body = [f"// {name} {self.fill(r.choice(SENTENCES))}",
                        f"func {name}({a} string, {b} int) ([]string, error) {{"]
                for i in range(n):
                    body.append(r.choice([
                        f"\tif len({a}) < {r.randint(1, 64)} {{\n\t\treturn nil, fmt.Errorf(\"{r.choice(WORDS)}: %q\", {a})\n\t}}",
                        f"\t{a}{i} := {b} + {r.randint(1, 99)}",
                        f"\t// {r.choice(WORDS)} <{r.choice(WORDS)}> & \"{r.choice(WORDS)}\"",
                    ]))
                body.append(f"\treturn []string{{{a}}}, nil\n}}\n")
            s = "\n".join(body)
            out.append(s)
            size += len(s)
        return "\n".join(out)

    # ---------- markdown ----------
    def code_block(self, maxlines=30) -> str:
        r = self.rng
        lang = r.choice(["python", "rust", "typescript", "bash", "json", "diff", ""])
        if lang == "bash":
            body = "\n".join(f"$ {c}" for c in r.sample(
                ["cargo test --all", "git status", "npm run build", "ls -la src/",
                 f"cd {self.cwd} && make lint", "rg -n 'TODO' src/"], r.randint(1, 3)))
        elif lang == "json":
            body = json.dumps({r.choice(WORDS): r.randint(0, 999), "path": f"{self.cwd}/{r.choice(WORDS)}.json",
                               "items": [r.choice(WORDS) for _ in range(r.randint(1, 4))]}, indent=2)
        elif lang == "diff":
            body = (f"--- a/src/{r.choice(WORDS)}.{self.lang_ext}\n+++ b/src/{r.choice(WORDS)}.{self.lang_ext}\n"
                    f"@@ -{r.randint(1, 300)},3 +{r.randint(1, 300)},4 @@\n-    old = {self.ident()}(x)\n"
                    f"+    new = {self.ident()}(x, y)\n+    assert new is not None\n")
        else:
            lines = self.files[r.choice(self.file_order)].split("\n")
            i = r.randrange(max(1, len(lines) - 5))
            body = "\n".join(lines[i:i + r.randint(3, maxlines)])
        return f"```{lang}\n{body}\n```"

    def markdown(self, big=False) -> str:
        r = self.rng
        parts = []
        if big or r.random() < 0.4:
            parts.append(f"## {r.choice(['Summary', 'What changed', 'Root cause', 'Plan', 'Findings'])}")
        parts.append(self.paragraph())
        if r.random() < 0.6:
            parts.append("\n".join(f"- **{r.choice(WORDS)}**: {self.fill(r.choice(SENTENCES))}"
                                   for _ in range(r.randint(2, 6))))
        if r.random() < 0.55:
            parts.append(self.code_block())
        if big and r.random() < 0.5:
            parts.append("| file | change | tests |\n|---|---|---|\n" + "\n".join(
                f"| `src/{r.choice(WORDS)}.{self.lang_ext}` | {r.choice(VERBS)} {r.choice(WORDS)} | "
                f"{r.choice(['✅ pass', '❌ fail', 'n/a'])} |" for _ in range(r.randint(2, 6))))
        if big:
            for _ in range(r.randint(1, 3)):
                parts.append(f"### {r.choice(WORDS).title()} {r.choice(WORDS)}\n\n{self.paragraph(3, 7)}")
                if r.random() < 0.5:
                    parts.append(self.code_block(60))
        if r.random() < 0.05:
            parts.append("Ça marche ✓ — 日本語のテキストも表示できます。 🚀")
        return "\n\n".join(parts)

    def prompt(self) -> str:
        r = self.rng
        text = self.fill(r.choice(PROMPTS))
        if r.random() < 0.3:
            text += "\n\n" + self.paragraph(1, 3)
        if r.random() < 0.1:
            text += f"\n\nThe error log is in {self.cwd}/target/debug/build.log"
        if self.want_secret() and r.random() < 0.25:
            text += f"\n\nuse this token to push if needed: {self.gh_token()}"
        return text

    def thought(self) -> str:
        return self.fill(self.rng.choice(THOUGHTS)) + " " + self.paragraph(1, 3)

    # ---------- tool calls (harness-neutral) ----------
    def pick(self) -> tuple[str, bool]:
        r = self.rng
        kind = r.choices([k for k, _ in TOOL_WEIGHTS], [w for _, w in TOOL_WEIGHTS])[0]
        err = r.random() < self.a.tool_error_rate
        if err and kind not in ("shell", "read", "edit"):
            kind = r.choice(["shell", "read", "edit"])
        return kind, err

    def action(self, kind: str, err: bool) -> dict:
        return getattr(self, "t_" + kind)(err)

    def log_lines(self, n: int) -> list[str]:
        r = self.rng
        out = []
        for _ in range(n):
            k = r.random()
            if k < 0.35:
                out.append(f"   \x1b[1m\x1b[32mCompiling\x1b[0m {r.choice(WORDS)}-{r.choice(WORDS)} "
                           f"v{r.randint(0, 3)}.{r.randint(0, 30)}.{r.randint(0, 9)}")
            elif k < 0.6:
                out.append(f"test {r.choice(WORDS)}::{self.ident()} ... " + r.choice(["ok", "ok", "ok", "ok", "FAILED", "ignored"]))
            elif k < 0.7:
                out.append(f"\x1b[33mwarning\x1b[0m: unused variable: `{r.choice(WORDS)}`\n  --> src/{r.choice(WORDS)}.rs:{r.randint(1, 900)}:{r.randint(1, 40)}")
            elif k < 0.8:
                out.append(f"  {HOME}/.cargo/registry/src/index.crates.io-6f17d22bba15001f/{r.choice(WORDS)}-1.{r.randint(0, 40)}.0/src/lib.rs")
            elif k < 0.9:
                out.append(f"  ✓ {r.choice(WORDS)} › {self.fill(r.choice(SENTENCES))[:70]} ({r.randint(1, 900)} ms)")
            else:
                out.append(f"{r.choice(['INFO', 'DEBUG', 'WARN'])} [{r.choice(WORDS)}] {self.fill(r.choice(SENTENCES))}")
        return out

    def t_shell(self, err: bool) -> dict:
        r = self.rng
        k = r.random()
        if not err and self.want_secret() and r.random() < 0.6:
            which = r.random()
            if which < 0.4:
                cmd, desc = "cat .env", "Show environment file"
                out = (f"DATABASE_URL=postgres://app:{self.password()}@localhost:5432/{self.project}\n"
                       f"AWS_ACCESS_KEY_ID={self.aws_key()}\nAWS_SECRET_ACCESS_KEY={self.aws_secret()}\n"
                       f"GITHUB_TOKEN={self.gh_token()}\nLOG_LEVEL=debug\n")
            elif which < 0.7:
                cmd, desc = "git remote -v", "Show git remotes"
                tok = self.gh_token()
                out = (f"origin\thttps://{USER}:{tok}@github.com/{USER}/{self.project}.git (fetch)\n"
                       f"origin\thttps://{USER}:{tok}@github.com/{USER}/{self.project}.git (push)\n")
            else:
                cmd, desc = "env | grep -i -E 'aws|token'", "Check credentials in environment"
                out = f"AWS_ACCESS_KEY_ID={self.aws_key()}\nAWS_PROFILE=default\nGH_TOKEN={self.gh_token()}\n"
        elif k < 0.22:
            cmd, desc = r.choice([("cargo test 2>&1 | tail -80", "Run tests"), ("npm test", "Run test suite"),
                                  ("pytest -q", "Run Python tests"), ("make check", "Run checks")])
            out = "\n".join(self.log_lines(r.randint(15, 250))) + "\n"
        elif k < 0.32:
            cmd, desc = r.choice([("cargo build --release 2>&1", "Build release binary"),
                                  ("npm run build", "Build the bundle")])
            out = "\n".join(self.log_lines(r.choice([30, 80, 250, 700]))) + "\n"
        elif k < 0.47:
            cmd, desc = "git status", "Show working tree status"
            mods = [self.rel(p) for p in self.file_order if r.random() < 0.2]
            out = (f"On branch {self.branch}\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n"
                   + "\n".join(f"\tmodified:   {m}" for m in mods)
                   + "\n\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n")
        elif k < 0.57:
            cmd, desc = "git log --oneline -20", "Show recent commits"
            out = "\n".join(f"{r.getrandbits(28):07x} {r.choice(VERBS).title()} {r.choice(WORDS)} {r.choice(WORDS)}"
                            for _ in range(20)) + "\n"
        elif k < 0.67:
            cmd, desc = "git diff", "Show unstaged changes"
            p = r.choice(self.file_order)
            out = (f"diff --git a/{self.rel(p)} b/{self.rel(p)}\nindex {r.getrandbits(28):07x}..{r.getrandbits(28):07x} 100644\n"
                   + "\n".join(("+" if r.random() < 0.5 else "-") + line
                               for line in self.files[p].split("\n")[: r.randint(10, 300)]) + "\n")
        elif k < 0.8:
            d = r.choice(["src", "tests", "."])
            cmd, desc = f"ls -la {d}", "List files"
            out = "total 48\n" + "\n".join(
                f"-rw-r--r--  1 {USER} {USER} {r.randint(100, 90000):>6} Jan {r.randint(1, 28):>2} "
                f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d} {r.choice(WORDS)}_{r.choice(WORDS)}.{self.lang_ext}"
                for _ in range(r.randint(3, 30))) + "\n"
        else:
            cmd, desc = f"rg -n '{self.ident()}' src/ | head -50", "Search for usages"
            out = "".join(f"src/{r.choice(WORDS)}.{self.lang_ext}:{r.randint(1, 900)}:    {self.ident()}({r.choice(WORDS)})\n"
                          for _ in range(r.randint(0, 50)))
        code = 0
        if err:
            code = r.choice([1, 1, 2, 101, 127])
            out = r.choice([
                f"error[E0425]: cannot find value `{r.choice(WORDS)}` in this scope\n  --> src/{r.choice(WORDS)}.rs:{r.randint(1, 500)}:{r.randint(1, 40)}\n",
                f"bash: {r.choice(WORDS)}: command not found\n",
                "fatal: not a git repository (or any of the parent directories): .git\n",
                "\n".join(self.log_lines(r.randint(5, 60)))
                + f"\n\x1b[31mtest result: FAILED\x1b[0m. {r.randint(1, 200)} passed; {r.randint(1, 5)} failed\n",
            ])
        if len(out) > 30000:
            cut = len(out) - 30000
            out = out[:15000] + f"\n\n... [{cut} characters truncated] ...\n\n" + out[-15000:]
        secs = round(r.uniform(0.02, 3.0) if len(out) < 5000 else r.uniform(2.0, 90.0), 4)
        return {"kind": "shell", "err": err, "cmd": cmd, "desc": desc, "out": out, "code": code, "secs": secs}

    def t_read(self, err: bool) -> dict:
        r = self.rng
        if err:
            p = f"{self.cwd}/src/{r.choice(WORDS)}_{r.choice(WORDS)}.{self.lang_ext}"
            return {"kind": "read", "err": True, "path": p, "text": "", "start": 1, "lines": [], "total": 0}
        if self.want_secret() and r.random() < 0.5:
            p = r.choice([f"{HOME}/.aws/credentials", f"{self.cwd}/.env", f"{self.cwd}/config/deploy.toml"])
            text = (f"[default]\naws_access_key_id = {self.aws_key()}\naws_secret_access_key = {self.aws_secret()}\n"
                    f"region = eu-west-1\n\n# github\ntoken = {self.gh_token()}\n")
        else:
            p = r.choice(self.file_order)
            text = self.files[p]
        lines = text.split("\n")
        start, sel = 1, lines
        if len(lines) > 400 and r.random() < 0.5:
            start = r.randint(1, len(lines) - 200)
            sel = lines[start - 1:start - 1 + r.randint(50, 200)]
        elif len(lines) > 2000:
            sel = lines[:2000]
        return {"kind": "read", "err": False, "path": p, "text": "\n".join(sel), "start": start,
                "lines": sel, "total": len(lines), "partial": start > 1 or len(sel) < len(lines)}

    def t_edit(self, err: bool) -> dict:
        r = self.rng
        p = r.choice(self.file_order)
        text = self.files[p]
        lines = text.split("\n")
        i = r.randrange(max(1, len(lines) - 6))
        old_s = "\n".join(lines[i:i + r.randint(1, 5)])
        if not old_s.strip():
            i, old_s = 0, lines[0]
        if err:
            return {"kind": "edit", "err": True, "path": p, "old": old_s + " ", "new": old_s, "before": text,
                    "after": text, "line": i, "old_lines": (old_s + " ").split("\n"), "new_lines": old_s.split("\n")}
        extra = r.choice([f"  // {self.fill(r.choice(SENTENCES))}", f"    {self.ident()}()",
                          f"# {r.choice(WORDS)}: {r.choice(WORDS)}"])
        if self.want_secret() and r.random() < 0.3:
            extra = f'GITHUB_TOKEN = "{self.gh_token()}"  # TODO move to env'
        new_s = old_s.replace(r.choice(WORDS), r.choice(WORDS)) + "\n" + extra
        new_text = text.replace(old_s, new_s, 1)
        line = text[: text.find(old_s)].count("\n")
        self.files[p] = new_text
        return {"kind": "edit", "err": False, "path": p, "old": old_s, "new": new_s, "before": text,
                "after": new_text, "line": line, "old_lines": old_s.split("\n"), "new_lines": new_s.split("\n")}

    def t_write(self, err: bool) -> dict:
        r = self.rng
        ext = r.choice([self.lang_ext, self.lang_ext, "md", "toml"])
        p = f"{self.cwd}/{r.choice(['src', 'tests', 'docs'])}/{r.choice(WORDS)}_{r.choice(WORDS)}.{ext}"
        if ext == "md":
            content = "# " + r.choice(WORDS).title() + "\n\n" + self.markdown(big=True) + "\n"
        elif ext == "toml":
            content = (f"[package]\nname = \"{self.project}\"\nversion = \"0.{r.randint(1, 9)}.0\"\n\n"
                       f"[paths]\ncache = \"{HOME}/.cache/{self.project}\"\n")
        else:
            content = self.source(ext, r.choice([800, 3000, 12000]))
        existed = p in self.files
        before = self.files.get(p, "")
        if not existed:
            self.file_order.append(p)
        self.files[p] = content
        return {"kind": "write", "err": False, "path": p, "content": content, "existed": existed, "before": before}

    def t_grep(self, err: bool) -> dict:
        r = self.rng
        pat = r.choice([self.ident(), r.choice(WORDS), f"fn {r.choice(VERBS)}", "TODO|FIXME", r"\bunwrap\(\)"])
        hits = []
        for p in r.sample(self.file_order, min(len(self.file_order), r.randint(1, 6))):
            lines = self.files[p].split("\n")
            for h in sorted(r.sample(range(len(lines)), min(len(lines), r.randint(1, 25)))):
                hits.append((p, h + 1, lines[h]))
        return {"kind": "grep", "err": False, "pattern": pat, "hits": hits}

    def t_glob(self, err: bool) -> dict:
        r = self.rng
        pat = r.choice([f"**/*.{self.lang_ext}", "src/**/*", "tests/**/*", "**/*.md"])
        return {"kind": "glob", "err": False, "pattern": pat,
                "files": [p for p in self.file_order if r.random() < 0.5][:100]}

    def t_todo(self, err: bool) -> dict:
        r = self.rng
        items = [(f"{r.choice(VERBS).title()} {r.choice(WORDS)} {r.choice(WORDS)}",
                  r.choice(["pending", "in_progress", "completed"])) for _ in range(r.randint(2, 7))]
        return {"kind": "todo", "err": False, "items": items}

    def hunk(self, act: dict) -> tuple[str, int, int]:
        """A unified-diff hunk for an edit (header line first), with added and removed counts."""
        ol = act["before"].split("\n")
        line0, a, b = act["line"], act["old_lines"], act["new_lines"]
        c0, end = max(0, line0 - 3), line0 + len(a)
        c1 = min(len(ol), end + 3)
        body = ([" " + x for x in ol[c0:line0]] + ["-" + x for x in a] + ["+" + x for x in b]
                + [" " + x for x in ol[end:c1]])
        head = f"@@ -{c0 + 1},{c1 - c0} +{c0 + 1},{c1 - c0 - len(a) + len(b)} @@"
        return head + "\n" + "\n".join(body) + "\n", len(b), len(a)

    def turn_plan(self) -> list[list[dict]]:
        """The tool steps of one turn: each step is one model response with 1-3 calls."""
        r = self.rng
        steps = r.choices([0, 1, 2, 3, 4, 6, 9], [5, 20, 25, 20, 15, 10, 5])[0]
        return [[self.action(*self.pick()) for _ in range(r.choices([1, 2, 3], [75, 18, 7])[0])]
                for _ in range(steps)]

    def record_call(self, call_id: str, act: dict, status: str | None = None):
        status = status or ("error" if act["err"] else "ok")
        self.calls.append({"id": call_id, "status": status})
        self.stats["tool_calls"] += 1
        if status == "error":
            self.stats["tool_errors"] += 1


# ======================================================================================
# Codex CLI rollout
# ======================================================================================
class Codex:
    VERSION = "0.125.0"
    MODEL = "gpt-5.5"

    def __init__(self, w: Work):
        self.w = w
        self.thread_id = w.uuid7(w.t)
        # The project's AGENTS.md, which every turn_context repeats as user_instructions.
        self.agents_md = (f"# {w.project}\n\nRun the tests with `make check` before you commit. Keep changes "
                          "small.\n\n" + "\n\n".join(w.markdown(big=True) for _ in range(2)))
        self.total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0,
                      "reasoning_output_tokens": 0, "total_tokens": 0}

    def line(self, out, kind: str, payload: dict, t: _dt.datetime | None = None):
        out.append(compact({"timestamp": iso(t or self.w.tick(0.0, 0.05)), "type": kind, "payload": payload}))

    def call_id(self) -> str:
        return "call_" + "".join(self.w.rng.choice(ALNUM) for _ in range(24))

    def token_count(self, out):
        r = self.w.rng
        last = {"input_tokens": r.randint(8000, 160000), "cached_input_tokens": 0,
                "output_tokens": r.randint(20, 3000), "reasoning_output_tokens": r.randint(0, 900)}
        last["cached_input_tokens"] = r.randint(0, last["input_tokens"])
        last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
        for k, v in last.items():
            self.total[k] += v
        self.line(out, "event_msg", {"type": "token_count", "info": {
            "total_token_usage": dict(self.total), "last_token_usage": last, "model_context_window": 258400},
            "rate_limits": {"limit_id": "codex", "limit_name": None,
                            "primary": {"used_percent": round(r.uniform(0, 60), 1), "window_minutes": 300,
                                        "resets_at": int(self.w.t.timestamp()) + r.randint(60, 18000)},
                            "secondary": {"used_percent": round(r.uniform(0, 40), 1), "window_minutes": 10080,
                                          "resets_at": int(self.w.t.timestamp()) + r.randint(3600, 600000)},
                            "credits": None, "plan_type": "plus", "rate_limit_reached_type": None}})

    def reasoning(self, out):
        w, r = self.w, self.w.rng
        enc = "gAAAAAB" + base64.urlsafe_b64encode(r.randbytes(r.randint(600, 2400))).decode()
        summary = []
        if r.random() < 0.5:
            text = f"**{w.fill(r.choice(SUBJECTS))}**\n\n{w.thought()}"
            summary = [{"type": "summary_text", "text": text}]
        self.line(out, "response_item", {"type": "reasoning", "summary": summary, "content": None,
                                         "encrypted_content": enc}, w.tick(0.5, 6.0))
        if summary:
            self.line(out, "event_msg", {"type": "agent_reasoning", "text": summary[0]["text"]})

    def assistant(self, out, text: str, phase: str):
        self.line(out, "response_item", {"type": "message", "role": "assistant",
                                         "content": [{"type": "output_text", "text": text}], "phase": phase},
                  self.w.tick(0.3, 4.0))
        self.line(out, "event_msg", {"type": "agent_message", "message": text, "phase": phase,
                                     "memory_citation": None})

    def exec_text(self, act: dict) -> tuple[str, list]:
        """The command line a Codex agent runs for a neutral action, and its parsed_cmd."""
        w = self.w
        k = act["kind"]
        if k == "shell":
            return act["cmd"], [{"type": "unknown", "cmd": act["cmd"]}]
        if k == "read":
            rel = w.rel(act["path"])
            end = act["start"] + max(len(act["lines"]), 250) - 1
            cmd = f"sed -n '{act['start']},{end}p' {rel}"
            return cmd, [{"type": "read", "cmd": cmd, "name": os.path.basename(rel), "path": act["path"]}]
        if k == "grep":
            cmd = f"rg -n \"{act['pattern']}\" src tests"
            return cmd, [{"type": "search", "cmd": cmd, "query": act["pattern"], "path": "src"}]
        cmd = f"rg --files -g '{act['pattern']}'"
        return cmd, [{"type": "list_files", "cmd": cmd, "path": None}]

    def exec_output(self, act: dict) -> tuple[str, int]:
        w = self.w
        k = act["kind"]
        if k == "shell":
            return act["out"], act["code"]
        if k == "read":
            if act["err"]:
                return f"sed: can't read {w.rel(act['path'])}: No such file or directory\n", 2
            return act["text"] + "\n", 0
        if k == "grep":
            return "".join(f"{w.rel(p)}:{n}:{line}\n" for p, n, line in act["hits"]), 0 if act["hits"] else 1
        return "".join(w.rel(p) + "\n" for p in act["files"]), 0

    def exec_call(self, out, turn_id: str, act: dict, results: list):
        w, r = self.w, self.w.rng
        cid = self.call_id()
        cmd, parsed = self.exec_text(act)
        args = {"cmd": cmd, "workdir": w.cwd, "yield_time_ms": 10000, "max_output_tokens": 12000}
        self.line(out, "response_item", {"type": "function_call", "name": "exec_command",
                                         "arguments": json.dumps(args, ensure_ascii=False), "call_id": cid})
        text, code = self.exec_output(act)
        secs = act.get("secs", round(r.uniform(0.01, 0.4), 4))
        w.record_call(cid, act, "error" if code != 0 else "ok")

        def emit(out):
            t = w.tick(secs * 0.5, secs + 0.2)
            self.line(out, "event_msg", {
                "type": "exec_command_end", "call_id": cid, "process_id": str(r.randint(1000, 99999)),
                "turn_id": turn_id, "command": ["/bin/bash", "-lc", cmd], "cwd": w.cwd, "parsed_cmd": parsed,
                "source": "unified_exec_startup", "stdout": "", "stderr": "",
                "aggregated_output": text[:EXEC_OUTPUT_CAP], "exit_code": code,
                "duration": {"secs": int(secs), "nanos": int((secs % 1) * 1e9)}, "formatted_output": "",
                "status": "completed" if code == 0 else "failed"}, t)
            chunk = "".join(r.choice("0123456789abcdef") for _ in range(6))
            body = (f"Chunk ID: {chunk}\nWall time: {secs:.4f} seconds\nProcess exited with code {code}\n"
                    f"Original token count: {len(text) // 4}\nOutput:\n{text}")
            self.line(out, "response_item", {"type": "function_call_output", "call_id": cid, "output": body})
        results.append(emit)

    def patch_call(self, out, turn_id: str, act: dict, results: list):
        w, r = self.w, self.w.rng
        cid = self.call_id()
        rel = w.rel(act["path"])
        if act["kind"] == "write":
            verb = "Update" if act["existed"] else "Add"
            if act["existed"]:
                body = "@@\n" + "".join("-" + x + "\n" for x in act["before"].split("\n")) + \
                       "".join("+" + x + "\n" for x in act["content"].split("\n"))
            else:
                body = "".join("+" + x + "\n" for x in act["content"].split("\n"))
            diff = body if act["existed"] else f"@@ -0,0 +1,{act['content'].count(chr(10)) + 1} @@\n" + body
            change = {"type": "update" if act["existed"] else "add", "unified_diff": diff, "move_path": None}
        else:
            ctx = act["before"].split("\n")[max(0, act["line"] - 2):act["line"]]
            body = "@@\n" + "".join(" " + x + "\n" for x in ctx) + \
                "".join("-" + x + "\n" for x in act["old_lines"]) + "".join("+" + x + "\n" for x in act["new_lines"])
            verb = "Update"
            change = {"type": "update", "unified_diff": w.hunk(act)[0], "move_path": None}
        patch = f"*** Begin Patch\n*** {verb} File: {rel}\n{body}*** End Patch\n"
        self.line(out, "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": cid,
                                         "name": "apply_patch", "input": patch})
        w.record_call(cid, act)

        def emit(out):
            if act["err"]:
                text = (f"apply_patch verification failed: Failed to find expected lines in {act['path']}:\n"
                        + "\n".join(act["old_lines"]))
                self.line(out, "response_item", {"type": "custom_tool_call_output", "call_id": cid, "output": text},
                          w.tick(0.05, 0.5))
                return
            letter = "M" if verb == "Update" else "A"
            stdout = f"Success. Updated the following files:\n{letter} {rel}\n"
            self.line(out, "event_msg", {"type": "patch_apply_end", "call_id": cid, "turn_id": turn_id,
                                         "stdout": stdout, "stderr": "", "success": True,
                                         "changes": {act["path"]: change}, "status": "completed"}, w.tick(0.05, 0.5))
            self.line(out, "response_item", {"type": "custom_tool_call_output", "call_id": cid, "output": json.dumps(
                {"output": stdout, "metadata": {"exit_code": 0, "duration_seconds": round(r.uniform(0.0, 0.3), 1)}})})
        results.append(emit)

    def plan_call(self, out, act: dict, results: list):
        cid = self.call_id()
        status = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}
        args = {"plan": [{"step": s, "status": status[st]} for s, st in act["items"]]}
        self.line(out, "response_item", {"type": "function_call", "name": "update_plan",
                                         "arguments": json.dumps(args, ensure_ascii=False), "call_id": cid})
        self.w.record_call(cid, act)
        results.append(lambda out: self.line(out, "response_item", {
            "type": "function_call_output", "call_id": cid, "output": "Plan updated"}))

    def turn(self, out, idx: int):
        w, r = self.w, self.w.rng
        w.t += _dt.timedelta(seconds=r.uniform(5, 600))
        start = w.t
        turn_id = w.uuid7(w.t)
        self.line(out, "event_msg", {"type": "task_started", "turn_id": turn_id, "started_at": int(w.t.timestamp()),
                                     "model_context_window": 258400, "collaboration_mode_kind": "default"}, w.t)
        if idx == 0:
            self.line(out, "response_item", {"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": "<permissions instructions>\nFilesystem sandboxing defines which files "
                 "can be read or written. `sandbox_mode` is `workspace-write`: The sandbox permits reading files, and "
                 f"editing files in `cwd` and `writable_roots`. Writable roots: `{w.cwd}`, `{HOME}/.codex/memories`."
                 "\n</permissions instructions>"}]}, w.t)
            self.line(out, "response_item", {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": f"# AGENTS.md instructions for {w.cwd}\n\n<INSTRUCTIONS>\n"
                 f"{self.agents_md}\n</INSTRUCTIONS>"},
                {"type": "input_text", "text": f"<environment_context>\n  <cwd>{w.cwd}</cwd>\n  <shell>bash</shell>\n"
                 f"  <current_date>{w.t.date().isoformat()}</current_date>\n  <timezone>Europe/Berlin</timezone>\n"
                 "</environment_context>"}]}, w.t)
        self.line(out, "turn_context", {
            "turn_id": turn_id, "cwd": w.cwd, "current_date": w.t.date().isoformat(), "timezone": "Europe/Berlin",
            "approval_policy": "on-request",
            "sandbox_policy": {"type": "workspace-write", "writable_roots": [f"{HOME}/.codex/memories"],
                               "network_access": False, "exclude_tmpdir_env_var": False, "exclude_slash_tmp": False},
            "model": self.MODEL, "personality": "pragmatic",
            "collaboration_mode": {"mode": "default", "settings": {"model": self.MODEL, "reasoning_effort": "medium",
                                                                   "developer_instructions": None}},
            "realtime_active": False, "effort": "medium", "summary": "none", "user_instructions": self.agents_md,
            "truncation_policy": {"mode": "tokens", "limit": 10000}}, w.t)
        prompt = w.prompt()
        self.line(out, "response_item", {"type": "message", "role": "user",
                                         "content": [{"type": "input_text", "text": prompt}]})
        self.line(out, "event_msg", {"type": "user_message", "message": prompt, "images": [], "local_images": [],
                                     "text_elements": []})
        first_token = None
        for step in w.turn_plan():
            self.reasoning(out)
            first_token = first_token or w.t
            if r.random() < 0.4:
                self.assistant(out, w.paragraph(1, 2), "commentary")
            results: list = []
            for act in step:
                if act["kind"] in ("edit", "write"):
                    self.patch_call(out, turn_id, act, results)
                elif act["kind"] == "todo":
                    self.plan_call(out, act, results)
                else:
                    self.exec_call(out, turn_id, act, results)
            self.token_count(out)
            for emit in results:
                emit(out)
        if r.random() < 0.6:
            self.reasoning(out)
        first_token = first_token or w.t
        final = w.markdown(big=r.random() < 0.4)
        self.assistant(out, final, "final_answer")
        self.token_count(out)
        self.line(out, "event_msg", {"type": "task_complete", "turn_id": turn_id, "last_agent_message": final,
                                     "completed_at": int(w.t.timestamp()),
                                     "duration_ms": ms(w.t) - ms(start),
                                     "time_to_first_token_ms": ms(first_token) - ms(start)})

    def run(self, path: str) -> str:
        w = self.w
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            out: list[str] = []
            self.line(out, "session_meta", {
                "id": self.thread_id, "timestamp": iso(w.t), "cwd": w.cwd, "originator": "codex-tui",
                "cli_version": self.VERSION, "source": "cli", "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent based on GPT-5. You and the user share "
                                      "one workspace, and your job is to collaborate with them until their goal is "
                                      "genuinely handled."},
                "git": {"commit_hash": "%040x" % w.rng.getrandbits(160), "branch": w.branch,
                        "repository_url": f"git@github.com:{USER}/{w.project}.git"}}, w.t)
            for i in range(w.a.turns):
                self.turn(out, i)
                w.stats["turns"] += 1
                f.write("\n".join(out) + "\n")
                out.clear()
        return path


# ======================================================================================
# Gemini CLI chat recording (JSONL, v0.44+)
# ======================================================================================
class Gemini:
    MODEL = "gemini-3-flash-preview"
    DISPLAY = {"shell": "Shell", "read": "ReadFile", "edit": "Edit", "write": "WriteFile",
               "grep": "SearchText", "glob": "FindFiles", "todo": "WriteTodos"}
    NAME = {"shell": "run_shell_command", "read": "read_file", "edit": "replace", "write": "write_file",
            "grep": "grep_search", "glob": "glob", "todo": "write_todos"}

    def __init__(self, w: Work):
        self.w = w
        self.session_id = w.uuid4()
        self.call_n = 0

    def append(self, out, rec: dict):
        out.append(compact(rec))
        if "id" in rec:
            out.append(compact({"$set": {"lastUpdated": iso(self.w.tick(0.001, 0.002))}}))

    def tokens(self) -> dict:
        r = self.w.rng
        t = {"input": r.randint(5000, 200000), "output": r.randint(10, 3000), "cached": 0,
             "thoughts": r.randint(0, 900), "tool": 0}
        t["cached"] = r.randint(0, t["input"])
        t["total"] = t["input"] + t["output"] + t["thoughts"]
        return t

    def thoughts(self) -> list:
        w, r = self.w, self.w.rng
        return [{"subject": w.fill(r.choice(SUBJECTS)), "description": w.thought(),
                 "timestamp": iso(w.tick(0.3, 3.0))} for _ in range(r.choice([0, 1, 1, 2]))]

    def diff(self, act: dict) -> dict:
        w = self.w
        name = os.path.basename(act["path"])
        if act["kind"] == "write":
            new = act["content"]
            old = act["before"] if act["existed"] else ""
            body = "".join("-" + x + "\n" for x in old.split("\n")) if old else ""
            n_new = new.count("\n") + 1
            head = f"@@ -{'1,' + str(old.count(chr(10)) + 1) if old else '0,0'} +1,{n_new} @@\n"
            text = (f"Index: {name}\n===================================================================\n"
                    f"--- {name}\t{'Original' if old else 'Original'}\n+++ {name}\tWritten\n" + head + body
                    + "".join("+" + x + "\n" for x in new.split("\n")))
            added, removed = n_new, (old.count("\n") + 1 if old else 0)
            d = {"fileDiff": text, "fileName": name, "filePath": act["path"],
                 "originalContent": old if act["existed"] else None, "newContent": new}
            if not act["existed"]:
                d["isNewFile"] = True
        else:
            hunk, added, removed = w.hunk(act)
            text = (f"Index: {name}\n===================================================================\n"
                    f"--- {name}\tCurrent\n+++ {name}\tProposed\n" + hunk)
            d = {"fileDiff": text, "fileName": name, "filePath": act["path"],
                 "originalContent": act["before"], "newContent": act["after"]}
        d["diffStat"] = {"model_added_lines": added, "model_removed_lines": removed,
                         "model_added_chars": 0, "model_removed_chars": 0, "user_added_lines": 0,
                         "user_removed_lines": 0, "user_added_chars": 0, "user_removed_chars": 0}
        return d

    def tool_call(self, act: dict, t: _dt.datetime, cancel: bool) -> dict:
        w, r = self.w, self.w.rng
        k = act["kind"]
        name = self.NAME[k]
        cid = f"{name}_{ms(t)}_{self.call_n}"
        self.call_n += 1
        rel = w.rel(act.get("path", ""))
        status, display, md = "success", "", True
        if k == "shell":
            args = {"command": act["cmd"], "description": act["desc"]}
            desc = f"{act['cmd']} [current working directory {w.cwd}] ({act['desc']})"
            output = f"Output: {act['out'].rstrip(chr(10)) or '(empty)'}"
            if act["code"]:
                output += f"\nExit Code: {act['code']}"
            output += f"\nProcess Group PGID: {r.randint(1000, 999999)}"
            resp = {"output": output}
            display, md = act["out"].rstrip("\n"), False
        elif k == "read":
            args, desc = {"file_path": rel}, rel
            if act["err"]:
                status, resp = "error", {"error": f"File not found: {act['path']}"}
                display = f"File not found: {act['path']}"
            elif act.get("partial"):
                end = act["start"] + len(act["lines"]) - 1
                args.update({"start_line": act["start"], "end_line": end})
                resp = {"output": (f"\nIMPORTANT: The file content has been truncated.\nStatus: Showing lines "
                                   f"{act['start']}-{end} of {act['total']} total lines.\n\n--- FILE CONTENT "
                                   f"(truncated) ---\n{act['text']}")}
                display = f"Read lines {act['start']}-{end} of {act['total']} from {rel}"
            else:
                resp = {"output": act["text"]}
        elif k == "edit":
            args = {"file_path": act["path"], "old_string": act["old"], "new_string": act["new"],
                    "instruction": w.fill(r.choice(SENTENCES))}
            desc = f"{rel}: {act['old'][:30]}... => {act['new'][:30]}..."
            if act["err"]:
                status = "error"
                resp = {"error": f"Failed to edit, 0 occurrences found for old_string in {act['path']}. Ensure "
                                 "you're not escaping content incorrectly and check whitespace, indentation, and "
                                 "context. Use read_file tool to verify."}
                display = "Error: Failed to edit, could not find the string to replace."
            else:
                resp = {"output": f"Successfully modified file: {act['path']} (1 replacements)."}
                display = self.diff(act)
        elif k == "write":
            args, desc = {"file_path": act["path"], "content": act["content"]}, f"Writing to {rel}"
            resp = {"output": (f"Successfully overwrote file: {act['path']}." if act["existed"]
                               else f"Successfully created and wrote to new file: {act['path']}.")}
            display = self.diff(act)
        elif k == "grep":
            args, desc = {"pattern": act["pattern"], "dir_path": "."}, f"'{act['pattern']}' within ./"
            by_file: dict[str, list] = {}
            for p, n, line in act["hits"]:
                by_file.setdefault(w.rel(p), []).append(f"L{n}: {line}")
            n = len(act["hits"])
            resp = {"output": f"Found {n} match{'es' if n != 1 else ''} for pattern \"{act['pattern']}\" in path "
                              "\".\":\n---\n" + "".join(f"File: {f}\n" + "\n".join(ls) + "\n---\n"
                                                          for f, ls in by_file.items())}
            display = f"Found {n} match{'es' if n != 1 else ''}"
        elif k == "glob":
            args, desc = {"pattern": act["pattern"]}, f"'{act['pattern']}'"
            n = len(act["files"])
            resp = {"output": (f"Found {n} file(s) matching \"{act['pattern']}\" within {w.cwd}, sorted by "
                               "modification time (newest first):\n" + "\n".join(act["files"]))
                    if n else f"No files found matching pattern \"{act['pattern']}\" within {w.cwd}"}
            display = f"Found {n} matching file(s)"
        else:
            todos = [{"description": d, "status": s} for d, s in act["items"]]
            args, desc = {"todos": todos}, "Set todo list"
            resp = {"output": "Successfully updated the todo list. The current list is now:\n"
                              + "\n".join(f"{i + 1}. [{s}] {d}" for i, (d, s) in enumerate(act["items"]))}
            display = {"todos": todos}
        if cancel:
            status = "cancelled"
            resp = {"error": "[Operation Cancelled] Reason: User cancelled tool execution."}
            display = None
        w.record_call(cid, act, "error" if status != "success" or (k == "shell" and act["code"]) else "ok")
        call = {"id": cid, "name": name, "args": args,
                "result": [{"functionResponse": {"id": cid, "name": name, "response": resp}}],
                "status": status, "timestamp": iso(w.tick(0.05, act.get("secs", 0.3) + 0.1))}
        if display is not None:
            call["resultDisplay"] = display
        call.update({"description": desc, "displayName": self.DISPLAY[k], "renderOutputAsMarkdown": md})
        return call

    def turn(self, out):
        w, r = self.w, self.w.rng
        w.t += _dt.timedelta(seconds=r.uniform(5, 600))
        self.append(out, {"id": w.uuid4(), "timestamp": iso(w.t), "type": "user",
                          "content": [{"text": w.prompt()}]})
        cancelled = False
        for step in w.turn_plan():
            mid = w.uuid4()
            text = w.paragraph(1, 2) if r.random() < 0.4 else ""
            msg = {"id": mid, "timestamp": iso(w.tick(0.5, 5.0)), "type": "gemini", "content": text,
                   "thoughts": self.thoughts(), "tokens": self.tokens(), "model": self.MODEL}
            self.append(out, msg)
            # A shell call the user stops ends the turn: the rest of the batch is not run.
            cancel_at = -1
            if r.random() < self.w.a.tool_error_rate / 4:
                cancel_at = r.randrange(len(step))
                step = step[:cancel_at + 1]
            t0 = w.t
            calls = [self.tool_call(act, t0, i == cancel_at) for i, act in enumerate(step)]
            self.append(out, {**msg, "toolCalls": calls})
            if cancel_at >= 0:
                out.append(compact({"id": w.uuid4(), "timestamp": iso(w.tick(0.01, 0.05)), "type": "info",
                                    "content": "Request cancelled."}))
                out.append(compact({"$set": {"lastUpdated": iso(w.tick(0.001, 0.002))}}))
                cancelled = True
                break
            self.append(out, {"id": w.uuid4(), "timestamp": iso(w.tick(0.01, 0.05)), "type": "user",
                              "content": [c["result"][0] for c in calls]})
        if not cancelled:
            self.append(out, {"id": w.uuid4(), "timestamp": iso(w.tick(0.5, 6.0)), "type": "gemini",
                              "content": w.markdown(big=r.random() < 0.4), "thoughts": self.thoughts(),
                              "tokens": self.tokens(), "model": self.MODEL})

    def run(self, path: str) -> str:
        w = self.w
        project_hash = hashlib.sha256(w.cwd.encode()).hexdigest()
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            out = [compact({"sessionId": self.session_id, "projectHash": project_hash, "startTime": iso(w.t),
                            "lastUpdated": iso(w.t), "kind": "main"})]
            for _ in range(w.a.turns):
                self.turn(out)
                w.stats["turns"] += 1
                f.write("\n".join(out) + "\n")
                out.clear()
            f.write(compact({"$set": {"summary": f"{w.rng.choice(VERBS).title()} the {w.rng.choice(WORDS)} "
                                                 f"{w.rng.choice(WORDS)} and {w.rng.choice(GOALS)}"}}) + "\n")
        return path


# ======================================================================================
# OpenCode JSON storage tree (≤ 1.1.x)
# ======================================================================================
class OpenCode:
    VERSION = "1.1.65"
    PROVIDER, MODEL = "openai", "gpt-5.3-codex"
    TOOL = {"shell": "bash", "read": "read", "edit": "edit", "write": "write", "grep": "grep",
            "glob": "glob", "todo": "todowrite"}

    def __init__(self, w: Work):
        self.w = w
        self.counter = 0
        self.last_ms = 0
        self.project_id = "%040x" % w.rng.getrandbits(160)
        self.session_id = self.ident("ses", descending=True)
        self.files: list[tuple[str, dict]] = []

    def ident(self, prefix: str, descending: bool = False) -> str:
        """OpenCode's ids: 12 hex digits of (ms << 12 | counter), then 14 random base62 characters."""
        now = ms(self.w.t)
        if now != self.last_ms:
            self.last_ms, self.counter = now, 0
        self.counter += 1
        v = (now * 0x1000 + self.counter) & 0xFFFFFFFFFFFF
        if descending:
            v = ~v & 0xFFFFFFFFFFFF
        return f"{prefix}_{v:012x}" + "".join(self.w.rng.choice(B62) for _ in range(14))

    def write(self, root: str, rel: str, obj: dict):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="\n") as f:
            f.write(pretty(obj))

    def tokens(self) -> dict:
        r = self.w.rng
        t = {"input": r.randint(5, 3000), "output": r.randint(10, 3000), "reasoning": r.randint(0, 900),
             "cache": {"read": r.randint(5000, 150000), "write": r.randint(0, 8000)}}
        t["total"] = t["input"] + t["output"] + t["reasoning"] + t["cache"]["read"] + t["cache"]["write"]
        return {"total": t["total"], "input": t["input"], "output": t["output"], "reasoning": t["reasoning"],
                "cache": t["cache"]}

    def tool_state(self, act: dict) -> dict:
        w, r = self.w, self.w.rng
        k = act["kind"]
        start = ms(w.t)
        w.tick(0.02, act.get("secs", 0.2) + 0.05)
        end = ms(w.t)
        tm = {"start": start, "end": end}
        if k == "shell":
            inp = {"command": act["cmd"], "description": act["desc"]}
            return {"status": "completed", "input": inp, "output": act["out"], "title": act["desc"],
                    "metadata": {"output": act["out"][:30000], "exit": act["code"], "description": act["desc"],
                                 "truncated": False}, "time": tm}
        if k == "read":
            inp = {"filePath": act["path"]}
            if act["err"]:
                return {"status": "error", "input": inp, "error": f"Error: File not found: {act['path']}", "time": tm}
            if act.get("partial"):
                inp.update({"offset": act["start"], "limit": len(act["lines"])})
            body = "\n".join(f"{i}: {line}" for i, line in enumerate(act["lines"], act["start"]))
            tail = (f"(File has more lines. Use 'offset' parameter to read beyond line "
                    f"{act['start'] + len(act['lines']) - 1})" if act.get("partial")
                    else f"(End of file - total {act['total']} lines)")
            out = f"<path>{act['path']}</path>\n<type>file</type>\n<content>{body}\n\n{tail}\n</content>"
            return {"status": "completed", "input": inp, "output": out, "title": w.rel(act["path"]),
                    "metadata": {"preview": act["text"][:200], "truncated": bool(act.get("partial")), "loaded": []},
                    "time": tm}
        if k == "edit":
            inp = {"filePath": act["path"], "oldString": act["old"], "newString": act["new"]}
            if act["err"]:
                return {"status": "error", "input": inp, "error": "Error: oldString not found in content", "time": tm}
            hunk, added, removed = w.hunk(act)
            diff = (f"Index: {act['path']}\n===================================================================\n"
                    f"--- {act['path']}\n+++ {act['path']}\n" + hunk)
            return {"status": "completed", "input": inp, "output": "Edit applied successfully.",
                    "title": w.rel(act["path"]),
                    "metadata": {"diagnostics": {}, "diff": diff,
                                 "filediff": {"file": act["path"], "before": act["before"], "after": act["after"],
                                              "additions": added, "deletions": removed}, "truncated": False},
                    "time": tm}
        if k == "write":
            inp = {"content": act["content"], "filePath": act["path"]}
            return {"status": "completed", "input": inp, "output": "Wrote file successfully.",
                    "title": w.rel(act["path"]),
                    "metadata": {"diagnostics": {}, "filepath": act["path"], "exists": act["existed"],
                                 "truncated": False}, "time": tm}
        if k == "grep":
            inp = {"pattern": act["pattern"], "path": w.cwd}
            by_file: dict[str, list] = {}
            for p, n, line in act["hits"]:
                by_file.setdefault(p, []).append(f"  Line {n}: {line}")
            out = f"Found {len(act['hits'])} matches\n" + "\n\n".join(
                f"{p}:\n" + "\n".join(ls) for p, ls in by_file.items())
            return {"status": "completed", "input": inp, "output": out, "title": act["pattern"],
                    "metadata": {"matches": len(act["hits"]), "truncated": False}, "time": tm}
        if k == "glob":
            inp = {"pattern": act["pattern"], "path": w.cwd}
            out = "\n".join(act["files"]) if act["files"] else "No files found"
            return {"status": "completed", "input": inp, "output": out, "title": "",
                    "metadata": {"count": len(act["files"]), "truncated": False}, "time": tm}
        todos = [{"content": c, "status": s, "priority": r.choice(["high", "medium", "low"]), "id": str(i + 1)}
                 for i, (c, s) in enumerate(act["items"])]
        return {"status": "completed", "input": {"todos": todos}, "output": json.dumps(todos, indent=2),
                "title": f"{sum(1 for t in todos if t['status'] != 'completed')} todos",
                "metadata": {"todos": todos, "truncated": False}, "time": tm}

    def assistant(self, root: str, user_id: str, parts: list, finish: str):
        """One model step: an assistant message with its parts between step-start and step-finish."""
        w, r = self.w, self.w.rng
        created = ms(w.tick(0.05, 0.5))
        mid = self.ident("msg")
        snap = "%040x" % r.getrandbits(160)
        base = {"sessionID": self.session_id, "messageID": mid}
        all_parts = [{"id": self.ident("prt"), **base, "type": "step-start", "snapshot": snap}]
        for p in parts:
            all_parts.append({"id": self.ident("prt"), **base, **p})
        tokens = self.tokens()
        all_parts.append({"id": self.ident("prt"), **base, "type": "step-finish", "reason": finish,
                          "snapshot": snap, "cost": 0, "tokens": tokens})
        info = {"id": mid, "sessionID": self.session_id, "role": "assistant",
                "time": {"created": created, "completed": ms(w.tick(0.01, 0.1))}, "parentID": user_id,
                "modelID": self.MODEL, "providerID": self.PROVIDER, "mode": "build", "agent": "build",
                "path": {"cwd": w.cwd, "root": w.cwd}, "cost": 0, "tokens": tokens, "finish": finish}
        self.write(root, f"storage/message/{self.session_id}/{mid}.json", info)
        for p in all_parts:
            self.write(root, f"storage/part/{mid}/{p['id']}.json", p)

    def reasoning(self) -> list:
        """A reasoning part, as OpenAI models leave one on every step: a short summary (sometimes
        empty) and the encrypted reasoning in the part's metadata."""
        w, r = self.w, self.w.rng
        t0 = ms(w.t)
        text = f"**{w.fill(r.choice(SUBJECTS))}**\n\n{w.thought()}" if r.random() < 0.6 else ""
        item = "rs_" + "%050x" % r.getrandbits(200)
        enc = "gAAAAAB" + base64.urlsafe_b64encode(r.randbytes(r.randint(900, 3000))).decode()
        return [{"type": "reasoning", "text": text,
                 "metadata": {"openai": {"itemId": item, "reasoningEncryptedContent": enc}},
                 "time": {"start": t0, "end": ms(w.tick(0.5, 4.0))}}]

    def text(self, s: str) -> dict:
        t0 = ms(self.w.t)
        return {"type": "text", "text": s, "time": {"start": t0, "end": ms(self.w.tick(0.2, 3.0))}}

    def turn(self, root: str):
        w, r = self.w, self.w.rng
        w.t += _dt.timedelta(seconds=r.uniform(5, 600))
        uid = self.ident("msg")
        self.write(root, f"storage/message/{self.session_id}/{uid}.json", {
            "id": uid, "sessionID": self.session_id, "role": "user", "time": {"created": ms(w.t)},
            "summary": {"title": f"{r.choice(VERBS).title()} {r.choice(WORDS)} {r.choice(WORDS)}", "diffs": []},
            "agent": "build", "model": {"providerID": self.PROVIDER, "modelID": self.MODEL}})
        pid = self.ident("prt")
        self.write(root, f"storage/part/{uid}/{pid}.json", {
            "id": pid, "sessionID": self.session_id, "messageID": uid, "type": "text", "text": w.prompt()})
        for step in w.turn_plan():
            parts = self.reasoning()
            if r.random() < 0.4:
                parts.append(self.text(w.paragraph(1, 2)))
            for act in step:
                cid = "call_" + "".join(r.choice(ALNUM) for _ in range(24))
                state = self.tool_state(act)
                w.record_call(cid, act)
                parts.append({"type": "tool", "callID": cid, "tool": self.TOOL[act["kind"]], "state": state,
                              "metadata": {"openai": {"itemId": "fc_" + "%050x" % r.getrandbits(200)}}})
            self.assistant(root, uid, parts, "tool-calls")
        parts = self.reasoning() + [self.text(w.markdown(big=r.random() < 0.4))]
        self.assistant(root, uid, parts, "stop")

    def run(self, root: str) -> str:
        w = self.w
        created = ms(w.t)
        for _ in range(w.a.turns):
            self.turn(root)
            w.stats["turns"] += 1
        self.write(root, f"storage/project/{self.project_id}.json", {
            "id": self.project_id, "worktree": w.cwd, "vcs": "git",
            "time": {"created": created, "updated": ms(w.t)}, "sandboxes": []})
        self.write(root, f"storage/session/{self.project_id}/{self.session_id}.json", {
            "id": self.session_id, "slug": f"{w.rng.choice(['brisk', 'quiet', 'amber'])}-{w.rng.choice(['falcon', 'meadow', 'comet'])}",
            "version": self.VERSION, "projectID": self.project_id, "directory": w.cwd,
            "title": f"{w.rng.choice(VERBS).title()} {w.rng.choice(WORDS)} and {w.rng.choice(GOALS)}",
            "time": {"created": created, "updated": ms(w.t)},
            "summary": {"additions": 0, "deletions": 0, "files": 0}})
        return root


HARNESSES = {"codex": Codex, "gemini-cli": Gemini, "opencode": OpenCode}


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="gen-session.py",
        description="Write a deterministic, realistic Codex CLI, Gemini CLI or OpenCode session.")
    p.add_argument("--harness", required=True, choices=sorted(HARNESSES))
    p.add_argument("--turns", type=int, required=True, help="number of user prompts (turns)")
    p.add_argument("--seed", type=int, required=True, help="RNG seed; same seed and options give the same bytes")
    p.add_argument("--out", required=True,
                   help="output file (codex: rollout-*.jsonl, gemini-cli: session-*.jsonl); "
                        "for opencode the data folder that receives storage/")
    p.add_argument("--tool-error-rate", type=float, default=0.08,
                   help="probability that a tool call fails (default 0.08)")
    p.add_argument("--secret-rate", type=float, default=0.03,
                   help="probability per candidate spot of planting a fake secret (default 0.03)")
    p.add_argument("--manifest", help="write a JSON manifest (stats, planted secrets, call statuses) to this path")
    a = p.parse_args(argv)
    if a.turns < 1:
        p.error("--turns must be >= 1")
    if not 0.0 <= a.tool_error_rate <= 1.0:
        p.error("--tool-error-rate must be within [0, 1]")
    if a.harness == "opencode":
        if os.path.exists(os.path.join(a.out, "storage")):
            p.error(f"{a.out}/storage already exists; choose an empty folder")
        os.makedirs(a.out, exist_ok=True)
    work = Work(a)
    gen = HARNESSES[a.harness](work)
    path = gen.run(a.out)
    if a.manifest:
        with open(a.manifest, "w", encoding="utf-8") as f:
            json.dump({"harness": a.harness, "sessionId": getattr(gen, "thread_id", None) or gen.session_id,
                       "path": path, "home": HOME, "cwd": work.cwd, "stats": work.stats,
                       "secrets": work.secrets, "calls": work.calls}, f, indent=1)
            f.write("\n")
    if os.path.isdir(path):
        size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(path) for n in ns)
    else:
        size = os.path.getsize(path)
    print(f"wrote {path}: {size} bytes, {work.stats['turns']} turns, {work.stats['tool_calls']} tool calls "
          f"({work.stats['tool_errors']} errors), {len(work.secrets)} fake secrets", file=sys.stderr)


if __name__ == "__main__":
    main()

//! The integration suite: one test binary, a module per feature.

mod adapters; // user adapters: adding, replacing, rejecting
mod browser; // real headless Chromium: the page as a reader opens it
mod ci_example; // examples/ci's workflow run step by step on each harness's headless output
mod claude; // Claude Code 2.1.332: notices, mid-turn messages, background work, runs, layouts
mod cli; // the binary: commands, output files, exit codes, bad input
mod codex; // Codex CLI 0.171: exec runs as turns, bookkeeping, failure texts, multi-agent v2
mod conformance; // captures of the real harness releases read as their scenarios say
mod corpus; // every real session under $TRACEBOOK_CORPUS renders with the invariants
mod corpus_secrets; // the secret rules on the real corpus: no SHA, UUID, hash, id or identifier redacted
mod everyday; // list, render --session/--all, index, manifest, turn selection, rerender
mod failures; // failure facts: one bounded, allowlisted line per failed run, no raw text
mod gemini; // Gemini CLI recordings: history rewrites, its own user messages, resume leftovers
mod generators; // scripts/gen-session.py output reads back as planted
mod gfm; // the Markdown for tickets, read back by a real GFM parser
mod glance; // failure lines, unknown reasons, durations and turn endings, from real captures
mod golden; // the notebook's <main> of each fixture, pinned with insta
mod hostile; // hostile and broken input: no panic, no planted secret in any output
mod html; // the notebook: self-contained, offline, escaped, linkable
mod imports; // the intended imports of ARCHITECTURE.md hold in the source
mod index; // the batch index: search, filters and the failure summary over generated sessions
mod install; // completions, manual pages, colour, --open, and list saying where it looked
mod opencode; // OpenCode in every native layout: export, run output, storage tree, opencode.db
mod outcomes; // Codex and Gemini CLI tool outcomes from native-format fixtures
mod planted; // a secret planted in any field of any harness never reaches output
mod records; // unknown records, calls without a usable id, detection past bookkeeping
mod regression; // one test per fixed bug, through the binary
mod secret_vectors; // the public secret-rule vectors: every example redacted, every negative kept
mod snapshots; // the report model of each fixture, pinned with insta
mod stdin; // render -: each harness's streaming output piped in reads as its file does
mod xss; // hostile transcript content in real Chromium: no script, no violation, no request

use std::path::{Path, PathBuf};

/// The repository's test fixtures folder.
/// The four-turn sample session shipped in `examples/`.
pub(crate) fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude-code/sample.jsonl")
}

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The `tracebook` binary with a clean environment: no home folder of the developer's, a
/// pinned generation time, and `--open` never opening a browser.
pub(crate) fn tracebook() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("tracebook").expect("binary is built");
    cmd.env_remove("HOME")
        .env_remove("USERPROFILE")
        .env_remove("XDG_STATE_HOME")
        .env("TRACEBOOK_GENERATED_AT", "2026-01-01T00:00:00Z")
        .env("TRACEBOOK_NO_OPEN", "1");
    cmd
}

/// The pipeline's options for a test: the harness detected or named, the time pinned.
pub(crate) fn pinned<'a>(
    set: &'a tracebook::adapters::AdapterSet,
    harness: Option<&'a str>,
) -> tracebook::pipeline::Options<'a> {
    tracebook::pipeline::Options {
        harness,
        generated_at: "2026-01-01T00:00:00Z".into(),
        ..tracebook::pipeline::Options::new(set)
    }
}

/// Renders a session through the library with pinned metadata.
pub(crate) fn report(path: &Path) -> anyhow::Result<tracebook::report::model::Report> {
    let set = tracebook::adapters::AdapterSet::load(None)?;
    let (report, _) = tracebook::pipeline::report(path, &crate::pinned(&set, None))?;
    Ok(report)
}

/// Strings planted in fixtures that must never reach any output.
pub(crate) const CANARIES: &[&str] = &["PLANTEDSECRET", "PLANTEDKEY", "alice", "/Users/"];

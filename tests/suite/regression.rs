//! One test per fixed bug, each through the binary, each failing on the code before its fix.

use serde_json::{Value as Json, json};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::{sample, tracebook};

/// The report model embedded in a notebook.
fn embedded(html: &str) -> anyhow::Result<Json> {
    let text = tracebook::render::embed::json(html)?;
    Ok(serde_json::from_str(&text)?)
}

/// Runs the binary; its standard output when it succeeded.
fn stdout_of(cmd: &mut assert_cmd::Command) -> anyhow::Result<String> {
    let out = cmd.output()?;
    anyhow::ensure!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8(out.stdout)?)
}

/// A home folder whose Claude Code projects folder holds the sample session.
fn home_with_sample() -> anyhow::Result<tempfile::TempDir> {
    let home = tempfile::tempdir()?;
    let dir = home.path().join(".claude/projects/-Users-alice-work-shop");
    fs::create_dir_all(&dir)?;
    fs::copy(
        sample(),
        dir.join("5b0c1f9e-2c1d-4c7e-9a51-0d3f7e2a6b11.jsonl"),
    )?;
    Ok(home)
}

fn render_all(home: &Path, out: &Path, extra: &[&str]) -> anyhow::Result<String> {
    let run = tracebook()
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("XDG_DATA_HOME")
        .env("XDG_STATE_HOME", home.join("state"))
        .args(["render", "--all", "-o"])
        .arg(out)
        .args(extra)
        .output()?;
    anyhow::ensure!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    Ok(String::from_utf8(run.stderr)?)
}

/// The one notebook `render --all` wrote into `dir`.
fn only_notebook(dir: &Path) -> anyhow::Result<String> {
    let pages: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "html") && !p.ends_with("index.html"))
        .collect();
    anyhow::ensure!(pages.len() == 1, "{pages:?}");
    Ok(fs::read_to_string(&pages[0])?)
}

#[test]
fn render_all_honours_the_view_and_inline() -> anyhow::Result<()> {
    let home = home_with_sample()?;
    let out = tempfile::tempdir()?;
    render_all(home.path(), out.path(), &["--view", "conversation"])?;
    let page = only_notebook(out.path())?;
    assert!(page.contains("<strong>Conversation view:</strong>"));
    assert!(!page.contains("id=\"f-view\""));
    let model = embedded(&page)?;
    assert_eq!(model["view"], "conversation");
    let steps: usize = model["turns"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["steps"].as_array())
                .map(Vec::len)
                .sum()
        })
        .unwrap_or(1);
    assert_eq!(steps, 0);
    // The manifest knows the view and the storage: a run with other ones renders again.
    let again = render_all(home.path(), out.path(), &["--view", "conversation"])?;
    assert!(again.contains("0 rendered, 1 unchanged"), "{again}");
    let inline = render_all(home.path(), out.path(), &["--inline"])?;
    assert!(inline.contains("1 rendered, 0 unchanged"), "{inline}");
    let page = only_notebook(out.path())?;
    assert!(!page.contains("<strong>Conversation view:</strong>"));
    assert_eq!(embedded(&page)?["storage"], "inline");
    Ok(())
}

/// A Claude Code session of `turns` turns, each prompt and answer a few KiB of prose: its
/// notebook is larger than the part a page writes inline by default.
fn long_session(turns: usize) -> String {
    let prose = "The cart total is recomputed after the coupon is applied, line by line. ";
    let mut lines = Vec::new();
    let mut parent: Option<String> = None;
    for n in 1..=turns {
        let text = format!("Turn {n}. {}", prose.repeat(120));
        for (kind, content) in [
            ("user", json!(text)),
            ("assistant", json!([{"type": "text", "text": text}])),
        ] {
            let uuid = format!("00000000-0000-4000-8000-{:012}", lines.len() + 1);
            lines.push(
                json!({"parentUuid": parent, "isSidechain": false, "cwd": "/Users/alice/work/shop",
                       "sessionId": "5b0c1f9e-2c1d-4c7e-9a51-0d3f7e2a6b11", "version": "2.1.39",
                       "type": kind, "uuid": uuid,
                       "timestamp": format!("2026-03-02T10:{:02}:{:02}.000Z", n / 60, n % 60),
                       "message": {"role": kind, "content": content}})
                .to_string(),
            );
            parent = Some(uuid);
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn rerender_keeps_the_conversation_view_and_inline_storage() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let conversation = dir.path().join("conversation.html");
    stdout_of(
        tracebook()
            .arg("render")
            .arg(sample())
            .args(["--view", "conversation", "-o"])
            .arg(&conversation),
    )?;
    let again = stdout_of(
        tracebook()
            .arg("rerender")
            .arg(&conversation)
            .args(["-o", "-"]),
    )?;
    assert!(again.contains("<strong>Conversation view:</strong>"));
    assert!(!again.contains("id=\"f-view\""));
    assert_eq!(embedded(&again)?["view"], "conversation");

    let log = dir.path().join("long.jsonl");
    fs::write(&log, long_session(200))?;
    let stored = stdout_of(tracebook().arg("render").arg(&log).args(["-o", "-"]))?;
    assert!(
        stored.contains("class=\"stored\""),
        "the session is long enough to store turns"
    );
    let inline = dir.path().join("inline.html");
    stdout_of(
        tracebook()
            .arg("render")
            .arg(&log)
            .arg("--inline")
            .arg("-o")
            .arg(&inline),
    )?;
    assert!(!fs::read_to_string(&inline)?.contains("class=\"stored\""));
    let again = stdout_of(tracebook().arg("rerender").arg(&inline).args(["-o", "-"]))?;
    assert!(
        !again.contains("class=\"stored\""),
        "rerender stored the turns of an --inline notebook"
    );
    assert_eq!(embedded(&again)?["storage"], "inline");
    Ok(())
}

/// Runs the binary with its standard output a pipe already closed by its reader; the exit code.
fn exit_into_closed_pipe(args: &[&str]) -> anyhow::Result<Option<i32>> {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tracebook"))
        .args(args)
        .env_remove("HOME")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    drop(child.stdout.take());
    let out = child.wait_with_output()?;
    anyhow::ensure!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(out.status.code())
}

#[test]
fn a_closed_pipe_ends_adapters_list_and_demo_without_an_error() -> anyhow::Result<()> {
    assert_eq!(exit_into_closed_pipe(&["adapters", "list"])?, Some(0));
    assert_eq!(exit_into_closed_pipe(&["demo", "tool-outcomes"])?, Some(0));
    Ok(())
}

/// A home folder whose Claude Code projects folder holds the sample session under each id.
fn home_with_sessions(ids: &[&str]) -> anyhow::Result<tempfile::TempDir> {
    let home = tempfile::tempdir()?;
    let dir = home.path().join(".claude/projects/-Users-alice-work-shop");
    fs::create_dir_all(&dir)?;
    let text = fs::read_to_string(sample())?;
    for id in ids {
        let session = text.replace("5b0c1f9e-2c1d-4c7e-9a51-0d3f7e2a6b11", id);
        fs::write(dir.join(format!("{id}.jsonl")), session)?;
    }
    Ok(home)
}

#[test]
fn render_session_builds_the_report_of_the_matching_session_only() -> anyhow::Result<()> {
    let ids = [
        "aaaa1111-0000-4000-8000-000000000001",
        "bbbb2222-0000-4000-8000-000000000002",
        "cccc3333-0000-4000-8000-000000000003",
        "dddd4444-0000-4000-8000-000000000004",
    ];
    let home = home_with_sessions(&ids)?;
    let out = tracebook()
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("TRACEBOOK_TIMINGS", "1")
        .args(["render", "--session", "bbbb", "-o", "-"])
        .output()?;
    let stderr = String::from_utf8(out.stderr)?;
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8(out.stdout)?.contains(ids[1]));
    // Every log is read to learn its id; one session is redacted, projected and reported.
    let runs = |stage: &str| stderr.lines().filter(|l| l.starts_with(stage)).count();
    assert_eq!(runs("timing: privacy "), 1, "{stderr}");
    assert_eq!(runs("timing: report "), 1, "{stderr}");
    Ok(())
}

/// The kind and status of every tool call of a report, in order.
fn calls(model: &Json) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for step in model["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["steps"].as_array())
        .flatten()
        .filter(|s| s["type"] == "tool_call")
    {
        let word = |k: &str| step[k].as_str().unwrap_or_default().to_owned();
        out.push((word("kind"), word("status")));
    }
    out
}

#[test]
fn rerender_keeps_every_tool_kind_and_status() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let page = dir.path().join("sample.html");
    stdout_of(tracebook().arg("render").arg(sample()).arg("-o").arg(&page))?;
    let before = calls(&embedded(&fs::read_to_string(&page)?)?);
    let kinds: std::collections::BTreeSet<&str> = before.iter().map(|(k, _)| k.as_str()).collect();
    assert!(kinds.len() >= 3, "{kinds:?}");
    let again = stdout_of(tracebook().arg("rerender").arg(&page).args(["-o", "-"]))?;
    assert_eq!(calls(&embedded(&again)?), before);
    Ok(())
}

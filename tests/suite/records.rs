//! What every adapter does with records it does not know, calls without a usable id, and
//! detection past a harness's leading bookkeeping.

use std::path::PathBuf;

use tracebook::events::ToolStatus;
use tracebook::report::model::{Report, StepView, ToolCallView};

use crate::{fixtures, report, tracebook};

fn claude(case: &str) -> PathBuf {
    fixtures()
        .join("claude-code")
        .join(case)
        .join("session.jsonl")
}

fn calls(report: &Report) -> Vec<&ToolCallView> {
    report
        .turns
        .iter()
        .flat_map(|t| &t.steps)
        .filter_map(|s| match s {
            StepView::ToolCall(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

#[test]
fn a_metadata_row_of_an_unknown_type_is_skipped_without_a_warning() -> anyhow::Result<()> {
    let r = report(&claude("metadata-rows"))?;
    let skipped = |reason: &str| {
        r.skipped
            .iter()
            .find(|s| s.reason.starts_with(reason))
            .map(|s| s.count)
    };
    // Every row type of Claude Code 2.1.332's persistence table is bookkeeping.
    assert_eq!(skipped("bookkeeping record"), Some(44));
    // A type no release has written yet, holding no message, content or tool, is counted.
    assert_eq!(skipped("metadata record"), Some(1));
    // A row of an unknown type that holds a message still warns: it may be conversation.
    let messages: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(messages[0].contains("`brand-new-message`"), "{messages:?}");
    assert_eq!(r.turns.len(), 1);
    Ok(())
}

#[test]
fn current_claude_captures_render_with_no_warning_under_strict() -> anyhow::Result<()> {
    let root = fixtures().join("captured/claude-code-2.1.332");
    let mut seen = 0;
    for scenario in std::fs::read_dir(&root)? {
        for file in std::fs::read_dir(scenario?.path())? {
            let path = file?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !name.ends_with(".jsonl") || name.starts_with("mock-") {
                continue;
            }
            let out = tempfile::tempdir()?;
            tracebook()
                .arg("render")
                .arg(&path)
                .arg("--strict")
                .arg("-o")
                .arg(out.path().join("n.html"))
                .assert()
                .success();
            seen += 1;
        }
    }
    assert!(
        seen >= 4,
        "expected captured transcripts and streams, saw {seen}"
    );
    Ok(())
}

#[test]
fn a_claude_call_without_an_id_is_kept_with_its_own_status_and_a_warning() -> anyhow::Result<()> {
    let r = report(&claude("call-without-id"))?;
    let calls = calls(&r);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].name, "Read");
    assert_eq!(calls[0].call_id, "2:1");
    assert_eq!(calls[0].status, ToolStatus::Unknown);
    assert_eq!(calls[1].status, ToolStatus::Ok);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("carry no call id") && w.line == Some(2))
    );
    Ok(())
}

#[test]
fn a_codex_call_id_reused_by_another_call_keeps_both_calls() -> anyhow::Result<()> {
    let r = report(&fixtures().join("codex/reused-call-id/rollout.jsonl"))?;
    let calls = calls(&r);
    let names: Vec<(&str, &str, ToolStatus)> = calls
        .iter()
        .map(|c| (c.name.as_str(), c.call_id.as_str(), c.status))
        .collect();
    assert_eq!(
        names,
        [
            ("exec_command", "call_ok", ToolStatus::Ok),
            ("exec_command", "call_fail", ToolStatus::Error),
            ("apply_patch", "call_ok~2", ToolStatus::Ok),
        ]
    );
    // The patch's output went to the patch, not to the first call.
    assert!(calls[2].output.as_deref().unwrap_or("").contains("Success"));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("reuse the id"))
    );
    Ok(())
}

#[test]
fn detection_reads_past_a_long_run_of_leading_bookkeeping() {
    let out = tempfile::tempdir().expect("a temp dir");
    tracebook()
        .arg("render")
        .arg(claude("leading-bookkeeping"))
        .arg("-o")
        .arg(out.path().join("n.html"))
        .assert()
        .success();
}

#[test]
fn a_lone_system_row_with_session_and_version_is_claude() {
    let out = tempfile::tempdir().expect("a temp dir");
    tracebook()
        .arg("render")
        .arg(claude("system-row-only"))
        .arg("-o")
        .arg(out.path().join("n.html"))
        .assert()
        .success();
}

#[test]
fn a_forced_adapter_that_reads_nothing_exits_2_and_says_so() {
    let out = tempfile::tempdir().expect("a temp dir");
    let assert = tracebook()
        .arg("render")
        .arg(fixtures().join("codex/tool-outcomes/session.jsonl"))
        .args(["--harness", "claude-code", "-o"])
        .arg(out.path().join("n.html"))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(
        err.contains("nothing could be read") && err.contains("claude-code adapter reads"),
        "{err}"
    );
    assert!(!out.path().join("n.html").exists());
}

#[test]
fn gemini_calls_without_ids_keep_their_own_results() -> anyhow::Result<()> {
    let r = report(&fixtures().join("gemini-cli/call-without-id/recording.jsonl"))?;
    let calls = calls(&r);
    let seen: Vec<(&str, &str, ToolStatus)> = calls
        .iter()
        .map(|c| (c.name.as_str(), c.call_id.as_str(), c.status))
        .collect();
    // The shell call that exited 3 keeps its own error; each call its own output.
    assert_eq!(
        seen,
        [
            ("run_shell_command", "7:1", ToolStatus::Ok),
            ("run_shell_command", "7:2", ToolStatus::Error),
            ("write_file", "12:1", ToolStatus::Ok),
        ]
    );
    assert_eq!(calls[1].exit_code, Some(3));
    assert!(
        r.warnings
            .iter()
            .any(|w| w.message.contains("3 tool call(s) carry no call id"))
    );
    Ok(())
}

/// A real capture of each other harness with two records of types no release has written yet
/// appended: one holding nothing a conversation is made of, one holding conversation.
#[test]
fn every_adapter_skips_unknown_metadata_and_warns_on_unknown_conversation() -> anyhow::Result<()> {
    let captured = fixtures().join("captured");
    let cases: [(&str, PathBuf, &str, &str); 4] = [
        (
            "codex rollout",
            captured.join(
                "codex-0.171.0/shell/sessions/2026/12/01/\
                 rollout-2026-12-01T08-52-39-01a230ce-5bb9-7bb3-8381-78d4671836ba.jsonl",
            ),
            r#"{"timestamp":"2026-12-01T08:53:00.000Z","type":"future_record","payload":{"thread_id":"t1","turn_id":"u1"}}"#,
            r#"{"timestamp":"2026-12-01T08:53:00.000Z","type":"future_message","payload":{"content":[{"type":"output_text","text":"said later"}]}}"#,
        ),
        (
            "codex exec --json",
            captured.join("codex-0.171.0/shell/exec-json-1.jsonl"),
            r#"{"type":"turn.future_marker","at":1}"#,
            r#"{"type":"item.future","item":{"id":"item_9","type":"agent_message","text":"said later"}}"#,
        ),
        (
            "gemini recording",
            captured.join("gemini-cli-0.61.0/shell/chats/session-2026-12-01T08-52-28b11c59.jsonl"),
            r#"{"type":"future_record","id":"f1","timestamp":"2026-12-01T08:53:00.000Z"}"#,
            r#"{"type":"future_message","id":"f2","timestamp":"2026-12-01T08:53:00.000Z","content":"said later"}"#,
        ),
        (
            "opencode run --format json",
            captured.join("opencode-1.18.33/shell/run-json-1.jsonl"),
            r#"{"type":"future_event","timestamp":1796115539219,"sessionID":"ses_dcf31d149ffeKxtJECScsnf87R"}"#,
            r#"{"type":"future_part","timestamp":1796115539219,"sessionID":"ses_dcf31d149ffeKxtJECScsnf87R","part":{"type":"text","text":"said later"}}"#,
        ),
    ];
    for (what, base, metadata, conversation) in cases {
        let text = std::fs::read_to_string(&base)?;
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("session.jsonl");
        std::fs::write(
            &path,
            format!("{}\n{metadata}\n{conversation}\n", text.trim_end()),
        )?;
        let r = report(&path)?;
        let metadata_skipped = r
            .skipped
            .iter()
            .find(|s| s.reason.starts_with("metadata record"))
            .map(|s| s.count);
        assert_eq!(metadata_skipped, Some(1), "{what}: {:?}", r.skipped);
        let warnings: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(warnings.len(), 1, "{what}: {warnings:?}");
        assert!(warnings[0].contains("future"), "{what}: {warnings:?}");
    }
    Ok(())
}

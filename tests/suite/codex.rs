//! Codex CLI as its current release (0.171) writes: `exec --json` runs as turns, rollout
//! bookkeeping without warnings, failure texts and error words, user shell commands,
//! multi-agent v2 children, and files that lack the usual prompt events.

use tracebook::events::ToolStatus;
use tracebook::projection::ResponseStatus;
use tracebook::report::model::{Report, StepView};

use crate::{CANARIES, fixtures, report, tracebook};

fn prompt(report: &Report, turn: usize) -> Option<&str> {
    report.turns[turn].prompt.as_ref().map(|p| p.text.as_str())
}

fn response(report: &Report, turn: usize) -> Option<&str> {
    report.turns[turn]
        .response
        .as_ref()
        .map(|r| r.text.as_str())
}

fn no_canary(report: &Report) -> anyhow::Result<()> {
    let json = serde_json::to_string(report)?;
    for canary in CANARIES {
        assert!(!json.contains(canary), "{canary} reached the report");
    }
    Ok(())
}

/// `codex exec --json` writes no prompts: each run is a turn, `turn.completed` completes it
/// with its last message (a call after the message does not undo that), `turn.failed` makes
/// it incomplete with a fixed failure line, and a message re-sent as it grows is one message.
#[test]
fn codex_exec_json_runs_are_turns_with_their_own_outcome() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/exec-json-runs/session.jsonl"))?;
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.turns.len(), 5);
    let status: Vec<ResponseStatus> = report.turns.iter().map(|t| t.response_status).collect();
    use ResponseStatus::{Complete, Incomplete};
    assert_eq!(
        status,
        [Complete, Complete, Incomplete, Incomplete, Incomplete]
    );
    assert_eq!(
        response(&report, 0),
        Some("One command failed with exit 3; the note is written.")
    );
    assert_eq!(report.turns[0].counts.tool_calls, 3);
    // Started, updated and completed: one message, its final text, the turn's answer.
    assert_eq!(
        response(&report, 1),
        Some("The timing is done: the build takes 3s.")
    );
    assert_eq!(report.turns[1].counts.intermediate_responses, 0);
    assert_eq!(report.turns[1].counts.tool_calls, 1);
    let failures: Vec<Option<&str>> = report.turns.iter().map(|t| t.failure.as_deref()).collect();
    assert_eq!(
        failures,
        [
            None,
            None,
            Some(
                "Product session failure (product: Codex CLI; stage: turn; category: rate_limit_exceeded)"
            ),
            Some(
                "Product session failure (product: Codex CLI; stage: turn; category: \
                 response_too_many_failed_attempts; HTTP status: 429)"
            ),
            Some("Product session failure (product: Codex CLI; stage: turn; category: unknown)"),
        ]
    );
    let json = serde_json::to_string(&report)?;
    assert!(
        !json.contains("Rate limit reached"),
        "raw error text reached the report"
    );
    assert!(
        !json.contains("Too Many Requests"),
        "raw error text reached the report"
    );
    no_canary(&report)
}

/// Each run numbers its items afresh (`item_0`, `item_1`, …): a later run's item is its own
/// call, not a repeat of the earlier run's item with the same id.
#[test]
fn codex_exec_json_runs_number_their_items_afresh() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/exec-json-runs/session.jsonl"))?;
    let first = turn_calls(&report, 0);
    assert_eq!(
        first,
        [
            ("item_1", "command_execution", ToolStatus::Error),
            ("item_2", "command_execution", ToolStatus::Ok),
            ("item_3", "file_change", ToolStatus::Ok)
        ]
    );
    assert_eq!(turn_calls(&report, 1), [("item_1", "wait", ToolStatus::Ok)]);
    assert_eq!((report.summary.tool_calls, report.summary.error), (4, 1));
    Ok(())
}

/// A turn's calls: id, name and status.
fn turn_calls(report: &Report, turn: usize) -> Vec<(&str, &str, ToolStatus)> {
    report.turns[turn]
        .steps
        .iter()
        .filter_map(|s| match s {
            StepView::ToolCall(c) => Some((c.call_id.as_str(), c.name.as_str(), c.status)),
            _ => None,
        })
        .collect()
}

/// A rollout that lost its prompt events (trimmed or converted by another tool): its role-user
/// history items are the prompts, injected context (`# AGENTS.md`, `<environment_context>`)
/// aside.
#[test]
fn codex_history_items_are_the_prompts_when_the_file_has_no_prompt_events() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/history-prompts/session.jsonl"))?;
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert_eq!(report.turns.len(), 2);
    assert_eq!(prompt(&report, 0), Some("check the build and write a note"));
    assert_eq!(response(&report, 0), Some("The build is fine."));
    assert_eq!(prompt(&report, 1), Some("now list the folder"));
    let injected = report
        .skipped
        .iter()
        .find(|s| s.reason == "injected context");
    assert_eq!(injected.map(|s| s.count), Some(3));
    Ok(())
}

/// With its prompt events, the same history items only repeat the prompts: counted once.
#[test]
fn codex_history_prompt_items_repeat_the_prompt_events() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/paginated-rollout/session.jsonl"))?;
    assert_eq!(report.turns.len(), 1);
    assert_eq!(prompt(&report, 0), Some("Run the tests."));
    let repeated = report
        .skipped
        .iter()
        .find(|s| s.reason == "prompt repeated in history");
    assert_eq!(repeated.map(|s| s.count), Some(1));
    Ok(())
}

/// The Codex files under `tests/fixtures/captured/codex-*`, written by the real release.
fn captured() -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![fixtures().join("captured")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let in_codex = path.to_string_lossy().contains("/codex-");
            if path.is_dir() {
                stack.push(path);
            } else if in_codex && (name.starts_with("rollout-") || name.starts_with("exec-json-")) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Every rollout and `exec --json` stream the current release wrote reads without a warning
/// (`token_usage_record` is bookkeeping whose usage is summed), so `--strict` writes it.
#[test]
fn codex_current_release_captures_render_with_zero_warnings_under_strict() -> anyhow::Result<()> {
    let files = captured()?;
    assert!(files.len() >= 4, "captures missing: {files:?}");
    let out = tempfile::tempdir()?;
    for file in &files {
        let report = report(file)?;
        assert!(
            report.warnings.is_empty(),
            "{}: {:?}",
            file.display(),
            report.warnings
        );
        let usage_recorded = std::fs::read_to_string(file)?.contains("\"token_usage_record\"");
        if usage_recorded {
            let tokens = report
                .session
                .tokens
                .as_ref()
                .map(|t| (t.input > 0, t.output > 0));
            assert_eq!(
                tokens,
                Some((true, true)),
                "{}: token usage",
                file.display()
            );
        }
        tracebook()
            .args(["render", "--strict", "-o"])
            .arg(out.path().join("out.html"))
            .arg(file)
            .assert()
            .success();
    }
    Ok(())
}

/// Two `exec --json` runs of one session appended to one log (`exec resume --json >> log`) are
/// two turns, each with its own answer and its own calls.
#[test]
fn codex_appended_exec_runs_of_a_real_capture_are_two_turns() -> anyhow::Result<()> {
    let dir = fixtures().join("captured/codex-0.171.0/resume");
    let mut log = std::fs::read(dir.join("exec-json-1.jsonl"))?;
    log.extend(std::fs::read(dir.join("exec-json-2.jsonl"))?);
    let tmp = tempfile::tempdir()?;
    let path = tmp.path().join("exec.jsonl");
    std::fs::write(&path, log)?;
    let report = report(&path)?;
    assert_eq!(report.turns.len(), 2);
    assert_eq!(response(&report, 0), Some("There is a README."));
    assert_eq!(response(&report, 1), Some("missing.txt does not exist."));
    assert_eq!(
        turn_calls(&report, 0),
        [("item_0", "command_execution", ToolStatus::Ok)]
    );
    assert_eq!(
        turn_calls(&report, 1),
        [("item_0", "command_execution", ToolStatus::Error)]
    );
    Ok(())
}

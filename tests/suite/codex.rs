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

/// Shapes a 0.171 rollout writes that carry nothing to show (new history items, turn-item tags,
/// UI events) are skipped without a warning; an event the adapter does not know is warned
/// once, by its own name, since it may carry content.
#[test]
fn codex_current_rollout_shapes_are_read_and_an_unknown_event_is_warned_once() -> anyhow::Result<()>
{
    let report = report(&fixtures().join("codex/current-shapes/session.jsonl"))?;
    let said: Vec<&str> = report.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        said,
        [
            "2 record(s) or block(s) of unrecognised type `brand_new_event` skipped",
            "2 tool result(s) name a call that is not in the log; shown as calls with no \
             retained arguments"
        ]
    );
    let skipped = |reason: &str| {
        report
            .skipped
            .iter()
            .find(|s| s.reason == reason)
            .map(|s| s.count)
    };
    assert_eq!(skipped("other history item"), Some(3)); // additional_tools, configuration_update, compaction_trigger
    assert_eq!(skipped("review mode marker"), Some(2));
    assert_eq!(skipped("extension turn item"), Some(1));
    assert_eq!(skipped("bookkeeping record"), Some(1)); // token_usage_record
    let tokens = report.session.tokens.as_ref().map(|t| (t.input, t.output));
    assert_eq!(tokens, Some((1200, 40)));
    Ok(())
}

/// A command the user ran (`!make test`) is a call of its own: named, with its command, output
/// and exit code from the turn item's snake_case fields.
#[test]
fn codex_user_shell_command_keeps_its_name_output_and_exit_code() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/current-shapes/session.jsonl"))?;
    let calls = crate::outcomes::calls(&report);
    let user = &calls["01a230e0-3333-7000-8000-0000000000a1"];
    assert_eq!(user.name, "user_shell");
    assert_eq!(user.command.as_deref(), Some("/bin/bash -lc make test"));
    assert_eq!(user.exit_code, Some(2));
    assert_eq!(user.status, ToolStatus::Error);
    let output = user.output.as_deref().unwrap_or_default();
    assert!(
        output.starts_with("make: *** No rule to make target"),
        "{output}"
    );
    // An agent command reads its output and exit code from the same snake_case fields.
    let cat = &calls["call_cat"];
    assert_eq!((cat.exit_code, cat.status), (Some(0), ToolStatus::Ok));
    Ok(())
}

/// A call known only from its end event is named by it: an MCP call by server and tool, a
/// patch as `apply_patch`.
#[test]
fn codex_calls_known_only_from_end_events_are_named() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/current-shapes/session.jsonl"))?;
    let calls = crate::outcomes::calls(&report);
    assert_eq!(calls["call_mcp_5"].name, "docs.search");
    assert_eq!(calls["call_mcp_5"].status, ToolStatus::Ok);
    assert_eq!(calls["call_patch_6"].name, "apply_patch");
    assert_eq!(calls["call_patch_6"].status, ToolStatus::Ok);
    Ok(())
}

/// A tool the model invented, arguments that are not JSON and an image that is not there are
/// reported only as output text; each makes its call an error.
#[test]
fn codex_output_texts_that_mean_failure_make_the_call_an_error() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/tool-output-failures/session.jsonl"))?;
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let calls = crate::outcomes::calls(&report);
    for id in ["call_nosuch", "call_badargs", "call_noimg"] {
        assert_eq!(calls[id].status, ToolStatus::Error, "{id}");
    }
    assert_eq!(response(&report, 0), Some("Three calls failed."));
    Ok(())
}

fn captured_subagent() -> (std::path::PathBuf, std::path::PathBuf) {
    let day = fixtures().join("captured/codex-0.171.0/subagent/sessions/2026/12/01");
    (
        day.join("rollout-2026-12-01T09-01-04-01a230d6-0f24-7332-926b-8e106b0224e9.jsonl"),
        day.join("rollout-2026-12-01T09-01-04-01a230d6-102d-75d3-8aa9-840e7f6455cf.jsonl"),
    )
}

/// Multi-agent v2: the child's rollout is nested under the spawn call (linked by the activity
/// item's thread id), the collaboration tools are subagent calls, and the child's own
/// notebook opens with the task it was handed.
#[test]
fn codex_multi_agent_v2_child_is_nested_under_its_spawn_call() -> anyhow::Result<()> {
    let (parent, child) = captured_subagent();
    let report = report(&parent)?;
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    assert!(report.unlinked_subagents.is_empty());
    let calls = crate::outcomes::calls(&report);
    let spawn = &calls["call_spawn"];
    let sub = spawn.subagent.as_ref().expect("the child is nested");
    assert_eq!(sub.agent_id, "01a230d6-102d-75d3-8aa9-840e7f6455cf");
    assert_eq!(sub.turns.len(), 1);
    assert!(
        calls.contains_key("call_sub"),
        "the child's own call is in the parent's notebook"
    );
    for id in ["call_spawn", "call_wait"] {
        assert_eq!(
            calls[id].kind,
            tracebook::events::ToolKind::Subagent,
            "{id}"
        );
    }
    let own = crate::report(&child)?;
    let task = own.turns[0].prompt.as_ref().map(|p| p.text.as_str());
    assert!(
        task.is_some_and(|t| t.starts_with("Message Type: NEW_TASK")),
        "{task:?}"
    );
    assert_eq!(
        own.session.parent.as_deref(),
        Some("01a230d6-0f24-7332-926b-8e106b0224e9")
    );
    Ok(())
}

/// `list` leaves a child out only when its parent's notebook shows it: a child the parent's
/// log does not link stays listed.
#[test]
fn codex_list_hides_a_child_only_when_its_parent_nests_it() -> anyhow::Result<()> {
    let (parent, child) = captured_subagent();
    let listed = |parent_text: &str| -> anyhow::Result<Vec<String>> {
        let home = tempfile::tempdir()?;
        let day = home.path().join("sessions/2026/12/01");
        std::fs::create_dir_all(&day)?;
        std::fs::write(
            day.join(parent.file_name().unwrap_or_default()),
            parent_text,
        )?;
        std::fs::copy(&child, day.join(child.file_name().unwrap_or_default()))?;
        let out = tracebook()
            .env("CODEX_HOME", home.path())
            .args(["list", "--harness", "codex"])
            .output()?;
        let text = String::from_utf8(out.stdout)?;
        Ok(text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
            .collect())
    };
    let text = std::fs::read_to_string(&parent)?;
    assert_eq!(listed(&text)?, ["01a230d6-0f24-7332-926b-8e106b0224e9"]);
    // Without the activity item that links it, the child is not in the parent's notebook.
    let unlinked: String = text
        .lines()
        .filter(|l| !l.contains("\"SubAgentActivity\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut rows = listed(&unlinked)?;
    rows.sort();
    assert_eq!(
        rows,
        [
            "01a230d6-0f24-7332-926b-8e106b0224e9",
            "01a230d6-102d-75d3-8aa9-840e7f6455cf"
        ]
    );
    Ok(())
}

/// In a rollout that writes UI events instead of turn items, a user shell command's end event
/// is its call.
#[test]
fn codex_user_shell_end_event_is_a_named_call() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/user-shell-legacy/session.jsonl"))?;
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let calls = crate::outcomes::calls(&report);
    let user = &calls["user_shell_019e1625"];
    assert_eq!(user.name, "user_shell");
    assert_eq!(user.command.as_deref(), Some("/bin/zsh -lc make test"));
    assert_eq!((user.exit_code, user.status), (Some(2), ToolStatus::Error));
    assert_eq!(prompt(&report, 1), Some("add a test target"));
    Ok(())
}

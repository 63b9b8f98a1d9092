//! Claude Code 2.1.332 shapes: who is speaking, background work, subagent layouts, several
//! headless runs in one stream, string content.

use std::path::{Path, PathBuf};

use tracebook::events::ToolStatus;
use tracebook::report::model::{Report, StepView, ToolCallView, TurnView};

use crate::{fixtures, report};

fn case(name: &str) -> PathBuf {
    fixtures()
        .join("claude-code")
        .join(name)
        .join("session.jsonl")
}

fn call<'r>(turn: &'r TurnView, id: &str) -> &'r ToolCallView {
    turn.steps
        .iter()
        .find_map(|s| match s {
            StepView::ToolCall(c) if c.call_id == id => Some(&**c),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no call {id} in turn {}", turn.number))
}

/// Each step of a turn as (kind, text or call id).
fn steps(turn: &TurnView) -> Vec<(&'static str, String)> {
    turn.steps
        .iter()
        .map(|s| match s {
            StepView::Assistant(t) => ("assistant", t.text.clone()),
            StepView::UserMessage(t) => ("user_message", t.text.clone()),
            StepView::Notice(t) => ("notice", t.text.clone()),
            StepView::ToolCall(c) => ("tool_call", c.call_id.clone()),
            StepView::Thinking { .. } => ("thinking", String::new()),
            StepView::Interrupt { .. } => ("interrupt", String::new()),
            StepView::Compaction { .. } => ("compaction", String::new()),
        })
        .collect()
}

fn prompt(turn: &TurnView) -> Option<&str> {
    turn.prompt.as_ref().map(|p| p.text.as_str())
}

/// A copy of a fixture folder without the lines that hold `drop`.
fn without(name: &str, drop: &str) -> anyhow::Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir()?;
    let from = fixtures().join("claude-code").join(name);
    copy_dir(&from, dir.path())?;
    let main = dir.path().join("session.jsonl");
    let kept: Vec<String> = std::fs::read_to_string(&main)?
        .lines()
        .filter(|l| !l.contains(drop))
        .map(str::to_owned)
        .collect();
    std::fs::write(&main, kept.join("\n") + "\n")?;
    Ok((dir, main))
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

#[test]
fn notifications_and_a_message_typed_mid_turn_stay_inside_their_turn_in_order() -> anyhow::Result<()>
{
    let r = report(&case("background-work"))?;
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    // Two human prompts, two turns: no notification starts one.
    let prompts: Vec<Option<&str>> = r.turns.iter().map(prompt).collect();
    assert_eq!(
        prompts,
        [
            Some("start the background work"),
            Some("run the waiting script")
        ]
    );
    let second = &r.turns[1];
    assert_eq!(
        steps(second),
        [
            ("tool_call", "toolu_wait".to_owned()),
            (
                "notice",
                "Background command \"slow failing script\" failed with exit code 4".to_owned()
            ),
            ("user_message", "also tell me the time".to_owned()),
        ]
    );
    assert_eq!(
        second.response.as_ref().map(|t| t.text.as_str()),
        Some("Done, and I saw your follow-up.")
    );
    assert!(
        steps(&r.turns[0])
            .iter()
            .any(|(k, t)| *k == "notice" && t == "Agent \"check ticket\" finished")
    );
    Ok(())
}

#[test]
fn a_background_launch_takes_its_status_from_the_later_notification() -> anyhow::Result<()> {
    let r = report(&case("background-work"))?;
    let first = &r.turns[0];
    let agent = call(first, "toolu_bg_agent");
    assert_eq!(agent.status, ToolStatus::Ok);
    assert!(agent.subagent.is_some(), "the agent's transcript is nested");
    // The shell exited 4 in the background: the launch said nothing of that.
    assert_eq!(call(first, "toolu_bg_shell").status, ToolStatus::Error);
    Ok(())
}

#[test]
fn a_background_launch_is_unknown_while_no_notification_is_retained() -> anyhow::Result<()> {
    let (_dir, main) = without("background-work", "<task-notification>")?;
    let r = report(&main)?;
    let first = &r.turns[0];
    assert_eq!(call(first, "toolu_bg_agent").status, ToolStatus::Unknown);
    assert_eq!(call(first, "toolu_bg_shell").status, ToolStatus::Unknown);
    Ok(())
}

#[test]
fn user_rows_from_a_task_or_a_peer_are_notices_not_prompts() -> anyhow::Result<()> {
    let r = report(&case("notice-rows"))?;
    assert_eq!(r.turns.len(), 1);
    let turn = &r.turns[0];
    assert_eq!(prompt(turn), Some("review the ticket in the background"));
    let notices: Vec<String> = steps(turn)
        .into_iter()
        .filter(|(k, _)| *k == "notice")
        .map(|(_, t)| t)
        .collect();
    assert_eq!(
        notices,
        [
            "Agent \"review ticket\" failed",
            "Bob here: the ticket is already fixed on main."
        ]
    );
    // The notification's `<status>failed</status>` is the background agent's outcome.
    assert_eq!(call(turn, "toolu_bg_review").status, ToolStatus::Error);
    assert_eq!(
        turn.response.as_ref().map(|t| t.text.as_str()),
        Some("Noted: nothing left to review.")
    );
    Ok(())
}

#[test]
fn workflow_subagents_and_teammates_named_only_in_text_are_nested() -> anyhow::Result<()> {
    let r = report(&case("workflow-subagents"))?;
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert!(r.unlinked_subagents.is_empty());
    let turn = &r.turns[0];
    let nested = |id: &str| call(turn, id).subagent.as_ref().map(|s| s.agent_id.clone());
    assert_eq!(nested("toolu_wf").as_deref(), Some("aw0000000000000a1"));
    assert_eq!(nested("toolu_mate").as_deref(), Some("bbbb222222222222"));
    Ok(())
}

fn turns_of_stream(r: &Report) -> Vec<(Option<&str>, Option<&str>, Option<&str>)> {
    r.turns
        .iter()
        .map(|t| {
            (
                prompt(t),
                t.response.as_ref().map(|x| x.text.as_str()),
                t.failure.as_deref(),
            )
        })
        .collect()
}

#[test]
fn each_headless_run_in_one_stream_is_its_own_turn() -> anyhow::Result<()> {
    let r = report(&case("stream-json-runs"))?;
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    assert_eq!(
        turns_of_stream(&r),
        [
            (None, Some("Both are running in the background."), None),
            (None, Some("Done, and I saw your follow-up."), None),
        ]
    );
    // The background agent's frames are its own, nested under the call, not the parent's.
    let first = &r.turns[0];
    let agent = call(first, "toolu_bg_agent");
    assert_eq!(agent.status, ToolStatus::Ok);
    let sub = agent.subagent.as_ref().map(|s| &s.turns);
    assert_eq!(
        sub.and_then(|t| t.first())
            .and_then(|t| t.response.as_ref())
            .map(|t| t.text.as_str()),
        Some("Ticket HX-1 looks fine.")
    );
    assert!(
        !steps(first)
            .iter()
            .any(|(k, t)| *k == "assistant" && t.contains("HX-1"))
    );
    assert_eq!(call(first, "toolu_bg_shell").status, ToolStatus::Error);
    Ok(())
}

#[test]
fn a_streamed_background_launch_is_unknown_without_its_task_event() -> anyhow::Result<()> {
    let (_dir, main) = without("stream-json-runs", r#""subtype":"task_notification""#)?;
    let r = report(&main)?;
    assert_eq!(
        call(&r.turns[0], "toolu_bg_agent").status,
        ToolStatus::Unknown
    );
    assert_eq!(
        call(&r.turns[0], "toolu_bg_shell").status,
        ToolStatus::Unknown
    );
    // A foreground call keeps the outcome its own result gives.
    assert_eq!(call(&r.turns[1], "toolu_wait").status, ToolStatus::Ok);
    Ok(())
}

#[test]
fn a_later_run_s_failure_stays_on_its_own_turn() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let text = std::fs::read_to_string(case("stream-json-runs"))?;
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines
        .iter()
        .rposition(|l| l.contains(r#""type": "result""#) || l.contains(r#""type":"result""#))
        .ok_or_else(|| anyhow::anyhow!("no result line"))?;
    let mut result: serde_json::Value = serde_json::from_str(&lines[last])?;
    result["subtype"] = "error_during_execution".into();
    result["is_error"] = true.into();
    result["terminal_reason"] = serde_json::Value::Null;
    lines[last] = result.to_string();
    let file = dir.path().join("stream.jsonl");
    std::fs::write(&file, lines.join("\n") + "\n")?;
    let r = report(&file)?;
    assert_eq!(r.turns.len(), 2);
    assert_eq!(r.turns[0].failure, None);
    assert!(
        r.turns[1]
            .failure
            .as_deref()
            .is_some_and(|f| f.contains("category: execution_error")),
        "{:?}",
        r.turns[1].failure
    );
    Ok(())
}

#[test]
fn assistant_content_given_as_a_string_is_one_text_block() -> anyhow::Result<()> {
    let r = report(&case("string-content"))?;
    assert_eq!(
        r.turns[0].response.as_ref().map(|t| t.text.as_str()),
        Some("Based on my analysis:\n\n## README Summary\nIt describes the tool.")
    );
    // A content the rules cannot read is named by its shape, not as an unknown type.
    let w: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("type `assistant` in a shape"), "{w:?}");
    Ok(())
}

#[test]
fn text_typed_beside_command_wrappers_is_the_prompt() -> anyhow::Result<()> {
    let r = report(&case("command-wrappers"))?;
    let turns: Vec<(Option<&str>, Option<&str>)> = r
        .turns
        .iter()
        .map(|t| (prompt(t), t.response.as_ref().map(|x| x.text.as_str())))
        .collect();
    assert_eq!(
        turns,
        [
            // A slash command keeps its arguments; its output row is not a prompt.
            (
                Some("/review\nsrc/app.py"),
                Some("The review found nothing.")
            ),
            (Some("Run this"), Some("Done.")),
            (Some("deploy\nActual user message"), Some("Deployed.")),
        ]
    );
    Ok(())
}

#[test]
fn a_subagent_transcript_given_alone_reads_as_its_own_session() -> anyhow::Result<()> {
    let file = fixtures()
        .join("claude-code/background-work/session/subagents/agent-a33702e863208acea.jsonl");
    let r = report(&file)?;
    assert!(r.unlinked_subagents.is_empty());
    assert_eq!(r.turns.len(), 1);
    assert_eq!(
        prompt(&r.turns[0]),
        Some("ticket HX-1: look around and report")
    );
    assert_eq!(
        r.turns[0].response.as_ref().map(|t| t.text.as_str()),
        Some("Ticket HX-1 looks fine.")
    );
    Ok(())
}

#[test]
fn the_page_shows_notices_and_mid_turn_messages_and_names_them_in_the_process_line()
-> anyhow::Result<()> {
    let r = report(&case("background-work"))?;
    let html = tracebook::render::html(&r)?;
    assert!(html.contains(r#"<li class="step user-message" data-kind="user_message" id="t2-s3">"#));
    assert!(html.contains(r#"<li class="step notice" data-kind="notice" id="t2-s2">"#));
    assert!(html.contains("1 tool call · 1 user message · 1 notice"));
    assert!(html.contains("also tell me the time"));
    Ok(())
}

#[test]
fn a_run_a_background_task_wakes_after_its_turn_ended_continues_that_turn() -> anyhow::Result<()> {
    let file = fixtures().join("captured/claude-code-2.1.332/background-shell/stream-json-1.jsonl");
    let r = report(&file)?;
    assert_eq!(r.turns.len(), 1);
    let turn = &r.turns[0];
    assert_eq!(call(turn, "toolu_bg").status, ToolStatus::Error);
    assert!(steps(turn).iter().any(|(k, _)| *k == "notice"));
    assert_eq!(
        turn.response.as_ref().map(|t| t.text.as_str()),
        Some("The background job failed with exit 4.")
    );
    Ok(())
}

#[test]
fn a_subagent_file_under_the_session_s_folder_is_shown_whatever_session_id_it_names()
-> anyhow::Result<()> {
    let r = report(&case("subagent-own-session-id"))?;
    // Its call was written without an id, so nothing links it: it is shown unlinked, not lost.
    let unlinked: Vec<&str> = r
        .unlinked_subagents
        .iter()
        .map(|s| s.agent_id.as_str())
        .collect();
    assert_eq!(unlinked, ["aw0000000000000a1"]);
    Ok(())
}

/// A streamed message repeats its usage on every record, the output count growing to the
/// message's total on the last one: each message counts once, by that last record.
#[test]
fn streamed_usage_counts_each_message_by_its_last_record() -> anyhow::Result<()> {
    let report = report(&case("streamed-usage"))?;
    let tokens = report.session.tokens.map(|t| (t.input, t.output));
    // Inputs 10 + 4200 and 10 + 300 + 4200; outputs 294 and 632 (not the 2 and 1 first seen).
    assert_eq!(tokens, Some((8720, 926)));
    Ok(())
}

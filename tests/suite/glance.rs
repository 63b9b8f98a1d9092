//! What a reader sees without opening a fold, read from captures of the real harnesses: the
//! line that says why a call failed, why a call is unknown, how long a call took, why a turn
//! has no final response.

use std::path::PathBuf;

use tracebook::events::ToolStatus;
use tracebook::report::model::{Report, StepView, ToolCallView};

use crate::{fixtures, report};

fn capture(release: &str, scenario: &str) -> anyhow::Result<PathBuf> {
    let dir = fixtures().join("captured").join(release).join(scenario);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            name.ends_with(".jsonl") && !name.starts_with("mock") && !name.starts_with("stream")
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .next()
        .ok_or_else(|| anyhow::anyhow!("no session in {}", dir.display()))
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
fn a_failed_call_carries_the_line_that_says_why() -> anyhow::Result<()> {
    let report = report(&capture("claude-code-2.1.332", "tools-fail")?)?;
    let failed: Vec<(&str, Option<&str>)> = calls(&report)
        .into_iter()
        .filter(|c| c.status == ToolStatus::Error)
        .map(|c| (c.name.as_str(), c.fail_line.as_deref()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                "NoSuchTool",
                Some("Error: No such tool available: NoSuchTool")
            ),
            (
                "Bash",
                Some(
                    "InputValidationError: Bash was called with input that could not be parsed as JSON."
                )
            ),
            (
                "Read",
                Some(
                    "File does not exist. Note: your current working directory is <tmp>/tracebook-capture/work."
                )
            ),
        ]
    );
    // Both times retained: the call's duration, in milliseconds.
    assert!(calls(&report).iter().all(|c| c.duration_ms.is_some()));
    let turn = &report.turns[0];
    assert_eq!((turn.counts.error, turn.counts.unknown), (3, 0));
    Ok(())
}

#[test]
fn a_non_zero_exit_quotes_the_error_the_command_printed() -> anyhow::Result<()> {
    let report = report(&capture("codex-0.171.0", "tools-fail")?)?;
    let failed: Vec<Option<&str>> = calls(&report)
        .into_iter()
        .filter(|c| c.status == ToolStatus::Error)
        .map(|c| c.fail_line.as_deref())
        .collect();
    assert_eq!(
        failed,
        [Some("cat: missing.txt: No such file or directory")]
    );
    Ok(())
}

#[test]
fn an_unknown_call_and_its_turn_say_why_in_words() -> anyhow::Result<()> {
    let report = report(&capture("codex-0.171.0", "kill")?)?;
    let unknown: Vec<Option<&str>> = calls(&report)
        .into_iter()
        .filter(|c| c.status == ToolStatus::Unknown)
        .map(|c| c.unknown_reason.as_deref())
        .collect();
    assert_eq!(
        unknown,
        [Some("the harness's status word says it had not finished")]
    );
    let turn = &report.turns[0];
    assert_eq!(turn.counts.unknown, 1);
    let ending = turn.ending.as_ref().expect("an incomplete turn says why");
    assert_eq!(
        ending.reason,
        "ended on command_execution (unknown); the log ends here"
    );
    let last = turn.steps.last().map(|s| s.id().to_owned());
    assert_eq!(ending.step, last);
    Ok(())
}

#[test]
fn an_interrupted_turn_names_the_interrupt_and_its_time() -> anyhow::Result<()> {
    let report = report(&capture("claude-code-2.1.332", "interrupt")?)?;
    let turn = &report.turns[0];
    let ending = turn.ending.as_ref().expect("an incomplete turn says why");
    assert!(
        ending
            .reason
            .starts_with("interrupted by the user at 08:56:52 UTC;"),
        "{}",
        ending.reason
    );
    let interrupt = turn
        .steps
        .iter()
        .find(|s| matches!(s, StepView::Interrupt { .. }))
        .map(|s| s.id().to_owned());
    assert_eq!(ending.step, interrupt);
    // A complete turn has no ending, and every turn of a session with times has a duration.
    for t in &report.turns {
        assert_eq!(t.ending.is_some(), t.response.is_none(), "{}", t.id);
        assert!(t.duration_ms.is_some(), "{}", t.id);
    }
    Ok(())
}

/// The closed page answers "what failed, and why did the turn stop?": the Process line counts
/// errors and unknowns as status pills, each failed row quotes its line, and the incomplete
/// turn says why, linked to the step, with its last message marked as not final.
#[test]
fn the_closed_page_says_what_failed_and_why_the_turn_stopped() -> anyhow::Result<()> {
    let report = report(&capture("claude-code-2.1.332", "interrupt")?)?;
    let html = tracebook::render::html(&report)?;
    let turn = &report.turns[0];
    let ending = turn.ending.as_ref().expect("the interrupted turn says why");
    let step = ending.step.as_deref().unwrap_or_default();
    assert!(
        html.contains(&format!(
            "<span class=\"ending\"><a href=\"#{step}\">{}</a></span>",
            ending.reason
        )),
        "the reason, linked to its step"
    );
    assert!(html.contains("<span class=\"status error\">1 error</span></summary>"));
    let failed = calls(&report)
        .into_iter()
        .find(|c| c.status == ToolStatus::Error)
        .and_then(|c| c.fail_line.clone())
        .expect("the rejected call has a line");
    let escaped = failed.replace('\'', "&#39;");
    assert!(
        html.contains(&format!("<span class=\"why fail-line\">{escaped}</span>")),
        "{failed}"
    );
    // Times in the turns read without scripts.
    let main = &html[html.find("<main").unwrap_or(0)..html.find("</main>").unwrap_or(html.len())];
    assert!(main.contains(" UTC</time>"));
    assert!(!main.contains("Z</time>"));
    Ok(())
}

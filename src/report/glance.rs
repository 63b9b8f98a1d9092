//! What a reader sees without opening anything, derived from the turns once the report is
//! built (and again when an older report is read back): why a call failed or is unknown, how
//! long a call or a turn took, why a turn has no final response, and each turn's counts of
//! failed and unknown calls.
//!
//! Every fact here comes from the report's own fields, after privacy: the lines quoted are cut
//! from redacted output.

use regex::Regex;
use std::sync::LazyLock;
use std::time::SystemTime;

use super::model::{CountsView, EndingView, StepView, ToolCallView, TurnView};
use crate::events::{StatusBasis, ToolStatus};
use crate::projection::ResponseStatus;

/// The longest quoted line, in characters.
const LINE_CHARS: usize = 160;

/// Fills the derived fields of every turn and call, subagents' included. `turns` is one
/// session's list (or one subagent's), in order; the last one is where the log ends.
pub fn fill(turns: &mut [TurnView]) {
    let n = turns.len();
    for (i, turn) in turns.iter_mut().enumerate() {
        fill_turn(turn, i + 1 == n);
    }
}

fn fill_turn(turn: &mut TurnView, last: bool) {
    let (mut error, mut unknown) = (0, 0);
    for step in &mut turn.steps {
        if let StepView::ToolCall(c) = step {
            fill_call(c);
            match c.status {
                ToolStatus::Error => error += 1,
                ToolStatus::Unknown => unknown += 1,
                ToolStatus::Ok => {}
            }
            if let Some(sub) = &mut c.subagent {
                fill(&mut sub.turns);
            }
        }
    }
    turn.counts = CountsView {
        error,
        unknown,
        ..turn.counts
    };
    turn.duration_ms = turn_duration(turn);
    turn.ending = match turn.response_status {
        ResponseStatus::Complete => None,
        ResponseStatus::Incomplete => Some(Box::new(ending(turn, last))),
    };
}

fn fill_call(call: &mut ToolCallView) {
    call.duration_ms = between(call.timestamp.as_deref(), call.result_timestamp.as_deref());
    call.fail_line = match (call.status, &call.output) {
        (ToolStatus::Error, Some(out)) => fail_line(out, call.exit_code.filter(|c| *c != 0)),
        _ => None,
    };
    call.unknown_reason =
        (call.status == ToolStatus::Unknown).then(|| unknown_reason(call.status_basis).to_owned());
}

/// Why an unknown call is unknown, in words, from what decided its status.
pub fn unknown_reason(basis: StatusBasis) -> &'static str {
    match basis {
        StatusBasis::NoResult => "no result retained in the log",
        StatusBasis::StatusWord => "the harness's status word says it had not finished",
        StatusBasis::UnmappedWord => "a status word the adapter does not know",
        StatusBasis::NoStatus => "a result was retained without a status",
        StatusBasis::ExitCode => "its exit code does not say whether it worked",
    }
}

/// A line that names a failure with its message: `Error: …`, `KeyError: …`, a compiler's
/// `file:line:col: …`, `…: No such file or directory`.
static DIAGNOSTIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:\b\w*(?:error|exception|fatal|panic)\w*:\s*\S|:\d+:\d+:\s*\S|:\s*(?:cannot|can't|undefined|no such|not found|permission denied|command not found)\b)",
    )
    .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A line that mentions a failure.
static ERROR_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:error|errors|fail|failed|failure|fatal|panic|exception|traceback|denied|refused|abort|aborted|cannot|invalid|timed out|not found)\b")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// A line that only restates the exit code the row already shows.
static EXIT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bexit(?:ed)?(?: with)?[ _]code\b")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// Terminal escapes and markup tags around a line, which a quoted line leaves out.
static NOISE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|^\s*</?[A-Za-z_][\w-]*>|</?[A-Za-z_][\w-]*>\s*$")
        .unwrap_or_else(|e| unreachable!("fixed pattern: {e}"))
});

/// The line of a failed call's output that says what went wrong, cut to `LINE_CHARS`. For a
/// non-zero exit it is the last line that names a failure (tools print the cause last); for
/// any other failure, the first line with words in it. `None` when no line qualifies.
pub fn fail_line(output: &str, nonzero_exit: Option<i64>) -> Option<String> {
    let lines = output.lines().filter_map(|l| {
        let l = NOISE.replace_all(l, "");
        let l = l.trim();
        (l.chars().any(char::is_alphanumeric) && !EXIT_LINE.is_match(l)).then(|| l.to_owned())
    });
    let line = match nonzero_exit {
        None => lines.into_iter().next(),
        Some(_) => {
            let (mut diagnostic, mut worded) = (None, None);
            for l in lines {
                if DIAGNOSTIC.is_match(&l) {
                    diagnostic = Some(l);
                } else if ERROR_WORD.is_match(&l) {
                    worded = Some(l);
                }
            }
            diagnostic.or(worded)
        }
    }?;
    Some(cut(&line, LINE_CHARS))
}

/// The text within `max` characters: its first sentence when that fits, else cut with `…`.
fn cut(text: &str, max: usize) -> String {
    let end = text.char_indices().nth(max).map(|(i, _)| i);
    if let Some(end) = end
        && let Some(dot) = text[..end].find(". ")
    {
        return text[..=dot].to_owned();
    }
    match end {
        Some(i) => format!("{}…", text[..i].trim_end()),
        None => text.to_owned(),
    }
}

fn instant(ts: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(ts.trim_end_matches('Z')).ok()
}

/// Milliseconds from one timestamp to a later one; `None` when either is missing, unreadable,
/// or the second is not later (a log that stamps a call and its result alike keeps no
/// duration).
fn between(from: Option<&str>, to: Option<&str>) -> Option<u64> {
    let d = instant(to?)?.duration_since(instant(from?)?).ok()?;
    u64::try_from(d.as_millis()).ok().filter(|ms| *ms > 0)
}

/// From the prompt (or the first event) to the last time the turn holds.
fn turn_duration(turn: &TurnView) -> Option<u64> {
    let mut times = turn
        .prompt
        .iter()
        .filter_map(|p| p.timestamp.as_deref())
        .collect::<Vec<_>>();
    for s in &turn.steps {
        match s {
            StepView::ToolCall(c) => {
                times.extend(c.timestamp.as_deref());
                times.extend(c.result_timestamp.as_deref());
            }
            StepView::Assistant(t) | StepView::UserMessage(t) | StepView::Notice(t) => {
                times.extend(t.timestamp.as_deref())
            }
            StepView::Thinking { timestamp, .. }
            | StepView::Interrupt { timestamp, .. }
            | StepView::Compaction { timestamp, .. } => times.extend(timestamp.as_deref()),
        }
    }
    times.extend(turn.response.iter().filter_map(|r| r.timestamp.as_deref()));
    let first = *times.first()?;
    let last = times
        .iter()
        .filter_map(|t| instant(t).map(|i| (i, *t)))
        .max_by_key(|(i, _)| *i)?
        .1;
    between(Some(first), Some(last))
}

/// The time of day of a timestamp, `14:21:43 UTC`.
pub fn clock(ts: &str) -> Option<String> {
    let t = instant(ts)?;
    let s = humantime::format_rfc3339_seconds(t).to_string();
    s.get(11..19).map(|hms| format!("{hms} UTC"))
}

/// Why an incomplete turn has no final response: what its last event was, and whether the log
/// ends there or the next prompt came first.
fn ending(turn: &TurnView, last: bool) -> EndingView {
    let last_step = turn.steps.last();
    let (what, step) = match last_step {
        _ if turn.failure.is_some() => ("the run failed".to_owned(), None),
        None => ("nothing followed the prompt".to_owned(), None),
        Some(StepView::Interrupt { id, timestamp }) => (
            match timestamp.as_deref().and_then(clock) {
                Some(at) => format!("interrupted by the user at {at}"),
                None => "interrupted by the user".to_owned(),
            },
            Some(id.clone()),
        ),
        Some(StepView::ToolCall(c)) => {
            let name = if c.name.is_empty() { "a call" } else { &c.name };
            (
                format!("ended on {name} ({})", c.status.as_str()),
                Some(c.id.clone()),
            )
        }
        Some(s @ StepView::Assistant(_)) => (
            "ended on an assistant message the log does not mark as final".to_owned(),
            Some(s.id().to_owned()),
        ),
        Some(s @ StepView::Thinking { .. }) => {
            ("ended while reasoning".to_owned(), Some(s.id().to_owned()))
        }
        Some(s @ StepView::UserMessage(_)) => (
            "ended on a message from the user".to_owned(),
            Some(s.id().to_owned()),
        ),
        Some(s @ StepView::Notice(_)) => ("ended on a notice".to_owned(), Some(s.id().to_owned())),
        Some(s @ StepView::Compaction { .. }) => (
            "ended on a context compaction".to_owned(),
            Some(s.id().to_owned()),
        ),
    };
    let then = if last {
        "the log ends here"
    } else {
        "the next prompt came before a final response"
    };
    let last_message = turn.steps.iter().rev().find_map(|s| match s {
        StepView::Assistant(t) => Some(t.id.to_string()),
        _ => None,
    });
    EndingView {
        reason: format!("{what}; {then}"),
        step,
        last_message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_zero_exit_quotes_the_last_diagnostic_line() {
        let out = "Output: Traceback (most recent call last):\n  File \"x.py\", line 17, in <module>\n    from c import C\nModuleNotFoundError: No module named 'c'\nExit Code: 1\nProcess Group PGID: 604520";
        assert_eq!(
            fail_line(out, Some(1)).as_deref(),
            Some("ModuleNotFoundError: No module named 'c'")
        );
        let go = "Exit code 1\n[lint] $ golangci-lint run ./...\na.go:144:18: Error return value of `t.Tree` is not checked (errcheck)\n1 issues:\n[lint] ERROR task failed";
        assert_eq!(
            fail_line(go, Some(1)).as_deref(),
            Some("a.go:144:18: Error return value of `t.Tree` is not checked (errcheck)")
        );
        // Only the exit code and bookkeeping: nothing to quote.
        let quiet =
            "Chunk ID: 94c2d6\nWall time: 0.0000 seconds\nProcess exited with code 1\nOutput:\n";
        assert_eq!(fail_line(quiet, Some(1)), None);
    }

    #[test]
    fn another_failure_quotes_its_first_line_without_tags() {
        assert_eq!(
            fail_line(
                "\n<tool_use_error>File has not been read yet.</tool_use_error>\nmore",
                None
            )
            .as_deref(),
            Some("File has not been read yet.")
        );
        let sentence = format!("The call was rejected. {}", "x".repeat(200));
        assert_eq!(
            fail_line(&sentence, None).as_deref(),
            Some("The call was rejected.")
        );
        let long = "x".repeat(400);
        let line = fail_line(&long, None).unwrap_or_default();
        assert_eq!(line.chars().count(), LINE_CHARS + 1);
        assert!(line.ends_with('…'));
    }

    #[test]
    fn durations_need_both_times_in_order() {
        assert_eq!(
            between(
                Some("2026-01-23T14:21:43.537Z"),
                Some("2026-01-23T14:21:47.737Z")
            ),
            Some(4200)
        );
        assert_eq!(
            between(Some("2026-01-23T14:21:47Z"), Some("2026-01-23T14:21:43Z")),
            None
        );
        assert_eq!(between(None, Some("2026-01-23T14:21:43Z")), None);
        assert_eq!(
            between(Some("2026-01-23T14:21:43Z"), Some("2026-01-23T14:21:43Z")),
            None
        );
        assert_eq!(
            clock("2026-01-23T14:21:43.537Z").as_deref(),
            Some("14:21:43 UTC")
        );
    }
}

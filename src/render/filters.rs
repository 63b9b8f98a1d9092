//! The askama filters the page's templates call: text a template shows of a value, and the
//! sanitized HTML of a text, or its escaped HTML marked for colouring.

// `askama::filter_fn` gives each filter's argument struct `pub` setters, which this private
// module cannot reach.
#![allow(unreachable_pub)]

use askama::Values;

use super::highlight::{self, Language};
use super::markdown;
use super::safe::SafeHtml;
use super::words::{self, duration as spoken_duration, human_size, plural, when as read_when};
use crate::report::glance;
use crate::report::model::{StepView, ToolCallView, TurnView};
use crate::report::row::first_line;

/// Markdown as sanitized HTML, its fenced code marked for colouring.
#[askama::filter_fn]
pub(super) fn md(text: &str, _: &dyn Values) -> askama::Result<SafeHtml> {
    Ok(markdown::render(text))
}

/// A shell command, marked for colouring as shell.
#[askama::filter_fn]
pub(super) fn shell(cmd: &str, _: &dyn Values) -> askama::Result<SafeHtml> {
    Ok(highlight::code(cmd, Some(Language::shell())))
}

/// A retained patch: line classes, and its code marked in the edited file's language.
#[askama::filter_fn]
pub(super) fn patch(patch: &str, _: &dyn Values, call: &ToolCallView) -> askama::Result<SafeHtml> {
    let lang = call.paths.first().and_then(|p| Language::from_path(p));
    Ok(highlight::diff(patch, lang))
}

/// Bytes in B, KB or MB (1 KB = 1024 bytes).
#[askama::filter_fn]
pub(super) fn size(bytes: &usize, _: &dyn Values) -> askama::Result<String> {
    Ok(human_size(*bytes))
}

/// A duration in milliseconds as a reader says it.
#[askama::filter_fn]
pub(super) fn duration(ms: &u64, _: &dyn Values) -> askama::Result<String> {
    Ok(spoken_duration(*ms))
}

/// A time as read without scripts: `2026-01-23 14:21:43 UTC` (the script shows it in the
/// reader's zone).
#[askama::filter_fn]
pub(super) fn when(ts: &str, _: &dyn Values) -> askama::Result<String> {
    Ok(read_when(ts))
}

/// The time of day only, for the steps of a turn whose heading holds the date.
#[askama::filter_fn]
pub(super) fn clock(ts: &str, _: &dyn Values) -> askama::Result<String> {
    Ok(glance::clock(ts).unwrap_or_else(|| ts.to_owned()))
}

/// A count with thousands separators: `15,199,722`.
#[askama::filter_fn]
pub(super) fn num(n: &u64, _: &dyn Values) -> askama::Result<String> {
    Ok(words::num(*n))
}

/// What a call is about: its command, else its first path, else the label its adapter read
/// from the arguments.
#[askama::filter_fn]
pub(super) fn call_label(call: &ToolCallView, _: &dyn Values) -> askama::Result<String> {
    Ok(label_of(call, 120))
}

/// A call's one-line label (its command, first path or adapter-named label), cut to `max`.
fn label_of(call: &ToolCallView, max: usize) -> String {
    if let Some(cmd) = &call.command {
        return first_line(cmd, max);
    }
    if let Some(p) = call.paths.first() {
        return first_line(p, max);
    }
    call.label
        .as_deref()
        .map(|l| first_line(l, max))
        .unwrap_or_default()
}

/// A call's arguments as pretty-printed JSON.
#[askama::filter_fn]
pub(super) fn input_json(call: &ToolCallView, _: &dyn Values) -> askama::Result<String> {
    Ok(serde_json::to_string_pretty(&call.input).unwrap_or_default())
}

/// The summary line of a group of adjacent calls: how many, and the tools' names in order.
#[askama::filter_fn]
pub(super) fn group_summary(calls: &[&ToolCallView], _: &dyn Values) -> askama::Result<String> {
    let mut names: Vec<&str> = Vec::new();
    for c in calls {
        if names.last() != Some(&c.name.as_str()) {
            names.push(&c.name);
        }
    }
    let mut listed = names
        .iter()
        .take(6)
        .copied()
        .collect::<Vec<_>>()
        .join(" → ");
    if names.len() > 6 {
        listed.push_str(" → …");
    }
    // One tool many times: what it was given, so a closed group says what was read or run.
    if names.len() == 1 {
        let labels: Vec<String> = calls
            .iter()
            .map(|c| label_of(c, 40))
            .filter(|l| !l.is_empty())
            .collect();
        if !labels.is_empty() {
            listed.push_str(": ");
            listed.push_str(
                &labels
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            if labels.len() > 3 {
                listed.push_str(&format!(", … +{}", labels.len() - 3));
            }
        }
    }
    Ok(format!("{} tool calls: {listed}", calls.len()))
}

/// The summary line of a turn's process: events, messages, calls, and what someone said into
/// the running turn (named here, so a closed process does not hide it).
#[askama::filter_fn]
pub(super) fn process_summary(turn: &TurnView, _: &dyn Values) -> askama::Result<String> {
    let c = &turn.counts;
    let mut parts = words::process_counts(
        c.process_events as usize,
        c.intermediate_responses as usize,
        c.tool_calls as usize,
    );
    let (typed, notices) = turn.steps.iter().fold((0, 0), |(u, n), s| match s {
        StepView::UserMessage(_) => (u + 1, n),
        StepView::Notice(_) => (u, n + 1),
        _ => (u, n),
    });
    if typed > 0 {
        parts.push(plural(typed, "user message"));
    }
    if notices > 0 {
        parts.push(plural(notices, "notice"));
    }
    // Reasoning the log did not keep is said once here; its rows stay in order, quiet.
    let unretained = turn
        .steps
        .iter()
        .filter(|s| matches!(s, StepView::Thinking { text: None, .. }))
        .count();
    if unretained > 0 {
        parts.push(format!("reasoning not retained ({unretained}×)"));
    }
    Ok(parts.join(" · "))
}

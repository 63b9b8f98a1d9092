//! One row per session, taken from its report: what `list` prints, what the batch manifest
//! keeps and what the batch index shows.

use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

use super::model::{Report, StepView, TurnView};

/// What a report says about its session, in one row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    /// Adapter name.
    pub harness: String,
    /// The harness's session id, or the file name when the log keeps none.
    pub id: String,
    /// The id of the session this one is a subagent of, when its log names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The project, privacy-filtered (the working directory's last segment).
    pub project: Option<String>,
    /// First timestamp in the log.
    pub started_at: Option<String>,
    /// Number of turns.
    pub turns: usize,
    /// Tool calls, subagents' included.
    pub tool_calls: usize,
    /// Tool calls with status error.
    pub errors: usize,
    /// The first prompt's first line.
    pub title: Option<String>,
    /// The subagents this session's notebook holds (nested under their calls, or listed as
    /// not linked to one), by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<String>,
}

impl SessionRow {
    /// The row of a report.
    pub fn of(report: &Report) -> Self {
        let s = &report.session;
        SessionRow {
            harness: s.harness.clone(),
            id: s.id.clone().unwrap_or_else(|| stem(&s.source).to_owned()),
            parent: s.parent.clone(),
            project: s.project.clone(),
            started_at: s.started_at.clone(),
            turns: report.summary.turns,
            tool_calls: report.summary.tool_calls,
            errors: report.summary.error,
            title: report
                .turns
                .iter()
                .find_map(|t| t.prompt.as_ref())
                .map(|p| first_line(&p.text, 100)),
            subagents: subagents_shown(report),
        }
    }

    /// The order of every list of sessions: newest first, sessions without a start time last,
    /// then by harness and id.
    pub fn newest_first(&self, other: &Self) -> Ordering {
        other
            .started_at
            .cmp(&self.started_at)
            .then_with(|| self.harness.cmp(&other.harness))
            .then_with(|| self.id.cmp(&other.id))
    }

    /// Whether this row is a subagent session whose parent is among `rows` (same harness) and
    /// whose notebook really holds it. A subagent its parent's notebook does not show stays
    /// listed.
    pub fn nested_in(&self, rows: &[SessionRow]) -> bool {
        self.parent.as_ref().is_some_and(|parent| {
            rows.iter().any(|r| {
                r.harness == self.harness && r.id == *parent && r.subagents.contains(&self.id)
            })
        })
    }
}

/// The ids of the subagents a report shows: nested under a call at any depth, or unlinked.
fn subagents_shown(report: &Report) -> Vec<String> {
    fn walk(turns: &[TurnView], out: &mut Vec<String>) {
        for step in turns.iter().flat_map(|t| &t.steps) {
            if let StepView::ToolCall(call) = step
                && let Some(sub) = &call.subagent
            {
                if !out.contains(&sub.agent_id) {
                    out.push(sub.agent_id.clone());
                }
                walk(&sub.turns, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&report.turns, &mut out);
    for sub in &report.unlinked_subagents {
        if !out.contains(&sub.agent_id) {
            out.push(sub.agent_id.clone());
        }
        walk(&sub.turns, &mut out);
    }
    out
}

/// A file name without its extensions (`rollout-x.jsonl.zst` → `rollout-x`).
pub fn stem(name: &str) -> &str {
    name.split('.')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(name)
}

/// The first line of a text, cut to `max` characters.
pub fn first_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_is_cut_on_characters() {
        assert_eq!(first_line("héllo wörld\nnext", 5), "héllo…");
        assert_eq!(first_line("  short ", 10), "short");
    }

    #[test]
    fn stem_drops_every_extension() {
        assert_eq!(stem("rollout-1.jsonl.zst"), "rollout-1");
        assert_eq!(stem("abc.jsonl"), "abc");
        assert_eq!(stem(".hidden"), ".hidden");
    }
}

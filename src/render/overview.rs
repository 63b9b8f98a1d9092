//! The overview strip: one mark per turn (or per run of turns), its bars the turn's calls by
//! status.

use std::fmt::Write as _;

use crate::report::model::ResponseStatus;
use crate::report::model::ToolStatus;
use crate::report::model::{StepView, TurnView};

/// Calls of one turn by status (its own calls; a subagent's calls count in its own turns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Tally {
    pub(super) ok: usize,
    pub(super) error: usize,
    pub(super) unknown: usize,
}

impl Tally {
    pub(super) fn of(turn: &TurnView) -> Self {
        let mut t = Tally::default();
        for step in &turn.steps {
            if let StepView::ToolCall(c) = step {
                match c.status {
                    ToolStatus::Ok => t.ok += 1,
                    ToolStatus::Error => t.error += 1,
                    ToolStatus::Unknown => t.unknown += 1,
                }
            }
        }
        t
    }

    fn total(&self) -> usize {
        self.ok + self.error + self.unknown
    }
}

impl std::iter::Sum for Tally {
    fn sum<I: Iterator<Item = Tally>>(iter: I) -> Self {
        iter.fold(Tally::default(), |a, b| Tally {
            ok: a.ok + b.ok,
            error: a.error + b.error,
            unknown: a.unknown + b.unknown,
        })
    }
}

/// One rectangle of the overview strip, in the SVG's own units.
pub(super) struct Rect {
    pub(super) class: &'static str,
    pub(super) x: usize,
    pub(super) y: usize,
    pub(super) w: usize,
    pub(super) h: usize,
}

/// One turn's mark in the overview strip.
pub(super) struct Mark {
    pub(super) id: String,
    pub(super) title: String,
    pub(super) x: usize,
    pub(super) rects: Vec<Rect>,
}

/// The overview strip: its size and one mark per turn.
///
/// The page draws each mark's link as one transparent slot (the target of a click, the hover
/// highlight and the title), and the bars of every mark as one path per status, so the strip
/// costs the browser a few elements per mark whatever the session's length.
pub(super) struct Overview {
    pub(super) width: usize,
    /// Its width on the page in CSS pixels, before the page narrows it.
    pub(super) shown_width: usize,
    /// Consecutive turns one mark stands for.
    pub(super) per_mark: usize,
    pub(super) marks: Vec<Mark>,
}

impl Overview {
    /// The bars of every mark as one path per status, in drawing order: each rectangle is a
    /// subpath starting at its top-left corner (`M{x} {y}`).
    pub(super) fn paths(&self) -> Vec<(&'static str, String)> {
        const ORDER: [&str; 5] = ["complete", "incomplete", "ok", "unknown", "error"];
        let mut paths: Vec<(&'static str, String)> =
            ORDER.iter().map(|class| (*class, String::new())).collect();
        for rect in self.marks.iter().flat_map(|m| &m.rects) {
            if let Some((_, d)) = paths.iter_mut().find(|(class, _)| *class == rect.class) {
                let _ = write!(
                    d,
                    "M{} {}h{}v{}h-{}z",
                    rect.x, rect.y, rect.w, rect.h, rect.w
                );
            }
        }
        paths.retain(|(_, d)| !d.is_empty());
        paths
    }
}

/// Width of one turn's slot in the overview, in SVG units.
const SLOT: usize = 10;
/// Height of the call bars.
const BAR_H: usize = 32;
/// Height of the response status band under them.
const RESP_H: usize = 6;

/// The most marks the overview strip draws: past this many turns, a mark stands for a run
/// of consecutive turns, so the strip stays light to draw whatever the session's length.
const MAX_MARKS: usize = 240;

/// Lays out the overview strip: a bar per turn (or per run of turns in a long session) split
/// by call status (errors at the base, where they are easiest to see), and a band under it
/// for the response status, incomplete when any of its turns is.
pub(super) fn overview(turns: &[TurnView]) -> Overview {
    let per_mark = turns.len().div_ceil(MAX_MARKS).max(1);
    let runs: Vec<(&[TurnView], Tally)> = turns
        .chunks(per_mark)
        .map(|run| (run, run.iter().map(Tally::of).sum()))
        .collect();
    let max = runs
        .iter()
        .map(|(_, t)| t.total())
        .max()
        .unwrap_or(0)
        .max(1);
    let marks = runs
        .iter()
        .enumerate()
        .filter_map(|(i, (run, t))| {
            let (first, last) = (run.first()?, run.last()?);
            let x = i * SLOT;
            let mut rects = Vec::new();
            let total = t.total();
            if total > 0 {
                let height = (BAR_H * total).div_ceil(max).max(4);
                let mut y = BAR_H;
                for (n, class) in [(t.error, "error"), (t.unknown, "unknown"), (t.ok, "ok")] {
                    if n == 0 {
                        continue;
                    }
                    let h = (height * n).div_ceil(total).max(2).min(y);
                    y -= h;
                    rects.push(Rect {
                        class,
                        x: x + 1,
                        y,
                        w: SLOT - 2,
                        h,
                    });
                }
            }
            let incomplete = run
                .iter()
                .filter(|t| t.response_status == ResponseStatus::Incomplete)
                .count();
            rects.push(Rect {
                class: if incomplete > 0 {
                    "incomplete"
                } else {
                    "complete"
                },
                x: x + 1,
                y: BAR_H + 2,
                w: SLOT - 2,
                h: RESP_H,
            });
            let mut title = if run.len() == 1 {
                format!("Turn {}: ", first.number)
            } else {
                format!("Turns {}–{}: ", first.number, last.number)
            };
            if total == 0 {
                title.push_str("no tool calls");
            } else {
                title.push_str(&format!(
                    "{} ok, {} error, {} unknown",
                    t.ok, t.error, t.unknown
                ));
            }
            if run.len() == 1 {
                title.push_str(&format!("; response {}", first.response_status.as_str()));
            } else {
                title.push_str(&format!(
                    "; {incomplete} of {} responses incomplete",
                    run.len()
                ));
            }
            Some(Mark {
                id: first.id.to_string(),
                title,
                x,
                rects,
            })
        })
        .collect();
    Overview {
        width: (runs.len() * SLOT).max(SLOT),
        shown_width: (runs.len() * 24).clamp(120, 2400),
        per_mark,
        marks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_session_draws_runs_of_turns_and_keeps_every_call() -> anyhow::Result<()> {
        let turn = |n: usize, status: &str| {
            serde_json::json!({
                "id": format!("t{n}"), "number": n, "prompt": null, "response": null,
                "response_status": if n % 7 == 0 { "incomplete" } else { "complete" },
                "counts": {"intermediate_responses": 0, "tool_calls": 1, "process_events": 1},
                "outcome": {"edits": [], "verifications": [], "commits": []},
                "steps": [{"type": "tool_call", "id": format!("t{n}-s1"), "call_id": "c",
                           "name": "Bash", "kind": "shell", "status": status,
                           "status_basis": "exit_code", "command": "true", "paths": [],
                           "input": {}, "input_size": 0, "result_size": null,
                           "output": null, "exit_code": null, "patch": null,
                           "timestamp": null, "result_timestamp": null, "subagent": null}]
            })
        };
        let turns: Vec<TurnView> = serde_json::from_value(serde_json::Value::Array(
            (1..=1000)
                .map(|n| turn(n, if n % 10 == 0 { "error" } else { "ok" }))
                .collect(),
        ))?;
        let strip = overview(&turns);
        assert!(strip.marks.len() <= MAX_MARKS);
        assert_eq!(strip.marks[0].id, "t1");
        assert_eq!(strip.marks[1].id, "t6", "five turns per mark");
        assert!(strip.marks[0].title.starts_with("Turns 1–5: "));
        let errors = strip
            .marks
            .iter()
            .filter(|m| m.rects.iter().any(|r| r.class == "error"))
            .count();
        assert_eq!(errors, 100, "every run holding a failed call shows it");
        assert!(
            strip.marks[1].rects.iter().any(|r| r.class == "incomplete"),
            "turn 7 is incomplete: {}",
            strip.marks[1].title
        );
        Ok(())
    }
}

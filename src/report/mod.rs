//! The report: turns and facts as plain serde data ([`model`]).

pub mod compat;
pub mod glance;
pub mod model;
pub mod row;
pub mod select;

use crate::events::{Session, ToolStatus};
use crate::privacy::Redacted;
use crate::projection::{Projection, Step, SubagentTurns, Turn};
use crate::warning::Warning;
use model::*;

/// Facts about the run, passed in so tests can pin them.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// When the report is made.
    pub generated_at: String,
    /// tracebook's version.
    pub tool_version: String,
    /// Human-readable harness name.
    pub harness_label: String,
}

/// Builds the report model from a projection and the session's facts.
pub fn build(
    session: &Redacted<Session>,
    projection: Projection,
    run: &RunInfo,
    skipped: &[(String, usize)],
    warnings: &[Warning],
) -> Report {
    let f = &session.facts;
    // Each turn's view is written in the place of its projected turn (a view is no larger:
    // the list is collected in place), so a long session's turns are not held twice.
    let mut turns: Vec<TurnView> = projection
        .turns
        .into_iter()
        .map(|t| turn_view(t, ""))
        .collect();
    glance::fill(&mut turns);
    let mut unlinked_subagents = projection
        .unlinked
        .into_iter()
        .enumerate()
        .map(|(i, s)| subagent_view(s, &format!("u{}", i + 1)))
        .collect::<Vec<_>>();
    for sub in &mut unlinked_subagents {
        glance::fill(&mut sub.turns);
    }
    let summary = summarize(&turns);
    Report {
        schema_version: SCHEMA_VERSION,
        meta: Meta {
            generated_at: run.generated_at.clone(),
            tool_version: run.tool_version.clone(),
        },
        session: SessionInfo {
            harness: session.harness.clone(),
            harness_label: run.harness_label.clone(),
            source: session.source.clone(),
            id: f.id.clone(),
            parent: f.parent.clone(),
            project: f.cwd.clone(),
            branch: f.branch.clone(),
            model: f.model.clone(),
            version: f.version.clone(),
            started_at: f.started_at.clone(),
            ended_at: f.ended_at.clone(),
            tokens: f.tokens.map(|t| Tokens {
                input: t.input,
                output: t.output,
            }),
        },
        summary,
        turns,
        unlinked_subagents,
        skipped: skipped
            .iter()
            .map(|(reason, count)| Skipped {
                reason: reason.clone(),
                count: *count,
            })
            .collect(),
        warnings: warnings
            .iter()
            .map(|w| WarningView {
                source: w.source.clone(),
                line: w.line,
                message: w.message.clone(),
            })
            .collect(),
        selection: None,
        view: View::Full,
        storage: Storage::Stored,
    }
}

/// Totals over turns: response statuses of the turns, tool-call statuses of every call
/// (subagents' included).
pub fn summarize(turns: &[TurnView]) -> Summary {
    let mut summary = Summary {
        turns: turns.len(),
        ..Summary::default()
    };
    for t in turns {
        match t.response_status {
            crate::projection::ResponseStatus::Complete => summary.complete += 1,
            crate::projection::ResponseStatus::Incomplete => summary.incomplete += 1,
        }
    }
    for_each_call(turns, &mut |c| {
        summary.tool_calls += 1;
        match c.status {
            ToolStatus::Ok => summary.ok += 1,
            ToolStatus::Error => summary.error += 1,
            ToolStatus::Unknown => summary.unknown += 1,
        }
    });
    summary
}

/// Visits every tool call, subagents' included, in order.
pub fn for_each_call(turns: &[TurnView], f: &mut impl FnMut(&ToolCallView)) {
    for t in turns {
        for s in &t.steps {
            if let StepView::ToolCall(c) = s {
                f(c);
                if let Some(sub) = &c.subagent {
                    for_each_call(&sub.turns, f);
                }
            }
        }
    }
}

fn turn_view(turn: Turn, prefix: &str) -> TurnView {
    let id = format!("{prefix}t{}", turn.number);
    let counts = turn.counts();
    let steps: Vec<StepView> = turn
        .steps
        .into_iter()
        .enumerate()
        .map(|(i, s)| step_view(s, &format!("{id}-s{}", i + 1)))
        .collect();
    let step_of = |call_id: &str| {
        steps
            .iter()
            .find(|s| matches!(s, StepView::ToolCall(c) if c.call_id == call_id))
            .map(|s| s.id().to_owned())
            .unwrap_or_default()
    };
    let outcome = match turn.outcome.as_deref() {
        Some(o) => Outcome::from(OutcomeView {
            edits: group_edits(&o.edits, &step_of),
            verifications: o
                .verifications
                .iter()
                .map(|v| VerificationView {
                    command: v.command.clone(),
                    status: v.status,
                    call_id: v.call_id.clone(),
                    step: step_of(&v.call_id),
                })
                .collect(),
            commits: o
                .commits
                .iter()
                .map(|c| CommitView {
                    hash: c.hash.clone(),
                    subject: c.subject.clone(),
                    call_id: c.call_id.clone(),
                    step: step_of(&c.call_id),
                })
                .collect(),
        }),
        None => Outcome::default(),
    };
    TurnView {
        prompt: turn.prompt.map(|p| {
            Box::new(TextView {
                id: format!("{id}-p").into_boxed_str(),
                text: p.value,
                timestamp: p.timestamp.map(String::into_boxed_str),
            })
        }),
        response: turn.response.map(|r| {
            Box::new(TextView {
                id: format!("{id}-r").into_boxed_str(),
                text: r.value,
                timestamp: r.timestamp.map(String::into_boxed_str),
            })
        }),
        number: turn.number,
        steps,
        response_status: turn.response_status,
        counts: CountsView {
            intermediate_responses: count(counts.intermediate_responses),
            tool_calls: count(counts.tool_calls),
            process_events: count(counts.process_events),
            error: 0,
            unknown: 0,
        },
        outcome,
        failure: turn.failure.map(String::into_boxed_str),
        duration_ms: None,
        ending: None,
        id: id.into_boxed_str(),
    }
}

/// A count as the report holds it (32 bits; no turn holds more).
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Edits grouped by path, in order of each path's first edit.
fn group_edits(
    edits: &[crate::projection::Edit],
    step_of: &impl Fn(&str) -> String,
) -> Vec<EditView> {
    let mut out: Vec<EditView> = Vec::new();
    for e in edits {
        let call = EditCall {
            status: e.status,
            call_id: e.call_id.clone(),
            step: step_of(&e.call_id),
            patch: if e.patch_retained {
                Availability::Retained
            } else {
                Availability::Unavailable
            },
        };
        match out.iter_mut().find(|v| v.path == e.path) {
            Some(v) => v.calls.push(call),
            None => out.push(EditView {
                path: e.path.clone(),
                calls: vec![call],
            }),
        }
    }
    out
}

fn step_view(step: Step, id: &str) -> StepView {
    let id = id.to_owned();
    match step {
        Step::Assistant(t) => StepView::Assistant(TextView {
            id: id.into_boxed_str(),
            text: t.value,
            timestamp: t.timestamp.map(String::into_boxed_str),
        }),
        Step::Thinking(t) => StepView::Thinking {
            id,
            text: t.value,
            timestamp: t.timestamp,
        },
        Step::UserMessage(t) => StepView::UserMessage(TextView {
            id: id.into_boxed_str(),
            text: t.value,
            timestamp: t.timestamp.map(String::into_boxed_str),
        }),
        Step::Notice(t) => StepView::Notice(TextView {
            id: id.into_boxed_str(),
            text: t.value,
            timestamp: t.timestamp.map(String::into_boxed_str),
        }),
        Step::Interrupt(ts) => StepView::Interrupt { id, timestamp: ts },
        Step::Compaction(t) => StepView::Compaction {
            id,
            summary: t.value,
            timestamp: t.timestamp,
        },
        Step::Tool(tool) => {
            let tool = *tool;
            let c = tool.call;
            let subagent = tool.subagent.map(|s| subagent_view(s, &format!("{id}-")));
            let (result_size, output, exit_code, patch, result_timestamp) = match c.result {
                Some(r) => (
                    Some(r.size),
                    Some(r.output),
                    r.exit_code,
                    r.patch,
                    r.timestamp,
                ),
                None => (None, None, None, None, None),
            };
            StepView::ToolCall(Box::new(ToolCallView {
                call_id: c.call_id,
                name: c.name,
                kind: c.kind,
                status: c.status,
                status_basis: c.basis,
                command: c.command,
                paths: c.paths,
                label: c.label,
                todos: c.todos,
                gutter: c.gutter,
                input: c.input,
                input_size: c.input_size,
                result_size,
                output,
                exit_code,
                patch,
                timestamp: tool.timestamp,
                result_timestamp,
                subagent,
                failure: tool.failure,
                duration_ms: None,
                fail_line: None,
                unknown_reason: None,
                id,
            }))
        }
    }
}

fn subagent_view(sub: SubagentTurns, prefix: &str) -> SubagentView {
    SubagentView {
        id: format!("{prefix}a"),
        agent_id: sub.agent_id,
        turns: sub
            .turns
            .into_iter()
            .map(|t| turn_view(t, &format!("{prefix}a-")))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A turn's view takes its projected turn's place in the list (collected in place): were it
    /// larger, the report stage would hold every turn twice.
    #[test]
    fn a_turn_view_fits_in_the_place_of_a_projected_turn() {
        use std::mem::{align_of, size_of};
        assert!(size_of::<TurnView>() <= size_of::<Turn>());
        assert_eq!(align_of::<TurnView>(), align_of::<Turn>());
        let turns: Vec<Turn> = (1..=3)
            .map(|number| Turn {
                number,
                prompt: None,
                steps: Vec::new(),
                response: None,
                response_status: crate::projection::ResponseStatus::Incomplete,
                outcome: None,
                failure: None,
            })
            .collect();
        let at = turns.as_ptr() as usize;
        let views: Vec<TurnView> = turns.into_iter().map(|t| turn_view(t, "")).collect();
        assert_eq!(
            views.as_ptr() as usize,
            at,
            "the views were written in a new list"
        );
        assert_eq!(&*views[2].id, "t3");
    }
}

//! Projection: a redacted session becomes ordered turns with a response status and an
//! evidence-bounded outcome.
//!
//! Invariants:
//! - a turn starts at a human prompt; events before the first prompt form a turn without one;
//!   a new run of a log that holds no prompts (a turn start) opens a turn without one, which a
//!   prompt written right after it fills, and what follows a turn the log marks ended opens
//!   another; a message typed mid-turn or a notice from something other than the human joins
//!   the running turn, in order;
//! - inside a turn, events keep their source order;
//! - an assistant message is the terminal response only when it is the turn's final retained
//!   event, or the last assistant message of a turn the log marks ended; otherwise the turn is
//!   `incomplete` and the message stays an intermediate response;
//! - a turn whose run failed carries the failure's fixed line and is `incomplete`; a subagent's
//!   failure is also carried by the call that started it;
//! - the outcome lists only what the log retained; nothing is read from any worktree.

use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use crate::events::{Event, EventKind, Session, Subagent, ToolCall, ToolKind, ToolStatus};
use crate::privacy::Redacted;

/// Whether a turn ended with a retained final response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseStatus {
    /// The turn's final retained event is an assistant message.
    Complete,
    /// Anything else: a tool call, an interrupt or nothing came last, or no message at all.
    Incomplete,
}

impl ResponseStatus {
    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseStatus::Complete => "complete",
            ResponseStatus::Incomplete => "incomplete",
        }
    }
}

/// One turn: a prompt and what followed it, up to the next prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// 1-based position among the session's turns.
    pub number: usize,
    /// The human prompt; `None` for events that came before any prompt.
    pub prompt: Option<Stamped<String>>,
    /// Process events in source order, the terminal response excluded.
    pub steps: Vec<Step>,
    /// The terminal response, when the turn has one.
    pub response: Option<Stamped<String>>,
    /// Complete only with a terminal response.
    pub response_status: ResponseStatus,
    /// What the log retained of the turn's effects; `None` when it retained none (boxed: most
    /// turns edit, verify and commit nothing, and a session's turns are held side by side).
    pub outcome: Option<Box<Outcome>>,
    /// The fixed failure line, when the turn's run failed.
    pub failure: Option<String>,
}

/// A value with the time the log gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Stamped<T> {
    /// The value.
    pub value: T,
    /// When; missing stays missing.
    pub timestamp: Option<String>,
}

/// One process event of a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// An intermediate assistant message.
    Assistant(Stamped<String>),
    /// Reasoning; `None` when not retained.
    Thinking(Stamped<Option<String>>),
    /// A tool call, with the subagent it started when the log links one.
    Tool(Box<ToolStep>),
    /// A message the human typed while the agent worked.
    UserMessage(Stamped<String>),
    /// A message from something other than the human (a task's notification, another agent).
    Notice(Stamped<String>),
    /// The user interrupted.
    Interrupt(Option<String>),
    /// The conversation was compacted.
    Compaction(Stamped<Option<String>>),
}

/// A tool call and its nested subagent.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolStep {
    /// The call.
    pub call: ToolCall,
    /// When the call was made.
    pub timestamp: Option<String>,
    /// The subagent's own turns, when this call started one.
    pub subagent: Option<SubagentTurns>,
    /// The fixed failure line of the subagent this call started, when its run failed.
    pub failure: Option<String>,
}

/// A subagent's turns.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentTurns {
    /// The harness's id for the subagent.
    pub agent_id: String,
    /// Its turns.
    pub turns: Vec<Turn>,
}

/// Counts of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counts {
    /// Assistant messages that are not the terminal response.
    pub intermediate_responses: usize,
    /// Tool calls.
    pub tool_calls: usize,
    /// Every retained process event (assistant messages, reasoning, tool calls, interrupts).
    pub process_events: usize,
}

/// What the log retained of a turn's effects.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// Edit calls, in order, with the path they name and their status.
    pub edits: Vec<Edit>,
    /// Verification commands (tests, builds, linters) and their status.
    pub verifications: Vec<Verification>,
    /// Commits seen in tool output.
    pub commits: Vec<Commit>,
}

/// One edited path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The path, as redacted.
    pub path: String,
    /// The edit call's status.
    pub status: ToolStatus,
    /// The edit call's id.
    pub call_id: String,
    /// Whether the log retained the patch.
    pub patch_retained: bool,
}

/// One verification command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verification {
    /// The command.
    pub command: String,
    /// Its status.
    pub status: ToolStatus,
    /// The call's id.
    pub call_id: String,
}

/// One commit seen in tool output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// Abbreviated or full hash, as printed.
    pub hash: String,
    /// Subject line.
    pub subject: String,
    /// The call whose output showed it.
    pub call_id: String,
}

/// The projected session: its turns and subagents no call links to.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    /// Turns in order.
    pub turns: Vec<Turn>,
    /// Subagents the log holds but no retained call started.
    pub unlinked: Vec<SubagentTurns>,
}

/// Projects a redacted session into turns, moving its events and subagents out (its facts
/// stay) so their text is not copied: the session and its projection never both hold it.
pub fn project(session: &mut Redacted<Session>) -> Projection {
    let (events, subagents) = session.take_events();
    let mut linked = Linked::new(subagents, &events);
    let turns = turns(events, &mut linked);
    let unlinked = linked
        .unused()
        .map(|s| SubagentTurns {
            agent_id: s.agent_id,
            turns: turns_of(s.session),
        })
        .collect();
    Projection { turns, unlinked }
}

fn turns_of(session: Session) -> Vec<Turn> {
    let mut linked = Linked::new(session.subagents, &session.events);
    turns(session.events, &mut linked)
}

/// A session's subagents, each projected for the first call that names it. A later call
/// naming the same subagent gets a copy of its turns, kept only when more than one call names
/// it.
struct Linked {
    slots: Vec<(String, Slot)>,
    /// Agent ids more than one call names.
    shared: Vec<String>,
}

enum Slot {
    Unused(Box<Session>),
    Used(Option<Vec<Turn>>),
}

impl Linked {
    fn new(subagents: Vec<Subagent>, events: &[Event]) -> Self {
        let mut named: Vec<(&str, usize)> = Vec::new();
        for e in events {
            if let EventKind::ToolCall(call) = &e.kind
                && let Some(id) = call.agent_id.as_deref()
            {
                match named.iter_mut().find(|(n, _)| *n == id) {
                    Some((_, count)) => *count += 1,
                    None => named.push((id, 1)),
                }
            }
        }
        Self {
            slots: subagents
                .into_iter()
                .map(|s| (s.agent_id, Slot::Unused(Box::new(s.session))))
                .collect(),
            shared: named
                .into_iter()
                .filter(|(_, n)| *n > 1)
                .map(|(id, _)| id.to_owned())
                .collect(),
        }
    }

    /// The turns of the first subagent with this id.
    fn take(&mut self, id: &str) -> Option<Vec<Turn>> {
        let slot = &mut self.slots.iter_mut().find(|(a, _)| a == id)?.1;
        match std::mem::replace(slot, Slot::Used(None)) {
            Slot::Unused(session) => {
                let turns = turns_of(*session);
                if self.shared.iter().any(|s| s == id) {
                    *slot = Slot::Used(Some(turns.clone()));
                }
                Some(turns)
            }
            Slot::Used(kept) => {
                *slot = Slot::Used(kept.clone());
                kept
            }
        }
    }

    /// Subagents no call named, in order.
    fn unused(self) -> impl Iterator<Item = Subagent> {
        self.slots
            .into_iter()
            .filter_map(|(agent_id, slot)| match slot {
                Slot::Unused(session) => Some(Subagent {
                    agent_id,
                    session: *session,
                }),
                Slot::Used(_) => None,
            })
    }
}

/// The events of one turn: its prompt, its events, and whether the log said it ended.
struct Group {
    prompt: Option<Stamped<String>>,
    events: Vec<Event>,
    ended: bool,
}

/// Where a turn begins among the events a session keeps (a turn's events follow each other:
/// each event joins the last turn or begins a new one), whether the first of them is its
/// prompt, and whether the log said it ended.
struct Mark {
    start: usize,
    prompted: bool,
    ended: bool,
}

impl Mark {
    fn new(start: usize, prompted: bool) -> Self {
        Self {
            start,
            prompted,
            ended: false,
        }
    }

    /// A turn that has begun and holds nothing yet (its prompt aside), `kept` events kept.
    fn is_fresh(&self, kept: usize) -> bool {
        kept == self.start + usize::from(self.prompted) && !self.ended
    }
}

/// The session's turns, in order. The events are grouped where they stand (the list is kept
/// in place, the markers that begin and end turns dropped from it, and each turn marked by
/// where it begins), so a long session's events are not held twice while they are grouped.
fn turns(mut events: Vec<Event>, linked: &mut Linked) -> Vec<Turn> {
    let mut marks: Vec<Mark> = Vec::new();
    let mut kept = 0;
    // A run began while no turn was open, and nothing has followed it yet.
    let mut run_pending = false;
    events.retain(|event| {
        if !matches!(event.kind, EventKind::RunStart | EventKind::TurnEnd) {
            run_pending = false;
        }
        match &event.kind {
            // A prompt right after a run's start, with nothing between, is that turn's.
            EventKind::Prompt { .. } => {
                match marks.last_mut() {
                    Some(m) if !m.prompted && m.is_fresh(kept) => m.prompted = true,
                    _ => marks.push(Mark::new(kept, true)),
                }
                kept += 1;
                true
            }
            // A run's start begins a turn, unless the running one holds nothing yet.
            EventKind::TurnStart => {
                if !marks.last().is_some_and(|m| m.is_fresh(kept)) {
                    marks.push(Mark::new(kept, false));
                }
                false
            }
            EventKind::TurnEnd => {
                if let Some(m) = marks.last_mut() {
                    m.ended = true;
                }
                false
            }
            // What follows a run's start opens a turn when none is open; only a log that
            // ends right after it needs the start itself to show that run.
            EventKind::RunStart => {
                run_pending = marks.last().is_none_or(|m| m.ended);
                false
            }
            // A notice after a turn ended (a background task's end woke the agent) reopens
            // it: what the agent does in answer belongs to the turn that started the task. So
            // does a compaction: the harness ended a step to compact and then carried on
            // (OpenCode's run output ends the summary's step with `stop`). Anything else after
            // an ended turn opens a new one.
            kind => {
                let reopens = matches!(
                    kind,
                    EventKind::Notice { .. } | EventKind::Compaction { .. }
                );
                match marks.last_mut() {
                    Some(m) if reopens || !m.ended => m.ended = false,
                    _ => marks.push(Mark::new(kept, false)),
                }
                kept += 1;
                true
            }
        }
    });
    if run_pending {
        marks.push(Mark::new(kept, false));
    }
    let mut events = events.into_iter();
    let mut turns = Vec::with_capacity(marks.len());
    for (i, m) in marks.iter().enumerate() {
        let end = marks.get(i + 1).map_or(kept, |next| next.start);
        let prompt = match m.prompted {
            true => events.next().and_then(|e| match e.kind {
                EventKind::Prompt { text } => Some(Stamped {
                    value: text,
                    timestamp: e.timestamp,
                }),
                _ => None,
            }),
            false => None,
        };
        let group = Group {
            prompt,
            events: events
                .by_ref()
                .take(end - m.start - usize::from(m.prompted))
                .collect(),
            ended: m.ended,
        };
        turns.push(turn(i + 1, group, linked));
    }
    turns
}

fn turn(number: usize, group: Group, linked: &mut Linked) -> Turn {
    let Group {
        prompt,
        events,
        ended,
    } = group;
    // A failure that names a call of this turn belongs to that call (its subagent failed);
    // any other failure is the turn's own, and the last one recorded stands.
    let calls: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(c) => Some(c.call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut turn_failure = None;
    let mut call_failures: Vec<(String, String)> = Vec::new();
    for event in &events {
        if let EventKind::Failure(f) = &event.kind {
            match f.call_id.as_deref().filter(|id| calls.contains(id)) {
                Some(id) => call_failures.push((id.to_owned(), f.line())),
                None => turn_failure = Some(f.line()),
            }
        }
    }
    // The terminal response is the final retained event, if it is assistant text; compaction
    // markers, notices and failures are not process events. In a turn the log says ended, it
    // is the last assistant text. A failed run has no terminal response.
    let last = if ended {
        events
            .iter()
            .rposition(|e| matches!(e.kind, EventKind::Assistant { .. }))
    } else {
        events.iter().rposition(|e| {
            !matches!(
                e.kind,
                EventKind::Compaction { .. } | EventKind::Failure(_) | EventKind::Notice { .. }
            )
        })
    };
    // An interrupt after the answer leaves the turn incomplete, ended or not.
    let terminal = last
        .filter(|&i| matches!(events[i].kind, EventKind::Assistant { .. }))
        .filter(|&i| {
            !events[i..]
                .iter()
                .any(|e| matches!(e.kind, EventKind::Interrupt))
        })
        .filter(|_| turn_failure.is_none());
    // Room for the steps exactly: a turn of a prompt and its answer holds none, and its list
    // takes no room (a session's turns are held side by side).
    let kept = events
        .iter()
        .filter(|e| {
            !matches!(
                e.kind,
                EventKind::Prompt { .. }
                    | EventKind::Failure(_)
                    | EventKind::TurnStart
                    | EventKind::TurnEnd
                    | EventKind::RunStart
            )
        })
        .count();
    let mut steps = Vec::with_capacity(kept - usize::from(terminal.is_some()));
    let mut response = None;
    for (i, event) in events.into_iter().enumerate() {
        let ts = event.timestamp;
        let step = match event.kind {
            EventKind::Prompt { .. }
            | EventKind::Failure(_)
            | EventKind::TurnStart
            | EventKind::TurnEnd
            | EventKind::RunStart => continue,
            EventKind::UserMessage { text } => Step::UserMessage(Stamped {
                value: text,
                timestamp: ts,
            }),
            EventKind::Notice { text } => Step::Notice(Stamped {
                value: text,
                timestamp: ts,
            }),
            EventKind::Assistant { text } if Some(i) == terminal => {
                response = Some(Stamped {
                    value: text,
                    timestamp: ts,
                });
                continue;
            }
            EventKind::Assistant { text } => Step::Assistant(Stamped {
                value: text,
                timestamp: ts,
            }),
            EventKind::Thinking { text } => Step::Thinking(Stamped {
                value: text,
                timestamp: ts,
            }),
            EventKind::Interrupt => Step::Interrupt(ts),
            EventKind::Compaction { summary } => Step::Compaction(Stamped {
                value: summary,
                timestamp: ts,
            }),
            EventKind::ToolCall(call) => {
                let subagent = call.agent_id.as_ref().and_then(|id| {
                    Some(SubagentTurns {
                        agent_id: id.clone(),
                        turns: linked.take(id)?,
                    })
                });
                // The call's own failure record wins; else the subagent's last failed turn.
                let failure = call_failures
                    .iter()
                    .rev()
                    .find(|(id, _)| *id == call.call_id)
                    .map(|(_, line)| line.clone())
                    .or_else(|| {
                        subagent
                            .as_ref()
                            .and_then(|s| s.turns.iter().rev().find_map(|t| t.failure.clone()))
                    });
                Step::Tool(Box::new(ToolStep {
                    call: *call,
                    timestamp: ts,
                    subagent,
                    failure,
                }))
            }
        };
        steps.push(step);
    }
    let outcome = Some(outcome(&steps))
        .filter(|o| !(o.edits.is_empty() && o.verifications.is_empty() && o.commits.is_empty()))
        .map(Box::new);
    Turn {
        number,
        prompt,
        response_status: if response.is_some() {
            ResponseStatus::Complete
        } else {
            ResponseStatus::Incomplete
        },
        response,
        steps,
        outcome,
        failure: turn_failure,
    }
}

impl Turn {
    /// The turn's counts.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for step in &self.steps {
            match step {
                Step::Assistant(_) => c.intermediate_responses += 1,
                Step::Tool(_) => c.tool_calls += 1,
                Step::Thinking(_) | Step::Interrupt(_) => {}
                Step::Compaction(_) | Step::Notice(_) | Step::UserMessage(_) => continue,
            }
            c.process_events += 1;
        }
        c
    }
}

/// Commands that verify work: tests, builds, type checks and linters.
static VERIFY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?x)(?:^|[\s;&|(])(?:",
        r"cargo\s+(?:test|build|check|clippy|nextest|fmt\s+--check|bench)",
        r"|(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|build|lint|typecheck|check)",
        r"|npx\s+(?:jest|vitest|tsc|eslint|playwright|prettier\s+--check)",
        r"|(?:python3?\s+-m\s+)?(?:pytest|unittest|mypy|ruff|flake8|pylint|black\s+--check|tox|nox)",
        r"|go\s+(?:test|build|vet)|golangci-lint",
        r"|make(?:\s+(?:test|check|build|lint|all))?\s*(?:$|[;&|])",
        r"|mvn\s+\S*(?:test|verify|package)|gradle\w*\s+\S*(?:test|build|check)",
        r"|dotnet\s+(?:test|build)|swift\s+(?:test|build)|mix\s+(?:test|compile)",
        r"|tsc|eslint|jest|vitest|rspec|phpunit|ctest|bazel\s+(?:test|build)",
        r"|uv\s+run\s+(?:pytest|ruff|mypy|ty)|ty\s+check",
        r")\b"
    ))
    .expect("fixed regex")
});

/// Git's commit summary line: `[branch abc1234] subject` (with `(root-commit)` on the first).
static COMMIT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^\[[^\]\s]+(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$")
        .expect("fixed regex")
});

/// Whether a shell command verifies work (tests, builds, linters).
pub fn is_verification(command: &str) -> bool {
    VERIFY.is_match(command)
}

fn outcome(steps: &[Step]) -> Outcome {
    let mut out = Outcome::default();
    for step in steps {
        let Step::Tool(tool) = step else { continue };
        let call = &tool.call;
        match call.kind {
            ToolKind::Edit => {
                for path in &call.paths {
                    out.edits.push(Edit {
                        path: path.clone(),
                        status: call.status,
                        call_id: call.call_id.clone(),
                        patch_retained: call.result.as_ref().is_some_and(|r| r.patch.is_some()),
                    });
                }
            }
            ToolKind::Shell => {
                if let Some(cmd) = call.command.as_deref().filter(|c| is_verification(c)) {
                    out.verifications.push(Verification {
                        command: cmd.to_owned(),
                        status: call.status,
                        call_id: call.call_id.clone(),
                    });
                }
            }
            _ => {}
        }
        if call.kind == ToolKind::Shell
            && let Some(result) = &call.result
        {
            for caps in COMMIT.captures_iter(&result.output) {
                let hash = caps[1].to_owned();
                if !out.commits.iter().any(|c| c.hash == hash) {
                    out.commits.push(Commit {
                        hash,
                        subject: caps[2].trim().to_owned(),
                        call_id: call.call_id.clone(),
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: EventKind) -> Event {
        Event {
            timestamp: None,
            kind,
        }
    }

    fn say(text: &str) -> Event {
        ev(EventKind::Assistant { text: text.into() })
    }

    fn project_events(events: Vec<Event>) -> Vec<Turn> {
        let mut linked = Linked::new(Vec::new(), &events);
        turns(events, &mut linked)
    }

    #[test]
    fn run_boundaries_split_a_stream_without_prompts() {
        let call = ev(EventKind::Thinking { text: None });
        let turns = project_events(vec![
            ev(EventKind::TurnStart),
            ev(EventKind::TurnStart), // a thread's start, then its turn's: one turn
            say("first answer"),
            call,
            ev(EventKind::TurnEnd),
            ev(EventKind::TurnStart),
            ev(EventKind::Prompt {
                text: "asked".into(),
            }),
            say("second answer"),
            ev(EventKind::TurnEnd),
            say("after the end"),
        ]);
        assert_eq!(turns.len(), 3);
        // Ended: the last message is the answer even though a step came after it.
        assert_eq!(turns[0].response_status, ResponseStatus::Complete);
        assert_eq!(
            turns[0].response.as_ref().map(|r| r.value.as_str()),
            Some("first answer")
        );
        assert!(turns[0].prompt.is_none());
        // A prompt right after a run's start is that turn's prompt.
        assert_eq!(
            turns[1].prompt.as_ref().map(|p| p.value.as_str()),
            Some("asked")
        );
        assert_eq!(turns[1].response_status, ResponseStatus::Complete);
        // What follows an ended turn opens a new one.
        assert!(turns[2].prompt.is_none());
        assert_eq!(turns[2].response_status, ResponseStatus::Complete);
    }

    #[test]
    fn a_run_that_starts_and_is_cut_short_is_an_incomplete_turn() {
        // The harness was stopped right after a run began: the run is a turn, unanswered.
        let turns = project_events(vec![ev(EventKind::RunStart)]);
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].response_status, ResponseStatus::Incomplete);
        // After an ended turn, a run that writes nothing more is a turn of its own; a run that
        // writes something is one turn, however many steps begin in it.
        let turns = project_events(vec![
            ev(EventKind::RunStart),
            say("first answer"),
            ev(EventKind::TurnEnd),
            ev(EventKind::RunStart),
            say("working"),
            ev(EventKind::RunStart),
            say("second answer"),
            ev(EventKind::TurnEnd),
            ev(EventKind::RunStart),
        ]);
        assert_eq!(turns.len(), 3);
        assert_eq!(
            turns[1].response.as_ref().map(|r| r.value.as_str()),
            Some("second answer")
        );
        assert_eq!(turns[2].response_status, ResponseStatus::Incomplete);
        // A run's start after a compaction's step does not split the turn it continues.
        let turns = project_events(vec![
            say("the summary's step"),
            ev(EventKind::TurnEnd),
            ev(EventKind::RunStart),
            ev(EventKind::Compaction { summary: None }),
            say("the answer after compacting"),
            ev(EventKind::TurnEnd),
        ]);
        assert_eq!(turns.len(), 1);
    }

    #[test]
    fn an_interrupt_after_the_answer_leaves_an_ended_turn_incomplete() {
        let turns = project_events(vec![
            say("partial answer"),
            ev(EventKind::Interrupt),
            ev(EventKind::TurnEnd),
        ]);
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].response_status, ResponseStatus::Incomplete);
    }

    #[test]
    fn a_notice_after_an_ended_turn_reopens_it() {
        let turns = project_events(vec![
            ev(EventKind::Prompt {
                text: "start the job".into(),
            }),
            say("started"),
            ev(EventKind::TurnEnd),
            ev(EventKind::Notice {
                text: "the job failed".into(),
            }),
            say("the job failed, here is why"),
            ev(EventKind::TurnEnd),
        ]);
        assert_eq!(turns.len(), 1);
        assert_eq!(
            turns[0].response.as_ref().map(|r| r.value.as_str()),
            Some("the job failed, here is why")
        );
    }

    #[test]
    fn a_compaction_right_after_a_turns_end_continues_that_turn() {
        let turns = project_events(vec![
            say("the summary's step"),
            ev(EventKind::TurnEnd),
            ev(EventKind::Compaction { summary: None }),
            say("the answer after compacting"),
            ev(EventKind::TurnEnd),
            say("the next run"),
        ]);
        assert_eq!(turns.len(), 2);
        assert_eq!(
            turns[0].response.as_ref().map(|r| r.value.as_str()),
            Some("the answer after compacting")
        );
        assert!(
            turns[0]
                .steps
                .iter()
                .any(|s| matches!(s, Step::Compaction(_)))
        );
    }

    #[test]
    fn without_boundaries_a_message_before_a_step_is_not_the_answer() {
        let turns = project_events(vec![say("not the answer"), ev(EventKind::Interrupt)]);
        assert_eq!(turns.len(), 1);
        assert_eq!(turns[0].response_status, ResponseStatus::Incomplete);
    }

    #[test]
    fn recognises_verification_commands() {
        for c in [
            "cargo test --locked",
            "cd app && npm test",
            "npm run build",
            "python -m pytest -q",
            "uv run pytest",
            "go test ./...",
            "make",
            "make test",
            "npx tsc --noEmit",
        ] {
            assert!(is_verification(c), "{c}");
        }
        for c in [
            "ls -la",
            "git status",
            "cat Makefile",
            "echo testing",
            "makefile-gen",
        ] {
            assert!(!is_verification(c), "{c}");
        }
    }

    #[test]
    fn finds_commits_in_git_output() {
        let out = "[main 3f2c1a9] Add parser\n 2 files changed\n[feat (root-commit) abcdef0] First";
        let hashes: Vec<_> = COMMIT
            .captures_iter(out)
            .map(|c| (c[1].to_owned(), c[2].to_owned()))
            .collect();
        assert_eq!(
            hashes,
            [
                ("3f2c1a9".to_owned(), "Add parser".to_owned()),
                ("abcdef0".to_owned(), "First".to_owned())
            ]
        );
    }
}

//! The one seam: vendor words become canonical values here, and nowhere else.
//!
//! `tool_status` is the only function that reads a vendor's status word or exit code and
//! decides `ok`, `error` or `unknown`; `Normalizer::session` is the only place a canonical
//! [`ToolCall`] is built, and it calls `tool_status` exactly once per call.
//! The call's todo states and read gutter go through the adapter's tables here too: a word a
//! table does not know is reported once and reads as `unknown` (a todo) or no gutter.
//! `Normalizer::failure` is the only place a canonical [`Failure`] is built: its stage and
//! category come only out of the adapter's allowlisted tables, its numbers only from integers.

use serde_json::Value as Json;
use std::collections::{BTreeSet, HashMap};

use super::interpret::{
    Raw, RawBody, RawCall, RawEvent, RawFailure, RawResult, TextMap, Word, scalar_string,
};
use super::spec::{AdapterSpec, Table};
use crate::events::{
    Event, EventKind, Failure, FailureScope, Session, StatusBasis, Todo, TodoState, ToolCall,
    ToolKind, ToolResult, ToolStatus, UNKNOWN,
};
use crate::warning::Warning;

/// Events (and then slots) taken at once when a session's events are made canonical: their
/// room is given back a few pages at a time.
const TAKEN_AT_ONCE: usize = 4096;

/// What a table says about one vendor word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Translation {
    /// The table maps it (or its `missing` / `default` entry applies).
    Mapped(String),
    /// The table has no entry and no default for this word.
    Unmapped(String),
    /// The value was absent and the table has no `missing` entry.
    Absent,
}

/// Looks one vendor value up in a named table.
pub(crate) fn translate(table: &Table, raw: Option<&Json>) -> Translation {
    match raw {
        None | Some(Json::Null) => match &table.missing {
            Some(m) => Translation::Mapped(m.clone()),
            None => Translation::Absent,
        },
        Some(v) => {
            let word = scalar_string(v);
            match table.values.get(&word).or(table.default.as_ref()) {
                Some(m) => Translation::Mapped(m.clone()),
                None => Translation::Unmapped(word),
            }
        }
    }
}

/// A word the adapter could not translate, reported once per adapter and value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Unmapped {
    pub(crate) table: String,
    pub(crate) word: String,
}

/// Decides a tool call's outcome from what its result retained.
///
/// - no result retained: `unknown`;
/// - a retained exit code that the exit-code table calls `error` makes the call an error,
///   whatever the status word says;
/// - otherwise the status word through its table; a word the table does not know is `unknown`.
pub(crate) fn tool_status(
    spec: &AdapterSpec,
    result: Option<&RawResult>,
    unmapped: &mut BTreeSet<Unmapped>,
) -> (ToolStatus, StatusBasis) {
    let Some(result) = result else {
        return (ToolStatus::Unknown, StatusBasis::NoResult);
    };
    let mut lookup = |word: &Option<Word>| -> Option<Result<ToolStatus, ()>> {
        let word = word.as_ref()?;
        let Some(name) = &word.table else {
            // A constant: validated as a canonical name at load.
            return word
                .raw
                .as_ref()
                .and_then(Json::as_str)
                .and_then(|w| w.parse().ok())
                .map(Ok);
        };
        let table = spec.tables.get(name)?;
        match translate(table, word.raw.as_ref()) {
            Translation::Mapped(w) => w.parse().ok().map(Ok),
            Translation::Unmapped(w) => {
                unmapped.insert(Unmapped {
                    table: name.clone(),
                    word: w,
                });
                Some(Err(()))
            }
            Translation::Absent => None,
        }
    };
    let exit = lookup(&result.exit_code);
    let status = lookup(&result.status);
    match (exit, status) {
        (Some(Ok(ToolStatus::Error)), _) => (ToolStatus::Error, StatusBasis::ExitCode),
        (_, Some(Ok(s))) => (s, StatusBasis::StatusWord),
        (_, Some(Err(()))) => (ToolStatus::Unknown, StatusBasis::UnmappedWord),
        (Some(Ok(s)), None) => (s, StatusBasis::ExitCode),
        (Some(Err(())), None) => (ToolStatus::Unknown, StatusBasis::UnmappedWord),
        (None, None) => (ToolStatus::Unknown, StatusBasis::NoStatus),
    }
}

/// Folds a later result for the same call into the earlier one. A harness may write one
/// outcome on several records (a tool's output item and a later end event): the latest
/// retained status and exit code win, since end events come last; the first retained output,
/// patch and subagent id are kept.
fn merge_result(earlier: &mut RawResult, later: RawResult) {
    let retained = |w: &Option<Word>| w.as_ref().is_some_and(|w| w.raw.is_some());
    if retained(&later.status) || earlier.status.is_none() {
        earlier.status = later.status;
    }
    if retained(&later.exit_code) || earlier.exit_code.is_none() {
        earlier.exit_code = later.exit_code;
    }
    if earlier.output.as_deref().is_none_or(str::is_empty) && later.output.is_some() {
        earlier.output = later.output;
    }
    if earlier.patch.is_none() {
        earlier.patch = later.patch;
    }
    if earlier.agent_id.is_none() {
        earlier.agent_id = later.agent_id;
    }
    if earlier.name.is_none() {
        earlier.name = later.name;
    }
    if earlier.kind.is_none() {
        earlier.kind = later.kind;
    }
    if earlier.command.is_none() {
        earlier.command = later.command;
    }
}

/// Whether a call written with the id of an earlier one is another call: it names another
/// tool, or the earlier one was already answered and this one asks for something else. A
/// harness that writes one call on several records (started, then completed) repeats its
/// name and arguments, so an adapter gives one call the same name on each of its records.
fn is_another_call(earlier: &RawCall, later: &RawCall, answered: bool) -> bool {
    let names_differ =
        !earlier.name.is_empty() && !later.name.is_empty() && earlier.name != later.name;
    let asks_otherwise =
        !earlier.input.is_null() && !later.input.is_null() && earlier.input != later.input;
    names_differ || (answered && asks_otherwise)
}

/// The ids calls are known by in one stream. A call with no id, or with the id of an earlier,
/// different call, gets an id of its own (`<line>:<n>` with no id, `<id>~<n>` for the n-th
/// call of a reused id), so it is kept with its own result and status; results name the
/// latest call of their id, and a result with no id is the one written with an id-less call
/// on the same record.
#[derive(Default)]
struct CallIds {
    /// The vendor id → the id of the latest call written with it.
    latest: HashMap<String, String>,
    /// How many calls were written with each vendor id.
    uses: HashMap<String, usize>,
    /// The last call with no id: its line, the id it was given and its number on the line.
    idless: Option<(usize, String, usize)>,
    /// Calls with no id given one: (count, first line).
    missing: (usize, usize),
    /// Calls whose id an earlier, different call had: (count, first line).
    reused: (usize, usize),
    /// Results with no id and no id-less call on their record: (count, first line).
    unpaired: (usize, usize),
}

impl CallIds {
    /// The id the latest call written with `vendor` is known by.
    fn current<'a>(&'a self, vendor: &'a str) -> Option<&'a str> {
        if vendor.is_empty() {
            return None;
        }
        Some(self.latest.get(vendor).map_or(vendor, String::as_str))
    }

    /// The id a new call is known by; `taken` says an earlier call holds `vendor`.
    fn call(&mut self, vendor: &str, line: usize, taken: bool) -> String {
        let count = |slot: &mut (usize, usize)| {
            if slot.0 == 0 {
                slot.1 = line;
            }
            slot.0 += 1;
        };
        if vendor.is_empty() {
            count(&mut self.missing);
            let n = match &self.idless {
                Some((l, _, n)) if *l == line => n + 1,
                _ => 1,
            };
            let id = format!("{line}:{n}");
            self.idless = Some((line, id.clone(), n));
            return id;
        }
        let uses = self.uses.entry(vendor.to_owned()).or_insert(0);
        *uses += 1;
        if !taken {
            return vendor.to_owned();
        }
        count(&mut self.reused);
        let id = format!("{vendor}~{uses}");
        self.latest.insert(vendor.to_owned(), id.clone());
        id
    }

    /// The id of the call a result belongs to; `None` for a result that names none.
    fn result(&mut self, vendor: &str, line: usize) -> Option<String> {
        if !vendor.is_empty() {
            return self.current(vendor).map(str::to_owned);
        }
        match &self.idless {
            Some((l, id, _)) if *l == line => Some(id.clone()),
            _ => {
                if self.unpaired.0 == 0 {
                    self.unpaired.1 = line;
                }
                self.unpaired.0 += 1;
                None
            }
        }
    }

    fn warn(&self, source: &str, warnings: &mut Vec<Warning>) {
        let (n, line) = self.missing;
        if n > 0 {
            warnings.push(Warning::at_line(
                source,
                line,
                format!(
                    "{n} tool call(s) carry no call id; each is kept under an id made from its \
                     line (`<line>:<n>`)"
                ),
            ));
        }
        let (n, line) = self.reused;
        if n > 0 {
            warnings.push(Warning::at_line(
                source,
                line,
                format!(
                    "{n} tool call(s) reuse the id of an earlier, different call; each is kept \
                     with its own result under the id with `~<n>` added"
                ),
            ));
        }
        let (n, line) = self.unpaired;
        if n > 0 {
            warnings.push(Warning::at_line(
                source,
                line,
                format!("{n} tool result(s) name no call and were skipped"),
            ));
        }
    }
}

/// Builds canonical sessions for one adapter, collecting words it could not translate.
pub(crate) struct Normalizer<'a> {
    spec: &'a AdapterSpec,
    unmapped: BTreeSet<Unmapped>,
}

impl<'a> Normalizer<'a> {
    pub(crate) fn new(spec: &'a AdapterSpec) -> Self {
        Self {
            spec,
            unmapped: BTreeSet::new(),
        }
    }

    /// Warnings for untranslated words: one per adapter, table and word.
    pub(crate) fn finish(self, source: &str) -> Vec<Warning> {
        self.unmapped
            .into_iter()
            .map(|u| {
                Warning::whole(
                    source,
                    format!(
                        "adapter {}: table `{}` has no entry for `{}`; treated as unknown",
                        self.spec.name, u.table, u.word
                    ),
                )
            })
            .collect()
    }

    /// Turns raw events into a canonical session, pairing results with calls by id.
    /// `scope` says whose run this stream records (a subagent file's is the subagent's).
    pub(crate) fn session(
        &mut self,
        raw: Raw,
        source: &str,
        scope: FailureScope,
        warnings: &mut Vec<Warning>,
    ) -> Session {
        let mut session = Session {
            harness: self.spec.name.clone(),
            source: source.to_owned(),
            facts: raw.facts,
            events: Vec::new(),
            subagents: Vec::new(),
        };
        session.events = self.events(raw.events, source, scope, warnings);
        for (agent_id, events) in raw.sidechains {
            let sub = Session {
                harness: self.spec.name.clone(),
                source: source.to_owned(),
                facts: Default::default(),
                events: self.events(events, source, FailureScope::Subagent, warnings),
                subagents: Vec::new(),
            };
            session.subagents.push(crate::events::Subagent {
                agent_id,
                session: sub,
            });
        }
        session
    }

    fn events(
        &mut self,
        raw: Vec<RawEvent>,
        source: &str,
        scope: FailureScope,
        warnings: &mut Vec<Warning>,
    ) -> Vec<Event> {
        // Pass 1: keep order, remember where each call sits, collect results by call id. Ids
        // are a run's own: a stream that marks where each run starts (one log of several
        // `exec` runs) numbers its calls afresh in each, so a call is known by run and id; a
        // result names a call of its own run, else the latest earlier run's call of that id
        // (a background task launched in one run and settled in a later one).
        enum Slot {
            Done(Event),
            Call(Box<RawCall>, Option<String>, usize),
            Orphan(String, usize),
        }
        // One slot per event at most: sized once, so a long log is not copied as it grows.
        let mut slots: Vec<Slot> = Vec::with_capacity(raw.len());
        let mut call_at: TextMap<(usize, String), usize> = TextMap::default();
        let mut results: TextMap<(usize, String), (Box<RawResult>, Option<String>)> =
            TextMap::default();
        // The call each subagent was started by (its result's `agent_id`), for results that
        // name the subagent rather than the call.
        let mut started_by: HashMap<String, String> = HashMap::new();
        let mut orphan_lines = Vec::new();
        let mut ids = CallIds::default();
        let mut run = 0;
        // The events are taken a few at a time, the room of those taken given back as the
        // slots fill (the whole list beside its slots was two million one-line records' peak).
        for ev in crate::memory::Taking::new(raw)
            .batches(TAKEN_AT_ONCE)
            .flatten()
        {
            let ts = ev.timestamp;
            let kind = match ev.body {
                RawBody::Prompt(text) => EventKind::Prompt { text },
                RawBody::FallbackPrompt(fallback) => EventKind::Prompt { text: fallback.0 },
                RawBody::UserMessage(text) => EventKind::UserMessage { text },
                RawBody::Notice(text) => EventKind::Notice { text },
                RawBody::TurnStart => {
                    run += 1;
                    EventKind::TurnStart
                }
                RawBody::TurnEnd => EventKind::TurnEnd,
                RawBody::RunStart => EventKind::RunStart,
                RawBody::Assistant(text) => EventKind::Assistant { text },
                RawBody::Thinking(text) => EventKind::Thinking { text },
                RawBody::Interrupt => EventKind::Interrupt,
                RawBody::Compaction(summary) => EventKind::Compaction { summary },
                RawBody::Failure(failure) => {
                    EventKind::Failure(Box::new(self.failure(*failure, scope)))
                }
                RawBody::ToolCall(mut call) => {
                    let earlier = ids
                        .current(&call.call_id)
                        .and_then(|id| call_at.get(&(run, id.to_owned())))
                        .and_then(|&at| match slots.get(at) {
                            Some(Slot::Call(c, _, _)) => Some(c),
                            _ => None,
                        });
                    if let Some(earlier) = earlier {
                        let answered = results.contains_key(&(run, earlier.call_id.clone()));
                        if !is_another_call(earlier, &call, answered) {
                            continue; // the same call written twice is counted once
                        }
                    }
                    let taken = call_at.contains_key(&(run, call.call_id.clone()));
                    call.call_id = ids.call(&call.call_id, ev.line, taken);
                    call_at.insert((run, call.call_id.clone()), slots.len());
                    slots.push(Slot::Call(call, ts, run));
                    continue;
                }
                RawBody::ToolResult(mut result) => {
                    let id = match result.of_agent.as_ref() {
                        // A late outcome that names the subagent: the call that started it,
                        // or nothing to settle when the log holds no such call.
                        Some(agent) if result.call_id.is_empty() => match started_by.get(agent) {
                            Some(id) => id.clone(),
                            None => continue,
                        },
                        _ => match ids.result(&result.call_id, ev.line) {
                            Some(id) => id,
                            None => continue,
                        },
                    };
                    if let Some(agent) = &result.agent_id {
                        started_by
                            .entry(agent.clone())
                            .or_insert_with(|| id.clone());
                    }
                    result.call_id = id.clone();
                    let of_run = (0..=run)
                        .rev()
                        .find(|r| {
                            let key = (*r, id.clone());
                            call_at.contains_key(&key) || results.contains_key(&key)
                        })
                        .unwrap_or(run);
                    let key = (of_run, id);
                    if let Some((earlier, _)) = results.get_mut(&key) {
                        merge_result(earlier, *result);
                        continue;
                    }
                    if !call_at.contains_key(&key) {
                        orphan_lines.push(ev.line);
                        slots.push(Slot::Orphan(key.1.clone(), run));
                    }
                    results.insert(key, (result, ts));
                    continue;
                }
            };
            // One interrupt, one compaction or one failure written on two records back to
            // back (the harness's marker and its summary; the user's stop and the run's end;
            // the model request's error and the run's result) is one. A failure keeps the
            // names its first record gives, and takes the numbers it lacks from the second.
            if let Some(Slot::Done(last)) = slots.last_mut() {
                match (&mut last.kind, kind) {
                    (EventKind::Interrupt, EventKind::Interrupt) => continue,
                    (EventKind::Failure(kept), EventKind::Failure(f))
                        if kept.scope == f.scope && kept.call_id == f.call_id =>
                    {
                        if kept.category == UNKNOWN {
                            kept.stage = f.stage;
                            kept.category = f.category;
                        }
                        kept.http_status = kept.http_status.or(f.http_status);
                        kept.exit_code = kept.exit_code.or(f.exit_code);
                        kept.signal = kept.signal.or(f.signal);
                        continue;
                    }
                    (
                        EventKind::Compaction { summary: kept },
                        EventKind::Compaction { summary },
                    ) => {
                        if kept.is_none() {
                            *kept = summary;
                        }
                        continue;
                    }
                    (_, kind) => slots.push(Slot::Done(Event {
                        timestamp: ts,
                        kind,
                    })),
                }
                continue;
            }
            slots.push(Slot::Done(Event {
                timestamp: ts,
                kind,
            }));
        }
        ids.warn(source, warnings);
        // Pass 2: a result that came before its call belongs to the call, not to an orphan.
        // The slots are taken as the events are, their room given back the same way.
        let mut out = Vec::with_capacity(slots.len());
        for slot in crate::memory::Taking::new(slots)
            .batches(TAKEN_AT_ONCE)
            .flatten()
        {
            match slot {
                Slot::Done(e) => out.push(e),
                Slot::Call(call, ts, run) => {
                    let result = results.remove(&(run, call.call_id.clone()));
                    out.push(self.tool_call(*call, ts, result.map(|(r, ts)| (*r, ts))));
                }
                Slot::Orphan(id, run) => {
                    let key = (run, id);
                    if call_at.contains_key(&key) {
                        continue;
                    }
                    let Some((result, ts)) = results.remove(&key) else {
                        continue;
                    };
                    // The result may say what the call was (an end event that names its tool).
                    let call = RawCall {
                        call_id: result.call_id.clone(),
                        name: result.name.clone().unwrap_or_default(),
                        kind: result.kind.clone(),
                        input: Json::Null,
                        command: result.command.clone(),
                        paths: Vec::new(),
                        label: None,
                        todos: Vec::new(),
                        gutter: None,
                    };
                    out.push(self.tool_call(call, ts.clone(), Some((*result, ts))));
                }
            }
        }
        if let Some(first) = orphan_lines.first() {
            warnings.push(Warning::at_line(
                source,
                *first,
                format!(
                    "{} tool result(s) name a call that is not in the log; shown as calls with no \
                     retained arguments",
                    orphan_lines.len()
                ),
            ));
        }
        out
    }

    /// The single site where a canonical tool-call event is built.
    fn tool_call(
        &mut self,
        call: RawCall,
        ts: Option<String>,
        result: Option<(RawResult, Option<String>)>,
    ) -> Event {
        let (status, basis) = tool_status(
            self.spec,
            result.as_ref().map(|(r, _)| r),
            &mut self.unmapped,
        );
        let kind = self.tool_kind(call.kind.as_ref());
        let todos = call
            .todos
            .into_iter()
            .map(|t| Todo {
                text: t.text,
                state: t
                    .state
                    .as_ref()
                    .and_then(|w| self.canonical(w))
                    .unwrap_or(TodoState::Unknown),
            })
            .collect();
        let gutter = call
            .gutter
            .as_ref()
            .and_then(|w| self.canonical(w))
            .unwrap_or_default();
        let input_size = crate::events::json_len(&call.input);
        let agent_id = result.as_ref().and_then(|(r, _)| r.agent_id.clone());
        let result = result.map(|(r, rts)| {
            let output = r.output.unwrap_or_default();
            ToolResult {
                size: output.len(),
                exit_code: r
                    .exit_code
                    .and_then(|w| w.raw)
                    .and_then(|v| scalar_string(&v).trim().parse().ok()),
                patch: r.patch,
                output,
                timestamp: rts,
            }
        });
        Event {
            timestamp: ts,
            kind: EventKind::ToolCall(Box::new(ToolCall {
                call_id: call.call_id,
                name: call.name,
                kind,
                input: call.input,
                input_size,
                command: call.command,
                paths: call.paths,
                label: call.label,
                todos,
                gutter,
                result,
                status,
                basis,
                agent_id,
            })),
        }
    }

    /// The single site where a canonical failure is built. Stage and category are table
    /// outputs (checked against the adapter's allowlists at load) or `unknown`; numbers are
    /// kept only when they are integers; nothing else of the record is read.
    pub(crate) fn failure(&mut self, raw: RawFailure, scope: FailureScope) -> Failure {
        let scope = raw
            .scope
            .as_ref()
            .and_then(|w| self.failure_word(w))
            .and_then(|w| w.parse().ok())
            .unwrap_or(match (&raw.call_id, scope) {
                (Some(_), _) => FailureScope::Subagent,
                (None, s) => s,
            });
        let name = |this: &mut Self, w: &Option<Word>| {
            w.as_ref()
                .and_then(|w| this.failure_word(w))
                .unwrap_or_else(|| UNKNOWN.to_owned())
        };
        Failure {
            scope,
            product: self.spec.label.clone(),
            stage: name(self, &raw.stage),
            category: name(self, &raw.category),
            http_status: integer(raw.http_status.as_ref())
                .filter(|s| (100..=599).contains(s))
                .and_then(|s| u16::try_from(s).ok()),
            exit_code: integer(raw.exit_code.as_ref()),
            signal: integer(raw.signal.as_ref()),
            call_id: raw.call_id,
        }
    }

    /// A failure field's canonical name: a constant (checked at load) or a table's output.
    /// A word the table does not know is reported without its text unless it is a short,
    /// plain token, so error text routed to a table by mistake never reaches a warning.
    fn failure_word(&mut self, word: &Word) -> Option<String> {
        let Some(name) = &word.table else {
            return word.raw.as_ref().and_then(Json::as_str).map(str::to_owned);
        };
        let table = self.spec.tables.get(name)?;
        match translate(table, word.raw.as_ref()) {
            Translation::Mapped(w) => Some(w),
            Translation::Unmapped(w) => {
                let plain = !w.is_empty()
                    && w.len() <= 64
                    && w.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
                self.unmapped.insert(Unmapped {
                    table: name.clone(),
                    word: if plain {
                        w
                    } else {
                        "(a value that is not a plain word)".to_owned()
                    },
                });
                None
            }
            Translation::Absent => None,
        }
    }

    /// A canonical value read through a table (or a constant checked at load). A word the
    /// table does not know is reported and gives `None`, so the caller's weakest value stands.
    fn canonical<T: std::str::FromStr>(&mut self, word: &Word) -> Option<T> {
        let Some(name) = &word.table else {
            return word.raw.as_ref().and_then(Json::as_str)?.parse().ok();
        };
        let table = self.spec.tables.get(name)?;
        match translate(table, word.raw.as_ref()) {
            Translation::Mapped(w) => w.parse().ok(),
            Translation::Unmapped(w) => {
                self.unmapped.insert(Unmapped {
                    table: name.clone(),
                    word: w,
                });
                None
            }
            Translation::Absent => None,
        }
    }

    fn tool_kind(&mut self, word: Option<&Word>) -> ToolKind {
        let Some(word) = word else {
            return ToolKind::Other;
        };
        let Some(table) = word.table.as_ref().and_then(|t| self.spec.tables.get(t)) else {
            return word
                .raw
                .as_ref()
                .and_then(Json::as_str)
                .and_then(|w| w.parse().ok())
                .unwrap_or(ToolKind::Other);
        };
        match translate(table, word.raw.as_ref()) {
            Translation::Mapped(w) => w.parse().unwrap_or(ToolKind::Other),
            Translation::Unmapped(_) | Translation::Absent => ToolKind::Other,
        }
    }
}

/// An integer: a JSON integer, or a string holding only one (as a regex capture gives).
fn integer(v: Option<&Json>) -> Option<i64> {
    match v? {
        Json::Number(n) => n.as_i64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> AdapterSpec {
        AdapterSpec::parse(
            "t.yaml",
            r#"
name: t
label: T
input: { format: jsonl }
event_map:
  - when: [{ at: /t, eq: r }]
    emit:
      kind: tool_result
      call_id: /id
      status: { at: /s, map: status_map }
      exit_code: { at: /x, map: exit_code_map }
status_map: { values: { completed: ok, failed: error, cancelled: error, running: unknown } }
exit_code_map: { values: { "0": ok }, default: error }
"#,
        )
        .expect("test adapter parses")
    }

    fn result(status: Option<Json>, exit: Option<Json>) -> RawResult {
        RawResult {
            call_id: "c".into(),
            output: None,
            status: Some(Word {
                raw: status,
                table: Some("status_map".into()),
            }),
            exit_code: Some(Word {
                raw: exit,
                table: Some("exit_code_map".into()),
            }),
            patch: None,
            agent_id: None,
            of_agent: None,
            name: None,
            kind: None,
            command: None,
        }
    }

    fn status(r: Option<RawResult>) -> (ToolStatus, StatusBasis, usize) {
        let spec = spec();
        let mut unmapped = BTreeSet::new();
        let (s, b) = tool_status(&spec, r.as_ref(), &mut unmapped);
        (s, b, unmapped.len())
    }

    #[test]
    fn no_result_is_unknown() {
        assert_eq!(
            status(None),
            (ToolStatus::Unknown, StatusBasis::NoResult, 0)
        );
    }

    #[test]
    fn status_words_go_through_the_table() {
        let r = |w: &str| status(Some(result(Some(json!(w)), None)));
        assert_eq!(r("completed").0, ToolStatus::Ok);
        assert_eq!(r("failed").0, ToolStatus::Error);
        assert_eq!(r("cancelled").0, ToolStatus::Error);
        assert_eq!(r("running").0, ToolStatus::Unknown);
    }

    #[test]
    fn an_unknown_word_is_unknown_and_reported() {
        assert_eq!(
            status(Some(result(Some(json!("splendid")), None))),
            (ToolStatus::Unknown, StatusBasis::UnmappedWord, 1)
        );
    }

    #[test]
    fn a_non_zero_exit_code_overrides_a_success_word() {
        assert_eq!(
            status(Some(result(Some(json!("completed")), Some(json!(2))))),
            (ToolStatus::Error, StatusBasis::ExitCode, 0)
        );
        assert_eq!(
            status(Some(result(Some(json!("completed")), Some(json!(0))))).0,
            ToolStatus::Ok
        );
    }

    #[test]
    fn a_result_with_no_status_at_all_is_unknown() {
        assert_eq!(
            status(Some(result(None, None))),
            (ToolStatus::Unknown, StatusBasis::NoStatus, 0)
        );
    }
}

#[cfg(test)]
mod stream_tests {
    use super::*;
    use crate::adapters::interpret::Interpreter;
    use serde_json::json;

    fn spec() -> AdapterSpec {
        AdapterSpec::parse(
            "t.yaml",
            r#"
name: t
label: T
input: { format: jsonl }
failures: { stages: [turn], categories: [rate_limit, api_error] }
event_map:
  - when: [{ at: /t, eq: call }]
    emit: { kind: tool_call, call_id: /id, name: /name, input: /in }
  - when: [{ at: /t, eq: pair }]
    emit:
      - { kind: tool_call, call_id: /id, name: /name }
      - { kind: tool_result, call_id: /id, status: { at: /s, map: status_map } }
  - when: [{ at: /t, eq: r }]
    emit: { kind: tool_result, call_id: /id, status: { at: /s, map: status_map } }
  - when: [{ at: /t, eq: stop }]
    emit: { kind: interrupt }
  - when: [{ at: /t, eq: compact }]
    emit: { kind: compaction, summary: /summary }
  - when: [{ at: /t, eq: fail }]
    emit: { kind: failure, stage: { const: turn }, category: { at: /c, map: category_map } }
  - when: [{ at: /t, eq: say }]
    emit: { kind: assistant, text: /text }
status_map: { values: { ok: ok, bad: error } }
category_map: { values: { rate: rate_limit, api: api_error } }
"#,
        )
        .expect("test adapter parses")
    }

    fn read(records: &[Json]) -> (Vec<Event>, Vec<Warning>) {
        let spec = spec();
        let mut it = Interpreter::new(&spec);
        for (i, r) in records.iter().enumerate() {
            it.record(i + 1, r);
        }
        let mut warnings = Vec::new();
        let mut n = Normalizer::new(&spec);
        let session = n.session(it.finish(), "t", FailureScope::Session, &mut warnings);
        (session.events, warnings)
    }

    fn calls(events: &[Event]) -> Vec<(String, String, ToolStatus)> {
        events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ToolCall(c) => Some((c.call_id.clone(), c.name.clone(), c.status)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_reused_id_names_a_new_call_and_later_results_are_its() {
        let (events, warnings) = read(&[
            json!({"t": "call", "id": "c", "name": "shell", "in": {"cmd": "ls"}}),
            json!({"t": "r", "id": "c", "s": "ok"}),
            json!({"t": "call", "id": "c", "name": "patch", "in": {"diff": "x"}}),
            json!({"t": "r", "id": "c", "s": "bad"}),
            // The same call written again (started, then completed) stays one call.
            json!({"t": "call", "id": "d", "name": "shell", "in": {"cmd": "pwd"}}),
            json!({"t": "call", "id": "d", "name": "shell", "in": {"cmd": "pwd"}}),
            json!({"t": "r", "id": "d", "s": "ok"}),
        ]);
        assert_eq!(
            calls(&events),
            [
                ("c".to_owned(), "shell".to_owned(), ToolStatus::Ok),
                ("c~2".to_owned(), "patch".to_owned(), ToolStatus::Error),
                ("d".to_owned(), "shell".to_owned(), ToolStatus::Ok),
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].message.contains("reuse the id"));
    }

    #[test]
    fn calls_without_ids_pair_with_the_result_of_their_own_record() {
        let (events, warnings) = read(&[
            json!({"t": "pair", "name": "read", "s": "ok"}),
            json!({"t": "pair", "name": "shell", "s": "bad"}),
            json!({"t": "r", "s": "ok"}),
        ]);
        assert_eq!(
            calls(&events),
            [
                ("1:1".to_owned(), "read".to_owned(), ToolStatus::Ok),
                ("2:1".to_owned(), "shell".to_owned(), ToolStatus::Error),
            ]
        );
        let messages: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
        assert!(
            messages
                .iter()
                .any(|m| m.contains("2 tool call(s) carry no call id"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.contains("1 tool result(s) name no call"))
        );
    }

    #[test]
    fn one_stop_compaction_or_failure_written_twice_back_to_back_is_one() {
        let (events, _) = read(&[
            json!({"t": "stop"}),
            json!({"t": "stop"}),
            json!({"t": "compact"}),
            json!({"t": "compact", "summary": "what happened"}),
            json!({"t": "fail", "c": "rate"}),
            json!({"t": "fail", "c": "api"}),
            json!({"t": "say", "text": "later"}),
            json!({"t": "stop"}),
        ]);
        let kinds: Vec<String> = events
            .iter()
            .map(|e| match &e.kind {
                EventKind::Interrupt => "interrupt".to_owned(),
                EventKind::Compaction { summary } => format!("compaction {summary:?}"),
                EventKind::Failure(f) => format!("failure {}", f.category),
                EventKind::Assistant { .. } => "assistant".to_owned(),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "interrupt",
                "compaction Some(\"what happened\")",
                "failure rate_limit",
                "assistant",
                "interrupt"
            ]
        );
    }
}

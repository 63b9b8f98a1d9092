//! The adapter interpreter: applies an adapter's rules to parsed records, in source order.
//!
//! Output is [`Raw`]: events that still carry vendor words (status, exit code, tool kind) with
//! the table that translates each. [`super::normalize`] turns them into canonical events.

use rayon::prelude::*;
use serde_json::Value as Json;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};

use super::spec::{
    Action, AdapterSpec, AssistantEmit, Condition, Emit, JsonType, PatchSpec, Pointer, Rule,
    TodosSpec, ValueSpec,
};
use crate::events::{SessionFacts, TokenUsage};

/// A map keyed by a record's text (ids, keys, whole texts), hashed many times a record: a
/// fast hasher, seeded per run. Never iterated into output.
pub(crate) type TextMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A set of a record's texts, as [`TextMap`].
pub(crate) type TextSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;

/// A vendor word and the table that translates it; `raw` is `None` when the field was absent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Word {
    pub(crate) raw: Option<Json>,
    pub(crate) table: Option<String>,
}

/// One event as the adapter emitted it, before normalization.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawEvent {
    pub(crate) line: usize,
    pub(crate) timestamp: Option<String>,
    pub(crate) body: RawBody,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawBody {
    Prompt(String),
    UserMessage(String),
    Notice(String),
    /// A prompt that stands only when its stream holds no `Prompt`; else skipped for the reason
    /// (boxed, as the rare and large kinds are, so the common event stays small).
    FallbackPrompt(Box<(String, String)>),
    Assistant(String),
    Thinking(Option<String>),
    Interrupt,
    TurnStart,
    TurnEnd,
    RunStart,
    Compaction(Option<String>),
    ToolCall(Box<RawCall>),
    ToolResult(Box<RawResult>),
    Failure(Box<RawFailure>),
}

/// A failure as the adapter emitted it: words still to translate and values still to check.
/// It holds no text of the record beyond what its fields point at.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawFailure {
    pub(crate) scope: Option<Word>,
    pub(crate) stage: Option<Word>,
    pub(crate) category: Option<Word>,
    pub(crate) http_status: Option<Json>,
    pub(crate) exit_code: Option<Json>,
    pub(crate) signal: Option<Json>,
    pub(crate) call_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawCall {
    pub(crate) call_id: String,
    pub(crate) name: String,
    pub(crate) kind: Option<Word>,
    pub(crate) input: Json,
    pub(crate) command: Option<String>,
    pub(crate) paths: Vec<String>,
    pub(crate) label: Option<String>,
    pub(crate) todos: Vec<RawTodo>,
    pub(crate) gutter: Option<Word>,
}

/// One item of a call's todo list: its text and its state word, still to translate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawTodo {
    pub(crate) text: String,
    pub(crate) state: Option<Word>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawResult {
    pub(crate) call_id: String,
    pub(crate) output: Option<String>,
    pub(crate) status: Option<Word>,
    pub(crate) exit_code: Option<Word>,
    pub(crate) patch: Option<String>,
    pub(crate) agent_id: Option<String>,
    /// The subagent whose call this result belongs to, when the record names no call.
    pub(crate) of_agent: Option<String>,
    /// What names the call when the log holds no call with this id.
    pub(crate) name: Option<String>,
    pub(crate) kind: Option<Word>,
    pub(crate) command: Option<String>,
}

/// Everything read from one stream of records.
#[derive(Debug, Default)]
pub(crate) struct Raw {
    pub(crate) events: Vec<RawEvent>,
    /// Inline subagent records, by agent id, in first-seen order of agents.
    pub(crate) sidechains: Vec<(String, Vec<RawEvent>)>,
    pub(crate) facts: SessionFacts,
    /// Records skipped on purpose, by the adapter's reason.
    pub(crate) skipped: BTreeMap<String, usize>,
    /// Records no rule matched, by type name: (count, first line).
    pub(crate) unmatched: BTreeMap<String, (usize, usize)>,
    /// Records skipped because their dedup key was seen before.
    pub(crate) duplicates: usize,
}

/// Applies one adapter to records fed in line order. The work on one record that needs no
/// state is a [`Draft`], made on any core; the interpreter applies drafts in line order.
pub(crate) struct Interpreter<'a> {
    spec: &'a AdapterSpec,
    raw: Raw,
    seen_records: TextSet<String>,
    seen_text: TextSet<SeenText>,
    /// Where the event of each revised key sits in the main stream.
    revised: TextMap<(TextKind, String), usize>,
    /// The usage of each message key as last recorded: a streamed message repeats its usage on
    /// every record, growing, so the last one holds the message's totals.
    seen_usage: TextMap<String, (u64, u64)>,
    tokens: TokenUsage,
    has_tokens: bool,
    known: Arc<Known>,
}

/// What one record yields before the interpreter's running state is applied to it: whether
/// its key was seen before, which facts are first seen, whether a keyed text was kept before,
/// whether streamed text continues the last message. Made without that state, so on any core.
pub(crate) struct Draft<'s> {
    line: usize,
    dedup: Option<String>,
    /// The record's session facts other than its time; `None` when it has none (most
    /// records), so a draft kept for replay stays small.
    facts: Option<Box<FactDraft>>,
    timestamp: Option<String>,
    sidechain: Option<String>,
    ops: Ops<'s>,
}

/// The session facts one record holds.
struct FactDraft {
    id: Option<String>,
    parent: Option<String>,
    branch: Option<String>,
    version: Option<String>,
    model: Option<String>,
    cwd: Option<String>,
    timestamp: Option<String>,
    /// The usage key and the input and output token sums.
    usage: Option<(String, Option<u64>, Option<u64>)>,
}

/// The session facts an interpreter holds already that no later record changes (the first id,
/// branch, version and model, and every working folder seen), shared with the cores that
/// draft later records: a draft leaves them out instead of copying them out of every record.
/// A draft made before a fact is known reads it as before, so what is known when changes
/// only the work, never the facts.
#[derive(Debug, Default)]
pub(crate) struct Known {
    /// Whether the id, the branch, the version and the model are set, in that order.
    set: [AtomicBool; 4],
    cwds: RwLock<Vec<String>>,
}

/// The facts [`Known::set`] flags, by place.
const ID: usize = 0;
const BRANCH: usize = 1;
const VERSION: usize = 2;
const MODEL: usize = 3;

impl Known {
    fn has(&self, fact: usize) -> bool {
        self.set
            .get(fact)
            .is_some_and(|f| f.load(Ordering::Relaxed))
    }

    fn has_cwd(&self, cwd: &str) -> bool {
        self.cwds
            .read()
            .is_ok_and(|cwds| cwds.iter().any(|c| c == cwd))
    }
}

/// The kind of a keyed text: an assistant message's and a thinking block's keys are apart, so
/// one of each may share a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TextKind {
    Assistant,
    Thinking,
}

/// A keyed text kept: its kind, its key and its text, hashed whole. (A hash of a text's ends
/// alone would let a log of many texts that share their key, length and ends, differing
/// only inside, make every lookup compare against all of them.)
#[derive(PartialEq, Eq, Hash)]
struct SeenText {
    kind: TextKind,
    key: String,
    text: String,
}

/// An event of a record, kept unless `once` (a text kind and key) was kept before, or
/// `continues` appends it to the last message; with `revise`, an event of the same key kept
/// before takes its text instead.
struct DraftEvent {
    body: RawBody,
    once: Option<(TextKind, String)>,
    continues: bool,
    revise: bool,
}

/// What the rules make of one record: its events in order, and what they skip or do not
/// know (counted, so their order does not matter).
#[derive(Default)]
struct Ops<'s> {
    events: Vec<DraftEvent>,
    skipped: Vec<&'s str>,
    unmatched: Vec<String>,
}

impl<'s> Draft<'s> {
    /// The draft of one record (its 1-based line number is kept for messages).
    pub(crate) fn of(spec: &'s AdapterSpec, line: usize, record: &Json) -> Self {
        Self::knowing(spec, line, record, None)
    }

    /// [`Draft::of`], leaving out the session facts `known` holds already.
    pub(crate) fn knowing(
        spec: &'s AdapterSpec,
        line: usize,
        record: &Json,
        known: Option<&Known>,
    ) -> Self {
        parsing_once(|| Self::read(spec, line, record, known))
    }

    fn read(spec: &'s AdapterSpec, line: usize, record: &Json, known: Option<&Known>) -> Self {
        let dedup = spec
            .records
            .dedup
            .as_ref()
            .and_then(|k| eval_str(k, record, record));
        let mut facts = FactDraft::of(spec, record, known);
        let timestamp = facts.timestamp.take();
        let facts = (!facts.is_empty()).then(|| Box::new(facts));
        let sidechain = spec
            .records
            .sidechain
            .as_ref()
            .filter(|s| all(&s.when, record, record))
            .map(|s| eval_str(&s.agent, record, record).unwrap_or_else(|| "inline".to_owned()));
        let mut ops = Ops::default();
        if !rules(spec, &spec.event_map, record, record, &mut ops) {
            if is_metadata(spec, record) {
                ops.skipped.push(METADATA_RECORD);
            } else {
                ops.unmatched.push(type_name(spec, record));
            }
        }
        // A replayed log keeps its drafts to the end: no room for events that never come.
        ops.events.shrink_to_fit();
        Self {
            line,
            dedup,
            facts,
            timestamp,
            sidechain,
            ops,
        }
    }
}

impl Draft<'_> {
    /// The draft with its record numbered `line` (a joined record's place once regrouped).
    pub(crate) fn numbered(mut self, line: usize) -> Self {
        self.line = line;
        self
    }
}

impl FactDraft {
    fn is_empty(&self) -> bool {
        let Self {
            id,
            parent,
            branch,
            version,
            model,
            cwd,
            timestamp,
            usage,
        } = self;
        id.is_none()
            && parent.is_none()
            && branch.is_none()
            && version.is_none()
            && model.is_none()
            && cwd.is_none()
            && timestamp.is_none()
            && usage.is_none()
    }

    /// The facts `record` holds, without those `known` holds already.
    fn of(spec: &AdapterSpec, record: &Json, known: Option<&Known>) -> Self {
        let s = &spec.session;
        let text = |v: &Option<ValueSpec>| {
            v.as_ref()
                .and_then(|v| eval_str(v, record, record))
                .filter(|v| !v.is_empty())
        };
        let has = |fact: usize| known.is_some_and(|k| k.has(fact));
        let first = |fact: usize, v: &Option<ValueSpec>| if has(fact) { None } else { text(v) };
        let usage = s.usage.as_ref().and_then(|u| {
            let key = eval_str(&u.key, record, record)?;
            let sum = |specs: &[ValueSpec]| -> Option<u64> {
                let vals: Vec<u64> = specs
                    .iter()
                    .filter_map(|v| eval(v, record, record).and_then(|j| j.as_u64()))
                    .collect();
                (!vals.is_empty()).then(|| vals.iter().sum())
            };
            Some((key, sum(&u.input), sum(&u.output)))
        });
        Self {
            id: first(ID, &s.id),
            // Read only until the id is known (see `Interpreter::facts`).
            parent: first(ID, &s.parent),
            branch: first(BRANCH, &s.branch),
            version: first(VERSION, &s.version),
            model: first(MODEL, &s.model),
            cwd: s
                .cwd
                .as_ref()
                .and_then(|v| eval_text(v, record, record))
                .filter(|c| !c.is_empty() && !known.is_some_and(|k| k.has_cwd(c)))
                .map(Cow::into_owned),
            timestamp: s
                .timestamp
                .as_ref()
                .and_then(|v| eval_str(v, record, record)),
            usage,
        }
    }
}

impl<'a> Interpreter<'a> {
    pub(crate) fn new(spec: &'a AdapterSpec) -> Self {
        Self {
            spec,
            raw: Raw::default(),
            seen_records: TextSet::default(),
            seen_text: TextSet::default(),
            revised: TextMap::default(),
            seen_usage: TextMap::default(),
            tokens: TokenUsage::default(),
            has_tokens: false,
            known: Arc::default(),
        }
    }

    /// The facts this interpreter holds already, for the cores that draft its later records.
    pub(crate) fn known(&self) -> Arc<Known> {
        Arc::clone(&self.known)
    }

    /// Feeds one record (its 1-based line number is kept for messages).
    #[cfg(test)]
    pub(crate) fn record(&mut self, line: usize, record: &Json) {
        self.apply(Draft::of(self.spec, line, record));
    }

    /// Feeds records in line order; their drafts are made on every core.
    pub(crate) fn records(&mut self, records: Vec<(usize, Json)>) {
        let spec = self.spec;
        let drafts: Vec<Draft<'_>> = records
            .into_par_iter()
            .map(|(line, record)| Draft::of(spec, line, &record))
            .collect();
        for draft in drafts {
            self.apply(draft);
        }
    }

    /// Applies one record's draft, in line order.
    pub(crate) fn apply(&mut self, draft: Draft<'_>) {
        if let Some(key) = draft.dedup
            && !self.seen_records.insert(key)
        {
            self.raw.duplicates += 1;
            return;
        }
        if let Some(facts) = draft.facts {
            self.facts(*facts);
        }
        if let Some(ts) = &draft.timestamp {
            self.time(ts);
        }
        for reason in draft.ops.skipped {
            match self.raw.skipped.get_mut(reason) {
                Some(n) => *n += 1,
                None => {
                    self.raw.skipped.insert(reason.to_owned(), 1);
                }
            }
        }
        for name in draft.ops.unmatched {
            let entry = self.raw.unmatched.entry(name).or_insert((0, draft.line));
            entry.0 += 1;
        }
        let mut out: Vec<RawEvent> = Vec::with_capacity(draft.ops.events.len());
        for DraftEvent {
            body,
            once,
            continues,
            revise,
        } in draft.ops.events
        {
            if continues
                && let RawBody::Assistant(text) = &body
                && let Some(RawEvent {
                    body: RawBody::Assistant(previous),
                    ..
                }) = self.raw.events.last_mut()
            {
                previous.push_str(text);
                continue;
            }
            // A run's items are its own: a later run may use the same keys afresh.
            if matches!(body, RawBody::TurnStart) && draft.sidechain.is_none() {
                self.revised.clear();
            }
            if revise
                && draft.sidechain.is_none()
                && let Some(once) = &once
            {
                let at = self.raw.events.len() + out.len();
                match self.revised.get(once) {
                    Some(&i) if i < self.raw.events.len() => {
                        revise_text(&mut self.raw.events[i].body, body);
                        continue;
                    }
                    Some(&i) => {
                        if let Some(e) = out.get_mut(i - self.raw.events.len()) {
                            revise_text(&mut e.body, body);
                        }
                        continue;
                    }
                    None => {
                        self.revised.insert(once.clone(), at);
                    }
                }
            } else if let Some((kind, key)) = once {
                let text = match &body {
                    RawBody::Assistant(text) => text.clone(),
                    RawBody::Thinking(text) => text.clone().unwrap_or_default(),
                    _ => String::new(),
                };
                if !self.seen_text.insert(SeenText { kind, key, text }) {
                    continue;
                }
            }
            out.push(RawEvent {
                line: draft.line,
                timestamp: draft.timestamp.clone(),
                body,
            });
        }
        match draft.sidechain {
            Some(agent) => match self.raw.sidechains.iter_mut().find(|(a, _)| *a == agent) {
                Some((_, events)) => events.extend(out),
                None => self.raw.sidechains.push((agent, out)),
            },
            None => self.raw.events.extend(out),
        }
    }

    /// Counts `n` records skipped for `reason` outside the rules (none when `n` is 0).
    pub(crate) fn skip(&mut self, reason: &str, n: usize) {
        if n > 0 {
            *self.raw.skipped.entry(reason.to_owned()).or_insert(0) += n;
        }
    }

    /// Reads session facts from a value that is not a record (a JSON document's own fields).
    pub(crate) fn facts_only(&mut self, value: &Json) {
        self.facts(FactDraft::of(self.spec, value, None));
    }

    /// Finishes reading and returns what was read.
    pub(crate) fn finish(mut self) -> Raw {
        if self.has_tokens {
            self.raw.facts.tokens = Some(self.tokens);
        }
        let skipped = &mut self.raw.skipped;
        settle_fallback_prompts(&mut self.raw.events, skipped);
        for (_, events) in &mut self.raw.sidechains {
            settle_fallback_prompts(events, skipped);
        }
        self.raw
    }

    /// Widens the session's time span to a record's time.
    fn time(&mut self, ts: &str) {
        let facts = &mut self.raw.facts;
        if facts.started_at.as_deref().is_none_or(|t| ts < t) {
            facts.started_at = Some(ts.to_owned());
        }
        if facts.ended_at.as_deref().is_none_or(|t| ts > t) {
            facts.ended_at = Some(ts.to_owned());
        }
    }

    fn facts(&mut self, seen: FactDraft) {
        let facts = &mut self.raw.facts;
        // The parent is the one the record naming the session's id gives (a forked log copies
        // its parent's first record, and that one's parent, later).
        if facts.id.is_none() && seen.id.is_some() {
            facts.parent = seen.parent;
        }
        for (slot, value) in [
            (&mut facts.id, seen.id),
            (&mut facts.branch, seen.branch),
            (&mut facts.version, seen.version),
            (&mut facts.model, seen.model),
        ] {
            if slot.is_none() {
                *slot = value;
            }
        }
        if let Some(cwd) = seen.cwd {
            if facts.cwd.is_none() {
                facts.cwd = Some(cwd.clone());
            }
            if !facts.cwds.contains(&cwd) {
                if let Ok(mut known) = self.known.cwds.write() {
                    known.push(cwd.clone());
                }
                facts.cwds.push(cwd);
            }
        }
        for (fact, slot) in [
            (ID, &facts.id),
            (BRANCH, &facts.branch),
            (VERSION, &facts.version),
            (MODEL, &facts.model),
        ] {
            if slot.is_some()
                && let Some(flag) = self.known.set.get(fact)
            {
                flag.store(true, Ordering::Relaxed);
            }
        }
        if let Some(ts) = seen.timestamp {
            self.time(&ts);
        }
        if let Some((key, input, output)) = seen.usage
            && (input.is_some() || output.is_some())
        {
            let now = (input.unwrap_or(0), output.unwrap_or(0));
            let (was_in, was_out) = self.seen_usage.insert(key, now).unwrap_or((0, 0));
            self.has_tokens = true;
            self.tokens.input = self
                .tokens
                .input
                .saturating_sub(was_in)
                .saturating_add(now.0);
            self.tokens.output = self
                .tokens
                .output
                .saturating_sub(was_out)
                .saturating_add(now.1);
        }
    }
}

/// The skip reason of a record no rule matched that carries no conversation.
pub(crate) const METADATA_RECORD: &str = "metadata record of a type the adapter does not read";

/// Whether a record no rule matched is metadata: the adapter says where conversation can be
/// (`records.conversation`) and the record holds none of it.
fn is_metadata(spec: &AdapterSpec, record: &Json) -> bool {
    let places = &spec.records.conversation;
    !places.is_empty()
        && places
            .iter()
            .all(|p| resolve(p, record, record).is_none_or(Json::is_null))
}

/// A revised event takes the later text of its key; a later empty text keeps the earlier one.
fn revise_text(earlier: &mut RawBody, later: RawBody) {
    match (earlier, later) {
        (RawBody::Assistant(old), RawBody::Assistant(new)) if !new.is_empty() => *old = new,
        (RawBody::Thinking(old), RawBody::Thinking(new @ Some(_))) => *old = new,
        _ => {}
    }
}

/// Fallback prompts stand only in a stream with no other prompt: there they become prompts;
/// elsewhere they are skipped and counted under their reason.
fn settle_fallback_prompts(events: &mut Vec<RawEvent>, skipped: &mut BTreeMap<String, usize>) {
    let has = |want: fn(&RawBody) -> bool| events.iter().any(|e| want(&e.body));
    if !has(|b| matches!(b, RawBody::FallbackPrompt(_))) {
        return;
    }
    if has(|b| matches!(b, RawBody::Prompt(_))) {
        events.retain(|e| match &e.body {
            RawBody::FallbackPrompt(fallback) => {
                *skipped.entry(fallback.1.clone()).or_insert(0) += 1;
                false
            }
            _ => true,
        });
    } else {
        for e in events.iter_mut() {
            if let RawBody::FallbackPrompt(fallback) = &mut e.body {
                e.body = RawBody::Prompt(std::mem::take(&mut fallback.0));
            }
        }
    }
}

/// The type name of an item no rule matched.
fn type_name(spec: &AdapterSpec, item: &Json) -> String {
    spec.records
        .type_at
        .as_ref()
        .and_then(|p| resolve(p, item, item))
        .map(scalar_string)
        .unwrap_or_else(|| "(no type)".to_owned())
}

/// Applies the first matching rule; returns whether any rule matched.
fn rules<'s>(
    spec: &'s AdapterSpec,
    rules_: &'s [Rule],
    item: &Json,
    record: &Json,
    ops: &mut Ops<'s>,
) -> bool {
    rules_in(spec, rules_, item, record, ops, &mut Resolved::default())
}

/// [`rules`], with what the conditions tested of this item so far.
fn rules_in<'s, 'j>(
    spec: &'s AdapterSpec,
    rules_: &'s [Rule],
    item: &'j Json,
    record: &'j Json,
    ops: &mut Ops<'s>,
    seen: &mut Resolved<'s, 'j>,
) -> bool {
    let Some(rule) = rules_.iter().find(|r| all_in(&r.when, item, record, seen)) else {
        return false;
    };
    match &rule.action {
        Action::Skip(reason) => ops.skipped.push(reason),
        Action::Emit(emit) => ops.events.extend(emit_event(emit, item, record)),
        Action::Steps(steps) => {
            // Each step whose own conditions hold.
            for step in steps {
                rules_in(spec, std::slice::from_ref(step), item, record, ops, seen);
            }
        }
        Action::EmitAll(emits) => {
            for emit in emits {
                ops.events.extend(emit_event(emit, item, record));
            }
        }
        Action::Each { at, rules: each } => {
            // An object is one element: records that hold a single item read like lists.
            let items: &[Json] = match resolve(at, item, record) {
                Some(Json::Array(items)) => items,
                Some(obj @ Json::Object(_)) => std::slice::from_ref(obj),
                _ => &[],
            };
            for element in items {
                if !rules(spec, each, element, record, ops) {
                    ops.unmatched.push(type_name(spec, element));
                }
            }
        }
    }
    true
}

/// The event one emit makes of an item, with what decides whether it is kept.
fn emit_event(emit: &Emit, item: &Json, record: &Json) -> Option<DraftEvent> {
    let s = |v: &ValueSpec| eval_str(v, item, record);
    let word = |v: &Option<ValueSpec>| {
        v.as_ref().map(|v| Word {
            raw: eval(v, item, record),
            table: v.map.clone(),
        })
    };
    let mut once = None;
    let mut continues = false;
    let mut revise = false;
    let body = match emit {
        Emit::Prompt {
            text,
            fallback: None,
        } => RawBody::Prompt(s(text)?),
        Emit::Prompt {
            text,
            fallback: Some(reason),
        } => RawBody::FallbackPrompt(Box::new((s(text)?, reason.clone()))),
        Emit::UserMessage { text } => RawBody::UserMessage(s(text)?),
        Emit::Notice { text } => RawBody::Notice(s(text)?),
        Emit::Assistant(a) => {
            let AssistantEmit {
                text,
                key,
                delta,
                revise: r,
            } = &**a;
            revise = *r;
            let text = s(text)?;
            continues = delta
                .as_ref()
                .and_then(|d| eval(d, item, record))
                .is_some_and(|v| v == Json::Bool(true));
            once = key.as_ref().and_then(s).map(|k| (TextKind::Assistant, k));
            RawBody::Assistant(text)
        }
        Emit::Thinking {
            text,
            key,
            revise: r,
        } => {
            revise = *r;
            once = key.as_deref().and_then(s).map(|k| (TextKind::Thinking, k));
            RawBody::Thinking(text.as_ref().and_then(s).filter(|t| !t.trim().is_empty()))
        }
        Emit::Interrupt => RawBody::Interrupt,
        Emit::TurnStart => RawBody::TurnStart,
        Emit::TurnEnd => RawBody::TurnEnd,
        Emit::RunStart => RawBody::RunStart,
        Emit::Compaction { summary } => RawBody::Compaction(summary.as_ref().and_then(s)),
        Emit::ToolCall(c) => RawBody::ToolCall(Box::new(RawCall {
            // A call with no id is kept; normalization gives it one.
            call_id: s(&c.call_id).unwrap_or_default(),
            name: s(&c.name).unwrap_or_default(),
            kind: word(&c.kind),
            input: c
                .input
                .as_ref()
                .and_then(|v| eval(v, item, record))
                .unwrap_or(Json::Null),
            command: c.command.as_ref().and_then(s),
            paths: c.paths.iter().filter_map(s).collect(),
            label: c
                .label
                .as_ref()
                .and_then(s)
                .filter(|l| !l.trim().is_empty()),
            todos: c
                .todos
                .as_ref()
                .map(|t| todos(t, item, record))
                .unwrap_or_default(),
            gutter: word(&c.gutter),
        })),
        Emit::ToolResult(r) => RawBody::ToolResult(Box::new(RawResult {
            call_id: r.call_id.as_ref().and_then(s).unwrap_or_default(),
            of_agent: r.of_agent.as_ref().and_then(s),
            output: r.output.as_ref().and_then(s),
            status: word(&r.status),
            exit_code: word(&r.exit_code),
            patch: r.patch.as_ref().and_then(|p| patch(p, item, record)),
            agent_id: r.agent_id.as_ref().and_then(s),
            name: r.name.as_ref().and_then(s),
            kind: word(&r.kind),
            command: r.command.as_ref().and_then(s),
        })),
        Emit::Failure(f) => {
            let value = |v: &Option<ValueSpec>| v.as_ref().and_then(|v| eval(v, item, record));
            RawBody::Failure(Box::new(RawFailure {
                scope: word(&f.scope),
                stage: word(&f.stage),
                category: word(&f.category),
                http_status: value(&f.http_status),
                exit_code: value(&f.exit_code),
                signal: value(&f.signal),
                call_id: f.call_id.as_ref().and_then(s),
            }))
        }
    };
    Some(DraftEvent {
        body,
        once,
        continues,
        revise,
    })
}

/// The items of a call's todo list: each element of the array with a text; its state read
/// inside the element.
fn todos(spec: &TodosSpec, item: &Json, record: &Json) -> Vec<RawTodo> {
    let list = eval_cow(&spec.at, item, record);
    let Some(Json::Array(items)) = list.as_deref() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|element| {
            Some(RawTodo {
                text: eval_str(&spec.text, element, record)?,
                state: spec.state.as_ref().map(|v| Word {
                    raw: eval(v, element, record),
                    table: v.map.clone(),
                }),
            })
        })
        .collect()
}

/// Whether a condition holds for a whole record (used by detection).
pub(crate) fn condition_holds(cond: &Condition, record: &Json) -> bool {
    holds(cond, record, record)
}

fn all(conds: &[Condition], item: &Json, record: &Json) -> bool {
    all_in(conds, item, record, &mut Resolved::default())
}

fn holds(cond: &Condition, item: &Json, record: &Json) -> bool {
    holds_in(cond, item, record, &mut Resolved::default())
}

/// How many pointers [`Resolved`] keeps.
const RESOLVED: usize = 8;

/// The values the first few pointers the conditions of one rule list follow reach in one item:
/// the rules of a list mostly test the same fields (the record's type first of all), and each
/// is followed once for the whole list.
struct Resolved<'p, 'j> {
    found: [Option<(&'p Pointer, Option<&'j Json>)>; RESOLVED],
}

impl Default for Resolved<'_, '_> {
    fn default() -> Self {
        Self {
            found: [None; RESOLVED],
        }
    }
}

impl<'p, 'j> Resolved<'p, 'j> {
    /// [`resolve`], once per pointer path.
    fn get(&mut self, p: &'p Pointer, item: &'j Json, record: &'j Json) -> Option<&'j Json> {
        let same = |q: &Pointer| {
            std::ptr::eq(p, q) || (q.from_record == p.from_record && q.steps == p.steps)
        };
        for slot in &mut self.found {
            match slot {
                Some((q, v)) if same(q) => return *v,
                Some(_) => {}
                None => {
                    let v = resolve(p, item, record);
                    *slot = Some((p, v));
                    return v;
                }
            }
        }
        resolve(p, item, record)
    }
}

fn all_in<'p, 'j>(
    conds: &'p [Condition],
    item: &'j Json,
    record: &'j Json,
    seen: &mut Resolved<'p, 'j>,
) -> bool {
    conds.iter().all(|c| holds_in(c, item, record, seen))
}

fn holds_in<'p, 'j>(
    cond: &'p Condition,
    item: &'j Json,
    record: &'j Json,
    seen: &mut Resolved<'p, 'j>,
) -> bool {
    match cond {
        Condition::Eq(p, v) => seen.get(p, item, record) == Some(v),
        Condition::OneOf(p, vs) => seen.get(p, item, record).is_some_and(|x| vs.contains(x)),
        Condition::Present(p, want) => {
            seen.get(p, item, record).is_some_and(|v| !v.is_null()) == *want
        }
        Condition::Matches(p, re) => seen
            .get(p, item, record)
            .is_some_and(|v| v.as_str().is_some_and(|s| re.is_match(s))),
        Condition::Is(p, t) => seen.get(p, item, record).is_some_and(|v| match t {
            JsonType::String => v.is_string(),
            JsonType::Array => v.is_array(),
            JsonType::Object => v.is_object(),
            JsonType::Number => v.is_number(),
            JsonType::Bool => v.is_boolean(),
            JsonType::Null => v.is_null(),
        }),
        Condition::Any(cs) => cs.iter().any(|c| holds_in(c, item, record, seen)),
        Condition::All(cs) => all_in(cs, item, record, seen),
        Condition::Not(c) => !holds_in(c, item, record, seen),
    }
}

fn resolve<'j>(p: &Pointer, item: &'j Json, record: &'j Json) -> Option<&'j Json> {
    let base = if p.from_record { record } else { item };
    follow(base, p)
}

/// The value a validated pointer reaches in `value`, along the steps it was split into once
/// (the same value [`lookup`] finds for its text).
pub(crate) fn follow<'j>(value: &'j Json, p: &Pointer) -> Option<&'j Json> {
    let mut at = value;
    for step in &p.steps {
        at = match at {
            Json::Object(map) => map.get(step.as_str())?,
            Json::Array(items) => items.get(array_index(step)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// `Value::pointer` without its allocation of every step: rules follow pointers many times per
/// record. Same semantics: `~1` is `/`, `~0` is `~`, array indexes without a sign or leading
/// zero.
pub(crate) fn lookup<'j>(value: &'j Json, pointer: &str) -> Option<&'j Json> {
    if pointer.is_empty() {
        return Some(value);
    }
    let rest = pointer.strip_prefix('/')?;
    let mut at = value;
    for step in rest.split('/') {
        let step: Cow<'_, str> = if step.contains('~') {
            step.replace("~1", "/").replace("~0", "~").into()
        } else {
            step.into()
        };
        at = match at {
            Json::Object(map) => map.get(step.as_ref())?,
            Json::Array(items) => items.get(array_index(&step)?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// An array index as JSON pointers write it: digits, no sign, no leading zero.
fn array_index(step: &str) -> Option<usize> {
    if step.starts_with('+') || (step.starts_with('0') && step.len() != 1) {
        return None;
    }
    step.parse().ok()
}

/// Evaluates a value before any table: the first present pointer, flattened and captured.
pub(crate) fn eval(spec: &ValueSpec, item: &Json, record: &Json) -> Option<Json> {
    eval_cow(spec, item, record).map(Cow::into_owned)
}

/// [`eval`], borrowing from the record where no step changes the value, so only what is kept
/// is copied (a tool output is read once for its text and once for its exit code).
fn eval_cow<'j>(spec: &ValueSpec, item: &'j Json, record: &'j Json) -> Option<Cow<'j, Json>> {
    let found = spec
        .at
        .iter()
        .filter_map(|p| resolve(p, item, record))
        .find(|v| !v.is_null());
    let mut value: Cow<'j, Json> = match found {
        Some(v) => Cow::Borrowed(v),
        None => match spec
            .first_of
            .iter()
            .find_map(|alt| eval_cow(alt, item, record))
        {
            Some(v) => v,
            None => match all_of(spec, item, record) {
                Some(parts) => Cow::Owned(parts),
                None => Cow::Owned(spec.constant.clone()?),
            },
        },
    };
    let mut picked = false;
    if spec.json
        && let Json::String(s) = value.as_ref()
    {
        let parsed = parse_json(s, matches!(value, Cow::Borrowed(_)))?;
        value = Cow::Owned(match &spec.pick {
            Some(p) => follow(&parsed, p).filter(|v| !v.is_null())?.clone(),
            None => Rc::unwrap_or_clone(parsed),
        });
        picked = true;
    }
    if let Some(p) = spec.pick.as_ref().filter(|_| !picked) {
        value = match value {
            Cow::Borrowed(v) => Cow::Borrowed(follow(v, p).filter(|v| !v.is_null())?),
            Cow::Owned(v) => Cow::Owned(follow(&v, p).filter(|v| !v.is_null())?.clone()),
        };
    }
    if let Some(sep) = &spec.join
        && let Json::Array(items) = value.as_ref()
    {
        let parts: Vec<String> = items.iter().map(scalar_string).collect();
        value = Cow::Owned(Json::String(parts.join(&**sep)));
    }
    if spec.epoch_ms {
        value = Cow::Owned(Json::String(from_epoch_ms(&value)?));
    }
    if spec.variant {
        value = Cow::Owned(Json::String(variant_name(&value)?));
    }
    let mut text = if spec.text {
        Some(match value.as_ref() {
            Json::Array(items) if !spec.parts.is_empty() => {
                let chosen: Vec<&Json> = items
                    .iter()
                    .filter(|part| all(&spec.parts, part, record))
                    .collect();
                // Nothing but blanks chosen: no text, so no empty reply or prompt is made.
                Cow::Owned(join_texts(chosen.into_iter()).filter(|t| !t.trim().is_empty())?)
            }
            other => flatten_text(other)?,
        })
    } else {
        None
    };
    if let Some(re) = &spec.strip {
        let whole = match text.take() {
            Some(t) => t,
            None => match value.as_ref() {
                Json::String(s) => Cow::Borrowed(s.as_str()),
                other => Cow::Owned(scalar_string(other)),
            },
        };
        let left = re.replace_all(&whole, "");
        let left = left.trim();
        if left.is_empty() {
            return None;
        }
        text = Some(Cow::Owned(left.to_owned()));
    }
    if let Some(re) = &spec.regex {
        let text = match text {
            Some(t) => t,
            None => match value.as_ref() {
                Json::String(s) => Cow::Borrowed(s.as_str()),
                other => Cow::Owned(scalar_string(other)),
            },
        };
        let caps = re.captures(&text)?;
        let m = caps.get(1).or_else(|| caps.get(0))?;
        return Some(Cow::Owned(Json::String(m.as_str().to_owned())));
    }
    match text {
        Some(t) => Some(Cow::Owned(Json::String(t.into_owned()))),
        None => Some(value),
    }
}

thread_local! {
    /// While a record is drafted: the strings of it that values parse as JSON (`json: true`),
    /// by address and length, with what each parses to. An adapter reads one such string for
    /// many values (a call's arguments for its input, command, paths and label); it is parsed
    /// once. `None` outside a draft; emptied after each, so no address is one of a record
    /// let go.
    static PARSED: RefCell<Option<Vec<ParsedString>>> = const { RefCell::new(None) };
}

/// A string of the record being drafted (its address and length) and what it parses to as
/// JSON (`None`: it is not JSON).
type ParsedString = (usize, usize, Option<Rc<Json>>);

/// Runs `f`, the drafting of one record, with each string of the record parsed as JSON once.
fn parsing_once<T>(f: impl FnOnce() -> T) -> T {
    PARSED.with(|p| *p.borrow_mut() = Some(Vec::new()));
    let out = f();
    PARSED.with(|p| *p.borrow_mut() = None);
    out
}

/// A string parsed as JSON; with `of_record` (the string is the record's own, alive for the
/// whole draft), parsed once per draft.
fn parse_json(s: &str, of_record: bool) -> Option<Rc<Json>> {
    let parse = || serde_json::from_str::<Json>(s).ok().map(Rc::new);
    if !of_record {
        return parse();
    }
    let at = (s.as_ptr() as usize, s.len());
    PARSED.with(|cell| {
        let mut memo = cell.borrow_mut();
        let Some(memo) = memo.as_mut() else {
            return parse();
        };
        if let Some((_, _, parsed)) = memo.iter().find(|(p, n, _)| (*p, *n) == at) {
            return parsed.clone();
        }
        let parsed = parse();
        memo.push((at.0, at.1, parsed.clone()));
        parsed
    })
}

/// The present values of `all_of`, in order, as a list; `None` when none is present.
fn all_of(spec: &ValueSpec, item: &Json, record: &Json) -> Option<Json> {
    let parts: Vec<Json> = spec
        .all_of
        .iter()
        .filter_map(|part| eval(part, item, record))
        .collect();
    (!parts.is_empty()).then_some(Json::Array(parts))
}

fn eval_str(spec: &ValueSpec, item: &Json, record: &Json) -> Option<String> {
    eval_text(spec, item, record).map(Cow::into_owned)
}

/// A value's text, borrowed from the record when no step changed it.
fn eval_text<'j>(spec: &ValueSpec, item: &'j Json, record: &'j Json) -> Option<Cow<'j, str>> {
    Some(match eval_cow(spec, item, record)? {
        Cow::Borrowed(Json::String(s)) => Cow::Borrowed(s.as_str()),
        Cow::Borrowed(other) => Cow::Owned(scalar_string(other)),
        Cow::Owned(Json::String(s)) => Cow::Owned(s),
        Cow::Owned(other) => Cow::Owned(scalar_string(&other)),
    })
}

/// Milliseconds since the Unix epoch (a number or its digits) as an RFC 3339 time.
fn from_epoch_ms(v: &Json) -> Option<String> {
    let ms = match v {
        Json::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64))?,
        Json::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    let at = std::time::UNIX_EPOCH.checked_add(std::time::Duration::from_millis(ms))?;
    Some(humantime::format_rfc3339_millis(at).to_string())
}

/// A scalar's text; other values as compact JSON.
pub(crate) fn scalar_string(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        Json::Null => String::new(),
        other => other.to_string(),
    }
}

/// The variant name of an externally tagged enum value: a string names itself, an object with
/// exactly one key is named by that key. Anything else (an empty or many-keyed object, a
/// number, a list) has no variant name.
fn variant_name(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Object(map) if map.len() == 1 => map.keys().next().cloned(),
        _ => None,
    }
}

/// Text that is a string, a list of strings or text parts, or an object with `text`
/// (borrowed when it is one string).
fn flatten_text(v: &Json) -> Option<Cow<'_, str>> {
    match v {
        Json::String(s) => Some(Cow::Borrowed(s)),
        Json::Array(items) => join_texts(items.iter()).map(Cow::Owned),
        Json::Object(map) => match map.get("text") {
            Some(Json::String(s)) => Some(Cow::Borrowed(s)),
            _ => None,
        },
        Json::Null => None,
        other => Some(Cow::Owned(other.to_string())),
    }
}

/// The texts of list elements, one a line.
fn join_texts<'j>(items: impl Iterator<Item = &'j Json>) -> Option<String> {
    let mut out = String::new();
    let mut first = true;
    for part in items.filter_map(flatten_text) {
        if !first {
            out.push('\n');
        }
        out.push_str(&part);
        first = false;
    }
    Some(out)
}

fn patch(spec: &PatchSpec, item: &Json, record: &Json) -> Option<String> {
    match spec {
        PatchSpec::Unified(v) => eval_str(v, item, record).filter(|s| !s.is_empty()),
        PatchSpec::Hunks { at, fields, path } => {
            let Json::Array(hunks) = eval(at, item, record)? else {
                return None;
            };
            if hunks.is_empty() {
                return None;
            }
            let mut out = String::new();
            if let Some(path) = path.as_ref().and_then(|p| eval_str(p, item, record)) {
                out.push_str(&format!("--- {path}\n+++ {path}\n"));
            }
            for hunk in &hunks {
                let num = |ptr: &str| lookup(hunk, ptr).and_then(Json::as_u64).unwrap_or(0);
                out.push_str(&format!(
                    "@@ -{},{} +{},{} @@\n",
                    num(&fields.old_start),
                    num(&fields.old_lines),
                    num(&fields.new_start),
                    num(&fields.new_lines)
                ));
                if let Some(Json::Array(lines)) = lookup(hunk, &fields.lines) {
                    for line in lines.iter().filter_map(Json::as_str) {
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            }
            Some(out)
        }
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
records: { type_at: /type, dedup: /uuid }
event_map:
  - when: [{ at: /type, eq: note }]
    skip: bookkeeping
  - when: [{ at: /type, eq: msg }]
    each: /content
    rules:
      - when: [{ at: /type, eq: text }]
        emit: { kind: assistant, text: /text, key: ^/id }
      - when: [{ at: /type, eq: call }]
        emit: { kind: tool_call, call_id: /id, name: /name, input: /input }
  - when: [{ at: /type, eq: out }]
    emit:
      kind: tool_result
      call_id: /id
      output: { at: /content, text: true }
      exit_code: { at: /content, text: true, regex: '^Exit code (\d+)', map: exit_code_map }
exit_code_map: { values: { "0": ok }, default: error }
"#,
        )
        .expect("test adapter parses")
    }

    #[test]
    fn walks_arrays_in_order_and_counts_what_it_skips() {
        let spec = spec();
        let mut it = Interpreter::new(&spec);
        it.record(1, &json!({"type": "note", "uuid": "a"}));
        it.record(
            2,
            &json!({"type": "msg", "uuid": "b", "id": "m1", "content": [
            {"type": "text", "text": "hi"}, {"type": "call", "id": "c1", "name": "Bash"},
            {"type": "mystery"}]}),
        );
        it.record(3, &json!({"type": "msg", "uuid": "b"}));
        it.record(
            4,
            &json!({"type": "msg", "uuid": "c", "id": "m1", "content": [
            {"type": "text", "text": "hi"}]}),
        );
        it.record(
            5,
            &json!({"type": "out", "uuid": "d", "id": "c1",
            "content": [{"type": "text", "text": "Exit code 2\nboom"}]}),
        );
        let raw = it.finish();
        let kinds: Vec<_> = raw
            .events
            .iter()
            .map(|e| match &e.body {
                RawBody::Assistant(_) => "assistant",
                RawBody::ToolCall(_) => "call",
                RawBody::ToolResult(_) => "result",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["assistant", "call", "result"]);
        assert_eq!(raw.skipped["bookkeeping"], 1);
        assert_eq!(raw.unmatched["mystery"], (1, 2));
        assert_eq!(raw.duplicates, 1);
        let RawBody::ToolResult(r) = &raw.events[2].body else {
            panic!("expected a result")
        };
        assert_eq!(
            r.exit_code.as_ref().and_then(|w| w.raw.clone()),
            Some(json!("2"))
        );
        assert_eq!(r.output.as_deref(), Some("Exit code 2\nboom"));
    }

    #[test]
    fn records_drafted_on_many_cores_read_as_records_fed_one_at_a_time() {
        let spec = spec();
        let records: Vec<(usize, Json)> = (0..600)
            .map(|i| {
                let rec = match i % 5 {
                    0 => json!({"type": "note", "uuid": format!("n{i}")}),
                    1 => json!({"type": "msg", "uuid": format!("u{}", i % 7), "id": format!("m{}", i % 3),
                        "content": [{"type": "text", "text": format!("t{}", i % 4)},
                                    {"type": "call", "id": format!("c{i}"), "name": "Bash"},
                                    {"type": format!("odd{}", i % 2)}]}),
                    2 => json!({"type": "out", "uuid": format!("o{i}"), "id": format!("c{}", i - 1),
                        "content": [{"type": "text", "text": "Exit code 1\nno"}]}),
                    3 => json!({"type": "strange", "uuid": format!("s{i}")}),
                    _ => json!({"type": "msg", "uuid": format!("u{}", i % 11), "id": "m1",
                        "content": {"type": "text", "text": "same"}}),
                };
                (i + 1, rec)
            })
            .collect();
        let mut one = Interpreter::new(&spec);
        for (line, rec) in &records {
            one.record(*line, rec);
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .expect("a thread pool");
        let many = pool.install(|| {
            let mut it = Interpreter::new(&spec);
            it.records(records);
            it.finish()
        });
        let one = one.finish();
        assert!(one.duplicates > 0 && !one.unmatched.is_empty());
        assert_eq!(format!("{one:?}"), format!("{many:?}"));
    }

    #[test]
    fn drafts_that_leave_out_known_facts_read_the_same_facts() -> anyhow::Result<()> {
        let spec = AdapterSpec::parse(
            "t.yaml",
            r#"
name: t
label: T
input: { format: jsonl }
session: { id: /sid, parent: /parent, cwd: /cwd, branch: /branch, model: /model, timestamp: /ts }
event_map: [{ skip: all }]
"#,
        )?;
        let records = [
            json!({"cwd": "/a", "ts": "2"}),
            json!({"sid": "s1", "parent": "p1", "cwd": "/a", "ts": "1"}),
            json!({"sid": "s2", "parent": "p2", "cwd": "/b", "branch": "x", "ts": "3"}),
            json!({"cwd": "/a", "branch": "y", "model": "m", "ts": "0"}),
            json!({"cwd": "/c", "model": "n"}),
        ];
        let mut plain = Interpreter::new(&spec);
        let mut knowing = Interpreter::new(&spec);
        for (i, rec) in records.iter().enumerate() {
            plain.apply(Draft::of(&spec, i + 1, rec));
            let known = knowing.known();
            knowing.apply(Draft::knowing(&spec, i + 1, rec, Some(&known)));
        }
        let (plain, knowing) = (plain.finish().facts, knowing.finish().facts);
        assert_eq!(knowing.id.as_deref(), Some("s1"));
        assert_eq!(knowing.parent.as_deref(), Some("p1"));
        assert_eq!(knowing.cwds, ["/a", "/b", "/c"]);
        assert_eq!(format!("{plain:?}"), format!("{knowing:?}"));
        Ok(())
    }
}

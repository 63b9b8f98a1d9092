//! What of a record an adapter reads, derived from its rules, so a line is parsed into only
//! those parts.
//!
//! A session log holds far more than any adapter looks at: Claude Code repeats every tool
//! output in `toolUseResult`, writes progress records whose payload is never shown and signs
//! each thinking block. [`Needs::of`] walks every pointer an adapter's rules, conditions,
//! session facts and record options can follow and builds a tree of the fields they reach;
//! [`Pick`] parses a record into a `serde_json::Value` that keeps exactly that tree, skipping
//! everything else without allocating (the skipped text is still checked to be valid JSON).
//! Whatever a pointer can read is kept whole or as far as the rules look into it, so the
//! rules see the same values as with the whole record.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};
use std::fmt;

use super::spec::{Action, AdapterSpec, Condition, Emit, PatchSpec, Pointer, Rule, ValueSpec};

/// The parts of a value an adapter reads.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Needs {
    /// The whole value is read (its text, its keys, or compared as a whole).
    whole: bool,
    /// An object's members that are read, by key.
    keys: super::interpret::TextMap<String, Needs>,
    /// What of every element of an array is read; `None`: no element is.
    elements: Option<Box<Needs>>,
}

/// One step of a path into a record.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// An object member (or, when it is a number, also an array index).
    Key(String),
    /// Every element of an array.
    Element,
}

type Path = Vec<Step>;

impl Needs {
    /// Everything of a record that `spec`'s record options, session facts and rules read.
    /// Detection is not included: it reads whole records of its own.
    pub(crate) fn of(spec: &AdapterSpec) -> Self {
        let mut needs = Needs::default();
        let root: Vec<Path> = vec![Vec::new()];
        let r = &spec.records;
        if let Some(p) = &r.type_at {
            needs.pointer(&root, p, true);
        }
        if let Some(v) = &r.dedup {
            needs.value(&root, v);
        }
        if let Some(s) = &r.sidechain {
            needs.conditions(&root, &s.when);
            needs.value(&root, &s.agent);
        }
        if let Some(replay) = &r.replay {
            for p in [
                Some(&replay.key),
                replay.rewind.as_ref(),
                replay.reset.as_ref(),
            ]
            .into_iter()
            .flatten()
            {
                needs.pointer(&root, p, true);
            }
        }
        // Only whether a record holds conversation is read.
        for p in &r.conversation {
            needs.pointer(&root, p, false);
        }
        if let Some(g) = &r.group_by {
            needs.pointer(&root, &g.key, true);
            needs.pointer(&root, &g.parent, true);
        }
        let s = &spec.session;
        for v in [
            &s.id,
            &s.parent,
            &s.cwd,
            &s.branch,
            &s.version,
            &s.model,
            &s.timestamp,
        ]
        .into_iter()
        .flatten()
        {
            needs.value(&root, v);
        }
        if let Some(u) = &s.usage {
            needs.value(&root, &u.key);
            for v in u.input.iter().chain(&u.output) {
                needs.value(&root, v);
            }
        }
        needs.rules(&root, &spec.event_map, spec);
        needs
    }

    /// [`Needs::of`], plus what detection reads: for records read once for both.
    pub(crate) fn with_detection(spec: &AdapterSpec) -> Self {
        let mut needs = Self::of(spec);
        needs.conditions(&[Vec::new()], &spec.detect);
        needs
    }

    /// What is read of an object's member `key`.
    pub(crate) fn member(&self, key: &str) -> Self {
        match self.whole {
            true => Self::all(),
            false => self.keys.get(key).cloned().unwrap_or_default(),
        }
    }

    /// What is read of each element of an array.
    pub(crate) fn element(&self) -> Self {
        match (self.whole, &self.elements) {
            (true, _) => Self::all(),
            (false, Some(e)) => (**e).clone(),
            (false, None) => Self::default(),
        }
    }

    /// Also reads the whole value at `pointer`.
    pub(crate) fn read(&mut self, pointer: &str) {
        self.add(&steps(pointer), true);
    }

    /// Everything: the whole value is read.
    pub(crate) fn all() -> Self {
        Needs {
            whole: true,
            ..Needs::default()
        }
    }

    fn rules(&mut self, items: &[Path], rules: &[Rule], spec: &AdapterSpec) {
        for rule in rules {
            self.conditions(items, &rule.when);
            match &rule.action {
                Action::Skip(_) => {}
                Action::Emit(e) => self.emit(items, e),
                Action::EmitAll(list) => list.iter().for_each(|e| self.emit(items, e)),
                Action::Steps(steps) => self.rules(items, steps, spec),
                Action::Each { at, rules } => {
                    self.pointer(items, at, false);
                    // The array's elements, or the object itself (walked as a list of one).
                    let bases = if at.from_record {
                        vec![Vec::new()]
                    } else {
                        items.to_vec()
                    };
                    let mut inner: Vec<Path> = Vec::new();
                    for base in bases {
                        let mut item = base;
                        item.extend(steps(&at.path));
                        let mut element = item.clone();
                        element.push(Step::Element);
                        inner.push(item);
                        inner.push(element);
                    }
                    // An element no rule matches is named by its type in a warning.
                    if let Some(p) = &spec.records.type_at {
                        self.pointer(&inner, p, true);
                    }
                    self.rules(&inner, rules, spec);
                }
            }
        }
    }

    fn conditions(&mut self, items: &[Path], conds: &[Condition]) {
        for c in conds {
            match c {
                // Compared or matched as values: kept whole.
                Condition::Eq(p, _) | Condition::OneOf(p, _) | Condition::Matches(p, _) => {
                    self.pointer(items, p, true)
                }
                // Only presence and type are read.
                Condition::Present(p, _) | Condition::Is(p, _) => self.pointer(items, p, false),
                Condition::Any(cs) | Condition::All(cs) => self.conditions(items, cs),
                Condition::Not(c) => self.conditions(items, std::slice::from_ref(c)),
            }
        }
    }

    fn emit(&mut self, items: &[Path], emit: &Emit) {
        let mut values: Vec<&ValueSpec> = Vec::new();
        match emit {
            Emit::Prompt { text, .. } | Emit::UserMessage { text } | Emit::Notice { text } => {
                values.push(text)
            }
            Emit::Assistant(a) => {
                let super::spec::AssistantEmit {
                    text, key, delta, ..
                } = &**a;
                values.push(text);
                values.extend(key.iter().chain(delta));
            }
            Emit::Thinking { text, key, .. } => values.extend(text.iter().chain(key.as_deref())),
            Emit::Interrupt | Emit::TurnStart | Emit::TurnEnd | Emit::RunStart => {}
            Emit::Compaction { summary } => values.extend(summary),
            Emit::ToolCall(c) => {
                values.push(&c.call_id);
                values.push(&c.name);
                values.extend(c.kind.iter().chain(&c.input).chain(&c.command));
                values.extend(&c.paths);
                values.extend(c.label.iter().chain(&c.gutter));
                // The items are inside the list, which is read whole; their own pointers add
                // only what they read of the record (`^/...`).
                if let Some(t) = &c.todos {
                    values.push(&t.at);
                    values.push(&t.text);
                    values.extend(&t.state);
                }
            }
            Emit::ToolResult(r) => {
                values.extend(r.call_id.iter().chain(&r.of_agent));
                values.extend(r.output.iter().chain(&r.status).chain(&r.exit_code));
                values.extend(r.agent_id.iter().chain(&r.name).chain(&r.kind));
                values.extend(&r.command);
                match &r.patch {
                    Some(PatchSpec::Unified(v)) => values.push(v),
                    Some(PatchSpec::Hunks { at, path, .. }) => {
                        values.push(at);
                        values.extend(path);
                    }
                    None => {}
                }
            }
            Emit::Failure(f) => values.extend(
                [
                    &f.scope,
                    &f.stage,
                    &f.category,
                    &f.http_status,
                    &f.exit_code,
                    &f.signal,
                    &f.call_id,
                ]
                .into_iter()
                .flatten(),
            ),
        }
        for v in values {
            self.value(items, v);
        }
    }

    /// A value's pointers read whole values (`pick` reads inside the parsed string, not the
    /// record).
    fn value(&mut self, items: &[Path], v: &ValueSpec) {
        for p in &v.at {
            self.pointer(items, p, true);
        }
        for alt in v.first_of.iter().chain(&v.all_of) {
            self.value(items, alt);
        }
        // The parts are inside a value read whole; only what they read of the record
        // (`^/...`) is added here (a relative pointer adds a harmless read beside the item).
        self.conditions(items, &v.parts);
    }

    fn pointer(&mut self, items: &[Path], p: &Pointer, whole: bool) {
        // A pointer that does not start with `/` reaches nothing (validation rejects it).
        if !p.path.is_empty() && !p.path.starts_with('/') {
            return;
        }
        let tail = steps(&p.path);
        if p.from_record {
            self.add(&tail, whole);
            return;
        }
        for base in items {
            let mut path = base.clone();
            path.extend(tail.iter().cloned());
            self.add(&path, whole);
        }
    }

    fn add(&mut self, path: &[Step], whole: bool) {
        if self.whole {
            return;
        }
        let Some((first, rest)) = path.split_first() else {
            if whole {
                *self = Needs::all();
            }
            return;
        };
        match first {
            Step::Key(k) => {
                // A number also indexes an array.
                if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
                    self.elements
                        .get_or_insert_with(Box::default)
                        .add(rest, whole);
                }
                self.keys.entry(k.clone()).or_default().add(rest, whole);
            }
            Step::Element => self
                .elements
                .get_or_insert_with(Box::default)
                .add(rest, whole),
        }
    }
}

/// A JSON pointer's steps (`~1` is `/`, `~0` is `~`).
fn steps(pointer: &str) -> Path {
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer
        .split('/')
        .skip(1)
        .map(|s| Step::Key(s.replace("~1", "/").replace("~0", "~")))
        .collect()
}

/// Parses one JSON value keeping only what `Needs` says is read.
pub(crate) struct Pick<'n>(pub(crate) &'n Needs);

impl<'de> DeserializeSeed<'de> for Pick<'_> {
    type Value = Json;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        if self.0.whole {
            return serde::Deserialize::deserialize(d);
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pick<'_> {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut out = Vec::new();
        match self.0.elements.as_deref() {
            Some(element) => {
                while let Some(v) = seq.next_element_seed(Pick(element))? {
                    out.push(v);
                }
            }
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        Ok(Json::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut out = Map::new();
        while let Some(member) = map.next_key_seed(Member(self.0))? {
            match member {
                Some((key, needs)) => {
                    let value = map.next_value_seed(Pick(needs))?;
                    out.insert(key.clone(), value);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Json::Object(out))
    }
}

/// Reads an object key and looks it up among the read members, without keeping the text of
/// keys nobody reads.
struct Member<'n>(&'n Needs);

impl<'de, 'n> DeserializeSeed<'de> for Member<'n> {
    type Value = Option<(&'n String, &'n Needs)>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, 'n> Visitor<'de> for Member<'n> {
    type Value = Option<(&'n String, &'n Needs)>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.keys.get_key_value(v))
    }
}

/// Parses one JSON text keeping what `needs` says is read (all of it when the whole is).
pub(crate) fn parse(text: &str, needs: &Needs) -> serde_json::Result<Json> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Pick(needs).deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(text: &str) -> AdapterSpec {
        AdapterSpec::parse("t.yaml", text).expect("test adapter parses")
    }

    const ADAPTER: &str = r#"
name: t
label: T
input: { format: jsonl }
session: { id: /sessionId, timestamp: /timestamp }
records: { type_at: /type, dedup: /uuid }
event_map:
  - when: [{ at: /type, eq: progress }]
    skip: progress
  - when: [{ at: /type, eq: msg }, { at: /message/content, is: array }]
    each: /message/content
    rules:
      - when: [{ at: /type, eq: text }]
        emit: { kind: assistant, text: /text, key: ^/message/id }
      - when: [{ at: /type, eq: call }]
        emit: { kind: tool_call, call_id: /id, name: /name, input: /input }
      - when: [{ at: /type, eq: out }]
        emit:
          kind: tool_result
          call_id: /id
          output: { at: /content, text: true }
          agent_id: ^/extra/agentId
"#;

    #[test]
    fn keeps_what_the_rules_read_and_drops_the_rest() -> anyhow::Result<()> {
        let needs = Needs::of(&spec(ADAPTER));
        let line = json!({
            "type": "msg", "uuid": "u1", "sessionId": "s", "timestamp": "t",
            "message": {"id": "m1", "usage": {"n": 1}, "content": [
                {"type": "text", "text": "hi", "signature": "xxxx"},
                {"type": "call", "id": "c1", "name": "Bash", "input": {"command": "ls", "x": [1]}},
                {"type": "out", "id": "c1", "content": [{"type": "text", "text": "a"}]}
            ]},
            "extra": {"agentId": "a1", "stdout": "big"},
            "data": {"lots": "of text"}
        });
        let picked = parse(&line.to_string(), &needs)?;
        let expected = json!({
            "type": "msg", "uuid": "u1", "sessionId": "s", "timestamp": "t",
            "message": {"id": "m1", "content": [
                {"type": "text", "text": "hi"},
                {"type": "call", "id": "c1", "name": "Bash", "input": {"command": "ls", "x": [1]}},
                {"type": "out", "id": "c1", "content": [{"type": "text", "text": "a"}]}
            ]},
            "extra": {"agentId": "a1"}
        });
        assert_eq!(picked, expected);
        Ok(())
    }

    #[test]
    fn skipped_parts_must_still_be_valid_json() {
        let needs = Needs::of(&spec(ADAPTER));
        assert!(parse(r#"{"type":"progress","data":{"a":tru}}"#, &needs).is_err());
        assert!(parse(r#"{"type":"progress","data":"a"} x"#, &needs).is_err());
        assert!(parse(r#"{"type":"progress","data":[1,2,{"b":null}]}"#, &needs).is_ok());
    }

    #[test]
    fn a_whole_item_keeps_everything() -> anyhow::Result<()> {
        let needs = Needs::of(&spec(
            r#"
name: t
label: T
input: { format: jsonl }
event_map:
  - when: [{ at: /type, eq: x }]
    each: .
    rules:
      - emit: { kind: tool_call, call_id: /id, name: /name, input: . }
"#,
        ));
        assert_eq!(needs, Needs::all());
        let line = r#"{"type":"x","id":"1","name":"n","more":{"deep":[1,2]}}"#;
        assert_eq!(parse(line, &needs)?, serde_json::from_str::<Json>(line)?);
        Ok(())
    }

    #[test]
    fn numeric_steps_read_array_elements() -> anyhow::Result<()> {
        let needs = Needs::of(&spec(
            r#"
name: t
label: T
input: { format: jsonl }
event_map:
  - when: [{ at: /parts/0/kind, eq: text }]
    emit: { kind: prompt, text: /parts/0/text }
"#,
        ));
        let line = r#"{"parts":[{"kind":"text","text":"hi","other":1}],"noise":2}"#;
        assert_eq!(
            parse(line, &needs)?,
            json!({"parts": [{"kind": "text", "text": "hi"}]})
        );
        Ok(())
    }
}

//! The order records are applied in: as read, replayed as an append-only log
//! (`records.replay`: later copies replace earlier ones, rewinds and resets rewrite it), or
//! regrouped under their parent record (`records.group_by`), for files and joined inputs alike.

use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::Arc;

use crate::adapters::interpret::{Draft, Interpreter, Known, TextMap, TextSet};
use crate::adapters::spec::{AdapterSpec, Pointer, ReplaySpec};

/// What a record becomes where it is parsed.
pub(super) enum Item<'s> {
    /// A record, drafted where it was parsed (its record is let go there).
    Draft(Box<Draft<'s>>),
    /// A drafted record of a replayed log, with its place in the log.
    Replayed(Replayed<Box<Draft<'s>>>),
    /// A record kept whole, to regroup.
    Record(Json),
}

/// How an adapter orders the records of one file: whether they are replayed as a log, and
/// whether they are regrouped by parent link.
#[derive(Clone)]
pub(super) struct RecordOrder<'s> {
    spec: &'s AdapterSpec,
    replay: Option<&'s ReplaySpec>,
    grouped: bool,
    /// The session facts the interpreter holds already, left out of each draft.
    known: Option<Arc<Known>>,
}

impl<'s> RecordOrder<'s> {
    pub(super) fn of(spec: &'s AdapterSpec) -> Self {
        Self {
            spec,
            replay: spec.records.replay.as_ref(),
            grouped: spec.records.group_by.is_some(),
            known: None,
        }
    }

    /// The order, with drafts that leave out the session facts `interp` holds already.
    pub(super) fn knowing(self, interp: &Interpreter<'_>) -> Self {
        Self {
            known: Some(interp.known()),
            ..self
        }
    }

    /// What a record becomes where it is parsed: drafted there, with its place in a replayed
    /// log found there; a record to regroup by its parent link is kept whole until the order
    /// is known.
    pub(super) fn item(&self, line: usize, rec: Json) -> Item<'s> {
        let spec = self.spec;
        let known = self.known.as_deref();
        match self.replay {
            _ if self.grouped => Item::Record(rec),
            Some(r) => Item::Replayed(Replayed::of(r, rec, &|rec| {
                Box::new(Draft::knowing(spec, line, &rec, known))
            })),
            None => Item::Draft(Box::new(Draft::knowing(spec, line, &rec, known))),
        }
    }
}

/// The records of one file taken in the order they were read, each applied as soon as its
/// place is known: a plain record at once, the rest when the file is read.
pub(super) struct Sequence<'s> {
    order: RecordOrder<'s>,
    log: Replay<Box<Draft<'s>>>,
    held: Vec<(usize, Json)>,
}

impl<'s> Sequence<'s> {
    pub(super) fn new(order: RecordOrder<'s>) -> Self {
        Self {
            order,
            log: Replay::default(),
            held: Vec::new(),
        }
    }

    /// Takes the next record read, with its 1-based line number.
    pub(super) fn take(&mut self, interp: &mut Interpreter<'s>, line: usize, item: Item<'s>) {
        match item {
            Item::Draft(draft) => interp.apply(*draft),
            Item::Replayed(r) => self.log.push(r),
            Item::Record(rec) => self.held.push((line, rec)),
        }
    }

    /// Applies what was held, in its order: the replayed log, then records regrouped by their
    /// parent link.
    pub(super) fn finish(self, interp: &mut Interpreter<'s>) {
        let Self {
            order,
            log,
            mut held,
        } = self;
        if !order.grouped {
            let (drafts, relisted) = log.finish();
            for draft in drafts {
                interp.apply(*draft);
            }
            interp.skip(RELISTED, relisted);
            return;
        }
        if let Some(r) = order.replay {
            let mut log = Replay::default();
            for (line, rec) in held {
                log.push(Replayed::of(r, rec, &|rec| (line, rec)));
            }
            let (records, relisted) = log.finish();
            held = records.collect();
            interp.skip(RELISTED, relisted);
        }
        // Records are regrouped by their parent link before the rules see them.
        let lines: Vec<usize> = held.iter().map(|(l, _)| *l).collect();
        let regrouped = group_indexed(order.spec, held.into_iter().map(|(_, r)| r).collect());
        interp.records(
            regrouped
                .into_iter()
                .map(|(i, rec)| (lines.get(i).copied().unwrap_or(i + 1), rec))
                .collect(),
        );
    }
}

/// A joined record as a load keeps it: drafted where it was joined (its record let go there),
/// with the links that regroup it and whether detection recognises it.
pub(super) struct JoinedRecord<'s> {
    links: (Option<String>, Option<String>),
    pub(super) recognised: bool,
    draft: Draft<'s>,
}

impl<'s> JoinedRecord<'s> {
    pub(super) fn of(spec: &'s AdapterSpec, rec: Json, detect: bool) -> Self {
        Self {
            links: links(spec, &rec),
            recognised: detect
                && spec
                    .detect
                    .iter()
                    .any(|c| crate::adapters::interpret::condition_holds(c, &rec)),
            draft: Draft::of(spec, 0, &rec),
        }
    }
}

/// Applies joined records' drafts in the order their links regroup them, numbered in that
/// order.
pub(super) fn apply_joined(interp: &mut Interpreter<'_>, records: Vec<JoinedRecord<'_>>) {
    let order = grouped(records.iter().map(|r| r.links.clone()));
    let mut slots: Vec<Option<JoinedRecord<'_>>> = records.into_iter().map(Some).collect();
    for (at, i) in order.into_iter().enumerate() {
        if let Some(r) = slots.get_mut(i).and_then(Option::take) {
            interp.apply(r.draft.numbered(at + 1));
        }
    }
}

/// A record's place in an append-only log, found where the record is parsed.
pub(super) enum Replayed<T> {
    /// Drops the record with this key and everything after it.
    Rewind(String),
    /// Replaces the whole list by these, then keeps the record itself (under its key, not
    /// indexed by it).
    Reset(Vec<Replayed<T>>, Option<String>, T),
    /// Keeps the records before it and adds the listed ones the log does not hold yet (`None`:
    /// a copy of an earlier record under a new key), then keeps the record itself.
    Merge(Vec<(Option<String>, Option<T>)>, Option<String>, T),
    /// Keeps the record, in the place of an earlier copy with the same key if there is one.
    Keep(Option<String>, T),
}

impl<T> Replayed<T> {
    /// Where `rec` goes in the log; `make` turns it (and each record a reset lists) into what
    /// the log keeps.
    fn of(spec: &ReplaySpec, rec: Json, make: &dyn Fn(Json) -> T) -> Self {
        let key = |p: &Pointer, rec: &Json| {
            crate::adapters::interpret::follow(rec, p)
                .filter(|v| !v.is_null())
                .map(crate::adapters::interpret::scalar_string)
        };
        if let Some(target) = spec.rewind.as_ref().and_then(|p| key(p, &rec)) {
            return Self::Rewind(target);
        }
        let own = key(&spec.key, &rec);
        if let Some(Json::Array(list)) = spec
            .reset
            .as_ref()
            .and_then(|p| crate::adapters::interpret::follow(&rec, p))
        {
            if spec.reset_keeps {
                let items = list
                    .iter()
                    .map(|item| {
                        let adds = spec
                            .reset_adds
                            .iter()
                            .all(|c| crate::adapters::interpret::condition_holds(c, item));
                        (key(&spec.key, item), adds.then(|| make(item.clone())))
                    })
                    .collect();
                return Self::Merge(items, own, make(rec));
            }
            let items = list
                .clone()
                .into_iter()
                .map(|item| Self::of(spec, item, make))
                .collect();
            return Self::Reset(items, own, make(rec));
        }
        Self::Keep(own, make(rec))
    }
}

/// Replays an append-only log: later copies replace earlier ones in place, a rewind drops a
/// record and everything after it, a reset replaces the whole list (or, when it keeps the
/// records before it, adds what it lists that the log does not hold).
struct Replay<T> {
    records: Vec<Option<(Option<String>, T)>>,
    index: TextMap<String, usize>,
    /// Keys a keeping reset listed as copies of earlier records.
    copies: TextSet<String>,
    /// How many copies were left out.
    relisted: usize,
    /// How many places the log had when its last reset was replayed.
    last_reset: usize,
}

impl<T> Default for Replay<T> {
    fn default() -> Self {
        Self {
            records: Vec::new(),
            index: TextMap::default(),
            copies: TextSet::default(),
            relisted: 0,
            last_reset: 0,
        }
    }
}

/// Why a replayed log left out a record a keeping reset re-listed.
pub(crate) const RELISTED: &str = "copy of earlier records listed again by a history rewrite";

impl<T> Replay<T> {
    fn push(&mut self, r: Replayed<T>) {
        match r {
            Replayed::Rewind(target) => {
                if let Some(at) = self.index.get(&target).copied() {
                    for slot in self.records.iter_mut().skip(at) {
                        if let Some((Some(k), _)) = slot.take() {
                            self.index.remove(&k);
                        }
                    }
                }
            }
            Replayed::Reset(items, own, rec) => {
                self.records.clear();
                self.index.clear();
                for item in items {
                    self.push(item);
                }
                self.records.push(Some((own, rec)));
            }
            Replayed::Merge(items, own, rec) => {
                self.drop_rewritten(&items);
                for (k, item) in items {
                    if k.as_ref()
                        .is_some_and(|k| self.index.contains_key(k) || self.copies.contains(k))
                    {
                        continue;
                    }
                    match item {
                        Some(item) => self.push(Replayed::Keep(k, item)),
                        None => {
                            self.relisted += 1;
                            self.copies.extend(k);
                        }
                    }
                }
                self.records.push(Some((own, rec)));
                self.last_reset = self.records.len();
            }
            Replayed::Keep(Some(k), _) if self.copies.contains(&k) => self.relisted += 1,
            Replayed::Keep(Some(k), rec) => match self.index.get(&k) {
                Some(&at) => self.records[at] = Some((Some(k), rec)),
                None => {
                    self.index.insert(k.clone(), self.records.len());
                    self.records.push(Some((Some(k), rec)));
                }
            },
            Replayed::Keep(None, rec) => self.records.push(Some((None, rec))),
        }
    }

    /// A rewrite that lists exactly the records written just before it and since the last
    /// rewrite, in their order (keyless records between them aside), wrote the whole history
    /// again as new records under new keys before listing it (Gemini CLI's tool-output
    /// masking): those records are copies. (A resume re-lists records written before its own
    /// start: those stay.)
    fn drop_rewritten(&mut self, items: &[(Option<String>, Option<T>)]) {
        let mut want = items.iter().rev();
        let mut run = Vec::new();
        for (at, slot) in self.records.iter().enumerate().rev() {
            if at < self.last_reset {
                return;
            }
            let Some((Some(k), _)) = slot else { continue };
            match want.next() {
                Some((Some(listed), _)) if listed == k => run.push(at),
                _ => return,
            }
            if run.len() == items.len() {
                break;
            }
        }
        if run.is_empty() || run.len() != items.len() {
            return;
        }
        for at in run {
            if let Some((Some(k), _)) = self.records[at].take() {
                self.index.remove(&k);
                self.copies.insert(k);
                self.relisted += 1;
            }
        }
    }

    /// The records in order, and how many re-listed copies were left out.
    fn finish(self) -> (impl Iterator<Item = T>, usize) {
        (
            self.records.into_iter().flatten().map(|(_, rec)| rec),
            self.relisted,
        )
    }
}

/// A record's key and the key of its parent, when the adapter regroups records
/// (`records.group_by`).
fn links(spec: &AdapterSpec, rec: &Json) -> (Option<String>, Option<String>) {
    let Some(g) = &spec.records.group_by else {
        return (None, None);
    };
    let text = |p: &Pointer| {
        crate::adapters::interpret::follow(rec, p)
            .filter(|v| !v.is_null())
            .map(crate::adapters::interpret::scalar_string)
    };
    (text(&g.key), text(&g.parent))
}

/// The order of records regrouped by their links (key, parent key): a record whose parent
/// key names an earlier record's group moves to the end of that group; every other record
/// starts a group. Groups keep the order of their first record, and records keep their order
/// within a group. Returns the records' indexes in that order.
fn grouped(links: impl IntoIterator<Item = (Option<String>, Option<String>)>) -> Vec<usize> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut group_of: HashMap<String, usize> = HashMap::new();
    for (i, (key, parent)) in links.into_iter().enumerate() {
        let at = match parent.and_then(|p| group_of.get(&p).copied()) {
            Some(k) => k,
            None => {
                groups.push(Vec::new());
                groups.len() - 1
            }
        };
        if let Some(key) = key {
            group_of.entry(key).or_insert(at);
        }
        if let Some(list) = groups.get_mut(at) {
            list.push(i);
        }
    }
    groups.into_iter().flatten().collect()
}

/// Regroups records by their links (see [`grouped`]). Returns (original index, record).
fn group_indexed(spec: &AdapterSpec, records: Vec<Json>) -> Vec<(usize, Json)> {
    let order = grouped(records.iter().map(|r| links(spec, r)));
    let mut slots: Vec<Option<Json>> = records.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| Some((i, slots.get_mut(i)?.take()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Replays Gemini-style records through a keeping reset; returns the kept ids and how
    /// many copies were left out.
    fn merged(records: Vec<Json>) -> (Vec<String>, usize) {
        let spec = AdapterSpec::parse(
            "t.yaml",
            r#"
name: t
label: T
input: { format: jsonl }
records:
  replay:
    key: /id
    reset: /$set/messages
    reset_keeps: true
    reset_adds: [{ at: /new, eq: true }]
event_map: [{ skip: all }]
"#,
        )
        .expect("test adapter parses");
        let Some(replay) = spec.records.replay.as_ref() else {
            panic!("a replay block")
        };
        let mut log = Replay::default();
        for rec in records {
            log.push(Replayed::of(replay, rec, &|rec| {
                rec.get("id").map(crate::adapters::interpret::scalar_string)
            }));
        }
        let (kept, relisted) = log.finish();
        (kept.flatten().collect(), relisted)
    }

    #[test]
    fn a_keeping_reset_leaves_earlier_records_and_adds_only_what_it_may() {
        use serde_json::json;
        let (kept, relisted) = merged(vec![
            json!({"$set": {"messages": [{"id": "env", "new": true}]}}),
            json!({"id": "p1"}),
            json!({"id": "g1"}),
            // A compression: env known, a summary added, a kept turn under a new id left out.
            json!({"$set": {"messages": [{"id": "env"}, {"id": "sum", "new": true}, {"id": "p1b"}]}}),
            // The copy written again later is left out too.
            json!({"id": "p1b"}),
            json!({"id": "p2"}),
        ]);
        assert_eq!(kept, ["env", "p1", "g1", "sum", "p2"]);
        assert_eq!(relisted, 2);
    }

    #[test]
    fn a_rewrite_that_lists_the_records_just_written_makes_them_copies() {
        use serde_json::json;
        // Masking: the whole history written again under new ids, then listed.
        let (kept, relisted) = merged(vec![
            json!({"$set": {"messages": [{"id": "env", "new": true}]}}),
            json!({"id": "p1"}),
            json!({"id": "g1"}),
            json!({"id": "env2"}),
            json!({"$set": {"lastUpdated": "t"}}),
            json!({"id": "p1b"}),
            json!({"id": "g1b"}),
            json!({"$set": {"messages": [{"id": "env2"}, {"id": "p1b"}, {"id": "g1b"}]}}),
            json!({"id": "p2"}),
        ]);
        assert_eq!(kept, ["env", "p1", "g1", "p2"]);
        assert_eq!(relisted, 3);
        // A rewrite that lists older records (a resume, a rollback) removes nothing.
        let (kept, relisted) = merged(vec![
            json!({"$set": {"messages": [{"id": "env", "new": true}]}}),
            json!({"id": "p1"}),
            json!({"id": "g1"}),
            json!({"$set": {"messages": [{"id": "env"}, {"id": "p1"}]}}),
        ]);
        assert_eq!(kept, ["env", "p1", "g1"]);
        assert_eq!(relisted, 0);
        // A resume that lists the records written before its own start, nothing between.
        let (kept, relisted) = merged(vec![
            json!({"$set": {"messages": [{"id": "env", "new": true}]}}),
            json!({"id": "p1"}),
            json!({"id": "g1"}),
            json!({"$set": {"messages": [{"id": "env"}]}}),
            json!({"$set": {"messages": [{"id": "env"}, {"id": "p1"}, {"id": "g1"}]}}),
        ]);
        assert_eq!(kept, ["env", "p1", "g1"]);
        assert_eq!(relisted, 0);
    }

    #[test]
    fn records_regroup_under_their_parent_in_order() {
        let link =
            |key: &str, parent: Option<&str>| (Some(key.to_owned()), parent.map(str::to_owned));
        // u1, a1 (answers u1), u2, a2 (answers a1: same group), x (unknown parent), a3 (u2).
        let order = grouped([
            link("u1", None),
            link("a1", Some("u1")),
            link("u2", None),
            link("a2", Some("a1")),
            link("x", Some("nobody")),
            link("a3", Some("u2")),
            (None, None),
        ]);
        assert_eq!(order, [0, 1, 3, 2, 5, 4, 6]);
    }
}

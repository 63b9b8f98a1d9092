//! Inputs whose records are joined from several places: a folder tree of JSON files
//! (`format: tree`) or an SQLite database opened read-only (`format: sqlite`).
//!
//! The adapter's `join` block says where the session, its records, each record's children and
//! its child sessions are; this module knows no harness. The result is the same record stream
//! a `json` input gives, so one `event_map` reads every layout.
//!
//! - `tree`: folder trees of JSON files, listed and parsed on every core;
//! - `sql`: SQLite databases, opened read-only with every query bounded.

mod sql;
mod tree;

use rayon::prelude::*;
use serde_json::{Map, Value as Json};
use std::path::Path;

use crate::adapters::needs::Needs;
use crate::adapters::pattern;
use crate::adapters::spec::{InputFormat, InputSpec, JoinLevel, JoinSpec};
use crate::warning::Warning;

use sql::Sql;
use tree::Tree;
pub(crate) use tree::tree_root;

/// How deep child sessions are followed.
const MAX_DEPTH: usize = 4;

/// Records are joined with their children this many at a time: the parsed files of one
/// chunk are held at once, then each record is made into what the reader keeps of it.
const CHUNK: usize = 256;

/// A joined session: its records in order (each as the reader keeps it: by default the
/// record itself), and its child sessions.
#[derive(Debug)]
pub(crate) struct Joined<T = Json> {
    /// The session's id (at the session level's `id`), when it has one.
    pub(crate) id: Option<String>,
    /// Records, in the order the adapter declared.
    pub(crate) records: Vec<T>,
    /// Child sessions, each joined the same way.
    pub(crate) children: Vec<Joined<T>>,
}

/// Why a joined input could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JoinError {
    /// No session was found.
    #[error("no session found ({0})")]
    NoSession(String),
    /// The database could not be opened or queried.
    #[error("database: {0}")]
    Sql(String),
}

/// Opens a tree root or a database file as the adapter's `join` describes it.
fn open<'a>(
    path: &Path,
    input: &'a InputSpec,
) -> Result<(Box<dyn Source>, &'a JoinSpec), JoinError> {
    let Some(join) = &input.join else {
        return Err(JoinError::NoSession(
            "the adapter declares no `join`".into(),
        ));
    };
    let source: Box<dyn Source> = match input.format {
        InputFormat::Sqlite => Box::new(Sql::open(path)?),
        _ => Box::new(Tree {
            root: path.to_owned(),
        }),
    };
    Ok((source, join))
}

/// Reads one joined session from a tree root or a database file: the one whose id is `want`,
/// else the one the session level picks (the newest).
/// With `needs`, each file of a tree is parsed into only what the adapter reads of the record
/// it joins into. Each joined record is given to `keep` (on any core, soon after it is
/// joined), and what it returns is kept in its place.
pub(crate) fn read<T: Send>(
    path: &Path,
    input: &InputSpec,
    want: Option<&str>,
    needs: Option<&Needs>,
    keep: &(dyn Fn(Json) -> T + Sync),
    warnings: &mut Vec<Warning>,
) -> Result<Joined<T>, JoinError> {
    let (mut source, join) = open(path, input)?;
    let plan = needs.map(|n| Plan::of(n, join));
    let plan = plan.as_ref();
    let sessions = source.level(
        &join.session,
        &Json::Null,
        plan.map(|p| &p.session),
        warnings,
    )?;
    let session = match want {
        Some(id) => candidates(sessions, &join.session)
            .into_iter()
            .find(|c| id_of(c, &join.session).as_deref() == Some(id))
            .ok_or_else(|| JoinError::NoSession(format!("it holds no session `{id}`")))?,
        None => pick(sessions, &join.session)
            .ok_or_else(|| JoinError::NoSession(source.describe(&join.session)))?,
    };
    session_records(source.as_mut(), join, plan, keep, session, 0, warnings)
}

/// What the adapter reads of each level's objects.
struct Plan {
    session: Needs,
    records: Needs,
    children: Needs,
}

impl Plan {
    /// Where each level's objects go in the records (under its `as`, a child list under the
    /// record's `into`), plus what the join itself reads of them: the fields of a parent a
    /// file pattern names, and the pointers that pick, link and order them.
    fn of(needs: &Needs, join: &JoinSpec) -> Self {
        let wrapped = |needs: Needs, level: &JoinLevel| match &level.wrap {
            Some(key) => needs.member(key),
            None => needs,
        };
        let own = |mut needs: Needs, level: &JoinLevel| {
            for p in [&level.latest, &level.unless, &level.order_by]
                .into_iter()
                .flatten()
            {
                needs.read(p);
            }
            if let Some(link) = &level.link {
                needs.read(&format!("/{link}"));
            }
            needs
        };
        let names = |needs: &mut Needs, level: Option<&JoinLevel>| {
            let pattern = level.and_then(|l| l.files.as_deref()).unwrap_or_default();
            for name in pattern::placeholders(pattern) {
                needs.read(&format!("/{name}"));
            }
        };
        let mut session = own(wrapped(needs.clone(), &join.session), &join.session);
        if let Some(id) = &join.session.id {
            session.read(id);
        }
        if let Some(subs) = &join.subsessions {
            session = own(session, subs);
        }
        names(&mut session, Some(&join.records));
        names(&mut session, join.subsessions.as_ref());
        let mut records = own(wrapped(needs.clone(), &join.records), &join.records);
        names(&mut records, join.children.as_ref());
        let children = match &join.children {
            Some(c) => {
                let into = c.into.as_deref().map_or(Needs::all(), |k| needs.member(k));
                own(wrapped(into.element(), c), c)
            }
            None => Needs::default(),
        };
        Self {
            session,
            records,
            children,
        }
    }
}

/// The ids of every session a tree root or database file holds (child sessions excluded),
/// newest first.
pub(crate) fn session_ids(path: &Path, input: &InputSpec) -> Result<Vec<String>, JoinError> {
    let (mut source, join) = open(path, input)?;
    let mut sessions = candidates(
        source.level(&join.session, &Json::Null, None, &mut Vec::new())?,
        &join.session,
    );
    if let Some(p) = &join.session.latest {
        sessions.sort_by(|a, b| cmp_json(b.pointer(p), a.pointer(p)));
    }
    Ok(sessions
        .iter()
        .filter_map(|s| id_of(s, &join.session))
        .collect())
}

/// A session's own id, at the session level's `id` pointer (subsessions are sessions too).
fn id_of(session: &Json, level: &JoinLevel) -> Option<String> {
    let at = level.id.as_deref()?;
    session
        .pointer(at)
        .map(crate::adapters::interpret::scalar_string)
}

/// The sessions the level does not exclude with `unless`.
fn candidates(sessions: Vec<Json>, level: &JoinLevel) -> Vec<Json> {
    sessions
        .into_iter()
        .filter(|c| {
            level
                .unless
                .as_deref()
                .is_none_or(|p| c.pointer(p).is_none_or(Json::is_null))
        })
        .collect()
}

fn session_records<T: Send>(
    source: &mut dyn Source,
    join: &JoinSpec,
    plan: Option<&Plan>,
    keep: &(dyn Fn(Json) -> T + Sync),
    session: Json,
    depth: usize,
    warnings: &mut Vec<Warning>,
) -> Result<Joined<T>, JoinError> {
    let mut out = Joined {
        id: id_of(&session, &join.session),
        records: Vec::new(),
        children: Vec::new(),
    };
    let mut records = source.level(&join.records, &session, plan.map(|p| &p.records), warnings)?;
    order(&mut records, &join.records);
    let mut rest = records.into_iter();
    loop {
        let chunk: Vec<Json> = rest.by_ref().take(CHUNK).collect();
        if chunk.is_empty() {
            break;
        }
        let joined: Vec<Json> = match &join.children {
            Some(children) => {
                let kids_of =
                    source.levels(children, &chunk, plan.map(|p| &p.children), warnings)?;
                chunk
                    .into_iter()
                    .zip(kids_of)
                    .map(|(record, mut kids)| {
                        order(&mut kids, children);
                        let kids: Vec<Json> = kids.into_iter().map(|k| wrap(k, children)).collect();
                        let mut record = wrap(record, &join.records);
                        if let (Json::Object(map), Some(into)) = (&mut record, &children.into) {
                            map.insert(into.clone(), Json::Array(kids));
                        }
                        record
                    })
                    .collect()
            }
            None => chunk.into_iter().map(|r| wrap(r, &join.records)).collect(),
        };
        let kept: Vec<T> = joined.into_par_iter().map(keep).collect();
        out.records.extend(kept);
    }
    if let Some(subs) = &join.subsessions
        && depth < MAX_DEPTH
    {
        let mut children = source.level(subs, &session, plan.map(|p| &p.session), warnings)?;
        if let (Some(link), Some(id)) = (&subs.link, &out.id) {
            children.retain(|c| c.get(link).and_then(Json::as_str) == Some(id.as_str()));
        }
        order(&mut children, subs);
        for child in children {
            out.children.push(session_records(
                source,
                join,
                plan,
                keep,
                child,
                depth + 1,
                warnings,
            )?);
        }
    }
    if join.session.wrap.is_some() {
        out.records.insert(0, keep(wrap(session, &join.session)));
    }
    Ok(out)
}

/// Of several sessions, the one the level picks: not excluded by `unless`, greatest `latest`.
fn pick(sessions: Vec<Json>, level: &JoinLevel) -> Option<Json> {
    let mut best: Option<Json> = None;
    for c in candidates(sessions, level) {
        let newer = match (&best, &level.latest) {
            (None, _) => true,
            (Some(b), Some(p)) => cmp_json(c.pointer(p), b.pointer(p)).is_ge(),
            (Some(_), None) => false,
        };
        if newer {
            best = Some(c);
        }
    }
    best
}

fn order(items: &mut [Json], level: &JoinLevel) {
    if let Some(p) = &level.order_by {
        items.sort_by(|a, b| cmp_json(a.pointer(p), b.pointer(p)));
    }
}

/// Numbers by value, strings by text, absent values first.
fn cmp_json(a: Option<&Json>, b: Option<&Json>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(Json::Number(x)), Some(Json::Number(y))) => x
            .as_f64()
            .unwrap_or(0.0)
            .total_cmp(&y.as_f64().unwrap_or(0.0)),
        (Some(x), Some(y)) => crate::adapters::interpret::scalar_string(x)
            .cmp(&crate::adapters::interpret::scalar_string(y)),
        (None, Some(_)) => std::cmp::Ordering::Less,
        (Some(_), None) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}

fn wrap(obj: Json, level: &JoinLevel) -> Json {
    match &level.wrap {
        Some(key) => {
            let mut map = Map::new();
            map.insert(key.clone(), obj);
            Json::Object(map)
        }
        None => obj,
    }
}

/// A parent's top-level field as text, for a file placeholder or a query parameter.
pub(super) fn field(parent: &Json, name: &str) -> Option<String> {
    let v = parent.get(name)?;
    let s = match v {
        Json::String(s) => s.clone(),
        Json::Number(n) => n.to_string(),
        _ => return None,
    };
    Some(s)
}

/// Where a join's objects come from: a folder tree or a database.
pub(super) trait Source {
    /// The objects of one level, for one parent; with `needs`, only what is read of them.
    fn level(
        &mut self,
        level: &JoinLevel,
        parent: &Json,
        needs: Option<&Needs>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<Json>, JoinError>;
    /// The objects of one level for each of `parents`, in order.
    fn levels(
        &mut self,
        level: &JoinLevel,
        parents: &[Json],
        needs: Option<&Needs>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<Vec<Json>>, JoinError> {
        parents
            .iter()
            .map(|parent| self.level(level, parent, needs, warnings))
            .collect()
    }
    /// Where a level looked, for messages.
    fn describe(&self, level: &JoinLevel) -> String;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    #[test]
    fn picks_the_latest_top_level_session() {
        let level: JoinLevel = serde_json::from_value(json!({
            "files": "s/*.json", "latest": "/time", "unless": "/parentID"
        }))
        .expect("level parses");
        let got = pick(
            vec![
                json!({"id": "a", "time": 5}),
                json!({"id": "b", "time": 9, "parentID": "a"}),
                json!({"id": "c", "time": 7}),
                json!({"id": "d", "time": 1}),
            ],
            &level,
        );
        assert_eq!(got, Some(json!({"id": "c", "time": 7})));
    }

    #[test]
    fn a_tree_read_for_an_adapter_keeps_what_it_reads_and_joins() {
        let set = crate::adapters::AdapterSet::load(None).expect("built-in adapters load");
        let (spec, layout) = opencode_tree(&set);
        let root = fixture();
        let whole =
            read(&root, layout, None, None, &|r| r, &mut Vec::new()).expect("the tree reads");
        let needs = Needs::of(spec);
        let picked =
            read(&root, layout, None, Some(&needs), &|r| r, &mut Vec::new()).expect("reads");
        // The same records in the same order, joined the same way, with less of each kept.
        assert_eq!(whole.records.len(), picked.records.len());
        assert!(whole.records.len() > 3);
        let size = |j: &Joined| serde_json::to_string(&j.records).map_or(0, |s| s.len());
        assert!(size(&picked) < size(&whole));
        let raw = |records: Vec<Json>| {
            let mut it = crate::adapters::interpret::Interpreter::new(spec);
            it.records(records.into_iter().enumerate().collect());
            format!("{:?}", it.finish())
        };
        assert_eq!(raw(whole.records), raw(picked.records));
    }

    #[test]
    fn bad_files_of_a_tree_are_named_in_record_order_and_the_rest_is_joined() {
        let fixture = fixture();
        let dir = tempfile::tempdir().expect("a temporary folder");
        let root = dir.path().join("storage");
        for entry in walk(&fixture) {
            let to = root.join(entry.strip_prefix(&fixture).expect("under the fixture"));
            std::fs::create_dir_all(to.parent().expect("a parent")).expect("a folder");
            std::fs::copy(&entry, &to).expect("a copy");
        }
        std::fs::write(root.join("part/msg_0003/prt_0007.json"), "{\"id\": ").expect("write");
        std::fs::write(root.join("part/msg_0002/prt_0003.json"), "[1]").expect("write");
        let set = crate::adapters::AdapterSet::load(None).expect("built-in adapters load");
        let (spec, layout) = opencode_tree(&set);
        let mut warnings = Vec::new();
        let joined = read(
            &root,
            layout,
            None,
            Some(&Needs::of(spec)),
            &|r| r,
            &mut warnings,
        )
        .expect("the tree reads");
        let said: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].contains("prt_0003.json") && said[0].contains("not a JSON object"));
        assert!(said[1].contains("prt_0007.json") && said[1].contains("not valid JSON"));
        let parts = |id: &str| {
            joined
                .records
                .iter()
                .find(|r| r.pointer("/info/id").and_then(Json::as_str) == Some(id))
                .and_then(|r| r.get("parts"))
                .and_then(Json::as_array)
                .map_or(0, Vec::len)
        };
        assert_eq!(
            (parts("msg_0002"), parts("msg_0003"), parts("msg_0004")),
            (3, 6, 1)
        );
    }

    /// An adapter whose tree names each session by `/meta/key`, and a tree of two sessions.
    fn keyed_tree() -> (crate::adapters::spec::AdapterSpec, tempfile::TempDir) {
        let spec = crate::adapters::spec::AdapterSpec::parse(
            "t.yaml",
            r#"
name: t
label: T
input:
  format: tree
  join:
    session: { files: "s/*.json", id: /meta/key, latest: /t }
    records: { files: "m/{name}/*.json", order_by: /n }
event_map: [{ skip: all }]
"#,
        )
        .expect("test adapter parses");
        let dir = tempfile::tempdir().expect("a temporary folder");
        let files = [
            (
                "s/a.json",
                r#"{"meta": {"key": "k1"}, "name": "a", "t": 1}"#,
            ),
            (
                "s/b.json",
                r#"{"meta": {"key": "k2"}, "name": "b", "t": 2}"#,
            ),
            ("m/a/1.json", r#"{"n": 1}"#),
            ("m/b/1.json", r#"{"n": 1}"#),
            ("m/b/2.json", r#"{"n": 2}"#),
        ];
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
            std::fs::write(path, text).expect("write");
        }
        (spec, dir)
    }

    #[test]
    fn a_session_is_named_by_the_pointer_its_level_gives() {
        let (spec, dir) = keyed_tree();
        let root = dir.path();
        let ids = session_ids(root, &spec.input).expect("the tree lists");
        assert_eq!(ids, ["k2", "k1"], "newest first, by the `id` pointer");
        let wanted = read(root, &spec.input, Some("k1"), None, &|r| r, &mut Vec::new())
            .expect("k1 is there");
        assert_eq!(
            (wanted.id.as_deref(), wanted.records.len()),
            (Some("k1"), 1)
        );
        // Pruned to what the adapter reads, the session keeps the field its id is at.
        let needs = Needs::of(&spec);
        let newest = read(
            root,
            &spec.input,
            None,
            Some(&needs),
            &|r| r,
            &mut Vec::new(),
        )
        .expect("the newest reads");
        assert_eq!(
            (newest.id.as_deref(), newest.records.len()),
            (Some("k2"), 2)
        );
    }

    #[test]
    fn a_session_id_pointer_belongs_on_the_session_level() {
        let yaml = |records: &str| {
            format!(
                "name: t\nlabel: T\ninput:\n  format: tree\n  join:\n    session: {{ files: \"s/*.json\", id: /id }}\n    records: {records}\nevent_map: [{{ skip: all }}]\n"
            )
        };
        let spec = crate::adapters::spec::AdapterSpec::parse;
        assert!(spec("t.yaml", &yaml(r#"{ files: "m/*.json" }"#)).is_ok());
        let err = spec("t.yaml", &yaml(r#"{ files: "m/*.json", id: /id }"#))
            .expect_err("an id on records is refused");
        assert!(err.to_string().contains("join.records.id"), "{err}");
        let err = spec(
            "t.yaml",
            &yaml(r#"{ files: "m/*.json" }"#).replace("id: /id", "id: id"),
        )
        .expect_err("an id that is not a pointer is refused");
        assert!(err.to_string().contains("not a pointer"), "{err}");
    }

    /// The built-in OpenCode adapter and its tree layout.
    fn opencode_tree(
        set: &crate::adapters::AdapterSet,
    ) -> (&crate::adapters::spec::AdapterSpec, &InputSpec) {
        let spec = &set.get("opencode").expect("the OpenCode adapter").spec;
        let layout = spec
            .input
            .layouts
            .iter()
            .find(|l| l.format == InputFormat::Tree)
            .expect("a tree layout");
        (spec, layout)
    }

    /// The OpenCode storage tree fixture.
    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/opencode/storage-tree/tree/storage")
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).expect("a readable folder").flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }
}

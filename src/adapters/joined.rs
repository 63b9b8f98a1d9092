//! Inputs whose records are joined from several places: a folder tree of JSON files
//! (`format: tree`) or an SQLite database opened read-only (`format: sqlite`).
//!
//! The adapter's `join` block says where the session, its records, each record's children and
//! its child sessions are; this module knows no harness. The result is the same record stream
//! a `json` input gives, so one `event_map` reads every layout.

use rayon::prelude::*;
use serde_json::{Map, Value as Json};
use std::path::{Path, PathBuf};

use super::needs::{self, Needs};
use super::spec::{InputFormat, InputSpec, JoinLevel, JoinSpec};
use crate::warning::Warning;

/// How deep child sessions are followed.
const MAX_DEPTH: usize = 4;

/// Records are joined with their children this many at a time: the parsed files of one
/// chunk are held at once, then each record is made into what the reader keeps of it.
const CHUNK: usize = 256;

/// A joined session: its records in order (each as the reader keeps it: by default the
/// record itself), and its child sessions.
#[derive(Debug)]
pub(crate) struct Joined<T = Json> {
    /// The session's id (its `id` field), when it has one.
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

/// The tree root inside `dir` where the adapter's session files are, if any.
pub(crate) fn tree_root(dir: &Path, join: &JoinSpec) -> Option<PathBuf> {
    let pattern = join.session.files.as_deref()?;
    let roots: Vec<&str> = if join.roots.is_empty() {
        vec!["."]
    } else {
        join.roots.iter().map(String::as_str).collect()
    };
    roots
        .into_iter()
        .map(|r| {
            if r == "." {
                dir.to_owned()
            } else {
                dir.join(r)
            }
        })
        .find(|root| root.is_dir() && !glob(root, pattern, &Json::Null).is_empty())
}

/// Whether a file starts with the SQLite header.
pub(crate) fn is_sqlite(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"SQLite format 3\0"
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
            .find(|c| {
                c.get("id")
                    .map(crate::adapters::interpret::scalar_string)
                    .as_deref()
                    == Some(id)
            })
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
            for name in placeholders(pattern) {
                needs.read(&format!("/{name}"));
            }
        };
        let mut session = own(wrapped(needs.clone(), &join.session), &join.session);
        session.read("/id");
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

/// The names of the `{field}` placeholders of a file pattern.
fn placeholders(pattern: &str) -> impl Iterator<Item = &str> {
    pattern
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
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
    Ok(sessions.iter().filter_map(id_of).collect())
}

/// A session's own id.
fn id_of(session: &Json) -> Option<String> {
    session
        .get("id")
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
        id: id_of(&session),
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
fn field(parent: &Json, name: &str) -> Option<String> {
    let v = parent.get(name)?;
    let s = match v {
        Json::String(s) => s.clone(),
        Json::Number(n) => n.to_string(),
        _ => return None,
    };
    Some(s)
}

trait Source {
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

struct Tree {
    root: PathBuf,
}

impl Tree {
    /// The files matching a level's pattern for each parent, each list in path order: the
    /// folders are listed on every core.
    fn files(&self, pattern: &str, parents: &[Json]) -> Vec<Vec<PathBuf>> {
        parents
            .par_iter()
            .map(|parent| glob(&self.root, pattern, parent))
            .collect()
    }

    /// Reads and parses files on every core, in order; a file that cannot be read or is not
    /// a JSON object is a warning. Files are read into a buffer each worker reuses: a tree
    /// holds tens of thousands of small files, and asking each one's size first (to size a
    /// new buffer) costs a system call of its own.
    fn read(&self, paths: &[PathBuf], needs: Option<&Needs>) -> Vec<Result<Json, Warning>> {
        paths
            .par_iter()
            .map_init(Vec::new, |bytes, path| {
                let name = || {
                    path.strip_prefix(&self.root)
                        .map(|p| p.to_string_lossy().into_owned())
                        .unwrap_or_else(|_| super::load::display_name(path))
                };
                match read_into(path, bytes) {
                    Ok(()) => match parse(bytes, needs) {
                        Ok(v @ Json::Object(_)) => Ok(v),
                        Ok(_) => Err(Warning::whole(&name(), "not a JSON object; skipped")),
                        Err(e) => Err(Warning::whole(
                            &name(),
                            format!("not valid JSON (line {}); skipped", e.line()),
                        )),
                    },
                    Err(e) => Err(Warning::whole(&name(), format!("unreadable: {e}"))),
                }
            })
            .collect()
    }
}

/// The objects read, in order; what could not be read goes to `warnings`.
fn kept(
    read: impl IntoIterator<Item = Result<Json, Warning>>,
    warnings: &mut Vec<Warning>,
) -> Vec<Json> {
    let mut out = Vec::new();
    for r in read {
        match r {
            Ok(v) => out.push(v),
            Err(w) => warnings.push(w),
        }
    }
    out
}

impl Source for Tree {
    fn level(
        &mut self,
        level: &JoinLevel,
        parent: &Json,
        needs: Option<&Needs>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<Json>, JoinError> {
        let Some(pattern) = &level.files else {
            return Ok(Vec::new());
        };
        let paths = glob(&self.root, pattern, parent);
        Ok(kept(self.read(&paths, needs), warnings))
    }

    /// Every parent's files are listed, then read, together: a session's records each have a
    /// folder of a few small files, too few to keep the cores busy one record at a time.
    fn levels(
        &mut self,
        level: &JoinLevel,
        parents: &[Json],
        needs: Option<&Needs>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<Vec<Json>>, JoinError> {
        let Some(pattern) = &level.files else {
            return Ok(vec![Vec::new(); parents.len()]);
        };
        let lists = self.files(pattern, parents);
        let lens: Vec<usize> = lists.iter().map(Vec::len).collect();
        let all: Vec<PathBuf> = lists.into_iter().flatten().collect();
        let mut read = self.read(&all, needs).into_iter();
        Ok(lens
            .into_iter()
            .map(|n| kept(read.by_ref().take(n), warnings))
            .collect())
    }

    fn describe(&self, level: &JoinLevel) -> String {
        format!(
            "looked for {} in {}",
            level.files.as_deref().unwrap_or_default(),
            super::load::display_name(&self.root)
        )
    }
}

/// Reads a whole file into `bytes`, replacing what it held; a file longer than a record may
/// be ([`MAX_LINE`](super::load::MAX_LINE)) is an error, read no further.
fn read_into(path: &Path, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read as _;
    const MAX: usize = super::load::MAX_LINE;
    bytes.clear();
    std::fs::File::open(path)?
        .take(MAX as u64 + 1)
        .read_to_end(bytes)?;
    if bytes.len() > MAX {
        bytes.clear();
        return Err(std::io::Error::other(format!(
            "larger than the {} MiB a record may be",
            MAX >> 20
        )));
    }
    Ok(())
}

/// A file's JSON, with `needs` only what is read of it.
fn parse(bytes: &[u8], needs: Option<&Needs>) -> serde_json::Result<Json> {
    match (needs, std::str::from_utf8(bytes)) {
        (Some(needs), Ok(text)) => needs::parse(text, needs),
        _ => serde_json::from_slice(bytes),
    }
}

/// Files under `root` matching `pattern` (`/`-separated; `*` within one name; `{field}` is the
/// parent's field), sorted by path. A placeholder whose value could leave the folder matches
/// nothing.
fn glob(root: &Path, pattern: &str, parent: &Json) -> Vec<PathBuf> {
    let mut current = vec![root.to_owned()];
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    for (i, seg) in segments.iter().enumerate() {
        let Some(seg) = substitute(seg, parent) else {
            return Vec::new();
        };
        let last = i + 1 == segments.len();
        let mut next = Vec::new();
        for dir in &current {
            if !seg.contains('*') {
                // A folder is not checked here: listing it (the next segment) or looking for
                // a file in it finds nothing when it is not one.
                let p = dir.join(&seg);
                if !last || p.is_file() {
                    next.push(p);
                }
                continue;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            // The entry's own type (no system call on most file systems), names first; a
            // symbolic link is followed to what it points at.
            let wanted = |t: std::fs::FileType| if last { t.is_file() } else { t.is_dir() };
            let mut found: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| super::load::wildcard(&seg, n))
                })
                .filter(|e| match e.file_type() {
                    Ok(t) if !t.is_symlink() => wanted(t),
                    _ => std::fs::metadata(e.path()).is_ok_and(|m| wanted(m.file_type())),
                })
                .map(|e| e.path())
                .collect();
            found.sort();
            next.extend(found);
        }
        current = next;
    }
    current
}

/// Replaces `{field}` placeholders with the parent's values; `None` when one is missing or
/// unsafe as a file name.
fn substitute(segment: &str, parent: &Json) -> Option<String> {
    let mut out = String::new();
    let mut rest = segment;
    while let Some(start) = rest.find('{') {
        let end = rest[start..].find('}')? + start;
        out.push_str(&rest[..start]);
        let value = field(parent, &rest[start + 1..end])?;
        if value.is_empty() || value.contains(['/', '\\']) || value == ".." || value == "." {
            return None;
        }
        out.push_str(&value);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

struct Sql {
    conn: rusqlite::Connection,
}

impl Sql {
    fn open(path: &Path) -> Result<Self, JoinError> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = rusqlite::Connection::open_with_flags(path, flags)
            .map_err(|e| JoinError::Sql(e.to_string()))?;
        // Belt and braces: refuse any write on this connection.
        conn.pragma_update(None, "query_only", true)
            .map_err(|e| JoinError::Sql(e.to_string()))?;
        Ok(Self { conn })
    }
}

impl Source for Sql {
    /// Rows are small: they are read whole.
    fn level(
        &mut self,
        level: &JoinLevel,
        parent: &Json,
        _needs: Option<&Needs>,
        warnings: &mut Vec<Warning>,
    ) -> Result<Vec<Json>, JoinError> {
        let Some(query) = &level.query else {
            return Ok(Vec::new());
        };
        let err = |e: rusqlite::Error| JoinError::Sql(e.to_string());
        let mut stmt = self.conn.prepare_cached(query).map_err(err)?;
        for i in 1..=stmt.parameter_count() {
            let name = stmt
                .parameter_name(i)
                .map(|n| n.trim_start_matches([':', '@', '$']).to_owned())
                .unwrap_or_default();
            let value = field(parent, &name);
            stmt.raw_bind_parameter(i, value).map_err(err)?;
        }
        let columns: Vec<String> = stmt
            .column_names()
            .iter()
            .map(|c| (*c).to_owned())
            .collect();
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(err)? {
            let mut obj = Map::new();
            let mut merged: Option<Map<String, Json>> = None;
            for (i, name) in columns.iter().enumerate() {
                let value = match row.get_ref(i).map_err(err)? {
                    rusqlite::types::ValueRef::Null => Json::Null,
                    rusqlite::types::ValueRef::Integer(n) => Json::from(n),
                    rusqlite::types::ValueRef::Real(f) => Json::from(f),
                    rusqlite::types::ValueRef::Text(t) => {
                        Json::String(String::from_utf8_lossy(t).into_owned())
                    }
                    rusqlite::types::ValueRef::Blob(_) => Json::Null,
                };
                if level.merge.as_deref() == Some(name.as_str()) {
                    let text = value.as_str().unwrap_or_default();
                    match serde_json::from_str::<Json>(text) {
                        Ok(Json::Object(m)) => merged = Some(m),
                        _ => warnings.push(Warning::whole(
                            "database",
                            format!("a row's `{name}` column is not a JSON object; row skipped"),
                        )),
                    }
                } else {
                    obj.insert(name.clone(), value);
                }
            }
            match (&level.merge, merged) {
                (None, _) => out.push(Json::Object(obj)),
                (Some(_), Some(mut m)) => {
                    // The JSON column had its id fields removed: put them back from columns.
                    for (k, v) in obj {
                        m.entry(k).or_insert(v);
                    }
                    out.push(Json::Object(m));
                }
                (Some(_), None) => {}
            }
        }
        Ok(out)
    }

    fn describe(&self, _level: &JoinLevel) -> String {
        "the session query returned no row".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_cannot_leave_the_folder() {
        assert_eq!(
            substitute("{id}", &json!({"id": "msg_1"})).as_deref(),
            Some("msg_1")
        );
        assert_eq!(substitute("{id}", &json!({"id": "../x"})), None);
        assert_eq!(substitute("{id}", &json!({"id": ".."})), None);
        assert_eq!(substitute("{id}", &json!({})), None);
    }

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

    /// The built-in OpenCode adapter and its tree layout.
    fn opencode_tree(
        set: &crate::adapters::AdapterSet,
    ) -> (&super::super::spec::AdapterSpec, &InputSpec) {
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

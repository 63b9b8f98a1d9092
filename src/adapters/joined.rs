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

/// What reading one database may cost. A database is untrusted input: a table can be a view
/// over an endless recursive query, or hold millions of rows.
#[derive(Debug, Clone, Copy)]
struct Budget {
    /// Wall time for every query of one read together.
    time: std::time::Duration,
    /// Rows, over every query of one read.
    rows: usize,
    /// Bytes of text, over every query of one read.
    bytes: usize,
}

impl Budget {
    const DEFAULT: Budget = Budget {
        time: std::time::Duration::from_secs(30),
        rows: 2_000_000,
        bytes: 1 << 30,
    };
}

/// How long a query waits for another program's lock before saying the database is locked.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The longest single value read from a database: the same bound as a line of a log.
const MAX_VALUE: usize = super::load::MAX_LINE;

struct Sql {
    conn: rusqlite::Connection,
    budget: Budget,
    /// Rows and bytes read so far.
    spent: (usize, usize),
    /// Set when the time budget stopped a query.
    timed_out: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Why the authorizer refused a statement, when it did.
    refused: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl Sql {
    fn open(path: &Path) -> Result<Self, JoinError> {
        Self::with_budget(path, Budget::DEFAULT)
    }

    /// Opens a database read-only, with every query bounded: a time limit over the whole read
    /// (a progress handler), a short wait for another program's lock, a size limit on each
    /// value, and an authorizer that lets a query read tables only, never through a view or a
    /// trigger and never recursively.
    fn with_budget(path: &Path, budget: Budget) -> Result<Self, JoinError> {
        use rusqlite::OpenFlags;
        // SQLite says only "unable to open database file": the system says why.
        std::fs::File::open(path)
            .map_err(|e| JoinError::Sql(format!("the file cannot be opened: {e}")))?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = rusqlite::Connection::open_with_flags(path, flags).map_err(|e| sql_error(&e))?;
        let sql = Self::bounded(conn, budget)?;
        // A database in a folder this user cannot write cannot be opened for reading in WAL
        // mode (SQLite needs its shared-memory file there). Without a write-ahead log beside
        // it the file is all there is: it is read as immutable.
        // Only that: a database another program has locked is mid-write, and reading its file
        // as immutable could see half of a transaction.
        use rusqlite::ffi::ErrorCode;
        match sql.check() {
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly)
                ) && can_be_immutable(path) =>
            {
                let flags = flags | OpenFlags::SQLITE_OPEN_URI;
                let conn = rusqlite::Connection::open_with_flags(immutable_uri(path), flags)
                    .map_err(|e| sql_error(&e))?;
                let sql = Self::bounded(conn, budget)?;
                sql.check().map_err(|e| sql.error(&e))?;
                Ok(sql)
            }
            Err(e) => Err(sql.error(&e)),
            Ok(()) => Ok(sql),
        }
    }

    fn bounded(conn: rusqlite::Connection, budget: Budget) -> Result<Self, JoinError> {
        use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
        let err = |e: rusqlite::Error| sql_error(&e);
        // Belt and braces: refuse any write on this connection.
        conn.pragma_update(None, "query_only", true).map_err(err)?;
        conn.busy_timeout(BUSY_WAIT).map_err(err)?;
        let length = i32::try_from(MAX_VALUE).unwrap_or(i32::MAX);
        conn.set_limit(rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH, length)
            .map_err(err)?;
        let started = std::time::Instant::now();
        let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = timed_out.clone();
        conn.progress_handler(
            10_000,
            Some(move || {
                let over = started.elapsed() > budget.time;
                if over {
                    flag.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                over
            }),
        )
        .map_err(err)?;
        let refused = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
        let why = refused.clone();
        // The database's own views and triggers (lowercase), read from its schema below; an
        // access on behalf of one is refused. (An access on behalf of a `WITH` name of the
        // adapter's own query is not.)
        let schema = std::sync::Arc::new(std::sync::RwLock::new(
            std::collections::HashSet::<String>::new(),
        ));
        let views = schema.clone();
        conn.authorizer(Some(move |ctx: AuthContext<'_>| {
            let of_schema =
                |name: &str| views.read().is_ok_and(|v| v.contains(&name.to_lowercase()));
            let reason = match (&ctx.action, ctx.accessor) {
                (_, Some(view)) if of_schema(view) => Some(format!(
                    "`{}` is a view or a trigger, where a table is expected; it is not read",
                    shown_name(view)
                )),
                (
                    AuthAction::Select
                    | AuthAction::Read { .. }
                    | AuthAction::Function { .. }
                    | AuthAction::Recursive
                    | AuthAction::Pragma { .. },
                    _,
                ) => None,
                _ => Some("only reading is allowed".to_owned()),
            };
            match reason {
                None => Authorization::Allow,
                Some(r) => {
                    if let Ok(mut slot) = why.lock() {
                        slot.get_or_insert(r);
                    }
                    Authorization::Deny
                }
            }
        }))
        .map_err(err)?;
        let names: Vec<String> = {
            let mut stmt = conn
                .prepare(
                    "SELECT name FROM sqlite_schema WHERE type IN ('view', 'trigger') LIMIT 100000",
                )
                .map_err(err)?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(err)?;
            rows.filter_map(Result::ok).collect()
        };
        if let Ok(mut set) = schema.write() {
            set.extend(names.into_iter().map(|n| n.to_lowercase()));
        }
        Ok(Self {
            conn,
            budget,
            spent: (0, 0),
            timed_out,
            refused,
        })
    }

    /// Reads the schema, which fails on a damaged, locked or unopenable file.
    fn check(&self) -> rusqlite::Result<()> {
        self.conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |_| Ok(()))
    }

    /// An error of this connection in words: what the authorizer refused, or the time budget
    /// stopped, before SQLite's own message.
    fn error(&self, e: &rusqlite::Error) -> JoinError {
        if let Some(r) = self.refused.lock().ok().and_then(|mut r| r.take()) {
            return JoinError::Sql(r);
        }
        if self.timed_out.load(std::sync::atomic::Ordering::Relaxed) {
            return JoinError::Sql(format!(
                "reading it took longer than {} s; stopped",
                self.budget.time.as_secs_f64()
            ));
        }
        sql_error(e)
    }
}

/// SQLite's error in words that name the cause and the way out.
fn sql_error(e: &rusqlite::Error) -> JoinError {
    use rusqlite::ffi::ErrorCode;
    let text = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            format!("the database is locked by another program ({e}); try again when it is done")
        }
        Some(ErrorCode::DatabaseCorrupt) => format!("the database is damaged ({e})"),
        Some(ErrorCode::NotADatabase) => format!("not an SQLite database ({e})"),
        Some(ErrorCode::TooBig) => format!(
            "a value in the database is larger than the {} MiB one may be ({e})",
            MAX_VALUE >> 20
        ),
        Some(ErrorCode::CannotOpen) => format!("the database cannot be opened ({e})"),
        _ => e.to_string(),
    };
    JoinError::Sql(text)
}

/// A name from a database, shown: at most 64 characters, nothing that is not printable.
fn shown_name(name: &str) -> String {
    name.chars()
        .take(64)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Whether a database may be read as immutable: no write-ahead log beside it, so the file
/// holds every committed row.
fn can_be_immutable(path: &Path) -> bool {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    cfg!(unix) && !Path::new(&wal).exists()
}

/// The `file:` URI of a path with `immutable=1`, its bytes percent-encoded where a URI needs.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(char::from(*b));
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
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
        let result = read_rows(
            &self.conn,
            query,
            level,
            parent,
            self.budget,
            &mut self.spent,
            warnings,
        );
        result.map_err(|e| match e {
            RowsError::Sql(e) => self.error(&e),
            RowsError::Budget(what) => JoinError::Sql(what),
        })
    }

    fn describe(&self, _level: &JoinLevel) -> String {
        "the session query returned no row".to_owned()
    }
}

/// Why reading a level's rows stopped.
enum RowsError {
    Sql(rusqlite::Error),
    Budget(String),
}

impl From<rusqlite::Error> for RowsError {
    fn from(e: rusqlite::Error) -> Self {
        RowsError::Sql(e)
    }
}

/// Runs a level's query for one parent and reads its rows, within what is left of the budget.
fn read_rows(
    conn: &rusqlite::Connection,
    query: &str,
    level: &JoinLevel,
    parent: &Json,
    budget: Budget,
    spent: &mut (usize, usize),
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Json>, RowsError> {
    let mut stmt = conn.prepare_cached(query)?;
    for i in 1..=stmt.parameter_count() {
        let name = stmt
            .parameter_name(i)
            .map(|n| n.trim_start_matches([':', '@', '$']).to_owned())
            .unwrap_or_default();
        let value = field(parent, &name);
        stmt.raw_bind_parameter(i, value)?;
    }
    let columns: Vec<String> = stmt
        .column_names()
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
    let mut rows = stmt.raw_query();
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        spent.0 += 1;
        if spent.0 > budget.rows {
            return Err(RowsError::Budget(format!(
                "the database gives more than {} rows for one session; not read",
                budget.rows
            )));
        }
        let mut obj = Map::new();
        let mut merged: Option<Map<String, Json>> = None;
        for (i, name) in columns.iter().enumerate() {
            let value = match row.get_ref(i)? {
                rusqlite::types::ValueRef::Null => Json::Null,
                rusqlite::types::ValueRef::Integer(n) => Json::from(n),
                rusqlite::types::ValueRef::Real(f) => Json::from(f),
                rusqlite::types::ValueRef::Text(t) => {
                    spent.1 += t.len();
                    if spent.1 > budget.bytes {
                        return Err(RowsError::Budget(format!(
                            "the database gives more than {} MiB of text for one session; not read",
                            budget.bytes >> 20
                        )));
                    }
                    Json::String(String::from_utf8_lossy(t).into_owned())
                }
                rusqlite::types::ValueRef::Blob(_) => Json::Null,
            };
            if level.merge.as_deref() == Some(name.as_str()) {
                let text = value.as_str().unwrap_or_default();
                match super::load::parse_mended(text, |t| serde_json::from_str::<Json>(t)) {
                    Ok((Json::Object(m), mended)) => {
                        if mended {
                            warnings.push(Warning::whole(
                                "database",
                                format!(
                                    "a row's `{name}` column holds a lone UTF-16 surrogate \
                                     escape, replaced with U+FFFD; row kept"
                                ),
                            ));
                        }
                        merged = Some(m);
                    }
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

    /// A database of one table `t` of `n` rows.
    fn numbers(n: usize) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let db = dir.path().join("n.db");
        let conn = rusqlite::Connection::open(&db).expect("a database");
        conn.execute_batch("CREATE TABLE t (x INTEGER)")
            .expect("a table");
        for i in 0..n {
            conn.execute("INSERT INTO t VALUES (?1)", [i as i64])
                .expect("a row");
        }
        (dir, db)
    }

    fn level(query: &str) -> JoinLevel {
        serde_json::from_value(json!({ "query": query })).expect("level parses")
    }

    #[test]
    fn a_query_past_the_time_budget_is_stopped_and_said() {
        let (_dir, db) = numbers(100);
        let budget = Budget {
            time: std::time::Duration::from_millis(200),
            ..Budget::DEFAULT
        };
        let mut sql = Sql::with_budget(&db, budget).expect("opens");
        let start = std::time::Instant::now();
        // 10^10 combinations, none kept: it would run for minutes.
        let slow =
            level("SELECT a.x FROM t a, t b, t c, t d, t e WHERE a.x + b.x + c.x + d.x + e.x < 0");
        let err = sql
            .level(&slow, &Json::Null, None, &mut Vec::new())
            .expect_err("stopped");
        assert!(start.elapsed().as_secs() < 10);
        assert!(err.to_string().contains("took longer than 0.2 s"), "{err}");
    }

    #[test]
    fn rows_past_the_budget_are_not_read() {
        let (_dir, db) = numbers(50);
        let budget = Budget {
            rows: 20,
            ..Budget::DEFAULT
        };
        let mut sql = Sql::with_budget(&db, budget).expect("opens");
        let err = sql
            .level(
                &level("SELECT x FROM t"),
                &Json::Null,
                None,
                &mut Vec::new(),
            )
            .expect_err("over the budget");
        assert!(err.to_string().contains("more than 20 rows"), "{err}");
    }

    #[test]
    fn only_tables_are_read_and_nothing_is_written() {
        let (_dir, db) = numbers(3);
        let conn = rusqlite::Connection::open(&db).expect("a database");
        conn.execute_batch("CREATE VIEW v AS SELECT x FROM t")
            .expect("a view");
        drop(conn);
        let mut sql = Sql::open(&db).expect("opens");
        let mut read = |q: &str| {
            sql.level(&level(q), &Json::Null, None, &mut Vec::new())
                .map(|rows| rows.len())
                .map_err(|e| e.to_string())
        };
        assert_eq!(read("SELECT x FROM t"), Ok(3));
        assert!(read("SELECT x FROM v").is_err_and(|e| e.contains("`v` is a view")));
        let recursive = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 5) SELECT n FROM r";
        assert_eq!(
            read(recursive),
            Ok(5),
            "the adapter's own query may use WITH"
        );
        assert!(read("DELETE FROM t RETURNING x").is_err());
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

//! SQLite databases (`format: sqlite`), opened read-only: each level of the join is a query,
//! and every read is bounded in time, rows and bytes.

use serde_json::{Map, Value as Json};
use std::path::Path;

use super::super::json::parse_mended;
use super::super::jsonl::MAX_LINE;
use super::{JoinError, Source, field};
use crate::adapters::needs::Needs;
use crate::adapters::spec::JoinLevel;
use crate::warning::Warning;

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
const MAX_VALUE: usize = MAX_LINE;

/// A database opened read-only, with what its reads have cost so far.
pub(super) struct Sql {
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
    pub(super) fn open(path: &Path) -> Result<Self, JoinError> {
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
                match parse_mended(text, |t| serde_json::from_str::<Json>(t)) {
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
    use std::path::PathBuf;

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
}

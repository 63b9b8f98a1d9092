//! The catalog: finding sessions where each harness keeps them (the adapters' `discover`
//! blocks), summarizing each one from its report, and filtering the list.

use rayon::prelude::*;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::adapters::spec::{DiscoverSpec, RootSpec};
use crate::adapters::{AdapterSet, pattern::display_name};
use crate::report::model::Report;
use crate::report::row::{self, SessionRow};
use crate::warning::Warning;

/// A session found on disk, not yet read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// The adapter whose `discover` block found it.
    pub harness: String,
    /// The main session file, or the storage tree or database that holds it.
    pub path: PathBuf,
    /// The session's id inside a storage tree or database that holds several.
    pub session: Option<String>,
}

impl Found {
    /// A session that is a file of its own.
    pub fn file(harness: &str, path: PathBuf) -> Self {
        Found {
            harness: harness.to_owned(),
            path,
            session: None,
        }
    }

    /// A key naming this session among all others: its path, and its id inside a container.
    pub fn key(&self) -> std::ffi::OsString {
        let mut key = self.path.clone().into_os_string();
        if let Some(id) = &self.session {
            key.push("#");
            key.push(id);
        }
        key
    }
}

/// Every main session file the adapters' `discover` blocks find, sorted by harness and path.
/// `var` reads an environment variable (`HOME` included), so tests can pass their own.
pub fn discover(set: &AdapterSet, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<Found> {
    let mut out = Vec::new();
    for adapter in set.iter() {
        let Some(d) = &adapter.spec.discover else {
            continue;
        };
        let Some(base) = base_folder(&d.root, var) else {
            continue;
        };
        let name = &adapter.spec.name;
        let mut paths = session_files(&base, d);
        paths.extend(named_files(&base, d, var));
        for path in paths {
            // A FIFO, a device or a dangling link where a session file should be is listed, so
            // that reading it fails with its name and why, never opened here (a FIFO would
            // block).
            if crate::adapters::input::special_kind(&path).is_some() || !path.exists() {
                out.push(Found::file(name, path));
                continue;
            }
            // A storage tree or a database holds many sessions: one row for each.
            match crate::adapters::input::sessions_in(&path, set, name) {
                Some(ids) => out.extend(ids.into_iter().map(|id| Found {
                    harness: name.clone(),
                    path: path.clone(),
                    session: Some(id),
                })),
                None if path.is_file() => out.push(Found::file(name, path)),
                None => {}
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Where `discover` looks for one harness's sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookedIn {
    /// The adapter's name.
    pub harness: String,
    /// The folder looked in; `None` when no variable it is built from is set.
    pub folder: Option<PathBuf>,
    /// The variables the folder comes from, in the order tried (`CLAUDE_CONFIG_DIR`, `HOME`).
    pub from: Vec<String>,
    /// The patterns of session files under it (`projects/*/*.jsonl`).
    pub files: Vec<String>,
}

/// The folders [`discover`] looks in, one per adapter that discovers sessions, in order.
pub fn looked_in(set: &AdapterSet, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<LookedIn> {
    set.iter()
        .filter_map(|adapter| {
            let d = adapter.spec.discover.as_ref()?;
            let mut from: Vec<String> = Vec::new();
            for r in &d.root {
                let name = r
                    .env
                    .clone()
                    .or_else(|| r.home.as_ref().map(|_| "HOME".into()));
                if let Some(name) = name.filter(|n| !from.contains(n)) {
                    from.push(name);
                }
            }
            Some(LookedIn {
                harness: adapter.spec.name.clone(),
                folder: base_folder(&d.root, var),
                from,
                files: d.files.clone(),
            })
        })
        .collect()
}

/// The first candidate base folder whose variable is set.
fn base_folder(roots: &[RootSpec], var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    roots.iter().find_map(|r| {
        let base = match (&r.env, &r.home) {
            (Some(name), _) => set(name)?,
            (None, Some(rel)) => {
                let home = set("HOME").or_else(|| set("USERPROFILE"))?;
                if rel.is_empty() { home } else { home.join(rel) }
            }
            (None, None) => return None,
        };
        Some(match &r.join {
            Some(rel) if !rel.is_empty() => base.join(rel),
            _ => base,
        })
    })
}

/// The files the block's `file_env` variables name (relative ones under `base`).
fn named_files(
    base: &Path,
    d: &DiscoverSpec,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Vec<PathBuf> {
    d.file_env
        .iter()
        .filter_map(|name| var(name).filter(|v| !v.is_empty()))
        .map(|v| {
            let p = PathBuf::from(v);
            if p.is_absolute() { p } else { base.join(p) }
        })
        .filter(|p| p.is_file())
        .collect()
}

/// The files under `base` matching the block's patterns and none of its exclusions.
fn session_files(base: &Path, d: &DiscoverSpec) -> Vec<PathBuf> {
    let excluded: Vec<glob::Pattern> = d
        .exclude
        .iter()
        .filter_map(|p| glob::Pattern::new(p).ok())
        .collect();
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let prefix = glob::Pattern::escape(&base.to_string_lossy());
    let mut out = Vec::new();
    for pattern in &d.files {
        let full = format!("{prefix}/{pattern}");
        let Ok(paths) = glob::glob_with(&full, options) else {
            continue;
        };
        for path in paths.filter_map(Result::ok) {
            let name = display_name(&path);
            // Anything the pattern names, links included (dangling ones too: reading them
            // says so).
            if path.symlink_metadata().is_ok() && !excluded.iter().any(|p| p.matches(&name)) {
                out.push(path);
            }
        }
    }
    out
}

/// A file's name without its extensions (`rollout-x.jsonl.zst` → `rollout-x`).
pub fn stem(path: &Path) -> &str {
    row::stem(
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("session"),
    )
}

/// `--harness`, `--since`, `--project`.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this adapter.
    pub harness: Option<String>,
    /// Only sessions that started at or after this time.
    pub since: Option<SystemTime>,
    /// Only sessions whose project contains this text (case-insensitive).
    pub project: Option<String>,
    /// Harnesses whose found files that hold no turn are not sessions (`discover.skip_empty`).
    pub skip_empty: Vec<String>,
}

impl Filter {
    /// Whether a found file can pass (the harness is known before reading).
    pub fn admits_file(&self, found: &Found) -> bool {
        self.harness.as_ref().is_none_or(|h| *h == found.harness)
    }

    /// Whether a summarized session passes every filter. A session whose start time the log
    /// does not keep never passes `--since`: nothing shows it is recent.
    pub fn admits(&self, e: &SessionRow) -> bool {
        let since = match self.since {
            None => true,
            Some(t) => e
                .started_at
                .as_deref()
                .and_then(|s| humantime::parse_rfc3339_weak(s.trim_end_matches('Z')).ok())
                .is_some_and(|started| started >= t),
        };
        let project = match &self.project {
            None => true,
            Some(p) => e
                .project
                .as_deref()
                .is_some_and(|proj| proj.to_lowercase().contains(&p.to_lowercase())),
        };
        let empty = e.turns == 0 && self.skip_empty.contains(&e.harness);
        self.admits_file(&Found::file(&e.harness, PathBuf::new())) && since && project && !empty
    }
}

/// Parses `--since`: an RFC 3339 time, a date (`2026-01-31`, midnight UTC), or an age
/// (`3d`, `12h`, `2weeks`) counted back from now.
pub fn parse_since(text: &str, now: SystemTime) -> Result<SystemTime, String> {
    let t = text.trim();
    if let Ok(d) = humantime::parse_duration(t) {
        return now
            .checked_sub(d)
            .ok_or_else(|| format!("--since {t}: too far back"));
    }
    let full = if t.len() == 10 {
        format!("{t}T00:00:00")
    } else {
        t.trim_end_matches('Z').to_owned()
    };
    humantime::parse_rfc3339_weak(&full).map_err(|_| {
        format!("--since {t}: expected a date (2026-01-31), a time (2026-01-31T09:00:00Z) or an age (3d, 12h)")
    })
}

/// A session of the catalog: its row, or why it could not be read.
pub type Listed = (Found, Result<SessionRow, String>);

/// Reads and summarizes every found session in parallel, keeping the input order.
pub fn summarize(
    found: Vec<Found>,
    set: &AdapterSet,
    privacy: &crate::privacy::Options,
    generated_at: &str,
) -> Vec<Listed> {
    found
        .into_par_iter()
        .map(|f| {
            let row = report(&f, set, privacy, generated_at)
                .map(|(report, _)| SessionRow::of(&report))
                .map_err(|e| error_text(&e, &f.path));
            (f, row)
        })
        .collect()
}

/// The report of a found session.
pub fn report(
    found: &Found,
    set: &AdapterSet,
    privacy: &crate::privacy::Options,
    generated_at: &str,
) -> anyhow::Result<(Report, Vec<Warning>)> {
    let options = crate::pipeline::Options {
        adapters: set,
        harness: Some(&found.harness),
        session: found.session.as_deref(),
        privacy: privacy.clone(),
        generated_at: generated_at.to_owned(),
    };
    crate::pipeline::report(&found.path, &options)
}

/// The id of every found session that can be read, in the input order: the harness's id as
/// the log writes it, or the file name. A facts-only pass: each log is read, and nothing is
/// redacted, projected or built.
pub fn ids(found: Vec<Found>, set: &AdapterSet) -> Vec<(Found, String)> {
    found
        .into_par_iter()
        .filter_map(|f| {
            let loaded = crate::adapters::input::load_session(
                &f.path,
                set,
                Some(&f.harness),
                f.session.as_deref(),
            )
            .ok()?;
            let id = loaded
                .session
                .facts
                .id
                .unwrap_or_else(|| stem(&f.path).to_owned());
            Some((f, id))
        })
        .collect()
}

/// An error chain as one line, with the session's full path cut to its file name so no home
/// folder or user name is shown.
pub fn error_text(err: &anyhow::Error, path: &Path) -> String {
    let text = format!("{err:#}");
    let full = path.to_string_lossy();
    let text = if full.is_empty() {
        text
    } else {
        text.replace(full.as_ref(), &display_name(path))
    };
    crate::privacy::paths::scrub_home(&text)
}

/// The positions of the ids that start with `prefix`; an exact id wins over prefixes.
pub fn by_id<'a>(ids: impl Iterator<Item = &'a str>, prefix: &str) -> Vec<usize> {
    let ids: Vec<&str> = ids.collect();
    if let Some(exact) = ids.iter().position(|i| *i == prefix) {
        return vec![exact];
    }
    (0..ids.len())
        .filter(|n| ids[*n].starts_with(prefix))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn root(env: Option<&str>, home: Option<&str>, join: Option<&str>) -> RootSpec {
        RootSpec {
            env: env.map(str::to_owned),
            home: home.map(str::to_owned),
            join: join.map(str::to_owned),
        }
    }

    #[test]
    fn first_set_variable_picks_the_base_folder() {
        let vars: BTreeMap<&str, &str> = [("HOME", "/h"), ("XDG_DATA_HOME", "")].into();
        let var = |k: &str| vars.get(k).map(OsString::from);
        let roots = [
            root(Some("XDG_DATA_HOME"), None, Some("opencode")),
            root(None, Some(".local/share/opencode"), None),
        ];
        assert_eq!(
            base_folder(&roots, &var),
            Some(PathBuf::from("/h/.local/share/opencode"))
        );
        let vars2: BTreeMap<&str, &str> = [("HOME", "/h"), ("XDG_DATA_HOME", "/x")].into();
        let var2 = |k: &str| vars2.get(k).map(OsString::from);
        assert_eq!(
            base_folder(&roots, &var2),
            Some(PathBuf::from("/x/opencode"))
        );
        let none = |_: &str| None;
        assert_eq!(base_folder(&roots, &none), None);
    }

    #[test]
    fn since_reads_dates_times_and_ages() -> anyhow::Result<()> {
        let now = humantime::parse_rfc3339("2026-02-10T00:00:00Z")?;
        let day = parse_since("2026-02-01", now).map_err(anyhow::Error::msg)?;
        assert_eq!(day, humantime::parse_rfc3339("2026-02-01T00:00:00Z")?);
        let ago = parse_since("3d", now).map_err(anyhow::Error::msg)?;
        assert_eq!(ago, humantime::parse_rfc3339("2026-02-07T00:00:00Z")?);
        assert!(parse_since("last tuesday", now).is_err());
        Ok(())
    }

    #[test]
    fn stem_drops_every_extension() {
        assert_eq!(stem(Path::new("/a/rollout-1.jsonl.zst")), "rollout-1");
        assert_eq!(stem(Path::new("abc.jsonl")), "abc");
    }
}

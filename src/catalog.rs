//! The catalog: finding sessions where each harness keeps them (the adapters' `discover`
//! blocks), summarizing each one from its report, and filtering the list.

use rayon::prelude::*;
use serde::Serialize;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::adapters::spec::{DiscoverSpec, RootSpec};
use crate::adapters::{AdapterSet, pattern::display_name};
use crate::report::model::Report;

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

/// One row of `tracebook list`: what the report says about a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Entry {
    /// Adapter name.
    pub harness: String,
    /// The harness's session id, or the file name when the log keeps none.
    pub id: String,
    /// The id of the session this one is a subagent of, when its log names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The project, privacy-filtered (the working directory's last segment).
    pub project: Option<String>,
    /// First timestamp in the log.
    pub started_at: Option<String>,
    /// Number of turns.
    pub turns: usize,
    /// Tool calls, subagents' included.
    pub tool_calls: usize,
    /// Tool calls with status error.
    pub errors: usize,
    /// The first prompt's first line, for the index.
    pub title: Option<String>,
    /// The session file. Not printed: its folders can name the user.
    #[serde(skip)]
    pub path: PathBuf,
    /// The session's id inside the storage tree or database at `path`. Not printed.
    #[serde(skip)]
    pub session: Option<String>,
    /// The subagents this session's notebook holds (nested under their calls, or listed as
    /// not linked to one), by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subagents: Vec<String>,
}

impl Entry {
    /// The row of a session whose report was built.
    pub fn from_report(found: &Found, report: &Report) -> Self {
        let s = &report.session;
        Entry {
            harness: found.harness.clone(),
            id: s.id.clone().unwrap_or_else(|| stem(&found.path).to_owned()),
            parent: s.parent.clone(),
            project: s.project.clone(),
            started_at: s.started_at.clone(),
            turns: report.summary.turns,
            tool_calls: report.summary.tool_calls,
            errors: report.summary.error,
            title: report
                .turns
                .iter()
                .find_map(|t| t.prompt.as_ref())
                .map(|p| first_line(&p.text, 100)),
            path: found.path.clone(),
            session: found.session.clone(),
            subagents: subagents_shown(report),
        }
    }
}

/// The ids of the subagents a report shows: nested under a call at any depth, or unlinked.
fn subagents_shown(report: &Report) -> Vec<String> {
    fn walk(turns: &[crate::report::model::TurnView], out: &mut Vec<String>) {
        for step in turns.iter().flat_map(|t| &t.steps) {
            if let crate::report::model::StepView::ToolCall(call) = step
                && let Some(sub) = &call.subagent
            {
                if !out.contains(&sub.agent_id) {
                    out.push(sub.agent_id.clone());
                }
                walk(&sub.turns, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&report.turns, &mut out);
    for sub in &report.unlinked_subagents {
        if !out.contains(&sub.agent_id) {
            out.push(sub.agent_id.clone());
        }
        walk(&sub.turns, &mut out);
    }
    out
}

/// A file's name without its extensions (`rollout-x.jsonl.zst` → `rollout-x`).
pub fn stem(path: &Path) -> &str {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("session");
    name.split('.')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(name)
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max {
        out.push('…');
    }
    out
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
    pub fn admits(&self, e: &Entry) -> bool {
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
pub type Listed = (Found, Result<Entry, String>);

/// Reads and summarizes every found session in parallel, keeping the input order.
pub fn summarize(
    found: Vec<Found>,
    set: &AdapterSet,
    redact: &[String],
    generated_at: &str,
) -> Vec<Listed> {
    let privacy = crate::privacy::Options {
        redact: redact.to_vec(),
        keep_images: false,
    };
    found
        .into_par_iter()
        .map(|f| {
            let options = crate::pipeline::Options {
                adapters: set,
                harness: Some(&f.harness),
                session: f.session.as_deref(),
                privacy: privacy.clone(),
                generated_at: generated_at.to_owned(),
            };
            let row = crate::pipeline::report(&f.path, &options)
                .map(|(report, _)| Entry::from_report(&f, &report))
                .map_err(|e| error_text(&e, &f.path));
            (f, row)
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

/// Whether a row is a subagent session whose parent is among `rows` (same harness) and whose
/// notebook really holds it. A subagent its parent's notebook does not show stays listed.
pub fn nested_in(row: &Entry, rows: &[Entry]) -> bool {
    row.parent.as_ref().is_some_and(|parent| {
        rows.iter()
            .any(|r| r.harness == row.harness && r.id == *parent && r.subagents.contains(&row.id))
    })
}

/// The sessions whose id starts with `prefix`; an exact id match wins over prefixes.
pub fn by_id<'a>(rows: &'a [Entry], prefix: &str) -> Vec<&'a Entry> {
    if let Some(exact) = rows.iter().find(|e| e.id == prefix) {
        return vec![exact];
    }
    rows.iter().filter(|e| e.id.starts_with(prefix)).collect()
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

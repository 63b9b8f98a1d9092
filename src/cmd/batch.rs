//! `tracebook render --all -o DIR`: every listed session rendered in parallel into one folder,
//! with an offline `index.html` and a manifest so that a second run re-renders only sessions
//! whose source changed. One broken session never stops the batch.

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::Path;
use std::time::UNIX_EPOCH;

use crate::adapters::AdapterSet;
use crate::catalog::{self, Filter, Found};
use crate::cli::{Format, RenderArgs};
use crate::cmd::render::{RenderOptions, render_session};
use crate::cmd::{Exit, list};
use crate::console::{self, Console};
use crate::pipeline;
use crate::render::{self, IndexExtra, IndexRow, ParentLink};
use crate::report::row::SessionRow;
use crate::report::select::{self, TurnSelection};

/// The manifest's file name inside the output folder.
pub const MANIFEST: &str = ".tracebook-manifest.json";
const MANIFEST_VERSION: u32 = 1;

/// What the last run over a folder rendered, keyed on each source's size and mtime.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version of this file.
    pub version: u32,
    /// A keyed digest of everything besides the source that shapes a notebook (tool version,
    /// redactions, turn selection, view, storage, adapters folder, strictness); a change re-renders
    /// everything. Never the options themselves: `--redact` strings are what must not be
    /// shared (see `options_digest`).
    pub options: String,
    /// One entry per session file, keyed by a hash of its path (so the manifest names no
    /// home folder).
    pub sessions: BTreeMap<String, ManifestEntry>,
}

/// One session of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Adapter name.
    pub harness: String,
    /// The session file's name, without its folders.
    pub name: String,
    /// Source size in bytes.
    pub size: u64,
    /// Source modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: u128,
    /// The session's row, when it could be read.
    pub row: Option<SessionRow>,
    /// The notebook's file name in the folder, when one was written.
    pub file: Option<String>,
    /// Why it could not be rendered.
    pub error: Option<String>,
}

/// The manifest key of a session: SHA-256 of its path (and its id inside a container).
fn key(found: &Found) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(found.key().as_encoded_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The manifest's `options`: HMAC-SHA256 of the options' text, keyed with [`options_key`].
/// A plain hash would let anyone holding the folder test guesses of a `--redact` string (a
/// client's or project's name is easy to guess); the key is not in the folder, so the folder
/// alone gives nothing to test a guess against.
fn options_digest(text: &str) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let key = options_key();
    let Ok(mut mac) = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key) else {
        return String::new();
    };
    mac.update(text.as_bytes());
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("hmac-sha256:{hex}")
}

/// The key of [`options_digest`]: 32 random bytes kept on this machine, outside any output
/// folder, in tracebook's state folder (`$XDG_STATE_HOME/tracebook/manifest.key`, else
/// `~/.local/state/tracebook/manifest.key`; `%LOCALAPPDATA%\tracebook\manifest.key` on
/// Windows), made on first use and readable by its owner only. Where it cannot be kept, a key
/// for this run only: the next run then renders every session again.
fn options_key() -> [u8; 32] {
    let path = state_folder().map(|d| d.join("manifest.key"));
    if let Some(key) = path.as_deref().and_then(read_key) {
        return key;
    }
    let mut key = [0u8; 32];
    if getrandom::fill(&mut key).is_err() {
        use std::hash::{BuildHasher as _, Hasher as _};
        for chunk in key.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(chunk.as_ptr() as usize);
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    if let Some(path) = &path {
        // Another run may have made one meanwhile: its key wins.
        if write_key(path, &key).is_err()
            && let Some(theirs) = read_key(path)
        {
            return theirs;
        }
    }
    key
}

fn read_key(path: &Path) -> Option<[u8; 32]> {
    std::fs::read(path).ok()?.try_into().ok()
}

fn write_key(path: &Path, key: &[u8; 32]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(path)?.write_all(key)
}

/// tracebook's folder for what it keeps between runs on this machine.
fn state_folder() -> Option<std::path::PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if cfg!(windows) {
        return var("LOCALAPPDATA").map(|d| d.join("tracebook"));
    }
    var("XDG_STATE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local/state")))
        .map(|d| d.join("tracebook"))
}

/// Size and modification time of a file, what decides whether it changed.
fn stamp(path: &Path) -> Option<(u64, u128)> {
    let m = std::fs::metadata(path).ok()?;
    let mtime = m
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_nanos();
    Some((m.len(), mtime))
}

impl Manifest {
    fn read(dir: &Path) -> Option<Self> {
        let text = std::fs::read_to_string(dir.join(MANIFEST)).ok()?;
        serde_json::from_str::<Self>(&text)
            .ok()
            .filter(|m| m.version == MANIFEST_VERSION)
    }

    fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(MANIFEST);
        let tmp = dir.join(format!("{MANIFEST}.tmp"));
        let text = serde_json::to_string_pretty(self).context("writing the manifest")?;
        std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))
    }
}

/// Whether the last run's entry still stands for this session.
fn still_good(
    old: &ManifestEntry,
    found: &Found,
    now: (u64, u128),
    filter: &Filter,
    dir: &Path,
) -> bool {
    if old.harness != found.harness || (old.size, old.mtime_ns) != now {
        return false;
    }
    if old.error.is_some() {
        return true;
    }
    match &old.row {
        Some(row) if !filter.admits(row) => true,
        Some(_) => old.file.as_ref().is_some_and(|f| dir.join(f).is_file()),
        None => false,
    }
}

/// A safe, unique notebook file name for a session: `<harness>-<file stem>.html`, or
/// `<harness>-<session id>.html` for a session inside a storage tree or database.
fn file_name(found: &Found, taken: &mut BTreeSet<String>) -> String {
    let stem: String = found
        .session
        .as_deref()
        .unwrap_or_else(|| catalog::stem(&found.path))
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let base = format!("{}-{stem}", found.harness);
    let mut name = format!("{base}.html");
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}-{n}.html");
        n += 1;
    }
    name
}

/// What every session of a batch shares.
struct Job<'a> {
    dir: &'a Path,
    args: &'a RenderArgs,
    set: &'a AdapterSet,
    sel: &'a TurnSelection,
    filter: &'a Filter,
    generated_at: &'a str,
}

/// The user's `--redact` strings, for what the folder holds besides the notebooks (a file
/// name, an error): the notebooks' own text has been through the whole privacy stage.
fn user_strings(job: &Job<'_>) -> crate::privacy::Policy {
    crate::privacy::Policy::with(vec![Box::new(crate::privacy::secrets::Secrets::new(
        &job.args.redact,
    ))])
}

/// Renders one session into the folder: its row, the file written, or why it could not.
fn render_one(
    job: &Job<'_>,
    found: &Found,
    file: &str,
) -> (Option<SessionRow>, Option<String>, Option<String>) {
    match try_render(job, found, file) {
        Ok((row, written)) => (Some(row), written, None),
        Err(e) => (
            None,
            None,
            Some(user_strings(job).text(&catalog::error_text(&e, &found.path))),
        ),
    }
}

/// Reads a session; writes its notebook when it passes the filters.
fn try_render(
    job: &Job<'_>,
    found: &Found,
    file: &str,
) -> anyhow::Result<(SessionRow, Option<String>)> {
    let (mut report, warnings) = pipeline::report(
        &found.path,
        &pipeline::Options {
            adapters: job.set,
            harness: Some(&found.harness),
            session: found.session.as_deref(),
            privacy: job.args.privacy(),
            generated_at: job.generated_at.to_owned(),
        },
    )?;
    if let (true, Some(first)) = (job.args.strict, warnings.first()) {
        anyhow::bail!(
            "{} warning(s) and --strict is set (first: {first})",
            warnings.len()
        );
    }
    // The row (kept in the manifest, shown in the index) is the selected turns' own: a title
    // from a turn the notebook leaves out would put its prompt in the folder anyway.
    let admitted = job.filter.admits(&SessionRow::of(&report));
    let selected = select::apply(&mut report, job.sel);
    let mut row = SessionRow::of(&report);
    if !admitted {
        if selected.is_err() {
            row.title = None;
        }
        return Ok((row, None));
    }
    selected.map_err(anyhow::Error::msg)?;
    let (notebook, _) = render_session(report, &RenderOptions::of(job.args))?;
    let out = job.dir.join(file);
    console::write_output(&out, &notebook.pieces()).with_context(|| format!("writing {file}"))?;
    Ok((row, Some(file.to_owned())))
}

/// `render --all -o DIR`: every listed session.
pub fn run(args: &RenderArgs) -> anyhow::Result<Exit> {
    super::render::refuse_open_of_stdout(args)?;
    rayon::spawn(crate::privacy::secrets::prewarm);
    let set = AdapterSet::load(args.adapters.as_deref())?;
    render_all(args, &set, &args.select.selection())
}

/// Renders every session the filter lists into `-o DIR`, with the manifest and the index.
fn render_all(args: &RenderArgs, set: &AdapterSet, sel: &TurnSelection) -> anyhow::Result<Exit> {
    if args.format != Format::Html {
        anyhow::bail!(
            "--all writes HTML notebooks and an index; --format json and md are for one session"
        );
    }
    let Some(dir) = args.output.clone() else {
        anyhow::bail!("--all needs an output folder: -o DIR");
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let filter = list::filter(
        set,
        args.harness.as_deref(),
        args.pick.since,
        args.pick.project.as_deref(),
    )?;
    let found = list::discover(set, &filter);
    let options = options_digest(&format!(
        "tracebook {}; redact {:?}; keep images {}; turns {:?}; exclude {:?}; adapters {:?}; strict {}; view {:?}; storage {:?}",
        env!("CARGO_PKG_VERSION"),
        args.redact,
        args.keep_images,
        sel.turns.as_ref().map(ToString::to_string),
        sel.exclude.as_ref().map(ToString::to_string),
        args.adapters,
        args.strict,
        args.view(),
        args.storage()
    ));
    let old = Manifest::read(&dir)
        .filter(|m| m.options == options && !args.pick.force)
        .unwrap_or_default();

    // Decide, in path order, what to keep and what to render; names are fixed before the
    // parallel part so they do not depend on scheduling.
    let mut taken: BTreeSet<String> = old
        .sessions
        .values()
        .filter_map(|e| e.file.clone())
        .collect();
    let mut kept: BTreeMap<String, ManifestEntry> = BTreeMap::new();
    let mut todo: Vec<(Found, (u64, u128), String)> = Vec::new();
    for f in found {
        let now = stamp(&f.path).unwrap_or((0, 0));
        match old.sessions.get(&key(&f)) {
            Some(e) if still_good(e, &f, now, &filter, &dir) => {
                kept.insert(key(&f), e.clone());
            }
            Some(ManifestEntry {
                file: Some(name), ..
            }) => {
                let name = name.clone();
                todo.push((f, now, name));
            }
            _ => {
                let name = file_name(&f, &mut taken);
                todo.push((f, now, name));
            }
        }
    }

    let bar = progress(todo.len() as u64, args.quiet);
    let generated_at = pipeline::generated_at();
    let job = Job {
        dir: &dir,
        args,
        set,
        sel,
        filter: &filter,
        generated_at: &generated_at,
    };
    let done: Vec<(String, ManifestEntry)> = todo
        .par_iter()
        .map(|(f, now, name)| {
            let (row, file, error) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                render_one(&job, f, name)
            }))
            .unwrap_or_else(|_| {
                (
                    None,
                    None,
                    Some("tracebook failed on this session (a bug: please report it)".to_owned()),
                )
            });
            bar.inc(1);
            let entry = ManifestEntry {
                harness: f.harness.clone(),
                name: user_strings(&job).text(&crate::adapters::pattern::display_name(&f.path)),
                size: now.0,
                mtime_ns: now.1,
                row,
                file,
                error,
            };
            (key(f), entry)
        })
        .collect();
    bar.finish_and_clear();
    // What the sessions let go is given back before the index is put together.
    crate::memory::release();
    let rendered = done.iter().filter(|(_, e)| e.file.is_some()).count();
    let reused = kept.len();
    kept.extend(done);

    let mut rows = index_rows(&kept, &filter);
    // The search and the summary read each notebook's embedded report back: the same for a
    // session rendered now and one kept from an earlier run.
    rows.par_iter_mut().for_each(|r| {
        let extra = r.href.as_ref().and_then(|h| {
            let html = std::fs::read_to_string(dir.join(h)).ok()?;
            let back = render::embed::read(&html).ok()?;
            Some(IndexExtra::of(&back.report))
        });
        if let Some(extra) = extra {
            r.keep(extra);
        }
    });
    crate::memory::release();
    let index = render::index(&rows).context("rendering the index")?;
    let index_path = dir.join("index.html");
    std::fs::write(&index_path, index)
        .with_context(|| format!("writing {}", index_path.display()))?;
    Manifest {
        version: MANIFEST_VERSION,
        options,
        sessions: kept,
    }
    .write(&dir)?;

    let failed: Vec<&IndexRow> = rows.iter().filter(|r| r.error.is_some()).collect();
    let console = Console::new(args.quiet, args.strict);
    for r in &failed {
        console.error(&format!(
            "{} {}: {}",
            r.row.harness,
            r.row.id,
            r.error.as_deref().unwrap_or_default()
        ));
    }
    console.done(&format!(
        "{} session(s) in {}: {rendered} rendered, {reused} unchanged, {} failed",
        rows.len(),
        index_path.display(),
        failed.len()
    ));
    if args.open {
        super::open::open(&index_path, &console);
    }
    Ok(if failed.is_empty() {
        Exit::Success
    } else {
        Exit::SomeFailed
    })
}

/// The index rows: written notebooks that pass the filter, and every failure; newest first.
fn index_rows(sessions: &BTreeMap<String, ManifestEntry>, filter: &Filter) -> Vec<IndexRow> {
    // Each session's notebook, for the link from a subagent's row to its parent's.
    let notebooks: HashMap<(&str, &str), &str> = sessions
        .values()
        .filter_map(|e| {
            let r = e.row.as_ref().filter(|r| filter.admits(r))?;
            Some(((r.harness.as_str(), r.id.as_str()), e.file.as_deref()?))
        })
        .collect();
    let mut rows: Vec<IndexRow> = sessions
        .values()
        .filter_map(|e| match (&e.row, &e.error) {
            (_, Some(err)) => Some(IndexRow {
                row: SessionRow {
                    harness: e.harness.clone(),
                    id: e.name.clone(),
                    parent: None,
                    project: None,
                    started_at: None,
                    turns: 0,
                    tool_calls: 0,
                    errors: 0,
                    title: None,
                    subagents: Vec::new(),
                },
                href: None,
                error: Some(err.clone()),
                parent: None,
                extra: None,
                search: None,
            }),
            (Some(r), None) if filter.admits(r) && e.file.is_some() => Some(IndexRow {
                row: r.clone(),
                href: e.file.clone(),
                error: None,
                parent: r.parent.as_ref().and_then(|id| {
                    let href = notebooks.get(&(r.harness.as_str(), id.as_str()))?;
                    Some(ParentLink {
                        id: id.clone(),
                        href: (*href).to_owned(),
                    })
                }),
                extra: None,
                search: None,
            }),
            _ => None,
        })
        .collect();
    rows.sort_by(|a, b| a.row.newest_first(&b.row));
    rows
}

/// A progress bar on standard error: sessions done, throughput, time left. Hidden when
/// standard error is not a terminal ([`console::stderr_is_terminal`]) or `--quiet` is given;
/// it has no colour.
fn progress(len: u64, quiet: bool) -> ProgressBar {
    if quiet || !console::stderr_is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} sessions · {per_sec} · {eta} left")
    {
        bar.set_style(style);
    }
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_safe_and_unique() {
        let mut taken = BTreeSet::new();
        let f = Found::file(
            "codex",
            std::path::PathBuf::from("/x/rollout-a b.jsonl.zst"),
        );
        assert_eq!(file_name(&f, &mut taken), "codex-rollout-a_b.html");
        assert_eq!(file_name(&f, &mut taken), "codex-rollout-a_b-2.html");
    }
}

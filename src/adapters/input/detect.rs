//! Which adapter reads an input, and in which of its layouts: by the records some adapter's
//! detection recognises, by a storage tree's layout, or forced with `--harness`; and which
//! file of a folder is its newest session.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::document::{MAX_DOCUMENT, parse_document};
use super::joined;
use super::json::parse_mended;
use super::jsonl::{LineRead, MAX_LINE, long_line, read_line};
use super::open::{Cut, Opened, Origin};
use super::replay::JoinedRecord;
use super::{InputError, JoinedRead, Parse, format_of, layouts};
use crate::adapters::pattern::{has_ending, wildcard};
use crate::adapters::spec::{AdapterSpec, Condition, InputFormat, InputSpec};
use crate::adapters::{Adapter, AdapterSet};

/// How many records that some adapter's detection recognises are enough to decide a file's
/// harness. Records no adapter recognises (bookkeeping a harness writes first, however many)
/// are read past and do not count.
const DETECT_RECORDS: usize = 50;

/// A storage tree found in a folder: the adapter and layout whose tree it is, its root, and
/// its (latest) session as detection read it.
pub(super) struct FoundTree<'a> {
    pub(super) adapter: &'a Adapter,
    pub(super) layout: &'a InputSpec,
    pub(super) root: PathBuf,
    pub(super) read: JoinedRead<'a>,
}

/// Picks the adapter and input layout whose detection rules match most of the input's first
/// records: of every adapter, or of `only`. Each layout is tried when the file's ending fits
/// it (a stream fits every layout); an SQLite file is read through the layout's join.
pub(super) fn detect_layout<'a>(
    origin: Origin<'_>,
    set: &'a AdapterSet,
    only: Option<&'a Adapter>,
) -> Result<(&'a Adapter, &'a InputSpec), InputError> {
    let candidates: Vec<&Adapter> = match only {
        Some(a) => vec![a],
        None => set.iter().collect(),
    };
    let mut probe = Probe::new(origin, set);
    let mut best: Option<(&Adapter, &InputSpec, usize)> = None;
    for adapter in candidates {
        let spec = &adapter.spec;
        for layout in layouts(spec) {
            let score = probe
                .records(spec, layout)?
                .iter()
                .filter(|r| spec.detect.iter().any(|c| detect_holds(c, r)))
                .count();
            if score > 0 && best.is_none_or(|(_, _, s)| score > s) {
                best = Some((adapter, layout, score));
            }
        }
    }
    match best {
        Some((a, l, _)) => Ok((a, l)),
        None => Err(probe.failure()),
    }
}

/// What detection has read of one input, kept across the layouts it tries, and why a layout
/// could not read it.
struct Probe<'o, 's> {
    origin: Origin<'o>,
    set: &'s AdapterSet,
    sqlite: bool,
    /// The first records of the input read as JSONL that some adapter recognises.
    head: Option<Vec<Json>>,
    /// Why the first lines gave no record, when a line was too long to read.
    unread: Option<String>,
    /// The input read as one JSON document, when it is one.
    whole: Option<Option<Json>>,
    /// The records of the last database layout read.
    joined: Vec<Json>,
    /// Why a database layout could not read the input, for the message when nothing fits.
    database: Option<String>,
}

impl<'o, 's> Probe<'o, 's> {
    fn new(origin: Origin<'o>, set: &'s AdapterSet) -> Self {
        Self {
            origin,
            set,
            sqlite: origin.is_sqlite(),
            head: None,
            unread: None,
            whole: None,
            joined: Vec::new(),
            database: None,
        }
    }

    /// The records some adapter recognises (at most [`DETECT_RECORDS`]) of the input read by
    /// `spec`'s `layout`; none when the layout does not fit it.
    fn records(
        &mut self,
        spec: &AdapterSpec,
        layout: &InputSpec,
    ) -> Result<Vec<&Json>, InputError> {
        if !self.origin.fits(&layout.extensions) {
            return Ok(Vec::new());
        }
        Ok(match format_of(layout, self.origin) {
            InputFormat::Tree => Vec::new(),
            InputFormat::Sqlite => {
                self.joined = self.database_records(spec, layout);
                recognised(self.set, self.joined.iter()).collect()
            }
            InputFormat::Jsonl => {
                if self.head.is_none() {
                    let (records, note) = first_records(self.origin, self.set)?;
                    self.head = Some(records);
                    self.unread = note;
                }
                self.head.iter().flatten().collect()
            }
            InputFormat::Json => {
                let origin = self.origin;
                let whole = self.whole.get_or_insert_with(|| document_of(origin));
                let at = layout.records_at.as_deref().unwrap_or("");
                match whole.as_ref().and_then(|d| d.pointer(at)) {
                    Some(Json::Array(a)) => recognised(self.set, a.iter()).collect(),
                    _ => Vec::new(),
                }
            }
        })
    }

    /// The records a database layout joins from the input, when it is a database file.
    fn database_records(&mut self, spec: &AdapterSpec, layout: &InputSpec) -> Vec<Json> {
        let Origin::File(path) = self.origin else {
            if self.sqlite {
                self.database.get_or_insert_with(|| {
                    "an SQLite database is read from its file, not from a stream".to_owned()
                });
            }
            return Vec::new();
        };
        if !self.sqlite {
            if !layout.extensions.is_empty() {
                self.database.get_or_insert_with(|| {
                    "not an SQLite database (its first bytes are not the SQLite header), though \
                     its name says it is one"
                        .to_owned()
                });
            }
            return Vec::new();
        }
        match joined::read(path, layout, None, None, &|r| r, &mut Vec::new()) {
            Ok(j) => j.records,
            Err(e) => {
                self.database = Some(format!(
                    "an SQLite database the {} adapter cannot read: {e}",
                    spec.label
                ));
                Vec::new()
            }
        }
    }

    /// Why no layout read the input: it is empty, a database no adapter can read, only lines
    /// too long to read, or records no adapter recognises.
    fn failure(self) -> InputError {
        let path = self.origin.path();
        if self.origin.is_empty() {
            return InputError::Empty { path };
        }
        if let Some(reason) = self.database {
            return InputError::Database { path, reason };
        }
        if let (Some(reason), true) = (self.unread, self.head.as_ref().is_none_or(Vec::is_empty)) {
            return InputError::Nothing { path, reason };
        }
        InputError::Unrecognised {
            path,
            known: self.set.names().join(", "),
        }
    }
}

/// The input read as one JSON document, when it is one no larger than [`MAX_DOCUMENT`].
fn document_of(origin: Origin<'_>) -> Option<Json> {
    match origin {
        Origin::File(path) => {
            let fits = std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_DOCUMENT);
            let bytes = fits.then(|| std::fs::read(path).ok()).flatten()?;
            parse_document(&bytes, "", &mut Vec::new()).ok()
        }
        Origin::Stream(bytes) => parse_document(bytes, "", &mut Vec::new()).ok(),
    }
}

pub(super) fn detect_holds(cond: &Condition, record: &Json) -> bool {
    // Detection conditions are record-level; reuse the interpreter's semantics.
    crate::adapters::interpret::condition_holds(cond, record)
}

/// Whether some adapter's detection recognises a record.
fn recognised_by_any(set: &AdapterSet, record: &Json) -> bool {
    set.iter()
        .any(|a| a.spec.detect.iter().any(|c| detect_holds(c, record)))
}

/// The first [`DETECT_RECORDS`] records some adapter recognises, reading past the others.
fn recognised<'j>(
    set: &AdapterSet,
    records: impl Iterator<Item = &'j Json>,
) -> impl Iterator<Item = &'j Json> {
    records
        .filter(|r| recognised_by_any(set, r))
        .take(DETECT_RECORDS)
}

/// The first [`DETECT_RECORDS`] records of a JSONL file that some adapter recognises: leading
/// records none recognises (a harness's bookkeeping, however long its run) are read past, to
/// the end of the file if need be.
///
/// With them, the first line passed over for its length, or where a decompressed stream was
/// cut, as a warning's text: what to say when no record at all could be read.
fn first_records(
    origin: Origin<'_>,
    set: &AdapterSet,
) -> Result<(Vec<Json>, Option<String>), InputError> {
    let Opened { mut reader, cut } = origin.open().map_err(|e| InputError::Io {
        path: origin.path(),
        error: e,
    })?;
    let mut records = Vec::new();
    let mut line = Vec::new();
    let (mut number, mut note) = (0, None);
    let name = origin.name();
    loop {
        line.clear();
        number += 1;
        match read_line(reader.as_mut(), &mut line, MAX_LINE) {
            Ok(LineRead::Line) => {}
            Ok(LineRead::TooLong(bytes)) => {
                note.get_or_insert_with(|| long_line(&name, number, bytes).to_string());
                continue;
            }
            Ok(LineRead::End) | Err(_) => break,
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_start_matches('\u{feff}').trim();
        let parsed = parse_mended(text, |t| serde_json::from_str::<Json>(t));
        if let Ok((rec @ Json::Object(_), _)) = parsed
            && recognised_by_any(set, &rec)
        {
            records.push(rec);
            if records.len() == DETECT_RECORDS {
                break;
            }
        }
    }
    if let Some(cut) = cut.filter(Cut::passed) {
        note.get_or_insert_with(|| cut.warning(&name, number).to_string());
    }
    Ok((records, note))
}

/// The newest main session file of a folder (subagent files excluded).
pub(super) fn newest_session_file(
    dir: &Path,
    set: &AdapterSet,
    forced: Option<&Adapter>,
) -> Result<PathBuf, InputError> {
    let specs: Vec<&AdapterSpec> = match forced {
        Some(a) => vec![&a.spec],
        None => set.iter().map(|a| &a.spec).collect(),
    };
    let mut endings: Vec<&str> = Vec::new();
    for ending in specs
        .iter()
        .flat_map(|s| s.input.extensions.iter().map(String::as_str))
    {
        // Several adapters read the same endings: each is named once.
        if !endings.contains(&ending) {
            endings.push(ending);
        }
    }
    let io = |e| InputError::Io {
        path: dir.to_owned(),
        error: e,
    };
    let mut best: Option<(SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let is_sub = specs.iter().any(|s| {
            s.input
                .subagent_files
                .iter()
                .filter(|p| !p.contains('/'))
                .any(|p| wildcard(p, name))
        });
        if !path.is_file() || is_sub || !endings.iter().any(|e| has_ending(&path, e)) {
            continue;
        }
        let modified = path
            .metadata()
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        if best
            .as_ref()
            .is_none_or(|(t, p)| (modified, &path) > (*t, p))
        {
            best = Some((modified, path));
        }
    }
    let mut named: Vec<&str> = Vec::new();
    for e in endings {
        if !named.contains(&e) {
            named.push(e);
        }
    }
    best.map(|(_, p)| p).ok_or_else(|| InputError::EmptyFolder {
        path: dir.to_owned(),
        endings: named.join(", "),
    })
}

/// The first `tree` layout (of the forced adapter, or of any) whose session files are in `dir`,
/// with what reading its (latest) session gave.
pub(super) fn find_tree<'a>(
    dir: &Path,
    set: &'a AdapterSet,
    forced: Option<&'a Adapter>,
    parse: Parse,
) -> Option<FoundTree<'a>> {
    let adapters: Vec<&Adapter> = match forced {
        Some(a) => vec![a],
        None => set.iter().collect(),
    };
    adapters.into_iter().find_map(|a| {
        layouts(&a.spec)
            .filter(|l| l.format == InputFormat::Tree)
            .find_map(|l| {
                let root = joined::tree_root(dir, l.join.as_ref()?)?;
                // A folder that merely looks like the layout must also hold records the
                // adapter recognises, unless `--harness` names the adapter: then records it
                // joins are enough (a tree whose ids lack the harness's usual prefix).
                let mut warnings = Vec::new();
                let needs = parse.needs(&a.spec, true);
                let keep = |rec| JoinedRecord::of(&a.spec, rec, true);
                let read =
                    joined::read(&root, l, None, needs.as_ref(), &keep, &mut warnings).ok()?;
                let accepted = match forced {
                    Some(_) => !read.records.is_empty(),
                    None => read.records.iter().any(|r| r.recognised),
                };
                accepted.then_some(FoundTree {
                    adapter: a,
                    layout: l,
                    root,
                    read: JoinedRead {
                        joined: read,
                        warnings,
                    },
                })
            })
    })
}

/// The adapter whose storage-tree layout a folder has (its session files are there), when
/// detection found none of its records.
pub(super) fn tree_lookalike<'a>(dir: &Path, set: &'a AdapterSet) -> Option<&'a Adapter> {
    set.iter().find(|a| {
        layouts(&a.spec)
            .filter(|l| l.format == InputFormat::Tree)
            .any(|l| {
                l.join
                    .as_ref()
                    .and_then(|j| joined::tree_root(dir, j))
                    .is_some()
            })
    })
}

/// With `--harness`, the layout whose extension (or, for SQLite, header) fits the file.
pub(super) fn forced_layout<'a>(path: &Path, adapter: &'a Adapter) -> &'a InputSpec {
    let ext = extension(path);
    let sqlite = super::open::is_sqlite(path);
    layouts(&adapter.spec)
        .find(|l| {
            (l.format == InputFormat::Sqlite) == sqlite
                && l.format != InputFormat::Tree
                && (l.extensions.is_empty() || l.extensions.contains(&ext))
        })
        .unwrap_or(&adapter.spec.input)
}

fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_owned()
}

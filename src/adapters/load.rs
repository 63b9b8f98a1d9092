//! Reading inputs: resolving a path to session files, detecting the harness, and feeding records
//! to the interpreter. The only module besides `run` that touches the filesystem.

use rayon::prelude::*;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::interpret::{Draft, Interpreter, METADATA_RECORD, Raw};
use super::joined;
use super::needs::{self, Needs};
use super::normalize::Normalizer;
use super::spec::{AdapterSpec, Condition, InputFormat, InputSpec, Pointer, ReplaySpec};
use super::{Adapter, AdapterSet};
use crate::events::{EventKind, FailureScope, Session, Subagent};
use crate::warning::Warning;

/// How many records that some adapter's detection recognises are enough to decide a file's
/// harness. Records no adapter recognises (bookkeeping a harness writes first, however many)
/// are read past and do not count.
const DETECT_RECORDS: usize = 50;

/// A failure that leaves nothing to render.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The path does not exist.
    #[error("{path}: no such file or folder")]
    Missing {
        /// The input path.
        path: PathBuf,
    },
    /// Reading failed.
    #[error("reading {path}: {error}")]
    Io {
        /// The input path.
        path: PathBuf,
        /// The underlying error (not a `source`: the message says it, once).
        error: std::io::Error,
    },
    /// A FIFO, a device or a socket: nothing tracebook reads, and reading one could block or
    /// never end.
    #[error(
        "{path}: not a session file or folder (it is {kind}); tracebook reads regular files and folders"
    )]
    NotAFile {
        /// The input path.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// The file is empty.
    #[error("{path}: the file is empty (0 bytes)")]
    Empty {
        /// The input path.
        path: PathBuf,
    },
    /// The file has a database ending or header, but it cannot be read as one.
    #[error("{path}: {reason}")]
    Database {
        /// The input path.
        path: PathBuf,
        /// Why, in words.
        reason: String,
    },
    /// A folder laid out as a harness's storage tree whose records no adapter recognises.
    #[error(
        "{path}: a storage tree in {label}'s layout, but no record in it is one the adapters recognise; if it is {label}'s, name it with --harness {name}"
    )]
    UnrecognisedTree {
        /// The folder.
        path: PathBuf,
        /// The adapter whose tree layout the folder has.
        name: String,
        /// That harness's name for readers.
        label: String,
    },
    /// A folder without a session file.
    #[error("{path}: no session file in this folder (looked for files ending in {endings})")]
    EmptyFolder {
        /// The folder.
        path: PathBuf,
        /// The endings looked for.
        endings: String,
    },
    /// No adapter recognised the content.
    #[error(
        "could not recognise the harness of {path}: its first records match none of the \
         adapters ({known}); force one with --harness NAME"
    )]
    Unrecognised {
        /// The input path.
        path: PathBuf,
        /// The adapters tried.
        known: String,
    },
    /// `--harness` named an adapter that does not exist.
    #[error("unknown harness `{name}`; known: {known}")]
    UnknownHarness {
        /// The name given.
        name: String,
        /// The adapters available.
        known: String,
    },
    /// Every record was unreadable, or there were none.
    #[error("{path}: nothing could be read ({reason})")]
    Nothing {
        /// The input path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// A loaded session with the warnings met on the way.
#[derive(Debug)]
pub struct Loaded {
    /// The canonical session, subagents included.
    pub session: Session,
    /// What was skipped or doubtful.
    pub warnings: Vec<Warning>,
    /// Records skipped on purpose, by the adapter's reason, for the report.
    pub skipped: Vec<(String, usize)>,
    /// The folder holding the main file (used to find subagent files).
    pub main_file: PathBuf,
}

/// Loads one session from a file or a folder.
pub fn load(input: &Path, set: &AdapterSet, harness: Option<&str>) -> Result<Loaded, InputError> {
    load_session(input, set, harness, None)
}

/// The ids of the sessions an input holds when it holds several (a storage tree or a database
/// read by `harness`'s adapter), newest first; `None` for an input of one session.
pub fn sessions_in(input: &Path, set: &AdapterSet, harness: &str) -> Option<Vec<String>> {
    let adapter = set.get(harness)?;
    // Most adapters read one session per file: nothing to open.
    if !layouts(&adapter.spec).any(|l| matches!(l.format, InputFormat::Sqlite | InputFormat::Tree))
    {
        return None;
    }
    if input.is_dir() {
        let (_, layout, root, _) = find_tree(input, set, Some(adapter))?;
        return joined::session_ids(&root, layout).ok();
    }
    let layout = forced_layout(input, adapter);
    match layout.format {
        InputFormat::Sqlite | InputFormat::Tree => joined::session_ids(input, layout).ok(),
        _ => None,
    }
}

/// Like [`load`], reading the session with id `session` from an input that holds several (a
/// storage tree or a database); a file of one session ignores it.
pub fn load_session(
    input: &Path,
    set: &AdapterSet,
    harness: Option<&str>,
    session: Option<&str>,
) -> Result<Loaded, InputError> {
    if !input.exists() {
        return Err(InputError::Missing {
            path: input.to_owned(),
        });
    }
    if let Some(kind) = special_kind(input) {
        return Err(InputError::NotAFile {
            path: input.to_owned(),
            kind,
        });
    }
    // A file this user cannot read says so, whatever reads it next (detection would only
    // find that no adapter recognises it; SQLite that it cannot open a database).
    if input.is_file()
        && let Err(error) = File::open(input)
    {
        return Err(InputError::Io {
            path: input.to_owned(),
            error,
        });
    }
    let forced = match harness {
        Some(name) => Some(set.get(name).ok_or_else(|| InputError::UnknownHarness {
            name: name.to_owned(),
            known: set.names().join(", "),
        })?),
        None => None,
    };
    if input.is_dir()
        && let Some((adapter, layout, root, read)) = find_tree(input, set, forced)
    {
        // Detection read the whole tree already; it is the session unless one was asked for.
        let read = if session.is_none() { Some(read) } else { None };
        return read_session(&root, adapter, layout, session, read);
    }
    let main = if input.is_dir() {
        match newest_session_file(input, set, forced) {
            Ok(main) => main,
            // The folder has a tree layout's session files, but detection refused them: say so.
            Err(e @ InputError::EmptyFolder { .. }) => {
                return Err(tree_lookalike(input, set).map_or(e, |a| {
                    InputError::UnrecognisedTree {
                        path: input.to_owned(),
                        name: a.spec.name.clone(),
                        label: a.spec.label.clone(),
                    }
                }));
            }
            Err(e) => return Err(e),
        }
    } else {
        input.to_owned()
    };
    let (adapter, layout) = match forced {
        Some(a) => (a, forced_layout(&main, a)),
        None => detect_layout(&main, set)?,
    };
    read_session(&main, adapter, layout, session, None)
}

/// What a path is when it is neither a regular file nor a folder (links followed): a FIFO
/// would block the read until a writer comes, a device such as `/dev/zero` never ends.
pub fn special_kind(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() || meta.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = meta.file_type();
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("a special file")
}

/// Every input layout of an adapter: the main one, then `input.layouts`.
fn layouts(spec: &AdapterSpec) -> impl Iterator<Item = &InputSpec> {
    std::iter::once(&spec.input).chain(spec.input.layouts.iter())
}

/// A joined input as read, with the warnings met reading it.
type JoinedRead<'s> = (joined::Joined<JoinedRecord<'s>>, Vec<Warning>);

/// A joined record as a load keeps it: drafted where it was joined (its record let go there),
/// with the links that regroup it and whether detection recognises it.
struct JoinedRecord<'s> {
    links: (Option<String>, Option<String>),
    recognised: bool,
    draft: Draft<'s>,
}

impl<'s> JoinedRecord<'s> {
    fn of(spec: &'s AdapterSpec, rec: Json, detect: bool) -> Self {
        Self {
            links: links(spec, &rec),
            recognised: detect && spec.detect.iter().any(|c| detect_holds(c, &rec)),
            draft: Draft::of(spec, 0, &rec),
        }
    }
}

/// Applies joined records' drafts in the order their links regroup them, numbered in that
/// order.
fn apply_joined(interp: &mut Interpreter<'_>, records: Vec<JoinedRecord<'_>>) {
    let order = grouped(records.iter().map(|r| r.links.clone()));
    let mut slots: Vec<Option<JoinedRecord<'_>>> = records.into_iter().map(Some).collect();
    for (at, i) in order.into_iter().enumerate() {
        if let Some(r) = slots.get_mut(i).and_then(Option::take) {
            interp.apply(r.draft.numbered(at + 1));
        }
    }
}

/// The first `tree` layout (of the forced adapter, or of any) whose session files are in `dir`,
/// with what reading its (latest) session gave.
fn find_tree<'a>(
    dir: &Path,
    set: &'a AdapterSet,
    forced: Option<&'a Adapter>,
) -> Option<(&'a Adapter, &'a InputSpec, PathBuf, JoinedRead<'a>)> {
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
                let needs = Needs::with_detection(&a.spec);
                let keep = |rec| JoinedRecord::of(&a.spec, rec, true);
                let read = joined::read(&root, l, None, Some(&needs), &keep, &mut warnings).ok()?;
                let accepted = match forced {
                    Some(_) => !read.records.is_empty(),
                    None => read.records.iter().any(|r| r.recognised),
                };
                accepted.then_some((a, l, root, (read, warnings)))
            })
    })
}

/// The adapter whose storage-tree layout a folder has (its session files are there), when
/// detection found none of its records.
fn tree_lookalike<'a>(dir: &Path, set: &'a AdapterSet) -> Option<&'a Adapter> {
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
fn forced_layout<'a>(path: &Path, adapter: &'a Adapter) -> &'a InputSpec {
    let ext = extension(path);
    let sqlite = joined::is_sqlite(path);
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

fn read_session(
    main: &Path,
    adapter: &Adapter,
    layout: &InputSpec,
    want: Option<&str>,
    read: Option<JoinedRead<'_>>,
) -> Result<Loaded, InputError> {
    let spec = &adapter.spec;
    let source = display_name(main);
    let mut warnings = Vec::new();
    let mut interp = Interpreter::new(spec);
    let mut children = Vec::new();
    let count = match layout.format {
        InputFormat::Tree | InputFormat::Sqlite => {
            let joined = match read {
                Some((joined, met)) => {
                    warnings.extend(met);
                    joined
                }
                None => {
                    let keep = |rec| JoinedRecord::of(spec, rec, false);
                    let needs = Needs::of(spec);
                    joined::read(main, layout, want, Some(&needs), &keep, &mut warnings).map_err(
                        |e| InputError::Nothing {
                            path: main.to_owned(),
                            reason: e.to_string(),
                        },
                    )?
                }
            };
            children = joined.children;
            let count = joined.records.len();
            apply_joined(&mut interp, joined.records);
            count
        }
        _ => read_records(main, spec, layout, &source, &mut warnings, &mut interp)?,
    };
    let mut raw = interp.finish();
    // A file that holds only one subagent's inline records is that subagent's own transcript
    // (given as the input): its records are the session's, and the files beside it are its
    // siblings, not its subagents.
    let own_subagent = raw.events.is_empty() && raw.sidechains.len() == 1;
    if own_subagent && let Some((_, events)) = raw.sidechains.pop() {
        raw.events = events;
    }
    if count == 0 {
        let reason = warnings
            .first()
            .map(|w| w.message.clone())
            .unwrap_or_else(|| "the file holds no records".to_owned());
        return Err(InputError::Nothing {
            path: main.to_owned(),
            reason,
        });
    }
    // Records were read, but not one is a record this adapter knows (a forced adapter on
    // another harness's file): nothing to show, and saying so beats an empty notebook.
    if raw.events.is_empty()
        && raw.sidechains.is_empty()
        && raw.skipped.keys().all(|r| r == METADATA_RECORD)
        && raw.duplicates == 0
        && children.is_empty()
    {
        let types: Vec<&str> = raw.unmatched.keys().map(String::as_str).take(5).collect();
        let met = match types.is_empty() {
            true => String::new(),
            false => format!(" (types met: {})", types.join(", ")),
        };
        return Err(InputError::Nothing {
            path: main.to_owned(),
            reason: format!(
                "none of its {count} record(s) is one the {} adapter reads{met}",
                spec.name
            ),
        });
    }
    let mut skipped = Vec::new();
    let mut normalizer = Normalizer::new(spec);
    report_raw(spec, &raw, &source, &mut warnings, &mut skipped);
    let mut session = normalizer.session(raw, &source, FailureScope::Session, &mut warnings);
    let mut stack: Vec<joined::Joined<JoinedRecord<'_>>> = children;
    stack.reverse();
    while let Some(child) = stack.pop() {
        let name = child
            .id
            .clone()
            .unwrap_or_else(|| "child session".to_owned());
        let mut interp = Interpreter::new(spec);
        apply_joined(&mut interp, child.records);
        let raw = interp.finish();
        report_raw(spec, &raw, &name, &mut warnings, &mut skipped);
        let mut sub = normalizer.session(raw, &name, FailureScope::Subagent, &mut warnings);
        let nested = std::mem::take(&mut sub.subagents);
        session.subagents.push(Subagent {
            agent_id: name,
            session: sub,
        });
        session.subagents.extend(nested);
        stack.extend(child.children.into_iter().rev());
    }

    let agents: Vec<String> = session
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(call) => call.agent_id.clone(),
            _ => None,
        })
        .collect();
    let names = Names {
        id: session.facts.id.as_deref(),
        agents: &agents,
    };
    let files = match own_subagent {
        true => Vec::new(),
        false => subagent_files(main, spec, &names),
    };
    for (path, by_id, agent) in files {
        let name = relative_name(main, &path);
        let mut interp = Interpreter::new(spec);
        match read_records(&path, spec, layout, &name, &mut warnings, &mut interp) {
            Ok(_) => {}
            Err(e) => {
                warnings.push(Warning::whole(&name, format!("skipped: {e}")));
                continue;
            }
        }
        let raw = interp.finish();
        // A flat subagent file beside other sessions belongs to this one only when it says so;
        // one found under a folder named by the session's id belongs to it by where it is.
        if !by_id && raw.facts.id.is_some() && raw.facts.id != session.facts.id {
            continue;
        }
        report_raw(spec, &raw, &name, &mut warnings, &mut skipped);
        let file_agent = agent;
        let mut sub = normalizer.session(raw, &name, FailureScope::Subagent, &mut warnings);
        if !sub.events.is_empty() {
            let mut own = std::mem::take(&mut sub.subagents);
            let agent_id = file_agent.unwrap_or_else(|| name.clone());
            sub.subagents = Vec::new();
            own.insert(
                0,
                Subagent {
                    agent_id,
                    session: sub,
                },
            );
            session.subagents.extend(own);
        } else {
            session.subagents.extend(sub.subagents);
        }
    }
    // A subagent a call names whose transcript is in none of the places read: said, so the
    // call's result alone does not read as the whole of its work.
    let mut missing: Vec<&str> = Vec::new();
    for agent in &agents {
        if !missing.contains(&agent.as_str())
            && !session.subagents.iter().any(|s| s.agent_id == *agent)
        {
            missing.push(agent);
        }
    }
    for agent in missing {
        let shown = if agent.len() <= 64
            && agent
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        {
            format!("subagent {agent}")
        } else {
            "a subagent".to_owned()
        };
        warnings.push(Warning::whole(
            &source,
            format!(
                "{shown}: its own transcript is not in the files read with this session; the call that started it shows its result only"
            ),
        ));
    }
    warnings.extend(normalizer.finish(&source));
    skipped.sort();
    let mut merged: Vec<(String, usize)> = Vec::new();
    for (reason, n) in skipped {
        match merged.last_mut() {
            Some((r, m)) if *r == reason => *m += n,
            _ => merged.push((reason, n)),
        }
    }
    Ok(Loaded {
        session,
        warnings,
        skipped: merged,
        main_file: main.to_owned(),
    })
}

/// Turns the interpreter's counts into warnings (unrecognised records) and skip counts.
fn report_raw(
    spec: &AdapterSpec,
    raw: &Raw,
    source: &str,
    warnings: &mut Vec<Warning>,
    skipped: &mut Vec<(String, usize)>,
) {
    for (reason, n) in &raw.skipped {
        skipped.push((reason.clone(), *n));
    }
    if raw.duplicates > 0 {
        skipped.push(("repeated record".to_owned(), raw.duplicates));
    }
    let known = known_types(spec);
    for (name, (n, line)) in &raw.unmatched {
        let message = match known.contains(&name.as_str()) {
            // The type is one the rules read: it is the record's shape that is new.
            true => format!(
                "{n} record(s) of type `{name}` in a shape no rule of the adapter reads (a field \
                 holds another kind of value, or one the rules need is absent) skipped"
            ),
            false => format!("{n} record(s) or block(s) of unrecognised type `{name}` skipped"),
        };
        warnings.push(Warning::at_line(source, *line, message));
    }
}

/// The type names the adapter's top-level rules test for (`eq` or `one_of` at `type_at`).
fn known_types(spec: &AdapterSpec) -> Vec<&str> {
    fn walk<'s>(cond: &'s Condition, at: &Pointer, out: &mut Vec<&'s str>) {
        match cond {
            Condition::Eq(p, v) if p == at => out.extend(v.as_str()),
            Condition::OneOf(p, vs) if p == at => out.extend(vs.iter().filter_map(Json::as_str)),
            Condition::Any(cs) | Condition::All(cs) => cs.iter().for_each(|c| walk(c, at, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    if let Some(at) = &spec.records.type_at {
        for rule in &spec.event_map {
            for cond in &rule.when {
                walk(cond, at, &mut out);
            }
        }
    }
    out
}

/// The longest line read as a record. A longer one is skipped with a warning naming it, its
/// bytes passed over without being kept, so a line of any length costs no more memory than
/// this.
pub const MAX_LINE: usize = 64 << 20;

/// A compressed file is read up to this many times its own size once decompressed (and at
/// least [`MIN_EXPANDED`]); what is past that is left out with a warning. Real session logs
/// compress 2 to 15 times; a stream that expands far more is a bomb, and reading all of it (a
/// 200 KB file can hold 6 GiB) would cost minutes of work for nothing.
pub const MAX_RATIO: u64 = 100;

/// The least a compressed file may expand to, whatever its size.
pub const MIN_EXPANDED: u64 = 256 << 20;

/// The largest JSON document (`format: json` or a document ending) read whole.
pub const MAX_DOCUMENT: u64 = 1 << 30;

/// An input opened for reading, and where a decompressed stream stops early.
struct Opened {
    reader: Box<dyn BufRead + Send>,
    cut: Option<Cut>,
}

/// The limit of a decompressed stream, and whether the stream passed it.
struct Cut {
    limit: u64,
    passed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Cut {
    fn passed(&self) -> bool {
        self.passed.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The warning for a stream cut at its limit, at the line it stopped in.
    fn warning(&self, source: &str, line: usize) -> Warning {
        Warning::at_line(
            source,
            line,
            format!(
                "the decompressed stream passed {} MiB ({MAX_RATIO} times the file's size, at \
                 least {} MiB); the rest of the file is not read",
                self.limit >> 20,
                MIN_EXPANDED >> 20
            ),
        )
    }
}

/// A reader that gives at most `left` bytes, then ends, noting when more was there.
struct Capped<R> {
    inner: R,
    left: u64,
    passed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut one = [0u8; 1];
            if self.inner.read(&mut one)? > 0 {
                self.passed
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Opens a file for reading; a name ending in `.zst` is decompressed as a stream, up to
/// [`MAX_RATIO`] times the file's size.
fn open(path: &Path) -> std::io::Result<Opened> {
    let file = File::open(path)?;
    if has_ending(path, "zst") {
        let size = file.metadata().map_or(0, |m| m.len());
        let limit = size.saturating_mul(MAX_RATIO).max(MIN_EXPANDED);
        let passed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let decoder = zstd::stream::read::Decoder::new(file)?;
        let capped = Capped {
            inner: decoder,
            left: limit,
            passed: passed.clone(),
        };
        Ok(Opened {
            reader: Box::new(BufReader::with_capacity(1 << 20, capped)),
            cut: Some(Cut { limit, passed }),
        })
    } else {
        Ok(Opened {
            reader: Box::new(BufReader::with_capacity(1 << 20, file)),
            cut: None,
        })
    }
}

/// What reading one line gave.
#[derive(Debug, PartialEq, Eq)]
enum LineRead {
    /// The input ended before any byte.
    End,
    /// A line (with its newline, unless it is the last) was appended.
    Line,
    /// A line longer than the limit was passed over; this many bytes.
    TooLong(u64),
}

/// Appends one line (up to and including `\n`) to `buf`, unless it is longer than `max`:
/// then it is read past, nothing of it kept.
fn read_line(reader: &mut dyn BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<LineRead> {
    let start = buf.len();
    let mut skipped: Option<u64> = None;
    loop {
        let (used, done) = {
            let available = match reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(match skipped {
                    Some(n) => LineRead::TooLong(n),
                    None if buf.len() > start => LineRead::Line,
                    None => LineRead::End,
                });
            }
            let (used, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            match &mut skipped {
                Some(n) => *n += used as u64,
                None if buf.len() - start + used > max => {
                    skipped = Some((buf.len() - start + used) as u64);
                    buf.truncate(start);
                }
                None => buf.extend_from_slice(&available[..used]),
            }
            (used, done)
        };
        reader.consume(used);
        if done {
            return Ok(match skipped {
                Some(n) => LineRead::TooLong(n),
                None => LineRead::Line,
            });
        }
    }
}

/// The warning for a line longer than [`MAX_LINE`].
fn long_line(source: &str, line: usize, bytes: u64) -> Warning {
    Warning::at_line(
        source,
        line,
        format!(
            "line of {} MiB, longer than the {} MiB a record may be; skipped",
            bytes >> 20,
            MAX_LINE >> 20
        ),
    )
}

/// Whether a file's name ends in `.<ending>` (`jsonl`, `jsonl.zst`).
fn has_ending(path: &Path, ending: &str) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.len() > ending.len() + 1 && n.ends_with(ending) && {
            let dot = n.len() - ending.len() - 1;
            n.as_bytes().get(dot) == Some(&b'.')
        }
    })
}

/// How an adapter reads this file: its `format`, unless the ending is a document ending.
fn format_of(layout: &InputSpec, path: &Path) -> InputFormat {
    if layout
        .document_extensions
        .iter()
        .any(|e| has_ending(path, e))
    {
        InputFormat::Json
    } else {
        layout.format
    }
}

/// Reads every record of a file in order, feeding each with its 1-based line number.
/// Returns how many records were read; unreadable lines become warnings.
fn read_records<'s>(
    path: &Path,
    spec: &'s AdapterSpec,
    layout: &InputSpec,
    source: &str,
    warnings: &mut Vec<Warning>,
    interp: &mut Interpreter<'s>,
) -> Result<usize, InputError> {
    let io = |e| InputError::Io {
        path: path.to_owned(),
        error: e,
    };
    let Opened { mut reader, cut } = open(path).map_err(io)?;
    // Each line is parsed into only what the adapter reads.
    let needs = Needs::of(spec);
    let replay = spec.records.replay.as_ref();
    let grouped = spec.records.group_by.is_some();
    // Each record is drafted where it is parsed, and its place in a replayed log found there;
    // records to regroup by their parent link are kept whole until their order is known.
    let item = |line: usize, rec: Json| -> Item<'s> {
        match replay {
            _ if grouped => Item::Record(rec),
            Some(r) => Item::Replayed(Replayed::of(r, rec, &|rec| {
                Box::new(Draft::of(spec, line, &rec))
            })),
            None => Item::Draft(Box::new(Draft::of(spec, line, &rec))),
        }
    };
    let mut log: Replay<Box<Draft<'s>>> = Replay::default();
    let mut held: Vec<(usize, Json)> = Vec::new();
    let mut take = |interp: &mut Interpreter<'_>, line: usize, item: Item<'s>| match item {
        Item::Nothing => false,
        Item::Draft(draft) => {
            interp.apply(*draft);
            true
        }
        Item::Replayed(r) => {
            log.push(r);
            true
        }
        Item::Record(rec) => {
            held.push((line, rec));
            true
        }
    };
    let count = match format_of(layout, path) {
        InputFormat::Tree | InputFormat::Sqlite => {
            warnings.push(Warning::whole(
                source,
                "a joined input is not a record file",
            ));
            0
        }
        InputFormat::Jsonl => {
            // Lines are read in batches; one batch is parsed (on every core) while the rules
            // run over the one before, in line order, and the next is read.
            let mut count = 0;
            let mut empty = true;
            let mut line_no = 0;
            let mut ready: Vec<Parsed<'s>> = Vec::new();
            let mut batch = Batch::default();
            let mut spare = Batch::default();
            read_batch(&mut reader, &mut line_no, &mut batch, cut.as_ref()).map_err(io)?;
            loop {
                empty &= batch.is_empty();
                if batch.is_empty() && ready.is_empty() {
                    break;
                }
                let (next, read) = rayon::join(
                    || batch.parse(&needs, source, &item),
                    || {
                        for p in ready.drain(..) {
                            warnings.extend(p.warnings);
                            count += usize::from(take(interp, p.line, p.item));
                        }
                        read_batch(&mut reader, &mut line_no, &mut spare, cut.as_ref())
                    },
                );
                ready = next;
                read.map_err(io)?;
                std::mem::swap(&mut batch, &mut spare);
            }
            if let Some(cut) = cut.as_ref().filter(|c| c.passed()) {
                warnings.push(cut.warning(source, line_no + 1));
            } else if empty {
                warnings.push(Warning::whole(source, "empty file"));
            }
            count
        }
        InputFormat::Json => {
            let mut text = Vec::new();
            reader
                .take(MAX_DOCUMENT + 1)
                .read_to_end(&mut text)
                .map_err(io)?;
            if text.len() as u64 > MAX_DOCUMENT {
                warnings.push(Warning::whole(
                    source,
                    format!(
                        "a JSON document larger than {} MiB; not read",
                        MAX_DOCUMENT >> 20
                    ),
                ));
                return Ok(0);
            }
            if let Some(cut) = cut.as_ref().filter(|c| c.passed()) {
                warnings.push(cut.warning(source, 1));
                return Ok(0);
            }
            let mut doc: Json = match parse_document(&text, source, warnings) {
                Ok(d) => d,
                Err(e) => {
                    warnings.push(Warning::whole(
                        source,
                        format!("not valid JSON ({})", describe_json_error(&e)),
                    ));
                    return Ok(0);
                }
            };
            let at = layout.records_at.as_deref().unwrap_or("");
            let Some(Json::Array(records)) = doc.pointer_mut(at).map(Json::take) else {
                warnings.push(Warning::whole(source, format!("no record list at `{at}`")));
                return Ok(0);
            };
            // Session facts of the document itself (its id, start time) come first.
            interp.facts_only(&doc);
            let count = records.len();
            let items: Vec<Item<'s>> = records
                .into_par_iter()
                .enumerate()
                .map(|(i, rec)| item(i + 1, rec))
                .collect();
            for (i, it) in items.into_iter().enumerate() {
                take(interp, i + 1, it);
            }
            count
        }
    };
    if !grouped {
        let (drafts, relisted) = log.finish();
        for draft in drafts {
            interp.apply(*draft);
        }
        interp.skip(RELISTED, relisted);
        return Ok(count);
    }
    if let Some(r) = replay {
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
    let regrouped = group_indexed(spec, held.into_iter().map(|(_, r)| r).collect());
    interp.records(
        regrouped
            .into_iter()
            .map(|(i, rec)| (lines.get(i).copied().unwrap_or(i + 1), rec))
            .collect(),
    );
    Ok(count)
}

/// A record's place in an append-only log, found where the record is parsed.
enum Replayed<T> {
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
            super::interpret::lookup(rec, &p.path)
                .filter(|v| !v.is_null())
                .map(super::interpret::scalar_string)
        };
        if let Some(target) = spec.rewind.as_ref().and_then(|p| key(p, &rec)) {
            return Self::Rewind(target);
        }
        let own = key(&spec.key, &rec);
        if let Some(Json::Array(list)) = spec
            .reset
            .as_ref()
            .and_then(|p| super::interpret::lookup(&rec, &p.path))
        {
            if spec.reset_keeps {
                let items = list
                    .iter()
                    .map(|item| {
                        let adds = spec
                            .reset_adds
                            .iter()
                            .all(|c| super::interpret::condition_holds(c, item));
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
    index: HashMap<String, usize>,
    /// Keys a keeping reset listed as copies of earlier records.
    copies: HashSet<String>,
    /// How many copies were left out.
    relisted: usize,
    /// How many places the log had when its last reset was replayed.
    last_reset: usize,
}

impl<T> Default for Replay<T> {
    fn default() -> Self {
        Self {
            records: Vec::new(),
            index: HashMap::new(),
            copies: HashSet::new(),
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

/// Lines read together: about this many bytes.
const BATCH_BYTES: usize = 1 << 20;

/// Lines of a JSONL file read together, each with its 1-based number.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    lines: Vec<(usize, std::ops::Range<usize>)>,
    /// Lines longer than [`MAX_LINE`], passed over: their numbers and lengths.
    long: Vec<(usize, u64)>,
}

/// One line parsed: its number, what it holds, and what it warns of.
struct Parsed<'s> {
    line: usize,
    item: Item<'s>,
    warnings: Vec<Warning>,
}

/// What a parsed line holds.
enum Item<'s> {
    /// No record (a blank or bad line).
    Nothing,
    /// A record, drafted where it was parsed (its record is let go there).
    Draft(Box<Draft<'s>>),
    /// A drafted record of a replayed log, with its place in the log.
    Replayed(Replayed<Box<Draft<'s>>>),
    /// A record kept whole, to regroup.
    Record(Json),
}

/// Reads whole lines into `batch` (emptied first) until about [`BATCH_BYTES`] are read or the
/// input ends. The same two batches are read into again and again: each holds its room, so a
/// batch read on one thread and let go on another is not handed back to the allocator every
/// time.
fn read_batch(
    reader: &mut dyn BufRead,
    line_no: &mut usize,
    batch: &mut Batch,
    cut: Option<&Cut>,
) -> std::io::Result<()> {
    batch.lines.clear();
    batch.long.clear();
    batch.bytes.clear();
    // A very long line leaves its room behind only until the next batch.
    if batch.bytes.capacity() > 4 * BATCH_BYTES {
        batch.bytes = Vec::new();
    }
    batch.bytes.reserve(BATCH_BYTES + (BATCH_BYTES >> 3));
    while batch.bytes.len() < BATCH_BYTES {
        let start = batch.bytes.len();
        match read_line(reader, &mut batch.bytes, MAX_LINE)? {
            LineRead::End => break,
            // A stream cut at its limit ends inside a line: that line is not a record the
            // writer cut short, and the cut's own warning names it.
            LineRead::Line
                if cut.is_some_and(Cut::passed) && batch.bytes.last() != Some(&b'\n') =>
            {
                batch.bytes.truncate(start);
                break;
            }
            LineRead::Line => {
                *line_no += 1;
                batch.lines.push((*line_no, start..batch.bytes.len()));
            }
            LineRead::TooLong(bytes) => {
                *line_no += 1;
                batch.long.push((*line_no, bytes));
            }
        }
    }
    Ok(())
}

impl Batch {
    /// Whether the batch read no line at all.
    fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.long.is_empty()
    }

    /// Parses every line on every core, and makes each record an [`Item`] there.
    fn parse<'s>(
        &self,
        needs: &Needs,
        source: &str,
        item: &(dyn Fn(usize, Json) -> Item<'s> + Sync),
    ) -> Vec<Parsed<'s>> {
        let mut parsed: Vec<Parsed<'s>> = self
            .lines
            .par_iter()
            .map(|(line, range)| {
                let buf = &self.bytes[range.clone()];
                let complete = buf.last() == Some(&b'\n');
                let mut warnings = Vec::new();
                let record = parse_line(buf, needs, complete, source, *line, &mut warnings);
                Parsed {
                    line: *line,
                    item: record.map_or(Item::Nothing, |rec| item(*line, rec)),
                    warnings,
                }
            })
            .collect();
        if !self.long.is_empty() {
            parsed.extend(self.long.iter().map(|&(line, bytes)| Parsed {
                line,
                item: Item::Nothing,
                warnings: vec![long_line(source, line, bytes)],
            }));
            parsed.sort_by_key(|p| p.line);
        }
        parsed
    }
}

fn parse_line(
    buf: &[u8],
    needs: &Needs,
    complete: bool,
    source: &str,
    line: usize,
    warnings: &mut Vec<Warning>,
) -> Option<Json> {
    let text = match std::str::from_utf8(buf) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => {
            warnings.push(Warning::at_line(
                source,
                line,
                "invalid UTF-8; bad bytes replaced with U+FFFD",
            ));
            String::from_utf8_lossy(buf)
        }
    };
    // A byte order mark some editors put at the start of a file is not part of the record.
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.is_empty() {
        return None;
    }
    match parse_mended(trimmed, |t| needs::parse(t, needs)) {
        Ok((v @ Json::Object(_), mended)) => {
            if mended {
                warnings.push(Warning::at_line(source, line, LONE_SURROGATE));
            }
            Some(v)
        }
        Ok(_) => {
            warnings.push(Warning::at_line(
                source,
                line,
                "not a JSON object; line skipped",
            ));
            None
        }
        Err(e) if !complete && e.is_eof() => {
            warnings.push(Warning::at_line(
                source,
                line,
                "truncated last line (the writer stopped mid-record); skipped",
            ));
            None
        }
        Err(e) => {
            warnings.push(Warning::at_line(
                source,
                line,
                format!("not valid JSON ({}); line skipped", describe_json_error(&e)),
            ));
            None
        }
    }
}

/// The warning for a record kept with a lone surrogate escape mended.
const LONE_SURROGATE: &str = "a lone UTF-16 surrogate escape (half of a character, as a string cut inside an emoji \
     leaves it) replaced with U+FFFD; record kept";

/// Parses JSON text with `parse`; when it fails and the text holds a lone UTF-16 surrogate
/// escape (valid JSON that serde_json rejects), parses it again with each one replaced by
/// `\ufffd`. Says whether it did.
pub(crate) fn parse_mended<T>(
    text: &str,
    parse: impl Fn(&str) -> serde_json::Result<T>,
) -> serde_json::Result<(T, bool)> {
    match parse(text) {
        Ok(v) => Ok((v, false)),
        Err(e) => match mend_surrogates(text) {
            Some(mended) => parse(&mended).map(|v| (v, true)).map_err(|_| e),
            None => Err(e),
        },
    }
}

/// The text with each lone UTF-16 surrogate escape (a `\ud83d` not followed by the escape of
/// its other half, or a trailing half alone) replaced by `\ufffd`; `None` when there is none.
/// Node's `JSON.stringify` writes one for a string cut inside an emoji.
pub(crate) fn mend_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        if b.get(at) != Some(&b'\\') || b.get(at + 1) != Some(&b'u') {
            return None;
        }
        let hex = std::str::from_utf8(b.get(at + 2..at + 6)?).ok()?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut out: Option<String> = None;
    let (mut copied, mut i) = (0, 0);
    while let Some(off) = b.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        let at = i + off;
        let Some(u) = unit(at) else {
            // Another escape (`\\`, `\"`, `\n`): its second character is not a new one.
            i = at + 2;
            continue;
        };
        let lone = match u {
            0xD800..=0xDBFF => match unit(at + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i = at + 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let o = out.get_or_insert_with(String::new);
            o.push_str(&text[copied..at]);
            o.push_str("\\ufffd");
            copied = at + 6;
        }
        i = at + 6;
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

/// A whole JSON document: a byte order mark before it is passed over, lone surrogate escapes
/// are mended with a warning.
fn parse_document(
    bytes: &[u8],
    source: &str,
    warnings: &mut Vec<Warning>,
) -> serde_json::Result<Json> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let (doc, mended) = parse_mended(text, |t| serde_json::from_str::<Json>(t))?;
            if mended {
                warnings.push(Warning::whole(source, LONE_SURROGATE));
            }
            Ok(doc)
        }
        Err(_) => serde_json::from_slice(bytes),
    }
}

/// serde_json's message without echoing input text.
fn describe_json_error(e: &serde_json::Error) -> String {
    // serde_json stops 128 levels down and calls it a syntax error.
    if e.to_string().starts_with("recursion limit exceeded") {
        return format!("nested more than 128 levels deep, at column {}", e.column());
    }
    let what = match e.classify() {
        serde_json::error::Category::Eof => "unexpected end",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "bad data",
        serde_json::error::Category::Io => "read error",
    };
    format!("{what} at column {}", e.column())
}

/// Picks the adapter whose detection rules match most of the file's first records.
pub fn detect<'a>(path: &Path, set: &'a AdapterSet) -> Result<&'a Adapter, InputError> {
    detect_layout(path, set).map(|(a, _)| a)
}

/// Picks the adapter and input layout whose detection rules match most of the file's first
/// records. Each layout is tried when the file's ending fits it; an SQLite file is read
/// through the layout's join.
fn detect_layout<'a>(
    path: &Path,
    set: &'a AdapterSet,
) -> Result<(&'a Adapter, &'a InputSpec), InputError> {
    let sqlite = joined::is_sqlite(path);
    // Why a database layout could not read the file, for the message when nothing fits.
    let mut database: Option<String> = None;
    let mut head: Option<Vec<Json>> = None;
    // Why the first lines gave no record, when a line was too long to read.
    let mut unread: Option<String> = None;
    let mut whole: Option<Json> = None;
    let mut best: Option<(&Adapter, &InputSpec, usize)> = None;
    for adapter in set.iter() {
        let spec = &adapter.spec;
        for layout in layouts(spec) {
            if !layout.extensions.is_empty()
                && !layout.extensions.iter().any(|e| has_ending(path, e))
            {
                continue;
            }
            let joined_records;
            let records: Vec<&Json> = match format_of(layout, path) {
                InputFormat::Tree => continue,
                InputFormat::Sqlite => {
                    if !sqlite {
                        if !layout.extensions.is_empty() {
                            database.get_or_insert_with(|| {
                                "not an SQLite database (its first bytes are not the SQLite \
                                 header), though its name says it is one"
                                    .to_owned()
                            });
                        }
                        continue;
                    }
                    joined_records =
                        match joined::read(path, layout, None, None, &|r| r, &mut Vec::new()) {
                            Ok(j) => j.records,
                            Err(e) => {
                                database = Some(format!(
                                    "an SQLite database the {} adapter cannot read: {e}",
                                    spec.label
                                ));
                                Vec::new()
                            }
                        };
                    recognised(set, joined_records.iter()).collect()
                }
                InputFormat::Jsonl => {
                    if head.is_none() {
                        let (records, note) = first_records(path, set)?;
                        head = Some(records);
                        unread = note;
                    }
                    head.iter().flatten().collect()
                }
                InputFormat::Json => {
                    if whole.is_none() {
                        let fits = std::fs::metadata(path).is_ok_and(|m| m.len() <= MAX_DOCUMENT);
                        whole = fits
                            .then(|| std::fs::read(path).ok())
                            .flatten()
                            .and_then(|b| parse_document(&b, "", &mut Vec::new()).ok());
                    }
                    let at = layout.records_at.as_deref().unwrap_or("");
                    match whole.as_ref().and_then(|d| d.pointer(at)) {
                        Some(Json::Array(a)) => recognised(set, a.iter()).collect(),
                        _ => Vec::new(),
                    }
                }
            };
            let score = records
                .iter()
                .filter(|r| spec.detect.iter().any(|c| detect_holds(c, r)))
                .count();
            if score > 0 && best.is_none_or(|(_, _, s)| score > s) {
                best = Some((adapter, layout, score));
            }
        }
    }
    if let Some((a, l, _)) = best {
        return Ok((a, l));
    }
    if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
        return Err(InputError::Empty {
            path: path.to_owned(),
        });
    }
    if let Some(reason) = database {
        return Err(InputError::Database {
            path: path.to_owned(),
            reason,
        });
    }
    if let (Some(reason), true) = (unread, head.as_ref().is_none_or(Vec::is_empty)) {
        return Err(InputError::Nothing {
            path: path.to_owned(),
            reason,
        });
    }
    Err(InputError::Unrecognised {
        path: path.to_owned(),
        known: set.names().join(", "),
    })
}

/// A record's key and the key of its parent, when the adapter regroups records
/// (`records.group_by`).
fn links(spec: &AdapterSpec, rec: &Json) -> (Option<String>, Option<String>) {
    let Some(g) = &spec.records.group_by else {
        return (None, None);
    };
    let text = |p: &super::spec::Pointer| {
        super::interpret::lookup(rec, &p.path)
            .filter(|v| !v.is_null())
            .map(super::interpret::scalar_string)
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

fn detect_holds(cond: &Condition, record: &Json) -> bool {
    // Detection conditions are record-level; reuse the interpreter's semantics.
    super::interpret::condition_holds(cond, record)
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
fn first_records(path: &Path, set: &AdapterSet) -> Result<(Vec<Json>, Option<String>), InputError> {
    let Opened { mut reader, cut } = open(path).map_err(|e| InputError::Io {
        path: path.to_owned(),
        error: e,
    })?;
    let mut records = Vec::new();
    let mut line = Vec::new();
    let (mut number, mut note) = (0, None);
    let name = display_name(path);
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
fn newest_session_file(
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

/// What a `subagent_files` pattern may name: the main session's `{id}`, and `{agent}`, each
/// subagent id the main session's calls record.
struct Names<'a> {
    id: Option<&'a str>,
    agents: &'a [String],
}

/// A value usable as part of a file name: nothing that could climb out of the folder.
fn name_part(value: &str) -> Option<&str> {
    (!value.is_empty() && !value.contains(['/', '\\']) && value != "..").then_some(value)
}

/// Subagent files that belong beside `main`, by the adapter's `subagent_files` patterns, each
/// with whether its pattern named the session (`{id}` or `{agent}`: the file then belongs to
/// the session by its name or place, whatever session id it records itself) and the agent id
/// its name carries. Patterns are tried in order, and an `{agent}` pattern only for the agents
/// no earlier pattern found: a later, wider pattern (sibling folders) is a fallback, read only
/// when it is needed.
fn subagent_files(
    main: &Path,
    spec: &AdapterSpec,
    names: &Names<'_>,
) -> Vec<(PathBuf, bool, Option<String>)> {
    let Some(dir) = main.parent() else {
        return Vec::new();
    };
    let stem = main
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let mut out: Vec<(PathBuf, bool, Option<String>)> = Vec::new();
    // Each folder is listed once, however many patterns and agents name it.
    let mut listed: HashMap<PathBuf, Vec<PathBuf>> = HashMap::new();
    for pattern in &spec.input.subagent_files {
        let by_id = pattern.contains("{id}");
        // A file under the session's own folder belongs to it by where it is.
        let by_place = by_id || pattern.contains("{stem}/");
        let pattern = match names.id.and_then(name_part) {
            Some(id) => pattern.replace("{id}", id),
            None if by_id => continue,
            None => pattern.clone(),
        };
        let pattern = pattern.replace("{stem}", stem);
        // `{agent}`: one pattern per subagent the session names, the file named by that id.
        let expanded: Vec<(String, Option<&str>)> = if pattern.contains("{agent}") {
            names
                .agents
                .iter()
                .filter_map(|a| name_part(a))
                .filter(|a| !out.iter().any(|(_, _, id)| id.as_deref() == Some(*a)))
                .map(|a| (pattern.replace("{agent}", a), Some(a)))
                .collect()
        } else {
            vec![(pattern, None)]
        };
        for (pattern, agent) in expanded {
            let (folders, file_pat) = match pattern.rsplit_once('/') {
                Some((d, f)) => (folders_at(dir, d), f.to_owned()),
                None => (vec![dir.to_owned()], pattern.clone()),
            };
            let mut found: Vec<PathBuf> = Vec::new();
            for sub in folders {
                let files = listed.entry(sub).or_insert_with_key(|sub| {
                    let mut files: Vec<PathBuf> = std::fs::read_dir(sub)
                        .into_iter()
                        .flatten()
                        .filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| p != main && p.is_file())
                        .collect();
                    files.sort();
                    files
                });
                found.extend(
                    files
                        .iter()
                        .filter(|p| {
                            p.file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| wildcard(&file_pat, n))
                        })
                        .cloned(),
                );
            }
            for p in found {
                if out.iter().any(|(q, _, _)| *q == p) {
                    continue;
                }
                let from_name = || {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| agent_id_from_name(&file_pat, n))
                };
                let id = agent.map(str::to_owned).or_else(from_name);
                out.push((p, by_place || agent.is_some(), id));
            }
        }
    }
    out
}

/// The folders a pattern's folder part names from `dir`: `..` is the folder above, a part with
/// `*` matches every subfolder whose name fits (`../*` is every sibling folder), in name order.
fn folders_at(dir: &Path, rel: &str) -> Vec<PathBuf> {
    let mut at = vec![dir.to_owned()];
    for part in rel.split('/').filter(|p| !p.is_empty() && *p != ".") {
        at = match part {
            ".." => at
                .iter()
                .filter_map(|d| d.parent().map(Path::to_path_buf))
                .collect(),
            _ if part.contains(['*', '?']) => at
                .iter()
                .flat_map(|d| {
                    let mut subs: Vec<PathBuf> = std::fs::read_dir(d)
                        .into_iter()
                        .flatten()
                        .filter_map(Result::ok)
                        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                        .filter(|e| e.file_name().to_str().is_some_and(|n| wildcard(part, n)))
                        .map(|e| e.path())
                        .collect();
                    subs.sort();
                    subs
                })
                .collect(),
            _ => at.iter().map(|d| d.join(part)).collect(),
        };
        at.dedup();
    }
    at
}

/// The agent id a subagent file's name carries: what the pattern's one `*` matched
/// (`agent-*.jsonl` and `agent-a1.jsonl` give `a1`).
fn agent_id_from_name(pattern: &str, name: &str) -> Option<String> {
    let (head, tail) = pattern.split_once('*')?;
    if tail.contains('*') {
        return None;
    }
    let id = name.strip_prefix(head)?.strip_suffix(tail)?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// Matches a file-name pattern: `*` is any run of characters, `?` any one character.
pub(crate) fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    // The length of the character at `j` (a literal byte of a longer character steps one).
    let step = |j: usize| {
        name.get(j..)
            .and_then(|rest| rest.chars().next())
            .map_or(1, char::len_utf8)
    };
    let (mut i, mut j) = (0, 0);
    // The last `*` seen, and where in the name its run would end if it took one more character.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some(b'*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(b'?') => {
                i += 1;
                j += step(j);
            }
            Some(c) if *c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + step(sj);
                    star = Some((si, j));
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|c| *c == b'*')
}

/// A file's display name: its name only, never the folders above it.
pub fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "input".to_owned())
}

fn relative_name(main: &Path, path: &Path) -> String {
    main.parent()
        .and_then(|d| path.strip_prefix(d).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| display_name(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_matches_file_name_patterns() {
        assert!(wildcard("agent-*.jsonl", "agent-1a2b.jsonl"));
        assert!(!wildcard("agent-*.jsonl", "agent-1a2b.meta.json"));
        assert!(!wildcard("agent-*.jsonl", "x.jsonl"));
        assert!(wildcard("*", "anything"));
        assert!(wildcard("a*b*c", "aXbYc"));
        assert!(!wildcard("a*b*c", "aXc"));
        assert!(wildcard("??", "07"));
        assert!(!wildcard("??", "2026"));
        assert!(wildcard(
            "rollout-*-a1.jsonl",
            "rollout-2026-01-02T00-00-01-a1.jsonl"
        ));
        assert!(!wildcard(
            "rollout-*-a1.jsonl",
            "rollout-2026-01-02T00-00-01-a1.jsonl.zst"
        ));
        assert!(wildcard("*.jsonl", ".jsonl"));
        assert!(wildcard("?-*", "é-x"), "one character, not one byte");
        assert!(!wildcard("?", "ab"));
    }

    #[test]
    fn parse_line_names_truncation_and_bad_json() {
        let mut w = Vec::new();
        assert!(parse_line(br#"{"a":"#, &Needs::all(), false, "f.jsonl", 3, &mut w).is_none());
        assert!(
            w[0].to_string()
                .starts_with("f.jsonl:3: truncated last line")
        );
        assert!(parse_line(b"{nope}\n", &Needs::all(), true, "f.jsonl", 4, &mut w).is_none());
        assert!(w[1].to_string().starts_with("f.jsonl:4: not valid JSON"));
        assert!(parse_line(b"[1]\n", &Needs::all(), true, "f.jsonl", 5, &mut w).is_none());
        assert!(w[2].message.contains("not a JSON object"));
    }

    #[test]
    fn parse_line_keeps_a_record_with_invalid_utf8() {
        let mut w = Vec::new();
        let rec = parse_line(
            b"{\"a\":\"x\xffy\"}\n",
            &Needs::all(),
            true,
            "f.jsonl",
            1,
            &mut w,
        );
        assert_eq!(rec, Some(serde_json::json!({"a": "x\u{fffd}y"})));
        assert!(w[0].message.contains("invalid UTF-8"));
    }

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
                rec.get("id").map(super::super::interpret::scalar_string)
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
    fn a_read_error_names_its_cause_once() {
        let err = anyhow::Error::from(InputError::Io {
            path: PathBuf::from("s.jsonl"),
            error: std::io::Error::from(std::io::ErrorKind::PermissionDenied),
        });
        let text = format!("{err:#}");
        assert_eq!(text.matches("permission denied").count(), 1, "{text}");
    }

    #[test]
    fn lone_surrogate_escapes_are_mended_and_pairs_kept() {
        assert_eq!(
            mend_surrogates(r#""a\ud83d""#).as_deref(),
            Some(r#""a\ufffd""#)
        );
        assert_eq!(
            mend_surrogates(r#""\ude42x""#).as_deref(),
            Some(r#""\ufffdx""#)
        );
        assert_eq!(mend_surrogates(r#""\ud83d\ude42""#), None);
        assert_eq!(
            mend_surrogates(r#""\\ud83d""#),
            None,
            "an escaped backslash"
        );
        assert_eq!(
            mend_surrogates(r#""\ud83d\ud83d\ude42""#).as_deref(),
            Some(r#""\ufffd\ud83d\ude42""#)
        );
        assert_eq!(mend_surrogates(r#""\ud8"#), None);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_passed_over_whole() -> std::io::Result<()> {
        let text = b"short\nxxxxxxxxxxxxxxxxxxxx\nlast";
        let mut reader = std::io::BufReader::with_capacity(4, &text[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::Line);
        assert_eq!(buf, b"short\n");
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::TooLong(21));
        assert_eq!(buf, b"short\n", "nothing of the long line is kept");
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::Line);
        assert_eq!(buf, b"short\nlast");
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::End);
        Ok(())
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

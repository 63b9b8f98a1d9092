//! Reading inputs: resolving a path to session files, detecting the harness, and feeding records
//! to the interpreter, the main session's and its subagents'.
//!
//! Session logs are read here and in the modules below; the other places that touch the
//! filesystem are the user's adapter folder (`adapters`), discovery (`catalog`) and the
//! commands that write pages.
//!
//! - `detect`: which adapter and layout read an input; the newest session file of a folder;
//! - `open`: opening a file, decompressing `.zst` within a bound;
//! - `jsonl`: the parallel line reader; `document`: one JSON document; `json`: mending;
//! - `replay`: the order records are applied in (replayed logs, regrouping by parent link);
//! - `subagents`: subagent files beside a session;
//! - `joined`: folder trees and SQLite databases joined into records.

mod detect;
mod document;
mod joined;
mod json;
mod jsonl;
mod open;
mod replay;
mod subagents;

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::adapters::interpret::{Interpreter, METADATA_RECORD, Raw};
use crate::adapters::needs::Needs;
use crate::adapters::normalize::Normalizer;
use crate::adapters::pattern::{has_ending, relative_name};
use crate::adapters::spec::{AdapterSpec, Condition, InputFormat, InputSpec, Pointer};
use crate::adapters::{Adapter, AdapterSet};
use crate::events::{EventKind, FailureScope, Session, Subagent};
use crate::warning::Warning;
use detect::{detect_layout, find_tree, forced_layout, newest_session_file, tree_lookalike};
use joined::Joined;
use open::Origin;
use replay::{JoinedRecord, RecordOrder, Sequence, apply_joined};
use serde_json::Value as Json;
use subagents::{Names, subagent_files};

pub use document::MAX_DOCUMENT;
pub use jsonl::MAX_LINE;
pub use open::{MAX_RATIO, MIN_EXPANDED};

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
        let tree = find_tree(input, set, Some(adapter), Parse::Pruned)?;
        return joined::session_ids(&tree.root, tree.layout).ok();
    }
    let layout = forced_layout(input, adapter);
    match layout.format {
        InputFormat::Sqlite | InputFormat::Tree => joined::session_ids(input, layout).ok(),
        _ => None,
    }
}

/// Loads one session from a file or a folder, or from standard input when `input` is `-`:
/// with `session`, the one with that id from an input that holds several (a storage tree or a
/// database); a file of one session ignores it.
pub fn load_session(
    input: &Path,
    set: &AdapterSet,
    harness: Option<&str>,
    session: Option<&str>,
) -> Result<Loaded, InputError> {
    load(input, set, harness, session, Parse::Pruned)
}

/// [`load_session`], parsing records as `parse` says.
fn load(
    input: &Path,
    set: &AdapterSet,
    harness: Option<&str>,
    session: Option<&str>,
    parse: Parse,
) -> Result<Loaded, InputError> {
    if input.as_os_str() == "-" {
        return load_stdin(set, harness, parse);
    }
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
    let forced = forced(set, harness)?;
    if input.is_dir()
        && let Some(tree) = find_tree(input, set, forced, parse)
    {
        // Detection read the whole tree already; it is the session unless one was asked for.
        let read = if session.is_none() {
            Some(tree.read)
        } else {
            None
        };
        let picked = Picked {
            origin: Origin::File(&tree.root),
            adapter: tree.adapter,
            layout: tree.layout,
        };
        return read_session(picked, session, read, parse);
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
    let origin = Origin::File(&main);
    let (adapter, layout) = match forced {
        Some(a) => (a, forced_layout(&main, a)),
        None => detect_layout(origin, set, None)?,
    };
    let picked = Picked {
        origin,
        adapter,
        layout,
    };
    read_session(picked, session, None, parse)
}

/// The adapter `--harness` names, if it names one.
fn forced<'a>(
    set: &'a AdapterSet,
    harness: Option<&str>,
) -> Result<Option<&'a Adapter>, InputError> {
    let Some(name) = harness else {
        return Ok(None);
    };
    set.get(name)
        .map(Some)
        .ok_or_else(|| InputError::UnknownHarness {
            name: name.to_owned(),
            known: set.names().join(", "),
        })
}

/// Loads the session piped to standard input (a harness's streaming output, or a log file),
/// its harness and layout detected from its content; `--harness` limits detection to that
/// adapter's layouts. The stream is read whole, up to [`MAX_DOCUMENT`].
fn load_stdin(set: &AdapterSet, harness: Option<&str>, parse: Parse) -> Result<Loaded, InputError> {
    use std::io::IsTerminal as _;
    let forced = forced(set, harness)?;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Err(InputError::Nothing {
            path: PathBuf::from(open::STDIN),
            reason: "standard input is a terminal; pipe a session into it".to_owned(),
        });
    }
    load_stream(stdin.lock(), set, forced, parse)
}

/// Loads the session a stream holds (see [`load_stdin`]).
fn load_stream(
    reader: impl std::io::Read,
    set: &AdapterSet,
    forced: Option<&Adapter>,
    parse: Parse,
) -> Result<Loaded, InputError> {
    let (bytes, cut) = open::read_stream(reader, MAX_DOCUMENT).map_err(|error| InputError::Io {
        path: PathBuf::from(open::STDIN),
        error,
    })?;
    let origin = Origin::Stream(&bytes);
    let (adapter, layout) = match (detect_layout(origin, set, forced), forced) {
        (Ok(picked), _) => picked,
        // A forced adapter reads the stream with its first layout that reads a stream.
        (Err(_), Some(a)) => (a, stream_layout(a)),
        (Err(e), None) => return Err(e),
    };
    let picked = Picked {
        origin,
        adapter,
        layout,
    };
    let mut loaded = read_session(picked, None, None, parse)?;
    if cut {
        loaded.warnings.insert(
            0,
            Warning::whole(
                open::STDIN,
                format!(
                    "standard input held more than {} MiB; the rest is not read",
                    MAX_DOCUMENT >> 20
                ),
            ),
        );
    }
    Ok(loaded)
}

/// An adapter's first layout that reads a stream (not a folder tree or a database).
fn stream_layout(adapter: &Adapter) -> &InputSpec {
    layouts(&adapter.spec)
        .find(|l| !matches!(l.format, InputFormat::Tree | InputFormat::Sqlite))
        .unwrap_or(&adapter.spec.input)
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
struct JoinedRead<'s> {
    joined: Joined<JoinedRecord<'s>>,
    warnings: Vec<Warning>,
}

/// How much of each record is parsed: only what the adapter reads, as every load does; a
/// test also parses whole records, to check that pruning changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parse {
    Pruned,
    #[cfg(test)]
    Whole,
}

impl Parse {
    /// What of a record is parsed for `spec`'s rules (and its detection, with `detect`);
    /// `None`: the whole record.
    fn needs(self, spec: &AdapterSpec, detect: bool) -> Option<Needs> {
        match self {
            Parse::Pruned if detect => Some(Needs::with_detection(spec)),
            Parse::Pruned => Some(Needs::of(spec)),
            #[cfg(test)]
            Parse::Whole => None,
        }
    }
}

/// How an adapter reads this input: its `format`, unless a file's ending is a document
/// ending.
fn format_of(layout: &InputSpec, origin: Origin<'_>) -> InputFormat {
    match origin {
        Origin::File(path)
            if layout
                .document_extensions
                .iter()
                .any(|e| has_ending(path, e)) =>
        {
            InputFormat::Json
        }
        _ => layout.format,
    }
}

/// What a session is read from, and the adapter and layout picked to read it.
#[derive(Clone, Copy)]
struct Picked<'a> {
    origin: Origin<'a>,
    adapter: &'a Adapter,
    layout: &'a InputSpec,
}

/// Reads one session (its main records, child sessions and subagent files) with the adapter
/// and layout picked for it, and makes it canonical.
fn read_session(
    picked: Picked<'_>,
    want: Option<&str>,
    read: Option<JoinedRead<'_>>,
    parse: Parse,
) -> Result<Loaded, InputError> {
    let Picked {
        origin,
        adapter,
        layout,
    } = picked;
    let spec = &adapter.spec;
    let source = origin.name();
    let mut warnings = Vec::new();
    let mut interp = Interpreter::new(spec);
    let (count, children) = match layout.format {
        InputFormat::Tree | InputFormat::Sqlite => {
            let joined = match read {
                Some(read) => {
                    warnings.extend(read.warnings);
                    read.joined
                }
                None => read_joined(origin, spec, layout, want, parse, &mut warnings)?,
            };
            let count = joined.records.len();
            apply_joined(&mut interp, joined.records);
            (count, joined.children)
        }
        _ => {
            let file = RecordFile {
                origin,
                layout,
                source: &source,
                parse,
            };
            let count = file.read(spec, &mut warnings, &mut interp)?;
            (count, Vec::new())
        }
    };
    let mut raw = interp.finish();
    // What the interpreter kept to recognise records (a key per record it read) is let go
    // with it: its pages are given back before the records become events beside them.
    crate::memory::release();
    // A file that holds only one subagent's inline records is that subagent's own transcript
    // (given as the input): its records are the session's, and the files beside it are its
    // siblings, not its subagents.
    let own_subagent = raw.events.is_empty() && raw.sidechains.len() == 1;
    if own_subagent && let Some((_, events)) = raw.sidechains.pop() {
        raw.events = events;
    }
    if let Some(reason) = nothing_read(spec, count, &raw, &warnings, children.is_empty()) {
        return Err(InputError::Nothing {
            path: origin.path(),
            reason,
        });
    }
    let mut out = Assembly {
        spec,
        parse,
        normalizer: Normalizer::new(spec),
        warnings,
        skipped: Vec::new(),
    };
    let mut session = out.session(raw, &source, FailureScope::Session);
    out.child_sessions(&mut session, children);
    let agents = called_agents(&session);
    // A stream has no folder to hold subagent files.
    if let (false, Origin::File(main)) = (own_subagent, origin) {
        out.subagent_files(&mut session, main, layout, &agents);
    }
    out.missing_agents(&session, &agents, &source);
    Ok(out.finish(session, &source))
}

/// Reads a joined input's session (`want`, or the one its session level picks).
fn read_joined<'s>(
    origin: Origin<'_>,
    spec: &'s AdapterSpec,
    layout: &InputSpec,
    want: Option<&str>,
    parse: Parse,
    warnings: &mut Vec<Warning>,
) -> Result<Joined<JoinedRecord<'s>>, InputError> {
    let Origin::File(main) = origin else {
        return Err(InputError::Nothing {
            path: origin.path(),
            reason: "a folder tree or a database is read from its file or folder, not a stream"
                .to_owned(),
        });
    };
    let keep = |rec| JoinedRecord::of(spec, rec, false);
    let needs = parse.needs(spec, false);
    joined::read(main, layout, want, needs.as_ref(), &keep, warnings).map_err(|e| {
        InputError::Nothing {
            path: main.to_owned(),
            reason: e.to_string(),
        }
    })
}

/// Why a session read gave nothing to show: no record at all, or not one record this adapter
/// knows (a forced adapter on another harness's file), which saying beats an empty notebook.
fn nothing_read(
    spec: &AdapterSpec,
    count: usize,
    raw: &Raw,
    warnings: &[Warning],
    no_children: bool,
) -> Option<String> {
    if count == 0 {
        return Some(
            warnings
                .first()
                .map(|w| w.message.clone())
                .unwrap_or_else(|| "the file holds no records".to_owned()),
        );
    }
    let known_none = raw.events.is_empty()
        && raw.sidechains.is_empty()
        && raw.skipped.keys().all(|r| r == METADATA_RECORD)
        && raw.duplicates == 0
        && no_children;
    if !known_none {
        return None;
    }
    let types: Vec<&str> = raw.unmatched.keys().map(String::as_str).take(5).collect();
    let met = match types.is_empty() {
        true => String::new(),
        false => format!(" (types met: {})", types.join(", ")),
    };
    Some(format!(
        "none of its {count} record(s) is one the {} adapter reads{met}",
        spec.name
    ))
}

/// The subagent ids the session's calls record, in call order.
fn called_agents(session: &Session) -> Vec<String> {
    session
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall(call) => call.agent_id.clone(),
            _ => None,
        })
        .collect()
}

/// A session being assembled from its parts: the one normalizer they share (so a vendor word
/// is warned about once), and what reading them met.
struct Assembly<'s> {
    spec: &'s AdapterSpec,
    parse: Parse,
    normalizer: Normalizer<'s>,
    warnings: Vec<Warning>,
    skipped: Vec<(String, usize)>,
}

impl Assembly<'_> {
    /// Makes one part canonical, its counts turned into warnings and skip counts.
    fn session(&mut self, raw: Raw, name: &str, scope: FailureScope) -> Session {
        report_raw(self.spec, &raw, name, &mut self.warnings, &mut self.skipped);
        self.normalizer
            .session(raw, name, scope, &mut self.warnings)
    }

    /// Adds a joined input's child sessions (and theirs, depth first) as subagents.
    fn child_sessions(&mut self, session: &mut Session, children: Vec<Joined<JoinedRecord<'_>>>) {
        let mut stack = children;
        stack.reverse();
        while let Some(child) = stack.pop() {
            let name = child
                .id
                .clone()
                .unwrap_or_else(|| "child session".to_owned());
            let mut interp = Interpreter::new(self.spec);
            apply_joined(&mut interp, child.records);
            let mut sub = self.session(interp.finish(), &name, FailureScope::Subagent);
            let nested = std::mem::take(&mut sub.subagents);
            session.subagents.push(Subagent {
                agent_id: name,
                session: sub,
            });
            session.subagents.extend(nested);
            stack.extend(child.children.into_iter().rev());
        }
    }

    /// Adds the subagent files beside `main` that belong to the session.
    fn subagent_files(
        &mut self,
        session: &mut Session,
        main: &Path,
        layout: &InputSpec,
        agents: &[String],
    ) {
        let names = Names {
            id: session.facts.id.as_deref(),
            agents,
        };
        for file in subagent_files(main, self.spec, &names) {
            let name = relative_name(main, &file.path);
            let mut interp = Interpreter::new(self.spec);
            let records = RecordFile {
                origin: Origin::File(&file.path),
                layout,
                source: &name,
                parse: self.parse,
            };
            if let Err(e) = records.read(self.spec, &mut self.warnings, &mut interp) {
                self.warnings
                    .push(Warning::whole(&name, format!("skipped: {e}")));
                continue;
            }
            let raw = interp.finish();
            // A flat subagent file beside other sessions belongs to this one only when it says
            // so; one found under a folder named by the session's id belongs to it by where it
            // is.
            if !file.named && raw.facts.id.is_some() && raw.facts.id != session.facts.id {
                continue;
            }
            let mut sub = self.session(raw, &name, FailureScope::Subagent);
            if sub.events.is_empty() {
                session.subagents.extend(sub.subagents);
                continue;
            }
            let mut own = std::mem::take(&mut sub.subagents);
            own.insert(
                0,
                Subagent {
                    agent_id: file.agent.unwrap_or_else(|| name.clone()),
                    session: sub,
                },
            );
            session.subagents.extend(own);
        }
    }

    /// Says of each subagent a call names whose transcript is in none of the places read that
    /// it is missing, so the call's result alone does not read as the whole of its work.
    fn missing_agents(&mut self, session: &Session, agents: &[String], source: &str) {
        let mut missing: Vec<&str> = Vec::new();
        for agent in agents {
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
            self.warnings.push(Warning::whole(
                source,
                format!(
                    "{shown}: its own transcript is not in the files read with this session; the call that started it shows its result only"
                ),
            ));
        }
    }

    /// The loaded session: the normalizer's own warnings last, skip counts merged by reason.
    fn finish(self, session: Session, source: &str) -> Loaded {
        let Self {
            normalizer,
            mut warnings,
            mut skipped,
            ..
        } = self;
        warnings.extend(normalizer.finish(source));
        skipped.sort();
        let mut merged: Vec<(String, usize)> = Vec::new();
        for (reason, n) in skipped {
            match merged.last_mut() {
                Some((r, m)) if *r == reason => *m += n,
                _ => merged.push((reason, n)),
            }
        }
        Loaded {
            session,
            warnings,
            skipped: merged,
        }
    }
}

/// A file of records to read, and how.
struct RecordFile<'a> {
    origin: Origin<'a>,
    layout: &'a InputSpec,
    /// The file's name in warnings.
    source: &'a str,
    parse: Parse,
}

impl RecordFile<'_> {
    /// Reads every record of the file in order, feeding each with its 1-based line number
    /// (its place, in a document). Returns how many records were read; unreadable lines
    /// become warnings.
    fn read<'s>(
        &self,
        spec: &'s AdapterSpec,
        warnings: &mut Vec<Warning>,
        interp: &mut Interpreter<'s>,
    ) -> Result<usize, InputError> {
        let Self {
            origin,
            layout,
            source,
            parse,
        } = *self;
        let io = |e| InputError::Io {
            path: origin.path(),
            error: e,
        };
        let opened = origin.open().map_err(io)?;
        // Each record is drafted where it is parsed, and its place in a replayed log found there;
        // records to regroup by their parent link are kept whole until their order is known.
        let order = RecordOrder::of(spec).knowing(interp);
        let item = |line: usize, rec: Json| order.item(line, rec);
        let mut sequence = Sequence::new(order.clone());
        let count = match format_of(layout, origin) {
            InputFormat::Tree | InputFormat::Sqlite => {
                warnings.push(Warning::whole(
                    source,
                    "a joined input is not a record file",
                ));
                0
            }
            InputFormat::Jsonl => {
                // Each line is parsed into only what the adapter reads.
                let needs = parse.needs(spec, false).unwrap_or_else(Needs::all);
                let take = |line, item| sequence.take(interp, line, item);
                jsonl::read(opened, &needs, source, &item, warnings, take).map_err(io)?
            }
            InputFormat::Json => match document::read(opened, layout, source, &item, warnings) {
                Ok(Some(doc)) => {
                    // Session facts of the document itself (its id, start time) come first.
                    interp.facts_only(&doc.facts);
                    let count = doc.records.len();
                    for (i, it) in doc.records.into_iter().enumerate() {
                        sequence.take(interp, i + 1, it);
                    }
                    count
                }
                Ok(None) => 0,
                Err(e) => return Err(io(e)),
            },
        };
        sequence.finish(interp);
        Ok(count)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::pattern::display_name;

    /// A folder's entries, in name order.
    fn entries(dir: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        out.sort();
        out
    }

    /// Every session the fixtures hold, with the harness to force (a capture's own): each
    /// `<harness>/<case>/session.*` and `tree/`, and every form of every capture.
    fn fixture_sessions() -> anyhow::Result<Vec<(PathBuf, Option<String>)>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut out = Vec::new();
        for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
            for case in entries(&root.join(harness)) {
                for path in entries(&case) {
                    let name = display_name(&path);
                    if (name.starts_with("session.") && path.is_file())
                        || (name == "tree" && path.is_dir())
                    {
                        out.push((path, None));
                    }
                }
            }
        }
        for release in entries(&root.join("captured")) {
            for scenario in entries(&release) {
                let Ok(text) = std::fs::read(scenario.join("capture.json")) else {
                    continue;
                };
                let capture: Json = serde_json::from_slice(&text)?;
                let harness = capture["harness"].as_str().map(str::to_owned);
                for form in capture["forms"].as_array().into_iter().flatten() {
                    if let Some(path) = form["path"].as_str() {
                        out.push((scenario.join(path), harness.clone()));
                    }
                }
            }
        }
        Ok(out)
    }

    #[test]
    fn pruned_and_whole_records_load_the_same_session() -> anyhow::Result<()> {
        let set = AdapterSet::load(None)?;
        let mut compared = 0;
        for (path, harness) in fixture_sessions()? {
            let harness = harness.as_deref();
            let pruned = load(&path, &set, harness, None, Parse::Pruned);
            let whole = load(&path, &set, harness, None, Parse::Whole);
            let shown = path.display();
            match (pruned, whole) {
                (Ok(pruned), Ok(whole)) => {
                    assert_eq!(pruned.session, whole.session, "{shown}");
                    let said = |l: &Loaded| -> Vec<String> {
                        l.warnings.iter().map(ToString::to_string).collect()
                    };
                    assert_eq!(said(&pruned), said(&whole), "{shown}");
                    assert_eq!(pruned.skipped, whole.skipped, "{shown}");
                    compared += 1;
                }
                (Err(pruned), Err(whole)) => {
                    assert_eq!(pruned.to_string(), whole.to_string(), "{shown}");
                }
                (pruned, whole) => {
                    panic!("{shown}: pruned read {pruned:?}, whole read {whole:?}")
                }
            }
        }
        assert!(compared > 100, "only {compared} sessions compared");
        Ok(())
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
}

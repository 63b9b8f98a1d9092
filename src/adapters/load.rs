//! Reading inputs: resolving a path to session files, detecting the harness, and feeding records
//! to the interpreter. The only module besides `run` that touches the filesystem.

use serde_json::Value as Json;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::interpret::{Interpreter, Raw};
use super::normalize::Normalizer;
use super::spec::{AdapterSpec, Condition, InputFormat};
use super::{Adapter, AdapterSet};
use crate::events::{FailureScope, Session, Subagent};
use crate::warning::Warning;

/// How many records detection reads from the start of a file.
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
    #[error("reading {path}: {source}")]
    Io {
        /// The input path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
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
    if !input.exists() {
        return Err(InputError::Missing {
            path: input.to_owned(),
        });
    }
    let forced = match harness {
        Some(name) => Some(set.get(name).ok_or_else(|| InputError::UnknownHarness {
            name: name.to_owned(),
            known: set.names().join(", "),
        })?),
        None => None,
    };
    let main = if input.is_dir() {
        newest_session_file(input, set, forced)?
    } else {
        input.to_owned()
    };
    let adapter = match forced {
        Some(a) => a,
        None => detect(&main, set)?,
    };
    read_session(&main, adapter)
}

fn read_session(main: &Path, adapter: &Adapter) -> Result<Loaded, InputError> {
    let spec = &adapter.spec;
    let source = display_name(main);
    let mut warnings = Vec::new();
    let mut interp = Interpreter::new(spec);
    let count = read_records(main, spec, &source, &mut warnings, |line, rec| {
        interp.record(line, rec)
    })?;
    let raw = interp.finish();
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
    let mut skipped = Vec::new();
    let mut normalizer = Normalizer::new(spec);
    report_raw(&raw, &source, &mut warnings, &mut skipped);
    let mut session = normalizer.session(raw, &source, FailureScope::Session, &mut warnings);

    for path in subagent_files(main, spec) {
        let name = relative_name(main, &path);
        let mut interp = Interpreter::new(spec);
        match read_records(&path, spec, &name, &mut warnings, |line, rec| {
            interp.record(line, rec)
        }) {
            Ok(_) => {}
            Err(e) => {
                warnings.push(Warning::whole(&name, format!("skipped: {e}")));
                continue;
            }
        }
        let raw = interp.finish();
        // A flat subagent file beside other sessions belongs to this one only when it says so.
        if raw.facts.id.is_some() && raw.facts.id != session.facts.id {
            continue;
        }
        report_raw(&raw, &name, &mut warnings, &mut skipped);
        let file_agent = agent_id_from_name(&path);
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
    for (name, (n, line)) in &raw.unmatched {
        warnings.push(Warning::at_line(
            source,
            *line,
            format!("{n} record(s) or block(s) of unrecognised type `{name}` skipped"),
        ));
    }
}

/// Reads every record of a file in order, calling `each` with its 1-based line number.
/// Returns how many records were read; unreadable lines become warnings.
fn read_records(
    path: &Path,
    spec: &AdapterSpec,
    source: &str,
    warnings: &mut Vec<Warning>,
    mut each: impl FnMut(usize, &Json),
) -> Result<usize, InputError> {
    let io = |e| InputError::Io {
        path: path.to_owned(),
        source: e,
    };
    let file = File::open(path).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    match spec.input.format {
        InputFormat::Jsonl => {
            let mut count = 0;
            let mut line_no = 0;
            let mut buf = Vec::new();
            let mut empty = true;
            loop {
                buf.clear();
                let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
                if n == 0 {
                    break;
                }
                empty = false;
                line_no += 1;
                let complete = buf.last() == Some(&b'\n');
                if let Some(rec) = parse_line(&buf, complete, source, line_no, warnings) {
                    count += 1;
                    each(line_no, &rec);
                }
            }
            if empty {
                warnings.push(Warning::whole(source, "empty file"));
            }
            Ok(count)
        }
        InputFormat::Json => {
            let mut text = Vec::new();
            reader.read_to_end(&mut text).map_err(io)?;
            let doc: Json = match serde_json::from_slice(&text) {
                Ok(d) => d,
                Err(e) => {
                    warnings.push(Warning::whole(source, format!("not valid JSON: {e}")));
                    return Ok(0);
                }
            };
            let at = spec.input.records_at.as_deref().unwrap_or("");
            let Some(Json::Array(records)) = doc.pointer(at) else {
                warnings.push(Warning::whole(source, format!("no record list at `{at}`")));
                return Ok(0);
            };
            for (i, rec) in records.iter().enumerate() {
                each(i + 1, rec);
            }
            Ok(records.len())
        }
    }
}

fn parse_line(
    buf: &[u8],
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
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    match serde_json::from_str::<Json>(trimmed) {
        Ok(v @ Json::Object(_)) => Some(v),
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

/// serde_json's message without echoing input text.
fn describe_json_error(e: &serde_json::Error) -> String {
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
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_owned();
    let mut head: Option<Vec<Json>> = None;
    let mut whole: Option<Json> = None;
    let mut best: Option<(&Adapter, usize)> = None;
    for adapter in set.iter() {
        let spec = &adapter.spec;
        if !spec.input.extensions.is_empty() && !spec.input.extensions.contains(&ext) {
            continue;
        }
        let records: Vec<&Json> = match spec.input.format {
            InputFormat::Jsonl => {
                if head.is_none() {
                    head = Some(first_records(path)?);
                }
                head.iter().flatten().collect()
            }
            InputFormat::Json => {
                if whole.is_none() {
                    whole = std::fs::read(path)
                        .ok()
                        .and_then(|b| serde_json::from_slice(&b).ok());
                }
                let at = spec.input.records_at.as_deref().unwrap_or("");
                match whole.as_ref().and_then(|d| d.pointer(at)) {
                    Some(Json::Array(a)) => a.iter().take(DETECT_RECORDS).collect(),
                    _ => Vec::new(),
                }
            }
        };
        let score = records
            .iter()
            .filter(|r| spec.detect.iter().any(|c| detect_holds(c, r)))
            .count();
        if score > 0 && best.is_none_or(|(_, s)| score > s) {
            best = Some((adapter, score));
        }
    }
    best.map(|(a, _)| a)
        .ok_or_else(|| InputError::Unrecognised {
            path: path.to_owned(),
            known: set.names().join(", "),
        })
}

fn detect_holds(cond: &Condition, record: &Json) -> bool {
    // Detection conditions are record-level; reuse the interpreter's semantics.
    super::interpret::condition_holds(cond, record)
}

fn first_records(path: &Path) -> Result<Vec<Json>, InputError> {
    let file = File::open(path).map_err(|e| InputError::Io {
        path: path.to_owned(),
        source: e,
    })?;
    let reader = BufReader::new(file);
    Ok(reader
        .split(b'\n')
        .take(DETECT_RECORDS * 4)
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_slice::<Json>(&l).ok())
        .filter(Json::is_object)
        .take(DETECT_RECORDS)
        .collect())
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
    let endings: Vec<&str> = specs
        .iter()
        .flat_map(|s| s.input.extensions.iter().map(String::as_str))
        .collect();
    let io = |e| InputError::Io {
        path: dir.to_owned(),
        source: e,
    };
    let mut best: Option<(SystemTime, PathBuf)> = None;
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default();
        let is_sub = specs.iter().any(|s| {
            s.input
                .subagent_files
                .iter()
                .filter(|p| !p.contains('/'))
                .any(|p| wildcard(p, name))
        });
        if !path.is_file() || is_sub || !endings.contains(&ext) {
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
    best.map(|(_, p)| p).ok_or_else(|| InputError::EmptyFolder {
        path: dir.to_owned(),
        endings: endings.join(", "),
    })
}

/// Subagent files that belong beside `main`, by the adapter's `subagent_files` patterns.
fn subagent_files(main: &Path, spec: &AdapterSpec) -> Vec<PathBuf> {
    let Some(dir) = main.parent() else {
        return Vec::new();
    };
    let stem = main
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let mut out = Vec::new();
    for pattern in &spec.input.subagent_files {
        let pattern = pattern.replace("{stem}", stem);
        let (sub, file_pat) = match pattern.rsplit_once('/') {
            Some((d, f)) => (dir.join(d), f.to_owned()),
            None => (dir.to_owned(), pattern.clone()),
        };
        let Ok(entries) = std::fs::read_dir(&sub) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p != main && p.is_file())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| wildcard(&file_pat, n))
            })
            .collect();
        found.sort();
        for p in found {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// `agent-<id>.jsonl` → `<id>`.
fn agent_id_from_name(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    stem.strip_prefix("agent-").map(str::to_owned)
}

/// Matches `*` (any run of characters) in a file-name pattern.
fn wildcard(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || !name.ends_with(last) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
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
    }

    #[test]
    fn parse_line_names_truncation_and_bad_json() {
        let mut w = Vec::new();
        assert!(parse_line(br#"{"a":"#, false, "f.jsonl", 3, &mut w).is_none());
        assert!(
            w[0].to_string()
                .starts_with("f.jsonl:3: truncated last line")
        );
        assert!(parse_line(b"{nope}\n", true, "f.jsonl", 4, &mut w).is_none());
        assert!(w[1].to_string().starts_with("f.jsonl:4: not valid JSON"));
        assert!(parse_line(b"[1]\n", true, "f.jsonl", 5, &mut w).is_none());
        assert!(w[2].message.contains("not a JSON object"));
    }

    #[test]
    fn parse_line_keeps_a_record_with_invalid_utf8() {
        let mut w = Vec::new();
        let rec = parse_line(b"{\"a\":\"x\xffy\"}\n", true, "f.jsonl", 1, &mut w);
        assert_eq!(rec, Some(serde_json::json!({"a": "x\u{fffd}y"})));
        assert!(w[0].message.contains("invalid UTF-8"));
    }
}

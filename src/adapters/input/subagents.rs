//! Subagent transcripts kept in files beside the main session: found by the adapter's
//! `subagent_files` patterns, which may name the session's `{id}`, its file's `{stem}` and
//! each `{agent}` its calls started.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::adapters::pattern::{name_part, star_match, wildcard};
use crate::adapters::spec::AdapterSpec;

/// A subagent file found beside a main session.
pub(super) struct SubagentFile {
    pub(super) path: PathBuf,
    /// Whether its pattern named the session (`{id}`, `{stem}/` or `{agent}`): the file then
    /// belongs to the session by its name or place, whatever session id it records itself.
    pub(super) named: bool,
    /// The agent id its name carries.
    pub(super) agent: Option<String>,
}

/// What a `subagent_files` pattern may name: the main session's `{id}`, and `{agent}`, each
/// subagent id the main session's calls record.
pub(super) struct Names<'a> {
    pub(super) id: Option<&'a str>,
    pub(super) agents: &'a [String],
}

/// Subagent files that belong beside `main`, by the adapter's `subagent_files` patterns.
/// Patterns are tried in order, and an `{agent}` pattern only for the agents
/// no earlier pattern found: a later, wider pattern (sibling folders) is a fallback, read only
/// when it is needed.
pub(super) fn subagent_files(
    main: &Path,
    spec: &AdapterSpec,
    names: &Names<'_>,
) -> Vec<SubagentFile> {
    let Some(dir) = main.parent() else {
        return Vec::new();
    };
    let stem = main
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let mut out: Vec<SubagentFile> = Vec::new();
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
                .filter(|a| !out.iter().any(|f| f.agent.as_deref() == Some(*a)))
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
                if out.iter().any(|f| f.path == p) {
                    continue;
                }
                let from_name = || {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| star_match(&file_pat, n))
                };
                out.push(SubagentFile {
                    agent: agent.map(str::to_owned).or_else(from_name),
                    named: by_place || agent.is_some(),
                    path: p,
                });
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

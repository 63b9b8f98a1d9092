//! Folder trees of JSON files (`format: tree`): each level of the join is a file pattern
//! under the tree's root, listed and parsed on every core.

use rayon::prelude::*;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

use super::super::jsonl::MAX_LINE;
use super::{JoinError, Source, field};
use crate::adapters::needs::{self, Needs};
use crate::adapters::pattern;
use crate::adapters::spec::{JoinLevel, JoinSpec};
use crate::warning::Warning;

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

/// A storage tree: the folder its level patterns are relative to.
pub(super) struct Tree {
    pub(super) root: PathBuf,
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
                        .unwrap_or_else(|_| pattern::display_name(path))
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
            pattern::display_name(&self.root)
        )
    }
}

/// Reads a whole file into `bytes`, replacing what it held; a file longer than a record may
/// be ([`MAX_LINE`]) is an error, read no further.
fn read_into(path: &Path, bytes: &mut Vec<u8>) -> std::io::Result<()> {
    use std::io::Read as _;
    const MAX: usize = MAX_LINE;
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
pub(super) fn glob(root: &Path, pattern: &str, parent: &Json) -> Vec<PathBuf> {
    let mut current = vec![root.to_owned()];
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    for (i, seg) in segments.iter().enumerate() {
        let Some(seg) = pattern::substitute(seg, |name| field(parent, name)) else {
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
                        .is_some_and(|n| pattern::wildcard(&seg, n))
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

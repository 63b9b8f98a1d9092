//! Adapters: YAML descriptions of each harness's log format, and the interpreter that reads them.
//!
//! - [`spec`]: the adapter language (serde structs, validated at load);
//! - [`builtin`]: the embedded defaults; a user folder adds or replaces them file by file;
//! - [`input`]: reading input files (folder trees and SQLite databases too) and detecting
//!   their harness;
//! - [`pattern`]: the one file-name pattern dialect;
//! - `interpret`: applying an adapter's rules to records;
//! - `needs`: what of a record an adapter reads, so lines are parsed into only that;
//! - [`normalize`]: the single seam where vendor words become canonical values.

pub mod builtin;
pub mod input;
pub(crate) mod interpret;
pub(crate) mod needs;
pub mod normalize;
pub mod pattern;
pub mod spec;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rayon::prelude::*;

pub use spec::{AdapterError, AdapterSpec};

/// Where an adapter came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Embedded in the binary.
    BuiltIn,
    /// A file in the user's `--adapters` folder that adds a harness.
    User(PathBuf),
    /// A file in the user's `--adapters` folder that replaces a built-in.
    Replaced(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::BuiltIn => f.write_str("built-in"),
            Origin::User(p) => write!(f, "user file {}", p.display()),
            Origin::Replaced(p) => write!(f, "user file {} (replaces built-in)", p.display()),
        }
    }
}

/// One adapter and its origin.
#[derive(Debug, Clone)]
pub struct Adapter {
    /// File name (`claude-code.yaml`).
    pub file: String,
    /// The validated adapter.
    pub spec: AdapterSpec,
    /// Where it came from.
    pub origin: Origin,
}

/// Every adapter in force, in detection order (built-ins first, then added ones by name).
#[derive(Debug, Clone)]
pub struct AdapterSet {
    adapters: Vec<Adapter>,
}

impl AdapterSet {
    /// The built-ins, overlaid file by file with the `.yaml` files of `user_dir`.
    pub fn load(user_dir: Option<&Path>) -> anyhow::Result<Self> {
        let mut files: BTreeMap<String, (String, Origin)> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (name, text) in builtin::BUILTIN_JSON {
            files.insert((*name).to_owned(), ((*text).to_owned(), Origin::BuiltIn));
            order.push((*name).to_owned());
        }
        if let Some(dir) = user_dir {
            for (name, path) in user_files(dir)? {
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading adapter {}", path.display()))?;
                let origin = if files.contains_key(&name) {
                    Origin::Replaced(path)
                } else {
                    order.push(name.clone());
                    Origin::User(path)
                };
                files.insert(name, (text, origin));
            }
        }
        // Each file is parsed and checked on its own (on every core: a few milliseconds of
        // each start); the first failure in order is the one reported.
        let parsed: Vec<(String, Origin, Result<AdapterSpec, AdapterError>)> = order
            .into_iter()
            .filter_map(|file| {
                files
                    .remove(&file)
                    .map(|(text, origin)| (file, text, origin))
            })
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|(file, text, origin)| {
                let spec = match origin {
                    Origin::BuiltIn => AdapterSpec::parse_builtin(&file, &text),
                    _ => AdapterSpec::parse(&file, &text),
                };
                (file, origin, spec)
            })
            .collect();
        let mut adapters = Vec::new();
        for (file, origin, spec) in parsed {
            let spec = spec?;
            if let Some(other) = adapters
                .iter()
                .find(|a: &&Adapter| a.spec.name == spec.name)
            {
                anyhow::bail!(
                    "adapter {file}: field `name`: `{}` is already the name of {}",
                    spec.name,
                    other.file
                );
            }
            adapters.push(Adapter { file, spec, origin });
        }
        Ok(Self { adapters })
    }

    /// Every adapter, in detection order.
    pub fn iter(&self) -> impl Iterator<Item = &Adapter> {
        self.adapters.iter()
    }

    /// The adapter with this name.
    pub fn get(&self, name: &str) -> Option<&Adapter> {
        self.adapters.iter().find(|a| a.spec.name == name)
    }

    /// The names of every adapter, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.adapters.iter().map(|a| a.spec.name.as_str()).collect()
    }
}

/// The `.yaml` files of a folder, sorted by name.
fn user_files(dir: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("reading adapter folder {}", dir.display()))?;
    let mut out = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading adapter folder {}", dir.display()))?
            .path();
        let is_yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if let (true, Some(name)) = (is_yaml, path.file_name().and_then(|n| n.to_str())) {
            out.push((name.to_owned(), path.clone()));
        }
    }
    out.sort();
    Ok(out)
}

/// Writes the built-in adapters into `dir` (created if needed); returns the paths written.
pub fn dump(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, text) in builtin::BUILTIN {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_adapter_loads() -> anyhow::Result<()> {
        let set = AdapterSet::load(None)?;
        assert_eq!(set.iter().count(), builtin::BUILTIN.len());
        assert!(set.iter().all(|a| a.origin == Origin::BuiltIn));
        Ok(())
    }

    /// A run reads the built-in files in their JSON form, without checking their regexes'
    /// automata: this is where they are checked, as a user's file is, and where the JSON is
    /// shown to read as the YAML does.
    #[test]
    fn every_builtin_adapter_passes_the_checks_a_user_file_gets() {
        assert_eq!(builtin::BUILTIN.len(), builtin::BUILTIN_JSON.len());
        for ((name, yaml), (json_name, json)) in builtin::BUILTIN.iter().zip(builtin::BUILTIN_JSON)
        {
            assert_eq!(name, json_name);
            let checked = AdapterSpec::parse(name, yaml);
            assert!(checked.is_ok(), "{name}: {:?}", checked.err());
            let read = AdapterSpec::parse_builtin(name, json);
            assert!(read.is_ok(), "{name}: {:?}", read.err());
            assert_eq!(format!("{checked:?}"), format!("{read:?}"), "{name}");
        }
    }
}

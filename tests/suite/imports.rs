//! The intended imports of ARCHITECTURE.md, checked against the source: no module names one it
//! must never reach. Test code (after `#[cfg(test)]`) and comments are not read.

use std::collections::BTreeSet;
use std::path::Path;

/// (from, to): `from`'s code never names `crate::to`.
const NEVER: &[(&str, &str)] = &[
    ("events", "adapters"),
    ("privacy", "adapters"),
    ("projection", "adapters"),
    ("report", "adapters"),
    ("render", "adapters"),
    ("adapters", "privacy"),
    ("adapters", "projection"),
    ("adapters", "report"),
    ("adapters", "render"),
    ("projection", "report"),
    ("projection", "render"),
    ("report", "render"),
    ("render", "privacy"),
    ("render", "projection"),
    ("render", "events"),
];

/// Modules below the commands: none names `cmd`, `cli` or `console`.
const STAGES: &[&str] = &[
    "adapters",
    "events",
    "privacy",
    "projection",
    "report",
    "render",
    "pipeline",
    "catalog",
    "memory",
    "warning",
];

/// The top-level modules each top-level module names, test code and comments left out.
fn edges() -> anyhow::Result<BTreeSet<(String, String)>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeSet::new();
    let mut folders = vec![src.clone()];
    let name = regex::Regex::new(r"crate::(\w+)|use crate::\{([^}]*)\}")?;
    while let Some(dir) = folders.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src)?.to_string_lossy().into_owned();
            let from = rel
                .split(['/', '\\'])
                .next()
                .unwrap_or_default()
                .trim_end_matches(".rs")
                .to_owned();
            let text = std::fs::read_to_string(&path)?;
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for line in code.lines() {
                let line = line.split("//").next().unwrap_or_default();
                for m in name.captures_iter(line) {
                    let named = match (m.get(1), m.get(2)) {
                        (Some(one), _) => vec![one.as_str().to_owned()],
                        (None, Some(list)) => list
                            .as_str()
                            .split(',')
                            .filter_map(|p| p.trim().split("::").next())
                            .map(str::to_owned)
                            .collect(),
                        _ => Vec::new(),
                    };
                    for to in named {
                        if to != from {
                            out.insert((from.clone(), to));
                        }
                    }
                }
            }
        }
    }
    Ok(out)
}

#[test]
fn no_module_names_one_it_must_never_reach() -> anyhow::Result<()> {
    let edges = edges()?;
    assert!(
        edges.contains(&("pipeline".into(), "adapters".into())),
        "the scan reads the source: {edges:?}"
    );
    let wrong: Vec<&(String, String)> = edges
        .iter()
        .filter(|(from, to)| {
            NEVER.iter().any(|(f, t)| f == from && t == to)
                || (STAGES.contains(&from.as_str())
                    && ["cmd", "cli", "console"].contains(&to.as_str()))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "imports ARCHITECTURE.md rules out: {wrong:?}"
    );
    Ok(())
}

//! The session generators (`scripts/gen-session.py`) write sessions tracebook reads as
//! planned: every turn, every call with the status the generator planted, no planted secret in
//! the notebook or the report.
//!
//! The generator runs under `python3` (`$TRACEBOOK_PYTHON` overrides). Without Python the tests
//! say so and pass, except when `CI` is set: then a missing Python fails them.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::tracebook;

fn python() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRACEBOOK_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let found = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(PathBuf::from("python3"));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set and no python3 was found (install python3, or set TRACEBOOK_PYTHON)"
    );
    eprintln!("no python3 found: generator tests skipped (install python3 to run them)");
    None
}

/// Runs the generator into `dir` and returns the path to render and the manifest.
fn generate(python: &Path, harness: &str, dir: &Path) -> anyhow::Result<(PathBuf, Value)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gen-session.py");
    let out = match harness {
        "codex" => {
            dir.join("rollout-2026-03-02T10-00-00-0195a1b2-0000-7000-8000-000000000000.jsonl")
        }
        "gemini-cli" => dir.join("session-2026-03-02T10-00-0195a1b2.jsonl"),
        _ => dir.join("opencode"),
    };
    let manifest = dir.join("manifest.json");
    let status = Command::new(python)
        .arg(&script)
        .args(["--harness", harness, "--turns", "3", "--seed", "3"])
        .args(["--tool-error-rate", "0.4", "--secret-rate", "0.6"])
        .arg("--out")
        .arg(&out)
        .arg("--manifest")
        .arg(&manifest)
        .status()?;
    assert!(status.success(), "{harness}: the generator failed");
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(&manifest)?)?;
    Ok((out, manifest))
}

/// Every tool call in the report, by call id, with its status word.
fn statuses(v: &Value, into: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            if let (Some(Value::String(id)), Some(Value::String(s))) =
                (m.get("call_id"), m.get("status"))
            {
                into.insert(id.clone(), s.clone());
            }
            m.values().for_each(|x| statuses(x, into));
        }
        Value::Array(a) => a.iter().for_each(|x| statuses(x, into)),
        _ => {}
    }
}

fn check(harness: &str) -> anyhow::Result<()> {
    let Some(python) = python() else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let (input, manifest) = generate(&python, harness, dir.path())?;

    let json = tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(&input)
        .output()?;
    assert!(
        json.status.success(),
        "{harness}: {}",
        String::from_utf8_lossy(&json.stderr)
    );
    let json = String::from_utf8(json.stdout)?;
    let page = dir.path().join("page.html");
    let html = tracebook()
        .arg("render")
        .arg(&input)
        .arg("-o")
        .arg(&page)
        .output()?;
    assert!(
        html.status.success(),
        "{harness}: {}",
        String::from_utf8_lossy(&html.stderr)
    );
    let html = std::fs::read_to_string(&page)?;

    let report: Value = serde_json::from_str(&json)?;
    assert_eq!(report["session"]["harness"], harness);
    let turns = report["turns"].as_array().map_or(0, Vec::len);
    assert_eq!(
        Some(turns as u64),
        manifest["stats"]["turns"].as_u64(),
        "{harness}: turns"
    );

    let mut seen = BTreeMap::new();
    statuses(&report["turns"], &mut seen);
    let planted: BTreeMap<String, String> = manifest["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_owned(),
                c["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert!(
        planted.values().any(|s| s == "error") && planted.values().any(|s| s == "ok"),
        "{harness}: the seed plants both outcomes"
    );
    assert_eq!(seen, planted, "{harness}: each call's status as planted");

    let secrets: Vec<&str> = manifest["secrets"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["value"].as_str())
        .collect();
    assert!(!secrets.is_empty(), "{harness}: the seed plants secrets");
    for s in secrets.iter().copied().chain(["/home/alice"]) {
        assert!(!html.contains(s), "{harness}: {s} in the notebook");
        assert!(!json.contains(s), "{harness}: {s} in the report");
    }
    Ok(())
}

#[test]
fn generated_codex_rollout_renders_as_planted() -> anyhow::Result<()> {
    check("codex")
}

#[test]
fn generated_gemini_recording_renders_as_planted() -> anyhow::Result<()> {
    check("gemini-cli")
}

#[test]
fn generated_opencode_storage_tree_renders_as_planted() -> anyhow::Result<()> {
    check("opencode")
}

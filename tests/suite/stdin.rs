//! `tracebook render -`: a harness's streaming output piped in (Claude Code and Gemini CLI
//! `stream-json`, Codex `exec --json`, OpenCode `run --format json`) reads as the same output
//! saved to a file does, its harness detected from the stream or forced with `--harness`.

use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::{fixtures, tracebook};

/// The first streaming form of every capture, with the capture's harness.
fn streaming_forms() -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let captured = fixtures().join("captured");
    let mut scenarios: Vec<PathBuf> = Vec::new();
    for release in std::fs::read_dir(&captured)?.flatten() {
        if release.path().is_dir() {
            scenarios.extend(
                std::fs::read_dir(release.path())?
                    .flatten()
                    .map(|e| e.path()),
            );
        }
    }
    scenarios.sort();
    for scenario in scenarios {
        let Ok(text) = std::fs::read(scenario.join("capture.json")) else {
            continue;
        };
        let capture: Json = serde_json::from_slice(&text)?;
        let harness = capture["harness"].as_str().unwrap_or_default().to_owned();
        let forms = capture["forms"].as_array().into_iter().flatten();
        let first = forms
            .filter(|f| {
                let form = f["form"].as_str().unwrap_or_default();
                ["stream-json-1", "exec-json-1", "run-json-1"].contains(&form)
            })
            .find_map(|f| f["path"].as_str());
        if let Some(path) = first {
            out.push((harness, scenario.join(path)));
        }
    }
    Ok(out)
}

/// The JSON report `render` writes to standard output, the session piped to it when `input`
/// is `-`.
fn render(input: &std::path::Path, stdin: Option<Vec<u8>>, extra: &[&str]) -> Json {
    let mut cmd = tracebook();
    cmd.arg("render")
        .arg(input)
        .args(["--format", "json", "-o", "-"])
        .args(extra);
    if let Some(bytes) = stdin {
        cmd.write_stdin(bytes);
    }
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).expect("the report is JSON")
}

#[test]
fn each_harness_streaming_output_piped_in_reads_as_its_file_does() -> anyhow::Result<()> {
    let mut harnesses = BTreeSet::new();
    let forms = streaming_forms()?;
    for (harness, path) in &forms {
        let piped = render("-".as_ref(), Some(std::fs::read(path)?), &[]);
        let file = render(path, None, &[]);
        let shown = path.display();
        assert_eq!(piped["session"]["harness"], harness.as_str(), "{shown}");
        assert_eq!(piped["session"]["id"], file["session"]["id"], "{shown}");
        assert_eq!(piped["session"]["source"], "stdin", "{shown}");
        assert_eq!(piped["summary"], file["summary"], "{shown}");
        assert_eq!(piped["turns"], file["turns"], "{shown}");
        assert_eq!(piped["skipped"], file["skipped"], "{shown}");
        let messages = |r: &Json| -> Vec<Json> {
            let list = r["warnings"].as_array().cloned().unwrap_or_default();
            list.into_iter().map(|w| w["message"].clone()).collect()
        };
        assert_eq!(messages(&piped), messages(&file), "{shown}");
        assert!(
            piped["summary"]["turns"].as_u64() > Some(0),
            "{shown}: turns read"
        );
        harnesses.insert(harness.clone());
    }
    assert_eq!(
        harnesses.len(),
        4,
        "a streaming form of every harness: {harnesses:?}"
    );
    assert!(forms.len() >= 30, "{} forms", forms.len());
    Ok(())
}

#[test]
fn harness_forces_the_adapter_of_a_stream() -> anyhow::Result<()> {
    let run = fixtures().join("captured/codex-0.171.0/tools-fail/exec-json-1.jsonl");
    let bytes = std::fs::read(&run)?;
    let forced = render("-".as_ref(), Some(bytes.clone()), &["--harness", "codex"]);
    let detected = render("-".as_ref(), Some(bytes.clone()), &[]);
    assert_eq!(forced["turns"], detected["turns"]);
    // Another harness's adapter reads none of its records, and says so.
    tracebook()
        .args([
            "render",
            "-",
            "--format",
            "json",
            "-o",
            "-",
            "--harness",
            "claude-code",
        ])
        .write_stdin(bytes)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "stdin: nothing could be read (none of its",
        ));
    Ok(())
}

#[test]
fn a_stream_no_adapter_recognises_is_refused_by_name() {
    tracebook()
        .args(["render", "-", "-o", "-"])
        .write_stdin("not a session\n")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "could not recognise the harness of stdin",
        ));
    tracebook()
        .args(["render", "-", "-o", "-"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("stdin: the file is empty"));
}

#[test]
fn a_notebook_of_a_stream_is_named_session_html_by_default() -> anyhow::Result<()> {
    let run = fixtures().join("captured/claude-code-2.1.332/shell/stream-json-1.jsonl");
    let dir = tempfile::tempdir()?;
    tracebook()
        .current_dir(dir.path())
        .args(["render", "-"])
        .write_stdin(std::fs::read(&run)?)
        .assert()
        .success();
    assert!(dir.path().join("session.html").is_file());
    Ok(())
}

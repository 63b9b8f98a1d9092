//! The CI workflow of `examples/ci/`, run as a runner would run it, with each harness's
//! headless output replaced by a fixture in that format: the agent's stream piped into
//! `tracebook render -`, the Markdown job summary, the `--strict` gate and the outcome gate.

use std::path::Path;

/// The workflow's steps that run shell, with the matrix entry's values put in.
fn scripts(harness: &str, agent: &str) -> anyhow::Result<Vec<(String, String)>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ci/agent-notebook.yml");
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&std::fs::read_to_string(path)?)?;
    let job = &doc["jobs"]["agent"];
    let entries = job["strategy"]["matrix"]["include"]
        .as_sequence()
        .cloned()
        .unwrap_or_default();
    assert!(
        entries
            .iter()
            .any(|e| e["harness"].as_str() == Some(harness)),
        "the workflow has a {harness} entry"
    );
    let mut out = Vec::new();
    for step in job["steps"].as_sequence().cloned().unwrap_or_default() {
        let (Some(name), Some(run)) = (step["name"].as_str(), step["run"].as_str()) else {
            continue;
        };
        if name.starts_with("Install") {
            continue;
        }
        let run = run
            .replace("${{ matrix.run }}", agent)
            .replace("${{ matrix.harness }}", harness);
        assert!(!run.contains("${{"), "{name}: {run}");
        out.push((name.to_owned(), run));
    }
    Ok(out)
}

#[test]
fn the_ci_example_runs_for_each_harness() -> anyhow::Result<()> {
    let bin = assert_cmd::cargo::cargo_bin("tracebook");
    let bin_dir = bin.parent().expect("the binary's folder");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let has_jq = std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_ok();
    for (harness, fixture) in [
        ("claude-code", "claude-code/stream-json-runs/session.jsonl"),
        ("codex", "codex/exec-json/session.jsonl"),
        ("gemini-cli", "gemini-cli/stream-json/session.jsonl"),
        ("opencode", "opencode/run-json/session.jsonl"),
    ] {
        let dir = tempfile::tempdir()?;
        let summary = dir.path().join("summary.md");
        let agent = format!("cat '{}'", crate::fixtures().join(fixture).display());
        let read_whole = crate::report(&crate::fixtures().join(fixture))?
            .warnings
            .is_empty();
        for (name, run) in scripts(harness, &agent)? {
            if run.trim_start().starts_with("jq ") && !has_jq {
                continue;
            }
            let status = std::process::Command::new("bash")
                .args(["-e", "-o", "pipefail", "-c", &run])
                .current_dir(dir.path())
                .env_clear()
                .env("PATH", &path)
                .env("GITHUB_STEP_SUMMARY", &summary)
                .env("NO_COLOR", "1")
                .env("TRACEBOOK_NO_OPEN", "1")
                .env("TRACEBOOK_GENERATED_AT", "2026-01-01T00:00:00Z")
                .status()?;
            // The --strict gate passes exactly when the log was read whole; the outcome gate
            // exactly when the report counts no error and no unknown.
            let expected = if name.contains("fully read") {
                read_whole
            } else if name.contains("every tool call") {
                let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
                    dir.path().join("report.json"),
                )?)?;
                report["summary"]["error"] == 0 && report["summary"]["unknown"] == 0
            } else {
                true
            };
            assert_eq!(
                status.success(),
                expected,
                "{harness}: step `{name}` exited {status}"
            );
            if !status.success() {
                // A failed step ends the job: the steps after it do not run.
                break;
            }
        }
        let notebook = std::fs::read_to_string(dir.path().join("notebook.html"))?;
        assert!(notebook.starts_with("<!doctype html>"), "{harness}");
        let md = std::fs::read_to_string(&summary)?;
        assert!(md.starts_with("## Agent session: "), "{harness}: {md}");
        assert_eq!(
            dir.path().join("report.json").is_file(),
            read_whole,
            "{harness}"
        );
    }
    Ok(())
}

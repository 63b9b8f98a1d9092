//! The binary: commands, output files, exit codes and bad input.

use predicates::prelude::*;
use std::fs;

use crate::{fixtures, tracebook};

#[test]
fn renders_a_session_to_an_html_file() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("notebook.html");
    tracebook()
        .arg("render")
        .arg(fixtures().join("claude-code/ordered-steps/session.jsonl"))
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "1 turns, 2 tool calls: 2 ok, 0 error, 0 unknown",
        ));
    let html = fs::read_to_string(&out)?;
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains("id=\"t1-s2\""));
    Ok(())
}

#[test]
fn default_output_is_named_after_the_input() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    tracebook()
        .current_dir(dir.path())
        .arg("render")
        .arg(fixtures().join("claude-code/ordered-steps/session.jsonl"))
        .assert()
        .success();
    assert!(dir.path().join("session.html").is_file());
    Ok(())
}

#[test]
fn json_to_stdout_is_the_report_model() -> anyhow::Result<()> {
    let out = tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(fixtures().join("claude-code/call-without-result/session.jsonl"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out)?;
    assert_eq!(report["schema_version"], 1);
    let call = &report["turns"][0]["steps"][0];
    assert_eq!(call["type"], "tool_call");
    assert_eq!(call["call_id"], "toolu_03SRV");
    assert_eq!(call["status"], "unknown");
    assert_eq!(call["result_size"], serde_json::Value::Null);
    assert_eq!(report["turns"][0]["response_status"], "complete");
    Ok(())
}

#[test]
fn renders_the_newest_session_of_a_project_folder_with_its_subagents() -> anyhow::Result<()> {
    let out = tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(fixtures().join("claude-code/subagent"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out)?;
    let sub = &report["turns"][0]["steps"][0]["subagent"];
    assert_eq!(sub["agent_id"], "a1b2c3d");
    assert_eq!(sub["turns"][0]["steps"][0]["name"], "Grep");
    assert_eq!(sub["turns"][0]["steps"][0]["id"], "t1-s1-a-t1-s1");
    Ok(())
}

#[test]
fn bad_lines_are_warnings_and_the_rest_still_renders() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("bad.html");
    tracebook()
        .arg("render")
        .arg(fixtures().join("claude-code/bad-input/session.jsonl"))
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0)
        .stderr(predicate::str::contains("session.jsonl:2: not valid JSON"))
        .stderr(predicate::str::contains("session.jsonl:7: invalid UTF-8"))
        .stderr(predicate::str::contains(
            "session.jsonl:9: truncated last line",
        ))
        .stderr(predicate::str::contains(
            "unrecognised type `hologram-record`",
        ));
    let html = fs::read_to_string(&out)?;
    assert!(html.contains("No, there is no such file."));
    assert!(html.contains("What was not shown"));
    Ok(())
}

/// Lines are read in batches of about a megabyte: the line numbers a warning names, and what
/// still renders, do not depend on where a batch ends.
#[test]
fn bad_lines_past_the_first_batches_are_named_by_their_own_line() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let fixture = fs::read(fixtures().join("claude-code/bad-input/session.jsonl"))?;
    let mut lines: Vec<&[u8]> = fixture.split_inclusive(|b| *b == b'\n').collect();
    // Forty blank lines of 64 KiB each after line 3: 2.6 MB that hold no record.
    let blank = [vec![b' '; 64 * 1024], vec![b'\n']].concat();
    let padding: Vec<&[u8]> = std::iter::repeat_n(blank.as_slice(), 40).collect();
    lines.splice(3..3, padding);
    let input = dir.path().join("session.jsonl");
    fs::write(&input, lines.concat())?;
    let out = dir.path().join("bad.html");
    tracebook()
        .arg("render")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(0)
        .stderr(predicate::str::contains("session.jsonl:2: not valid JSON"))
        .stderr(predicate::str::contains("session.jsonl:47: invalid UTF-8"))
        .stderr(predicate::str::contains(
            "session.jsonl:49: truncated last line",
        ));
    let html = fs::read_to_string(&out)?;
    assert!(html.contains("No, there is no such file."));
    Ok(())
}

#[test]
fn strict_turns_warnings_into_failure_and_writes_nothing() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("bad.html");
    tracebook()
        .args(["render", "--strict"])
        .arg(fixtures().join("claude-code/bad-input/session.jsonl"))
        .arg("-o")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--strict"));
    assert!(!out.exists());
    Ok(())
}

#[test]
fn a_missing_file_exits_2_naming_it() {
    tracebook()
        .args(["render", "no/such/session.jsonl"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no/such/session.jsonl: no such file or folder",
        ));
}

#[test]
fn an_empty_file_exits_2_naming_it() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let empty = dir.path().join("empty.jsonl");
    fs::write(&empty, "")?;
    tracebook()
        .args(["render", "--harness", "claude-code"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "empty.jsonl: nothing could be read (empty file)",
        ));
    Ok(())
}

#[test]
fn an_unrecognised_file_names_the_way_out() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let other = dir.path().join("other.jsonl");
    fs::write(&other, "{\"kind\": \"something else\"}\n")?;
    tracebook()
        .arg("render")
        .arg(&other)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("could not recognise the harness"))
        .stderr(predicate::str::contains("--harness NAME"));
    Ok(())
}

#[test]
fn an_unknown_harness_lists_the_known_ones() {
    tracebook()
        .args(["render", "--harness", "nope"])
        .arg(fixtures().join("claude-code/ordered-steps/session.jsonl"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown harness `nope`; known: claude-code",
        ));
}

#[test]
fn redact_removes_the_users_own_strings() -> anyhow::Result<()> {
    let out = tracebook()
        .args([
            "render", "--format", "json", "-o", "-", "--redact", "coupon",
        ])
        .arg(fixtures().join("claude-code/ordered-steps/session.jsonl"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out)?;
    assert!(!text.contains("coupon"));
    assert!(text.contains("«redacted:user-string»"));
    Ok(())
}

#[test]
fn the_tool_outcomes_demo_reads_each_harness_through_the_pipeline() -> anyhow::Result<()> {
    let out = tracebook()
        .args(["demo", "tool-outcomes"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone())?;
    for harness in ["Claude Code", "Codex CLI", "Gemini CLI", "OpenCode"] {
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with(harness)).collect();
        assert_eq!(rows.len(), 3, "{text}");
        assert!(
            rows[0].contains("a tool was called  error    exit code "),
            "{text}"
        );
        assert!(rows[1].contains("  ok  "), "{text}");
        assert!(rows[2].contains("  unknown  "), "{text}");
    }
    Ok(())
}

#[test]
fn output_onto_the_input_or_a_link_to_it_is_refused_and_the_input_kept() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("x.jsonl");
    fs::copy(
        fixtures().join("claude-code/ordered-steps/session.jsonl"),
        &log,
    )?;
    let before = fs::read(&log)?;
    let hard = dir.path().join("hard.html");
    fs::hard_link(&log, &hard)?;
    let mut outs = vec![(log.clone(), "html"), (log.clone(), "json"), (hard, "html")];
    #[cfg(unix)]
    {
        let soft = dir.path().join("soft.html");
        std::os::unix::fs::symlink(&log, &soft)?;
        outs.push((soft, "html"));
    }
    for (out, format) in outs {
        tracebook()
            .args(["render", "--format", format])
            .arg(&log)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("is the session being read"));
        assert_eq!(
            fs::read(&log)?,
            before,
            "-o {} changed the input",
            out.display()
        );
    }
    // A session file inside a folder input is refused too.
    let folder = dir.path().join("project");
    fs::create_dir(&folder)?;
    let inner = folder.join("s.jsonl");
    fs::copy(&log, &inner)?;
    tracebook()
        .arg("render")
        .arg(&folder)
        .arg("-o")
        .arg(&inner)
        .assert()
        .code(2);
    assert_eq!(fs::read(&inner)?, before);
    Ok(())
}

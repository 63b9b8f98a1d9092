//! Every real Claude Code session in `$TRACEBOOK_CORPUS/claude-code` renders, with per-call
//! statuses that match an independent reading of the raw records, and the invariants hold.
//!
//! Without `TRACEBOOK_CORPUS` the test says so and passes; with it set, an unusable folder
//! fails the test.

use regex::Regex;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use tracebook::events::ToolStatus;
use tracebook::projection::ResponseStatus;
use tracebook::report::model::{Report, StepView, TurnView};

/// The corpus folder for one harness, or `None` when the variable is unset.
pub(crate) fn corpus(harness: &str) -> Option<PathBuf> {
    let Some(root) = std::env::var_os("TRACEBOOK_CORPUS") else {
        eprintln!("TRACEBOOK_CORPUS is not set: corpus tests skipped");
        return None;
    };
    let dir = PathBuf::from(root).join(harness);
    let usable = std::fs::read_dir(&dir)
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    assert!(
        usable,
        "TRACEBOOK_CORPUS is set but {} is missing or empty",
        dir.display()
    );
    Some(dir)
}

/// Session inputs of a Claude Code corpus folder: loose files, and project folders.
fn claude_inputs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus folder reads")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                || matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("jsonl" | "ndjson")
                )
        })
        .collect();
    out.sort();
    out
}

/// Statuses of the main session's calls read straight from the records: `is_error: true` is
/// an error, any other retained result is ok, no result is unknown.
fn expected_statuses(path: &Path) -> HashMap<String, ToolStatus> {
    let text = std::fs::read(path).expect("corpus file reads");
    let mut seen = HashSet::new();
    let mut calls = Vec::new();
    let mut results: HashMap<String, bool> = HashMap::new();
    for line in text.split(|b| *b == b'\n') {
        let Ok(rec) = serde_json::from_slice::<Json>(line) else {
            continue;
        };
        if let Some(u) = rec.get("uuid").and_then(Json::as_str)
            && !seen.insert(u.to_owned())
        {
            continue;
        }
        if rec.get("isSidechain") == Some(&Json::Bool(true)) {
            continue;
        }
        let Some(Json::Array(blocks)) = rec.pointer("/message/content") else {
            continue;
        };
        for b in blocks {
            match b.get("type").and_then(Json::as_str) {
                Some("tool_use") => {
                    calls.extend(b.get("id").and_then(Json::as_str).map(str::to_owned))
                }
                Some("tool_result") => {
                    if let Some(id) = b.get("tool_use_id").and_then(Json::as_str) {
                        results
                            .entry(id.to_owned())
                            .or_insert(b.get("is_error") == Some(&Json::Bool(true)));
                    }
                }
                _ => {}
            }
        }
    }
    calls
        .into_iter()
        .map(|id| {
            let s = match results.get(&id) {
                Some(true) => ToolStatus::Error,
                Some(false) => ToolStatus::Ok,
                None => ToolStatus::Unknown,
            };
            (id, s)
        })
        .collect()
}

fn check_turns(turns: &[TurnView], name: &str) {
    for t in turns {
        assert_eq!(
            t.response.is_some(),
            t.response_status == ResponseStatus::Complete,
            "{name} {}: response status disagrees with the response",
            t.id
        );
        let tools = t
            .steps
            .iter()
            .filter(|s| matches!(s, StepView::ToolCall(_)))
            .count();
        assert_eq!(t.counts.tool_calls, tools, "{name} {}", t.id);
        for s in &t.steps {
            if let StepView::ToolCall(c) = s {
                assert!(!c.call_id.is_empty(), "{name} {}: empty call id", c.id);
                if c.output.is_none() {
                    assert_eq!(c.status, ToolStatus::Unknown, "{name} {}", c.id);
                    assert_eq!(c.result_size, None, "{name} {}", c.id);
                }
                if let Some(sub) = &c.subagent {
                    check_turns(&sub.turns, name);
                }
            }
        }
    }
}

fn main_calls(report: &Report) -> HashMap<String, ToolStatus> {
    let mut out = HashMap::new();
    for t in &report.turns {
        for s in &t.steps {
            if let StepView::ToolCall(c) = s {
                out.insert(c.call_id.clone(), c.status);
            }
        }
    }
    out
}

#[test]
fn every_claude_code_session_renders_with_correct_statuses() -> anyhow::Result<()> {
    let Some(dir) = corpus("claude-code") else {
        return Ok(());
    };
    let home_path = Regex::new(r"/(?:Users|home)/[A-Za-z]")?;
    let inputs = claude_inputs(&dir);
    assert!(!inputs.is_empty());
    for input in inputs {
        let name = input.display().to_string();
        let report = crate::report(&input)?;
        check_turns(&report.turns, &name);
        if input.is_file() {
            assert_eq!(main_calls(&report), expected_statuses(&input), "{name}");
        }
        let html = tracebook::render::html(&report)?;
        let json = serde_json::to_string(&report)?;
        for (what, text) in [("html", &html), ("json", &json)] {
            assert!(
                !home_path.is_match(text),
                "{name}: a home path reached the {what}"
            );
        }
        assert!(report.warnings.is_empty(), "{name}: {:?}", report.warnings);
    }
    Ok(())
}

/// An OpenCode tool part's status read straight from the part: `completed` is ok unless a
/// retained `metadata.exit` is non-zero or the tool is `invalid`; `error` is an error; anything
/// else (pending, running) is unknown.
fn opencode_part_status(part: &Json) -> ToolStatus {
    let state = &part["state"];
    let exit = state.pointer("/metadata/exit").and_then(Json::as_i64);
    match state["status"].as_str() {
        Some("completed") if part["tool"] == "invalid" => ToolStatus::Error,
        Some("completed") if exit.is_some_and(|e| e != 0) => ToolStatus::Error,
        Some("completed") => ToolStatus::Ok,
        Some("error") => ToolStatus::Error,
        _ => ToolStatus::Unknown,
    }
}

/// Tool parts of an OpenCode input, whatever its layout.
fn opencode_tool_parts(input: &Path) -> Vec<Json> {
    let mut parts = Vec::new();
    if input.is_dir() {
        let mut stack = vec![input.to_owned()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir)
                .expect("corpus folder reads")
                .flatten()
            {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.components().any(|c| c.as_os_str() == "part") {
                    parts.push(
                        serde_json::from_slice(&std::fs::read(&p).expect("reads")).expect("json"),
                    );
                }
            }
        }
    } else if input.extension().is_some_and(|e| e == "jsonl") {
        let text = std::fs::read_to_string(input).expect("corpus file reads");
        for line in text.lines() {
            if let Ok(rec) = serde_json::from_str::<Json>(line) {
                parts.extend(rec.get("part").cloned());
            }
        }
    } else {
        let doc: Json =
            serde_json::from_slice(&std::fs::read(input).expect("reads")).expect("json");
        for m in doc["messages"].as_array().into_iter().flatten() {
            parts.extend(m["parts"].as_array().into_iter().flatten().cloned());
        }
    }
    parts.retain(|p| p["type"] == "tool");
    parts
}

#[test]
fn every_opencode_input_renders_with_correct_statuses() -> anyhow::Result<()> {
    let Some(dir) = corpus("opencode") else {
        return Ok(());
    };
    let home_path = Regex::new(r"/(?:Users|home)/[A-Za-z]")?;
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                || matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("json" | "jsonl" | "db")
                )
        })
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty());
    for input in inputs {
        let name = input.display().to_string();
        let report = crate::report(&input)?;
        assert_eq!(report.session.harness, "opencode", "{name}");
        check_turns(&report.turns, &name);
        let expected: HashMap<String, ToolStatus> = opencode_tool_parts(&input)
            .iter()
            .map(|p| {
                (
                    p["callID"].as_str().unwrap_or_default().to_owned(),
                    opencode_part_status(p),
                )
            })
            .collect();
        assert!(!expected.is_empty(), "{name}: no tool parts read");
        assert_eq!(main_calls(&report), expected, "{name}");
        let html = tracebook::render::html(&report)?;
        let json = serde_json::to_string(&report)?;
        for (what, text) in [("html", &html), ("json", &json)] {
            assert!(
                !home_path.is_match(text),
                "{name}: a home path reached the {what}"
            );
        }
        assert!(report.warnings.is_empty(), "{name}: {:?}", report.warnings);
    }
    Ok(())
}

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
    let mut results: HashMap<String, Option<bool>> = HashMap::new();
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
                        let error = b.get("is_error") == Some(&Json::Bool(true));
                        // Background work has not succeeded by starting: a launch that did
                        // not fail is unknown until a task notification names its call.
                        let launched = rec.pointer("/toolUseResult/backgroundTaskId").is_some()
                            || rec.pointer("/toolUseResult/isAsync") == Some(&Json::Bool(true));
                        let outcome = match (error, launched) {
                            (true, _) => Some(true),
                            (false, true) => None,
                            (false, false) => Some(false),
                        };
                        results.entry(id.to_owned()).or_insert(outcome);
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
                Some(Some(true)) => ToolStatus::Error,
                Some(Some(false)) => ToolStatus::Ok,
                Some(None) | None => ToolStatus::Unknown,
            };
            (id, s)
        })
        .collect()
}

/// Token totals read straight from the records: a streamed message repeats its usage on each
/// record, growing, so each message id counts once, by its last record.
fn expected_tokens(path: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read(path).expect("corpus file reads");
    let mut last: HashMap<String, (u64, u64)> = HashMap::new();
    for line in text.split(|b| *b == b'\n') {
        let Ok(rec) = serde_json::from_slice::<Json>(line) else {
            continue;
        };
        let (Some(id), Some(usage)) = (
            rec.pointer("/message/id").and_then(Json::as_str),
            rec.pointer("/message/usage"),
        ) else {
            continue;
        };
        let n = |k: &str| usage.get(k).and_then(Json::as_u64).unwrap_or(0);
        let input =
            n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens");
        last.insert(id.to_owned(), (input, n("output_tokens")));
    }
    (!last.is_empty()).then(|| last.values().fold((0, 0), |(i, o), (a, b)| (i + a, o + b)))
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
        assert_eq!(t.counts.tool_calls as usize, tools, "{name} {}", t.id);
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
            let tokens = report.session.tokens.map(|t| (t.input, t.output));
            assert_eq!(tokens, expected_tokens(&input), "{name}: token totals");
        }
        let html = tracebook::render::html(&report)?;
        let json = serde_json::to_string(&report)?;
        for (what, text) in [("html", &html), ("json", &json)] {
            assert!(
                !home_path.is_match(text),
                "{name}: a home path reached the {what}"
            );
        }
        let other = warnings_besides_missing_subagents(&report);
        assert!(other.is_empty(), "{name}: {other:?}");
    }
    Ok(())
}

/// The report's warnings other than a subagent's transcript missing (the corpus keeps some
/// sessions without their subagents' files), each of those checked to name a subagent the
/// report indeed holds no transcript of.
fn warnings_besides_missing_subagents(report: &Report) -> Vec<String> {
    fn linked(turns: &[TurnView], out: &mut HashSet<String>) {
        for step in turns.iter().flat_map(|t| &t.steps) {
            if let StepView::ToolCall(c) = step
                && let Some(sub) = &c.subagent
            {
                out.insert(sub.agent_id.clone());
                linked(&sub.turns, out);
            }
        }
    }
    let mut ids = HashSet::new();
    linked(&report.turns, &mut ids);
    report
        .warnings
        .iter()
        .filter_map(|w| {
            let missing = w
                .message
                .strip_prefix("subagent ")
                .and_then(|m| m.split_once(": its own transcript is not in the files read"));
            match missing {
                Some((id, _)) => {
                    assert!(!ids.contains(id), "{id} is nested yet said to be missing");
                    None
                }
                None => Some(w.message.clone()),
            }
        })
        .collect()
}

/// Every file of one corpus folder, sorted.
fn corpus_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("corpus folder reads")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

/// No vendor word reaches a status field of the report model: every `*status*` value is one
/// of the canonical names.
fn assert_canonical_statuses(value: &Json, name: &str) {
    const CANONICAL: &[&str] = &[
        "ok",
        "error",
        "unknown",
        "complete",
        "incomplete",
        "interrupted",
        "no_result",
        "status_word",
        "exit_code",
        "unmapped_word",
        "no_status",
    ];
    match value {
        Json::Object(map) => {
            for (k, v) in map {
                // Tool arguments are transcript content (a plan's `status: in_progress`), not
                // report fields.
                if k == "input" {
                    continue;
                }
                if k.contains("status")
                    && let Some(s) = v.as_str()
                {
                    assert!(
                        CANONICAL.contains(&s),
                        "{name}: `{k}: {s}` is not canonical"
                    );
                }
                assert_canonical_statuses(v, name);
            }
        }
        Json::Array(items) => items
            .iter()
            .for_each(|v| assert_canonical_statuses(v, name)),
        _ => {}
    }
}

fn records(path: &Path) -> Vec<Json> {
    let text = std::fs::read(path).expect("corpus file reads");
    text.split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Json>(l).ok())
        .collect()
}

fn all_calls(report: &Report) -> HashMap<String, ToolStatus> {
    crate::outcomes::calls(report)
        .into_iter()
        .map(|(id, c)| (id, c.status))
        .collect()
}

/// Codex: each history call once; a call with no output or end event is unknown; a retained
/// non-zero exit code (end event, JSON metadata, `Exit code:` or `Process exited with code`
/// line) is an error; a declined or failed end event is an error.
fn codex_expectations(path: &Path) -> (HashSet<String>, HashMap<String, ToolStatus>) {
    let exit_line = Regex::new(r"(?m)^(?:Exit code: |Process exited with code )(-?\d+)")
        .expect("regex compiles");
    let mut calls = HashSet::new();
    let mut answered = HashSet::new();
    let mut errors = HashSet::new();
    for rec in records(path) {
        let item = rec.get("payload").filter(|p| p.is_object()).unwrap_or(&rec);
        if item.get("type").and_then(Json::as_str) == Some("web_search_call") {
            // No call id is written; the adapter keys the call by its record's timestamp.
            let id = item.get("id").or_else(|| rec.get("timestamp"));
            calls.extend(id.and_then(Json::as_str).map(str::to_owned));
            answered.extend(id.and_then(Json::as_str).map(str::to_owned));
            continue;
        }
        let id = item
            .get("call_id")
            .and_then(Json::as_str)
            .map(str::to_owned);
        let Some(id) = id else { continue };
        match item.get("type").and_then(Json::as_str) {
            Some("function_call" | "custom_tool_call") => {
                calls.insert(id);
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let out = item
                    .get("output")
                    .and_then(Json::as_str)
                    .unwrap_or_default();
                let meta = serde_json::from_str::<Json>(out)
                    .ok()
                    .and_then(|j| j.pointer("/metadata/exit_code").and_then(Json::as_i64));
                let line = exit_line
                    .captures(out)
                    .and_then(|c| c[1].parse::<i64>().ok());
                if meta.or(line).is_some_and(|c| c != 0) {
                    errors.insert(id.clone());
                }
                answered.insert(id);
            }
            Some("exec_command_end") => {
                let code = item.get("exit_code").and_then(Json::as_i64);
                let status = item.get("status").and_then(Json::as_str);
                if code.is_some_and(|c| c != 0) || matches!(status, Some("failed" | "declined")) {
                    errors.insert(id.clone());
                }
                answered.insert(id);
            }
            _ => {}
        }
    }
    let mut expected = HashMap::new();
    for id in &calls {
        if !answered.contains(id) {
            expected.insert(id.clone(), ToolStatus::Unknown);
        } else if errors.contains(id) {
            expected.insert(id.clone(), ToolStatus::Error);
        }
    }
    (calls, expected)
}

#[test]
fn every_codex_session_renders_with_correct_statuses() -> anyhow::Result<()> {
    let Some(dir) = corpus("codex") else {
        return Ok(());
    };
    for input in corpus_files(&dir) {
        let name = input.display().to_string();
        let report = crate::report(&input)?;
        assert_eq!(report.session.harness, "codex", "{name}");
        check_turns(&report.turns, &name);
        assert_canonical_statuses(&serde_json::to_value(&report)?, &name);
        tracebook::render::html(&report)?;
        let got = all_calls(&report);
        let (calls, expected) = codex_expectations(&input);
        if !calls.is_empty() {
            let ids: HashSet<String> = got.keys().cloned().collect();
            assert_eq!(ids, calls, "{name}: each call once");
        }
        for (id, want) in expected {
            assert_eq!(got.get(&id), Some(&want), "{name}: {id}");
        }
    }
    Ok(())
}

/// Gemini CLI: the last copy of each message (rewinds applied); `success` is ok unless its
/// output records a non-zero `Exit Code:`, `error` and `cancelled` are errors, anything else is
/// unknown. stream-json: the `tool_result` status, same exit-code rule.
fn gemini_expectations(path: &Path) -> HashMap<String, ToolStatus> {
    let exit_line = Regex::new(r"(?m)^Exit Code: (-?\d+)").expect("regex compiles");
    let decide = |status: Option<&str>, output: &str| -> ToolStatus {
        let nonzero = exit_line
            .captures(output)
            .and_then(|c| c[1].parse::<i64>().ok())
            .is_some_and(|c| c != 0);
        match status {
            Some("success") if nonzero => ToolStatus::Error,
            Some("success") => ToolStatus::Ok,
            Some("error" | "cancelled") => ToolStatus::Error,
            _ => ToolStatus::Unknown,
        }
    };
    let recs = if path.extension().and_then(|e| e.to_str()) == Some("json") {
        let doc: Json =
            serde_json::from_slice(&std::fs::read(path).expect("reads")).expect("valid JSON");
        doc.get("messages")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default()
    } else {
        records(path)
    };
    let mut messages: Vec<Json> = Vec::new();
    let mut out = HashMap::new();
    for rec in recs {
        if let Some(to) = rec.get("$rewindTo").and_then(Json::as_str) {
            if let Some(at) = messages.iter().position(|m| m["id"] == to) {
                messages.truncate(at);
            }
            continue;
        }
        if rec.get("type").and_then(Json::as_str) == Some("tool_result")
            && let Some(id) = rec.get("tool_id").and_then(Json::as_str)
        {
            let output = rec.get("output").and_then(Json::as_str).unwrap_or_default();
            out.insert(id.to_owned(), decide(rec["status"].as_str(), output));
            continue;
        }
        if let Some(id) = rec.get("id").and_then(Json::as_str) {
            match messages.iter().position(|m| m["id"] == id) {
                Some(at) => messages[at] = rec,
                None => messages.push(rec),
            }
        }
    }
    for m in messages {
        for call in m
            .get("toolCalls")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let Some(id) = call.get("id").and_then(Json::as_str) else {
                continue;
            };
            let output = call
                .pointer("/result/0/functionResponse/response/output")
                .and_then(Json::as_str)
                .unwrap_or_default();
            out.insert(id.to_owned(), decide(call["status"].as_str(), output));
        }
    }
    out
}

#[test]
fn every_gemini_cli_session_renders_with_correct_statuses() -> anyhow::Result<()> {
    let Some(dir) = corpus("gemini-cli") else {
        return Ok(());
    };
    for input in corpus_files(&dir) {
        let name = input.display().to_string();
        let report = crate::report(&input)?;
        assert_eq!(report.session.harness, "gemini-cli", "{name}");
        check_turns(&report.turns, &name);
        assert_canonical_statuses(&serde_json::to_value(&report)?, &name);
        tracebook::render::html(&report)?;
        assert_eq!(all_calls(&report), gemini_expectations(&input), "{name}");
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
        let other = warnings_besides_missing_subagents(&report);
        assert!(other.is_empty(), "{name}: {other:?}");
    }
    Ok(())
}

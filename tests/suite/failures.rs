//! Failure facts: one bounded, allowlisted line per failed run, no raw text.
//!
//! Every harness is exercised through its built-in adapter, with records in its own shapes.
//! Every failing record carries raw error text, stderr, paths and planted secrets, which must
//! reach neither the line, the JSON nor the HTML.

use serde_json::{Value, json};
use std::fs;
use std::path::Path;

use tracebook::adapters::AdapterSet;
use tracebook::report::model::{Report, StepView, TurnView};

/// Raw error text as a harness writes it: task text, a path, a URL and credentials.
const RAW: &str = "RAWERRORTEXT while editing /Users/alice/project/src/secret.rs for \
    https://api.example.test PLANTEDSECRET sk-ant-api03-PLANTEDKEYabcdefghijklmnop0123456789";
/// What a process printed on stderr before it died.
const STDERR: &str = "STDERRTEXT thread 'main' panicked at /home/alice/.codex/config.toml \
    OPENAI_API_KEY=PLANTEDSECRET";
/// None of these may appear in any output.
const FORBIDDEN: &[&str] = &[
    "RAWERRORTEXT",
    "STDERRTEXT",
    "PLANTEDSECRET",
    "PLANTEDKEY",
    "/Users/",
    "/home/",
    "alice",
    "api.example.test",
    "panicked",
];

struct Run {
    report: Report,
    json: String,
    html: String,
}

fn run_with(dir: &Path, harness: &str, records: &[Value]) -> anyhow::Result<Run> {
    let tmp = tempfile::tempdir()?;
    let path = tmp.path().join("session.jsonl");
    let text: Vec<String> = records.iter().map(Value::to_string).collect();
    fs::write(&path, text.join("\n") + "\n")?;
    let set = AdapterSet::load(Some(dir))?;
    let (report, _) = tracebook::pipeline::report(&path, &crate::pinned(&set, Some(harness)))?;
    let json = serde_json::to_string(&report)?;
    let html = tracebook::render::html(&report)?;
    Ok(Run { report, json, html })
}

/// Runs records through a built-in adapter.
fn run(harness: &str, records: &[Value]) -> anyhow::Result<Run> {
    let tmp = tempfile::tempdir()?;
    run_with(tmp.path(), harness, records)
}

impl Run {
    /// Raw text, stderr, paths and secrets are absent from every output.
    fn assert_sanitized(&self) {
        for word in FORBIDDEN {
            assert!(
                !self.json.contains(word),
                "`{word}` in the JSON:\n{}",
                self.json
            );
            assert!(!self.html.contains(word), "`{word}` in the HTML");
        }
        for line in self.lines() {
            assert!(line.len() <= 4096);
            assert!(
                line.starts_with("Product session failure (")
                    || line.starts_with("Product subagent failure ("),
                "{line}"
            );
        }
    }

    /// Every failure line of the report, turns (subagents' included) and calls, in order.
    fn lines(&self) -> Vec<String> {
        fn walk(turns: &[TurnView], out: &mut Vec<String>) {
            for t in turns {
                for s in &t.steps {
                    if let StepView::ToolCall(c) = s {
                        out.extend(c.failure.clone());
                        if let Some(sub) = &c.subagent {
                            walk(&sub.turns, out);
                        }
                    }
                }
                out.extend(t.failure.as_deref().map(str::to_owned));
            }
        }
        let mut out = Vec::new();
        walk(&self.report.turns, &mut out);
        for s in &self.report.unlinked_subagents {
            walk(&s.turns, &mut out);
        }
        out
    }

    /// Each turn's failure line, in order.
    fn turn_failures(&self) -> Vec<Option<String>> {
        self.report
            .turns
            .iter()
            .map(|t| t.failure.as_deref().map(str::to_owned))
            .collect()
    }

    fn assert_turns_incomplete_when_failed(&self) {
        for t in &self.report.turns {
            if t.failure.is_some() {
                assert_eq!(
                    t.response_status.as_str(),
                    "incomplete",
                    "turn {}",
                    t.number
                );
                assert!(t.response.is_none());
            }
        }
    }
}

fn line(product: &str, stage: &str, category: &str, extra: &str) -> String {
    format!(
        "Product session failure (product: {product}; stage: {stage}; category: {category}{extra})"
    )
}

// ---------------------------------------------------------------------------------------------
// Codex

const CODEX_VARIANTS: &[(&str, &str, &str)] = &[
    (
        "contextWindowExceeded",
        "context_window_exceeded",
        "context_window_exceeded",
    ),
    (
        "sessionBudgetExceeded",
        "session_budget_exceeded",
        "session_budget_exceeded",
    ),
    (
        "usageLimitExceeded",
        "usage_limit_exceeded",
        "usage_limit_exceeded",
    ),
    ("serverOverloaded", "server_overloaded", "server_overloaded"),
    ("cyberPolicy", "cyber_policy", "cyber_policy"),
    (
        "internalServerError",
        "internal_server_error",
        "internal_server_error",
    ),
    ("unauthorized", "unauthorized", "unauthorized"),
    ("badRequest", "bad_request", "bad_request"),
    (
        "threadRollbackFailed",
        "thread_rollback_failed",
        "thread_rollback_failed",
    ),
    ("sandboxError", "sandbox_error", "sandbox_error"),
    // Codex CLI 0.171.
    (
        "rateLimitExceeded",
        "rate_limit_exceeded",
        "rate_limit_exceeded",
    ),
    ("flexUnavailable", "flex_unavailable", "flex_unavailable"),
    ("modelNotFound", "model_not_found", "model_not_found"),
    (
        "policyCapacityUnavailable",
        "policy_capacity_unavailable",
        "policy_capacity_unavailable",
    ),
    (
        "inferenceHookDenied",
        "inference_hook_denied",
        "inference_hook_denied",
    ),
    ("bioPolicy", "bio_policy", "bio_policy"),
    (
        "misalignmentPolicyViolation",
        "misalignment_policy_violation",
        "misalignment_policy_violation",
    ),
    ("tooManyDenials", "too_many_denials", "too_many_denials"),
    ("other", "other", "other"),
];

const CODEX_HTTP_VARIANTS: &[(&str, &str)] = &[
    ("httpConnectionFailed", "http_connection_failed"),
    (
        "responseStreamConnectionFailed",
        "response_stream_connection_failed",
    ),
    ("responseStreamDisconnected", "response_stream_disconnected"),
    (
        "responseTooManyFailedAttempts",
        "response_too_many_failed_attempts",
    ),
];

fn codex_prompt(i: usize) -> Value {
    json!({"timestamp": "2026-07-20T10:00:00.000Z", "type": "event_msg",
           "payload": {"type": "user_message", "message": format!("case {i}")}})
}

/// An assistant message in the model-visible history.
fn codex_answer(text: &str) -> Value {
    json!({"timestamp": "2026-07-20T10:00:00.500Z", "type": "response_item",
           "payload": {"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": text}]}})
}

/// A rollout `error` event (snake_case error info).
fn rollout_error(info: Value) -> Value {
    json!({"timestamp": "2026-04-01T10:00:01.000Z", "type": "event_msg",
           "payload": {"type": "error", "message": RAW, "codex_error_info": info}})
}

/// A rollout `task_complete` carrying the turn's terminal error (snake_case).
fn rollout_task_error(info: Value) -> Value {
    json!({"timestamp": "2026-07-20T10:00:01.000Z", "type": "event_msg",
           "payload": {"type": "task_complete", "turn_id": "t1", "last_agent_message": RAW,
                       "error": {"message": RAW, "codex_error_info": info}}})
}

/// An app-server v2 `turn/completed` with a failed turn (camelCase).
fn app_turn_failed(info: Value) -> Value {
    json!({"method": "turn/completed", "params": {"threadId": "thr_1", "turn": {
        "id": "turn_1", "status": "failed", "items": [],
        "error": {"message": RAW, "codexErrorInfo": info, "additionalDetails": STDERR}}}})
}

/// An app-server v2 `error` notification that will not be retried (camelCase).
fn app_error(info: Value) -> Value {
    json!({"method": "error", "params": {"threadId": "thr_1", "turnId": "turn_1",
        "willRetry": false,
        "error": {"message": RAW, "codexErrorInfo": info, "additionalDetails": STDERR}}})
}

/// Runs one Codex case per turn and checks each turn's line.
fn codex_cases(cases: Vec<(Value, String)>) -> anyhow::Result<Run> {
    let mut records = Vec::new();
    for (i, (record, _)) in cases.iter().enumerate() {
        records.push(codex_prompt(i));
        records.push(record.clone());
    }
    let run = run("codex", &records)?;
    let expected: Vec<Option<String>> = cases.into_iter().map(|(_, l)| Some(l)).collect();
    assert_eq!(run.turn_failures(), expected);
    run.assert_turns_incomplete_when_failed();
    run.assert_sanitized();
    Ok(run)
}

#[test]
fn codex_unit_variants_map_in_both_spellings() -> anyhow::Result<()> {
    let mut cases = Vec::new();
    for (camel, snake, category) in CODEX_VARIANTS {
        let want = line("Codex CLI", "turn", category, "");
        cases.push((app_turn_failed(json!(camel)), want.clone()));
        cases.push((app_error(json!(camel)), want.clone()));
        cases.push((rollout_error(json!(snake)), want.clone()));
        cases.push((rollout_task_error(json!(snake)), want));
    }
    codex_cases(cases)?;
    Ok(())
}

#[test]
fn codex_object_variants_keep_their_http_status_when_present() -> anyhow::Result<()> {
    let mut cases = Vec::new();
    for (camel, snake) in CODEX_HTTP_VARIANTS {
        let with = line("Codex CLI", "turn", snake, "; HTTP status: 502");
        let without = line("Codex CLI", "turn", snake, "");
        cases.push((
            app_turn_failed(json!({*camel: {"httpStatusCode": 502}})),
            with.clone(),
        ));
        cases.push((
            app_error(json!({*camel: {"httpStatusCode": null}})),
            without.clone(),
        ));
        cases.push((app_error(json!({*camel: {}})), without.clone()));
        cases.push((
            rollout_error(json!({*snake: {"http_status_code": 502}})),
            with.clone(),
        ));
        cases.push((
            rollout_task_error(json!({*snake: {"http_status_code": null}})),
            without,
        ));
        // A value that is not an HTTP status is left out, never shown.
        cases.push((
            rollout_error(json!({*snake: {"http_status_code": RAW}})),
            line("Codex CLI", "turn", snake, ""),
        ));
    }
    let steerable = line("Codex CLI", "turn", "active_turn_not_steerable", "");
    cases.push((
        app_error(json!({"activeTurnNotSteerable": {"turnKind": "review"}})),
        steerable.clone(),
    ));
    cases.push((
        rollout_error(json!({"active_turn_not_steerable": {"turn_kind": "compact"}})),
        steerable,
    ));
    codex_cases(cases)?;
    Ok(())
}

#[test]
fn codex_unrecognised_error_info_is_unknown_never_the_raw_word() -> anyhow::Result<()> {
    let unknown = line("Codex CLI", "turn", "unknown", "");
    let cases = vec![
        (app_error(json!("brandNewVariant")), unknown.clone()),
        (app_error(json!(RAW)), unknown.clone()),
        (
            app_error(json!({"modelCap": {"model": "m", "reset_after_seconds": 5}})),
            unknown.clone(),
        ),
        (
            app_error(json!({"httpConnectionFailed": {}, "badRequest": {}})),
            unknown.clone(),
        ),
        (app_error(json!(42)), unknown.clone()),
        (app_error(json!(["badRequest"])), unknown.clone()),
        (app_error(Value::Null), unknown.clone()),
        (rollout_error(json!({})), unknown.clone()),
        // A camelCase spelling inside a snake_case object is still an unknown object variant.
        (
            rollout_error(json!({"unsupported_input_modality": {"http_status_code": 400}})),
            unknown.clone(),
        ),
        (
            json!({"type": "turn.failed", "error": {"message": RAW}}),
            unknown,
        ),
    ];
    // The category table maps every unlisted word to `unknown` on purpose (`default`), so
    // no word is reported; the raw words never reach the line (checked above).
    codex_cases(cases)?;
    Ok(())
}

#[test]
fn codex_every_stage_is_named() -> anyhow::Result<()> {
    let request = |method: &str| {
        json!({"id": 1, "method": method,
               "error": {"code": -32603, "message": RAW, "data": {"stderr": STDERR}}})
    };
    let exit = |phase: &str, code: Value, signal: Value| {
        json!({"type": "process_exit", "phase": phase, "exit_code": code, "signal": signal,
               "stderr": STDERR, "cwd": "/Users/alice/project"})
    };
    let cases = vec![
        (
            request("initialize"),
            line("Codex CLI", "initialize", "unknown", ""),
        ),
        (
            request("thread/start"),
            line("Codex CLI", "thread-start", "unknown", ""),
        ),
        (
            request("turn/start"),
            line("Codex CLI", "turn-start", "unknown", ""),
        ),
        (
            app_error(json!("usageLimitExceeded")),
            line("Codex CLI", "turn", "usage_limit_exceeded", ""),
        ),
        // Exit code and signal, apart and together.
        (
            exit("running", json!(1), Value::Null),
            line("Codex CLI", "process", "unknown", "; exit code: 1"),
        ),
        (
            exit("running", Value::Null, json!(9)),
            line("Codex CLI", "process", "unknown", "; signal: 9"),
        ),
        (
            exit("shutdown", json!(137), json!(9)),
            line(
                "Codex CLI",
                "teardown",
                "unknown",
                "; exit code: 137; signal: 9",
            ),
        ),
        (
            exit("shutdown", json!(-1), json!("SIGKILL")),
            line("Codex CLI", "teardown", "unknown", "; exit code: -1"),
        ),
        // A stage the table does not know is unknown, never the method name.
        (
            request("thread/archive"),
            line("Codex CLI", "unknown", "unknown", ""),
        ),
    ];
    codex_cases(cases)?;
    Ok(())
}

#[test]
fn codex_success_and_local_cancellation_give_no_failure() -> anyhow::Result<()> {
    let records = vec![
        codex_prompt(0),
        codex_answer("Done."),
        json!({"type": "event_msg", "payload": {"type": "task_complete", "turn_id": "t1",
               "last_agent_message": "Done."}}),
        codex_prompt(1),
        json!({"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "interrupted"}}),
        codex_prompt(2),
        json!({"method": "turn/completed", "params": {"turn": {"id": "t3", "status": "interrupted",
               "error": null}}}),
        codex_prompt(3),
        json!({"method": "error", "params": {"willRetry": true,
               "error": {"message": RAW, "codexErrorInfo": "serverOverloaded"}}}),
        codex_answer("Recovered."),
        codex_prompt(4),
        json!({"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "budget_limited"}}),
    ];
    let run = run("codex", &records)?;
    assert_eq!(
        run.turn_failures(),
        [
            None,
            None,
            None,
            None,
            Some(line("Codex CLI", "turn", "budget_limited", ""))
        ]
    );
    let statuses: Vec<&str> = run
        .report
        .turns
        .iter()
        .map(|t| t.response_status.as_str())
        .collect();
    assert_eq!(
        statuses,
        [
            "complete",
            "incomplete",
            "incomplete",
            "complete",
            "incomplete"
        ]
    );
    run.assert_sanitized();
    Ok(())
}

/// An interrupted turn that carries an error (the guardian's denial limit) failed: it gets the
/// failure line as well as the interrupt. The app-server's lifecycle notices are not warned.
#[test]
fn codex_interrupted_turn_with_an_error_gets_its_failure_line() -> anyhow::Result<()> {
    let records = vec![
        json!({"method": "thread/started", "params": {"thread": {"id": "thr_1"}}}),
        json!({"method": "turn/started", "params": {"threadId": "thr_1", "turn": {
               "id": "turn_1", "status": "inProgress", "items": []}}}),
        codex_prompt(0),
        json!({"method": "turn/completed", "params": {"threadId": "thr_1", "turn": {
               "id": "turn_1", "status": "interrupted", "items": [],
               "error": {"message": RAW, "codexErrorInfo": "tooManyDenials",
                         "additionalDetails": STDERR}}}}),
        codex_prompt(1),
        json!({"method": "turn/completed", "params": {"threadId": "thr_1", "turn": {
               "id": "turn_2", "status": "completed", "items": [], "error": null}}}),
    ];
    let run = run("codex", &records)?;
    assert_eq!(
        run.turn_failures(),
        [
            Some(line("Codex CLI", "turn", "too_many_denials", "")),
            None
        ]
    );
    let interrupted = run.report.turns[0]
        .steps
        .iter()
        .any(|s| matches!(s, tracebook::report::model::StepView::Interrupt { .. }));
    assert!(interrupted, "the interrupt is kept beside the failure");
    assert!(run.report.warnings.is_empty(), "{:?}", run.report.warnings);
    run.assert_sanitized();
    Ok(())
}

#[test]
fn a_failed_turn_is_incomplete_even_after_assistant_text() -> anyhow::Result<()> {
    let records = vec![
        codex_prompt(0),
        codex_answer("Working on it."),
        app_turn_failed(json!("contextWindowExceeded")),
    ];
    let run = run("codex", &records)?;
    let turn = &run.report.turns[0];
    assert_eq!(turn.response_status.as_str(), "incomplete");
    assert!(turn.response.is_none());
    assert!(matches!(&turn.steps[0], StepView::Assistant(t) if t.text == "Working on it."));
    assert!(run.html.contains(
        "Product session failure (product: Codex CLI; stage: turn; category: context_window_exceeded)"
    ));
    run.assert_sanitized();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI

#[test]
fn gemini_error_kinds_and_stream_results() -> anyhow::Result<()> {
    let prompt =
        |i: usize| json!({"type": "message", "role": "user", "content": format!("case {i}")});
    let result = |error: Value| {
        json!({"type": "result", "status": "error", "error": error,
               "stats": {"total_tokens": 0, "duration_ms": 0}})
    };
    let err = |ty: &str| json!({"type": ty, "message": RAW, "code": 41});
    let cases = vec![
        (
            json!({"id": "m1", "type": "error", "content": format!("[API Error: {RAW}]"),
                   "timestamp": "2026-05-01T10:00:00Z"}),
            Some(line("Gemini CLI", "turn", "api_error", "")),
        ),
        // A slash command's usage error is a notice about what the user typed.
        (
            json!({"id": "m2", "type": "error",
                   "content": "Usage: /model set <model-name> [--persist]"}),
            None,
        ),
        (
            result(err("FatalAuthenticationError")),
            Some(line("Gemini CLI", "startup", "authentication", "")),
        ),
        (
            result(err("FatalInputError")),
            Some(line("Gemini CLI", "startup", "input", "")),
        ),
        (
            result(err("FatalSandboxError")),
            Some(line("Gemini CLI", "startup", "sandbox", "")),
        ),
        (
            result(err("FatalConfigError")),
            Some(line("Gemini CLI", "startup", "config", "")),
        ),
        (
            result(err("FatalUntrustedWorkspaceError")),
            Some(line("Gemini CLI", "startup", "untrusted_workspace", "")),
        ),
        (
            result(err("FatalTurnLimitedError")),
            Some(line("Gemini CLI", "turn", "turn_limit", "")),
        ),
        (
            result(err("FatalToolExecutionError")),
            Some(line("Gemini CLI", "turn", "tool_execution", "")),
        ),
        (
            result(err("INVALID_STREAM")),
            Some(line("Gemini CLI", "turn", "invalid_stream", "")),
        ),
        (
            json!({"type": "result", "status": "error"}),
            Some(line("Gemini CLI", "turn", "invalid_stream", "")),
        ),
        (
            result(err("TypeError")),
            Some(line("Gemini CLI", "unknown", "unknown", "")),
        ),
        // 0.61: a failed model request (429, 500) is `type: unknown` (the error is not an
        // `Error`) with the CLI's `[API Error: …]` message; the text is tested, never kept.
        (
            result(
                json!({"type": "unknown", "message": format!("[API Error: {RAW}]\nPlease wait and try again later.")}),
            ),
            Some(line("Gemini CLI", "turn", "api_error", "")),
        ),
        // A fatal tool error is named by the tool's error type.
        (
            result(
                json!({"type": "no_space_left", "message": format!("Error executing tool write_file: {RAW}")}),
            ),
            Some(line("Gemini CLI", "turn", "no_space_left", "")),
        ),
        // Local cancellation and success: no line.
        (result(err("FatalCancellationError")), None),
        (
            json!({"id": "m3", "type": "info", "content": "Request cancelled."}),
            None,
        ),
        (
            json!({"type": "result", "status": "success", "stats": {}}),
            None,
        ),
        (
            json!({"type": "error", "severity": "warning", "message": RAW}),
            None,
        ),
    ];
    let mut records = Vec::new();
    for (i, (record, _)) in cases.iter().enumerate() {
        records.push(prompt(i));
        records.push(record.clone());
    }
    let run = run("gemini-cli", &records)?;
    let expected: Vec<Option<String>> = cases.into_iter().map(|(_, l)| l).collect();
    assert_eq!(run.turn_failures(), expected);
    run.assert_turns_incomplete_when_failed();
    run.assert_sanitized();
    Ok(())
}

#[test]
fn gemini_subagent_failure_sits_on_the_call_that_started_it() -> anyhow::Result<()> {
    // A recording and its subagent's own file, in the folder named by the parent session's id.
    let tmp = tempfile::tempdir()?;
    let chats = tmp.path().join("chats");
    fs::create_dir_all(chats.join("5f1c2a9e-main"))?;
    let lines = |records: &[Value]| {
        records
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    let main = chats.join("session-2026-05-01T10-00-5f1c2a9e.jsonl");
    fs::write(
        &main,
        lines(&[
            json!({"sessionId": "5f1c2a9e-main", "projectHash": "h", "kind": "main",
                   "startTime": "2026-05-01T10:00:00Z", "lastUpdated": "2026-05-01T10:05:00Z"}),
            json!({"id": "u1", "type": "user", "timestamp": "2026-05-01T10:00:00Z",
                   "content": [{"text": "Investigate."}]}),
            json!({"id": "g1", "type": "gemini", "timestamp": "2026-05-01T10:00:01Z",
                   "content": "", "toolCalls": [{
                "id": "call-1", "name": "invoke_agent", "status": "success", "agentId": "sub-1",
                "args": {"agent_name": "investigator", "prompt": "look around"},
                "resultDisplay": {"isSubagentProgress": true, "agentName": "investigator",
                                  "state": "error", "recentActivity": []},
                "result": [{"functionResponse": {"id": "call-1", "name": "invoke_agent",
                    "response": {"output": "Subagent 'investigator' failed."}}}]}]}),
            json!({"id": "g2", "type": "gemini", "timestamp": "2026-05-01T10:04:00Z",
                   "content": "Done."}),
        ]),
    )?;
    fs::write(
        chats.join("5f1c2a9e-main/sub-1.jsonl"),
        lines(&[
            json!({"sessionId": "sub-1", "projectHash": "h", "kind": "subagent",
                   "startTime": "2026-05-01T10:00:02Z"}),
            json!({"id": "s0", "type": "user", "content": [{"text": "look around"}]}),
            json!({"id": "s1", "type": "error", "content": format!("[API Error: {RAW}]")}),
        ]),
    )?;
    let set = AdapterSet::load(Some(tmp.path()))?;
    let (report, _) = tracebook::pipeline::report(&main, &crate::pinned(&set, None))?;
    let run = Run {
        json: serde_json::to_string(&report)?,
        html: tracebook::render::html(&report)?,
        report,
    };
    let want = "Product subagent failure (product: Gemini CLI; stage: turn; category: api_error)";
    let turn = &run.report.turns[0];
    assert_eq!(turn.failure, None);
    assert_eq!(turn.response_status.as_str(), "complete");
    let call = turn
        .steps
        .iter()
        .find_map(|s| match s {
            StepView::ToolCall(c) => Some(c),
            _ => None,
        })
        .expect("the invoke_agent call");
    let sub = call
        .subagent
        .as_ref()
        .expect("the subagent is nested under its call");
    assert_eq!(sub.turns[0].failure.as_deref(), Some(want));
    assert_eq!(call.failure.as_deref(), Some(want));
    // The harness wrote `success` on the call; the subagent's own state says it failed.
    assert_eq!(call.status.as_str(), "error");
    assert!(run.report.unlinked_subagents.is_empty());
    run.assert_sanitized();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// OpenCode

#[test]
fn opencode_error_names_with_and_without_http_status() -> anyhow::Result<()> {
    let prompt = |i: usize| {
        json!({"info": {"id": format!("msg_u{i}"), "role": "user", "sessionID": "ses_1"},
               "parts": [{"type": "text", "text": format!("case {i}")}]})
    };
    let event = |name: &str, data: Value| {
        json!({"type": "error", "timestamp": 1, "sessionID": "ses_1",
               "error": {"name": name, "data": data}})
    };
    let message = |name: &str, data: Value| {
        json!({"info": {"id": "msg_a", "role": "assistant", "sessionID": "ses_1",
                        "error": {"name": name, "data": data}},
               "parts": [{"type": "text", "text": "Partial answer."}]})
    };
    let api = json!({"message": RAW, "statusCode": 429, "isRetryable": true,
                     "responseBody": STDERR, "responseHeaders": {"x-api-key": "PLANTEDSECRET"}});
    let cases = vec![
        (
            event("APIError", api.clone()),
            Some(line("OpenCode", "turn", "api_error", "; HTTP status: 429")),
        ),
        (
            event("APIError", json!({"message": RAW, "isRetryable": false})),
            Some(line("OpenCode", "turn", "api_error", "")),
        ),
        (
            message("APIError", api),
            Some(line("OpenCode", "turn", "api_error", "; HTTP status: 429")),
        ),
        (
            event(
                "ProviderAuthError",
                json!({"providerID": "anthropic", "message": RAW}),
            ),
            Some(line("OpenCode", "turn", "provider_auth", "")),
        ),
        (
            message(
                "ContextOverflowError",
                json!({"message": RAW, "responseBody": STDERR}),
            ),
            Some(line("OpenCode", "turn", "context_overflow", "")),
        ),
        (
            event("MessageOutputLengthError", json!({})),
            Some(line("OpenCode", "turn", "output_length", "")),
        ),
        (
            event(
                "StructuredOutputError",
                json!({"message": RAW, "retries": 3}),
            ),
            Some(line("OpenCode", "turn", "structured_output", "")),
        ),
        (
            event("ContentFilterError", json!({"message": RAW})),
            Some(line("OpenCode", "turn", "content_filter", "")),
        ),
        (
            event("UnknownError", json!({"message": RAW})),
            Some(line("OpenCode", "turn", "unknown", "")),
        ),
        (
            event("SomeNewError", json!({"message": RAW})),
            Some(line("OpenCode", "turn", "unknown", "")),
        ),
        (event("MessageAbortedError", json!({"message": RAW})), None),
        (
            message("MessageAbortedError", json!({"message": RAW})),
            None,
        ),
    ];
    let mut records = Vec::new();
    for (i, (record, _)) in cases.iter().enumerate() {
        records.push(prompt(i));
        records.push(record.clone());
    }
    let run = run("opencode", &records)?;
    let expected: Vec<Option<String>> = cases.into_iter().map(|(_, l)| l).collect();
    assert_eq!(run.turn_failures(), expected);
    run.assert_turns_incomplete_when_failed();
    run.assert_sanitized();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Claude Code (built-in adapter)

fn claude(records: &[Value]) -> anyhow::Result<Run> {
    let tmp = tempfile::tempdir()?;
    run_with(tmp.path(), "claude-code", records)
}

/// Claude Code records share a session id and need distinct uuids.
fn cc(n: usize, mut record: Value) -> Value {
    record["sessionId"] = json!("5b0c1f9e-0000-4000-8000-00000000abcd");
    record["uuid"] = json!(format!("00000000-0000-4000-8000-{n:012}"));
    record["cwd"] = json!("/Users/alice/work/shop");
    record["timestamp"] = json!("2026-05-01T10:00:00.000Z");
    record
}

fn cc_prompt(n: usize) -> Value {
    cc(
        n,
        json!({"type": "user", "message": {"role": "user", "content": format!("case {n}")}}),
    )
}

fn cc_result(subtype: &str, extra: Value) -> Value {
    let mut r = json!({"type": "result", "subtype": subtype, "is_error": subtype != "success",
        "errors": [RAW, STDERR], "result": RAW, "duration_ms": 10, "num_turns": 3,
        "session_id": "5b0c1f9e-0000-4000-8000-00000000abcd", "stop_reason": null,
        "permission_denials": [{"tool_name": "Bash", "tool_use_id": "t", "tool_input": {"command": RAW}}]});
    if let (Some(r), Some(e)) = (r.as_object_mut(), extra.as_object()) {
        r.extend(e.clone());
    }
    r
}

#[test]
fn claude_result_subtypes_terminal_reasons_and_api_errors() -> anyhow::Result<()> {
    let api_error = |error: Value, text: String| {
        json!({"type": "assistant", "isApiErrorMessage": true, "error": error,
               "message": {"id": "msg_err", "role": "assistant", "model": "<synthetic>",
                           "content": [{"type": "text", "text": text}]}})
    };
    let cases = vec![
        (
            cc_result("error_during_execution", json!({})),
            Some(line("Claude Code", "turn", "execution_error", "")),
        ),
        (
            cc_result("error_max_turns", json!({})),
            Some(line("Claude Code", "turn", "max_turns", "")),
        ),
        (
            cc_result("error_max_budget_usd", json!({})),
            Some(line("Claude Code", "turn", "max_budget_usd", "")),
        ),
        (
            cc_result("error_max_structured_output_retries", json!({})),
            Some(line(
                "Claude Code",
                "turn",
                "max_structured_output_retries",
                "",
            )),
        ),
        (
            cc_result("error_brand_new", json!({})),
            Some(line("Claude Code", "turn", "unknown", "")),
        ),
        // terminal_reason is more specific than the subtype.
        (
            cc_result(
                "error_during_execution",
                json!({"terminal_reason": "prompt_too_long"}),
            ),
            Some(line("Claude Code", "turn", "prompt_too_long", "")),
        ),
        (
            cc_result(
                "error_during_execution",
                json!({"terminal_reason": "turn_setup_failed"}),
            ),
            Some(line("Claude Code", "turn-setup", "turn_setup_failed", "")),
        ),
        (
            // The record is a turn result (stage known); its unrecognised reason is unknown.
            cc_result("error_during_execution", json!({"terminal_reason": RAW})),
            Some(line("Claude Code", "turn", "unknown", "")),
        ),
        // A success-subtype result that is an API error keeps its HTTP status.
        (
            cc_result(
                "success",
                json!({"is_error": true, "api_error_status": 529,
                                        "terminal_reason": "api_error"}),
            ),
            Some(line(
                "Claude Code",
                "turn",
                "api_error",
                "; HTTP status: 529",
            )),
        ),
        (
            cc_result(
                "success",
                json!({"is_error": true, "api_error_status": 429}),
            ),
            Some(line(
                "Claude Code",
                "turn",
                "api_error",
                "; HTTP status: 429",
            )),
        ),
        (
            cc_result(
                "error_during_execution",
                json!({"startup_failure_reason": "cwd_unavailable", "num_turns": 0}),
            ),
            Some(line("Claude Code", "startup", "cwd_unavailable", "")),
        ),
        // API error messages in transcripts.
        (
            api_error(json!("rate_limit"), format!("API Error: 429 {RAW}")),
            Some(line(
                "Claude Code",
                "model-request",
                "rate_limit",
                "; HTTP status: 429",
            )),
        ),
        (
            api_error(
                json!("overloaded"),
                format!("API Error: 529 Overloaded. {RAW}"),
            ),
            Some(line(
                "Claude Code",
                "model-request",
                "overloaded",
                "; HTTP status: 529",
            )),
        ),
        (
            api_error(Value::Null, format!("You've hit your limit {RAW}")),
            Some(line("Claude Code", "model-request", "unknown", "")),
        ),
        // Success and local cancellation: no line.
        (
            cc_result("success", json!({"terminal_reason": "completed"})),
            None,
        ),
        (
            cc_result(
                "error_during_execution",
                json!({"terminal_reason": "aborted_streaming"}),
            ),
            None,
        ),
        (
            cc_result(
                "error_during_execution",
                json!({"terminal_reason": "aborted_tools"}),
            ),
            None,
        ),
    ];
    let mut records = Vec::new();
    for (i, (record, _)) in cases.iter().enumerate() {
        records.push(cc_prompt(2 * i));
        records.push(cc(2 * i + 1, record.clone()));
    }
    let run = claude(&records)?;
    let expected: Vec<Option<String>> = cases.into_iter().map(|(_, l)| l).collect();
    assert_eq!(run.turn_failures(), expected);
    run.assert_turns_incomplete_when_failed();
    run.assert_sanitized();
    // The cancelled turns are incomplete with no failure line.
    let n = run.report.turns.len();
    for t in &run.report.turns[n - 2..] {
        assert_eq!(t.response_status.as_str(), "incomplete");
        assert!(t.failure.is_none());
    }
    Ok(())
}

#[test]
fn claude_user_interrupt_is_a_local_cancellation() -> anyhow::Result<()> {
    let records = vec![
        cc_prompt(1),
        cc(
            2,
            json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
            "model": "claude-opus-4-7", "content": [{"type": "text", "text": "Starting."}]}}),
        ),
        cc(
            3,
            json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "text", "text": "[Request interrupted by user]"}]}}),
        ),
    ];
    let run = claude(&records)?;
    assert_eq!(run.turn_failures(), [None]);
    assert_eq!(run.report.turns[0].response_status.as_str(), "incomplete");
    Ok(())
}

#[test]
fn claude_subagent_failure_sits_on_the_call_that_started_it() -> anyhow::Result<()> {
    let records = vec![
        cc_prompt(1),
        cc(
            2,
            json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
            "model": "claude-opus-4-7",
            "content": [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                         "input": {"prompt": "look around", "subagent_type": "Explore"}}]}}),
        ),
        cc(
            3,
            json!({"type": "user", "isSidechain": true, "agentId": "a1",
            "message": {"role": "user", "content": "look around"}}),
        ),
        cc(
            4,
            json!({"type": "assistant", "isSidechain": true, "agentId": "a1",
            "isApiErrorMessage": true, "error": "server_error",
            "message": {"id": "msg_e", "role": "assistant", "model": "<synthetic>",
                        "content": [{"type": "text", "text": format!("API Error: 500 {RAW}")}]}}),
        ),
        cc(
            5,
            json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_task", "content": "partial"}]},
            "toolUseResult": {"agentId": "a1", "status": "completed"}}),
        ),
        cc(
            6,
            json!({"type": "assistant", "message": {"id": "msg_2", "role": "assistant",
            "model": "claude-opus-4-7", "content": [{"type": "text", "text": "Summary."}]}}),
        ),
    ];
    let run = claude(&records)?;
    let want = "Product subagent failure (product: Claude Code; stage: model-request; \
                category: server_error; HTTP status: 500)";
    let turn = &run.report.turns[0];
    // The parent's run did not fail: its turn is complete and carries no line.
    assert_eq!(turn.failure, None);
    assert_eq!(turn.response_status.as_str(), "complete");
    let StepView::ToolCall(call) = &turn.steps[0] else {
        panic!("expected the Task call first")
    };
    assert_eq!(call.failure.as_deref(), Some(want));
    let sub = call.subagent.as_ref().expect("the subagent is linked");
    assert_eq!(sub.turns[0].failure.as_deref(), Some(want));
    assert!(run.html.contains(want));
    run.assert_sanitized();
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The bound and the allowlists

#[test]
fn the_line_is_bounded_to_4096_bytes_on_a_char_boundary() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let label = "Prüfstand-日本語-".repeat(200);
    let category = "Zeitüberschreitung-時間切れ-".repeat(100);
    fs::write(
        tmp.path().join("wide.yaml"),
        format!(
            r#"
name: wide
label: "{label}"
input: {{ format: jsonl }}
detect: [{{ at: /t, present: true }}]
failures: {{ stages: ["Ausführung"], categories: ["{category}"] }}
event_map:
  - when: [{{ at: /t, eq: p }}]
    emit: {{ kind: prompt, text: /text }}
  - when: [{{ at: /t, eq: f }}]
    emit:
      kind: failure
      stage: {{ const: "Ausführung" }}
      category: {{ at: /code, map: code_map }}
      http_status: /status
      exit_code: /exit
      signal: /signal
code_map: {{ values: {{ slow: "{category}" }}, default: unknown }}
"#
        ),
    )?;
    let records = [
        json!({"t": "p", "text": "go"}),
        json!({"t": "f", "code": "slow", "status": 504, "exit": 1, "signal": 15, "message": RAW}),
        json!({"t": "p", "text": "again"}),
        json!({"t": "f", "code": RAW, "stderr": STDERR}),
    ];
    let run = run_with(tmp.path(), "wide", &records)?;
    let long = run.report.turns[0].failure.clone().expect("a failure line");
    assert!(long.len() <= 4096 && long.len() > 4090, "{}", long.len());
    assert!(long.starts_with(&format!(
        "Product session failure (product: {}",
        label.chars().take(20).collect::<String>()
    )));
    let short = run.report.turns[1].failure.clone().expect("a failure line");
    assert!(short.len() <= 4096);
    // The label alone passes the bound, so this line is cut too; what matters is that no raw
    // text reached it.
    assert!(!short.contains(RAW) && !short.contains(STDERR), "{short}");
    run.assert_sanitized();
    Ok(())
}

#[test]
fn a_category_outside_the_allowlist_is_rejected_at_load() -> anyhow::Result<()> {
    let text = r#"
name: loose
label: Loose
input: { format: jsonl }
failures: { stages: [turn], categories: [quota] }
event_map:
  - when: [{ at: /t, eq: f }]
    emit: { kind: failure, stage: { const: turn }, category: { at: /code, map: code_map } }
code_map: { values: { q: quota, x: exploded }, default: unknown }
"#;
    let err = tracebook::adapters::spec::AdapterSpec::parse("loose.yaml", text)
        .expect_err("the table names a category that is not declared")
        .to_string();
    assert!(
        err.contains("code_map.values.x") && err.contains("unknown category `exploded`"),
        "{err}"
    );
    let raw_read = text.replace("{ at: /code, map: code_map }", "/code");
    let err = tracebook::adapters::spec::AdapterSpec::parse("loose.yaml", &raw_read)
        .expect_err("a category read without a table")
        .to_string();
    assert!(err.contains("name a `*_map` table"), "{err}");
    let stage = text.replace("stage: { const: turn }", "stage: { const: launch }");
    let err = tracebook::adapters::spec::AdapterSpec::parse("loose.yaml", &stage)
        .expect_err("an undeclared stage constant")
        .to_string();
    assert!(err.contains("unknown stage `launch`"), "{err}");
    let mapped_number = text.replace(
        "category: { at: /code, map: code_map } }",
        "category: { at: /code, map: code_map }, exit_code: { at: /x, map: code_map } }",
    );
    let err = tracebook::adapters::spec::AdapterSpec::parse("loose.yaml", &mapped_number)
        .expect_err("a table feeding an integer")
        .to_string();
    assert!(err.contains("holds an integer"), "{err}");
    Ok(())
}

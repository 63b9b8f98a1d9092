//! Gemini CLI 0.61 recordings: history rewrites, Gemini's own user messages, resume leftovers.

use serde_json::{Value as Json, json};
use std::fs;

use crate::{fixtures, report, tracebook};

/// A fixture's report as JSON.
fn read(case: &str) -> anyhow::Result<Json> {
    let path = fixtures().join("gemini-cli").join(case);
    Ok(serde_json::to_value(report(&path)?)?)
}

fn prompts(r: &Json) -> Vec<&str> {
    turns(r)
        .iter()
        .map(|t| t["prompt"]["text"].as_str().unwrap_or("<none>"))
        .collect()
}

fn turns(r: &Json) -> &[Json] {
    r["turns"].as_array().map(Vec::as_slice).unwrap_or_default()
}

fn responses(r: &Json) -> Vec<&str> {
    turns(r)
        .iter()
        .map(|t| t["response"]["text"].as_str().unwrap_or("<none>"))
        .collect()
}

fn step_types(turn: &Json) -> Vec<&str> {
    turn["steps"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| s["type"].as_str())
        .collect()
}

fn skipped(r: &Json, reason: &str) -> u64 {
    r["skipped"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .find(|s| s["reason"] == reason)
        .and_then(|s| s["count"].as_u64())
        .unwrap_or(0)
}

#[test]
fn resumed_session_keeps_every_earlier_answer_and_call_and_has_no_environment_turn()
-> anyhow::Result<()> {
    // Three runs of Gemini CLI 0.61.0 in one file: the second resumed with `latest`, the third
    // by id. Each start writes the `<session_context>` block through `$set.messages`, and each
    // resume re-lists the history with contents as API parts and no tool calls.
    let r = read("resume-rewrite/session.jsonl")?;
    assert_eq!(
        prompts(&r),
        [
            "run the failing check",
            "list the files here",
            "now say done"
        ]
    );
    assert_eq!(
        responses(&r),
        [
            "The command failed with exit code 3.",
            "The folder is empty.",
            "Done."
        ]
    );
    let first = &turns(&r)[0];
    assert_eq!(step_types(first), ["thinking", "tool_call"]);
    assert_eq!(first["steps"][1]["status"], "error");
    assert_eq!(first["steps"][1]["exit_code"], 3);
    assert_eq!(turns(&r)[1]["steps"][0]["status"], "ok");
    assert_eq!(r["summary"]["tool_calls"], 2);
    assert_eq!(skipped(&r, "environment context written by Gemini CLI"), 1);
    assert_eq!(r["warnings"], json!([]));
    Ok(())
}

#[test]
fn compression_keeps_the_turns_before_it_and_marks_where_it_happened() -> anyhow::Result<()> {
    // Gemini CLI 0.61.0 compressed the history while the second prompt ran (after its call):
    // `$set.messages` = environment, `<state_snapshot>` summary, "Got it", and the kept turn
    // re-listed under new ids.
    let r = read("compression/session.jsonl")?;
    assert_eq!(
        prompts(&r),
        [
            "run the failing check",
            "list the files here",
            "now say done"
        ]
    );
    assert_eq!(
        responses(&r),
        [
            "The command failed with exit code 3.",
            "The folder is empty.",
            "Done."
        ]
    );
    assert_eq!(step_types(&turns(&r)[0]), ["thinking", "tool_call"]);
    assert_eq!(turns(&r)[0]["steps"][1]["status"], "error");
    let second = &turns(&r)[1];
    assert_eq!(step_types(second), ["tool_call", "compaction"]);
    assert!(
        second["steps"][1]["summary"]
            .as_str()
            .is_some_and(|s| s.contains("<overall_goal>check the project</overall_goal>")),
        "{second}"
    );
    assert_eq!(r["summary"]["tool_calls"], 2);
    // The kept turn, listed again under new ids, is not read twice.
    assert_eq!(
        skipped(
            &r,
            "copy of earlier records listed again by a history rewrite"
        ),
        3
    );
    assert_eq!(
        skipped(&r, "compression acknowledgement written by Gemini CLI"),
        1
    );
    assert_eq!(r["warnings"], json!([]));
    Ok(())
}

#[test]
fn hook_context_and_editor_context_are_not_prompt_text() -> anyhow::Result<()> {
    // A BeforeAgent hook's `<hook_context>` part (Gemini CLI 0.61.0), and the IDE's editor
    // context messages before the prompt and after the answer.
    let r = read("hook-context/session.jsonl")?;
    assert_eq!(prompts(&r), ["what branch is this"]);
    assert_eq!(responses(&r), ["The branch is main."]);
    assert_eq!(turns(&r)[0]["response_status"], "complete");
    assert_eq!(skipped(&r, "IDE editor context written by Gemini CLI"), 2);
    // The hook's text is a notice inside the turn, after the prompt.
    assert_eq!(step_types(&turns(&r)[0]), ["notice"]);
    assert_eq!(turns(&r)[0]["steps"][0]["text"], "The branch is main.");
    let text = serde_json::to_string(&r["turns"])?;
    assert!(!text.contains("hook_context"), "{text}");
    assert!(!text.contains("editor context"), "{text}");
    Ok(())
}

#[test]
fn content_given_as_parts_is_read_as_reasoning_text_and_calls() -> anyhow::Result<()> {
    // A recording whose messages Gemini CLI rewrote from its history: contents are the API's
    // parts, the model message has no `toolCalls` and its result is a `_response` message.
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("session-2026-12-01T08-47-5a3d220e.json");
    let call = "run_shell_command__run_shell_command_1796114844083_0";
    let doc = json!({
        "sessionId": "5a3d220e-2ad6-40ea-a616-8b55b47f0c24",
        "projectHash": "cd4d27ec57237e7efca6c434f0b1e844f630df4a1d53636f07d492a6e86547ae",
        "startTime": "2026-12-01T08:47:23.998Z",
        "lastUpdated": "2026-12-01T08:47:27.025Z",
        "kind": "main",
        "messages": [
            {"id": "d7a61c93-7470-4a26-a004-ef86aa2ca24b", "timestamp": "2026-12-01T08:47:27.025Z",
             "type": "user", "content": [{"text": "run the failing check"}]},
            {"id": "90e3d268-47fd-4a00-8411-fc2bc4dc60ad", "timestamp": "2026-12-01T08:47:27.025Z",
             "type": "gemini", "content": [
                {"text": "I should run the check script.", "thought": true},
                {"functionCall": {"id": call, "name": "run_shell_command",
                                  "args": {"command": "echo checking; exit 3", "description": "run check"}}}]},
            {"id": "90e3d268-47fd-4a00-8411-fc2bc4dc60ad_response", "timestamp": "2026-12-01T08:47:27.025Z",
             "type": "user", "content": [{"functionResponse": {"id": call, "name": "run_shell_command",
                "response": {"output": "<untrusted_context>\nOutput: checking\nExit Code: 3\nProcess Group PGID: 10401\n</untrusted_context>"}}}]},
            {"id": "13ef3b72-6eb4-45c6-b400-519470aff2fb", "timestamp": "2026-12-01T08:47:27.025Z",
             "type": "gemini", "content": [{"text": "The command failed with exit code 3."}]}
        ]
    });
    fs::write(&path, serde_json::to_string_pretty(&doc)?)?;
    let r = serde_json::to_value(report(&path)?)?;
    assert_eq!(prompts(&r), ["run the failing check"]);
    assert_eq!(responses(&r), ["The command failed with exit code 3."]);
    let turn = &turns(&r)[0];
    assert_eq!(step_types(turn), ["thinking", "tool_call"]);
    assert_eq!(turn["steps"][0]["text"], "I should run the check script.");
    assert_eq!(turn["steps"][1]["name"], "run_shell_command");
    // The outcome is not retained with the call: unknown, never ok.
    assert_eq!(turn["steps"][1]["status"], "unknown");
    let text = serde_json::to_string(&r["turns"])?;
    assert!(!text.contains("functionCall"), "{text}");
    Ok(())
}

/// A home folder whose Gemini chats hold a resumed session and the file the resume left behind
/// (a header and the `<session_context>` block, same session id).
fn home_with_resume_leftover() -> anyhow::Result<tempfile::TempDir> {
    let home = tempfile::tempdir()?;
    let chats = home.path().join(".gemini/tmp/work/chats");
    fs::create_dir_all(&chats)?;
    fs::copy(
        fixtures().join("gemini-cli/resume-rewrite/session.jsonl"),
        chats.join("session-2026-12-01T08-47-5a3d220e.jsonl"),
    )?;
    fs::copy(
        fixtures().join("gemini-cli/resume-stray/stray.jsonl"),
        chats.join("session-2026-12-01T08-48-5a3d220e.jsonl"),
    )?;
    Ok(home)
}

#[test]
fn a_resume_leftover_is_not_a_second_session_in_list_render_all_or_render_session()
-> anyhow::Result<()> {
    let home = home_with_resume_leftover()?;
    let out = tracebook()
        .env("HOME", home.path())
        .env_remove("GEMINI_CLI_HOME")
        .args(["list", "--json"])
        .output()?;
    assert!(out.status.success());
    let rows: Vec<Json> = serde_json::from_slice(&out.stdout)?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["id"], "5a3d220e-2ad6-40ea-a616-8b55b47f0c24");
    assert_eq!(rows[0]["turns"], 3);

    let dir = tempfile::tempdir()?;
    tracebook()
        .env("HOME", home.path())
        .env_remove("GEMINI_CLI_HOME")
        .args(["render", "--all", "-o"])
        .arg(dir.path())
        .assert()
        .success();
    let notebooks: Vec<String> = fs::read_dir(dir.path())?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("gemini-cli-"))
        .collect();
    assert_eq!(
        notebooks,
        ["gemini-cli-session-2026-12-01T08-47-5a3d220e.html"]
    );

    // The leftover holds the same id: `render --session` still finds one session.
    let out = tracebook()
        .env("HOME", home.path())
        .env_remove("GEMINI_CLI_HOME")
        .args([
            "render",
            "--session",
            "5a3d220e",
            "--format",
            "json",
            "-o",
            "-",
        ])
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout)?;
    assert_eq!(report["summary"]["turns"], 3);
    Ok(())
}

#[test]
fn a_stream_json_shell_success_without_an_exit_code_is_unknown_not_ok() -> anyhow::Result<()> {
    // Gemini CLI 0.61.0 `--output-format stream-json`: `echo checking; exit 3` ran, and its
    // `tool_result` says `success` with the display text only.
    let r = read("stream-shell/session.jsonl")?;
    let call = &turns(&r)[0]["steps"][0];
    assert_eq!(call["command"], "echo checking; exit 3");
    assert_eq!(call["status"], "unknown");
    assert_eq!(r["summary"]["ok"], 0);
    // A result that keeps its `Exit Code` line is still read by it.
    let s = read("stream-json/session.jsonl")?;
    assert_eq!(turns(&s)[0]["steps"][0]["status"], "error");
    assert_eq!(turns(&s)[0]["steps"][2]["status"], "ok");
    Ok(())
}

#[test]
fn captured_recordings_read_one_turn_per_prompt_with_every_answer() -> anyhow::Result<()> {
    // The committed captures of Gemini CLI 0.61.0: each prompt is one turn, each answered.
    let root = fixtures().join("captured/gemini-cli-0.61.0");
    for (scenario, expected) in [("resume", 2), ("shell", 1)] {
        let chats = root.join(scenario).join("chats");
        for file in fs::read_dir(&chats)?.flatten() {
            let r = serde_json::to_value(report(&file.path())?)?;
            let capture: Json = serde_json::from_str(&fs::read_to_string(
                root.join(scenario).join("capture.json"),
            )?)?;
            let typed: Vec<&str> = capture["script"]["turns"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|t| t["prompt"].as_str())
                .collect();
            assert!(!typed.is_empty(), "{scenario}");
            assert_eq!(prompts(&r), typed, "{scenario}");
            assert_eq!(r["summary"]["complete"], expected, "{scenario}");
            assert_eq!(r["warnings"], json!([]), "{scenario}");
        }
    }
    Ok(())
}

//! Hostile and broken input: nothing panics, the rest still renders, and no planted secret
//! reaches the HTML or the JSON report.

use proptest::prelude::*;
use serde_json::json;

/// Renders a Claude Code log given as bytes; returns (html, json) or the error message.
fn render(bytes: &[u8]) -> Result<(String, String), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = dir.path().join("session.jsonl");
    std::fs::write(&log, bytes).map_err(|e| e.to_string())?;
    let set = tracebook::adapters::AdapterSet::load(None).map_err(|e| e.to_string())?;
    let (report, _) = tracebook::report_for(
        &log,
        &set,
        Some("claude-code"),
        &[],
        "2026-01-01T00:00:00Z".into(),
    )
    .map_err(|e| format!("{e:#}"))?;
    let html = tracebook::render::html(&report).map_err(|e| e.to_string())?;
    let json = serde_json::to_string(&report).map_err(|e| e.to_string())?;
    Ok((html, json))
}

fn line(uuid: &str, parent: Option<&str>, kind: &str, content: serde_json::Value) -> String {
    json!({"parentUuid": parent, "isSidechain": false, "cwd": "/home/carol/proj",
           "sessionId": "s", "version": "2.1.39", "type": kind, "uuid": uuid,
           "timestamp": "2026-03-02T10:00:01.000Z",
           "message": {"role": if kind == "user" {"user"} else {"assistant"}, "content": content}})
    .to_string()
}

/// One turn with a tool call whose input and output carry `payload`.
fn session_with(payload: &str) -> String {
    [
        line("u1", None, "user", json!(payload)),
        line(
            "a1",
            Some("u1"),
            "assistant",
            json!([
            {"type": "text", "text": payload},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash",
             "input": {"command": payload, "env": {"API_KEY": payload}}}]),
        ),
        line(
            "u2",
            Some("a1"),
            "user",
            json!([
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": payload}]),
        ),
    ]
    .join("\n")
}

/// Secret shapes a log carries, with a body drawn by the property test.
fn planted(kind: usize, body: &str) -> (String, String) {
    let body20 = &body[..20];
    match kind % 8 {
        0 => {
            let s = format!("ghp_{body}{body}");
            (format!("token {}", &s[..40]), s[..40].to_owned())
        }
        1 => {
            let s = format!("sk-ant-api03-{body}{body}");
            (format!("ANTHROPIC_API_KEY={s}"), s)
        }
        2 => (format!("export DB_PASSWORD={body20}"), body20.to_owned()),
        3 => (
            format!("curl -H \"Authorization: Bearer {body}\" https://api"),
            body.to_owned(),
        ),
        4 => (
            format!("postgres://app:{body20}@db.internal:5432/x"),
            body20.to_owned(),
        ),
        5 => (
            format!("{{\"client_secret\": \"{body20}\"}}"),
            body20.to_owned(),
        ),
        6 => {
            let s = format!(
                "AKIA{}",
                body.to_ascii_uppercase().replace(['0', '1', '8', '9'], "A")
            );
            let s = s[..20].to_owned();
            (format!("aws_access_key_id = {s}"), s)
        }
        _ => (format!("api_key: {body20}\n"), body20.to_owned()),
    }
}

proptest! {
    // Random inputs on a developer's machine find new cases; CI replays one fixed sequence so
    // that a submission is judged on the same inputs every time.
    #![proptest_config(ProptestConfig {
        cases: 48,
        rng_seed: if std::env::var_os("CI").is_some() {
            proptest::test_runner::RngSeed::Fixed(0x7ace_b00c)
        } else {
            proptest::test_runner::RngSeed::Random
        },
        ..ProptestConfig::default()
    })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = render(&bytes);
    }

    #[test]
    fn arbitrary_text_in_every_field_never_panics(text in "\\PC{0,300}") {
        let _ = render(session_with(&text).as_bytes());
    }

    #[test]
    fn planted_secrets_never_reach_html_or_json(
        kind in 0usize..8,
        body in "[A-Za-z0-9]{36}",
        wrap in 0usize..4,
    ) {
        let (text, secret) = planted(kind, &body);
        let text = match wrap {
            0 => text,
            1 => format!("```\n{text}\n```"),
            2 => serde_json::to_string(&text).unwrap_or_default(),
            _ => format!("before\n{text}\nafter"),
        };
        let (html, json) = render(session_with(&text).as_bytes()).map_err(TestCaseError::fail)?;
        prop_assert!(!html.contains(&secret), "{secret} in HTML");
        prop_assert!(!json.contains(&secret), "{secret} in JSON");
        prop_assert!(!html.contains("carol") && !json.contains("carol"));
    }
}

#[test]
fn deeply_nested_json_is_a_warning_not_a_panic() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut log = session_with("hello");
    log.push('\n');
    log.push_str(&deep);
    let nested = format!(
        "{{\"type\":\"user\",\"uuid\":\"x\",\"message\":{{\"content\":{}1{}}}}}",
        "{\"a\":".repeat(5000),
        "}".repeat(5000)
    );
    log.push('\n');
    log.push_str(&nested);
    let (html, _) = render(log.as_bytes()).expect("renders the good lines");
    assert!(html.contains("hello"));
}

#[test]
fn invalid_utf8_and_lone_surrogates_do_not_stop_the_rest() {
    let mut log = session_with("kept line").into_bytes();
    log.extend_from_slice(b"\n{\"type\":\"user\",\"message\":{\"content\":\"\xff\xfe bad\"}}\n");
    log.extend_from_slice(
        b"{\"type\":\"user\",\"uuid\":\"s1\",\"message\":{\"role\":\"user\",\"content\":\"lone \\ud800 surrogate\"}}\n",
    );
    let (html, _) = render(&log).expect("renders");
    assert!(html.contains("kept line"));
}

#[test]
fn a_cycle_in_parent_uuid_terminates() {
    let log = [
        line("a", Some("c"), "user", json!("first")),
        line(
            "b",
            Some("a"),
            "assistant",
            json!([{"type": "text", "text": "second"}]),
        ),
        line("c", Some("b"), "user", json!("third")),
    ]
    .join("\n");
    let (html, _) = render(log.as_bytes()).expect("renders");
    assert!(html.contains("first") && html.contains("third"));
}

#[test]
fn terminal_escapes_in_tool_output_are_shown_cleaned() {
    let out = "\u{1b}[31mFAILED\u{1b}[0m test\u{7}\u{1b}]0;title\u{7} \u{202e}txt.exe";
    let (html, json) = render(session_with(out).as_bytes()).expect("renders");
    for s in [&html, &json] {
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{202e}'));
        assert!(!s.contains("\\u001b"), "escaped ESC survived");
    }
    assert!(html.contains("FAILED test"));
}

#[test]
fn base64_images_and_attachments_never_reach_the_output() {
    let body = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let log = [
        line("u1", None, "user", json!([
            {"type": "text", "text": format!("see data:image/png;base64,{body}")},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": body}}])),
        line("a1", Some("u1"), "assistant", json!([
            {"type": "text", "text": format!("attachment: {}", "QUJD".repeat(300))}])),
    ]
    .join("\n");
    let (html, json) = render(log.as_bytes()).expect("renders");
    assert!(!html.contains("iVBORw0KGgo") && !json.contains("iVBORw0KGgo"));
    assert!(!html.contains("QUJDQUJDQUJD") && !json.contains("QUJDQUJDQUJD"));
}

#[test]
#[ignore = "writes and renders a 200 MB line; run with --ignored"]
fn a_200_mb_single_line_renders() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("big.jsonl");
    let big = "x".repeat(200 * 1024 * 1024);
    std::fs::write(&log, session_with(&big)).expect("write");
    let set = tracebook::adapters::AdapterSet::load(None).expect("adapters");
    let (report, _) = tracebook::report_for(&log, &set, None, &[], "2026-01-01T00:00:00Z".into())
        .expect("renders");
    let html = tracebook::render::html(&report).expect("html");
    assert!(html.len() > 1000);
}

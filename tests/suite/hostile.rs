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
    let (report, _) = tracebook::pipeline::report(&log, &crate::pinned(&set, Some("claude-code")))
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
fn a_lone_surrogate_escape_keeps_its_record_with_a_replacement_character() -> anyhow::Result<()> {
    // What Node's JSON.stringify writes for a string cut inside an emoji, in a prompt and in a
    // tool result; a properly paired escape and an escaped backslash before `u` stay as they are.
    let log = [
        line("u1", None, "user", json!("PROMPTMARK cut \u{1F600} here")),
        line(
            "a1",
            Some("u1"),
            "assistant",
            json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                    "input": {"command": "echo \\ud83d"}}]),
        ),
        line(
            "u2",
            Some("a1"),
            "user",
            json!([{"type": "tool_result", "tool_use_id": "toolu_1", "content": "OUTMARK 🙂"}]),
        ),
    ]
    .join("\n")
    .replace("\u{1F600}", "\\ud83d")
    .replace("OUTMARK 🙂", "OUTMARK \\ud83d\\ude42 then \\ude42");
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("session.jsonl");
    std::fs::write(&path, &log)?;
    let out = crate::tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(&path)
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let turn = &report["turns"][0];
    assert_eq!(turn["prompt"]["text"], "PROMPTMARK cut \u{fffd} here");
    let call = &turn["steps"][0];
    assert_eq!(call["status"], "ok", "{call}");
    assert_eq!(call["output"], "OUTMARK 🙂 then \u{fffd}");
    assert_eq!(call["command"], "echo \\ud83d");
    assert!(
        stderr.contains("session.jsonl:1: a lone UTF-16 surrogate escape")
            && stderr.contains("session.jsonl:3: a lone UTF-16 surrogate escape"),
        "{stderr}"
    );
    Ok(())
}

#[test]
fn a_byte_order_mark_is_accepted_and_an_empty_file_is_named_empty() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bom.jsonl");
    let mut bytes = "\u{feff}".as_bytes().to_vec();
    bytes.extend_from_slice(session_with("BOMMARK first line").as_bytes());
    std::fs::write(&path, bytes)?;
    let out = crate::tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(&path)
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(report["turns"][0]["prompt"]["text"], "BOMMARK first line");

    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "")?;
    crate::tracebook()
        .args(["render", "-o", "-"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("empty.jsonl: the file is empty"));
    Ok(())
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
    let (report, _) =
        tracebook::pipeline::report(&log, &crate::pinned(&set, None)).expect("renders");
    let html = tracebook::render::html(&report).expect("html");
    assert!(html.len() > 1000);
}

/// The Codex fixture every bounded-input test starts from: a real rollout, 24 lines.
fn codex_session() -> Vec<u8> {
    std::fs::read(crate::fixtures().join("codex/tool-outcomes/session.jsonl")).unwrap_or_default()
}

/// Writes a `.jsonl.zst` whose stream is `head`, then `repeat` copies of `chunk`, then `tail`.
/// `chunk` is compressed once and written again and again as a frame of its own, so the file
/// stays small (and the test's memory too) however long the stream it holds.
fn zst_bomb(
    path: &std::path::Path,
    head: &[u8],
    chunk: &[u8],
    repeat: usize,
    tail: &[u8],
) -> anyhow::Result<u64> {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    out.write_all(&zstd::bulk::compress(head, 3)?)?;
    let frame = zstd::bulk::compress(chunk, 19)?;
    for _ in 0..repeat {
        out.write_all(&frame)?;
    }
    out.write_all(&zstd::bulk::compress(tail, 3)?)?;
    out.flush()?;
    Ok(std::fs::metadata(path)?.len())
}

/// The highest "peak" resident memory, in MiB, of the `memory:` lines `TRACEBOOK_TIMINGS`
/// prints (none where the system does not report it).
fn peak_mib(stderr: &str) -> Option<f64> {
    stderr
        .lines()
        .filter(|l| l.starts_with("memory:"))
        .filter_map(|l| {
            l.rsplit_once(" MiB peak")?
                .0
                .rsplit(' ')
                .next()?
                .parse()
                .ok()
        })
        .reduce(f64::max)
}

const MIB: usize = 1 << 20;

#[test]
fn a_6_gib_line_in_a_small_zst_is_skipped_with_a_warning_and_bounded_memory() -> anyhow::Result<()>
{
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("bomb.jsonl.zst");
    let mut head = codex_session();
    head.extend_from_slice(br#"{"type":"response_item","payload":{"type":"message","text":""#);
    let size = zst_bomb(&log, &head, &vec![b'x'; MIB], 6 << 10, b"\"}}\n")?;
    assert!(size < 1 << 20, "the bomb is {size} bytes");
    let out = crate::tracebook()
        .env("TRACEBOOK_TIMINGS", "1")
        .args(["render", "--format", "json", "-o"])
        .arg(dir.path().join("out.json"))
        .arg(&log)
        .timeout(std::time::Duration::from_secs(120))
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("bomb.jsonl.zst:25: line of 255 MiB, longer than the 64 MiB"),
        "{stderr}"
    );
    assert!(
        stderr.contains("bomb.jsonl.zst:26: the decompressed stream passed"),
        "{stderr}"
    );
    // The session before the line is all there.
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out.json"))?)?;
    assert_eq!(report["summary"]["tool_calls"], 6, "{report}");
    if let Some(peak) = peak_mib(&stderr) {
        assert!(peak < 512.0, "peak resident memory {peak} MiB");
    }
    Ok(())
}

#[test]
fn a_file_of_one_line_too_long_says_so_rather_than_its_harness_is_unknown() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("one.jsonl.zst");
    zst_bomb(
        &log,
        b"{\"type\":\"x\",\"x\":\"",
        &vec![b'x'; MIB],
        80,
        b"\"}\n",
    )?;
    crate::tracebook()
        .args(["render", "-o", "-"])
        .arg(&log)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "nothing could be read (one.jsonl.zst:1: line of 80 MiB, longer than the 64 MiB",
        ));
    // So does a line nested deeper than JSON is read.
    let deep = dir.path().join("deep.jsonl");
    let mut log = session_with("kept");
    log.push('\n');
    log.push_str(&format!(
        "{{\"type\":\"user\",\"uuid\":\"x\",\"message\":{{\"content\":{}1{}}}}}",
        "[".repeat(500),
        "]".repeat(500)
    ));
    std::fs::write(&deep, log)?;
    crate::tracebook()
        .args(["render", "-o", "-"])
        .arg(&deep)
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "deep.jsonl:4: not valid JSON (nested more than 128 levels deep",
        ));
    Ok(())
}

#[test]
fn a_line_over_the_limit_is_skipped_and_the_lines_after_it_are_read() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("long.jsonl.zst");
    let session = codex_session();
    let text = String::from_utf8(session.clone())?;
    let lines: Vec<&str> = text.lines().collect();
    // The first three lines, a 100 MiB line, then the rest of the session.
    let head = format!(
        "{}\n{{\"type\":\"event_msg\",\"x\":\"",
        lines[..3].join("\n")
    );
    let tail = format!("\"}}\n{}\n", lines[3..].join("\n"));
    zst_bomb(
        &log,
        head.as_bytes(),
        &vec![b'y'; MIB],
        100,
        tail.as_bytes(),
    )?;
    let out = crate::tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(&log)
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("long.jsonl.zst:4: line of 100 MiB, longer than the 64 MiB"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(report["summary"]["tool_calls"], 6);
    assert_eq!(report["summary"]["turns"], 1);
    Ok(())
}

#[test]
fn gibs_of_skipped_lines_in_a_zst_stop_at_the_expansion_limit() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("skipped.jsonl.zst");
    // Lines of 16 KiB: the limit is on bytes, and fewer lines keep the test quick in a debug
    // build.
    let noise = format!(
        r#"{{"timestamp":"2026-03-02T10:00:09.000Z","type":"event_msg","payload":{{"type":"token_count","info":"{}"}}}}"#,
        "z".repeat(16 << 10)
    );
    let mut chunk = String::new();
    while chunk.len() + noise.len() < MIB {
        chunk.push_str(&noise);
        chunk.push('\n');
    }
    // About 6 GiB of lines the adapter skips, after a whole session.
    zst_bomb(&log, &codex_session(), chunk.as_bytes(), 6 << 10, b"")?;
    let start = std::time::Instant::now();
    let out = crate::tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(&log)
        .timeout(std::time::Duration::from_secs(300))
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the decompressed stream passed 256 MiB"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    assert_eq!(report["summary"]["tool_calls"], 6);
    // 256 MiB of lines, not 6 GiB: seconds, where reading it all took minutes.
    assert!(start.elapsed().as_secs() < 120, "{:?}", start.elapsed());
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_device_or_a_fifo_as_input_is_refused_without_reading_it() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("pipe.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success());
    for (input, kind, harness) in [
        (
            std::path::PathBuf::from("/dev/zero"),
            "a character device",
            None,
        ),
        (fifo.clone(), "a FIFO", None),
        (fifo, "a FIFO", Some("codex")),
    ] {
        let mut cmd = crate::tracebook();
        cmd.args(["render", "--format", "json", "-o", "-"])
            .arg(&input);
        if let Some(h) = harness {
            cmd.args(["--harness", h]);
        }
        let out = cmd.timeout(std::time::Duration::from_secs(30)).output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", input.display());
        assert!(
            stderr.contains(kind) && stderr.contains("not a session file"),
            "{stderr}"
        );
    }
    Ok(())
}

#[test]
fn list_and_render_all_go_on_past_a_bomb_and_exit_3() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let day = home.path().join(".codex/sessions/2026/03/02");
    std::fs::create_dir_all(&day)?;
    std::fs::write(
        day.join("rollout-2026-03-02T10-00-00-0199aaaa-1111-7222-8333-444455556666.jsonl"),
        codex_session(),
    )?;
    let bomb =
        day.join("rollout-2026-03-02T11-00-00-0199bbbb-1111-7222-8333-444455556666.jsonl.zst");
    zst_bomb(&bomb, b"{\"type\":\"x", &vec![b'x'; MIB], 6 << 10, b"\"}\n")?;
    let run = |args: &[&str]| {
        crate::tracebook()
            .env("HOME", home.path())
            .env_remove("CODEX_HOME")
            .env("TRACEBOOK_TIMINGS", "1")
            .args(args)
            .timeout(std::time::Duration::from_secs(120))
            .output()
    };
    let out = run(&["list"])?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stdout.contains("0199aaaa-1111"), "{stdout}");
    assert!(
        stderr.contains("rollout-2026-03-02T11-00-00-0199bbbb")
            && stderr.contains("nothing could be read"),
        "{stderr}"
    );
    if let Some(peak) = peak_mib(&stderr) {
        assert!(peak < 512.0, "list: peak resident memory {peak} MiB");
    }
    let dir = home.path().join("out");
    let out = run(&["render", "--all", "-o", &dir.to_string_lossy()])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(dir.join("index.html").is_file() && dir.join(".tracebook-manifest.json").is_file());
    let index = std::fs::read_to_string(dir.join("index.html"))?;
    assert!(index.contains("0199aaaa-1111") && index.contains("0199bbbb"));
    if let Some(peak) = peak_mib(&stderr) {
        assert!(
            peak < 512.0,
            "render --all: peak resident memory {peak} MiB"
        );
    }
    Ok(())
}

/// Renders a database file; returns the exit code, standard error and how long it took.
fn render_db(db: &std::path::Path) -> anyhow::Result<(Option<i32>, String, std::time::Duration)> {
    let start = std::time::Instant::now();
    let out = crate::tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(db)
        .timeout(std::time::Duration::from_secs(90))
        .output()?;
    Ok((
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        start.elapsed(),
    ))
}

/// OpenCode's tables, with `session` or `message` replaced by the view given.
fn hostile_db(dir: &std::path::Path, view: &str) -> anyhow::Result<std::path::PathBuf> {
    let db = dir.join("opencode.db");
    let conn = rusqlite::Connection::open(&db)?;
    let tables = [
        (
            "session",
            "CREATE TABLE session (id TEXT, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT, title TEXT, version TEXT, time_updated INTEGER); INSERT INTO session VALUES ('ses_1', 'p', NULL, 's', '/w', 't', '1', 1);",
        ),
        (
            "message",
            "CREATE TABLE message (id TEXT, session_id TEXT, data TEXT);",
        ),
        (
            "part",
            "CREATE TABLE part (id TEXT, session_id TEXT, message_id TEXT, data TEXT);",
        ),
    ];
    for (name, sql) in tables {
        if !view.contains(&format!("CREATE VIEW {name} ")) {
            conn.execute_batch(sql)?;
        }
    }
    conn.execute_batch(view)?;
    Ok(db)
}

#[test]
fn a_session_view_over_an_endless_recursive_query_is_refused_at_once() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = hostile_db(
        dir.path(),
        "CREATE VIEW session AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) \
         SELECT 'ses_' || n AS id, NULL AS project_id, NULL AS parent_id, 's' AS slug, \
         '/w' AS directory, 't' AS title, '1' AS version, n AS time_updated FROM r;",
    )?;
    let (code, stderr, took) = render_db(&db)?;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`session` is a view or a trigger, where a table is expected"),
        "{stderr}"
    );
    assert!(took.as_secs() < 20, "{took:?}");
    // `list` finds it where OpenCode keeps its database, and goes on.
    let home = tempfile::tempdir()?;
    let data = home.path().join("data/opencode");
    std::fs::create_dir_all(&data)?;
    std::fs::copy(&db, data.join("opencode.db"))?;
    let out = crate::tracebook()
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .arg("list")
        .timeout(std::time::Duration::from_secs(90))
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("is a view"), "{stderr}");
    Ok(())
}

#[test]
fn a_message_view_of_millions_of_rows_is_refused_without_reading_it() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = hostile_db(
        dir.path(),
        "CREATE TABLE d (x INTEGER); \
         INSERT INTO d VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9); \
         CREATE VIEW message AS SELECT 'msg_' || (a.x + 10 * b.x + 100 * c.x) AS id, \
         'ses_1' AS session_id, '{\"role\":\"user\",\"sessionID\":\"ses_1\"}' AS data \
         FROM d a, d b, d c, d e, d f, d g, d h, d i;",
    )?;
    let (code, stderr, took) = render_db(&db)?;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("`message` is a view"), "{stderr}");
    assert!(took.as_secs() < 20, "{took:?}");
    Ok(())
}

#[test]
fn a_locked_damaged_or_foreign_database_gets_a_message_that_names_the_cause() -> anyhow::Result<()>
{
    let dir = tempfile::tempdir()?;
    let good = crate::opencode::build_db(dir.path())?;
    // Another program holds an exclusive lock (a rollback journal: readers are kept out).
    let locked = dir.path().join("locked.db");
    std::fs::copy(&good, &locked)?;
    let holder = rusqlite::Connection::open(&locked)?;
    holder.execute_batch(
        "PRAGMA journal_mode = DELETE; PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; \
         CREATE TABLE held (x INTEGER);",
    )?;
    let (code, stderr, took) = render_db(&locked)?;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("locked by another program"), "{stderr}");
    assert!(took.as_secs() < 30, "{took:?}");
    drop(holder);
    // Damaged pages after an intact header.
    let damaged = dir.path().join("damaged.db");
    let mut bytes = std::fs::read(&good)?;
    for b in bytes.iter_mut().skip(100).take(8192) {
        *b = 0xA5;
    }
    std::fs::write(&damaged, bytes)?;
    let (code, stderr, _) = render_db(&damaged)?;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");
    // A name that says database, and bytes that do not.
    let fake = dir.path().join("fake.db");
    std::fs::write(&fake, "SQLite format 2 and then some text")?;
    let (code, stderr, _) = render_db(&fake)?;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("not an SQLite database"), "{stderr}");
    Ok(())
}

#[test]
fn terminal_escapes_and_newlines_in_names_and_ids_are_not_printed_raw() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let project = home.path().join(".claude/projects/-w-shop");
    std::fs::create_dir_all(&project)?;
    // A session whose id starts a fake row and clears the screen, and a broken file whose name
    // retitles the terminal window.
    let session = session_with("hello").replace(
        "\"sessionId\":\"s\"",
        "\"sessionId\":\"evil\\nclaude-code  FAKEROW\\u001b[2J\"",
    );
    std::fs::write(project.join("good.jsonl"), session)?;
    std::fs::write(
        project.join("bad\u{1b}]0;pwned\u{7}\nname.jsonl"),
        "not json\n",
    )?;
    let out = crate::tracebook()
        .env("HOME", home.path())
        .arg("list")
        .output()?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains(['\u{1b}', '\u{7}']), "{text:?}");
    }
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("claude-code  FAKEROW")),
        "{stdout}"
    );
    assert!(stdout.contains("evil⟨U+000A⟩claude-code"), "{stdout}");
    assert!(
        stderr.contains("bad⟨U+001B⟩]0;pwned⟨U+0007⟩⟨U+000A⟩name.jsonl"),
        "{stderr}"
    );
    let dir = home.path().join("out");
    let out = crate::tracebook()
        .env("HOME", home.path())
        .args(["render", "--all", "-o"])
        .arg(&dir)
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains(['\u{1b}', '\u{7}']), "{stderr:?}");
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "{stderr}"
    );
    Ok(())
}

#[test]
fn invisible_characters_reach_the_notebook_as_visible_escapes() {
    let text = "open src/evil\u{e0041}\u{e0042}txt.exe and pass\u{200b}word\u{feff} \u{61c}x";
    let (html, json) = render(session_with(text).as_bytes()).expect("renders");
    for s in [&html, &json] {
        for c in ['\u{e0041}', '\u{200b}', '\u{feff}', '\u{61c}'] {
            assert!(!s.contains(c), "{c:?} passed through");
        }
    }
    assert!(json.contains("src/evil⟨U+E0041⟩⟨U+E0042⟩txt.exe"), "{json}");
    assert!(html.contains("pass⟨U+200B⟩word"));
}

#[cfg(unix)]
#[test]
fn list_names_a_fifo_a_device_and_a_dangling_link_where_sessions_are_kept() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let project = home.path().join(".claude/projects/-w-shop");
    std::fs::create_dir_all(&project)?;
    std::fs::write(project.join("good.jsonl"), session_with("hello"))?;
    let made = std::process::Command::new("mkfifo")
        .arg(project.join("pipe.jsonl"))
        .status()?;
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", project.join("zero.jsonl"))?;
    std::os::unix::fs::symlink(project.join("gone"), project.join("dangling.jsonl"))?;
    let out = crate::tracebook()
        .env("HOME", home.path())
        .arg("list")
        .timeout(std::time::Duration::from_secs(60))
        .output()?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stdout.lines().count() == 2, "{stdout}");
    for (name, why) in [
        ("pipe.jsonl", "a FIFO"),
        ("zero.jsonl", "a character device"),
        ("dangling.jsonl", "no such file"),
    ] {
        assert!(
            stderr.lines().any(|l| l.contains(name) && l.contains(why)),
            "{name}: {stderr}"
        );
    }
    Ok(())
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_or_database_names_the_permission_once() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    let log = dir.path().join("s.jsonl");
    std::fs::write(&log, codex_session())?;
    let db = crate::opencode::build_db(dir.path())?;
    let bin = assert_cmd::cargo::cargo_bin("tracebook");
    // Root reads any file: run as `nobody` then, where that can be done.
    let root = std::process::Command::new("id").arg("-u").output()?.stdout == b"0\n";
    if root
        && std::process::Command::new("runuser")
            .arg("--help")
            .output()
            .is_err()
    {
        eprintln!("running as root without runuser: unreadable-file test skipped");
        return Ok(());
    }
    for path in [&log, &db] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000))?;
        let mut cmd = if root {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "nobody", "--"]).arg(&bin);
            c
        } else {
            std::process::Command::new(&bin)
        };
        let out = cmd
            .args(["render", "--format", "json", "-o", "-"])
            .arg(path)
            .output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.matches("Permission denied").count(), 1, "{stderr}");
    }
    Ok(())
}

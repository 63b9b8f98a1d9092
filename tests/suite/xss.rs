//! The notebook in real headless Chromium with hostile transcript content: every XSS vector
//! of `tests/vectors/xss/` (payloadbox list, DOMPurify fixtures) placed in prompts, assistant
//! messages, tool inputs and tool outputs. The page must run no transcript script, fire no CSP
//! violation and send no network request.

use headless_chrome::browser::tab::EventListener;
use headless_chrome::protocol::cdp::types::Event;
use headless_chrome::protocol::cdp::{Network, Page};
use serde_json::json;
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::browser::{chromium, file_url};

fn vectors() -> anyhow::Result<Vec<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/xss");
    let mut out: Vec<String> =
        std::fs::read_to_string(dir.join("payloadbox-xss-payload-list.txt"))?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect();
    let fixtures: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
        dir.join("dompurify-fixtures.json"),
    )?)?;
    for f in fixtures["fixtures"].as_array().into_iter().flatten() {
        if let Some(p) = f["payload"].as_str() {
            out.push(p.to_owned());
        }
    }
    Ok(out)
}

/// A Claude Code session whose every text field carries the vectors, 40 to a turn.
fn hostile_session(vectors: &[String]) -> String {
    let mut lines = Vec::new();
    let mut parent = serde_json::Value::Null;
    let mut n = 0;
    let mut next = |parent: &mut serde_json::Value| {
        n += 1;
        let id = format!("00000000-0000-4000-8000-{n:012}");
        let p = std::mem::replace(parent, json!(id.clone()));
        (id, p)
    };
    let base = |id: &str, parent: serde_json::Value, kind: &str| {
        json!({"parentUuid": parent, "isSidechain": false, "userType": "external",
               "cwd": "/srv/xss", "sessionId": "xss", "version": "2.1.39", "type": kind,
               "uuid": id, "timestamp": "2026-03-02T10:00:01.000Z"})
    };
    for (i, chunk) in vectors.chunks(40).enumerate() {
        let text = chunk.join("\n\n");
        let (id, p) = next(&mut parent);
        let mut prompt = base(&id, p, "user");
        prompt["message"] = json!({"role": "user", "content": text});
        lines.push(prompt);
        let (id, p) = next(&mut parent);
        let mut call = base(&id, p, "assistant");
        call["message"] = json!({"model": "m", "id": format!("msg_{i}a"), "type": "message",
            "role": "assistant", "content": [
                {"type": "text", "text": text},
                {"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash",
                 "input": {"command": text, "description": text}}]});
        lines.push(call);
        let (id, p) = next(&mut parent);
        let mut result = base(&id, p, "user");
        result["message"] = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{i}"), "content": text,
             "is_error": i % 2 == 0}]});
        lines.push(result);
        let (id, p) = next(&mut parent);
        let mut answer = base(&id, p, "assistant");
        answer["message"] = json!({"model": "m", "id": format!("msg_{i}b"), "type": "message",
            "role": "assistant", "content": [{"type": "text", "text": format!("Done: {text}")}]});
        lines.push(answer);
    }
    lines
        .iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Installed before the page's own scripts: records CSP violations and any call a payload
/// would make to show it ran.
const PROBE: &str = r#"
window.__tb = {violations: [], ran: []};
document.addEventListener('securitypolicyviolation', e =>
  window.__tb.violations.push(e.violatedDirective + ' ' + e.blockedURI));
for (const name of ['alert', 'confirm', 'prompt', 'print', 'open']) {
  const f = () => { window.__tb.ran.push(name); };
  Object.defineProperty(window, name, {value: f, writable: false});
}
"#;

#[test]
fn no_transcript_script_runs_no_violation_and_no_request() -> anyhow::Result<()> {
    let Some(chrome) = chromium() else {
        return Ok(());
    };
    let vectors = vectors()?;
    assert!(vectors.len() > 6000, "{} vectors", vectors.len());
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("session.jsonl");
    std::fs::write(&log, hostile_session(&vectors))?;
    let report = crate::report(&log)?;
    assert!(report.summary.tool_calls >= vectors.len() / 40);
    let html = tracebook::render::html(&report)?;
    let page = dir.path().join("xss.html");
    std::fs::write(&page, &html)?;

    let tab = chrome.browser.new_tab()?;
    let requests: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = Arc::clone(&requests);
    let listener = move |event: &Event| {
        if let Event::NetworkRequestWillBeSent(e) = event {
            if let Ok(mut r) = seen.lock() {
                r.push(e.params.request.url.clone());
            }
        }
    };
    let listener: Arc<dyn EventListener<Event> + Send + Sync> = Arc::new(listener);
    tab.add_event_listener(listener)?;
    tab.call_method(Network::Enable {
        max_total_buffer_size: None,
        max_resource_buffer_size: None,
        max_post_data_size: None,
        report_direct_socket_traffic: None,
        enable_durable_messages: None,
    })?;
    tab.call_method(Page::AddScriptToEvaluateOnNewDocument {
        source: PROBE.to_owned(),
        world_name: None,
        include_command_line_api: None,
        run_immediately: None,
    })?;
    let url = file_url(&page);
    tab.navigate_to(&url)?.wait_until_navigated()?;
    // Open every fold and give lazy content and timers a moment to act.
    tab.evaluate(
        "document.querySelectorAll('details').forEach(d => d.open = true); 1",
        false,
    )?;
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let state = tab
        .evaluate(
            "JSON.stringify({v: window.__tb.violations, r: window.__tb.ran, \
             href: location.href, scripts: document.scripts.length})",
            false,
        )?
        .value
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let state: serde_json::Value = serde_json::from_str(&state)?;
    assert_eq!(state["v"], json!([]), "CSP violations fired");
    assert_eq!(state["r"], json!([]), "transcript script ran");
    assert_eq!(state["href"], json!(url), "the page navigated away");
    // Our own inline scripts (the page's, and the decoder and the grammars when the page
    // needs them) and nothing else.
    assert!(state["scripts"].as_u64().unwrap_or(99) <= 3, "{state}");
    let requests = requests.lock().map(|r| r.clone()).unwrap_or_default();
    let outside: Vec<&String> = requests.iter().filter(|u| **u != url).collect();
    assert!(outside.is_empty(), "requests left the page: {outside:?}");
    Ok(())
}

//! The batch index over a generated folder of small sessions: every session a row (with
//! JavaScript off too), the summary of failed and unknown calls as SVG and tables, and, in real
//! Chromium (with `CI` set), the search across every session's turns and the filters.

use std::path::Path;

use crate::tracebook;

/// Writes `n` small Claude Code sessions, each of two turns, into a home folder: session `i`
/// has the word `needle{i}` in its second prompt; every third one has a failed Bash call and
/// every fifth a Read call with no result; they start on 30 different days.
fn generate(home: &Path, n: usize) -> anyhow::Result<()> {
    for i in 0..n {
        let project = format!("proj{}", i % 7);
        let dir = home.join(format!(".claude/projects/-home-u-{project}"));
        std::fs::create_dir_all(&dir)?;
        let sid = format!("00000000-0000-4000-8000-{i:012}");
        let day = 1 + i % 28;
        let month = 1 + (i / 28) % 2;
        let mut lines = Vec::new();
        let mut uuid = 0;
        let mut line = |kind: &str, message: serde_json::Value, extra: serde_json::Value| {
            uuid += 1;
            let mut v = serde_json::json!({
                "parentUuid": if uuid == 1 { serde_json::Value::Null } else { format!("{sid}-{}", uuid - 1).into() },
                "isSidechain": false, "userType": "external", "cwd": format!("/work/{project}"),
                "sessionId": sid, "version": "2.1.39", "type": kind,
                "uuid": format!("{sid}-{uuid}"),
                "timestamp": format!("2026-{month:02}-{day:02}T10:00:{:02}.000Z", uuid),
                "message": message,
            });
            if let (Some(o), Some(x)) = (v.as_object_mut(), extra.as_object()) {
                o.extend(x.clone());
            }
            lines.push(v.to_string());
        };
        let user = |text: String| serde_json::json!({"role": "user", "content": text});
        let said = |content: serde_json::Value| {
            serde_json::json!({"model": "claude-opus-4-6", "id": format!("msg_{}", rand_id()), "type": "message",
                "role": "assistant", "content": content, "stop_reason": null, "usage": {"input_tokens": 1, "output_tokens": 1}})
        };
        line(
            "user",
            user(format!("Fix the build of {project} please")),
            serde_json::json!({}),
        );
        line(
            "assistant",
            said(
                serde_json::json!([{"type": "tool_use", "id": format!("toolu_{i}a"), "name": "Bash", "input": {"command": "cargo build"}}]),
            ),
            serde_json::json!({}),
        );
        let failed = i % 3 == 0;
        line(
            "user",
            serde_json::json!({"role": "user", "content": [{"tool_use_id": format!("toolu_{i}a"), "type": "tool_result", "content": if failed { "error: could not compile" } else { "Finished" }, "is_error": failed}]}),
            serde_json::json!({}),
        );
        line(
            "assistant",
            said(serde_json::json!([{"type": "text", "text": "Built."}])),
            serde_json::json!({}),
        );
        line(
            "user",
            user(format!("Now look for needle{i} in the sources")),
            serde_json::json!({}),
        );
        if i % 5 == 0 {
            line(
                "assistant",
                said(
                    serde_json::json!([{"type": "tool_use", "id": format!("toolu_{i}b"), "name": "Read", "input": {"file_path": "/work/src/lib.rs"}}]),
                ),
                serde_json::json!({}),
            );
        }
        line(
            "assistant",
            said(
                serde_json::json!([{"type": "text", "text": format!("Found needle{i} in one place.")}]),
            ),
            serde_json::json!({}),
        );
        std::fs::write(dir.join(format!("{sid}.jsonl")), lines.join("\n") + "\n")?;
    }
    Ok(())
}

fn rand_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// Renders the generated home's sessions into `out` with `render --all`.
fn render_all(home: &Path, out: &Path) -> anyhow::Result<std::time::Duration> {
    let start = std::time::Instant::now();
    tracebook()
        .env("HOME", home)
        .args(["render", "--all", "-q", "-o"])
        .arg(out)
        .assert()
        .success();
    Ok(start.elapsed())
}

#[test]
fn index_lists_every_session_with_its_summary_readable_without_javascript() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    generate(home.path(), 30)?;
    let out = home.path().join("out");
    render_all(home.path(), &out)?;
    let html = std::fs::read_to_string(out.join("index.html"))?;
    // Every session a row of the table, whatever the script does.
    assert_eq!(html.matches("<tr data-harness=\"claude-code\"").count(), 30);
    // Failed calls: 10 Bash errors (every third session); unknown: 6 Reads (every fifth).
    assert!(
        html.contains(
            "<td>Bash</td><td>claude-code</td><td class=\"n\">10</td><td class=\"n\">0</td>"
        ),
        "by tool"
    );
    assert!(
        html.contains(
            "<td>Read</td><td>claude-code</td><td class=\"n\">0</td><td class=\"n\">6</td>"
        ),
        "by tool"
    );
    assert!(html.contains("<svg class=\"tools-chart\""));
    assert!(html.contains("<svg class=\"days-chart\""));
    assert!(html.contains("<title>Bash: 10 error, 0 unknown</title>"));
    assert_eq!(html.matches("data-status=\"error\"").count(), 10);
    assert!(html.contains("<template id=\"search-data\" data-encoding=\"zstd+base64\">"));
    // A second run reuses the notebooks and still knows every session's turns.
    render_all(home.path(), &out)?;
    assert_eq!(std::fs::read_to_string(out.join("index.html"))?, html);
    Ok(())
}

/// The search and filters in real Chromium over 1,000 sessions; prints the index's size and
/// the time it takes to open and to answer a search.
#[test]
fn index_search_finds_the_turn_in_chromium_over_a_thousand_sessions() -> anyhow::Result<()> {
    if std::env::var_os("CI").is_none() {
        eprintln!("CI is not set: the 1,000-session index test is skipped");
        return Ok(());
    }
    let Some(chrome) = crate::browser::chromium() else {
        return Ok(());
    };
    let home = tempfile::tempdir()?;
    generate(home.path(), 1000)?;
    let out = home.path().join("out");
    let took = render_all(home.path(), &out)?;
    let index = out.join("index.html");
    let size = std::fs::metadata(&index)?.len();
    let tab = chrome.browser.new_tab()?;
    let start = std::time::Instant::now();
    tab.navigate_to(&crate::browser::file_url(&index))?
        .wait_until_navigated()?;
    let opened = start.elapsed();
    let eval = |expr: &str| -> anyhow::Result<serde_json::Value> {
        let v = tab
            .evaluate(&format!("JSON.stringify(({expr}) ?? null)"), false)?
            .value
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "null".to_owned());
        Ok(serde_json::from_str(&v)?)
    };
    assert_eq!(
        eval("document.querySelectorAll('#sessions tbody tr').length")?,
        1000
    );
    // The page's own measure: from the start of navigation to the end of its load event.
    let load_ms = eval("Math.round(performance.getEntriesByType('navigation')[0].loadEventEnd)")?;
    let start = std::time::Instant::now();
    let found = eval(
        "(() => { const q = document.getElementById('q'); q.value = 'needle737'; \
         q.dispatchEvent(new Event('input')); \
         return [...document.querySelectorAll('#results a')].map(a => a.getAttribute('href')); })()",
    )?;
    let searched = start.elapsed();
    if let Ok(png) = tab.capture_screenshot(
        headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption::Png,
        None,
        None,
        true,
    ) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-artifacts");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("index-search.png"), png)?;
    }
    let hrefs = found.as_array().cloned().unwrap_or_default();
    assert_eq!(hrefs.len(), 1, "{found}");
    let href = hrefs[0].as_str().unwrap_or_default().to_owned();
    assert!(href.ends_with("#t2"), "{href}");
    let notebook = std::fs::read_to_string(out.join(href.trim_end_matches("#t2")))?;
    assert!(notebook.contains("needle737"));
    assert!(notebook.contains("id=\"t2\""));
    // A word every session has finds one turn of each, the first 200 listed.
    let many = eval(
        "(() => { const q = document.getElementById('q'); q.value = 'fix build'; \
         q.dispatchEvent(new Event('input')); \
         return [document.querySelectorAll('#results li').length, document.getElementById('q-count').textContent]; })()",
    )?;
    assert_eq!(many[0], 200, "{many}");
    assert!(
        many[1]
            .as_str()
            .unwrap_or_default()
            .starts_with("1000 turns"),
        "{many}"
    );
    // Filters: harness and status and project together.
    let shown = eval(
        "(() => { const s = document.getElementById('f-status'); s.value = 'error'; \
         s.dispatchEvent(new Event('change')); const p = document.getElementById('f-project'); \
         p.value = 'proj0'; p.dispatchEvent(new Event('change')); \
         return [...document.querySelectorAll('#sessions tbody tr')].filter(r => !r.hidden).length; })()",
    )?;
    // Sessions i with i % 3 == 0 and i % 7 == 0: i a multiple of 21 below 1,000.
    assert_eq!(shown, 48);
    eprintln!(
        "index of 1,000 sessions: {size} bytes; render --all {:.1} s; loaded in {load_ms} ms ({} ms to navigate); a search answered in {} ms",
        took.as_secs_f64(),
        opened.as_millis(),
        searched.as_millis()
    );
    Ok(())
}

//! Real headless Chromium for browser tests.
//!
//! [`chromium`] finds the browser (`$TRACEBOOK_CHROMIUM`, else `chromium`, `chromium-browser`
//! or `google-chrome` on `PATH`) and starts it with a fresh profile and no background
//! networking. Without a browser the tests say so and pass, except when `CI` is set: then a
//! missing browser fails them. Nothing here downloads a browser.

use crate::sample;
use headless_chrome::{Browser, LaunchOptions};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRACEBOOK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// A started browser with its own profile folder, or `None` (with a note) when there is no
/// browser and `CI` is not set.
pub(crate) struct Chromium {
    pub(crate) browser: Browser,
    _profile: tempfile::TempDir,
}

pub(crate) fn chromium() -> Option<Chromium> {
    let Some(path) = find_chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and no Chromium was found (install Debian's `chromium`, or set TRACEBOOK_CHROMIUM)"
        );
        eprintln!("no Chromium found: browser tests skipped (install `chromium` to run them)");
        return None;
    };
    let profile = tempfile::tempdir().expect("temporary profile folder");
    let args: Vec<&OsStr> = [
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
        "--hide-scrollbars",
    ]
    .iter()
    .map(OsStr::new)
    .collect();
    let options = LaunchOptions::default_builder()
        .path(Some(path))
        .headless(true)
        .sandbox(false)
        .user_data_dir(Some(profile.path().to_owned()))
        .window_size(Some((1280, 900)))
        .args(args)
        .idle_browser_timeout(std::time::Duration::from_secs(120))
        .build()
        .expect("launch options");
    let browser = Browser::new(options).expect("Chromium starts");
    Some(Chromium {
        browser,
        _profile: profile,
    })
}

/// A `file://` URL for a local path.
pub(crate) fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Where screenshots and other browser artifacts go: `target/browser-artifacts/`.
fn artifacts() -> anyhow::Result<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/browser-artifacts");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// A corpus session with failed calls, when `TRACEBOOK_CORPUS` is set.
fn corpus_session() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("TRACEBOOK_CORPUS")?);
    let path = dir.join("claude-code/entireio-cli__ckpt-4902a08f9b18-0-full.jsonl");
    path.is_file().then_some(path)
}

/// A notebook opened in its own browser at a given viewport size.
struct Opened {
    tab: std::sync::Arc<headless_chrome::Tab>,
    path: PathBuf,
    _dir: tempfile::TempDir,
    _chrome: Chromium,
}

impl Opened {
    /// Evaluates `expr` in the page; objects and arrays come back through JSON.
    fn eval(&self, expr: &str) -> anyhow::Result<serde_json::Value> {
        let json = self
            .tab
            .evaluate(&format!("JSON.stringify(({expr}) ?? null)"), false)?
            .value
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "null".to_owned());
        Ok(serde_json::from_str(&json)?)
    }

    /// [`Opened::eval`] for an expression that gives a promise: its value once settled.
    fn eval_async(&self, expr: &str) -> anyhow::Result<serde_json::Value> {
        let json = self
            .tab
            .evaluate(
                &format!("(async () => JSON.stringify((await ({expr})) ?? null))()"),
                true,
            )?
            .value
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "null".to_owned());
        Ok(serde_json::from_str(&json)?)
    }

    fn eval_str(&self, expr: &str) -> anyhow::Result<String> {
        let v = self.eval(expr)?;
        Ok(v.as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| v.to_string()))
    }

    fn screenshot(&self, name: &str) -> anyhow::Result<PathBuf> {
        let png = self.tab.capture_screenshot(
            headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption::Png,
            None,
            None,
            true,
        )?;
        let path = artifacts()?.join(name);
        std::fs::write(&path, png)?;
        Ok(path)
    }
}

/// Renders `html` to a file and opens it at `width`×`height`, optionally with scripts off.
fn open(
    html: &str,
    fragment: &str,
    width: u32,
    height: u32,
    js: bool,
) -> anyhow::Result<Option<Opened>> {
    let Some(chrome) = chromium() else {
        return Ok(None);
    };
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("notebook.html");
    std::fs::write(&path, html)?;
    let tab = chrome.browser.new_tab()?;
    let metrics: headless_chrome::protocol::cdp::Emulation::SetDeviceMetricsOverride =
        serde_json::from_value(serde_json::json!({
            "width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600
        }))?;
    tab.call_method(metrics)?;
    if !js {
        tab.call_method(
            headless_chrome::protocol::cdp::Emulation::SetScriptExecutionDisabled { value: true },
        )?;
    }
    tab.navigate_to(&format!("{}{fragment}", file_url(&path)))?
        .wait_until_navigated()?;
    Ok(Some(Opened {
        tab,
        path,
        _dir: dir,
        _chrome: chrome,
    }))
}

fn render(path: &Path) -> anyhow::Result<String> {
    Ok(tracebook::render::html(&crate::report(path)?)?)
}

/// True when the page does not scroll sideways.
const NO_SIDEWAYS_SCROLL: &str = "document.documentElement.scrollWidth <= window.innerWidth && document.body.scrollWidth <= window.innerWidth";

#[test]
fn a_deep_link_opens_its_folds_and_highlights_the_target() -> anyhow::Result<()> {
    let Some(page) = open(&render(&sample())?, "#t2-s3", 1280, 900, true)? else {
        return Ok(());
    };
    let state = page.eval_str(
        "(() => { const el = document.getElementById('t2-s3');
           return [el.closest('details.process').open, el.classList.contains('targeted'),
                   el.querySelector('details').open].join(','); })()",
    )?;
    assert_eq!(state, "true,true,true");
    // The same link works after the file is renamed: links carry only the anchor.
    let renamed = page.path.with_file_name("renamed copy.html");
    std::fs::copy(&page.path, &renamed)?;
    page.tab
        .navigate_to(&format!("file://{}#t2-s3", renamed.display()).replace(' ', "%20"))?
        .wait_until_navigated()?;
    assert_eq!(
        page.eval_str("document.getElementById('t2-s3').classList.contains('targeted')")?,
        "true"
    );
    Ok(())
}

#[test]
fn assistant_markdown_is_sanitized_in_the_page() -> anyhow::Result<()> {
    let fixture = crate::fixtures().join("claude-code/tool-after-message/session.jsonl");
    let text = std::fs::read_to_string(fixture)?;
    let mut lines = text.lines();
    let user = lines.next().unwrap_or_default();
    let mut assistant: serde_json::Value = serde_json::from_str(lines.next().unwrap_or_default())?;
    assistant["message"]["content"][0]["text"] = serde_json::Value::from(
        "**bold** <script>window.pwned = 1</script> <img src=x onerror=\"window.pwned = 2\"> \
         [click](javascript:window.pwned=3) <a href=\"#\" onclick=\"window.pwned=4\">a</a>",
    );
    let dir = tempfile::tempdir()?;
    let session = dir.path().join("session.jsonl");
    std::fs::write(&session, format!("{user}\n{assistant}\n"))?;
    let Some(page) = open(&render(&session)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    let state = page.eval(
        "(() => { const md = [...document.querySelectorAll('#notebook .md')];
           const html = md.map(e => e.innerHTML).join('');
           return { pwned: window.pwned === undefined ? null : window.pwned,
                    bold: md.some(e => e.querySelector('strong')),
                    img: document.querySelectorAll('#notebook img').length,
                    scriptText: html.includes('&lt;script&gt;'),
                    js: [...document.querySelectorAll('#notebook a')].some(a => /^javascript:/i.test(a.getAttribute('href') || '')),
                    handlers: [...document.querySelectorAll('#notebook *')].some(e => [...e.attributes].some(a => a.name.startsWith('on'))) }; })()",
    )?;
    assert_eq!(state["pwned"], serde_json::Value::Null, "{state}");
    assert_eq!(state["bold"], true, "{state}");
    assert_eq!(state["img"], 0, "{state}");
    assert_eq!(state["scriptText"], true, "{state}");
    assert_eq!(state["js"], false, "{state}");
    assert_eq!(state["handlers"], false, "{state}");
    Ok(())
}

#[test]
fn steps_and_adjacent_tool_runs_keep_source_order() -> anyhow::Result<()> {
    let fixture = crate::fixtures().join("claude-code/ordered-steps/session.jsonl");
    let report = crate::report(&fixture)?;
    let Some(page) = open(&tracebook::render::html(&report)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    for turn in &report.turns {
        let expected: Vec<&str> = turn.steps.iter().map(|s| s.id()).collect();
        let shown = page.eval(&format!(
            "[...document.querySelectorAll('#{} > .process > .steps > li')].flatMap(li =>
               li.classList.contains('tool-group')
                 ? [...li.querySelectorAll(':scope > details > .steps > li')].map(c => c.id)
                 : [li.id])",
            turn.id
        ))?;
        let shown: Vec<String> = serde_json::from_value(shown)?;
        assert_eq!(shown, expected, "turn {}", turn.id);
        // A group holds only tool calls that were adjacent in the log.
        let groups: Vec<Vec<String>> = serde_json::from_value(page.eval(&format!(
            "[...document.querySelectorAll('#{} .tool-group')].map(g =>
               [...g.querySelectorAll(':scope > details > .steps > li')].map(c => c.id))",
            turn.id
        ))?)?;
        for group in groups {
            let at: Vec<usize> = group
                .iter()
                .filter_map(|id| expected.iter().position(|e| *e == id.as_str()))
                .collect();
            assert_eq!(at.len(), group.len());
            assert!(at.windows(2).all(|w| w[1] == w[0] + 1), "{group:?}");
        }
    }
    Ok(())
}

#[test]
fn outcome_copy_says_only_what_the_log_retained() -> anyhow::Result<()> {
    let fixture = crate::fixtures().join("claude-code/outcome-evidence/session.jsonl");
    let report = crate::report(&fixture)?;
    let Some(page) = open(&tracebook::render::html(&report)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    for turn in &report.turns {
        let o = &turn.outcome;
        let shown = page.eval(&format!(
            "(() => {{ const t = document.getElementById('{}'); const o = t.querySelector(':scope > .outcome');
               return {{ outcome: o ? o.textContent : null,
                        verifications: o ? [...o.querySelectorAll('ul.verifications .status')].map(s => s.textContent) : [],
                        noResponse: !!t.querySelector(':scope > .no-response') }}; }})()",
            turn.id
        ))?;
        let has = !o.edits.is_empty() || !o.verifications.is_empty() || !o.commits.is_empty();
        assert_eq!(shown["outcome"].is_string(), has, "{}", turn.id);
        if let Some(text) = shown["outcome"].as_str() {
            assert!(text.contains("as retained in the log"), "{text}");
            for e in &o.edits {
                assert!(text.contains(&e.path), "{text}");
                if e.patch_unavailable() {
                    assert!(text.contains("patch unavailable"), "{text}");
                }
            }
        }
        let statuses: Vec<&str> = o.verifications.iter().map(|v| v.status.as_str()).collect();
        assert_eq!(
            shown["verifications"],
            serde_json::json!(statuses),
            "{}",
            turn.id
        );
        assert_eq!(shown["noResponse"], turn.response.is_none(), "{}", turn.id);
    }
    Ok(())
}

#[test]
fn search_counts_matches_and_opens_the_fold_that_holds_one() -> anyhow::Result<()> {
    let report = crate::report(&sample())?;
    // A word that only appears in tool output, inside closed folds.
    let Some(page) = open(&tracebook::render::html(&report)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    let term = "coupon";
    let expected: usize = page
        .eval(&format!(
            "document.getElementById('notebook').textContent.toLowerCase().split('{term}').length - 1"
        ))?
        .as_u64()
        .unwrap_or(0) as usize;
    assert!(expected > 1);
    let state = page.eval(&format!(
        "(() => {{ const q = document.getElementById('q'); q.value = '{term}';
           q.dispatchEvent(new KeyboardEvent('keydown', {{ key: 'Enter', bubbles: true }}));
           const first = document.getElementById('q-count').textContent;
           document.getElementById('q-next').click();
           const second = document.getElementById('q-count').textContent;
           const cur = document.querySelector('mark.hit.current');
           let open = true; for (let p = cur; p; p = p.parentElement) if (p.tagName === 'DETAILS' && !p.open) open = false;
           document.getElementById('q-prev').click();
           document.getElementById('q-prev').click();
           return {{ first, second, last: document.getElementById('q-count').textContent, open,
                    marks: document.querySelectorAll('mark.hit').length }}; }})()"
    ))?;
    assert_eq!(state["marks"], expected, "{state}");
    assert_eq!(state["first"], format!("1 of {expected}"), "{state}");
    assert_eq!(state["second"], format!("2 of {expected}"), "{state}");
    assert_eq!(
        state["last"],
        format!("{expected} of {expected}"),
        "{state}"
    );
    assert_eq!(state["open"], true, "{state}");
    Ok(())
}

#[test]
fn highlighted_code_shows_coloured_tokens_and_search_matches_across_them() -> anyhow::Result<()> {
    // The sample reads `src/cart.py`: the page colours its output as Python, the `→` gutter
    // Claude Code writes before each line left plain, a few blocks per task after load.
    let Some(page) = open(&render(&sample())?, "", 1280, 900, true)? else {
        return Ok(());
    };
    let coloured = page.eval_async(
        "new Promise(done => { const t0 = performance.now(); (function wait() {
           if (document.querySelector('#notebook pre.output .hk') || performance.now() - t0 > 5000) done(true);
           else setTimeout(wait, 20); })(); })",
    )?;
    assert_eq!(coloured, true);
    let state = page.eval(
        "(() => { const k = document.querySelector('#notebook pre.output .hk');
           const gutter = k && [...k.closest('pre').querySelectorAll('span')].some(s => /\\d/.test(s.textContent) && !/[a-z]/.test(s.textContent));
           const pre = k && k.closest('pre');
           return { keyword: k ? k.textContent.trim() : null,
                    colour: k ? getComputedStyle(k).color : null,
                    plain: pre ? getComputedStyle(pre).color : null,
                    text: pre ? pre.textContent : null, gutter }; })()",
    )?;
    assert_eq!(state["keyword"], "def", "{state}");
    assert_eq!(state["gutter"], false, "a line number is coloured: {state}");
    assert_ne!(state["colour"], state["plain"], "{state}");
    // Highlighting wraps the text without changing it.
    assert_eq!(
        state["text"], "     1→def total(items, coupon):\n     2→    return sum(items) - coupon\n",
        "{state}"
    );
    // A term that runs across several tokens is still found, as one hit.
    let term = "total(items, coupon)";
    let found = page.eval(&format!(
        "(() => {{ const q = document.getElementById('q'); q.value = '{term}';
           q.dispatchEvent(new KeyboardEvent('keydown', {{ key: 'Enter', bubbles: true }}));
           const pre = document.querySelector('#notebook pre.output .hk').closest('pre');
           const marks = [...pre.querySelectorAll('mark.hit')];
           return {{ count: document.getElementById('q-count').textContent,
                    marks: marks.length, joined: marks.map(m => m.textContent).join('') }}; }})()"
    ))?;
    assert!(found["marks"].as_u64().unwrap_or(0) >= 2, "{found}");
    assert_eq!(found["joined"], term, "{found}");
    assert!(
        found["count"].as_str().unwrap_or("").starts_with("1 of "),
        "{found}"
    );
    Ok(())
}

#[test]
fn filters_show_only_matching_steps_and_the_conversation_view() -> anyhow::Result<()> {
    let report = crate::report(&sample())?;
    assert!(report.summary.error > 0, "the sample has a failed call");
    let Some(page) = open(&tracebook::render::html(&report)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    let visible_tools = "[...document.querySelectorAll('#notebook .step.tool')].filter(e => e.offsetParent !== null).map(e => e.dataset.status)";
    page.eval(
        "(() => { const s = document.getElementById('f-status'); s.value = 'error';
           s.dispatchEvent(new Event('change')); })()",
    )?;
    let shown: Vec<String> = serde_json::from_value(page.eval(visible_tools)?)?;
    assert_eq!(shown.len(), report.summary.error, "{shown:?}");
    assert!(shown.iter().all(|s| s == "error"), "{shown:?}");
    let turns_shown = page.eval(
        "[...document.querySelectorAll('#notebook > .turn')].filter(e => e.offsetParent !== null).length",
    )?;
    let with_errors = report
        .turns
        .iter()
        .filter(|t| {
            t.steps.iter().any(|s| {
                matches!(s, tracebook::report::model::StepView::ToolCall(c)
                    if c.status == tracebook::events::ToolStatus::Error)
            })
        })
        .count();
    assert_eq!(turns_shown, with_errors);
    // Step kind: only shell calls.
    page.eval(
        "(() => { const s = document.getElementById('f-status'); s.value = '';
           s.dispatchEvent(new Event('change'));
           const k = document.getElementById('f-kind'); k.value = 'shell';
           k.dispatchEvent(new Event('change')); })()",
    )?;
    let kinds: Vec<String> = serde_json::from_value(page.eval(
        "[...document.querySelectorAll('#notebook .step')].filter(e => e.offsetParent !== null).map(e => e.dataset.kind)",
    )?)?;
    assert!(
        !kinds.is_empty() && kinds.iter().all(|k| k == "shell"),
        "{kinds:?}"
    );
    // Conversation only: prompts and responses stay, process and outcome go.
    let conv = page.eval(
        "(() => { const k = document.getElementById('f-kind'); k.value = '';
           k.dispatchEvent(new Event('change'));
           const v = document.getElementById('f-view'); v.value = 'conversation';
           v.dispatchEvent(new Event('change'));
           const vis = sel => [...document.querySelectorAll(sel)].filter(e => e.offsetParent !== null).length;
           return [vis('#notebook .process'), vis('#notebook .outcome'), vis('#notebook .response') > 0, vis('#notebook .prompt') > 0]; })()",
    )?;
    assert_eq!(conv, serde_json::json!([0, 0, true, true]));
    Ok(())
}

#[test]
fn the_conversation_view_chosen_at_render_time_leaves_the_process_out_of_the_file()
-> anyhow::Result<()> {
    let report = crate::report(&sample())?;
    let html = tracebook::render::html_with(&report, tracebook::render::View::Conversation)?;
    let first_call = report
        .turns
        .iter()
        .flat_map(|t| &t.steps)
        .find_map(|s| match s {
            tracebook::report::model::StepView::ToolCall(c) => c.command.clone(),
            _ => None,
        })
        .unwrap_or_default();
    assert!(!first_call.is_empty());
    assert!(
        !html.contains(&first_call),
        "a command is still in the file"
    );
    assert!(!html.contains("class=\"process\""));
    let Some(page) = open(&html, "", 1280, 900, true)? else {
        return Ok(());
    };
    let prompts = page.eval("document.querySelectorAll('#notebook .prompt').length")?;
    assert_eq!(
        prompts,
        report.turns.iter().filter(|t| t.prompt.is_some()).count()
    );
    Ok(())
}

#[test]
fn the_theme_follows_the_system_and_switches_by_hand() -> anyhow::Result<()> {
    let Some(page) = open(&render(&sample())?, "", 1280, 900, true)? else {
        return Ok(());
    };
    let bg = "getComputedStyle(document.body).backgroundColor";
    let media = |scheme: &str| -> anyhow::Result<()> {
        let m: headless_chrome::protocol::cdp::Emulation::SetEmulatedMedia =
            serde_json::from_value(serde_json::json!({
                "features": [{ "name": "prefers-color-scheme", "value": scheme }]
            }))?;
        page.tab.call_method(m)?;
        Ok(())
    };
    media("light")?;
    let light = page.eval_str(bg)?;
    media("dark")?;
    let dark = page.eval_str(bg)?;
    assert_ne!(light, dark, "the page follows the system scheme");
    // Manual switch: auto → light → dark → auto, whatever the system says.
    page.eval("document.getElementById('theme').click()")?;
    assert_eq!(
        page.eval_str("document.documentElement.dataset.theme")?,
        "light"
    );
    assert_eq!(page.eval_str(bg)?, light);
    page.eval("document.getElementById('theme').click()")?;
    assert_eq!(
        page.eval_str("document.documentElement.dataset.theme")?,
        "dark"
    );
    media("light")?;
    assert_eq!(page.eval_str(bg)?, dark);
    page.eval("document.getElementById('theme').click()")?;
    assert_eq!(page.eval_str(bg)?, light);
    Ok(())
}

#[test]
fn j_and_k_move_between_turns() -> anyhow::Result<()> {
    let report = crate::report(&sample())?;
    assert!(report.turns.len() >= 2);
    let Some(page) = open(&tracebook::render::html(&report)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    page.tab.press_key("j")?;
    assert_eq!(page.eval_str("location.hash")?, "#t1");
    page.tab.press_key("j")?;
    assert_eq!(page.eval_str("location.hash")?, "#t2");
    page.tab.press_key("k")?;
    assert_eq!(page.eval_str("location.hash")?, "#t1");
    assert!(
        page.eval_str("document.body.textContent")?
            .contains("next / previous turn")
    );
    Ok(())
}

/// Desktop and narrow layouts of a real session: no sideways scroll, the turn list beside the
/// notebook on desktop and above it (folded) on a phone. Screenshots go to target/.
#[test]
fn desktop_and_narrow_layouts_do_not_scroll_sideways() -> anyhow::Result<()> {
    let (path, name) = match corpus_session() {
        Some(p) => (p, "corpus"),
        None => (sample(), "sample"),
    };
    let html = render(&path)?;
    for (width, height, label) in [(1280, 1000, "desktop"), (390, 844, "narrow")] {
        let Some(page) = open(&html, "", width, height, true)? else {
            return Ok(());
        };
        assert_eq!(page.eval(NO_SIDEWAYS_SCROLL)?, true, "{label}");
        let beside = page.eval(
            "document.querySelector('.toc').getBoundingClientRect().right <= document.getElementById('notebook').getBoundingClientRect().left",
        )?;
        assert_eq!(beside, width > 800, "{label}");
        let toc_open = page.eval("document.querySelector('.toc > details').open")?;
        assert_eq!(toc_open, width > 800, "{label}");
        // Open everything: long commands and outputs still wrap inside the page.
        page.eval("document.querySelectorAll('details').forEach(d => d.open = true)")?;
        assert_eq!(page.eval(NO_SIDEWAYS_SCROLL)?, true, "{label}, all open");
        page.eval(
            "document.querySelectorAll('details').forEach(d => d.open = false); scrollTo(0, 0)",
        )?;
        page.screenshot(&format!("{name}-{label}.png"))?;
    }
    Ok(())
}

#[test]
fn the_page_reads_with_javascript_off() -> anyhow::Result<()> {
    let report = crate::report(&sample())?;
    let Some(page) = open(&tracebook::render::html(&report)?, "", 390, 844, false)? else {
        return Ok(());
    };
    let state = page.eval(
        "({ js: document.documentElement.classList.contains('js'),
            toolbar: getComputedStyle(document.querySelector('.toolbar')).display,
            copy: [...document.querySelectorAll('button.copy')].filter(b => b.offsetParent !== null).length,
            turns: document.querySelectorAll('#notebook > .turn').length,
            marks: document.querySelectorAll('svg.strip a[href^=\"#t\"]').length,
            time: document.querySelector('time').textContent })",
    )?;
    assert_eq!(state["js"], false, "{state}");
    assert_eq!(state["toolbar"], "none", "{state}");
    assert_eq!(state["copy"], 0, "{state}");
    assert_eq!(state["turns"], report.turns.len(), "{state}");
    assert_eq!(state["marks"], report.turns.len(), "{state}");
    // Times read as written, in UTC, named.
    let time = state["time"].as_str().unwrap_or_default();
    let iso = regex::Regex::new(r"\dT\d")?;
    assert!(time.ends_with(" UTC") && !iso.is_match(time), "{state}");
    assert_eq!(page.eval(NO_SIDEWAYS_SCROLL)?, true);
    // Folds still open by hand, and an anchor still jumps.
    page.eval("document.querySelector('.process').open = true")?;
    assert_eq!(page.eval(NO_SIDEWAYS_SCROLL)?, true);
    Ok(())
}

/// The README's screenshots (copied to assets/screenshot.png and assets/screenshot-narrow.png):
/// the sample notebook as a reader first sees it, and on a phone read inside a turn, its
/// heading held under the toolbar and its calls one line each.
#[test]
fn screenshot_of_the_sample_for_the_readme() -> anyhow::Result<()> {
    let html = render(&sample())?;
    let Some(page) = open(&html, "", 1100, 760, true)? else {
        return Ok(());
    };
    page.eval("(() => { document.querySelector('#t1 .process').open = true; scrollTo(0, 0); })()")?;
    page.screenshot("sample-notebook.png")?;
    let Some(page) = open(&html, "", 390, 844, true)? else {
        return Ok(());
    };
    page.eval(
        "(() => { document.querySelectorAll('#t2 details.process, #t2 .tool-group > details').forEach(d => d.open = true);
           document.getElementById('t2-p').scrollIntoView({ block: 'start' }); scrollBy(0, 60); })()",
    )?;
    page.screenshot("sample-narrow.png")?;
    Ok(())
}

/// Evaluates `expr` until it is true (stored steps are decoded asynchronously).
fn wait_until(page: &Opened, expr: &str) -> anyhow::Result<()> {
    for _ in 0..100 {
        if page.eval(expr)? == true {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    anyhow::bail!("never true in the page: {expr}")
}

/// A page whose every turn is stored compressed past the first, as past the inline budget of
/// a large session: scrolling, links, search and filters open what they need, and with
/// JavaScript off the page says where the turns are.
#[test]
fn stored_turns_open_for_scrolling_links_search_and_filters() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let report = crate::report(&sample())?;
    let budget = Storage::Budget {
        inline: 0,
        block: 0,
    };
    let stored = render::notebook(
        report.clone(),
        budget,
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    let inline = render::notebook(
        report.clone(),
        Storage::Inline,
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    assert!(stored.contains("class=\"stored\""));
    assert!(!inline.contains("class=\"stored\""));
    for id in ["t2-p", "t2-s3", "t1-s1"] {
        assert!(
            !stored.contains(&format!("id=\"{id}\"")),
            "{id} is not in the page as HTML"
        );
    }

    // A deep link into a stored turn decodes it (and its steps), opens its folds and
    // highlights the target.
    let Some(page) = open(&stored, "#t2-s3", 1280, 400, true)? else {
        return Ok(());
    };
    wait_until(&page, "!!document.querySelector('#t2-s3.targeted')")?;
    let state = page.eval(
        "({ process: document.getElementById('t2-s3').closest('details.process').open,
            blocks: document.querySelectorAll('template.stored').length })",
    )?;
    assert_eq!(state["process"], true, "{state}");
    assert_eq!(
        state["blocks"], 0,
        "data blocks leave the document once read: {state}"
    );

    // A stub near the viewport is decoded into its turn with nothing clicked.
    page.eval("document.querySelector('[data-turns~=\"t4\"]')?.scrollIntoView()")?;
    wait_until(&page, "!!document.getElementById('t4-p')")?;

    // Search finds text inside turns still stored, with the same count as the inline page.
    let Some(whole) = open(&inline, "", 1280, 900, true)? else {
        return Ok(());
    };
    let count_of = |page: &Opened| -> anyhow::Result<String> {
        page.eval(
            "(() => { const q = document.getElementById('q'); q.value = 'coupon';
               q.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })); })()",
        )?;
        wait_until(
            page,
            "/^\\d+ of \\d+$/.test(document.getElementById('q-count').textContent)",
        )?;
        page.eval_str("document.getElementById('q-count').textContent")
    };
    let expected = count_of(&whole)?;
    let Some(page) = open(&stored, "", 1280, 900, true)? else {
        return Ok(());
    };
    assert_eq!(count_of(&page)?, expected);
    // Each Enter shows the next match, decoding the stored turn that holds it when it must, and
    // comes back round to the first.
    let total: usize = expected
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count");
    for n in 2..=total + 1 {
        page.eval(
            "document.getElementById('q').dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }))",
        )?;
        let want = format!("{} of {total}", (n - 1) % total + 1);
        wait_until(
            &page,
            &format!(
                "document.getElementById('q-count').textContent === '{want}' && !!document.querySelector('mark.hit.current')"
            ),
        )?;
    }

    // The error filter shows every failed call, stored or not.
    let Some(page) = open(&stored, "", 1280, 900, true)? else {
        return Ok(());
    };
    page.eval(
        "(() => { const s = document.getElementById('f-status'); s.value = 'error';
           s.dispatchEvent(new Event('change')); })()",
    )?;
    wait_until(
        &page,
        &format!(
            "[...document.querySelectorAll('#notebook .step.tool')].filter(e => e.offsetParent !== null).length === {}",
            report.summary.error
        ),
    )?;

    // Printing puts every stored block in place first, steps blocks included.
    let Some(page) = open(&stored, "", 1280, 900, true)? else {
        return Ok(());
    };
    assert_eq!(
        page.eval("document.querySelectorAll('ol.steps.lazy').length > 0")?,
        true
    );
    page.eval("window.dispatchEvent(new Event('beforeprint'))")?;
    let left = page.eval(
        "document.querySelectorAll('ol.steps.lazy, section.turn.stored').length
         + (document.getElementById('t2-s3') ? 0 : 100)",
    )?;
    assert_eq!(left, 0, "stored blocks left after beforeprint");

    // Opening a Process by hand decodes it.
    let Some(page) = open(&stored, "", 1280, 900, true)? else {
        return Ok(());
    };
    page.eval("document.querySelector('#t1 details.process').open = true")?;
    wait_until(&page, "!!document.querySelector('#t1 .step')")?;

    // With JavaScript off the page says where the turns are and how to have them inline.
    let Some(page) = open(&stored, "", 1280, 900, false)? else {
        return Ok(());
    };
    page.eval("document.querySelector('#t1 details.process').open = true")?;
    for at in ["#t1", "[data-turns~=\"t2\"]"] {
        let note = page.eval_str(&format!(
            "document.querySelector('{at} .lazy-note').textContent"
        ))?;
        assert!(note.contains("--inline"), "{at}: {note}");
    }
    Ok(())
}

/// A long session whose turns are stored: the turn list writes its first 50 entries as HTML
/// and stores the rest with the turns; scrolling the list to its end lists every turn, and
/// with JavaScript off the list says where the rest is.
#[test]
fn a_long_turn_list_lists_the_rest_when_scrolled_to_its_end() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let mut report = crate::report(&sample())?;
    let base = std::mem::take(&mut report.turns);
    let turns = 230;
    report.turns = (0..turns)
        .map(|i| {
            let mut turn = base[i % base.len()].clone();
            turn.number = i + 1;
            turn.id = format!("t{}", i + 1).into();
            turn
        })
        .collect();
    let entries = "document.querySelectorAll('.toc li a').length";
    let budget = Storage::Budget {
        inline: 0,
        block: 0,
    };
    let stored = render::notebook(
        report.clone(),
        budget,
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    let inline = render::notebook(
        report,
        Storage::Inline,
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    assert!(stored.contains("\">50. ") && !stored.contains("\">51. "));
    assert!(inline.contains("\">230. ") && !inline.contains("class=\"toc-stored\""));

    let Some(page) = open(&stored, "", 1280, 900, true)? else {
        return Ok(());
    };
    assert_eq!(page.eval(entries)?, 50);
    page.eval("document.querySelector('ol.toc-stored').scrollIntoView()")?;
    wait_until(
        &page,
        &format!("{entries} === {turns} && !document.querySelector('ol.toc-stored')"),
    )?;
    let last = page.eval_str("[...document.querySelectorAll('.toc li a')].pop().textContent")?;
    assert!(last.starts_with("230. "), "{last}");

    let Some(page) = open(&stored, "", 1280, 900, false)? else {
        return Ok(());
    };
    let note = page.eval_str("document.querySelector('ol.toc-stored').textContent")?;
    assert!(note.contains("Turns 51–230"), "{note}");
    Ok(())
}

/// The sample session's turns repeated to `turns` turns, numbered in order, the ids of their
/// parts (`t2-s3`) renumbered with them.
fn repeated(turns: usize) -> anyhow::Result<tracebook::report::model::Report> {
    fn renumber(v: &mut serde_json::Value, from: &str, to: &str) {
        match v {
            serde_json::Value::String(s) if s == from || s.starts_with(&format!("{from}-")) => {
                *s = format!("{to}{}", &s[from.len()..]);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| renumber(x, from, to)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| renumber(x, from, to)),
            _ => {}
        }
    }
    let mut report = crate::report(&sample())?;
    let base = std::mem::take(&mut report.turns);
    report.turns = (0..turns)
        .map(|i| {
            let turn = &base[i % base.len()];
            let mut value = serde_json::to_value(turn)?;
            renumber(&mut value, &turn.id, &format!("t{}", i + 1));
            let mut turn: tracebook::report::model::TurnView = serde_json::from_value(value)?;
            turn.number = i + 1;
            Ok(turn)
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(report)
}

/// A status filter over a page of stored turns counts every match, stored or not, as the
/// page written whole counts them, yet inserts only what is shown: the stubs that hold a match
/// stay stubs, saying how many they hold, until the reader scrolls to them.
#[test]
fn a_filter_on_stored_turns_counts_them_all_and_inserts_only_what_is_shown() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let report = repeated(120)?;
    let stored = render::notebook(
        report.clone(),
        Storage::Budget {
            inline: 0,
            block: 0,
        },
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    let inline = render::notebook(
        report.clone(),
        Storage::Inline,
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    let pick = "(() => { const s = document.getElementById('f-status'); s.value = 'error';
        s.dispatchEvent(new Event('change')); })()";
    let counted = "document.getElementById('f-count').textContent";
    let Some(whole) = open(&inline, "", 1280, 900, true)? else {
        return Ok(());
    };
    whole.eval(pick)?;
    wait_until(&whole, &format!("{counted} !== ''"))?;
    let expected = whole.eval_str(counted)?;
    let errors =
        whole.eval("document.querySelectorAll('#notebook .step[data-status=error]').length")?;
    assert!(
        expected.starts_with(&format!("{errors} failed calls in ")),
        "{expected}"
    );

    let Some(page) = open(&stored, "", 1280, 900, true)? else {
        return Ok(());
    };
    page.eval(pick)?;
    wait_until(&page, &format!("{counted} !== ''"))?;
    assert_eq!(page.eval_str(counted)?, expected);
    // The stubs far from the view are still stubs, each saying what it holds.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let state = page.eval(
        "({ stubs: document.querySelectorAll('section.turn.stored').length,
            shown: document.querySelectorAll('section.turn.stored.shown').length,
            note: document.querySelector('section.turn.stored.shown .stub-count')?.textContent,
            hidden: [...document.querySelectorAll('section.turn.stored:not(.shown)')].every(s => s.offsetParent === null) })",
    )?;
    let stubs = state["stubs"].as_u64().unwrap_or_default();
    assert!(stubs > 60, "most stored turns stay stored: {state}");
    assert!(state["shown"].as_u64().unwrap_or_default() > 10, "{state}");
    assert_eq!(state["hidden"], true, "{state}");
    let note = state["note"].as_str().unwrap_or_default();
    assert!(
        regex::Regex::new(r"^\d+ failed calls? in \d+ turns? stored here")?.is_match(note),
        "{state}"
    );
    // Scrolled to, the last of them shows its failed calls, open, and the count holds.
    let last = report
        .turns
        .iter()
        .rev()
        .find(|t| t.counts.error > 0)
        .map(|t| t.id.clone())
        .unwrap_or_default();
    page.eval(&format!(
        "document.getElementById('{last}').scrollIntoView()"
    ))?;
    wait_until(
        &page,
        &format!(
            "[...document.querySelectorAll('#{last} .step.tool.shown[data-status=error] > details')].some(d => d.open && d.offsetParent !== null)"
        ),
    )?;
    assert_eq!(page.eval_str(counted)?, expected);
    page.eval(pick)?;
    wait_until(&page, &format!("{counted} !== ''"))?;
    assert_eq!(page.eval_str(counted)?, expected);
    Ok(())
}

/// With JavaScript off, a link to a step inside a stored turn lands on that turn's line in
/// its stub (or on the placeholder of a turn's stored steps); with JavaScript on it lands on
/// the step itself, decoded.
#[test]
fn a_link_to_a_step_in_a_stored_turn_lands_with_javascript_off() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let report = repeated(230)?;
    let stored = render::notebook(
        report,
        Storage::Budget {
            inline: 0,
            block: tracebook::render::BLOCK_BYTES,
        },
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    let in_view = |page: &Opened, id: &str| -> anyhow::Result<serde_json::Value> {
        page.eval(&format!(
            "(() => {{ const el = document.getElementById('{id}'); if (!el) return 'absent';
               const line = el.closest('li'), r = line.getBoundingClientRect();
               return {{ top: r.top, bottom: r.bottom, height: innerHeight, y: scrollY,
                        stub: !!el.closest('section.turn.stored, ol.steps.lazy'), line: line.id || line.className }}; }})()"
        ))
    };
    for (id, line) in [("t198-s3", "t198"), ("t1-s2", "lazy-note")] {
        let Some(page) = open(&stored, &format!("#{id}"), 1280, 600, false)? else {
            return Ok(());
        };
        let got = in_view(&page, id)?;
        assert_eq!(got["stub"], true, "{id}: {got}");
        assert_eq!(got["line"], line, "{id}: {got}");
        let (top, bottom, height) = (
            got["top"].as_f64().unwrap_or(-1.0),
            got["bottom"].as_f64().unwrap_or(-1.0),
            got["height"].as_f64().unwrap_or(0.0),
        );
        assert!(
            top >= 0.0 && bottom <= height,
            "{id}'s line is in view: {got}"
        );
        if id == "t198-s3" {
            assert!(got["y"].as_f64().unwrap_or(0.0) > 0.0, "{got}");
        }
    }
    let Some(page) = open(&stored, "#t198-s3", 1280, 600, true)? else {
        return Ok(());
    };
    wait_until(&page, "!!document.querySelector('#t198-s3.step.targeted')")?;
    assert_eq!(
        page.eval("!document.getElementById('t198-s3').closest('section.turn.stored')")?,
        true
    );
    Ok(())
}

/// A link to a turn or a step the notebook does not hold says so near the top, for screen
/// readers too, and can be dismissed; a link that lands says nothing.
#[test]
fn a_link_to_what_the_notebook_does_not_hold_shows_a_notice() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let report = crate::report(&sample())?;
    let turns = report.turns.len();
    let inline = tracebook::render::html(&report)?;
    let stored = render::notebook(
        report,
        Storage::Budget {
            inline: 0,
            block: 0,
        },
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    let notice = "(() => { const n = document.querySelector('.link-notice');
        return n && !n.hidden && n.offsetParent !== null && n.textContent.trim() ? n.querySelector('span').textContent : ''; })()";
    for (html, link, says) in [
        (
            &inline,
            "#t9999",
            format!("This notebook has no turn 9999 (it keeps turns 1–{turns})."),
        ),
        (
            &inline,
            "#t2-s400",
            "This notebook has no step 400 in turn 2.".to_owned(),
        ),
        (
            &stored,
            "#t2-s400",
            "This notebook has no step 400 in turn 2.".to_owned(),
        ),
        (
            &stored,
            "#t9999",
            format!("This notebook has no turn 9999 (it keeps turns 1–{turns})."),
        ),
    ] {
        let Some(page) = open(html, link, 1280, 900, true)? else {
            return Ok(());
        };
        wait_until(&page, &format!("{notice} !== ''"))?;
        assert_eq!(page.eval_str(notice)?, says, "{link}");
        let state = page.eval(
            "(() => { const n = document.querySelector('.link-notice'), r = n.getBoundingClientRect();
               return { role: n.getAttribute('role'), top: r.top, bottom: r.bottom, height: innerHeight }; })()",
        )?;
        assert_eq!(state["role"], "status", "{state}");
        assert!(
            state["top"].as_f64().unwrap_or(-1.0) >= 0.0
                && state["bottom"].as_f64().unwrap_or(1e9)
                    <= state["height"].as_f64().unwrap_or(0.0),
            "{link}: {state}"
        );
        page.eval("document.querySelector('.link-notice button').click()")?;
        assert_eq!(page.eval_str(notice)?, "", "{link}: dismissed");
    }
    // Links that land, plain or stored, say nothing.
    for (html, link) in [(&inline, "#t2-s3"), (&stored, "#t2-s3"), (&stored, "#t3")] {
        let Some(page) = open(html, link, 1280, 900, true)? else {
            return Ok(());
        };
        wait_until(
            &page,
            &format!("!!document.querySelector('{link}.targeted')"),
        )?;
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert_eq!(page.eval_str(notice)?, "", "{link}");
    }
    Ok(())
}

/// What assistive technology and a shared link rely on: a skip link first in the tab order,
/// no button inside a heading or a summary, Markdown headings under the turn's h2, labelled
/// match buttons, a copied link that is the anchor (a file:// page's address names the
/// sender's folders) with what it points at, and every status colour at AA contrast in both
/// themes.
#[test]
fn semantics_skip_link_copy_links_headings_and_status_contrast() -> anyhow::Result<()> {
    let mut report = crate::report(&sample())?;
    let turn = report.turns.first_mut().expect("the sample has turns");
    let response = turn
        .response
        .as_mut()
        .expect("the first turn has a response");
    response.text = format!("# Heading\n\n{}", response.text);
    let Some(page) = open(&tracebook::render::html(&report)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    let shape = page.eval(
        "(() => ({
           first: document.querySelector('body a, body button, body input').className,
           skip: document.querySelector('a.skip').getAttribute('href'),
           nested: document.querySelectorAll('h1 button, h2 button, h3 button, summary button').length,
           copies: document.querySelectorAll('button.copy').length,
           mdTop: [...document.querySelectorAll('#notebook .md h1, #notebook .md h2')].length,
           mdH3: [...document.querySelectorAll('#notebook .response .md h3')].map(h => h.textContent),
           arrows: [document.getElementById('q-prev').getAttribute('aria-label'),
                    document.getElementById('q-next').getAttribute('aria-label')],
         }))()",
    )?;
    assert_eq!(shape["first"], "skip", "{shape}");
    assert_eq!(shape["skip"], "#notebook", "{shape}");
    assert_eq!(shape["nested"], 0, "{shape}");
    assert!(shape["copies"].as_u64().unwrap_or(0) > 0, "{shape}");
    assert_eq!(shape["mdTop"], 0, "{shape}");
    assert_eq!(shape["mdH3"], serde_json::json!(["Heading"]), "{shape}");
    assert_eq!(
        shape["arrows"],
        serde_json::json!(["Previous match", "Next match"])
    );
    // The copied text, with the clipboard stubbed.
    let failed = report
        .turns
        .iter()
        .flat_map(|t| &t.steps)
        .find_map(|s| match s {
            tracebook::report::model::StepView::ToolCall(c)
                if c.status == tracebook::events::ToolStatus::Error =>
            {
                Some(c.id.clone())
            }
            _ => None,
        })
        .expect("the sample has a failed call");
    let copied = page.eval_async(&format!(
        "(async () => {{
           let got = [];
           Object.defineProperty(navigator, 'clipboard', {{ value: {{ writeText: t => {{ got.push(t); return Promise.resolve(); }} }} }});
           document.querySelector('button.copy[data-link=\"t1\"]').click();
           document.querySelector('button.copy[data-link=\"{failed}\"]').click();
           await new Promise(r => setTimeout(r, 50));
           return got; }})()"
    ))?;
    let copied: Vec<String> = serde_json::from_value(copied)?;
    assert_eq!(copied.first().map(String::as_str), Some("#t1 (Turn 1)"));
    let step = copied.get(1).cloned().unwrap_or_default();
    let (turn_no, step_no) = failed
        .trim_start_matches('t')
        .split_once("-s")
        .expect("a step id is tN-sM");
    assert!(
        step.starts_with(&format!("#{failed} (Turn {turn_no}, step {step_no}: "))
            && step.ends_with(", error)"),
        "{step}"
    );
    // Contrast of every status colour, in both themes, with every fold open and review mode on.
    let ratios = page.eval_async(&format!(
        "(async () => {{
           document.querySelectorAll('details').forEach(d => d.open = true);
           const s = document.getElementById('f-status'); s.value = 'error'; s.dispatchEvent(new Event('change'));
           s.value = ''; s.dispatchEvent(new Event('change'));
           return await {CONTRAST}; }})()"
    ))?;
    let ratios = ratios.as_object().expect("ratios by theme and selector");
    assert!(ratios.len() >= 20, "{ratios:?}");
    for (what, r) in ratios {
        assert!(r.as_f64().unwrap_or(0.0) >= 4.5, "{what}: {r} below AA");
    }
    Ok(())
}

/// The lowest text contrast of each status colour on its background, by theme.
const CONTRAST: &str = r##"(async () => {
  const parse = c => { const m = c.match(/[\d.]+/g).map(Number); return m.length > 3 ? m : m.concat([1]); };
  const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const bgOf = el => { for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor); if (c[3] > 0) return c; } return [255, 255, 255, 1]; };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const out = {};
  for (const theme of ["light", "dark"]) {
    document.documentElement.setAttribute("data-theme", theme);
    const sels = [".status.ok", ".status.error", ".status.unknown", ".badge.complete", ".badge.incomplete", ".toc-n.error", ".toc-n.unknown", ".verdict .v-ok", ".verdict .v-error", ".verdict .v-unknown", ".why.fail-line", ".why.unknown-why", ".missing", ".ending", "#f-count", ".dim"];
    for (const s of sels) {
      let worst = null;
      document.querySelectorAll(s).forEach(el => { if (!el.offsetParent) return; const r = ratio(parse(getComputedStyle(el).color), bgOf(el)); if (worst === null || r < worst) worst = r; });
      if (worst !== null) out[theme + " " + s] = Math.round(worst * 100) / 100;
    }
  }
  return out;
})()"##;

/// Sets the media type or media features the page is laid out for (`print`, a dark scheme).
fn emulate_media(page: &Opened, media: serde_json::Value) -> anyhow::Result<()> {
    let m: headless_chrome::protocol::cdp::Emulation::SetEmulatedMedia =
        serde_json::from_value(media)?;
    page.tab.call_method(m)?;
    Ok(())
}

/// Printing a real session: no control on paper, the turn and step labels kept, every output
/// either whole or cut to its first lines with a note saying how many more the notebook holds,
/// and far fewer pages than every fold opened (129 A4 pages for the corpus session before).
#[test]
fn printing_keeps_labels_drops_controls_and_prints_heads() -> anyhow::Result<()> {
    let (path, most_pages) = match corpus_session() {
        Some(p) => (p, 90),
        None => (sample(), 6),
    };
    let html = render(&path)?;
    let Some(page) = open(&html, "", 1280, 900, true)? else {
        return Ok(());
    };
    let pdf = page
        .tab
        .print_to_pdf(Some(headless_chrome::types::PrintToPdfOptions {
            paper_width: Some(8.27),
            paper_height: Some(11.69),
            margin_top: Some(0.4),
            margin_bottom: Some(0.4),
            margin_left: Some(0.4),
            margin_right: Some(0.4),
            print_background: Some(true),
            ..Default::default()
        }))?;
    std::fs::write(artifacts()?.join("printed.pdf"), &pdf)?;
    let pages = regex::bytes::Regex::new(r"/Type\s*/Page[^s]")?
        .find_iter(&pdf)
        .count();
    assert!(pages > 0 && pages <= most_pages, "{pages} pages");
    page.eval("window.dispatchEvent(new Event('beforeprint'))")?;
    emulate_media(&page, serde_json::json!({ "media": "print" }))?;
    let state = page.eval(
        "(() => {
          const shown = e => e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
          const outputs = [...document.querySelectorAll('.tool-body > pre.output')].filter(shown);
          return {
            toolbar: shown(document.querySelector('.toolbar')),
            buttons: [...document.querySelectorAll('button')].filter(shown).length,
            turnLabel: shown(document.querySelector('#t1 .turn-head a.anchor')),
            promptLabel: shown(document.querySelector('#t1 .prompt .who a.anchor')),
            outputs: outputs.length,
            overflowing: outputs.filter(p => !p.classList.contains('print-cut') && p.scrollHeight > p.clientHeight + 2).length,
            cut: document.querySelectorAll('pre.print-cut').length,
            notes: document.querySelectorAll('.print-omitted').length,
          };
        })()",
    )?;
    assert_eq!(state["toolbar"], false, "{state}");
    assert_eq!(state["buttons"], 0, "{state}");
    assert_eq!(state["turnLabel"], true, "{state}");
    assert_eq!(state["promptLabel"], true, "{state}");
    assert_eq!(
        state["overflowing"], 0,
        "no output spills over what follows: {state}"
    );
    assert!(state["cut"].as_u64() <= state["notes"].as_u64(), "{state}");
    page.eval("window.dispatchEvent(new Event('afterprint'))")?;
    assert_eq!(
        page.eval("document.querySelectorAll('.print-omitted').length")?,
        0
    );
    Ok(())
}

/// On a phone the toolbar is one row, a deep link's target lands below it, the session's
/// facts fold to one line, nothing scrolls sideways and the Keys popover stays on screen; in
/// both themes. Screenshots go to target/.
#[test]
fn a_phone_keeps_one_toolbar_row_and_link_targets_in_view() -> anyhow::Result<()> {
    let (path, target) = match corpus_session() {
        Some(p) => (p, "t2-s5"),
        None => (sample(), "t2-s3"),
    };
    let html = render(&path)?;
    for dark in [false, true] {
        let Some(page) = open(&html, &format!("#{target}"), 390, 844, true)? else {
            return Ok(());
        };
        if dark {
            emulate_media(
                &page,
                serde_json::json!({ "features": [{ "name": "prefers-color-scheme", "value": "dark" }] }),
            )?;
        }
        wait_until(&page, &format!("!!document.getElementById('{target}')"))?;
        let state = page.eval(&format!(
            "(() => {{
              const bar = document.querySelector('.toolbar').getBoundingClientRect();
              const t = document.getElementById('{target}').getBoundingClientRect();
              return {{ bar: bar.height, barBottom: bar.bottom, top: t.top,
                details: document.querySelector('details.session-details').open }};
            }})()"
        ))?;
        assert!(state["bar"].as_f64() < Some(64.0), "one row: {state}");
        assert!(
            state["top"].as_f64() >= state["barBottom"].as_f64(),
            "the target below the toolbar: {state}"
        );
        assert_eq!(state["details"], false, "{state}");
        assert_eq!(page.eval(NO_SIDEWAYS_SCROLL)?, true);
        page.eval(
            "document.getElementById('f-toggle').click(); document.querySelector('.keys').open = true",
        )?;
        let keys = page.eval(
            "(() => { const r = document.querySelector('.keys p').getBoundingClientRect();
               return r.left >= 0 && r.right <= innerWidth; })()",
        )?;
        assert_eq!(keys, true, "the Keys popover on screen");
        page.eval("(() => { document.querySelector('.keys').open = false; scrollTo(0, 0); })()")?;
        page.screenshot(&format!(
            "phone-{}.png",
            if dark { "dark" } else { "light" }
        ))?;
    }
    Ok(())
}

/// The sample, and the corpus session when there is one.
fn sessions() -> Vec<PathBuf> {
    std::iter::once(sample()).chain(corpus_session()).collect()
}

/// Opens every Process and group fold, leaving the calls closed.
const OPEN_PROCESSES: &str = "document.querySelectorAll('details.process, .tool-group > details').forEach(d => d.open = true)";

/// On a phone a closed call is one line a finger tall: status glyph, tool, label cut to fit
/// (whole in its title and once opened), duration; a failed or unknown call's reason on one
/// more line; light, dark and with JavaScript off, and on a touch screen an opened call's "#"
/// link and a reasoning fold are finger-sized too. On a desktop nothing is cut. Screenshots
/// go to target/.
#[test]
fn a_closed_call_is_one_line_on_a_phone_and_whole_when_opened() -> anyhow::Result<()> {
    for path in sessions() {
        let html = render(&path)?;
        for (width, dark, js) in [
            (390, false, true),
            (390, true, true),
            (390, false, false),
            (1280, false, true),
        ] {
            let Some(page) = open(&html, "", width, 844, js)? else {
                return Ok(());
            };
            if dark {
                emulate_media(
                    &page,
                    serde_json::json!({ "features": [{ "name": "prefers-color-scheme", "value": "dark" }] }),
                )?;
            }
            if width < 600 {
                // A touch screen: controls a finger tall.
                let touch: headless_chrome::protocol::cdp::Emulation::SetTouchEmulationEnabled =
                    serde_json::from_value(
                        serde_json::json!({ "enabled": true, "maxTouchPoints": 5 }),
                    )?;
                page.tab.call_method(touch)?;
                assert_eq!(page.eval("matchMedia('(pointer: coarse)').matches")?, true);
            }
            page.eval(OPEN_PROCESSES)?;
            let rows = page.eval(
                "(() => {
                  const lh = parseFloat(getComputedStyle(document.querySelector('.step.tool > details > summary')).lineHeight);
                  return { lh, rows: [...document.querySelectorAll('.step.tool > details:not([open]) > summary')]
                    .filter(s => s.getClientRects().length).map(s => {
                      const r = s.getBoundingClientRect(), why = s.querySelector('.why');
                      const head = [...s.querySelectorAll(':scope > .status, :scope > .tool-name, :scope > .tool-arg, :scope > .meta')]
                        .filter(e => e.getClientRects().length).map(e => { const b = e.getBoundingClientRect(); return (b.top + b.bottom) / 2; });
                      const arg = s.querySelector('.tool-arg');
                      return { id: s.closest('li').id, height: r.height, why: why ? why.getBoundingClientRect().height : 0,
                        spread: Math.max(...head) - Math.min(...head),
                        cut: arg.scrollWidth > arg.clientWidth + 1,
                        titled: !arg.textContent || arg.title === arg.textContent };
                    }) };
                })()",
            )?;
            let lh = rows["lh"].as_f64().unwrap_or(0.0);
            let rows = rows["rows"].as_array().cloned().unwrap_or_default();
            assert!(lh > 10.0 && rows.len() >= 3, "{width}: {lh} {rows:?}");
            for r in &rows {
                let height = r["height"].as_f64().unwrap_or(0.0);
                let head = height - r["why"].as_f64().unwrap_or(0.0);
                assert_eq!(r["titled"], true, "the whole label in its title: {r}");
                if width < 600 {
                    assert!(
                        r["spread"].as_f64() < Some(lh / 2.0),
                        "status, tool, label and duration on one line: {r}"
                    );
                    assert!(height >= 40.0, "a finger-sized row: {r}");
                    assert!(head < 2.0 * lh, "one line ({lh} px a line): {r}");
                } else {
                    assert_eq!(r["cut"], false, "nothing cut on a desktop: {r}");
                }
            }
            if width < 600 {
                assert!(
                    rows.iter().any(|r| r["cut"] == true),
                    "some label is long enough to be cut at {width} px"
                );
                // Opened, every label reads whole.
                page.eval(
                    "document.querySelectorAll('.step.tool > details').forEach(d => d.open = true)",
                )?;
                let cut = page.eval(
                    "[...document.querySelectorAll('.step.tool > details > summary .tool-arg')]
                       .filter(a => a.getClientRects().length && a.scrollWidth > a.clientWidth + 1).map(a => a.closest('li').id)",
                )?;
                assert_eq!(cut, serde_json::json!([]), "labels cut once opened");
                // The "#" link of an opened call and a reasoning step's fold are finger-sized.
                let small = page.eval(
                    "[...document.querySelectorAll('.step.tool > a.step-link, .step.thinking > details > summary')]
                       .filter(e => e.getClientRects().length).map(e => e.getBoundingClientRect())
                       .filter(r => r.height < 40 || r.width < 40).length",
                )?;
                assert_eq!(small, 0, "touch targets under 40 px");
            }
            assert_eq!(page.eval(NO_SIDEWAYS_SCROLL)?, true, "{width}");
            page.eval(
                "(() => { document.querySelectorAll('.step.tool > details').forEach(d => d.open = false);
                   const turns = [...document.querySelectorAll('#notebook > .turn[id]')];
                   const t = turns.sort((a, b) => b.querySelectorAll('.step.tool').length - a.querySelectorAll('.step.tool').length)[0];
                   t.querySelector('details.process').scrollIntoView({ block: 'start' }); })()",
            )?;
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("session");
            let theme = match (dark, js) {
                (true, _) => "dark",
                (false, true) => "light",
                (false, false) => "nojs",
            };
            page.screenshot(&format!(
                "calls-{width}-{theme}-{}.png",
                &name[..name.len().min(12)]
            ))?;
        }
    }
    Ok(())
}

/// No link inside a summary (a screen reader and the keyboard would meet a link inside a
/// toggle): each step's "#" link sits beside its fold, and deep links land with and without
/// JavaScript.
#[test]
fn no_link_sits_inside_a_summary_and_step_links_land() -> anyhow::Result<()> {
    for path in sessions() {
        let html = render(&path)?;
        let Some(page) = open(&html, "", 1280, 900, true)? else {
            return Ok(());
        };
        // Every stored block in place, as for a print.
        page.eval("window.dispatchEvent(new Event('beforeprint'))")?;
        let state = page.eval(
            "({ nested: document.querySelectorAll('summary a, summary button').length,
                summaries: document.querySelectorAll('summary').length,
                links: [...document.querySelectorAll('a.step-link')].filter(a => a.getAttribute('href') !== '#' + (a.previousElementSibling.id || a.parentElement.id)).length,
                steps: document.querySelectorAll('.step.tool > details + a.step-link').length,
                tools: document.querySelectorAll('.step.tool').length })",
        )?;
        assert_eq!(state["nested"], 0, "{state}");
        assert!(state["summaries"].as_u64() > Some(5), "{state}");
        assert_eq!(state["links"], 0, "each link names its own step: {state}");
        assert_eq!(state["steps"], state["tools"], "{state}");
    }
    let report = crate::report(&sample())?;
    let html = tracebook::render::html(&report)?;
    for js in [true, false] {
        let Some(page) = open(&html, "#t2-s3", 390, 844, js)? else {
            return Ok(());
        };
        let state = page.eval(
            "(() => { const t = document.getElementById('t2-s3').getBoundingClientRect();
               return { open: document.getElementById('t2-s3').closest('details.process').open,
                        top: t.top, inView: t.top >= 0 && t.top < innerHeight }; })()",
        )?;
        assert_eq!(state["open"], true, "js {js}: {state}");
        assert_eq!(state["inView"], true, "js {js}: {state}");
    }
    Ok(())
}

/// Reading inside a long turn, its one-line heading stays under the toolbar (with the turn's
/// prompt once stuck), at 1280 and 390 px, light and dark, with and without JavaScript; a deep
/// link's target lands below toolbar and heading; on paper the heading is not sticky.
#[test]
fn the_current_turn_heading_stays_under_the_toolbar() -> anyhow::Result<()> {
    let path = corpus_session().unwrap_or_else(sample);
    let html = render(&path)?;
    for (width, dark, js) in [
        (1280, false, true),
        (1280, true, true),
        (390, false, true),
        (390, true, true),
        (390, false, false),
    ] {
        let what = format!("{width} px, dark {dark}, js {js}");
        let Some(page) = open(&html, "", width, 844, js)? else {
            return Ok(());
        };
        if dark {
            emulate_media(
                &page,
                serde_json::json!({ "features": [{ "name": "prefers-color-scheme", "value": "dark" }] }),
            )?;
        }
        // The turn with the most calls, every fold in it open: a long turn. Then a step in its
        // second half, shown by its deep link.
        let target = page.eval_str(
            "(() => {
              const turns = [...document.querySelectorAll('#notebook > .turn[id]:not(.stored)')];
              const t = turns.sort((a, b) => b.querySelectorAll('.step.tool').length - a.querySelectorAll('.step.tool').length)[0];
              t.querySelectorAll('details').forEach(d => d.open = true);
              const steps = [...t.querySelectorAll('.step[id]')];
              return steps[Math.floor(steps.length * 2 / 3)].id;
            })()",
        )?;
        page.eval(&format!("location.hash = '#{target}'"))?;
        std::thread::sleep(std::time::Duration::from_millis(300));
        let state = page.eval(&format!(
            "(() => {{
              const bar = document.querySelector('.toolbar').getBoundingClientRect();
              const barBottom = getComputedStyle(document.querySelector('.toolbar')).display === 'none' ? 0 : bar.bottom;
              const el = document.getElementById('{target}'), top = el.closest('#notebook > .turn').querySelector('.turn-top');
              const h = top.getBoundingClientRect(), t = el.getBoundingClientRect();
              const gist = top.querySelector('.turn-gist');
              return {{ barBottom, headTop: h.top, headBottom: h.bottom, headHeight: h.height, target: t.top,
                lh: parseFloat(getComputedStyle(top.querySelector('.turn-head')).lineHeight),
                gist: !!gist && gist.getClientRects().length > 0 && gist.scrollWidth > 0,
                held: [...document.querySelectorAll('.turn-top.held')].map(e => e === top),
                listed: [...document.querySelectorAll('.toc a[aria-current=true]')].map(a => a.getAttribute('href') === '#' + top.parentElement.id),
                label: top.querySelector('.turn-head a.anchor').textContent, scrollY }};
            }})()"
        ))?;
        let num = |k: &str| state[k].as_f64().unwrap_or(f64::NAN);
        assert!(
            num("scrollY") > 500.0,
            "{what}: scrolled into the turn: {state}"
        );
        assert!(
            (num("headTop") - num("barBottom")).abs() <= 1.5,
            "{what}: the heading right under the toolbar: {state}"
        );
        assert!(
            num("headHeight") < 2.0 * num("lh"),
            "{what}: one line: {state}"
        );
        assert!(
            num("target") >= num("headBottom") - 0.5,
            "{what}: the target below the heading: {state}"
        );
        assert_eq!(
            state["gist"], true,
            "{what}: the prompt in the stuck heading: {state}"
        );
        // The script marks the held heading too, for browsers whose CSS cannot tell.
        let held = if js {
            serde_json::json!([true])
        } else {
            serde_json::json!([])
        };
        assert_eq!(state["held"], held, "{what}: {state}");
        // The turn list marks the same turn as the one in view.
        assert_eq!(state["listed"], held, "{what}: {state}");
        assert_eq!(page.eval(NO_SIDEWAYS_SCROLL)?, true, "{what}");
        page.screenshot(&format!(
            "turn-heading-{width}-{}-{}.png",
            if dark { "dark" } else { "light" },
            if js { "js" } else { "nojs" }
        ))?;
        emulate_media(&page, serde_json::json!({ "media": "print" }))?;
        let printed = page.eval(&format!(
            "(() => {{ const top = document.getElementById('{target}').closest('#notebook > .turn').querySelector('.turn-top');
               return [getComputedStyle(top).position, getComputedStyle(top.querySelector('.turn-gist')).display].join(); }})()"
        ))?;
        assert_eq!(printed, "static,none", "{what}: on paper");
    }
    Ok(())
}

/// Review mode: a status filter opens the matching calls, counts them in words, keeps only
/// their turns in the turn list, and says so when nothing matches.
#[test]
fn a_status_filter_is_a_review_of_the_failed_calls() -> anyhow::Result<()> {
    let report = crate::report(&sample())?;
    let Some(page) = open(&tracebook::render::html(&report)?, "", 1280, 900, true)? else {
        return Ok(());
    };
    let pick = |status: &str| {
        format!(
            "(() => {{ const s = document.getElementById('f-status'); s.value = '{status}';
               s.dispatchEvent(new Event('change')); }})()"
        )
    };
    page.eval(&pick("error"))?;
    wait_until(
        &page,
        "document.getElementById('f-count').textContent !== ''",
    )?;
    let turns_with_errors = report.turns.iter().filter(|t| t.counts.error > 0).count();
    let state = page.eval(
        "({ count: document.getElementById('f-count').textContent,
            open: [...document.querySelectorAll('#notebook .step.tool.shown > details')].every(d => d.open),
            listed: [...document.querySelectorAll('.toc li')].filter(li => li.offsetParent !== null).length })",
    )?;
    assert_eq!(
        state["count"],
        format!(
            "{} failed calls in {turns_with_errors} turns",
            report.summary.error
        ),
        "{state}"
    );
    assert_eq!(state["open"], true, "{state}");
    assert_eq!(state["listed"], turns_with_errors, "{state}");
    // A status nothing has reads as such.
    let html =
        tracebook::render::html(&report)?.replace("data-status=\"unknown\"", "data-status=\"ok\"");
    let Some(page) = open(&html, "", 1280, 900, true)? else {
        return Ok(());
    };
    page.eval(&pick("unknown"))?;
    wait_until(
        &page,
        "document.getElementById('f-count').textContent !== ''",
    )?;
    assert_eq!(
        page.eval_str("document.getElementById('f-count').textContent")?,
        "No calls with unknown status in this notebook"
    );
    Ok(())
}

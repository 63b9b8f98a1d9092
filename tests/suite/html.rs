//! The notebook as a file: self-contained, offline, escaped, with stable anchors.

use crate::{CANARIES, fixtures, report};

fn render(case: &str) -> anyhow::Result<String> {
    let report = report(&fixtures().join(format!("claude-code/{case}/session.jsonl")))?;
    Ok(tracebook::render::html(&report)?)
}

#[test]
fn the_page_fetches_nothing_and_says_so_in_its_csp() -> anyhow::Result<()> {
    for case in ["ordered-steps", "outcome-evidence", "subagent"] {
        let html = render(case)?;
        let head = &html[..html.find("</head>").unwrap_or(html.len())];
        let charset = head
            .find("<meta charset=\"utf-8\">")
            .expect("charset first");
        let csp = head
            .find("http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'")
            .expect("a CSP that forbids by default");
        assert!(charset < csp);
        assert!(!html.contains("<script src"), "{case}");
        assert!(!html.contains("<link"), "{case}");
        assert!(!html.contains(" src=\"http"), "{case}");
        assert!(!html.contains("@import"), "{case}");
        assert!(!html.contains("url(http"), "{case}");
    }
    Ok(())
}

#[test]
fn planted_secrets_and_home_paths_never_reach_the_page() -> anyhow::Result<()> {
    for case in ["outcome-evidence", "ordered-steps", "subagent"] {
        let html = render(case)?;
        for canary in CANARIES {
            assert!(
                !html.contains(canary),
                "{case}: `{canary}` reached the page"
            );
        }
    }
    Ok(())
}

#[test]
fn every_turn_and_step_has_a_positional_anchor() -> anyhow::Result<()> {
    let html = render("ordered-steps")?;
    for id in ["t1", "t1-p", "t1-s1", "t1-s2", "t1-s3", "t1-s4", "t1-r"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "missing #{id}");
    }
    Ok(())
}

#[test]
fn process_is_a_closed_fold_and_the_response_is_markdown() -> anyhow::Result<()> {
    let html = render("ordered-steps")?;
    assert!(html.contains("<details class=\"process\">"));
    assert!(!html.contains("<details class=\"process\" open"));
    assert!(html.contains("<strong>percentage</strong>"));
    assert!(html.contains("<code>total()</code>"));
    Ok(())
}

#[test]
fn adjacent_tool_calls_fold_in_their_order() -> anyhow::Result<()> {
    let html = render("outcome-evidence")?;
    assert!(html.contains("6 tool calls: Edit → Write → Bash → Edit → Bash"));
    let positions: Vec<usize> = (1..=6)
        .map(|i| html.find(&format!("id=\"t1-s{i}\"")).expect("step present"))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));
    Ok(())
}

#[test]
fn outcome_says_only_what_the_log_retained() -> anyhow::Result<()> {
    let html = render("outcome-evidence")?;
    assert!(html.contains("patch unavailable"));
    // The retained patch's removed line, whatever tokens colour the code in it.
    let removed: Vec<String> = html
        .lines()
        .filter(|l| l.starts_with("<span class=\"del\">"))
        .map(|l| regex::Regex::new("<[^>]*>").map(|tags| tags.replace_all(l, "").into_owned()))
        .collect::<Result<_, _>>()?;
    assert!(
        removed
            .iter()
            .any(|l| l == "-    return sum(items) - coupon"),
        "{removed:?}"
    );
    assert!(html.contains("<code>4e1d2c9</code>"));
    let incomplete = render("tool-after-message")?;
    assert!(incomplete.contains("No final response retained"));
    Ok(())
}

#[test]
fn transcript_text_is_escaped() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("xss.jsonl");
    let line = serde_json::json!({
        "type": "user", "sessionId": "s", "uuid": "u1",
        "message": {"role": "user", "content": "<script>alert('p')</script><img src=x onerror=alert(1)>"}
    });
    let reply = serde_json::json!({
        "type": "assistant", "sessionId": "s", "uuid": "u2",
        "message": {"id": "m", "role": "assistant", "content": [
            {"type": "text", "text": "<script>alert('a')</script>[x](javascript:alert(1))"}]}
    });
    std::fs::write(&path, format!("{line}\n{reply}\n"))?;
    let html = tracebook::render::html(&report(&path)?)?;
    let start = html
        .find("<main id=\"notebook\">")
        .ok_or_else(|| anyhow::anyhow!("the page has no main element"))?;
    let end = start
        + html[start..]
            .find("</main>")
            .ok_or_else(|| anyhow::anyhow!("the main element is not closed"))?;
    let body = &html[start..end];
    assert!(
        !body.contains("<script"),
        "a transcript script reached the page"
    );
    assert!(!body.contains("<img"));
    assert!(!body.contains("href=\"javascript:"));
    let data = &html[html.find("id=\"tracebook-report\"").unwrap_or(0)..];
    let data = &data[data.find('>').map_or(0, |i| i + 1)..];
    let data = &data[..data.find("</template>").unwrap_or(data.len())];
    assert!(
        !data.contains('<') && !data.contains('&'),
        "the embedded report can close its element or hold markup"
    );
    let model = tracebook::render::embed::json(&html)?;
    assert!(
        model.contains("<script>alert('a')</script>"),
        "it holds the text as written"
    );
    Ok(())
}

#[test]
fn the_overview_strip_has_one_linked_mark_per_turn_coloured_by_status() -> anyhow::Result<()> {
    let path = crate::sample();
    let report = crate::report(&path)?;
    let html = tracebook::render::html(&report)?;
    let strip = html
        .split_once("<svg class=\"strip\"")
        .and_then(|(_, rest)| rest.split_once("</svg>"))
        .map(|(svg, _)| svg)
        .unwrap_or_default();
    assert!(!strip.is_empty(), "no overview strip");
    // The bars are one path per status, a subpath per mark starting at its slot's left edge.
    let path = |class: &str| {
        strip
            .split_once(&format!("<path class=\"{class}\" d=\""))
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(d, _)| d.to_owned())
            .unwrap_or_default()
    };
    for turn in &report.turns {
        let mark = strip
            .split_once(&format!("<a href=\"#{}\">", turn.id))
            .and_then(|(_, rest)| rest.split_once("</a>"))
            .map(|(m, _)| m)
            .unwrap_or_default();
        assert!(!mark.is_empty(), "no mark for {}", turn.id);
        let x: usize = mark
            .split_once("class=\"slot\" x=\"")
            .and_then(|(_, rest)| rest.split_once('"'))
            .and_then(|(x, _)| x.parse().ok())
            .unwrap_or(usize::MAX);
        let bar = format!("M{} ", x.saturating_add(1));
        assert!(
            path(turn.response_status.as_str()).contains(&bar),
            "{}: no {} band at {bar}",
            turn.id,
            turn.response_status.as_str()
        );
        let errors = turn.steps.iter().any(|s| {
            matches!(s, tracebook::report::model::StepView::ToolCall(c)
                if c.status == tracebook::events::ToolStatus::Error)
        });
        assert_eq!(path("error").contains(&bar), errors, "{}: {strip}", turn.id);
    }
    Ok(())
}

/// A page with turns stored compressed, its blocks decoded and put where their stubs and
/// placeholders stand (as the page's script does), is the page written whole: every turn and
/// step once, in the same order.
#[test]
fn stored_turns_decode_to_the_whole_page_in_order() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let sample = crate::sample();
    let report = report(&sample)?;
    let whole = render::notebook(
        report.clone(),
        Storage::Inline,
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    assert!(!whole.contains("class=\"stored\""));
    assert!(
        !whole.contains("Arjun Barrett"),
        "a page that stores nothing carries no decoder"
    );
    let ids = |html: &str| -> Vec<String> {
        let re = regex::Regex::new(r#" id="([^"]+)""#).expect("pattern");
        re.captures_iter(html).map(|c| c[1].to_owned()).collect()
    };
    // Nothing stored; one block for every stored turn; a block per turn and per turn's steps;
    // the first turn inline and the rest stored.
    for (inline, block) in [(1 << 20, 1 << 20), (0, 1 << 20), (0, 0), (4000, 0)] {
        let page = render::notebook(
            report.clone(),
            Storage::Budget { inline, block },
            tracebook::privacy::secrets::backstop,
        )?
        .html();
        assert_eq!(
            page.contains("class=\"stored\""),
            inline < 1 << 20,
            "inline {inline}, block {block}"
        );
        assert_eq!(page.contains("Arjun Barrett"), inline < 1 << 20);
        let placed = place_stored(&page)?;
        assert_eq!(ids(&placed), ids(&whole), "inline {inline}, block {block}");
    }
    Ok(())
}

/// Turns are rendered on every core, a window at a time, and placed in order: the page is the
/// same, byte for byte, whatever the number of threads.
#[test]
fn a_long_page_is_the_same_on_one_thread_and_on_many() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let sample = crate::sample();
    let one = serde_json::to_value(report(&sample)?)?;
    // Sixty copies of the sample's turns, each text made distinct with code of its own, so
    // that turns are stored past the inline budget and windows are rendered on every core.
    let turns = one["turns"].as_array().cloned().unwrap_or_default();
    let mut all = Vec::new();
    let mut texts = 0;
    for _ in 0..60 {
        for turn in &turns {
            let mut turn = turn.clone();
            distinct(&mut turn, &mut texts);
            let n = all.len() + 1;
            turn["number"] = n.into();
            turn["id"] = format!("t{n}").into();
            all.push(turn);
        }
    }
    let mut long = one.clone();
    long["turns"] = serde_json::Value::Array(all);
    let long: tracebook::report::model::Report = serde_json::from_value(long)?;
    let page = |threads: usize, storage: Storage| -> anyhow::Result<String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        Ok(pool
            .install(|| {
                render::notebook(long.clone(), storage, tracebook::privacy::secrets::backstop)
            })?
            .html())
    };
    let single = page(1, Storage::default())?;
    assert!(single.contains("class=\"stored\""));
    for threads in [2, 5] {
        assert!(
            page(threads, Storage::default())? == single,
            "{threads} threads"
        );
    }
    let whole = page(3, Storage::Inline)?;
    assert!(whole == page(1, Storage::Inline)?);
    // Every turn's code is marked for colouring, the last as well as the first.
    let sections: Vec<&str> = whole.split("<section class=\"turn").collect();
    let marked = |s: &&str| s.matches("<code data-lang=\"rust\">").count();
    assert!(sections.iter().skip(1).take(4).map(marked).sum::<usize>() > 0);
    assert!(sections.iter().rev().take(4).map(marked).sum::<usize>() > 0);
    Ok(())
}

/// Appends a block of code of its own to every text of a turn.
fn distinct(value: &mut serde_json::Value, texts: &mut usize) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    serde_json::Value::String(s) if key == "text" => {
                        *texts += 1;
                        s.push_str("\n\n```rust\n");
                        for line in 0..60 {
                            s.push_str(&format!("let text_{texts}_{line} = {line} + 1;\n"));
                        }
                        s.push_str("```\n");
                    }
                    _ => distinct(v, texts),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| distinct(v, texts)),
        _ => {}
    }
}

/// Decodes every stored block of a page and puts its HTML where its holders stand.
fn place_stored(page: &str) -> anyhow::Result<String> {
    use base64::Engine as _;
    let block = regex::Regex::new(
        r#"\n?<template class="stored" data-block="(b\d+)"(?: data-in="b\d+")? data-encoding="zstd\+base64">([^<]*)</template>"#,
    )?;
    let mut stored = Vec::new();
    for c in block.captures_iter(page) {
        let bytes = base64::engine::general_purpose::STANDARD.decode(&c[2])?;
        let html = String::from_utf8(zstd::decode_all(bytes.as_slice())?)?;
        stored.push((c[1].to_owned(), html));
    }
    let mut page = block.replace_all(page, "").into_owned();
    while !stored.is_empty() {
        let before = stored.len();
        stored.retain(|(id, html)| {
            let holder = regex::Regex::new(&format!(
                r#"\n?<section class="turn stored" data-block="{id}"[^>]*>.*?</section>|<ol class="steps lazy" data-block="{id}"[^>]*>.*?</ol>"#
            ))
            .expect("pattern");
            let spans: Vec<_> = holder.find_iter(&page).map(|m| m.range()).collect();
            let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
                return true;
            };
            page.replace_range(first.start..last.end, html);
            false
        });
        anyhow::ensure!(stored.len() < before, "blocks with no holder in the page");
    }
    Ok(page)
}

/// With JavaScript off a stored block's stub is a list a reader can use: one anchored line per
/// stored turn, with its prompt, response status and failed calls, so the turn list's links
/// and deep links to a stored turn land.
#[test]
fn a_stored_block_lists_its_turns_as_anchored_lines() -> anyhow::Result<()> {
    use tracebook::render::{self, Storage};
    let sample = crate::sample();
    let report = report(&sample)?;
    let page = render::notebook(
        report.clone(),
        Storage::Budget {
            inline: 0,
            block: 1 << 20,
        },
        tracebook::privacy::secrets::backstop,
    )?
    .html();
    let stub = regex::Regex::new(r#"(?s)<section class="turn stored"[^>]*>(.*?)</section>"#)?;
    let stubs: String = stub.captures_iter(&page).map(|c| c[1].to_owned()).collect();
    for t in &report.turns[1..] {
        let line = regex::Regex::new(&format!(
            r#"<li id="{}" data-census="[^"]*">(<wbr id=[^ >]+>)*<a href="\#{}">Turn {}</a> [^<]*<span class="badge {}">"#,
            t.id,
            t.id,
            t.number,
            t.response_status.as_str()
        ))?;
        assert!(
            line.is_match(&stubs),
            "turn {} has no line: {stubs}",
            t.number
        );
        if t.counts.error > 0 {
            assert!(stubs.contains(&format!(
                "<span class=\"status error\">{} error</span>",
                t.counts.error
            )));
        }
        // Links to its steps land on its line too.
        if !t.steps.is_empty() {
            assert!(stubs.contains(&format!("<wbr id={}-s1>", t.id)), "{}", t.id);
        }
    }
    Ok(())
}

/// Adjacent reasoning steps read as one fold that keeps each step's anchor, and reasoning the
/// log did not keep is counted once on the Process line.
#[test]
fn adjacent_reasoning_is_one_fold_and_unretained_reasoning_is_counted_once() -> anyhow::Result<()> {
    use tracebook::report::model::StepView;
    let sample = crate::sample();
    let mut report = report(&sample)?;
    let turn = &mut report.turns[0];
    let thought = |n: usize, text: Option<&str>| StepView::Thinking {
        id: format!("t1-x{n}"),
        text: text.map(str::to_owned),
        timestamp: None,
    };
    turn.steps.insert(0, thought(1, Some("first thought")));
    turn.steps.insert(1, thought(2, Some("second thought")));
    turn.steps.push(thought(3, None));
    let html = tracebook::render::html(&report)?;
    assert!(html.contains("<li class=\"step thinking\" data-kind=\"thinking\" id=\"t1-x1\">"));
    assert!(html.contains("<span class=\"dim\">2 steps</span>"));
    assert!(html.contains("<div class=\"thought\" id=\"t1-x2\">"));
    assert!(html.contains("reasoning not retained (1×)"));
    Ok(())
}

/// The header gives the session's outcome in one line: files edited, the last run of each
/// verification command, and the turns with failed calls, each linked.
#[test]
fn the_header_gives_the_session_outcome_and_links_the_failed_turns() -> anyhow::Result<()> {
    let sample = crate::sample();
    let report = report(&sample)?;
    let html = tracebook::render::html(&report)?;
    let line = regex::Regex::new(r#"<p class="verdict session-verdict">(.*?)</p>"#)?
        .captures(&html)
        .map(|c| c[1].to_owned())
        .expect("a session outcome line");
    assert!(line.contains("edited 2 files"), "{line}");
    assert!(
        line.contains("verification ok (last run of each)"),
        "{line}"
    );
    for t in report.turns.iter().filter(|t| t.counts.error > 0) {
        assert!(
            line.contains(&format!(
                "<a href=\"#{}\" title=\"{} failed\">{}</a>",
                t.id, t.counts.error, t.number
            )),
            "{line}"
        );
    }
    Ok(())
}

/// The grammars a page carries are our own script, allowed by hash: the last secret scan,
/// which runs over the page's text, must find nothing in them, or it would change the script
/// and the browser would refuse to run it. A page with code in every language carries them
/// all.
#[test]
fn the_last_scan_leaves_every_grammar_the_page_carries_as_it_is() -> anyhow::Result<()> {
    let mut report = report(&crate::sample())?;
    let languages = "bash js ts jsx tsx py json yaml toml go rust c cpp cs java kotlin swift \
                     ruby php lua sql css html dockerfile makefile ini";
    let fences: String = languages
        .split_whitespace()
        .map(|lang| format!("\n\n```{lang}\nx = 1\n```\n"))
        .collect();
    let response = report
        .turns
        .iter_mut()
        .find_map(|t| t.response.as_mut())
        .expect("the sample has a response");
    response.text.push_str(&fences);
    let mut notebook = tracebook::render::notebook(
        report,
        tracebook::render::Storage::default(),
        tracebook::privacy::secrets::backstop,
    )?;
    let before = notebook.html();
    for grammar in ["languages.tsx=", "languages.kotlin=", "languages.makefile="] {
        assert!(before.contains(grammar), "{grammar} not carried");
    }
    assert_eq!(notebook.final_scan(), 0);
    assert!(notebook.html() == before, "the last scan changed the page");
    Ok(())
}

//! The Markdown for tickets, read back by a real GFM parser (comrak, GitHub's extensions): its
//! structure is the one written, whatever the log holds, and it fits its byte budget.

use comrak::nodes::{AstNode, NodeValue};
use comrak::{Arena, Options, parse_document};
use tracebook::render::gfm::{DEFAULT_MAX_BYTES, markdown};
use tracebook::report::model::{Report, StepView, TurnView};

use crate::{CANARIES, fixtures, report};

/// GitHub's options: tables, strikethrough, autolinks, task lists; raw HTML passed through
/// (GitHub's sanitizer comes after), so any HTML the log could inject would show here.
fn options() -> Options<'static> {
    let mut o = Options::default();
    o.extension.table = true;
    o.extension.strikethrough = true;
    o.extension.autolink = true;
    o.extension.tasklist = true;
    o.render.r#unsafe = true;
    o
}

/// The text of a node and its descendants.
fn text_of<'a>(node: &'a AstNode<'a>) -> String {
    let mut out = String::new();
    for n in node.descendants() {
        match &n.data().value {
            NodeValue::Text(t) => out.push_str(t),
            NodeValue::Code(c) => out.push_str(&c.literal),
            _ => {}
        }
    }
    out
}

/// What a parsed document holds, for the structure checks.
#[derive(Debug, Default)]
struct Shape {
    turn_headings: Vec<String>,
    html_blocks: Vec<String>,
    html_inline: Vec<String>,
    table_rows: Vec<usize>,
}

fn shape(md: &str) -> Shape {
    let arena = Arena::new();
    let root = parse_document(&arena, md, &options());
    let mut s = Shape::default();
    for n in root.descendants() {
        match &n.data().value {
            NodeValue::Heading(h) if h.level == 3 => {
                let t = text_of(n);
                if t.starts_with("Turn ") {
                    s.turn_headings.push(t);
                }
            }
            NodeValue::HtmlBlock(b) => s.html_blocks.push(b.literal.clone()),
            NodeValue::HtmlInline(h) => s.html_inline.push(h.clone()),
            NodeValue::TableRow(_) => s.table_rows.push(n.children().count()),
            _ => {}
        }
    }
    s
}

/// Checks that hold for the Markdown of any report: one heading per written turn, every fold
/// opened and closed by this writer's own lines, no other HTML, two cells per table row.
fn check_structure(report: &Report, md: &str) {
    let s = shape(md);
    let written = s.turn_headings.len();
    assert!(written <= report.turns.len());
    for (heading, turn) in s.turn_headings.iter().zip(&report.turns) {
        assert_eq!(
            heading,
            &format!("Turn {} · {}", turn.number, turn.response_status.as_str())
        );
    }
    if written < report.turns.len() {
        assert!(md.contains("**Left out to stay within the size limit:** turns "));
    }
    let (mut open, mut close) = (0, 0);
    for b in &s.html_blocks {
        let b = b.trim_end();
        if b == "</details>" {
            close += 1;
        } else {
            let summary = b
                .strip_prefix("<details><summary>")
                .and_then(|r| r.strip_suffix("</summary>"))
                .unwrap_or_else(|| panic!("unexpected HTML block: {b:?}"));
            assert!(
                !summary.contains(['<', '>', '`', '&']),
                "summary holds markup: {summary:?}"
            );
            open += 1;
        }
    }
    assert_eq!(open, close, "folds opened and closed");
    assert!(
        s.html_inline.is_empty(),
        "inline HTML: {:?}",
        &s.html_inline[..s.html_inline.len().min(5)]
    );
    assert!(s.table_rows.iter().all(|n| *n == 2), "{:?}", s.table_rows);
}

#[test]
fn markdown_of_each_fixture_is_well_formed_gfm() -> anyhow::Result<()> {
    let mut seen = 0;
    for path in glob::glob(&format!("{}/*/*/session.*", fixtures().display()))? {
        let path = path?;
        let report = report(&path)?;
        let md = markdown(&report, DEFAULT_MAX_BYTES);
        assert!(md.len() <= DEFAULT_MAX_BYTES, "{}", path.display());
        check_structure(&report, &md);
        assert_eq!(
            shape(&md).turn_headings.len(),
            report.turns.len(),
            "{}: a fixture fits whole",
            path.display()
        );
        // The Markdown holds nothing the report does not: a planted string that is not shaped
        // like a secret (one fixture plants such) is in both or in neither.
        let json = serde_json::to_string(&report)?;
        for c in CANARIES {
            assert!(
                !md.contains(c) || json.contains(c),
                "{}: {c}",
                path.display()
            );
        }
        seen += 1;
    }
    assert!(seen > 30);
    Ok(())
}

/// Every XSS vector of `tests/vectors/xss/` and every Markdown structure breaker, in each text
/// field of a report the log fills.
fn hostile_texts() -> anyhow::Result<Vec<String>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/xss");
    let mut out: Vec<String> =
        std::fs::read_to_string(dir.join("payloadbox-xss-payload-list.txt"))?
            .lines()
            .filter(|l| !l.trim().is_empty())
            .step_by(25)
            .map(str::to_owned)
            .collect();
    out.extend(
        [
            "</details>\n\n<script>alert(1)</script>",
            "```\n</details>\n<img src=x onerror=alert(1)>\n```",
            "````` five ````` and ` one",
            "`starts with a backtick",
            "@octocat please look at #12 and owner/repo#3",
            "a | pipe \\| and a backslash pipe |",
            "</summary></details><details open><summary>fake",
            "<!-- comment -->",
            "# heading\n---\n| a | b |\n| - | - |",
            "\u{1b}[31mred\u{1b}[0m \u{202e}reversed \u{0} nul",
            "[link](javascript:alert(1)) ![img](https://example.com/x.png)",
            // Markdown a response may hold, written again as this writer's own.
            "# Title\n\n**bold** and *it* @octocat #12 www.example.com (www.example.com) \
             mail@example.com [click](javascript:alert(1))\n\n- a\n  - b &amp; <\n\n3. three\n4. `x`\n\n\
             ```rust\n</details>\n````\n```\n\nend | pipe\n---",
            "1) a\n+ b\n> quoted @octocat\n",
        ]
        .map(str::to_owned),
    );
    Ok(out)
}

fn poison(turn: &mut TurnView, text: &str) {
    if let Some(p) = &mut turn.prompt {
        p.text = text.to_owned();
    }
    if let Some(r) = &mut turn.response {
        r.text = text.to_owned();
    }
    turn.failure = Some(text.into());
    for step in &mut turn.steps {
        match step {
            StepView::ToolCall(c) => {
                c.name = text.to_owned();
                c.command = Some(text.to_owned());
                c.output = Some(text.to_owned());
                c.paths = vec![text.to_owned()];
                c.status = tracebook::events::ToolStatus::Error;
                c.patch = Some(text.to_owned());
            }
            StepView::Assistant(t) | StepView::UserMessage(t) | StepView::Notice(t) => {
                t.text = text.to_owned()
            }
            _ => {}
        }
    }
    for e in &mut turn.outcome.edits {
        e.path = text.to_owned();
    }
    for c in &mut turn.outcome.commits {
        c.subject = text.to_owned();
    }
}

#[test]
fn log_text_cannot_break_the_markdown_or_inject_html() -> anyhow::Result<()> {
    let base = report(&fixtures().join("claude-code/outcome-evidence/session.jsonl"))?;
    assert!(base.turns.iter().any(|t| !t.steps.is_empty()));
    let tags = regex::Regex::new(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>")?;
    let language = regex::Regex::new(r#"^(class="language-[a-z]+"|start="\d+")$"#)?;
    let code = regex::Regex::new(r"(?s)<code[^>]*>.*?</code>")?;
    for text in hostile_texts()? {
        let mut r = base.clone();
        r.session.project = Some(text.clone());
        r.session.model = Some(text.clone());
        r.session.source = text.clone();
        for t in &mut r.turns {
            poison(t, &text);
        }
        let md = markdown(&r, DEFAULT_MAX_BYTES);
        check_structure(&r, &md);
        assert_eq!(shape(&md).turn_headings.len(), r.turns.len(), "{text:?}");
        let html = comrak::markdown_to_html(&md, &options());
        // The only tags are the writer's; log text is never a link, a mention or a reference
        // (GitHub links neither inside code).
        for c in tags.captures_iter(&html) {
            let name = &c[2];
            assert!(
                [
                    "h2",
                    "h3",
                    "p",
                    "table",
                    "thead",
                    "tbody",
                    "tr",
                    "th",
                    "td",
                    "code",
                    "pre",
                    "ul",
                    "ol",
                    "li",
                    "em",
                    "strong",
                    "hr",
                    "blockquote",
                    "details",
                    "summary"
                ]
                .contains(&name),
                "{text:?} made <{name}>"
            );
            let attrs = c[3].trim().trim_end_matches('/').trim_end();
            assert!(
                attrs.is_empty() || language.is_match(attrs),
                "{text:?} made attributes {attrs:?}"
            );
        }
        let outside_code = code.replace_all(&html, "");
        for word in ["@octocat", "#12", "javascript:", "example.com"] {
            assert!(
                !outside_code.contains(word),
                "{text:?}: {word} outside code"
            );
        }
    }
    Ok(())
}

/// A report of many turns, each with long texts, failed calls and patches.
fn large_report() -> anyhow::Result<Report> {
    let base = report(&fixtures().join("claude-code/outcome-evidence/session.jsonl"))?;
    let mut r = base.clone();
    r.turns.clear();
    for i in 0..120 {
        for t in &base.turns {
            let mut t = t.clone();
            t.number = r.turns.len() + 1;
            if let Some(p) = &mut t.prompt {
                p.text = format!("prompt {i}\n{}", "words of the prompt ".repeat(300));
            }
            if let Some(resp) = &mut t.response {
                resp.text = format!("response {i}\n{}", "words of the response ".repeat(300));
            }
            r.turns.push(t);
        }
    }
    Ok(r)
}

#[test]
fn the_budget_keeps_summary_failures_and_responses_and_says_what_it_left_out() -> anyhow::Result<()>
{
    let r = large_report()?;
    let failing = r
        .turns
        .iter()
        .position(|t| {
            t.steps.iter().any(|s| {
                matches!(s, StepView::ToolCall(c) if c.status != tracebook::events::ToolStatus::Ok)
            })
        })
        .expect("the fixture has a failed call");
    for budget in [6_000, 20_000, DEFAULT_MAX_BYTES, 200_000] {
        let md = markdown(&r, budget);
        assert!(md.len() <= budget, "{} > {budget}", md.len());
        check_structure(&r, &md);
        assert!(md.contains("**Outcome:** "));
        assert!(md.contains("**Left out to stay within the size limit:**"));
        assert!(md.contains("is the HTML"));
        let s = shape(&md);
        if s.turn_headings.len() > failing {
            assert!(md.contains("**Failed and unknown calls**"));
        }
        assert!(md.matches("**Response**").count() >= s.turn_headings.len() / 2);
    }
    // A budget that holds everything leaves nothing out.
    let whole = markdown(&r, usize::MAX);
    assert!(!whole.contains("Left out"));
    assert_eq!(shape(&whole).turn_headings.len(), r.turns.len());
    Ok(())
}

/// `render --format md` of each fixture, pinned, and read back as GFM with the structure the
/// writer means.
#[test]
fn render_format_md_of_each_fixture() {
    insta::glob!(fixtures(), "*/*/session.*", |path| {
        let out = crate::tracebook()
            .arg("render")
            .arg(path)
            .args(["--format", "md", "-o", "-"])
            .output()
            .expect("tracebook runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let md = String::from_utf8(out.stdout).expect("UTF-8");
        let report = report(path).expect("fixture renders");
        check_structure(&report, &md);
        assert!(md.len() <= DEFAULT_MAX_BYTES);
        insta::assert_snapshot!(md.replace(env!("CARGO_PKG_VERSION"), "[version]"));
    });
}

/// `--max-bytes` bounds what is written, and the text says what it left out.
#[test]
fn max_bytes_bounds_the_markdown() -> anyhow::Result<()> {
    let path = fixtures().join("codex/tool-outcomes/session.jsonl");
    let whole = crate::tracebook()
        .arg("render")
        .arg(&path)
        .args(["--format", "md", "-o", "-"])
        .output()?;
    assert!(!String::from_utf8(whole.stdout)?.contains("Left out"));
    let out = crate::tracebook()
        .arg("render")
        .arg(&path)
        .args(["--format", "md", "--max-bytes", "1600", "-o", "-"])
        .output()?;
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout)?;
    assert!(md.len() <= 1600, "{}", md.len());
    assert!(
        md.contains("**Left out to stay within the size limit:**"),
        "{md}"
    );
    check_structure(&report(&path)?, &md);
    Ok(())
}

/// `rerender --format md` gives a shared notebook's Markdown: the same as the session's.
#[test]
fn rerender_format_md_of_a_notebook_is_the_sessions_markdown() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let path = fixtures().join("codex/tool-outcomes/session.jsonl");
    let html = dir.path().join("s.html");
    crate::tracebook()
        .arg("render")
        .arg(&path)
        .arg("-o")
        .arg(&html)
        .assert()
        .success();
    let direct = crate::tracebook()
        .arg("render")
        .arg(&path)
        .args(["--format", "md", "-o", "-"])
        .output()?;
    crate::tracebook()
        .arg("rerender")
        .arg(&html)
        .args(["--format", "md"])
        .assert()
        .success();
    let again = std::fs::read_to_string(dir.path().join("s.md"))?;
    assert_eq!(again, String::from_utf8(direct.stdout)?);
    assert!(std::fs::read_to_string(&html)?.starts_with("<!doctype html>"));
    Ok(())
}

//! The one Markdown path: pulldown-cmark with fixed options, raw HTML turned into text, fenced
//! code marked for colouring, then one ammonia allowlist. Its output is [`SafeHtml`].

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd, html};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

use super::highlight::{self, Language};
use super::safe::SafeHtml;

static SANITIZER: LazyLock<ammonia::Builder<'static>> = LazyLock::new(|| {
    let mut b = ammonia::Builder::default();
    let tags: HashSet<&str> = [
        "a",
        "blockquote",
        "br",
        "code",
        "del",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "ol",
        "p",
        "pre",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
        "input",
        "sup",
        "sub",
        "span",
    ]
    .into_iter()
    .collect();
    // Spans carry only a diff's line classes.
    let classes: HashSet<&str> = highlight::DIFF_CLASSES.iter().copied().collect();
    b.tags(tags)
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        .add_tag_attributes("code", ["class", "data-lang", "data-diff"])
        .add_tag_attributes("input", ["type", "checked", "disabled"])
        .add_tag_attributes("td", ["align"])
        .add_tag_attributes("th", ["align"])
        .add_tag_attributes("ol", ["start"])
        .allowed_classes([("span", classes)].into_iter().collect());
    b
});

/// Renders Markdown to sanitized HTML. Raw HTML in the source is shown as text.
/// Fenced code blocks whose info string names a known language (or `diff`) are marked for
/// the page to colour.
pub fn render(markdown: &str) -> SafeHtml {
    let out = written(markdown);
    match kept_whole(&out) {
        Some(Cow::Borrowed(_)) => SafeHtml::trusted(out),
        Some(Cow::Owned(kept)) => SafeHtml::trusted(kept),
        None => SafeHtml::trusted(SANITIZER.clean(&out).to_string()),
    }
}

/// The Markdown writer's HTML for `markdown`, before the sanitizer.
fn written(markdown: &str) -> String {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    // A message's headings sit under the page's own: `# x` is an h3 under "Turn N" (h2), and
    // deeper levels stop at h6, so the page's outline keeps turns and content apart.
    let parser = Parser::new_ext(markdown, opts).map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        Event::Start(Tag::Heading {
            level,
            id,
            classes,
            attrs,
        }) => Event::Start(Tag::Heading {
            level: below_the_page(level),
            id,
            classes,
            attrs,
        }),
        Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(below_the_page(level))),
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, CodeBlocks { inner: parser });
    out
}

/// What the sanitizer writes for `html`, found without parsing it into a tree, when `html` is
/// markup the sanitizer keeps whole: only the allowlisted elements the Markdown writer makes
/// for paragraphs, headings, lists, quotes, tables, code and emphasis, well nested, with the
/// attributes the allowlist keeps (a list's start, a code block's language or its colouring
/// marker, a diff's line classes), and text escaped as the sanitizer escapes it. The sanitizer then changes nothing
/// but the closing slash of `<br />` and `<hr />` and a table cell's alignment, which it drops.
/// `None` for anything else (links, images, task lists, a character the parser would
/// rewrite), which the sanitizer cleans.
fn kept_whole(html: &str) -> Option<Cow<'_, str>> {
    // The parser turns carriage returns into line feeds and drops NUL; the writer escapes a
    // no-break space.
    if memchr::memchr2(b'\r', 0, html.as_bytes()).is_some() || html.contains('\u{a0}') {
        return None;
    }
    let mut open: Vec<&str> = Vec::new();
    let mut out: Option<String> = None;
    let mut rest = html;
    let mut done = 0;
    loop {
        let lt = rest.find(['<', '>', '&']).unwrap_or(rest.len());
        // Text straight inside a table's rows would be moved out of the table.
        let text = &rest[..lt];
        let in_rows = matches!(open.last(), Some(&("table" | "thead" | "tbody" | "tr")));
        if in_rows && !text.bytes().all(|b| b.is_ascii_whitespace()) {
            return None;
        }
        let at = &rest[lt..];
        match at.as_bytes().first() {
            None => break,
            Some(b'&') => {
                // Text holds only the three escapes the parser writes back as they are.
                let len = ["&amp;", "&lt;", "&gt;"]
                    .iter()
                    .find(|e| at.starts_with(**e))?
                    .len();
                if in_rows {
                    return None;
                }
                rest = &at[len..];
                continue;
            }
            Some(b'>') => return None,
            Some(_) => {}
        }
        let end = at.find('>')?;
        let tag = &at[1..end];
        rest = &at[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if open.pop() != Some(name) {
                return None;
            }
            continue;
        }
        let (tag, slash) = match tag.strip_suffix(" /") {
            Some(t) => (t, true),
            None => (tag, false),
        };
        let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        let parent = open.last().copied();
        // A block starts only among blocks that a paragraph, heading or cell does not hold, a
        // list item straight inside its list, a table's parts straight inside theirs, and
        // inline markup nowhere between a table's rows: elsewhere the parser would move it.
        let placed = match name {
            "p" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "blockquote" | "ul" | "ol" | "pre"
            | "hr" | "table" => open.iter().all(|e| is_container(e)),
            "li" => matches!(parent, Some("ul" | "ol")),
            "thead" | "tbody" => parent == Some("table"),
            "tr" => matches!(parent, Some("thead" | "tbody")),
            "th" | "td" => parent == Some("tr"),
            "em" | "strong" | "code" | "del" | "sub" | "sup" | "span" | "br" => {
                !matches!(parent, Some("table" | "thead" | "tbody" | "tr"))
            }
            _ => false,
        };
        let void = matches!(name, "br" | "hr");
        if !placed
            || (slash && !void)
            || (name == "pre" && rest.starts_with('\n'))
            || !attributes_kept(name, attrs)
        {
            return None;
        }
        if !void {
            open.push(name);
        }
        // What the sanitizer writes differently: a void element without its slash, a cell
        // without its alignment.
        if slash || matches!(name, "th" | "td") && !attrs.is_empty() {
            let start = html.len() - at.len();
            let o = out.get_or_insert_with(|| String::with_capacity(html.len()));
            o.push_str(&html[done..start]);
            o.push('<');
            o.push_str(name);
            o.push('>');
            done = start + end + 1;
        }
    }
    if !open.is_empty() {
        return None;
    }
    Some(match out {
        Some(mut o) => {
            o.push_str(&html[done..]);
            Cow::Owned(o)
        }
        None => Cow::Borrowed(html),
    })
}

/// Whether a block may start inside an open `element` without the parser closing or moving
/// anything.
fn is_container(element: &str) -> bool {
    matches!(element, "blockquote" | "ul" | "ol" | "li")
}

/// Whether the sanitizer keeps the attributes `attrs` (` name="value"`, as the Markdown writer
/// and the code marker write them) of element `name` as they are.
fn attributes_kept(name: &str, attrs: &str) -> bool {
    if attrs.is_empty() {
        return true;
    }
    let Some(value) = attrs
        .strip_suffix('"')
        .and_then(|a| a.split_once("=\""))
        .and_then(|(key, value)| (!value.contains('"')).then_some((key, value)))
    else {
        return false;
    };
    match (name, value) {
        ("ol", ("start", n)) => !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
        // The sanitizer drops a cell's alignment (the writer's only attribute on it).
        ("th" | "td", ("style", a)) => {
            matches!(
                a,
                "text-align: left" | "text-align: center" | "text-align: right"
            )
        }
        // The value is written back escaped the same way, quotes included.
        ("code", ("class", v)) => {
            let mut rest = v;
            while let Some(i) = rest.find(['&', '<', '>']) {
                let at = &rest[i..];
                let Some(e) = ["&amp;", "&lt;", "&gt;", "&quot;"]
                    .iter()
                    .find(|e| at.starts_with(**e))
                else {
                    return false;
                };
                rest = &at[e.len()..];
            }
            true
        }
        ("span", ("class", v)) => v.split(' ').all(|c| highlight::DIFF_CLASSES.contains(&c)),
        // A grammar's name, as the code marker writes it.
        ("code", ("data-lang" | "data-diff", v)) => {
            !v.is_empty() && v.bytes().all(|b| b.is_ascii_lowercase())
        }
        _ => false,
    }
}

/// A message's heading level two below its own, at most h6.
fn below_the_page(level: pulldown_cmark::HeadingLevel) -> pulldown_cmark::HeadingLevel {
    use pulldown_cmark::HeadingLevel::{H1, H2, H3, H4, H5, H6};
    match level {
        H1 => H3,
        H2 => H4,
        H3 => H5,
        H4 | H5 | H6 => H6,
    }
}

/// Replaces each fenced code block in a known language (or a diff) by one HTML event holding
/// its escaped text, marked for colouring; other blocks pass through unchanged.
struct CodeBlocks<I> {
    inner: I,
}

impl<'a, I: Iterator<Item = Event<'a>>> Iterator for CodeBlocks<I> {
    type Item = Event<'a>;

    fn next(&mut self) -> Option<Event<'a>> {
        let event = self.inner.next()?;
        let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) = &event else {
            return Some(event);
        };
        let token = info.split_whitespace().next().unwrap_or_default();
        let diff = highlight::is_diff(token);
        let lang = Language::from_name(token);
        if !diff && lang.is_none() {
            return Some(event);
        }
        let token = token.to_owned();
        let mut code = String::new();
        for e in self.inner.by_ref() {
            match e {
                Event::Text(t) => code.push_str(&t),
                Event::End(TagEnd::CodeBlock) => break,
                _ => {}
            }
        }
        let body = if diff {
            highlight::diff(&code, None)
        } else {
            highlight::code(&code, lang)
        };
        // Marked code is its own code element; code left plain (over the caps, or a diff of
        // no known language) goes in one that keeps the fence's name.
        let mut html = String::from("<pre>");
        if body.as_str().starts_with("<code") {
            html.push_str(body.as_str());
        } else {
            html.push_str("<code class=\"language-");
            highlight::escape_into(&mut html, &token.replace('"', ""));
            html.push_str("\">");
            html.push_str(body.as_str());
            html.push_str("</code>");
        }
        html.push_str("</pre>\n");
        Some(Event::Html(CowStr::from(html)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_common_markdown() {
        let h = render("# T\n\n**b** `c`\n\n- x\n\n```rust\nfn a() {}\n```");
        assert!(h.as_str().contains("<strong>b</strong>"));
        assert!(
            h.as_str()
                .contains("<pre><code data-lang=\"rust\">fn a() {}\n</code></pre>")
        );
    }

    #[test]
    fn a_message_heading_sits_under_the_turn_heading() {
        let h = render("# One\n\n## Two\n\n#### Four");
        assert!(h.as_str().contains("<h3>One</h3>"), "{}", h.as_str());
        assert!(h.as_str().contains("<h4>Two</h4>"));
        assert!(h.as_str().contains("<h6>Four</h6>"));
        assert!(!h.as_str().contains("<h1>") && !h.as_str().contains("<h2>"));
    }

    #[test]
    fn fenced_code_in_a_known_language_is_marked_for_colouring() {
        let h = render("```py\ndef f():\n    return \"</span><script>alert(1)</script>\"\n```");
        let s = h.as_str();
        assert!(
            s.starts_with("<pre><code data-lang=\"python\">def f():\n"),
            "{s}"
        );
        assert!(!s.contains("<script"), "{s}");
        assert!(
            s.contains("&lt;/span&gt;&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{s}"
        );
        assert!(s.ends_with("</code></pre>\n"), "{s}");
    }

    #[test]
    fn fenced_code_in_an_unknown_language_stays_as_cmark_renders_it() {
        let h = render("```nosuchlang\n<b>x</b> & y\n```\n\n```\nplain\n```");
        assert_eq!(
            h.as_str(),
            "<pre><code class=\"language-nosuchlang\">&lt;b&gt;x&lt;/b&gt; &amp; y\n</code></pre>\n<pre><code>plain\n</code></pre>\n"
        );
    }

    #[test]
    fn fenced_diffs_get_line_classes() {
        let h =
            render("```diff\n--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-let a = 1;\n+let a = 2;\n```");
        let s = h.as_str();
        assert!(s.contains("<span class=\"hunk\">@@ -1 +1 @@</span>"), "{s}");
        assert!(s.starts_with("<pre><code data-diff=\"rust\">"), "{s}");
        assert!(s.contains("<span class=\"del\">-let a = 1;</span>"), "{s}");
        assert!(s.contains("<span class=\"add\">+let a = 2;</span>"), "{s}");
        // A diff of no known language keeps its line classes in the fence's code element.
        let s = render("```diff\n@@ -1 +1 @@\n-a\n+b\n```").to_string();
        assert!(
            s.starts_with("<pre><code class=\"language-diff\"><span class=\"hunk\">"),
            "{s}"
        );
    }

    #[test]
    fn spans_keep_only_the_diff_line_classes() {
        let s = SANITIZER
            .clean("<span class=\"add evil\" style=\"color:red\" onclick=\"x()\">a</span><span class=\"del\">b</span>")
            .to_string();
        assert_eq!(
            s,
            "<span class=\"add\">a</span><span class=\"del\">b</span>"
        );
    }

    /// `markdown` as the writer makes it, and whether the sanitizer's output was found
    /// without it, which must then be the sanitizer's output exactly.
    fn kept_as_sanitized(markdown: &str) -> bool {
        let html = written(markdown);
        let cleaned = SANITIZER.clean(&html).to_string();
        match kept_whole(&html) {
            Some(kept) => {
                assert_eq!(kept, cleaned, "{markdown:?} written as {html:?}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn markup_the_sanitizer_keeps_is_found_without_it() {
        for md in [
            "plain text",
            "# One\n\n## Two\n\ntext with **bold**, *em*, `code` and ~~gone~~",
            "- a\n- b\n  - nested\n\n1. x\n2. y\n\n7. seven\n",
            "> quoted\n> > twice\n\n---\n\nline  \nbreak\\\nagain",
            "```rust\nfn a() -> &'static str { \"<b>\" }\n```\n\n    indented & <raw>\n",
            "```diff\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n```",
            "```nosuchlang\nx\n```\n\n```\nplain\n```",
            "quotes \" and ' and &amp; &lt; &gt; & < >",
            "cr\r\nlf",
            "| a | b | c |\n|---|:-:|--:|\n| c `x` | **d** | |\n| e |\n\n| h |\n|---|\n",
            "* item\n\n  para in item\n\n  ```\ncode in item\n```\n",
        ] {
            assert!(kept_as_sanitized(md), "{md:?}");
        }
        for md in [
            "[link](https://example.com)",
            "![img](https://x/i.png)",
            "- [ ] task\n- [x] done",
            "no\u{a0}break",
            "```a'b\nx\n```",
        ] {
            assert!(!kept_as_sanitized(md), "{md:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn markup_found_without_the_sanitizer_is_what_it_writes(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "# h\n", "### h3\n", "- item\n", "  - sub\n", "1. one\n", "3. three\n",
                "> q\n", "**b**", "*e*", "_u_", "`c`", "~~d~~", "```rust\nlet a = \"x\";\n```\n",
                "```\nplain\n```\n", "```diff\n+a\n-b\n```\n", "```py\"x\nq\n```\n",
                "```a'b\nq\n```\n", "    indented\n", "\n", "\n\n", " ", "  \n", "\\\n",
                "---\n", "a", "word ", "é", "&", "<", ">", "\"", "'", "&amp;", "&quot;",
                "&#39;", "&nbsp;", "\u{a0}", "\r\n", "\t", "\u{c}", "\u{1}", "\u{0}",
                "[l](https://x)", "[r](../x)", "<https://x>", "| a | b |\n|---|---|\n| c | d |\n",
                "- [ ] t\n", "|:-:|\n", "| x | **y** |\n", "| `z` |\n", "<b>x</b>", "<!-- c -->", "<p>", "</li>", "<br>", "*", "**", "`",
            ]), 0..24)
        ) {
            kept_as_sanitized(&pieces.concat());
        }

        #[test]
        fn text_found_without_the_sanitizer_is_what_it_writes(
            md in proptest::string::string_regex(r#"[-#*`>_~ \n0-9a-z&<>"'\\\[\]()!|.:/\x{a0}\x01\t\r]{0,120}"#).unwrap()
        ) {
            kept_as_sanitized(&md);
        }
    }

    #[test]
    fn raw_html_is_text_and_scripts_never_survive() {
        let h = render("<script>alert(1)</script> <img src=x onerror=alert(1)>");
        assert!(!h.as_str().contains("<script"), "{h}");
        assert!(!h.as_str().contains("<img"), "{h}");
        assert!(h.as_str().contains("&lt;script&gt;"), "{h}");
    }

    #[test]
    fn only_safe_absolute_links_survive() {
        let h = render(
            "[a](javascript:alert(1)) [b](https://example.com) [c](../x) ![i](https://x/i.png)",
        );
        assert!(!h.as_str().contains("javascript:"), "{h}");
        assert!(h.as_str().contains("href=\"https://example.com\""), "{h}");
        assert!(h.as_str().contains("rel=\"noopener noreferrer\""), "{h}");
        assert!(!h.as_str().contains("../x"), "{h}");
        assert!(!h.as_str().contains("<img"), "{h}");
    }
}

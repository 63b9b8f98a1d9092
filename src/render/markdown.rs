//! The one Markdown path: pulldown-cmark with fixed options, raw HTML turned into text, fenced
//! code highlighted, then one ammonia allowlist. Its output is [`SafeHtml`].

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd, html};
use std::collections::HashSet;
use std::sync::LazyLock;

use super::highlight::{self, Highlighter, Language};
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
    // Spans carry only the highlighter's token and diff-line classes.
    let classes: HashSet<&str> = highlight::CLASSES
        .iter()
        .chain(highlight::DIFF_CLASSES)
        .copied()
        .collect();
    b.tags(tags)
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        .add_tag_attributes("code", ["class"])
        .add_tag_attributes("input", ["type", "checked", "disabled"])
        .add_tag_attributes("td", ["align"])
        .add_tag_attributes("th", ["align"])
        .add_tag_attributes("ol", ["start"])
        .allowed_classes([("span", classes)].into_iter().collect());
    b
});

/// Renders Markdown to sanitized HTML. Raw HTML in the source is shown as text.
pub fn render(markdown: &str) -> SafeHtml {
    render_with(markdown, &Highlighter::new())
}

/// [`render`], highlighting fenced code blocks whose info string names a known language (or
/// `diff`) with `hl`, which remembers texts it has already highlighted on the page.
pub fn render_with(markdown: &str, hl: &Highlighter) -> SafeHtml {
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
    html::push_html(&mut out, CodeBlocks { inner: parser, hl });
    SafeHtml::trusted(SANITIZER.clean(&out).to_string())
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

/// Replaces each fenced code block in a known language by one HTML event holding the
/// highlighter's escaped, span-classed text; other blocks pass through unchanged.
struct CodeBlocks<'h, I> {
    inner: I,
    hl: &'h Highlighter,
}

impl<'a, I: Iterator<Item = Event<'a>>> Iterator for CodeBlocks<'_, I> {
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
            Some(self.hl.diff(&code, None))
        } else {
            lang.and_then(|l| self.hl.code(&code, l))
        };
        let mut html = String::from("<pre><code class=\"language-");
        highlight::escape_into(&mut html, &token.replace('"', ""));
        html.push_str("\">");
        match body {
            Some(h) => html.push_str(h.as_str()),
            None => highlight::escape_into(&mut html, &code),
        }
        html.push_str("</code></pre>\n");
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
        assert!(h.as_str().contains("<code class=\"language-rust\">"));
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
    fn fenced_code_in_a_known_language_is_highlighted() {
        let h = render("```python\ndef f():\n    return \"</span><script>alert(1)</script>\"\n```");
        let s = h.as_str();
        assert!(
            s.starts_with("<pre><code class=\"language-python\"><span class=\"hk\">def </span>"),
            "{s}"
        );
        assert!(s.contains("<span class=\"hs\">"), "{s}");
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
        assert!(
            s.contains("<span class=\"del\">-<span class=\"hk\">let</span>"),
            "{s}"
        );
        assert!(s.contains("<span class=\"add\">+"), "{s}");
    }

    #[test]
    fn spans_keep_only_the_highlighter_classes() {
        let s = SANITIZER
            .clean("<span class=\"hk evil\" style=\"color:red\" onclick=\"x()\">a</span><span class=\"add\">b</span>")
            .to_string();
        assert_eq!(s, "<span class=\"hk\">a</span><span class=\"add\">b</span>");
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

//! The one Markdown path: pulldown-cmark with fixed options, raw HTML turned into text, then
//! one ammonia allowlist. Its output type [`SafeHtml`] is the only value templates emit unescaped.

use pulldown_cmark::{Event, Options, Parser, html};
use std::collections::HashSet;
use std::fmt;
use std::sync::LazyLock;

/// HTML that has been through [`render`]; templates write it without escaping.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafeHtml(String);

impl SafeHtml {
    /// Wraps HTML the crate itself produced from escaped or sanitized parts.
    pub(crate) fn trusted(html: String) -> Self {
        Self(html)
    }

    /// The HTML text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SafeHtml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl askama::filters::HtmlSafe for SafeHtml {}

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
    ]
    .into_iter()
    .collect();
    b.tags(tags)
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .url_relative(ammonia::UrlRelative::Deny)
        .link_rel(Some("noopener noreferrer"))
        .add_tag_attributes("code", ["class"])
        .add_tag_attributes("input", ["type", "checked", "disabled"])
        .add_tag_attributes("td", ["align"])
        .add_tag_attributes("th", ["align"])
        .add_tag_attributes("ol", ["start"]);
    b
});

/// Renders Markdown to sanitized HTML. Raw HTML in the source is shown as text.
pub fn render(markdown: &str) -> SafeHtml {
    let mut opts = Options::empty();
    opts.insert(Options::ENABLE_TABLES);
    opts.insert(Options::ENABLE_STRIKETHROUGH);
    opts.insert(Options::ENABLE_TASKLISTS);
    let parser = Parser::new_ext(markdown, opts).map(|e| match e {
        Event::Html(t) | Event::InlineHtml(t) => Event::Text(t),
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    html::push_html(&mut out, parser);
    SafeHtml(SANITIZER.clean(&out).to_string())
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

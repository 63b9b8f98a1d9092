//! [`SafeHtml`]: the only value templates write unescaped. Only this folder makes one: from
//! sanitized Markdown, escaped text marked for colouring, the output of our own templates, and
//! our own compiled-in assets.

use std::fmt;

/// HTML that has been through [`super::markdown::render`], or that this folder composed from
/// escaped parts; templates write it without escaping.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafeHtml(String);

impl SafeHtml {
    /// Wraps HTML the crate itself produced from escaped or sanitized parts.
    pub(super) fn trusted(html: String) -> Self {
        Self(html)
    }

    /// The HTML text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// One of our own compiled-in assets (CSS or JS), never transcript content.
    pub(super) fn asset(text: &'static str) -> Self {
        Self::trusted(text.to_owned())
    }

    /// Several of our own compiled-in assets joined (the grammars a page needs), never
    /// transcript content.
    pub(super) fn assets(text: String) -> Self {
        Self::trusted(text)
    }

    /// Text we compose from our own constants (the CSP), never transcript content.
    pub(super) fn asset_text(text: &str) -> Self {
        Self::trusted(text.to_owned())
    }

    /// Output of one of our templates, which escape every transcript value.
    pub(super) fn rendered(html: String) -> Self {
        Self::trusted(html)
    }

    /// Base64 text, which holds no markup character.
    pub(super) fn base64(text: String) -> Self {
        Self::trusted(text)
    }
}

impl fmt::Display for SafeHtml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl askama::filters::HtmlSafe for SafeHtml {}

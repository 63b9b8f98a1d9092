//! Any text through the Markdown path: no panic, and no element or attribute outside the
//! allowlist comes out.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let html = tracebook::render::markdown::render(text);
    let lower = html.as_str().to_ascii_lowercase();
    // Text is escaped, so a raw `<` only ever starts a tag the sanitizer let through.
    for banned in ["<script", "<img", "<iframe", "<svg", "<style"] {
        assert!(!lower.contains(banned), "{banned} in {html}");
    }
    for tag in lower.split('<').skip(1).filter_map(|t| t.split('>').next()) {
        // An event handler would be an attribute such as ` onerror=` inside a tag; the same
        // words in the text between tags are harmless.
        let handler = tag
            .split(|c: char| c.is_ascii_whitespace() || c == '/')
            .any(|attr| attr.starts_with("on") && attr.contains('='));
        assert!(!handler, "event handler in <{tag}> of {html}");
        assert!(
            !tag.contains("javascript:"),
            "javascript: URL in <{tag}> of {html}"
        );
    }
});

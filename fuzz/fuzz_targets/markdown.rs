//! Any text through the Markdown path: no panic, and no element or attribute outside the
//! allowlist comes out.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let html = tracebook::report::markdown::render(text);
    let lower = html.as_str().to_ascii_lowercase();
    for banned in ["<script", "<img", "<iframe", "<svg", "<style", " on", "javascript:"] {
        if banned == " on" {
            // An event-handler attribute would look like ` onerror=` inside a tag.
            assert!(!lower.contains(" onerror=") && !lower.contains(" onload="), "{html}");
        } else {
            assert!(!lower.contains(banned), "{banned} in {html}");
        }
    }
});

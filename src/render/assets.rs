//! The page's own assets (`assets/`), compiled in, and the Content-Security-Policy that
//! allows exactly them by hash.

use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::sync::LazyLock;

pub(super) const CSS: &str = include_str!("../../assets/report.css");
pub(super) const JS: &str = include_str!("../../assets/report.js");
/// fzstd (MIT, `assets/vendor/fzstd.LICENSE`): the zstd decoder a page with stored turns
/// carries, about 8 KB.
pub(super) const DECODER: &str = concat!(
    "/*! fzstd 0.1.1 (c) 2020 Arjun Barrett, MIT License */\n",
    include_str!("../../assets/vendor/fzstd.js")
);

/// Prism 1.30.0 (MIT, `assets/vendor/prism.LICENSE`): the grammars the page colours code
/// with, about 70 KB, carried by a page that holds code marked for colouring
/// (`highlight.rs`). Told before it loads to colour nothing by itself: the page's script
/// asks it for tokens and builds their spans.
pub(super) const HIGHLIGHTER: &str = concat!(
    "/*! Prism 1.30.0 (c) 2012 Lea Verou, MIT License */\n",
    "window.Prism = { manual: true, disableWorkerMessageHandler: true };\n",
    include_str!("../../assets/vendor/prism.js")
);

pub(super) static CSP: LazyLock<String> =
    LazyLock::new(|| csp_for(&[DECODER, HIGHLIGHTER, JS], CSS));

/// The Content-Security-Policy of a page whose only scripts and style are `js` and `css`,
/// allowed by hash; every network load is forbidden.
fn csp_for(js: &[&str], css: &str) -> String {
    let scripts: Vec<String> = js.iter().map(|j| format!("'{}'", hash(j))).collect();
    format!(
        "default-src 'none'; script-src {}; style-src '{}'; img-src data:; \
         base-uri 'none'; form-action 'none'",
        scripts.join(" "),
        hash(css)
    )
}

fn hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

pub(super) const INDEX_CSS: &str = include_str!("../../assets/index.css");
pub(super) const INDEX_JS: &str = include_str!("../../assets/index.js");

pub(super) static INDEX_CSP: LazyLock<String> =
    LazyLock::new(|| csp_for(&[DECODER, INDEX_JS], INDEX_CSS));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csp_forbids_network_loads_and_pins_assets_by_hash() {
        assert!(CSP.starts_with("default-src 'none'; script-src 'sha256-"));
        assert!(CSP.contains("img-src data:"));
        assert!(!CSP.contains("unsafe-inline"));
    }
}

//! The page's own assets (`assets/`), compiled in, and the Content-Security-Policy that
//! allows exactly them by hash.

use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::sync::LazyLock;

pub(super) const CSS: &str = include_str!("../../assets/report.css");
pub(super) const JS: &str = include_str!("../../assets/report.js");
/// fzstd (MIT, `assets/vendor/fzstd.LICENSE`): the zstd decoder a page with stored turns
/// carries, about 8 KB.
pub(super) const DECODER: &str = concat!(
    "/*! fzstd 0.1.1 (c) 2020 Arjun Barrett, MIT License */\n",
    include_str!("../../assets/vendor/fzstd.js")
);

/// Prism 1.30.0 (MIT, `assets/vendor/prism/LICENSE`): its core, told before it loads to
/// colour nothing by itself (the page's script asks it for tokens and builds their spans).
const PRISM_CORE: &str = concat!(
    "/*! Prism 1.30.0 (c) 2012 Lea Verou, MIT License */\n",
    "window.Prism = { manual: true, disableWorkerMessageHandler: true };\n",
    include_str!("../../assets/vendor/prism/core.js")
);

/// Prism's grammars, each with those it builds on, every one after those: the names are the
/// ones `highlight.rs` marks code with (and a few only others build on).
pub(super) const GRAMMARS: &[(&str, &[&str], &str)] = &[
    (
        "clike",
        &[],
        include_str!("../../assets/vendor/prism/clike.js"),
    ),
    (
        "markup",
        &[],
        include_str!("../../assets/vendor/prism/markup.js"),
    ),
    ("css", &[], include_str!("../../assets/vendor/prism/css.js")),
    (
        "javascript",
        &["clike"],
        include_str!("../../assets/vendor/prism/javascript.js"),
    ),
    (
        "markup-templating",
        &["markup"],
        include_str!("../../assets/vendor/prism/markup-templating.js"),
    ),
    (
        "php",
        &["markup-templating"],
        include_str!("../../assets/vendor/prism/php.js"),
    ),
    (
        "typescript",
        &["javascript"],
        include_str!("../../assets/vendor/prism/typescript.js"),
    ),
    (
        "jsx",
        &["markup", "javascript"],
        include_str!("../../assets/vendor/prism/jsx.js"),
    ),
    (
        "tsx",
        &["jsx", "typescript"],
        include_str!("../../assets/vendor/prism/tsx.js"),
    ),
    (
        "python",
        &[],
        include_str!("../../assets/vendor/prism/python.js"),
    ),
    (
        "bash",
        &[],
        include_str!("../../assets/vendor/prism/bash.js"),
    ),
    (
        "json",
        &[],
        include_str!("../../assets/vendor/prism/json.js"),
    ),
    (
        "yaml",
        &[],
        include_str!("../../assets/vendor/prism/yaml.js"),
    ),
    (
        "toml",
        &[],
        include_str!("../../assets/vendor/prism/toml.js"),
    ),
    (
        "go",
        &["clike"],
        include_str!("../../assets/vendor/prism/go.js"),
    ),
    (
        "rust",
        &[],
        include_str!("../../assets/vendor/prism/rust.js"),
    ),
    (
        "c",
        &["clike"],
        include_str!("../../assets/vendor/prism/c.js"),
    ),
    (
        "cpp",
        &["c"],
        include_str!("../../assets/vendor/prism/cpp.js"),
    ),
    (
        "java",
        &["clike"],
        include_str!("../../assets/vendor/prism/java.js"),
    ),
    (
        "ruby",
        &["clike"],
        include_str!("../../assets/vendor/prism/ruby.js"),
    ),
    ("sql", &[], include_str!("../../assets/vendor/prism/sql.js")),
    ("lua", &[], include_str!("../../assets/vendor/prism/lua.js")),
    (
        "docker",
        &[],
        include_str!("../../assets/vendor/prism/docker.js"),
    ),
    (
        "makefile",
        &[],
        include_str!("../../assets/vendor/prism/makefile.js"),
    ),
    ("ini", &[], include_str!("../../assets/vendor/prism/ini.js")),
    (
        "csharp",
        &["clike"],
        include_str!("../../assets/vendor/prism/csharp.js"),
    ),
    (
        "kotlin",
        &["clike"],
        include_str!("../../assets/vendor/prism/kotlin.js"),
    ),
    (
        "swift",
        &[],
        include_str!("../../assets/vendor/prism/swift.js"),
    ),
];

/// The script that colours a page's code: Prism's core and the grammars `used` names, with
/// those they build on (a page carries only the grammars its code is marked with: a session of
/// Python and shell, about 16 KB of the 72 KB).
pub(super) fn highlighter(used: &BTreeSet<&str>) -> String {
    let mut needed: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&str> = used.iter().copied().collect();
    while let Some(name) = todo.pop() {
        if needed.insert(name)
            && let Some((_, builds_on, _)) = GRAMMARS.iter().find(|(n, _, _)| *n == name)
        {
            todo.extend(builds_on.iter().copied());
        }
    }
    let mut script = String::from(PRISM_CORE);
    for (name, _, source) in GRAMMARS {
        if needed.contains(name) {
            script.push('\n');
            script.push_str(source);
        }
    }
    script
}

/// The Content-Security-Policy of a notebook: its scripts (the decoder, the highlighter its
/// code needs, its own) and style allowed by hash.
pub(super) fn csp(highlighter: Option<&str>) -> String {
    let mut scripts = vec![DECODER];
    scripts.extend(highlighter);
    scripts.push(JS);
    csp_for(&scripts, CSS)
}

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
        let csp = csp(None);
        assert!(csp.starts_with("default-src 'none'; script-src 'sha256-"));
        assert!(csp.contains("img-src data:"));
        assert!(!csp.contains("unsafe-inline"));
    }

    #[test]
    fn a_page_carries_the_grammars_its_code_needs_and_what_they_build_on() {
        let script = highlighter(&["tsx", "python"].into_iter().collect());
        for name in [
            "clike",
            "markup",
            "javascript",
            "typescript",
            "jsx",
            "tsx",
            "python",
        ] {
            let (_, _, source) = GRAMMARS.iter().find(|(n, _, _)| *n == name).expect(name);
            assert!(script.contains(source), "{name} missing");
        }
        assert!(
            !script.contains("languages.rust="),
            "a grammar the page does not need"
        );
        // Each grammar comes after those it builds on.
        let at = |name: &str| {
            let (_, _, source) = GRAMMARS.iter().find(|(n, _, _)| *n == name).expect(name);
            script.find(source).expect(name)
        };
        assert!(at("clike") < at("javascript") && at("javascript") < at("typescript"));
        assert!(at("jsx") < at("tsx") && at("typescript") < at("tsx"));
        let csp = csp(Some(&script));
        assert!(csp.contains(&format!("'{}'", hash(&script))), "{csp}");
    }

    #[test]
    fn every_grammar_builds_only_on_those_before_it() {
        for (i, (name, builds_on, _)) in GRAMMARS.iter().enumerate() {
            for b in *builds_on {
                assert!(
                    GRAMMARS[..i].iter().any(|(n, _, _)| n == b),
                    "{name} builds on {b}, which is not before it"
                );
            }
        }
    }
}

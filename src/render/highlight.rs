//! Code marked for colouring: commands, file contents, fenced code and diffs are written as
//! escaped text in an element that names their language (`data-lang`, or `data-diff` for the
//! code of a diff), and the page's script colours their tokens in the reader's browser, with
//! the vendored Prism grammars (`assets/vendor/prism.js`), in a few short token classes the
//! stylesheet colours in light, dark and print.
//!
//! The render itself only escapes: colouring costs it nothing, so every marked text on the
//! page is coloured, not the first few kilobytes, and the notebook reads the same with
//! JavaScript off (plain text, diffs keep their line classes). Colouring only wraps text in
//! spans, so copying and searching it is unchanged. Work in the browser is bounded too: text
//! over [`MAX_BYTES`], or with a line over [`MAX_LINE_BYTES`], is not marked.

use std::collections::BTreeSet;

use super::safe::SafeHtml;
use crate::report::model::ReadGutter;

/// Text longer than this many bytes is not marked for colouring: its tokens would cost the
/// reader's browser more time than they give.
pub const MAX_BYTES: usize = 16 * 1024;
/// A line longer than this many bytes (minified code, data) leaves its whole text unmarked.
pub const MAX_LINE_BYTES: usize = 2 * 1024;

/// The line classes of a rendered diff: added, removed, hunk header, file header.
pub const DIFF_CLASSES: &[&str] = &["add", "del", "hunk", "file"];

/// The names of the page script's grammars, each with the names readers, Markdown fences and
/// file extensions use for it (a whole file name for files that have no extension).
const GRAMMARS: &[(&str, &[&str])] = &[
    (
        "bash",
        &[
            "bash", "sh", "shell", "console", "zsh", "ksh", "bashrc", "zshrc", "profile",
        ],
    ),
    ("javascript", &["javascript", "js", "mjs", "cjs", "node"]),
    ("typescript", &["typescript", "ts", "mts", "cts"]),
    ("jsx", &["jsx"]),
    ("tsx", &["tsx"]),
    (
        "python",
        &["python", "py", "py3", "python3", "pyw", "pyi", "gyp"],
    ),
    (
        "json",
        &[
            "json", "jsonc", "json5", "jsonl", "ndjson", "geojson", "ipynb",
        ],
    ),
    ("yaml", &["yaml", "yml"]),
    ("toml", &["toml", "lock"]),
    ("go", &["go", "golang"]),
    ("rust", &["rust", "rs"]),
    ("c", &["c", "h"]),
    (
        "cpp",
        &["cpp", "c++", "cc", "cxx", "hpp", "hh", "hxx", "ino"],
    ),
    ("csharp", &["csharp", "cs", "c#"]),
    ("java", &["java"]),
    ("kotlin", &["kotlin", "kt", "kts"]),
    ("swift", &["swift"]),
    (
        "ruby",
        &["ruby", "rb", "rake", "gemspec", "gemfile", "rakefile"],
    ),
    ("php", &["php"]),
    ("lua", &["lua"]),
    ("sql", &["sql"]),
    ("css", &["css"]),
    (
        "markup",
        &[
            "html", "htm", "xhtml", "xml", "svg", "xsd", "xsl", "plist", "vue", "svelte",
        ],
    ),
    ("docker", &["dockerfile", "docker", "containerfile"]),
    ("makefile", &["makefile", "make", "mk", "gnumakefile"]),
    ("ini", &["ini", "cfg", "editorconfig", "gitconfig"]),
];

/// A language the page's script colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Language(&'static str);

impl Language {
    /// The language a Markdown fence or a reader names (`rust`, `py`, `sh`, `ts` …); `None` for
    /// plain text and names no grammar knows. `diff` and `patch` are not languages here: see
    /// [`is_diff`].
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        GRAMMARS
            .iter()
            .find(|(_, names)| names.contains(&name.as_str()))
            .map(|(grammar, _)| Language(grammar))
    }

    /// The language of a file, by its extension (or its whole name, as for `Makefile`).
    pub fn from_path(path: &str) -> Option<Self> {
        let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
        match file.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => Self::from_name(ext),
            Some((_, dotfile)) => Self::from_name(dotfile),
            None => Self::from_name(file),
        }
    }

    /// Shell commands.
    pub fn shell() -> Self {
        Language("bash")
    }

    /// The grammar's name, as the page's script knows it.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// True when a Markdown fence names a diff.
pub fn is_diff(name: &str) -> bool {
    matches!(
        name.trim().to_ascii_lowercase().as_str(),
        "diff" | "patch" | "udiff"
    )
}

/// Appends `text` with `&`, `<` and `>` escaped.
pub fn escape_into(out: &mut String, text: &str) {
    let bytes = text.as_bytes();
    let mut done = 0;
    for i in memchr::memchr3_iter(b'&', b'<', b'>', bytes) {
        out.push_str(&text[done..i]);
        out.push_str(match bytes[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            _ => "&gt;",
        });
        done = i + 1;
    }
    out.push_str(&text[done..]);
}

/// Text as escaped HTML.
pub fn plain_html(text: &str) -> SafeHtml {
    let mut html = String::with_capacity(text.len() + text.len() / 16);
    escape_into(&mut html, text);
    SafeHtml::trusted(html)
}

/// Whether text is small enough to be coloured.
fn within_caps(text: &str) -> bool {
    text.len() <= MAX_BYTES && text.split('\n').all(|l| l.len() <= MAX_LINE_BYTES)
}

/// Code in `lang`: in a `<code data-lang>` the page colours when it is within the caps, else
/// plain.
pub fn code(text: &str, lang: Option<Language>) -> SafeHtml {
    marked(text, lang, ReadGutter::None)
}

/// File contents a reading tool returned, each line after the tool's `gutter` (which the
/// page leaves plain), in `lang`.
pub fn numbered(text: &str, lang: Option<Language>, gutter: ReadGutter) -> SafeHtml {
    marked(text, lang, gutter)
}

fn marked(text: &str, lang: Option<Language>, gutter: ReadGutter) -> SafeHtml {
    let Some(lang) = lang.filter(|_| !text.is_empty() && within_caps(text)) else {
        return plain_html(text);
    };
    let mut html = String::with_capacity(text.len() + text.len() / 16 + 48);
    html.push_str("<code data-lang=\"");
    html.push_str(lang.as_str());
    html.push('"');
    if let Some(name) = gutter_name(gutter) {
        html.push_str(" data-gutter=\"");
        html.push_str(name);
        html.push('"');
    }
    html.push('>');
    escape_into(&mut html, text);
    html.push_str("</code>");
    SafeHtml::trusted(html)
}

/// The name the page's script knows a gutter by; `None` for no gutter.
fn gutter_name(gutter: ReadGutter) -> Option<&'static str> {
    match gutter {
        ReadGutter::None => None,
        ReadGutter::Tab => Some("tab"),
        ReadGutter::Arrow => Some("arrow"),
        ReadGutter::Pipe => Some("pipe"),
        ReadGutter::Colon => Some("colon"),
    }
}

/// Adds the languages of the code marked for colouring in rendered HTML to `used` (text
/// cannot hold a marker: its `<` is escaped).
pub fn languages_in(html: &str, used: &mut BTreeSet<&'static str>) {
    for at in memchr::memmem::find_iter(html.as_bytes(), b"<code data-") {
        let rest = &html[at + "<code data-".len()..];
        let value = rest
            .strip_prefix("lang=\"")
            .or_else(|| rest.strip_prefix("diff=\""))
            .and_then(|v| v.split_once('"'))
            .map(|(v, _)| v);
        if let Some((grammar, _)) = value.and_then(|v| GRAMMARS.iter().find(|(g, _)| *g == v)) {
            used.insert(grammar);
        }
    }
}

/// How a diff line is shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DiffLine {
    File,
    Hunk,
    Add,
    Del,
    Context,
    Other,
}

fn classify(lines: &[&str], i: usize) -> DiffLine {
    let line = lines[i];
    let next = lines.get(i + 1).copied().unwrap_or("");
    let prev = if i > 0 { lines[i - 1] } else { "" };
    if line.starts_with("@@") {
        DiffLine::Hunk
    } else if (line.starts_with("--- ") && next.starts_with("+++ "))
        || (line.starts_with("+++ ") && prev.starts_with("--- "))
        || line.starts_with("diff --git ")
    {
        DiffLine::File
    } else if line.starts_with('+') {
        DiffLine::Add
    } else if line.starts_with('-') {
        DiffLine::Del
    } else if line.starts_with(' ') || line.trim_end_matches(['\n', '\r']).is_empty() {
        DiffLine::Context
    } else {
        DiffLine::Other
    }
}

/// The path a `+++ ` header names, without a `b/` prefix or a trailing timestamp.
fn header_path(line: &str) -> &str {
    let path = line.trim_start_matches("+++ ").trim_end();
    let path = path.split('\t').next().unwrap_or(path);
    path.strip_prefix("b/").unwrap_or(path)
}

/// The language a diff's code is read in: the first `+++` header's file, else `lang`.
fn diff_language(text: &str, lang: Option<Language>) -> Option<Language> {
    text.lines()
        .filter(|l| l.starts_with("+++ "))
        .find_map(|l| Language::from_path(header_path(l)))
        .or(lang)
}

/// A diff as HTML: every line in a span of its class ([`DIFF_CLASSES`]; context lines in
/// none), inside a `<code data-diff>` naming the language of its code when one is known and
/// the diff is within the caps, for the page to colour.
pub fn diff(text: &str, lang: Option<Language>) -> SafeHtml {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut html = String::with_capacity(text.len() + lines.len() * 24 + 48);
    let lang = diff_language(text, lang).filter(|_| within_caps(text));
    if let Some(l) = lang {
        html.push_str("<code data-diff=\"");
        html.push_str(l.as_str());
        html.push_str("\">");
    }
    for (i, line) in lines.iter().enumerate() {
        let class = match classify(&lines, i) {
            DiffLine::File => Some("file"),
            DiffLine::Hunk => Some("hunk"),
            DiffLine::Add => Some("add"),
            DiffLine::Del => Some("del"),
            DiffLine::Context | DiffLine::Other => None,
        };
        let body = line.strip_suffix('\n').unwrap_or(line);
        match class {
            Some(c) => {
                html.push_str("<span class=\"");
                html.push_str(c);
                html.push_str("\">");
                escape_into(&mut html, body);
                html.push_str("</span>");
            }
            None => escape_into(&mut html, body),
        }
        html.push_str(&line[body.len()..]);
    }
    if lang.is_some() {
        html.push_str("</code>");
    }
    SafeHtml::trusted(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn escaping_replaces_exactly_the_three_markup_characters(text in "\\PC*") {
            let mut out = String::new();
            escape_into(&mut out, &text);
            let expected: String = text
                .chars()
                .map(|c| match c {
                    '&' => "&amp;".to_owned(),
                    '<' => "&lt;".to_owned(),
                    '>' => "&gt;".to_owned(),
                    c => c.to_string(),
                })
                .collect();
            proptest::prop_assert_eq!(out, expected);
        }

        /// Whatever the text, the diff's HTML reads as the text, and its only tags are the
        /// code element and the line spans.
        #[test]
        fn a_diff_is_its_text_in_line_spans(text in "([-+@ d\\\\]?[\\PC<>&]{0,12}\n?){0,8}") {
            let html = diff(&text, Language::from_name("rust")).to_string();
            proptest::prop_assert_eq!(text_of(&html), text);
            for (i, _) in html.match_indices('<') {
                let tag = &html[i..];
                proptest::prop_assert!(
                    ["<span class=\"", "</span>", "<code data-diff=\"rust\">", "</code>"]
                        .iter()
                        .any(|t| tag.starts_with(t)),
                    "{}", tag
                );
            }
        }
    }

    /// The text of HTML: tags removed, entities decoded.
    fn text_of(html: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                _ if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    }

    #[test]
    fn code_is_marked_with_its_language_and_its_text_unchanged() {
        let src = "fn main() {\n    let s = \"x\";\n}\n";
        let html = code(src, Language::from_name("rs")).to_string();
        assert_eq!(
            html,
            "<code data-lang=\"rust\">fn main() {\n    let s = \"x\";\n}\n</code>"
        );
        assert_eq!(code(src, None).to_string(), src);
    }

    #[test]
    fn hostile_code_is_escaped_and_stays_text() {
        let src = "x = \"</span><script>alert(1)</script>\" # <b>&amp;\n</code></pre><img src=x onerror=alert(1)>";
        for l in ["py", "bash", "js", "html"] {
            let html = code(src, Language::from_name(l)).to_string();
            assert!(!html.contains("<script"), "{l}: {html}");
            assert!(!html.contains("<img"), "{l}: {html}");
            assert_eq!(html.matches("</code>").count(), 1, "{l}: {html}");
            assert_eq!(text_of(&html), src, "{l}");
        }
    }

    #[test]
    fn languages_are_known_by_name_extension_and_file_name() {
        assert_eq!(Language::from_name("no-such-language"), None);
        assert_eq!(Language::from_name("text"), None);
        assert_eq!(Language::from_name(""), None);
        assert_eq!(Language::from_path("notes.unknownext"), None);
        assert_eq!(Language::from_path("README.md"), None);
        let name = |l: Option<Language>| l.map(Language::as_str);
        assert_eq!(name(Language::from_path("/a/b.rs")), Some("rust"));
        assert_eq!(name(Language::from_path("src/app.tsx")), Some("tsx"));
        assert_eq!(name(Language::from_path("C:\\x\\Main.CS")), Some("csharp"));
        assert_eq!(name(Language::from_path("Makefile")), Some("makefile"));
        assert_eq!(
            name(Language::from_path("deploy/Dockerfile")),
            Some("docker")
        );
        assert_eq!(name(Language::from_path(".bashrc")), Some("bash"));
        assert_eq!(name(Language::from_name(" Python ")), Some("python"));
        assert_eq!(name(Language::from_name("sh")), Some("bash"));
    }

    /// Every language is a grammar the page can carry, which defines it.
    #[test]
    fn every_language_is_a_grammar_the_page_can_carry() {
        for (grammar, _) in GRAMMARS {
            let source = super::super::assets::GRAMMARS
                .iter()
                .find(|(n, _, _)| n == grammar)
                .map(|(_, _, s)| *s);
            assert!(
                source.is_some_and(|s| s.contains(&format!("languages.{grammar}="))),
                "{grammar} is not a grammar the page can carry"
            );
        }
    }

    #[test]
    fn text_over_the_size_caps_is_not_marked() {
        let rust = Language::from_name("rust");
        let big = "let x = 1;\n".repeat(MAX_BYTES / 11 + 1);
        assert!(big.len() > MAX_BYTES);
        assert!(!code(&big, rust).to_string().contains("data-lang"));
        let long_line = format!("let x = \"{}\";\n", "a".repeat(MAX_LINE_BYTES));
        assert!(!code(&long_line, rust).to_string().contains("data-lang"));
        // Diffs over the caps keep their line classes.
        let patch = format!(
            "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-{}\n+let y = 2;\n",
            "a".repeat(MAX_LINE_BYTES)
        );
        let d = diff(&patch, None).to_string();
        assert!(d.contains("<span class=\"add\">+let y = 2;</span>"), "{d}");
        assert!(!d.contains("data-diff"), "{d}");
        assert_eq!(text_of(&d), patch);
    }

    #[test]
    fn a_diff_line_may_start_with_any_character() {
        let patch = "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n→ moved\n\u{a0}kept\n+é\n";
        let d = diff(patch, None).to_string();
        assert_eq!(text_of(&d), patch);
        assert!(d.contains("<span class=\"add\">+é</span>"), "{d}");
    }

    #[test]
    fn diff_lines_get_line_classes_and_the_language_of_their_file() {
        let patch = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn a() {}\n-let x = 1;\n+let x = \"</span><script>\";\n\\ No newline at end of file\n";
        let html = diff(patch, Language::from_name("py")).to_string();
        assert!(html.starts_with("<code data-diff=\"rust\"><span class=\"file\">--- a/src/lib.rs</span>\n<span class=\"file\">+++ b/src/lib.rs</span>\n<span class=\"hunk\">@@ -1,3 +1,3 @@</span>\n fn a() {}\n<span class=\"del\">-let x = 1;</span>\n"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert_eq!(text_of(&html), patch);
        // Without a header, the language given.
        let html = diff("@@ -1 +1 @@\n-a\n+b\n", Language::from_name("py")).to_string();
        assert!(html.starts_with("<code data-diff=\"python\">"), "{html}");
        let html = diff("@@ -1 +1 @@\n-a\n+b\n", None).to_string();
        assert!(html.starts_with("<span class=\"hunk\">"), "{html}");
    }

    #[test]
    fn a_removed_sql_comment_is_not_a_file_header() {
        let patch = "@@ -1,2 +1,2 @@\n--- old comment\n+-- new comment\n";
        let d = diff(patch, Language::from_name("sql")).to_string();
        assert!(d.contains("<span class=\"del\">-"), "{d}");
        assert!(!d.contains("class=\"file\""), "{d}");
    }

    #[test]
    fn numbered_file_contents_name_their_gutter() {
        let src = "     1\tdef total(items):\n     2\t    return 0  # none\n";
        let py = Language::from_name("py");
        let html = numbered(src, py, ReadGutter::Tab).to_string();
        assert!(
            html.starts_with("<code data-lang=\"python\" data-gutter=\"tab\">     1\tdef"),
            "{html}"
        );
        assert_eq!(text_of(&html), src);
        let html = numbered(src, py, ReadGutter::None).to_string();
        assert!(html.starts_with("<code data-lang=\"python\">"), "{html}");
    }
}

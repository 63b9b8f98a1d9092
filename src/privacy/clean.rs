//! Cleaning: terminal escapes and control characters are removed from every string, so tool
//! output is shown as the text it printed, never interpreted; embedded images and binary
//! attachments (base64) are dropped unless the user keeps images.

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

use super::Redactor;

/// ANSI/VT escape sequences: CSI (`ESC [ … final`), OSC (`ESC ] … BEL|ST`), and two-byte ones.
static ESCAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
        .expect("fixed regex")
});

/// A base64 data URI, image or otherwise.
static DATA_URI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"data:(?P<type>[a-zA-Z0-9.+-]+/[a-zA-Z0-9.+-]+)(?:;[a-zA-Z0-9=.+-]+)*;base64,[A-Za-z0-9+/=\s\\n]{16,}")
        .expect("fixed regex")
});

/// A long run of base64 with no spaces: an attachment's body, never prose.
static BLOB: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/]{512,}={0,2}").expect("fixed regex"));

/// Removes terminal escapes and control characters and drops base64 attachments.
pub struct Clean {
    /// Keep `data:image/…;base64,…` URIs (`--keep-images`).
    pub keep_images: bool,
}

impl Redactor for Clean {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        if out.contains(['\x1b', '\u{9b}']) {
            out = Cow::Owned(ESCAPES.replace_all(&out, "").into_owned());
        }
        if out.chars().any(is_hidden_control) {
            let cleaned: String = out
                .replace("\r\n", "\n")
                .chars()
                .map(|c| if c == '\r' { '\n' } else { c })
                .filter(|c| !is_hidden_control(*c))
                .collect();
            out = Cow::Owned(cleaned);
        }
        if out.contains(";base64,") {
            let keep = self.keep_images;
            let replaced = DATA_URI.replace_all(&out, |c: &regex::Captures<'_>| {
                let whole = c.get(0).map_or("", |m| m.as_str());
                let kind = c.name("type").map_or("", |m| m.as_str());
                if keep && kind.starts_with("image/") {
                    whole.to_owned()
                } else {
                    format!("«dropped:{kind}, {} bytes»", whole.len() * 3 / 4)
                }
            });
            if let Cow::Owned(s) = replaced {
                out = Cow::Owned(s);
            }
        }
        if out.len() >= 512 && BLOB.is_match(&out) {
            let replaced = BLOB.replace_all(&out, |c: &regex::Captures<'_>| {
                let len = c.get(0).map_or(0, |m| m.len());
                format!("«dropped:base64, {} bytes»", len * 3 / 4)
            });
            out = Cow::Owned(replaced.into_owned());
        }
        out
    }
}

/// Control characters that would be hidden or interpreted: C0 except tab and newline, DEL,
/// C1, and the bidirectional overrides that reorder displayed text.
fn is_hidden_control(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clean(s: &str) -> String {
        Clean { keep_images: false }.redact(s).into_owned()
    }

    #[test]
    fn terminal_escapes_and_controls_are_removed() {
        assert_eq!(clean("\x1b[31merror\x1b[0m: x"), "error: x");
        assert_eq!(clean("\x1b]8;;https://e.com\x07link\x1b]8;;\x07"), "link");
        assert_eq!(clean("a\x07b\x00c\x08d"), "abcd");
        assert_eq!(clean("one\r\ntwo\rthree"), "one\ntwo\nthree");
        assert_eq!(clean("x\u{202e}gnp.exe"), "xgnp.exe");
        assert_eq!(clean("tab\tand\nnewline"), "tab\tand\nnewline");
    }

    #[test]
    fn images_and_blobs_are_dropped_unless_kept() {
        let body = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        let uri = format!("see data:image/png;base64,{body} here");
        let out = clean(&uri);
        assert!(!out.contains("iVBOR"), "{out}");
        assert!(out.contains("«dropped:image/png"), "{out}");
        let kept = Clean { keep_images: true }.redact(&uri).into_owned();
        assert_eq!(kept, uri);
        let pdf = format!("data:application/pdf;base64,{body}");
        assert!(!Clean { keep_images: true }.redact(&pdf).contains("iVBOR"));
        let blob = "QUJD".repeat(200);
        assert!(!clean(&blob).contains("QUJDQUJD"));
        assert_eq!(clean("short QUJDRA== text"), "short QUJDRA== text");
    }
}

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
        // One byte scan rules out escapes and controls for most text.
        let controls = may_hold_controls(text.as_bytes());
        if controls && out.contains(['\x1b', '\u{9b}']) {
            out = Cow::Owned(ESCAPES.replace_all(&out, "").into_owned());
        }
        if controls && out.chars().any(is_hidden_control) {
            let cleaned: String = out
                .replace("\r\n", "\n")
                .chars()
                .map(|c| if c == '\r' { '\n' } else { c })
                .filter(|c| !is_hidden_control(*c))
                .collect();
            out = Cow::Owned(cleaned);
        }
        if memchr::memmem::find(out.as_bytes(), b";base64,").is_some() {
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
        if out.len() >= BLOB_RUN && has_base64_run(out.as_bytes()) && BLOB.is_match(&out) {
            let replaced = BLOB.replace_all(&out, |c: &regex::Captures<'_>| {
                let len = c.get(0).map_or(0, |m| m.len());
                format!("«dropped:base64, {} bytes»", len * 3 / 4)
            });
            out = Cow::Owned(replaced.into_owned());
        }
        out
    }
}

/// The shortest run of base64 characters [`BLOB`] drops.
const BLOB_RUN: usize = 512;

/// Whether `text` holds a run of [`BLOB_RUN`] base64 characters (`[A-Za-z0-9+/]`), which
/// rules out [`BLOB`] before its regex runs. Such a run covers a whole aligned block of half
/// its length, so blocks holding any other byte (prose, code: every line ends) are passed over
/// with a loop the compiler vectorizes, and runs are counted only around a block of base64.
fn has_base64_run(text: &[u8]) -> bool {
    const BLOCK: usize = BLOB_RUN / 2;
    let base64 = |b: u8| b.is_ascii_alphanumeric() | (b == b'+') | (b == b'/');
    let candidate = text
        .chunks_exact(BLOCK)
        .any(|block| block.iter().fold(true, |all, &b| all & base64(b)));
    if !candidate {
        return false;
    }
    let mut run = 0;
    for &b in text {
        if base64(b) {
            run += 1;
            if run >= BLOB_RUN {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Whether UTF-8 `text` may hold a terminal escape or a character [`is_hidden_control`]
/// removes: a C0 control other than tab and newline, DEL, a C1 control (`C2 80`..`C2 9F`,
/// which includes the one-byte CSI `U+009B`), or a bidirectional mark or override (`E2 80 8E`,
/// `E2 80 8F`, `E2 80 AA`..`AE`, `E2 81 A6`..`A9`). Exact for valid UTF-8: when it says no,
/// the slower character checks would find nothing. Blocks without any lead byte of those are
/// passed over with a loop the compiler vectorizes.
fn may_hold_controls(text: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let lead = |b: u8| {
        ((b < 0x20) & (b != b'\n') & (b != b'\t')) | (b == 0x7f) | (b == 0xc2) | (b == 0xe2)
    };
    text.chunks(BLOCK).enumerate().any(|(n, block)| {
        block.iter().fold(false, |any, &b| any | lead(b))
            && (n * BLOCK..n * BLOCK + block.len()).any(|i| control_at(text, i))
    })
}

/// Whether a character [`may_hold_controls`] looks for starts at byte `i`.
fn control_at(text: &[u8], i: usize) -> bool {
    match text[i] {
        b'\n' | b'\t' => false,
        0x00..=0x1f | 0x7f => true,
        0xc2 => text.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)),
        0xe2 => match (text.get(i + 1), text.get(i + 2)) {
            (Some(0x80), Some(n)) => matches!(n, 0x8e | 0x8f | 0xaa..=0xae),
            (Some(0x81), Some(n)) => matches!(n, 0xa6..=0xa9),
            _ => false,
        },
        _ => false,
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
    fn the_byte_scan_agrees_with_the_character_checks() {
        // Every character from U+0000 to U+3000, alone and inside text.
        for c in (0u32..0x3000).filter_map(char::from_u32) {
            let alone = c.to_string();
            let inside = format!("a{c}b");
            let expected = is_hidden_control(c) || c == '\x1b' || c == '\u{9b}';
            assert_eq!(may_hold_controls(alone.as_bytes()), expected, "{c:?}");
            assert_eq!(may_hold_controls(inside.as_bytes()), expected, "{c:?}");
        }
    }

    #[test]
    fn base64_runs_are_found_by_length() {
        assert!(has_base64_run("QUJD".repeat(128).as_bytes()));
        assert!(!has_base64_run("QUJD".repeat(127).as_bytes()));
        assert!(!has_base64_run(
            format!("{} {}", "Q".repeat(300), "Q".repeat(300)).as_bytes()
        ));
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

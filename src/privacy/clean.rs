//! Cleaning: terminal escapes and control characters are removed from every string, so tool
//! output is shown as the text it printed, never interpreted; characters that take no room on
//! screen (zero-width spaces and joiners, soft hyphens, invisible separators, tag characters)
//! are shown as a visible escape, `⟨U+200B⟩`, so nothing can be hidden in plain sight;
//! embedded images and binary attachments (base64) are dropped unless the user keeps images.

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
        let escape = |t: &[u8]| {
            memchr::memchr(0x1b, t).is_some()
                || memchr::memmem::find(t, "\u{9b}".as_bytes()).is_some()
        };
        if controls && escape(out.as_bytes()) {
            out = Cow::Owned(ESCAPES.replace_all(&out, "").into_owned());
        }
        if controls && may_hold_hidden_controls(out.as_bytes()) {
            let cleaned: String = out
                .replace("\r\n", "\n")
                .chars()
                .map(|c| if c == '\r' { '\n' } else { c })
                .filter(|c| !is_hidden_control(*c))
                .collect();
            out = Cow::Owned(cleaned);
        }
        // No hidden control is left, so what the scan finds now is a character to show.
        if controls && may_hold_controls(out.as_bytes()) {
            out = Cow::Owned(show_invisible(&out));
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

/// Whether UTF-8 `text` may hold a terminal escape, a character [`is_hidden_control`] removes
/// or one [`is_invisible`] shows: a C0 control other than tab and newline, DEL, or a character
/// whose first byte is one of those of the few blocks that hold the others (`C2` for C1
/// controls and the soft hyphen, `CD`, `D8`, `E1`, `E2`, `E3`, `EF`, `F3`). Exact for valid
/// UTF-8: when it says no, the slower character checks would find nothing. Blocks without any
/// of those bytes are passed over with a loop the compiler vectorizes.
fn may_hold_controls(text: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let lead = |b: u8| {
        ((b < 0x20) & (b != b'\n') & (b != b'\t'))
            | (b == 0x7f)
            | (b == 0xc2)
            | (b == 0xcd)
            | (b == 0xd8)
            | (0xe1..=0xe3).contains(&b)
            | (b == 0xef)
            | (b == 0xf3)
    };
    text.chunks(BLOCK).enumerate().any(|(n, block)| {
        block.iter().fold(false, |any, &b| any | lead(b))
            && (n * BLOCK..n * BLOCK + block.len()).any(|i| control_at(text, i))
    })
}

/// Whether UTF-8 `text` holds a character [`is_hidden_control`] removes: a C0 control other
/// than tab and newline, DEL, a C1 control (`C2 80`..`C2 9F`) or a bidirectional control
/// (`E2 80 8E`, `E2 80 8F`, `E2 80 AA`..`E2 80 AE`, `E2 81 A6`..`E2 81 A9`). Exact for valid
/// UTF-8, with the same vectorized pass over blocks as [`may_hold_controls`].
fn may_hold_hidden_controls(text: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let lead = |b: u8| {
        ((b < 0x20) & (b != b'\n') & (b != b'\t')) | (b == 0x7f) | (b == 0xc2) | (b == 0xe2)
    };
    text.chunks(BLOCK).enumerate().any(|(n, block)| {
        block.iter().fold(false, |any, &b| any | lead(b))
            && (n * BLOCK..n * BLOCK + block.len()).any(|i| hidden_control_at(text, i))
    })
}

/// Whether a character [`is_hidden_control`] removes starts at byte `i`.
fn hidden_control_at(text: &[u8], i: usize) -> bool {
    let next = |k: usize| text.get(i + k).copied().unwrap_or(0);
    match text[i] {
        b'\n' | b'\t' => false,
        0x00..=0x1f | 0x7f => true,
        0xc2 => (0x80..=0x9f).contains(&next(1)),
        0xe2 => matches!(
            (next(1), next(2)),
            (0x80, 0x8e | 0x8f | 0xaa..=0xae) | (0x81, 0xa6..=0xa9)
        ),
        _ => false,
    }
}

/// Whether a character [`may_hold_controls`] looks for starts at byte `i`.
fn control_at(text: &[u8], i: usize) -> bool {
    let len = match text[i] {
        b'\n' | b'\t' => return false,
        0x00..=0x1f | 0x7f => return true,
        0xc2 | 0xcd | 0xd8 => 2,
        0xe1..=0xe3 | 0xef => 3,
        0xf3 => 4,
        _ => return false,
    };
    text.get(i..i + len)
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|s| s.chars().next())
        .is_some_and(|c| is_hidden_control(c) || is_invisible(c) || c == '\u{9b}')
}

/// Characters that take no room on screen, or none a reader would notice, and so could hide
/// text in plain sight: zero-width spaces, joiners and non-joiners, the word joiner and the
/// invisible operators, the byte order mark, soft hyphens, the line and paragraph separators,
/// the Arabic letter mark, the Hangul fillers, the Mongolian and Khmer invisible signs,
/// interlinear annotation marks, variation selectors and tag characters (which can spell a
/// whole hidden message). [`show_invisible`] shows them, except where a script or an emoji
/// needs one.
fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{34f}' | '\u{61c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200d}' | '\u{2028}' | '\u{2029}'
        | '\u{2060}'..='\u{2064}' | '\u{206a}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}'
        | '\u{feff}' | '\u{ffa0}' | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}'
        | '\u{e0100}'..='\u{e01ef}')
}

/// A character's visible escape: `⟨U+200B⟩`.
fn escape(c: char, out: &mut String) {
    use std::fmt::Write as _;
    let _ = write!(out, "⟨U+{:04X}⟩", u32::from(c));
}

/// Replaces each [`is_invisible`] character by its visible escape, except where it does a
/// visible job: a zero-width joiner or non-joiner between two characters of a script that
/// joins letters, or of emoji (both past U+058F, so never inside Latin, Greek or Cyrillic
/// words, where one can only hide a break); a variation selector U+FE00..U+FE0F right after
/// the character it styles (emoji presentation); and the tag characters of a flag emoji
/// (U+1F3F4, tags, U+E007F).
fn show_invisible(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let joins = |x: Option<char>| x.is_some_and(|x| x > '\u{58f}' && !is_invisible(x));
        let kept = match c {
            '\u{200c}' | '\u{200d}' => joins(prev) && joins(next),
            '\u{fe00}'..='\u{fe0f}' => prev.is_some_and(|p| !is_invisible(p) && !p.is_whitespace()),
            _ => false,
        };
        if c == '\u{1f3f4}' {
            // A flag: its tag characters up to the cancel tag.
            let tags = chars[i + 1..]
                .iter()
                .take_while(|t| ('\u{e0020}'..='\u{e007e}').contains(*t))
                .count();
            if tags > 0 && chars.get(i + 1 + tags) == Some(&'\u{e007f}') {
                out.extend(&chars[i..i + tags + 2]);
                i += tags + 2;
                continue;
            }
        }
        if is_invisible(c) && !kept {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// Text shown on a terminal (standard error, the `list` table): every control character, line
/// break included, every bidirectional control and every `is_invisible` character becomes its
/// visible escape, so a file name or a session id cannot move the cursor, retitle the window,
/// clear the screen or start a line of its own.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    let shown = |c: char| {
        c.is_control()
            || is_invisible(c)
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
    };
    if !text.chars().any(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if shown(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`for_terminal`] for text of several lines: each line is shown, the line breaks kept.
pub fn lines_for_terminal(text: &str) -> String {
    text.split('\n')
        .map(for_terminal)
        .collect::<Vec<_>>()
        .join("\n")
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
    fn invisible_characters_are_shown_as_visible_escapes() {
        assert_eq!(clean("pass\u{200b}word"), "pass⟨U+200B⟩word");
        assert_eq!(
            clean("a\u{feff}b\u{ad}c\u{2060}d"),
            "a⟨U+FEFF⟩b⟨U+00AD⟩c⟨U+2060⟩d"
        );
        assert_eq!(clean("x\u{2028}y\u{2029}"), "x⟨U+2028⟩y⟨U+2029⟩");
        assert_eq!(
            clean("\u{61c}\u{3164}\u{115f}\u{ffa0}"),
            "⟨U+061C⟩⟨U+3164⟩⟨U+115F⟩⟨U+FFA0⟩"
        );
        // "ASCII smuggling": text spelled in tag characters.
        assert_eq!(
            clean("src/evil\u{e0041}\u{e0042}txt.exe"),
            "src/evil⟨U+E0041⟩⟨U+E0042⟩txt.exe"
        );
        // A joiner inside a Latin word hides a break; in an emoji sequence or a Persian word it
        // is the text itself.
        assert_eq!(clean("ad\u{200d}min"), "ad⟨U+200D⟩min");
        assert_eq!(clean("👨\u{200d}👩\u{200d}👧"), "👨\u{200d}👩\u{200d}👧");
        assert_eq!(clean("می\u{200c}خواهم"), "می\u{200c}خواهم");
        assert_eq!(clean("❤\u{fe0f} ok"), "❤\u{fe0f} ok");
        assert_eq!(clean("x \u{fe0f}\u{fe0f}"), "x ⟨U+FE0F⟩⟨U+FE0F⟩");
        let england = "🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}";
        assert_eq!(clean(england), england);
        // Idempotent.
        let once = clean("a\u{200b}b");
        assert_eq!(clean(&once), once);
    }

    #[test]
    fn terminal_text_has_no_control_or_invisible_character_left() {
        assert_eq!(
            for_terminal("bad\x1b]0;title\x07\nname\u{202e}.jsonl"),
            "bad⟨U+001B⟩]0;title⟨U+0007⟩⟨U+000A⟩name⟨U+202E⟩.jsonl"
        );
        assert!(matches!(for_terminal("plain.jsonl"), Cow::Borrowed(_)));
        assert_eq!(lines_for_terminal("one\x1b[2J\ntwo"), "one⟨U+001B⟩[2J\ntwo");
    }

    #[test]
    fn the_byte_scan_agrees_with_the_character_checks() {
        // Every character of the blocks the scan looks at, alone and inside text.
        let chars = (0u32..0x3200)
            .chain(0xfe00..0x10000)
            .chain(0x1f000..0x1f400)
            .chain(0xe0000..0xe0200)
            .filter_map(char::from_u32);
        for c in chars {
            let alone = c.to_string();
            let inside = format!("a{c}b");
            let expected = is_hidden_control(c) || is_invisible(c) || c == '\x1b' || c == '\u{9b}';
            assert_eq!(may_hold_controls(alone.as_bytes()), expected, "{c:?}");
            assert_eq!(may_hold_controls(inside.as_bytes()), expected, "{c:?}");
        }
    }

    #[test]
    fn the_hidden_control_scan_agrees_with_the_character_check() {
        let chars = (0u32..0x3000)
            .chain(0xfe00..0x10000)
            .chain(0xe0000..0xe0200)
            .filter_map(char::from_u32);
        for c in chars {
            let expected = is_hidden_control(c);
            for text in [
                c.to_string(),
                format!("a{c}b"),
                format!("{}{c}", "x".repeat(63)),
            ] {
                assert_eq!(may_hold_hidden_controls(text.as_bytes()), expected, "{c:?}");
            }
        }
    }

    proptest::proptest! {
        /// On any text the byte scans say what the character checks say: hidden controls,
        /// and, once they are gone, characters to show.
        #[test]
        fn the_byte_scans_agree_with_the_character_checks_on_any_text(
            text in "(\\PC|[\\x00-\\x1f\\x7f-\\u{9f}\\u{200b}-\\u{200f}\\u{202a}-\\u{202e}\\u{2060}-\\u{2069}\\u{ad}\\u{feff}])*"
        ) {
            let hidden = text.chars().any(is_hidden_control);
            proptest::prop_assert_eq!(may_hold_hidden_controls(text.as_bytes()), hidden);
            let rest: String = text.chars().filter(|c| !is_hidden_control(*c)).collect();
            proptest::prop_assert_eq!(
                may_hold_controls(rest.as_bytes()),
                rest.chars().any(is_invisible)
            );
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

//! JSON text as harnesses write it: lone UTF-16 surrogate escapes mended, and parse errors
//! described without echoing the input.

/// The warning for a record kept with a lone surrogate escape mended.
pub(super) const LONE_SURROGATE: &str = "a lone UTF-16 surrogate escape (half of a character, as a string cut inside an emoji \
     leaves it) replaced with U+FFFD; record kept";

/// Parses JSON text with `parse`; when it fails and the text holds a lone UTF-16 surrogate
/// escape (valid JSON that serde_json rejects), parses it again with each one replaced by
/// `\ufffd`. Says whether it did.
pub(crate) fn parse_mended<T>(
    text: &str,
    parse: impl Fn(&str) -> serde_json::Result<T>,
) -> serde_json::Result<(T, bool)> {
    match parse(text) {
        Ok(v) => Ok((v, false)),
        Err(e) => match mend_surrogates(text) {
            Some(mended) => parse(&mended).map(|v| (v, true)).map_err(|_| e),
            None => Err(e),
        },
    }
}

/// The text with each lone UTF-16 surrogate escape (a `\ud83d` not followed by the escape of
/// its other half, or a trailing half alone) replaced by `\ufffd`; `None` when there is none.
/// Node's `JSON.stringify` writes one for a string cut inside an emoji.
pub(crate) fn mend_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let unit = |at: usize| -> Option<u16> {
        if b.get(at) != Some(&b'\\') || b.get(at + 1) != Some(&b'u') {
            return None;
        }
        let hex = std::str::from_utf8(b.get(at + 2..at + 6)?).ok()?;
        u16::from_str_radix(hex, 16).ok()
    };
    let mut out: Option<String> = None;
    let (mut copied, mut i) = (0, 0);
    while let Some(off) = b.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        let at = i + off;
        let Some(u) = unit(at) else {
            // Another escape (`\\`, `\"`, `\n`): its second character is not a new one.
            i = at + 2;
            continue;
        };
        let lone = match u {
            0xD800..=0xDBFF => match unit(at + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i = at + 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            let o = out.get_or_insert_with(String::new);
            o.push_str(&text[copied..at]);
            o.push_str("\\ufffd");
            copied = at + 6;
        }
        i = at + 6;
    }
    out.map(|mut o| {
        o.push_str(&text[copied..]);
        o
    })
}

/// serde_json's message without echoing input text.
pub(super) fn describe_json_error(e: &serde_json::Error) -> String {
    // serde_json stops 128 levels down and calls it a syntax error.
    if e.to_string().starts_with("recursion limit exceeded") {
        return format!("nested more than 128 levels deep, at column {}", e.column());
    }
    let what = match e.classify() {
        serde_json::error::Category::Eof => "unexpected end",
        serde_json::error::Category::Syntax => "syntax error",
        serde_json::error::Category::Data => "bad data",
        serde_json::error::Category::Io => "read error",
    };
    format!("{what} at column {}", e.column())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogate_escapes_are_mended_and_pairs_kept() {
        assert_eq!(
            mend_surrogates(r#""a\ud83d""#).as_deref(),
            Some(r#""a\ufffd""#)
        );
        assert_eq!(
            mend_surrogates(r#""\ude42x""#).as_deref(),
            Some(r#""\ufffdx""#)
        );
        assert_eq!(mend_surrogates(r#""\ud83d\ude42""#), None);
        assert_eq!(
            mend_surrogates(r#""\\ud83d""#),
            None,
            "an escaped backslash"
        );
        assert_eq!(
            mend_surrogates(r#""\ud83d\ud83d\ude42""#).as_deref(),
            Some(r#""\ufffd\ud83d\ude42""#)
        );
        assert_eq!(mend_surrogates(r#""\ud8"#), None);
    }
}

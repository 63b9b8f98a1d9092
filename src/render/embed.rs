//! The report model embedded in the page: written here, a window of turns at a time, and
//! found and decoded here when a notebook is read back.

use base64::Engine as _;
use std::borrow::Cow;
use std::io::Write as _;
use std::ops::Range;

use crate::report::compat::{self, CompatError, ReadBack};
use crate::report::model::{Report, TurnView};

mod json;

/// Why a notebook's embedded report could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// No element with `id="tracebook-report"`.
    #[error(
        "no embedded report (an element with id=\"tracebook-report\"); is it a tracebook notebook?"
    )]
    NoReport,
    /// The element's compressed data cannot be decoded.
    #[error("the embedded report cannot be decoded: {0}")]
    Encoding(String),
    /// The decoded JSON cannot be read as a report.
    #[error(transparent)]
    Report(#[from] CompatError),
}

/// Reads the report embedded in a notebook through the compatibility projection.
pub fn read(html: &str) -> Result<ReadBack, EmbedError> {
    Ok(compat::from_json(&json(html)?)?)
}

/// Where a notebook's embedded report element is: its opening tag, and its text, which ends
/// at the element's own end tag (`<template>` today, `<script>` in earlier notebooks).
///
/// The attribute is looked for inside a tag only: the same words in the transcript's text (a
/// session that grepped a notebook) are text, where a `<` is always escaped, so the nearest `<`
/// before them is followed by a `>` first.
pub fn element(html: &str) -> Option<(Range<usize>, Range<usize>)> {
    const ATTR: &str = "id=\"tracebook-report\"";
    let mut from = 0;
    while let Some(found) = html[from..].find(ATTR) {
        let at = from + found;
        from = at + ATTR.len();
        let Some(tag_start) = html[..at].rfind('<') else {
            continue;
        };
        if html[tag_start..at].contains('>') {
            continue;
        }
        let Some(name) = html[tag_start + 1..at].split_ascii_whitespace().next() else {
            continue;
        };
        if !matches!(name, "template" | "script") {
            continue;
        }
        let open_end = html[at..].find('>')? + at + 1;
        let close = html[open_end..].find(&format!("</{name}>"))? + open_end;
        return Some((tag_start..open_end, open_end..close));
    }
    None
}

/// The most a compressed embedded report may expand to (a notebook is untrusted input).
const MAX_DECODED: u64 = 4 << 30;

/// The embedded report's JSON text, taken from a notebook's HTML: plain JSON in the first
/// notebooks, then gzip in base64 (`data-encoding="gzip+base64"`), now zstd in base64
/// (`data-encoding="zstd+base64"`).
pub fn json(html: &str) -> Result<Cow<'_, str>, EmbedError> {
    use std::io::Read as _;
    let (tag, body) = element(html).ok_or(EmbedError::NoReport)?;
    let body = &html[body];
    let tag = &html[tag];
    let zstd = tag.contains("data-encoding=\"zstd+base64\"");
    if !zstd && !tag.contains("data-encoding=\"gzip+base64\"") {
        return Ok(Cow::Borrowed(body));
    }
    let encoding = |e: std::io::Error| EmbedError::Encoding(e.to_string());
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body.trim())
        .map_err(|e| EmbedError::Encoding(e.to_string()))?;
    let reader: Box<dyn std::io::Read + '_> = if zstd {
        Box::new(zstd::stream::read::Decoder::new(bytes.as_slice()).map_err(encoding)?)
    } else {
        Box::new(flate2::read::GzDecoder::new(bytes.as_slice()))
    };
    let mut text = String::new();
    reader
        .take(MAX_DECODED)
        .read_to_string(&mut text)
        .map_err(encoding)?;
    Ok(Cow::Owned(text))
}

/// The report model as zstd-compressed JSON in base64: inert inside its `<template>` element
/// (base64 has neither `<` nor `&`), and a small fraction of the JSON's size. The JSON is
/// written straight into the compressor, a window of turns at a time, so the turns can be let
/// go as they are rendered: `turns` comes first, then the report's other fields.
pub(super) struct EmbeddedReport {
    /// Small writes (serde_json's pieces) reach the compressor in large blocks: each of its
    /// writes costs as much as a small write itself. `None` once a write failed.
    out: Option<Compressing>,
    /// The report's fields other than `turns`.
    rest: serde_json::Map<String, serde_json::Value>,
    /// Turns written so far.
    written: usize,
    /// One turn's JSON, before it goes to the compressor.
    turn: Vec<u8>,
}

/// The most room kept for one turn's JSON between turns.
const TURN_ROOM: usize = 1 << 20;

/// The JSON's way into the compressor.
type Compressing = std::io::BufWriter<zstd::stream::write::Encoder<'static, Vec<u8>>>;

impl EmbeddedReport {
    /// Starts with the report's other fields in hand (its turns taken out).
    pub(super) fn start(report: &Report) -> Self {
        let mut rest = match serde_json::to_value(report) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        rest.remove("turns");
        let mut out = zstd::stream::write::Encoder::new(Vec::new(), 3)
            .ok()
            .map(|z| std::io::BufWriter::with_capacity(256 * 1024, z));
        Self::write(&mut out, |w| w.write_all(b"{\"turns\":["));
        Self {
            out,
            rest,
            written: 0,
            turn: Vec::new(),
        }
    }

    /// Writes the next turns. Each turn's JSON is written by [`json::write`], which writes
    /// what serde_json writes at a fraction of the cost, or by serde_json where that writer
    /// leaves a value to it.
    pub(super) fn turns(&mut self, turns: &[TurnView]) {
        for turn in turns {
            let buf = &mut self.turn;
            buf.clear();
            if self.written > 0 {
                buf.push(b',');
            }
            if json::write(buf, turn).is_err() {
                buf.truncate(usize::from(self.written > 0));
                if serde_json::to_writer(&mut *buf, turn).is_err() {
                    self.out = None;
                }
            }
            let buf = &self.turn;
            Self::write(&mut self.out, |w| w.write_all(buf));
            self.written += 1;
            // A long turn's room is not held for the rest of the render.
            if self.turn.capacity() > TURN_ROOM {
                self.turn = Vec::new();
            }
        }
    }

    /// Writes the other fields and returns the whole in base64 (empty if writing failed,
    /// which only running out of memory can cause).
    pub(super) fn finish(mut self) -> String {
        let rest = std::mem::take(&mut self.rest);
        Self::write(&mut self.out, |w| {
            w.write_all(b"]")?;
            for (key, value) in &rest {
                w.write_all(b",")?;
                serde_json::to_writer(&mut *w, key)?;
                w.write_all(b":")?;
                serde_json::to_writer(&mut *w, value)?;
            }
            w.write_all(b"}")
        });
        let bytes = self
            .out
            .and_then(|buf| buf.into_inner().ok())
            .and_then(|z| z.finish().ok())
            .unwrap_or_default();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Runs `f` on the writer, and lets the writer go once a write fails. The writer's own
    /// type, not a `dyn Write`: each of serde_json's small writes is then a copy into the
    /// buffer, not a call through a pointer.
    fn write(
        out: &mut Option<Compressing>,
        f: impl FnOnce(&mut Compressing) -> std::io::Result<()>,
    ) {
        if let Some(w) = out.as_mut()
            && f(w).is_err()
        {
            *out = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_embedded_report() -> anyhow::Result<()> {
        let html = r#"<p>x</p><script type="application/json" id="tracebook-report">{"a":"\u003c/script\u003e"}</script>"#;
        let text = json(html)?;
        let v: serde_json::Value = serde_json::from_str(&text)?;
        assert_eq!(v["a"], "</script>");
        assert!(matches!(json("<p>"), Err(EmbedError::NoReport)));
        Ok(())
    }

    #[test]
    fn gzip_and_zstd_elements_read_back_from_scripts_and_templates() -> anyhow::Result<()> {
        use base64::Engine as _;
        use std::io::Write as _;
        let text = r#"{"schema_version":1,"a":"</script>"}"#;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes())?;
        let b64 = base64::engine::general_purpose::STANDARD;
        for (encoding, bytes) in [
            ("gzip+base64", gz.finish()?),
            ("zstd+base64", zstd::encode_all(text.as_bytes(), 3)?),
        ] {
            let data = b64.encode(bytes);
            // Earlier notebooks hold it in a script element, today's in a template; a page's
            // own scripts follow it.
            let script = format!(
                "<script type=\"application/octet-stream\" id=\"tracebook-report\" \
                 data-encoding=\"{encoding}\">{data}</script><script>x()</script>"
            );
            let template = format!(
                "<template id=\"tracebook-report\" data-encoding=\"{encoding}\">{data}</template>\
                 <script>x()</script>"
            );
            assert_eq!(json(&script)?, text, "{encoding}");
            assert_eq!(json(&template)?, text, "{encoding}");
        }
        Ok(())
    }

    #[test]
    fn the_embedded_report_cannot_close_its_element_and_reads_back() -> anyhow::Result<()> {
        let mut report: Report = serde_json::from_value(serde_json::json!({
            "schema_version": 1,
            "meta": {"generated_at": "2026-01-01T00:00:00Z", "tool_version": "0"},
            "session": {"harness": "h", "harness_label": "H", "source": "s"},
            "summary": {"turns": 0, "complete": 0, "incomplete": 0, "tool_calls": 0,
                        "ok": 0, "error": 0, "unknown": 0},
            "turns": [], "unlinked_subagents": [], "skipped": [], "warnings": []
        }))?;
        report.session.project = Some("</script><script>alert(1)</script>".to_owned());
        let mut data = EmbeddedReport::start(&report);
        data.turns(&report.turns);
        let data = data.finish();
        assert!(
            data.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        );
        let html = format!(
            "<template id=\"tracebook-report\" data-encoding=\"zstd+base64\">{data}</template>"
        );
        let back = read(&html)?;
        assert_eq!(back.report, report);
        Ok(())
    }
}

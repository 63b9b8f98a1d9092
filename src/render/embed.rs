//! The report model embedded in the page: written here, a window of turns at a time, and
//! found and decoded here when a notebook is read back.

use base64::Engine as _;
use std::borrow::Cow;
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
/// written a window of turns at a time, so the turns can be let go as they are rendered:
/// `turns` comes first, then the report's other fields. It is compressed a frame at a time,
/// each frame (about [`FRAME_BYTES`] of JSON, ending after a turn) in one call: a streaming
/// compressor copies what it is given into its own window, which wraps around, and matches
/// across the wrap cost more than in one piece of memory. The frames follow each other in one
/// zstd stream, which any zstd decoder reads whole.
pub(super) struct EmbeddedReport {
    /// `None` once compressing failed, which only running out of memory can cause.
    compressor: Option<zstd::bulk::Compressor<'static>>,
    /// The JSON of the frame being written.
    json: Vec<u8>,
    /// JSON per frame.
    frame: usize,
    /// The frames compressed so far, in base64.
    base64: String,
    /// The last frame's bytes past its last whole group of three, not yet in base64.
    carry: Vec<u8>,
    /// The report's fields other than `turns`.
    rest: serde_json::Map<String, serde_json::Value>,
    /// Turns written so far.
    written: usize,
}

/// The JSON compressed as one frame. Each frame starts without the window the one before
/// it ended with: at this size a 100 MB session's notebook is 0.7-1% larger than with one
/// stream, and the frame held while it is written adds about 2.5 MiB to the render's peak
/// (at twice the size, 0.1-0.3% and 6.7 MiB).
const FRAME_BYTES: usize = 4 << 20;

impl EmbeddedReport {
    /// Starts with the report's other fields in hand (its turns taken out).
    pub(super) fn start(report: &Report) -> Self {
        Self::framed(report, FRAME_BYTES)
    }

    /// [`EmbeddedReport::start`] with `frame` bytes of JSON per frame.
    fn framed(report: &Report, frame: usize) -> Self {
        let mut rest = match serde_json::to_value(report) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        rest.remove("turns");
        // Room for a frame and the turn that ends it, so the buffer is not copied as it grows.
        let mut json = Vec::with_capacity(frame + frame / 4);
        json.extend_from_slice(b"{\"turns\":[");
        Self {
            compressor: zstd::bulk::Compressor::new(3).ok(),
            json,
            frame,
            base64: String::new(),
            carry: Vec::new(),
            rest,
            written: 0,
        }
    }

    /// Writes the next turns. Each turn's JSON is written by [`json::write`], which writes
    /// what serde_json writes at a fraction of the cost, or by serde_json where that writer
    /// leaves a value to it.
    pub(super) fn turns(&mut self, turns: &[TurnView]) {
        for turn in turns {
            if self.written > 0 {
                self.json.push(b',');
            }
            let start = self.json.len();
            if json::write(&mut self.json, turn).is_err() {
                self.json.truncate(start);
                if serde_json::to_writer(&mut self.json, turn).is_err() {
                    self.compressor = None;
                }
            }
            self.written += 1;
            if self.json.len() >= self.frame {
                self.compress(false);
            }
        }
    }

    /// Writes the other fields and returns the whole in base64 (empty if writing failed,
    /// which only running out of memory can cause).
    pub(super) fn finish(mut self) -> String {
        let rest = std::mem::take(&mut self.rest);
        let write = |w: &mut Vec<u8>| -> serde_json::Result<()> {
            w.push(b']');
            for (key, value) in &rest {
                w.push(b',');
                serde_json::to_writer(&mut *w, key)?;
                w.push(b':');
                serde_json::to_writer(&mut *w, value)?;
            }
            w.push(b'}');
            Ok(())
        };
        if write(&mut self.json).is_err() {
            self.compressor = None;
        }
        self.compress(true);
        match self.compressor {
            Some(_) => self.base64,
            None => String::new(),
        }
    }

    /// Compresses the JSON written since the last frame as a frame of its own, and puts it in
    /// base64 (the bytes past its last group of three wait for the next frame's, unless it is
    /// the `last`).
    fn compress(&mut self, last: bool) {
        let Some(compressor) = self.compressor.as_mut() else {
            return;
        };
        let Ok(bytes) = compressor.compress(&self.json) else {
            self.compressor = None;
            return;
        };
        self.json.clear();
        // A long turn's room is not held for the rest of the render.
        if self.json.capacity() > 2 * self.frame {
            self.json = Vec::with_capacity(self.frame + self.frame / 4);
        }
        let b64 = &base64::engine::general_purpose::STANDARD;
        let mut bytes = bytes.as_slice();
        if !self.carry.is_empty() {
            let take = (3 - self.carry.len()).min(bytes.len());
            self.carry.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.carry.len() < 3 && !last {
                return;
            }
            b64.encode_string(&self.carry, &mut self.base64);
            self.carry.clear();
        }
        let whole = if last {
            bytes.len()
        } else {
            bytes.len() / 3 * 3
        };
        b64.encode_string(&bytes[..whole], &mut self.base64);
        self.carry.extend_from_slice(&bytes[whole..]);
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

    #[test]
    fn a_report_in_many_frames_reads_back_whole_as_one_stream() -> anyhow::Result<()> {
        let turn = |n: usize| {
            serde_json::json!({
                "id": format!("t{n}"), "number": n,
                "prompt": {"id": format!("t{n}-p"), "text": "ünï \"x\"\n".repeat(n), "timestamp": null},
                "steps": [], "response": null, "response_status": "incomplete",
                "counts": {"intermediate_responses": 0, "tool_calls": 0, "process_events": 0},
                "outcome": {"edits": [], "verifications": [], "commits": []}
            })
        };
        let report: Report = serde_json::from_value(serde_json::json!({
            "schema_version": 1,
            "meta": {"generated_at": "2026-01-01T00:00:00Z", "tool_version": "0"},
            "session": {"harness": "h", "harness_label": "H", "source": "s"},
            "summary": {"turns": 0, "complete": 0, "incomplete": 0, "tool_calls": 0,
                        "ok": 0, "error": 0, "unknown": 0},
            "turns": (1..=40).map(turn).collect::<Vec<_>>(),
            "unlinked_subagents": [], "skipped": [], "warnings": []
        }))?;
        // One frame, or frames of a few turns each written in windows of any size: the same
        // JSON, read back whole.
        let mut written = Vec::new();
        for (frame, window) in [(1 << 20, 40), (100, 1), (100, 7), (333, 40)] {
            let mut data = EmbeddedReport::framed(&report, frame);
            for turns in report.turns.chunks(window) {
                data.turns(turns);
            }
            written.push((frame, data.finish()));
        }
        let element = |data: &str| {
            format!(
                "<template id=\"tracebook-report\" data-encoding=\"zstd+base64\">{data}</template>"
            )
        };
        let whole = json(&element(&written[0].1))?.into_owned();
        assert_eq!(serde_json::from_str::<Report>(&whole)?, report);
        for (frame, data) in &written {
            let html = element(data);
            assert_eq!(json(&html)?, whole, "frames of {frame}");
            let bytes = base64::engine::general_purpose::STANDARD.decode(data)?;
            let mut first = String::new();
            std::io::Read::read_to_string(
                &mut zstd::stream::read::Decoder::new(bytes.as_slice())?.single_frame(),
                &mut first,
            )?;
            assert_eq!(
                first.len() < json(&html)?.len(),
                *frame < 1 << 20,
                "frames of {frame}"
            );
        }
        assert_eq!(written[1].1, written[2].1);
        Ok(())
    }
}

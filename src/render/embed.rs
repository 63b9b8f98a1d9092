//! The report model embedded in the page, for tools that read it back.

use base64::Engine as _;

use crate::report::model::{Report, TurnView};

/// The report model as zstd-compressed JSON in base64: inert inside its `<template>` element
/// (base64 has neither `<` nor `&`), and a small fraction of the JSON's size. The JSON is
/// written straight into the compressor, a window of turns at a time, so the turns can be let
/// go as they are rendered: `turns` comes first, then the report's other fields.
pub(super) struct EmbeddedReport {
    /// Small writes (serde_json's pieces) reach the compressor in large blocks: each of its
    /// writes costs as much as a small write itself. `None` once a write failed.
    out: Option<std::io::BufWriter<zstd::stream::write::Encoder<'static, Vec<u8>>>>,
    /// The report's fields other than `turns`.
    rest: serde_json::Map<String, serde_json::Value>,
    /// Turns written so far.
    written: usize,
}

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
        }
    }

    /// Writes the next turns.
    pub(super) fn turns(&mut self, turns: &[TurnView]) {
        for turn in turns {
            let comma = self.written > 0;
            Self::write(&mut self.out, |w| {
                if comma {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(w, turn).map_err(std::io::Error::from)
            });
            self.written += 1;
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

    fn write(
        out: &mut Option<std::io::BufWriter<zstd::stream::write::Encoder<'static, Vec<u8>>>>,
        f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
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
        let back = crate::report::compat::read(&html)?;
        assert_eq!(back.report, report);
        Ok(())
    }
}

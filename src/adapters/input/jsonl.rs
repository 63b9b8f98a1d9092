//! JSONL files: lines read in batches by one thread and parsed on every core, while the rules
//! run over the batch before, in line order. A line longer than a record may be is passed
//! over without being kept.

use rayon::prelude::*;
use serde_json::Value as Json;
use std::io::BufRead;

use super::json::{LONE_SURROGATE, describe_json_error, parse_mended};
use super::open::{Cut, Opened};
use crate::adapters::needs::{self, Needs};
use crate::warning::Warning;

/// The longest line read as a record. A longer one is skipped with a warning naming it, its
/// bytes passed over without being kept, so a line of any length costs no more memory than
/// this.
pub const MAX_LINE: usize = 64 << 20;

/// What reading one line gave.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum LineRead {
    /// The input ended before any byte.
    End,
    /// A line (with its newline, unless it is the last) was appended.
    Line,
    /// A line longer than the limit was passed over; this many bytes.
    TooLong(u64),
}

/// Appends one line (up to and including `\n`) to `buf`, unless it is longer than `max`:
/// then it is read past, nothing of it kept.
pub(super) fn read_line(
    reader: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    let start = buf.len();
    let mut skipped: Option<u64> = None;
    loop {
        let (used, done) = {
            let available = match reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(match skipped {
                    Some(n) => LineRead::TooLong(n),
                    None if buf.len() > start => LineRead::Line,
                    None => LineRead::End,
                });
            }
            let (used, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            match &mut skipped {
                Some(n) => *n += used as u64,
                None if buf.len() - start + used > max => {
                    skipped = Some((buf.len() - start + used) as u64);
                    buf.truncate(start);
                }
                None => buf.extend_from_slice(&available[..used]),
            }
            (used, done)
        };
        reader.consume(used);
        if done {
            return Ok(match skipped {
                Some(n) => LineRead::TooLong(n),
                None => LineRead::Line,
            });
        }
    }
}

/// The warning for a line longer than [`MAX_LINE`].
pub(super) fn long_line(source: &str, line: usize, bytes: u64) -> Warning {
    Warning::at_line(
        source,
        line,
        format!(
            "line of {} MiB, longer than the {} MiB a record may be; skipped",
            bytes >> 20,
            MAX_LINE >> 20
        ),
    )
}

/// Lines read together: about this many bytes.
const BATCH_BYTES: usize = 1 << 20;

/// Lines of a JSONL file read together, each with its 1-based number.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    lines: Vec<(usize, std::ops::Range<usize>)>,
    /// Lines longer than [`MAX_LINE`], passed over: their numbers and lengths.
    long: Vec<(usize, u64)>,
}

/// One line parsed: its number, what it holds, and what it warns of.
struct Parsed<T> {
    line: usize,
    item: Option<T>,
    warnings: Vec<Warning>,
}

/// Reads whole lines into `batch` (emptied first) until about [`BATCH_BYTES`] are read or the
/// input ends. The same two batches are read into again and again: each holds its room, so a
/// batch read on one thread and let go on another is not handed back to the allocator every
/// time.
fn read_batch(
    reader: &mut dyn BufRead,
    line_no: &mut usize,
    batch: &mut Batch,
    cut: Option<&Cut>,
) -> std::io::Result<()> {
    batch.lines.clear();
    batch.long.clear();
    batch.bytes.clear();
    // A very long line leaves its room behind only until the next batch.
    if batch.bytes.capacity() > 4 * BATCH_BYTES {
        batch.bytes = Vec::new();
    }
    batch.bytes.reserve(BATCH_BYTES + (BATCH_BYTES >> 3));
    while batch.bytes.len() < BATCH_BYTES {
        let start = batch.bytes.len();
        match read_line(reader, &mut batch.bytes, MAX_LINE)? {
            LineRead::End => break,
            // A stream cut at its limit ends inside a line: that line is not a record the
            // writer cut short, and the cut's own warning names it.
            LineRead::Line
                if cut.is_some_and(Cut::passed) && batch.bytes.last() != Some(&b'\n') =>
            {
                batch.bytes.truncate(start);
                break;
            }
            LineRead::Line => {
                *line_no += 1;
                batch.lines.push((*line_no, start..batch.bytes.len()));
            }
            LineRead::TooLong(bytes) => {
                *line_no += 1;
                batch.long.push((*line_no, bytes));
            }
        }
    }
    Ok(())
}

impl Batch {
    /// Whether the batch read no line at all.
    fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.long.is_empty()
    }

    /// Parses every line on every core, and makes each record what `item` makes of it there.
    fn parse<T: Send>(
        &self,
        needs: &Needs,
        source: &str,
        item: &(dyn Fn(usize, Json) -> T + Sync),
    ) -> Vec<Parsed<T>> {
        let mut parsed: Vec<Parsed<T>> = self
            .lines
            .par_iter()
            .map(|(line, range)| {
                let buf = &self.bytes[range.clone()];
                let complete = buf.last() == Some(&b'\n');
                let mut warnings = Vec::new();
                let record = parse_line(buf, needs, complete, source, *line, &mut warnings);
                Parsed {
                    line: *line,
                    item: record.map(|rec| item(*line, rec)),
                    warnings,
                }
            })
            .collect();
        if !self.long.is_empty() {
            parsed.extend(self.long.iter().map(|&(line, bytes)| Parsed {
                line,
                item: None,
                warnings: vec![long_line(source, line, bytes)],
            }));
            parsed.sort_by_key(|p| p.line);
        }
        parsed
    }
}

/// Parses one line into only what `needs` keeps; a blank line is no record, a bad one a
/// warning.
fn parse_line(
    buf: &[u8],
    needs: &Needs,
    complete: bool,
    source: &str,
    line: usize,
    warnings: &mut Vec<Warning>,
) -> Option<Json> {
    let text = match std::str::from_utf8(buf) {
        Ok(t) => std::borrow::Cow::Borrowed(t),
        Err(_) => {
            warnings.push(Warning::at_line(
                source,
                line,
                "invalid UTF-8; bad bytes replaced with U+FFFD",
            ));
            String::from_utf8_lossy(buf)
        }
    };
    // A byte order mark some editors put at the start of a file is not part of the record.
    let trimmed = text.trim_start_matches('\u{feff}').trim();
    if trimmed.is_empty() {
        return None;
    }
    match parse_mended(trimmed, |t| needs::parse(t, needs)) {
        Ok((v @ Json::Object(_), mended)) => {
            if mended {
                warnings.push(Warning::at_line(source, line, LONE_SURROGATE));
            }
            Some(v)
        }
        Ok(_) => {
            warnings.push(Warning::at_line(
                source,
                line,
                "not a JSON object; line skipped",
            ));
            None
        }
        Err(e) if !complete && e.is_eof() => {
            warnings.push(Warning::at_line(
                source,
                line,
                "truncated last line (the writer stopped mid-record); skipped",
            ));
            None
        }
        Err(e) => {
            warnings.push(Warning::at_line(
                source,
                line,
                format!("not valid JSON ({}); line skipped", describe_json_error(&e)),
            ));
            None
        }
    }
}

/// Reads every line of a JSONL file in order. Each record is made into what `item` makes of
/// it on the core that parsed it, then given to `take` in line order with its 1-based line
/// number. Returns how many records were read; unreadable lines become warnings.
pub(super) fn read<T: Send>(
    opened: Opened<'_>,
    needs: &Needs,
    source: &str,
    item: &(dyn Fn(usize, Json) -> T + Sync),
    warnings: &mut Vec<Warning>,
    mut take: impl FnMut(usize, T) + Send,
) -> std::io::Result<usize> {
    let Opened { mut reader, cut } = opened;
    // Lines are read in batches; one batch is parsed (on every core) while the rules run over
    // the one before, in line order, and the next is read.
    let mut count = 0;
    let mut empty = true;
    let mut line_no = 0;
    let mut ready: Vec<Parsed<T>> = Vec::new();
    let mut batch = Batch::default();
    let mut spare = Batch::default();
    read_batch(&mut reader, &mut line_no, &mut batch, cut.as_ref())?;
    loop {
        empty &= batch.is_empty();
        if batch.is_empty() && ready.is_empty() {
            break;
        }
        let (next, read) = rayon::join(
            || batch.parse(needs, source, item),
            || {
                for p in ready.drain(..) {
                    warnings.extend(p.warnings);
                    if let Some(it) = p.item {
                        take(p.line, it);
                        count += 1;
                    }
                }
                read_batch(&mut reader, &mut line_no, &mut spare, cut.as_ref())
            },
        );
        ready = next;
        read?;
        std::mem::swap(&mut batch, &mut spare);
    }
    if let Some(cut) = cut.as_ref().filter(|c| c.passed()) {
        warnings.push(cut.warning(source, line_no + 1));
    } else if empty {
        warnings.push(Warning::whole(source, "empty file"));
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_line_names_truncation_and_bad_json() {
        let mut w = Vec::new();
        assert!(parse_line(br#"{"a":"#, &Needs::all(), false, "f.jsonl", 3, &mut w).is_none());
        assert!(
            w[0].to_string()
                .starts_with("f.jsonl:3: truncated last line")
        );
        assert!(parse_line(b"{nope}\n", &Needs::all(), true, "f.jsonl", 4, &mut w).is_none());
        assert!(w[1].to_string().starts_with("f.jsonl:4: not valid JSON"));
        assert!(parse_line(b"[1]\n", &Needs::all(), true, "f.jsonl", 5, &mut w).is_none());
        assert!(w[2].message.contains("not a JSON object"));
    }

    #[test]
    fn parse_line_keeps_a_record_with_invalid_utf8() {
        let mut w = Vec::new();
        let rec = parse_line(
            b"{\"a\":\"x\xffy\"}\n",
            &Needs::all(),
            true,
            "f.jsonl",
            1,
            &mut w,
        );
        assert_eq!(rec, Some(serde_json::json!({"a": "x\u{fffd}y"})));
        assert!(w[0].message.contains("invalid UTF-8"));
    }

    #[test]
    fn a_line_longer_than_the_limit_is_passed_over_whole() -> std::io::Result<()> {
        let text = b"short\nxxxxxxxxxxxxxxxxxxxx\nlast";
        let mut reader = std::io::BufReader::with_capacity(4, &text[..]);
        let mut buf = Vec::new();
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::Line);
        assert_eq!(buf, b"short\n");
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::TooLong(21));
        assert_eq!(buf, b"short\n", "nothing of the long line is kept");
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::Line);
        assert_eq!(buf, b"short\nlast");
        assert_eq!(read_line(&mut reader, &mut buf, 8)?, LineRead::End);
        Ok(())
    }
}

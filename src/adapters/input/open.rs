//! Opening what records are read from: a session file (a name ending in `.zst` is
//! decompressed as a stream, and a stream that expands far past its file's size is cut, with
//! a warning), or standard input, read whole within the bound of a JSON document.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::adapters::pattern::{display_name, has_ending};
use crate::warning::Warning;

/// A compressed file is read up to this many times its own size once decompressed (and at
/// least [`MIN_EXPANDED`]); what is past that is left out with a warning. Real session logs
/// compress 2 to 15 times; a stream that expands far more is a bomb, and reading all of it (a
/// 200 KB file can hold 6 GiB) would cost minutes of work for nothing.
pub const MAX_RATIO: u64 = 100;

/// The least a compressed file may expand to, whatever its size.
pub const MIN_EXPANDED: u64 = 256 << 20;

/// What records are read from: a file, or the bytes of a stream (standard input) read whole,
/// which has no name, no ending and no folder beside it.
#[derive(Debug, Clone, Copy)]
pub(super) enum Origin<'a> {
    File(&'a Path),
    Stream(&'a [u8]),
}

/// The name standard input goes by in warnings and errors.
pub(super) const STDIN: &str = "stdin";

impl<'a> Origin<'a> {
    /// The name warnings give it: a file's name, never the folders above it.
    pub(super) fn name(self) -> String {
        match self {
            Origin::File(path) => display_name(path),
            Origin::Stream(_) => STDIN.to_owned(),
        }
    }

    /// The path errors name.
    pub(super) fn path(self) -> PathBuf {
        match self {
            Origin::File(path) => path.to_owned(),
            Origin::Stream(_) => PathBuf::from(STDIN),
        }
    }

    /// Whether a layout's endings fit it: a file's name ends in one of them (or the layout
    /// names none); a stream has no name, and fits every layout.
    pub(super) fn fits(self, extensions: &[String]) -> bool {
        match self {
            Origin::File(path) => {
                extensions.is_empty() || extensions.iter().any(|e| has_ending(path, e))
            }
            Origin::Stream(_) => true,
        }
    }

    /// Whether it starts with the SQLite header.
    pub(super) fn is_sqlite(self) -> bool {
        match self {
            Origin::File(path) => is_sqlite(path),
            Origin::Stream(bytes) => bytes.starts_with(b"SQLite format 3\0"),
        }
    }

    /// Whether it holds no byte.
    pub(super) fn is_empty(self) -> bool {
        match self {
            Origin::File(path) => std::fs::metadata(path).is_ok_and(|m| m.len() == 0),
            Origin::Stream(bytes) => bytes.is_empty(),
        }
    }

    /// Opens it for reading.
    pub(super) fn open(self) -> std::io::Result<Opened<'a>> {
        match self {
            Origin::File(path) => open(path),
            Origin::Stream(bytes) => Ok(Opened {
                reader: Box::new(bytes),
                cut: None,
            }),
        }
    }
}

/// Reads a stream whole, up to `max` bytes ([`MAX_DOCUMENT`](super::MAX_DOCUMENT), as a
/// document); says whether it held more (then what was read ends at its last whole line).
pub(super) fn read_stream(reader: impl Read, max: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut bytes = Vec::new();
    reader.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 <= max {
        return Ok((bytes, false));
    }
    let end = memchr::memrchr(b'\n', &bytes).map_or(0, |i| i + 1);
    bytes.truncate(end);
    Ok((bytes, true))
}

/// An input opened for reading, and where a decompressed stream stops early.
pub(super) struct Opened<'a> {
    pub(super) reader: Box<dyn BufRead + Send + 'a>,
    pub(super) cut: Option<Cut>,
}

/// The limit of a decompressed stream, and whether the stream passed it.
pub(super) struct Cut {
    limit: u64,
    passed: Arc<AtomicBool>,
}

impl Cut {
    pub(super) fn passed(&self) -> bool {
        self.passed.load(Ordering::Relaxed)
    }

    /// The warning for a stream cut at its limit, at the line it stopped in.
    pub(super) fn warning(&self, source: &str, line: usize) -> Warning {
        Warning::at_line(
            source,
            line,
            format!(
                "the decompressed stream passed {} MiB ({MAX_RATIO} times the file's size, at \
                 least {} MiB); the rest of the file is not read",
                self.limit >> 20,
                MIN_EXPANDED >> 20
            ),
        )
    }
}

/// A reader that gives at most `left` bytes, then ends, noting when more was there.
struct Capped<R> {
    inner: R,
    left: u64,
    passed: Arc<AtomicBool>,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.left == 0 {
            let mut one = [0u8; 1];
            if self.inner.read(&mut one)? > 0 {
                self.passed.store(true, Ordering::Relaxed);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// Opens a file for reading; a name ending in `.zst` is decompressed as a stream, up to
/// [`MAX_RATIO`] times the file's size.
fn open(path: &Path) -> std::io::Result<Opened<'static>> {
    let file = File::open(path)?;
    if has_ending(path, "zst") {
        let size = file.metadata().map_or(0, |m| m.len());
        let limit = size.saturating_mul(MAX_RATIO).max(MIN_EXPANDED);
        let passed = Arc::new(AtomicBool::new(false));
        let decoder = zstd::stream::read::Decoder::new(file)?;
        let capped = Capped {
            inner: decoder,
            left: limit,
            passed: passed.clone(),
        };
        Ok(Opened {
            reader: Box::new(BufReader::with_capacity(1 << 20, capped)),
            cut: Some(Cut { limit, passed }),
        })
    } else {
        Ok(Opened {
            reader: Box::new(BufReader::with_capacity(1 << 20, file)),
            cut: None,
        })
    }
}

/// Whether a file starts with the SQLite header (a joined input read as a database).
pub(super) fn is_sqlite(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == b"SQLite format 3\0"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_read_up_to_its_bound_and_cut_at_a_whole_line() -> std::io::Result<()> {
        assert_eq!(read_stream(&b"a\nb\n"[..], 4)?, (b"a\nb\n".to_vec(), false));
        assert_eq!(
            read_stream(&b"a\nb\ncc"[..], 5)?,
            (b"a\nb\n".to_vec(), true)
        );
        assert_eq!(read_stream(&b"abcdef"[..], 3)?, (Vec::new(), true));
        Ok(())
    }
}

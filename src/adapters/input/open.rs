//! Opening a session file for reading: a name ending in `.zst` is decompressed as a stream,
//! and a stream that expands far past its file's size is cut, with a warning.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::adapters::pattern::has_ending;
use crate::warning::Warning;

/// A compressed file is read up to this many times its own size once decompressed (and at
/// least [`MIN_EXPANDED`]); what is past that is left out with a warning. Real session logs
/// compress 2 to 15 times; a stream that expands far more is a bomb, and reading all of it (a
/// 200 KB file can hold 6 GiB) would cost minutes of work for nothing.
pub const MAX_RATIO: u64 = 100;

/// The least a compressed file may expand to, whatever its size.
pub const MIN_EXPANDED: u64 = 256 << 20;

/// An input opened for reading, and where a decompressed stream stops early.
pub(super) struct Opened {
    pub(super) reader: Box<dyn BufRead + Send>,
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
pub(super) fn open(path: &Path) -> std::io::Result<Opened> {
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

//! The console: the one place that prints `warning:`, `note:` and `error:` lines to standard
//! error, applies `--quiet` and `--strict` to them, and writes results to standard output,
//! where a reader that closed the pipe early means the run is done, not failed.
//!
//! Every line is printed as a terminal shows it: text from a log, a file name or an error
//! keeps no control or invisible character ([`privacy::clean::for_terminal`]). Standard error
//! is taken for one line at a time, never held: a thread of a render that writes to it (a
//! panic message) would otherwise wait for the lock forever.

use anyhow::Context as _;
use std::borrow::Cow;
use std::io::Write as _;
use std::path::Path;

use crate::privacy;
use crate::warning::Warning;

/// How much a command prints to standard error.
#[derive(Debug, Clone, Copy, Default)]
pub struct Console {
    /// `--quiet`: nothing but errors (and, with `--strict`, the warnings that fail the run).
    pub quiet: bool,
    /// `--strict`: warnings fail the run, so they are printed even when quiet.
    pub strict: bool,
}

impl Console {
    /// A console for a command with these flags.
    pub fn new(quiet: bool, strict: bool) -> Self {
        Console { quiet, strict }
    }

    /// Prints `warning: …` (unless quiet and not strict).
    pub fn warn(&self, text: &str) {
        if !self.quiet || self.strict {
            line("warning: ", text);
        }
    }

    /// Prints each warning of a run; true when `--strict` makes them a failure, after saying
    /// so in an `error:` line.
    pub fn warnings(&self, warnings: &[Warning]) -> bool {
        for w in warnings {
            self.warn(&w.to_string());
        }
        if self.strict && !warnings.is_empty() {
            self.error(&format!(
                "{} warning(s) and --strict is set; nothing written",
                warnings.len()
            ));
            return true;
        }
        false
    }

    /// Prints `note: …` (unless quiet).
    pub fn note(&self, text: &str) {
        if !self.quiet {
            line("note: ", text);
        }
    }

    /// Prints `error: …` for a failure that does not stop the command (always).
    pub fn error(&self, text: &str) {
        line("error: ", text);
    }

    /// Prints a line saying what was done (`wrote …`), unless quiet.
    pub fn done(&self, text: &str) {
        if !self.quiet {
            line("", text);
        }
    }
}

/// Prints the error that ended the run: `error: ` and the message, each of its lines as a
/// terminal shows it.
pub fn fatal(text: &str) {
    let text = privacy::clean::lines_for_terminal(text);
    if stderr_color() {
        writeln!(std::io::stderr(), "\x1b[1;31merror: \x1b[0m{text}").ok();
    } else {
        writeln!(std::io::stderr(), "error: {text}").ok();
    }
}

fn line(prefix: &str, text: &str) {
    let paint = match prefix {
        "warning: " => "1;33",
        "error: " => "1;31",
        "note: " => "1;36",
        _ => "",
    };
    if !paint.is_empty() && stderr_color() {
        writeln!(
            std::io::stderr(),
            "\x1b[{paint}m{prefix}\x1b[0m{}",
            shown(text)
        )
        .ok();
    } else {
        writeln!(std::io::stderr(), "{prefix}{}", shown(text)).ok();
    }
}

/// Whether standard error is a terminal that takes live output (a progress bar): a terminal
/// whose `TERM` is not `dumb`.
pub fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// Whether the `warning:`, `error:` and `note:` prefixes are coloured: never when `NO_COLOR`
/// is set to anything but the empty string (no-color.org); else when `CLICOLOR_FORCE` is set
/// (not `0`), or standard error is a terminal ([`stderr_is_terminal`]).
pub fn stderr_color() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    set("CLICOLOR_FORCE") || stderr_is_terminal()
}

/// Text from a log, a file name or an error, as it is printed on a terminal: no control or
/// invisible character left ([`privacy::clean::for_terminal`]).
pub fn shown(text: &str) -> Cow<'_, str> {
    privacy::clean::for_terminal(text)
}

/// Writes pieces of text in order to standard output. A reader that closed the pipe early
/// (`| head`) has all it wanted: that is success.
pub fn write_stdout(pieces: &[&str]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match write_all(&mut stdout, pieces) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("writing to standard output")
        }
        _ => Ok(()),
    }
}

/// Writes the pieces of a notebook or report in order to a file, or to standard output for
/// `-` ([`write_stdout`]).
pub fn write_output(out: &Path, pieces: &[&str]) -> anyhow::Result<()> {
    if out.as_os_str() == "-" {
        return write_stdout(pieces);
    }
    let mut file = std::io::BufWriter::new(
        std::fs::File::create(out).with_context(|| format!("writing {}", out.display()))?,
    );
    write_all(&mut file, pieces).with_context(|| format!("writing {}", out.display()))
}

fn write_all(w: &mut dyn std::io::Write, pieces: &[&str]) -> std::io::Result<()> {
    for piece in pieces {
        w.write_all(piece.as_bytes())?;
    }
    w.flush()
}

//! The `tracebook` binary: parse arguments, run, print the error chain, pick the exit code.
//!
//! Exit codes: 0 written (warnings, if any, printed to standard error); 1 `--strict` and there
//! were warnings; 2 nothing could be written (bad arguments, unreadable input, bad adapter);
//! 3 `render --all` wrote the index but some sessions failed, or `list` could not read some.

use clap::Parser as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = tracebook::cli::Cli::parse();
    match tracebook::run(cli) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(err) => {
            // A message can quote a file name or a session id: nothing in it reaches the
            // terminal as a control character.
            tracebook::console::fatal(&format!("{err:#}"));
            ExitCode::from(2)
        }
    }
}

/// Records are parsed on one core and freed on another, and turns are rendered on every core:
/// mimalloc keeps that cheap where the system allocator serialises on its arenas (a 100 MB
/// session loads in 0.5 s instead of 0.9 s).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

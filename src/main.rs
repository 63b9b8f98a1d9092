//! The `tracebook` binary: parse arguments, run, print the error chain, pick the exit code.
//!
//! Exit codes: 0 written (warnings, if any, printed to standard error); 1 `--strict` and there
//! were warnings; 2 nothing could be written (bad arguments, unreadable input, bad adapter);
//! 3 `render --all` wrote the index but some sessions failed.

use clap::Parser as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = tracebook::cli::Cli::parse();
    match tracebook::run(cli) {
        Ok(exit) => ExitCode::from(exit.code()),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}

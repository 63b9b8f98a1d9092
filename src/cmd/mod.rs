//! The commands, one file each, over [`crate::pipeline`] and [`crate::console`]: this module
//! only picks the command.

pub mod adapters;
pub mod batch;
pub mod completions;
pub mod demo;
pub mod list;
pub mod man;
pub mod open;
pub mod render;
pub mod rerender;

use crate::cli::{Cli, Command};

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything was written (warnings, if any, were printed).
    Success,
    /// `--strict` and there were warnings: nothing was written.
    Strict,
    /// `render --all` or `list`: some sessions could not be read; the rest (and the index and
    /// the manifest) were written.
    SomeFailed,
}

impl Exit {
    /// The process exit code: 0 success, 1 strict failure, 3 some sessions of a batch failed
    /// (errors exit 2 in `main`).
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Strict => 1,
            Exit::SomeFailed => 3,
        }
    }
}

/// Runs one command.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    crate::memory::give_back_at_once();
    match cli.command {
        Command::Render(args) if args.pick.all => batch::run(&args),
        Command::Render(args) => render::run(&args),
        Command::Adapters { action } => adapters::run(action),
        Command::List(args) => list::run(&args),
        Command::Rerender(args) => rerender::run(&args),
        Command::Demo { which } => demo::run(which),
        Command::Completions { shell } => completions::run(shell),
        Command::Man { dir } => man::run(dir.as_deref()),
    }
}

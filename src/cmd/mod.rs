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

/// Whether the command renders one file smaller than [`crate::memory::SMALL_INPUT`]. A
/// folder, standard input, a session looked up by id and a batch count as large: their size
/// is not known before they are read.
fn small_input(cli: &Cli) -> bool {
    let Command::Render(args) = &cli.command else {
        return false;
    };
    let Some(input) = args.input.as_deref().filter(|_| !args.pick.all) else {
        return false;
    };
    input.as_os_str() != "-"
        && std::fs::metadata(input)
            .is_ok_and(|m| m.is_file() && m.len() < crate::memory::SMALL_INPUT)
}

/// Runs one command.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    crate::memory::give_back_at_once(small_input(&cli));
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

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

/// Whether the command renders one input smaller than [`crate::memory::SMALL_INPUT`]: a file,
/// or a folder (an OpenCode storage tree) whose files add up to less. Standard input, a
/// session looked up by id and a batch count as large: their size is not known before they
/// are read. A Claude Code session's subagent files beside it are not counted.
fn small_input(cli: &Cli) -> bool {
    let Command::Render(args) = &cli.command else {
        return false;
    };
    let Some(input) = args.input.as_deref().filter(|_| !args.pick.all) else {
        return false;
    };
    if input.as_os_str() == "-" {
        return false;
    }
    match std::fs::metadata(input) {
        Ok(m) if m.is_file() => m.len() < crate::memory::SMALL_INPUT,
        Ok(m) if m.is_dir() => folder_smaller_than(input, crate::memory::SMALL_INPUT),
        _ => false,
    }
}

/// Whether the files under `dir` hold fewer than `limit` bytes. The count stops at the limit,
/// or past 20,000 entries (a folder that large counts as large), and at anything unreadable.
fn folder_smaller_than(dir: &std::path::Path, limit: u64) -> bool {
    const MAX_ENTRIES: usize = 20_000;
    let (mut total, mut seen) = (0u64, 0usize);
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            return false;
        };
        for entry in entries {
            let Ok(entry) = entry else {
                return false;
            };
            seen += 1;
            let Ok(kind) = entry.file_type() else {
                return false;
            };
            if kind.is_dir() {
                folders.push(entry.path());
            } else if kind.is_file() {
                let Ok(meta) = entry.metadata() else {
                    return false;
                };
                total = total.saturating_add(meta.len());
            }
            if total >= limit || seen > MAX_ENTRIES {
                return false;
            }
        }
    }
    true
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

#[cfg(test)]
mod tests {
    use super::folder_smaller_than;

    #[test]
    fn a_folder_is_small_while_its_files_nested_or_not_add_up_to_less_than_the_limit()
    -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        std::fs::create_dir_all(dir.path().join("storage/part/msg"))?;
        std::fs::write(dir.path().join("storage/session.json"), vec![b'x'; 300])?;
        std::fs::write(dir.path().join("storage/part/msg/a.json"), vec![b'x'; 300])?;
        assert!(folder_smaller_than(dir.path(), 601));
        assert!(!folder_smaller_than(dir.path(), 600));
        assert!(!folder_smaller_than(&dir.path().join("missing"), 1 << 20));
        Ok(())
    }
}

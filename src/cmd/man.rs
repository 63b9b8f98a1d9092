//! `tracebook man`: the manual pages clap_mangen writes from the command definition.

use anyhow::Context as _;
use clap::CommandFactory as _;
use std::path::Path;

use crate::cli::Cli;
use crate::cmd::Exit;
use crate::console;

/// Prints the page of `tracebook` (roff) to standard output, or with `dir` writes it and one
/// page per command (`tracebook-render.1`, …) there.
pub fn run(dir: Option<&Path>) -> anyhow::Result<Exit> {
    let cmd = Cli::command();
    match dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            console::write_stdout(&[&String::from_utf8_lossy(&page)])?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cmd, dir)
                .with_context(|| format!("writing manual pages into {}", dir.display()))?;
            console::Console::default().done(&format!("wrote manual pages into {}", dir.display()));
        }
    }
    Ok(Exit::Success)
}

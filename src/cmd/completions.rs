//! `tracebook completions SHELL`: the completion script clap generates from the command
//! definition, so it always knows every subcommand, flag and value.

use clap::CommandFactory as _;

use crate::cli::Cli;
use crate::cmd::Exit;
use crate::console;

/// Prints the completion script for `shell` to standard output.
pub fn run(shell: clap_complete::Shell) -> anyhow::Result<Exit> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "tracebook", &mut script);
    console::write_stdout(&[&String::from_utf8_lossy(&script)])?;
    Ok(Exit::Success)
}

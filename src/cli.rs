//! Command-line arguments (clap derive) and their validated form.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Turn a coding-agent session log into one self-contained, offline HTML notebook.
#[derive(Debug, Parser)]
#[command(name = "tracebook", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render one session to an HTML notebook (or the JSON report model).
    Render(RenderArgs),
    /// List or export the adapters that describe each harness's format.
    Adapters {
        /// What to do with them.
        #[command(subcommand)]
        action: AdaptersAction,
    },
}

/// `tracebook render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// A session file, or a folder holding sessions (the newest is rendered).
    pub input: PathBuf,
    /// Where to write; `-` for standard output. Default: the input's name with `.html`
    /// (or `.json`) in the current folder.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Html)]
    pub format: Format,
    /// Read the input with this adapter instead of detecting it.
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// A folder of adapter YAML files that add to or replace the built-in ones, file by file.
    #[arg(long, value_name = "DIR")]
    pub adapters: Option<PathBuf>,
    /// Treat warnings (skipped lines, unknown records) as failure: exit 1, write nothing.
    #[arg(long)]
    pub strict: bool,
    /// Also redact this exact text wherever it appears (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub redact: Vec<String>,
    /// Keep embedded images (base64 `data:image/…`) in the output; other attachments are
    /// always dropped.
    #[arg(long)]
    pub keep_images: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One self-contained HTML notebook.
    Html,
    /// The report model as JSON.
    Json,
}

/// `tracebook adapters …`.
#[derive(Debug, Subcommand)]
pub enum AdaptersAction {
    /// Show each adapter and where it came from.
    List {
        /// A folder of adapter YAML files that add to or replace the built-in ones.
        #[arg(long, value_name = "DIR")]
        adapters: Option<PathBuf>,
    },
    /// Write the built-in adapters to a folder, as a starting point for your own.
    Dump {
        /// The folder to write into (created if needed).
        dir: PathBuf,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_valid() {
        Cli::command().debug_assert();
    }
}

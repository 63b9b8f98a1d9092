//! Command-line arguments (clap derive) and their validated form: turn lists, `--since` and
//! the view are parsed by clap's value parsers, so a command receives checked values.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::time::SystemTime;

use crate::privacy;
use crate::report::model;
use crate::report::select::{TurnSelection, TurnSet};

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
    /// List the sessions each harness keeps in its usual place, one row per session.
    List(ListArgs),
    /// Render a notebook again from the report embedded in it, with the current templates.
    Rerender(RerenderArgs),
    /// Show, on small built-in sessions, what tracebook records that a naive reader misses.
    Demo {
        /// Which demonstration.
        #[arg(value_enum)]
        which: Demo,
    },
    /// Print a shell completion script (bash: `tracebook completions bash >
    /// ~/.local/share/bash-completion/completions/tracebook`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page in roff (`tracebook man > ~/.local/share/man/man1/tracebook.1`),
    /// or write one page per command into a folder.
    Man {
        /// Write `tracebook.1` and `tracebook-<command>.1` for each command into this folder.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// `tracebook demo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Demo {
    /// One session per built-in harness, in its own format: each tool call's status and why.
    ToolOutcomes,
}

/// `tracebook render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// A session file, or a folder holding sessions (the newest is rendered); `-` reads a
    /// session from standard input.
    #[arg(required_unless_present_any = ["session", "all"], conflicts_with_all = ["session", "all"])]
    pub input: Option<PathBuf>,
    /// Where to write; `-` for standard output. Default: the input's name with `.html`
    /// (or `.json`) in the current folder.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Html)]
    pub format: Format,
    /// With `--format md`: write at most this many bytes (GitHub takes 65,536 characters in an
    /// issue or comment). The summary, failures and responses are kept first; process folds
    /// and patches follow while they fit, and the text says what was left out.
    #[arg(long, value_name = "N", default_value_t = crate::render::gfm::DEFAULT_MAX_BYTES)]
    pub max_bytes: usize,
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
    /// What the notebook holds: everything, or only prompts and responses (the rest is left
    /// out of the file, not hidden).
    #[arg(long, value_enum, default_value_t = View::Full)]
    pub view: View,
    /// Write every turn as HTML. By default, turns past the first 1.5 MiB of HTML are stored
    /// compressed in the page and shown by its script, so a large session's notebook opens
    /// fast; with this flag the whole page reads with JavaScript off, however large.
    #[arg(long, alias = "inline-steps")]
    pub inline: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
    /// Open what was written (the notebook, or with --all the index) in the default browser;
    /// not when the variable CI or TRACEBOOK_NO_OPEN is set.
    #[arg(long)]
    pub open: bool,
    /// Rendering listed sessions by id, or all of them.
    #[command(flatten)]
    pub pick: PickArgs,
    /// Keeping only some turns.
    #[command(flatten)]
    pub select: SelectArgs,
}

/// `render --session` / `render --all` and their filters (`--harness` filters too).
#[derive(Debug, Args)]
pub struct PickArgs {
    /// Render the listed session with this id (a unique prefix is enough).
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub session: Option<String>,
    /// Render every listed session into the folder given with -o, plus an index.html.
    #[arg(long, requires = "output")]
    pub all: bool,
    /// With --all: only sessions started at or after this date, time or age (2026-01-31, 7d).
    #[arg(long, value_name = "WHEN", requires = "all", value_parser = since)]
    pub since: Option<SystemTime>,
    /// With --all: only sessions whose project name contains this text.
    #[arg(long, value_name = "TEXT", requires = "all")]
    pub project: Option<String>,
    /// With --all: render every session, even those unchanged since the last run.
    #[arg(long, requires = "all")]
    pub force: bool,
}

/// `--turns` / `--exclude-turns`.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Keep only these turns (`3-7,12`); links keep the original turn numbers.
    #[arg(long, value_name = "LIST", value_parser = |t: &str| TurnSet::parse("--turns", t))]
    pub turns: Option<TurnSet>,
    /// Leave these turns out (`2,9-10`).
    #[arg(long, value_name = "LIST", value_parser = |t: &str| TurnSet::parse("--exclude-turns", t))]
    pub exclude_turns: Option<TurnSet>,
}

impl SelectArgs {
    /// The turns to keep.
    pub fn selection(&self) -> TurnSelection {
        TurnSelection {
            turns: self.turns.clone(),
            exclude: self.exclude_turns.clone(),
        }
    }
}

/// `--since`: a date, a time or an age, counted back from when the arguments are parsed.
fn since(text: &str) -> Result<SystemTime, String> {
    crate::catalog::parse_since(text, SystemTime::now())
}

impl RenderArgs {
    /// The privacy options the user chose.
    pub fn privacy(&self) -> privacy::Options {
        privacy::Options {
            redact: self.redact.clone(),
            keep_images: self.keep_images,
        }
    }

    /// What the output keeps of each turn.
    pub fn view(&self) -> model::View {
        match self.view {
            View::Full => model::View::Full,
            View::Conversation => model::View::Conversation,
        }
    }

    /// How the notebook writes its turns.
    pub fn storage(&self) -> model::Storage {
        if self.inline {
            model::Storage::Inline
        } else {
            model::Storage::Stored
        }
    }
}

/// `tracebook list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON (an array of rows) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Only sessions of this harness (an adapter name).
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,
    /// Only sessions started at or after this date, time or age (2026-01-31, 7d).
    #[arg(long, value_name = "WHEN", value_parser = since)]
    pub since: Option<SystemTime>,
    /// Only sessions whose project name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// A folder of adapter YAML files that add to or replace the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub adapters: Option<PathBuf>,
}

/// `tracebook rerender`.
#[derive(Debug, Args)]
pub struct RerenderArgs {
    /// A notebook written by tracebook (any past version).
    pub input: PathBuf,
    /// Where to write; `-` for standard output. Default: over the input (with `--format md`,
    /// beside it with `.md`).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The notebook again, or the Markdown of its report for a ticket.
    #[arg(long, value_enum, default_value_t = RerenderFormat::Html)]
    pub format: RerenderFormat,
    /// With `--format md`: write at most this many bytes.
    #[arg(long, value_name = "N", default_value_t = crate::render::gfm::DEFAULT_MAX_BYTES)]
    pub max_bytes: usize,
    /// Keeping only some turns.
    #[command(flatten)]
    pub select: SelectArgs,
    /// Also redact this exact text wherever it appears (repeatable).
    #[arg(long, value_name = "TEXT")]
    pub redact: Vec<String>,
    /// Keep embedded images (other attachments are always dropped).
    #[arg(long)]
    pub keep_images: bool,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

impl RerenderArgs {
    /// The privacy options the user chose.
    pub fn privacy(&self) -> privacy::Options {
        privacy::Options {
            redact: self.redact.clone(),
            keep_images: self.keep_images,
        }
    }
}

/// What `rerender` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RerenderFormat {
    /// The notebook.
    Html,
    /// GitHub-flavoured Markdown of its report.
    Md,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One self-contained HTML notebook.
    Html,
    /// The report model as JSON.
    Json,
    /// GitHub-flavoured Markdown of the report, for a ticket or a CI job summary.
    Md,
}

/// What a notebook holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// Prompts, process steps, responses and outcomes.
    Full,
    /// Prompts and responses only.
    Conversation,
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

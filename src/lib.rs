//! tracebook reads the session logs that coding agents leave on disk and writes one
//! self-contained, offline HTML notebook per session.
//!
//! # Stages
//! Each stage is a function from one owned type to the next; [`pipeline::report`] runs stages
//! 1 to 5 for every command, and [`cmd`] holds the commands on top of it.
//!
//! 1. [`adapters`]: [`load_session(path, &AdapterSet, harness, session)`](adapters::input::load_session)
//!    `-> Loaded { session, warnings, skipped }`. An adapter is a YAML file (built-in or from
//!    `--adapters DIR`) interpreted by the same Rust for every harness. Vendor words become
//!    canonical values in [`adapters::normalize`], the one seam.
//! 2. [`events`]: the canonical [`events::Session`]; the only input type later stages see.
//! 3. [`privacy`]: [`apply(Session, &Policy) -> Redacted<Session>`](privacy::apply): secrets,
//!    home folders, user names and paths outside the repository are removed before anything
//!    is projected.
//! 4. [`projection`]: [`project(&mut Redacted<Session>) -> Projection`](projection::project):
//!    ordered turns, each with a response status and an evidence-bounded outcome.
//! 5. [`report`]: [`build(&Redacted<Session>, Projection, &RunInfo, ..) -> Report`](report::build):
//!    plain serde data with a `schema_version`, the JSON contract, embedded in every notebook.
//!    [`report::select`] keeps some turns (`--turns`) or only the conversation (`--view`), and
//!    records both in the report.
//! 6. [`render`]: [`notebook(Report, Storage) -> Notebook`](render::notebook), in the view the
//!    report records: askama templates, inlined CSS and JS, a CSP that forbids every network
//!    load. Code, commands and diffs are marked with their language by [`render::highlight`],
//!    within size caps, and coloured by the page's script in the reader's browser.
//!
//! # Invariants
//! - A tool call's status is `ok`, `error` or `unknown`; absence of evidence is `unknown`.
//! - Events keep their observed source order; presentation may fold adjacent tool calls only.
//! - An assistant message is a turn's response only if it is the turn's final retained event.
//! - Outcomes say only what the log retained; nothing is read from a worktree.
//! - Only the commands in [`cmd`] write files, through [`console`] (and `adapters dump`
//!   through [`adapters::dump`]). Logs are read by [`adapters::input`] and found by
//!   [`catalog`]; a user's adapters folder is read by [`adapters`]; who the user is (host name,
//!   git and account names) is learned by [`privacy::identity`]; [`memory`] reads the
//!   process's own size. Every other module takes values and returns values.

pub mod adapters;
pub mod catalog;
pub mod cli;
pub mod cmd;
pub mod console;
pub mod events;
pub mod memory;
pub mod pipeline;
pub mod privacy;
pub mod projection;
pub mod render;
pub mod report;
pub mod warning;

pub use cmd::{Exit, run};

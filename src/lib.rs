//! tracebook reads the session logs that coding agents leave on disk and writes one
//! self-contained, offline HTML notebook per session.
//!
//! # Stages
//! Each stage is a function from one owned type to the next:
//!
//! 1. [`adapters`]: `load(path, &AdapterSet) -> Loaded { Session, warnings }`. An adapter is a
//!    YAML file (built-in or from `--adapters DIR`) interpreted by the same Rust for every
//!    harness. Vendor words become canonical values in [`adapters::normalize`], the one seam.
//! 2. [`events`]: the canonical [`events::Session`]; the only input type later stages see.
//! 3. [`privacy`]: `apply(Session, &Policy) -> Redacted<Session>`: secrets, home folders, user
//!    names and paths outside the repository are removed before anything is projected.
//! 4. [`projection`]: `project(&Redacted<Session>) -> Projection`: ordered turns, each with a
//!    response status and an evidence-bounded outcome.
//! 5. [`report`]: `build(..) -> Report`: plain serde data with a `schema_version`, the JSON
//!    contract, embedded in every notebook.
//! 6. [`render`]: `html(&Report) -> String`: askama templates, inlined CSS and JS, a CSP that
//!    forbids every network load.
//!
//! # Invariants
//! - A tool call's status is `ok`, `error` or `unknown`; absence of evidence is `unknown`.
//! - Events keep their observed source order; presentation may fold adjacent tool calls only.
//! - An assistant message is a turn's response only if it is the turn's final retained event.
//! - Outcomes say only what the log retained; nothing is read from a worktree.
//! - Reading and writing files happens only in [`run`] and [`adapters::load`].

pub mod adapters;
pub mod cli;
pub mod events;
pub mod privacy;
pub mod projection;
pub mod render;
pub mod report;
pub mod warning;

use anyhow::Context as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use adapters::AdapterSet;
use cli::{AdaptersAction, Cli, Command, Format, RenderArgs};
use report::{RunInfo, model::Report};
use warning::Warning;

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything was written (warnings, if any, were printed).
    Success,
    /// `--strict` and there were warnings: nothing was written.
    Strict,
}

impl Exit {
    /// The process exit code: 0 success, 1 strict failure (errors exit 2 in `main`).
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Strict => 1,
        }
    }
}

/// Runs one command.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Render(args) => render_command(&args),
        Command::Adapters { action } => adapters_command(action),
    }
}

/// Reads, redacts, projects and builds the report of one session.
pub fn report_for(
    input: &Path,
    set: &AdapterSet,
    harness: Option<&str>,
    redact: &[String],
    generated_at: String,
) -> anyhow::Result<(Report, Vec<Warning>)> {
    let options = privacy::Options {
        redact: redact.to_vec(),
        keep_images: false,
    };
    report_with(input, set, harness, &options, generated_at)
}

/// [`report_for`] with every privacy option.
pub fn report_with(
    input: &Path,
    set: &AdapterSet,
    harness: Option<&str>,
    options: &privacy::Options,
    generated_at: String,
) -> anyhow::Result<(Report, Vec<Warning>)> {
    let loaded = adapters::load::load(input, set, harness)?;
    let label = set
        .get(&loaded.session.harness)
        .map(|a| a.spec.label.clone())
        .unwrap_or_default();
    let policy = privacy::Policy::new(&loaded.session, options);
    // Warnings name inputs and lines, and may quote a path: they go through privacy too.
    let warnings: Vec<Warning> = loaded
        .warnings
        .into_iter()
        .map(|w| Warning {
            message: policy.text(&w.message),
            source: policy.text(&w.source),
            line: w.line,
        })
        .collect();
    let session = privacy::apply(loaded.session, &policy);
    let projection = projection::project(&session);
    let run = RunInfo {
        generated_at,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        harness_label: label,
    };
    let report = report::build(&session, &projection, &run, &loaded.skipped, &warnings);
    Ok((report, warnings))
}

fn render_command(args: &RenderArgs) -> anyhow::Result<Exit> {
    let set = AdapterSet::load(args.adapters.as_deref())?;
    let generated_at = std::env::var("TRACEBOOK_GENERATED_AT").unwrap_or_else(|_| {
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
    });
    let options = privacy::Options {
        redact: args.redact.clone(),
        keep_images: args.keep_images,
    };
    let (report, warnings) = report_with(
        &args.input,
        &set,
        args.harness.as_deref(),
        &options,
        generated_at,
    )?;
    let mut stderr = std::io::stderr().lock();
    if !args.quiet || args.strict {
        for w in &warnings {
            writeln!(stderr, "warning: {w}").ok();
        }
    }
    if args.strict && !warnings.is_empty() {
        writeln!(
            stderr,
            "error: {} warning(s) and --strict is set; nothing written",
            warnings.len()
        )
        .ok();
        return Ok(Exit::Strict);
    }
    let bytes = match args.format {
        Format::Html => render::html(&report).context("rendering the notebook")?,
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&report).context("writing the report")?;
            s.push('\n');
            s
        }
    };
    // The last scan: shape-only secret rules over exactly what is written.
    let (bytes, caught) = privacy::secrets::backstop(&bytes);
    if caught > 0 && !args.quiet {
        writeln!(
            stderr,
            "note: the final scan redacted {caught} secret(s) the earlier stages missed"
        )
        .ok();
    }
    let out = output_path(args);
    if out.as_os_str() == "-" {
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(bytes.as_bytes())
            .and_then(|_| stdout.flush())
        {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                return Err(e).context("writing to standard output");
            }
            _ => {}
        }
    } else {
        std::fs::write(&out, bytes.as_bytes())
            .with_context(|| format!("writing {}", out.display()))?;
        if !args.quiet {
            let s = &report.summary;
            writeln!(
                stderr,
                "wrote {} ({} turns, {} tool calls: {} ok, {} error, {} unknown; {} warning(s))",
                out.display(),
                s.turns,
                s.tool_calls,
                s.ok,
                s.error,
                s.unknown,
                warnings.len()
            )
            .ok();
        }
    }
    Ok(Exit::Success)
}

fn output_path(args: &RenderArgs) -> PathBuf {
    if let Some(o) = &args.output {
        return o.clone();
    }
    let stem = args
        .input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty() && s != "." && s != "..")
        .unwrap_or_else(|| "session".to_owned());
    let ext = match args.format {
        Format::Html => "html",
        Format::Json => "json",
    };
    PathBuf::from(format!("{stem}.{ext}"))
}

fn adapters_command(action: AdaptersAction) -> anyhow::Result<Exit> {
    let mut stdout = std::io::stdout().lock();
    match action {
        AdaptersAction::List { adapters } => {
            let set = AdapterSet::load(adapters.as_deref())?;
            for a in set.iter() {
                writeln!(
                    stdout,
                    "{:<14} {:<22} {}",
                    a.spec.name, a.spec.label, a.origin
                )?;
            }
        }
        AdaptersAction::Dump { dir } => {
            for path in adapters::dump(&dir)? {
                writeln!(stdout, "wrote {}", path.display())?;
            }
        }
    }
    Ok(Exit::Success)
}

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
//!    forbids every network load. Code, commands and diffs are coloured by [`render::highlight`]
//!    at render time, within size caps.
//!
//! # Invariants
//! - A tool call's status is `ok`, `error` or `unknown`; absence of evidence is `unknown`.
//! - Events keep their observed source order; presentation may fold adjacent tool calls only.
//! - An assistant message is a turn's response only if it is the turn's final retained event.
//! - Outcomes say only what the log retained; nothing is read from a worktree.
//! - Reading and writing files happens only in [`run`] and [`adapters::load`].

pub mod adapters;
pub mod batch;
pub mod catalog;
pub mod cli;
pub mod demo;
pub mod events;
pub mod memory;
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

/// Text from a log, a file name or an error, as it is printed on a terminal: no control or
/// invisible character left ([`privacy::clean::for_terminal`]).
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    privacy::clean::for_terminal(text)
}

/// Runs one command.
pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Render(args) => render_command(&args),
        Command::Adapters { action } => adapters_command(action),
        Command::List(args) => list_command(&args),
        Command::Rerender(args) => rerender_command(&args),
        Command::Demo {
            which: cli::Demo::ToolOutcomes,
        } => {
            let rows = demo::tool_outcomes()?;
            std::io::stdout()
                .write_all(demo::table(&rows).as_bytes())
                .context("writing to standard output")?;
            Ok(Exit::Success)
        }
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
    report_with(input, set, harness, None, &options, generated_at)
}

/// [`report_for`] with every privacy option, for the session with id `session` of an input
/// that holds several (a storage tree or a database) when given.
pub fn report_with(
    input: &Path,
    set: &AdapterSet,
    harness: Option<&str>,
    session: Option<&str>,
    options: &privacy::Options,
    generated_at: String,
) -> anyhow::Result<(Report, Vec<Warning>)> {
    let loaded = stage("load", || {
        adapters::load::load_session(input, set, harness, session)
    })?;
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
    let mut session = stage("privacy", || privacy::apply(loaded.session, &policy));
    // The projection takes the events over, and the report takes the projection's text over:
    // one copy of the session's text at a time.
    let projection = stage("projection", || projection::project(&mut session));
    let run = RunInfo {
        generated_at,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        harness_label: label,
    };
    // What is left of the session goes with the stage, so its memory is given back before
    // the render starts.
    let skipped = loaded.skipped;
    let report = stage("report", || {
        let session = session;
        report::build(&session, projection, &run, &skipped, &warnings)
    });
    Ok((report, warnings))
}

fn render_command(args: &RenderArgs) -> anyhow::Result<Exit> {
    let set = AdapterSet::load(args.adapters.as_deref())?;
    let selection = turn_selection(&args.select)?;
    if args.pick.all {
        return batch::render_all(args, &set, &selection);
    }
    let generated_at = generated_at();
    let (input, harness, session) = match &args.pick.session {
        Some(id) => {
            let found = find_session(&set, id, args.harness.as_deref(), &args.redact)?;
            (found.path, Some(found.harness), found.session)
        }
        None => (
            args.input.clone().unwrap_or_default(),
            args.harness.clone(),
            None,
        ),
    };
    let out = output_path(args, &input);
    refuse_overwriting_input(&out, &input, &set)?;
    let (mut report, warnings) = report_with(
        &input,
        &set,
        harness.as_deref(),
        session.as_deref(),
        &privacy_options(args),
        generated_at,
    )?;
    report::select::apply(&mut report, &selection).map_err(anyhow::Error::msg)?;
    // Not locked for the whole render: a thread of the render that writes to standard error (a
    // panic message) would wait for the lock forever.
    let mut stderr = std::io::stderr();
    if !args.quiet || args.strict {
        for w in &warnings {
            writeln!(stderr, "warning: {}", shown(&w.to_string())).ok();
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
    let summary = report.summary;
    // The last scan: shape-only secret rules over exactly what is written.
    let mut page = None;
    let mut json = String::new();
    let caught = match args.format {
        Format::Html => {
            let view = match args.view {
                cli::View::Full => render::View::Full,
                cli::View::Conversation => render::View::Conversation,
            };
            let storage = if args.inline {
                render::Storage::Inline
            } else {
                render::Storage::default()
            };
            let mut notebook = stage("render", || render::notebook(report, view, storage))
                .context("rendering the notebook")?;
            let caught = stage("final scan", || notebook.final_scan()) + notebook.caught;
            page = Some(notebook);
            caught
        }
        Format::Json => {
            if args.view == cli::View::Conversation {
                report = render::conversation_only(report);
            }
            json = serde_json::to_string_pretty(&report).context("writing the report")?;
            json.push('\n');
            let (scanned, caught) = stage("final scan", || privacy::secrets::backstop(&json));
            if let std::borrow::Cow::Owned(s) = scanned {
                json = s;
            }
            caught
        }
    };
    if caught > 0 && !args.quiet {
        writeln!(
            stderr,
            "note: the final scan redacted {caught} secret(s) the earlier stages missed"
        )
        .ok();
    }
    let pieces = match &page {
        Some(notebook) => notebook.pieces(),
        None => vec![json.as_str()],
    };
    stage("write", || write_output(&out, &pieces))?;
    if out.as_os_str() != "-" && !args.quiet {
        let s = &summary;
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
    Ok(Exit::Success)
}

/// Refuses an output that is the input itself, or a link to it (symbolic or hard), or, for a
/// folder input, a session file inside it: writing would destroy the log being read.
fn refuse_overwriting_input(out: &Path, input: &Path, set: &AdapterSet) -> anyhow::Result<()> {
    if out.as_os_str() == "-" || !out.exists() {
        return Ok(());
    }
    let endings: Vec<String> = set
        .iter()
        .flat_map(|a| {
            std::iter::once(&a.spec.input)
                .chain(&a.spec.input.layouts)
                .flat_map(|l| l.extensions.iter().chain(&l.document_extensions))
                .cloned()
                .collect::<Vec<_>>()
        })
        .collect();
    let inside = input.is_dir()
        && out
            .canonicalize()
            .ok()
            .zip(input.canonicalize().ok())
            .is_some_and(|(o, i)| o.starts_with(i))
        && endings.iter().any(|e| {
            out.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(&format!(".{e}")))
        });
    if same_file(out, input) || inside {
        anyhow::bail!(
            "-o {} is the session being read{}; refusing to write over it (choose another output)",
            out.display(),
            if inside {
                " (a session file in the input folder)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// Whether two paths name the same file, through links of either kind.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (a.canonicalize(), b.canonicalize()) {
            (Ok(x), Ok(y)) => x == y,
            _ => false,
        }
    }
}

fn output_path(args: &RenderArgs, input: &Path) -> PathBuf {
    if let Some(o) = &args.output {
        return o.clone();
    }
    let stem = input
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

/// The privacy options the user chose on the command line.
fn privacy_options(args: &RenderArgs) -> privacy::Options {
    privacy::Options {
        redact: args.redact.clone(),
        keep_images: args.keep_images,
    }
}

/// Writes the pieces of a notebook or report in order to a file, or to standard output for `-`
/// (a reader that closed the pipe early is not an error).
pub(crate) fn write_output(out: &Path, pieces: &[&str]) -> anyhow::Result<()> {
    let write = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        for piece in pieces {
            w.write_all(piece.as_bytes())?;
        }
        w.flush()
    };
    if out.as_os_str() != "-" {
        let mut file = std::io::BufWriter::new(
            std::fs::File::create(out).with_context(|| format!("writing {}", out.display()))?,
        );
        return write(&mut file).with_context(|| format!("writing {}", out.display()));
    }
    let mut stdout = std::io::stdout().lock();
    match write(&mut stdout) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("writing to standard output")
        }
        _ => Ok(()),
    }
}

/// Runs one stage of a render and gives back the memory it let go ([`memory::release`]),
/// printing its wall time, and where the system reports them the process's resident memory
/// after it and the peak so far, to standard error when `TRACEBOOK_TIMINGS` is set
/// (`scripts/bench.py --stages` reads these lines).
fn stage<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let out = f();
    memory::release();
    if std::env::var_os("TRACEBOOK_TIMINGS").is_some() {
        eprintln!("timing: {name} {:.3} s", start.elapsed().as_secs_f64());
        if let Some((now, peak)) = memory::resident() {
            eprintln!(
                "memory: {name} {:.1} MiB resident, {:.1} MiB peak",
                now as f64 / 1048576.0,
                peak as f64 / 1048576.0
            );
        }
    }
    out
}

/// The report generation time: `TRACEBOOK_GENERATED_AT` when set (tests pin it), else now.
fn generated_at() -> String {
    std::env::var("TRACEBOOK_GENERATED_AT").unwrap_or_else(|_| {
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
    })
}

/// `--turns` / `--exclude-turns`, parsed.
fn turn_selection(args: &cli::SelectArgs) -> anyhow::Result<report::select::TurnSelection> {
    let parse = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|t| report::select::TurnSet::parse(flag, t))
            .transpose()
            .map_err(anyhow::Error::msg)
    };
    Ok(report::select::TurnSelection {
        turns: parse("--turns", &args.turns)?,
        exclude: parse("--exclude-turns", &args.exclude_turns)?,
    })
}

/// Reads an environment variable of this process (discovery's view of the environment).
fn process_var(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name)
}

/// `--harness`, `--since`, `--project` as a catalog filter.
fn catalog_filter(
    set: &AdapterSet,
    harness: Option<&str>,
    since: Option<&str>,
    project: Option<&str>,
) -> anyhow::Result<catalog::Filter> {
    if let Some(h) = harness {
        if set.get(h).is_none() {
            anyhow::bail!("unknown harness `{h}`; known: {}", set.names().join(", "));
        }
    }
    Ok(catalog::Filter {
        harness: harness.map(str::to_owned),
        since: since
            .map(|s| catalog::parse_since(s, std::time::SystemTime::now()))
            .transpose()
            .map_err(anyhow::Error::msg)?,
        project: project.map(str::to_owned),
        skip_empty: set
            .iter()
            .filter(|a| a.spec.discover.as_ref().is_some_and(|d| d.skip_empty))
            .map(|a| a.spec.name.clone())
            .collect(),
    })
}

/// Finds the one listed session whose id is `id` or starts with it.
fn find_session(
    set: &AdapterSet,
    id: &str,
    harness: Option<&str>,
    redact: &[String],
) -> anyhow::Result<catalog::Found> {
    let filter = catalog_filter(set, harness, None, None)?;
    let found: Vec<catalog::Found> = catalog::discover(set, &process_var)
        .into_iter()
        .filter(|f| filter.admits_file(f))
        .collect();
    let rows: Vec<catalog::Entry> = catalog::summarize(found, set, redact, &generated_at())
        .into_iter()
        .filter_map(|(_, row)| row.ok())
        .filter(|row| filter.admits(row))
        .collect();
    match catalog::by_id(&rows, id).as_slice() {
        [one] => Ok(catalog::Found {
            harness: one.harness.clone(),
            path: one.path.clone(),
            session: one.session.clone(),
        }),
        [] => anyhow::bail!(
            "no listed session has an id starting with `{id}` ({} session(s) listed; see `tracebook list`)",
            rows.len()
        ),
        many => {
            let mut msg = format!(
                "session id `{id}` is ambiguous: {} sessions match; give more characters:",
                many.len()
            );
            for e in many {
                msg.push_str(&format!(
                    "\n  {} {} {}",
                    e.harness,
                    e.id,
                    e.started_at.as_deref().unwrap_or("-")
                ));
            }
            anyhow::bail!(msg)
        }
    }
}

fn list_command(args: &cli::ListArgs) -> anyhow::Result<Exit> {
    let set = AdapterSet::load(args.adapters.as_deref())?;
    let filter = catalog_filter(
        &set,
        args.harness.as_deref(),
        args.since.as_deref(),
        args.project.as_deref(),
    )?;
    let found: Vec<catalog::Found> = catalog::discover(&set, &process_var)
        .into_iter()
        .filter(|f| filter.admits_file(f))
        .collect();
    let listed = catalog::summarize(found, &set, &[], &generated_at());
    let mut rows = Vec::new();
    let mut failed = 0;
    let mut stderr = std::io::stderr().lock();
    for (found, row) in listed {
        match row {
            Ok(e) if filter.admits(&e) => rows.push(e),
            Ok(_) => {}
            Err(e) => {
                failed += 1;
                writeln!(stderr, "warning: {}: skipped: {}", found.harness, shown(&e)).ok();
            }
        }
    }
    // Newest first; sessions without a start time last, then by harness and id.
    rows.sort_by(|a, b| {
        b.started_at
            .cmp(&a.started_at)
            .then_with(|| a.harness.cmp(&b.harness))
            .then_with(|| a.id.cmp(&b.id))
    });
    let mut text = String::new();
    if args.json {
        text = serde_json::to_string_pretty(&rows).context("writing the list")?;
        text.push('\n');
    } else {
        // A subagent's own session is read nested in its parent's: the table leaves it out
        // when it lists the parent (the JSON keeps every row, each with its `parent`).
        let nested: Vec<bool> = rows.iter().map(|e| catalog::nested_in(e, &rows)).collect();
        let hidden = nested.iter().filter(|n| **n).count();
        if hidden > 0 {
            writeln!(
                stderr,
                "note: {hidden} subagent session(s) not shown: each is nested in its parent's notebook (`--json` lists them with their parent)"
            )
            .ok();
            let mut shown = nested.iter().map(|n| !n);
            rows.retain(|_| shown.next().unwrap_or(true));
        }
        use std::fmt::Write as _;
        let _ = writeln!(
            text,
            "{:<12} {:<38} {:<20} {:<20} {:>5} {:>6} {:>6}",
            "HARNESS", "ID", "PROJECT", "STARTED", "TURNS", "TOOLS", "ERRORS"
        );
        // Each cell is one line of visible text, whatever the log put in an id or a project.
        for e in &rows {
            let _ = writeln!(
                text,
                "{:<12} {:<38} {:<20} {:<20} {:>5} {:>6} {:>6}",
                shown(&e.harness),
                shown(&e.id),
                shown(e.project.as_deref().unwrap_or("-")),
                shown(
                    &e.started_at
                        .as_deref()
                        .map(|s| s.chars().take(19).collect::<String>())
                        .unwrap_or_else(|| "-".to_owned())
                ),
                e.turns,
                e.tool_calls,
                e.errors
            );
        }
    }
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("writing to standard output")
        }
        _ if failed > 0 => Ok(Exit::SomeFailed),
        _ => Ok(Exit::Success),
    }
}

fn rerender_command(args: &cli::RerenderArgs) -> anyhow::Result<Exit> {
    let name = shown(&args.input.display().to_string()).into_owned();
    let html = std::fs::read_to_string(&args.input).with_context(|| format!("reading {name}"))?;
    let back = report::compat::read(&html).with_context(|| name.clone())?;
    // Today's privacy stage over what the old notebook holds, before anything is rendered.
    let options = privacy::Options {
        redact: args.redact.clone(),
        keep_images: args.keep_images,
    };
    let (mut report, redacted) =
        privacy::report(&back.report, &options).context("redacting the embedded report")?;
    drop(back.report);
    report::select::apply(&mut report, &turn_selection(&args.select)?)
        .map_err(anyhow::Error::msg)?;
    let mut notebook = render::notebook(report, render::View::Full, render::Storage::default())
        .context("rendering the notebook")?;
    // A notebook written by an older version passes the final scan of this one.
    notebook.final_scan();
    let out = args.output.clone().unwrap_or_else(|| args.input.clone());
    write_output(&out, &notebook.pieces())?;
    if !args.quiet {
        let mut stderr = std::io::stderr().lock();
        for note in &back.notes {
            writeln!(stderr, "note: {name}: {}", shown(note)).ok();
        }
        if redacted {
            writeln!(
                stderr,
                "note: {name}: this version's privacy rules redacted text the notebook held"
            )
            .ok();
        }
        if out.as_os_str() != "-" {
            writeln!(
                stderr,
                "wrote {} (from schema version {})",
                out.display(),
                back.from_version
            )
            .ok();
        }
    }
    Ok(Exit::Success)
}

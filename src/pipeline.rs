//! The pipeline, once: read one session, redact it, project it into turns and build its report
//! (stages 1 to 5 of the crate map). Every command that reads a log goes through
//! [`report()`]; each stage runs under [`stage`], which gives its memory back and can time it.

use std::path::Path;

use crate::adapters::{self, AdapterSet};
use crate::report::{self, RunInfo, model::Report};
use crate::warning::Warning;
use crate::{memory, privacy, projection};

/// What a pipeline run needs besides its input.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// The adapters to detect and read the input with.
    pub adapters: &'a AdapterSet,
    /// Read the input with this adapter instead of detecting it.
    pub harness: Option<&'a str>,
    /// The session's id inside an input that holds several (a storage tree or a database).
    pub session: Option<&'a str>,
    /// The user's privacy choices.
    pub privacy: privacy::Options,
    /// The report's generation time ([`generated_at`] for a real run; tests pin it).
    pub generated_at: String,
}

impl<'a> Options<'a> {
    /// Detect the harness, read the input's one (or newest) session, default privacy, no time.
    pub fn new(adapters: &'a AdapterSet) -> Self {
        Options {
            adapters,
            harness: None,
            session: None,
            privacy: privacy::Options::default(),
            generated_at: String::new(),
        }
    }
}

/// Reads, redacts, projects and builds the report of one session. The warnings returned have
/// been through the privacy stage too: they name inputs and lines, and may quote a path.
pub fn report(input: &Path, options: &Options<'_>) -> anyhow::Result<(Report, Vec<Warning>)> {
    let set = options.adapters;
    rayon::spawn(privacy::secrets::prewarm);
    let loaded = stage("load", || {
        adapters::input::load_session(input, set, options.harness, options.session)
    })?;
    let label = set
        .get(&loaded.session.harness)
        .map(|a| a.spec.label.clone())
        .unwrap_or_default();
    let policy = privacy::Policy::new(&loaded.session, &options.privacy);
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
        generated_at: options.generated_at.clone(),
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

/// Runs one stage and gives back the memory it let go ([`memory::release`]), printing its
/// wall time, and where the system reports them the process's resident memory after it and
/// the peak so far, to standard error when `TRACEBOOK_TIMINGS` is set (`scripts/bench.py
/// --stages` reads these lines).
pub fn stage<T>(name: &str, f: impl FnOnce() -> T) -> T {
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
pub fn generated_at() -> String {
    std::env::var("TRACEBOOK_GENERATED_AT").unwrap_or_else(|_| {
        humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
    })
}

//! `tracebook render`: one session through the pipeline, its turn selection, the notebook or
//! the JSON report, the final secret scan over exactly what is written, and the write.
//! `--all` is [`super::batch`], which renders each session with [`render_session`].

use anyhow::Context as _;
use std::path::{Path, PathBuf};

use crate::adapters::AdapterSet;
use crate::cli::{Format, RenderArgs};
use crate::cmd::{Exit, list};
use crate::console::{self, Console};
use crate::pipeline::{self, stage};
use crate::render::{self, Notebook};
use crate::report::model::{Report, Storage, View};
use crate::{memory, privacy, report};

/// Renders one session (`--all` is [`super::batch::run`]).
pub fn run(args: &RenderArgs) -> anyhow::Result<Exit> {
    refuse_open_of_stdout(args)?;
    // The secret rules most sessions need compile on the pool while the adapters are read.
    rayon::spawn(privacy::secrets::prewarm);
    let set = AdapterSet::load(args.adapters.as_deref())?;
    let selection = args.select.selection();
    let console = Console::new(args.quiet, args.strict);
    let generated_at = pipeline::generated_at();
    let picked = match &args.pick.session {
        Some(id) => Some(list::find_session(
            &set,
            id,
            args.harness.as_deref(),
            &args.privacy(),
            &generated_at,
        )?),
        None => None,
    };
    let input = match &picked {
        Some(p) => p.found.path.clone(),
        None => args.input.clone().unwrap_or_default(),
    };
    let out = output_path(args, &input);
    refuse_overwriting_input(&out, &input, &set)?;
    // A session picked by id was read to be found.
    let (mut report, warnings) = match picked {
        Some(p) => (p.report, p.warnings),
        None => pipeline::report(
            &input,
            &pipeline::Options {
                adapters: &set,
                harness: args.harness.as_deref(),
                session: None,
                privacy: args.privacy(),
                generated_at,
            },
        )?,
    };
    report::select::apply(&mut report, &selection).map_err(anyhow::Error::msg)?;
    if console.warnings(&warnings) {
        return Ok(Exit::Strict);
    }
    let summary = report.summary;
    let (output, caught) = render_session(report, &RenderOptions::of(args))?;
    if caught > 0 {
        console.note(&format!(
            "the final scan redacted {caught} secret(s) the earlier stages missed"
        ));
    }
    stage("write", || console::write_output(&out, &output.pieces()))?;
    if out.as_os_str() != "-" {
        let s = &summary;
        console.done(&format!(
            "wrote {} ({} turns, {} tool calls: {} ok, {} error, {} unknown; {} warning(s))",
            out.display(),
            s.turns,
            s.tool_calls,
            s.ok,
            s.error,
            s.unknown,
            warnings.len()
        ));
    }
    if args.open {
        super::open::open(&out, &console);
    }
    Ok(Exit::Success)
}

/// How a session's report becomes what is written: the same for one session and for every
/// session of `--all`.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions {
    /// A notebook or the JSON report.
    pub format: Format,
    /// What is kept of each turn.
    pub view: View,
    /// How the notebook writes its turns.
    pub storage: Storage,
    /// The most bytes the Markdown may take (`--max-bytes`).
    pub max_bytes: usize,
}

impl RenderOptions {
    /// The options `render` was given.
    pub fn of(args: &RenderArgs) -> Self {
        RenderOptions {
            format: args.format,
            view: args.view(),
            storage: args.storage(),
            max_bytes: args.max_bytes,
        }
    }
}

/// What a render writes.
pub enum Output {
    /// A notebook, in its pieces.
    Html(Notebook),
    /// The report as JSON, or as Markdown.
    Text(String),
}

impl Output {
    /// The pieces to write, in order.
    pub fn pieces(&self) -> Vec<&str> {
        match self {
            Output::Html(notebook) => notebook.pieces(),
            Output::Text(text) => vec![text.as_str()],
        }
    }
}

/// Applies the view to a report and records it with the storage, renders the notebook (or
/// the JSON report), and runs the last scan, shape-only secret rules over exactly what is
/// written. Returns it with the number of secrets that scan redacted.
pub fn render_session(
    mut report: Report,
    options: &RenderOptions,
) -> anyhow::Result<(Output, usize)> {
    report::select::view(&mut report, options.view);
    report.storage = options.storage;
    Ok(match options.format {
        Format::Html => {
            let mut notebook = stage("render", || {
                render::notebook(report, options.storage.into(), privacy::secrets::backstop)
            })
            .context("rendering the notebook")?;
            let caught = stage("final scan", || notebook.final_scan()) + notebook.caught;
            (Output::Html(notebook), caught)
        }
        Format::Json => {
            let mut json = serde_json::to_string_pretty(&report).context("writing the report")?;
            json.push('\n');
            // The report's text is in the JSON now: let it go before the scan reads the JSON
            // (and may copy it).
            drop(report);
            memory::release();
            let (scanned, caught) = stage("final scan", || privacy::secrets::backstop(&json));
            if let std::borrow::Cow::Owned(s) = scanned {
                json = s;
            }
            (Output::Text(json), caught)
        }
        Format::Md => {
            let (md, caught) = stage("render", || markdown(&report, options.max_bytes));
            (Output::Text(md), caught)
        }
    })
}

/// The Markdown of a report after the final scan, within `max_bytes`: a redaction marker can
/// be longer than what it replaced, so the budget shrinks by the overshoot until it fits.
fn markdown(report: &Report, max_bytes: usize) -> (String, usize) {
    let mut budget = max_bytes;
    loop {
        let md = render::gfm::markdown(report, budget);
        let (scanned, caught) = privacy::secrets::backstop(&md);
        let scanned = scanned.into_owned();
        match scanned.len().checked_sub(max_bytes) {
            Some(over) if over > 0 && budget > over => budget -= over,
            _ => return (scanned, caught),
        }
    }
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
        .filter(|s| !s.is_empty() && s != "." && s != ".." && s != "-")
        .unwrap_or_else(|| "session".to_owned());
    let ext = match args.format {
        Format::Html => "html",
        Format::Json => "json",
        Format::Md => "md",
    };
    PathBuf::from(format!("{stem}.{ext}"))
}

/// `--open` needs a file: refused when the notebook goes to standard output.
pub(super) fn refuse_open_of_stdout(args: &RenderArgs) -> anyhow::Result<()> {
    if args.open && args.output.as_deref().is_some_and(|o| o.as_os_str() == "-") {
        anyhow::bail!("--open needs a file to open; -o - writes to standard output");
    }
    Ok(())
}

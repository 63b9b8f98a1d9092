//! `tracebook rerender`: a notebook rendered again from the report embedded in it, with this
//! version's privacy rules and templates.

use anyhow::Context as _;

use crate::cli::{Format, RerenderArgs, RerenderFormat};
use crate::cmd::Exit;
use crate::cmd::render::{RenderOptions, render_session};
use crate::console::{self, Console, shown};
use crate::{privacy, report};

/// Reads the embedded report (any past schema), redacts it again, writes the notebook.
pub fn run(args: &RerenderArgs) -> anyhow::Result<Exit> {
    let console = Console::new(args.quiet, false);
    let name = shown(&args.input.display().to_string()).into_owned();
    let html = std::fs::read_to_string(&args.input).with_context(|| format!("reading {name}"))?;
    let back = crate::render::embed::read(&html).with_context(|| name.clone())?;
    // Today's privacy stage over what the old notebook holds, before anything is rendered.
    let (mut report, redacted) =
        privacy::report(&back.report, &args.privacy()).context("redacting the embedded report")?;
    drop(back.report);
    report::select::apply(&mut report, &args.select.selection()).map_err(anyhow::Error::msg)?;
    // The page is what it was: the view and the storage the report records. A notebook
    // written by an older version passes the final scan of this one.
    let options = RenderOptions {
        format: match args.format {
            RerenderFormat::Html => Format::Html,
            RerenderFormat::Md => Format::Md,
        },
        view: report.view,
        storage: report.storage,
        max_bytes: args.max_bytes,
    };
    let (notebook, _) = render_session(report, &options)?;
    let out = args.output.clone().unwrap_or_else(|| match args.format {
        RerenderFormat::Html => args.input.clone(),
        RerenderFormat::Md => args.input.with_extension("md"),
    });
    console::write_output(&out, &notebook.pieces())?;
    for note in &back.notes {
        console.note(&format!("{name}: {note}"));
    }
    if redacted {
        console.note(&format!(
            "{name}: this version's privacy rules redacted text the notebook held"
        ));
    }
    if out.as_os_str() != "-" {
        console.done(&format!(
            "wrote {} (from schema version {})",
            out.display(),
            back.from_version
        ));
    }
    Ok(Exit::Success)
}

//! `tracebook list`: one row per session each harness keeps in its usual place; and the
//! resolution of `render --session ID` against the same list.

use anyhow::Context as _;
use std::time::SystemTime;

use crate::adapters::AdapterSet;
use crate::catalog::{self, Found};
use crate::cli::ListArgs;
use crate::cmd::Exit;
use crate::console::{self, Console, shown};
use crate::pipeline;
use crate::privacy;
use crate::report::model::Report;
use crate::report::row::SessionRow;
use crate::warning::Warning;
use rayon::prelude::*;

/// Prints the table (or `--json`, every row) of the sessions that pass the filters.
pub fn run(args: &ListArgs) -> anyhow::Result<Exit> {
    let set = AdapterSet::load(args.adapters.as_deref())?;
    let filter = filter(
        &set,
        args.harness.as_deref(),
        args.since,
        args.project.as_deref(),
    )?;
    let found = discover(&set, &filter);
    let any_found = !found.is_empty();
    let listed = catalog::summarize(
        found,
        &set,
        &privacy::Options::default(),
        &pipeline::generated_at(),
    );
    let console = Console::default();
    let mut rows = Vec::new();
    let mut failed = 0;
    for (found, row) in listed {
        match row {
            Ok(e) if filter.admits(&e) => rows.push(e),
            Ok(_) => {}
            Err(e) => {
                failed += 1;
                // Named as `render --all` names a session it could not read.
                console.error(&format!(
                    "{} {}: {e}",
                    found.harness,
                    crate::adapters::pattern::display_name(&found.path)
                ));
            }
        }
    }
    rows.sort_by(SessionRow::newest_first);
    if rows.is_empty() && failed == 0 {
        for line in nothing_found(&set, &filter, any_found) {
            console.note(&line);
        }
        if !args.json {
            return Ok(Exit::Success);
        }
    }
    let text = if args.json {
        let mut text = serde_json::to_string_pretty(&rows).context("writing the list")?;
        text.push('\n');
        text
    } else {
        // A subagent's own session is read nested in its parent's: the table leaves it out
        // when it lists the parent (the JSON keeps every row, each with its `parent`).
        let nested: Vec<bool> = rows.iter().map(|e| e.nested_in(&rows)).collect();
        let hidden = nested.iter().filter(|n| **n).count();
        if hidden > 0 {
            console.note(&format!(
                "{hidden} subagent session(s) not shown: each is nested in its parent's notebook (`--json` lists them with their parent)"
            ));
            let mut kept = nested.iter().map(|n| !n);
            rows.retain(|_| kept.next().unwrap_or(true));
        }
        table(&rows)
    };
    console::write_stdout(&[&text])?;
    Ok(if failed > 0 {
        Exit::SomeFailed
    } else {
        Exit::Success
    })
}

/// What `list` says when it lists nothing: that the filters left out all it found, or, one
/// line per harness the filter admits, where it looked and why nothing was there.
fn nothing_found(set: &AdapterSet, filter: &catalog::Filter, any_found: bool) -> Vec<String> {
    if any_found {
        return vec!["no session matches --harness, --since and --project".to_owned()];
    }
    let mut lines = vec!["no session found; where each harness keeps them:".to_owned()];
    for place in catalog::looked_in(set, &process_var) {
        if filter.harness.as_ref().is_some_and(|h| *h != place.harness) {
            continue;
        }
        let line = match &place.folder {
            Some(f) if f.is_dir() => format!(
                "{}: nothing in {} matches {}",
                place.harness,
                f.display(),
                place.files.join(", ")
            ),
            Some(f) => format!("{}: {} does not exist", place.harness, f.display()),
            None => match place.from.as_slice() {
                [one] => format!("{}: not looked for, {one} is not set", place.harness),
                many => format!(
                    "{}: not looked for, neither {} is set",
                    place.harness,
                    many.join(" nor ")
                ),
            },
        };
        lines.push(line);
    }
    lines
}

/// The table `list` prints: each cell one line of visible text, whatever the log put in an
/// id or a project.
fn table(rows: &[SessionRow]) -> String {
    use std::fmt::Write as _;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<12} {:<38} {:<20} {:<20} {:>5} {:>6} {:>6}",
        "HARNESS", "ID", "PROJECT", "STARTED", "TURNS", "TOOLS", "ERRORS"
    );
    for e in rows {
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
    text
}

/// Reads an environment variable of this process (discovery's view of the environment).
fn process_var(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name)
}

/// The sessions the adapters' `discover` blocks find whose harness passes the filter.
pub fn discover(set: &AdapterSet, filter: &catalog::Filter) -> Vec<Found> {
    catalog::discover(set, &process_var)
        .into_iter()
        .filter(|f| filter.admits_file(f))
        .collect()
}

/// `--harness`, `--since`, `--project` as a catalog filter.
pub fn filter(
    set: &AdapterSet,
    harness: Option<&str>,
    since: Option<SystemTime>,
    project: Option<&str>,
) -> anyhow::Result<catalog::Filter> {
    if let Some(h) = harness
        && set.get(h).is_none()
    {
        anyhow::bail!("unknown harness `{h}`; known: {}", set.names().join(", "));
    }
    Ok(catalog::Filter {
        harness: harness.map(str::to_owned),
        since,
        project: project.map(str::to_owned),
        skip_empty: set
            .iter()
            .filter(|a| a.spec.discover.as_ref().is_some_and(|d| d.skip_empty))
            .map(|a| a.spec.name.clone())
            .collect(),
    })
}

/// The one listed session whose id is `id` or starts with it, with its report (built with
/// `privacy`) and the warnings reading it gave.
pub struct Picked {
    /// Where it is.
    pub found: Found,
    /// Its report.
    pub report: Report,
    /// What reading it warned about.
    pub warnings: Vec<Warning>,
}

/// Finds the one listed session whose id is `id` or starts with it. Ids are read from every
/// session in a facts-only pass; only the sessions whose id starts with `id` go through the
/// whole pipeline, to be listed (or not: a harness's empty leftover file is no session) and
/// shown as their list row.
pub fn find_session(
    set: &AdapterSet,
    id: &str,
    harness: Option<&str>,
    privacy: &privacy::Options,
    generated_at: &str,
) -> anyhow::Result<Picked> {
    let filter = filter(set, harness, None, None)?;
    let ids = catalog::ids(discover(set, &filter), set);
    let read = ids.len();
    let candidates: Vec<Found> = ids
        .into_iter()
        .filter(|(_, raw)| raw.starts_with(id))
        .map(|(found, _)| found)
        .collect();
    let mut rows: Vec<(Picked, SessionRow)> = candidates
        .into_par_iter()
        .filter_map(|found| {
            let (report, warnings) = catalog::report(&found, set, privacy, generated_at).ok()?;
            let row = SessionRow::of(&report);
            let picked = Picked {
                found,
                report,
                warnings,
            };
            filter.admits(&row).then_some((picked, row))
        })
        .collect();
    let matched = catalog::by_id(rows.iter().map(|(_, row)| row.id.as_str()), id);
    match matched[..] {
        [one] => Ok(rows.swap_remove(one).0),
        [] => anyhow::bail!(
            "no listed session has an id starting with `{id}` ({read} session(s) read; see `tracebook list`)"
        ),
        _ => {
            let mut msg = format!(
                "session id `{id}` is ambiguous: {} sessions match; give more characters:",
                matched.len()
            );
            for at in matched {
                let e = &rows[at].1;
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

//! `tracebook demo tool-outcomes`: one small session per built-in harness, each in that
//! harness's own format, read through the real pipeline (detection, adapter, the status seam,
//! privacy, projection). For every tool call it prints what a reader that only notices calls
//! would record beside the status tracebook records and what decided it.
//!
//! Each session holds a call that failed, one that worked and one whose result was never
//! written. The failures are the kind a naive reader passes over: a shell command whose
//! harness said `success` or `completed` while the retained exit code says otherwise.

use std::fmt::Write as _;
use std::fs;

use anyhow::Context as _;

use crate::adapters::AdapterSet;
use crate::cli::Demo;
use crate::cmd::Exit;
use crate::console;
use crate::events::{StatusBasis, ToolStatus};
use crate::pipeline;
use crate::report::model::{Report, StepView, ToolCallView, TurnView};

/// One tool call as the demo shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The harness's label, as its adapter names it.
    pub harness: String,
    /// The tool's name.
    pub tool: String,
    /// What it ran or touched.
    pub target: String,
    /// The canonical status.
    pub status: ToolStatus,
    /// Why it has that status, in words.
    pub why: String,
}

/// Prints the demonstration asked for.
pub fn run(which: Demo) -> anyhow::Result<Exit> {
    match which {
        Demo::ToolOutcomes => console::write_stdout(&[&table(&tool_outcomes()?)])?,
    }
    Ok(Exit::Success)
}

/// Reads every sample through the pipeline with the built-in adapters and returns its calls in
/// source order. The harness is detected from each file's content, not named.
pub fn tool_outcomes() -> anyhow::Result<Vec<Row>> {
    let set = AdapterSet::load(None)?;
    let dir = tempfile::tempdir().context("creating a folder for the demo sessions")?;
    let mut rows = Vec::new();
    for (name, text) in crate::adapters::builtin::SAMPLES {
        let path = dir.path().join(name);
        fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        let (report, _) = pipeline::report(&path, &pipeline::Options::new(&set))
            .with_context(|| format!("reading the demo session {name}"))?;
        rows.extend(rows_of(&report));
    }
    Ok(rows)
}

/// The demo's table, as printed.
pub fn table(rows: &[Row]) -> String {
    let head = ("harness", "tool call", "naive reader", "tracebook");
    let call = |r: &Row| format!("{} `{}`", r.tool, r.target);
    let w0 = rows
        .iter()
        .map(|r| r.harness.len())
        .fold(head.0.len(), usize::max);
    let w1 = rows
        .iter()
        .map(|r| call(r).len())
        .fold(head.1.len(), usize::max);
    let w2 = "a tool was called".len();
    let mut out = String::from(
        "One small session per harness, in its own format, read through the real pipeline.\n\
         A naive reader records that a tool was called; tracebook records how each call ended \
         and why.\n\n",
    );
    let _ = writeln!(
        out,
        "{:w0$}  {:w1$}  {:w2$}  {}",
        head.0, head.1, head.2, head.3
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:w0$}  {:w1$}  {:w2$}  {:7}  {}",
            r.harness,
            call(r),
            "a tool was called",
            r.status.as_str(),
            r.why
        );
    }
    out
}

fn rows_of(report: &Report) -> Vec<Row> {
    fn walk(turns: &[TurnView], harness: &str, out: &mut Vec<Row>) {
        for step in turns.iter().flat_map(|t| &t.steps) {
            if let StepView::ToolCall(call) = step {
                out.push(row(call, harness));
                if let Some(sub) = &call.subagent {
                    walk(&sub.turns, harness, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(&report.turns, &report.session.harness_label, &mut out);
    out
}

fn row(call: &ToolCallView, harness: &str) -> Row {
    let target = call
        .command
        .clone()
        .or_else(|| call.paths.first().cloned())
        .unwrap_or_default();
    let why = match (call.status_basis, call.status, call.exit_code) {
        (StatusBasis::ExitCode, _, Some(code)) => {
            format!("exit code {code} retained; it decides whatever the status word says")
        }
        (StatusBasis::ExitCode, _, None) => "a retained exit code".to_owned(),
        (StatusBasis::StatusWord, ToolStatus::Ok, Some(code)) => {
            format!("the harness's status word, and exit code {code}")
        }
        (StatusBasis::StatusWord, ToolStatus::Ok, None) => {
            "the harness's status word, through its adapter's table".to_owned()
        }
        (StatusBasis::StatusWord, ToolStatus::Error, _) => {
            "the harness's status word says it failed".to_owned()
        }
        (StatusBasis::StatusWord, ToolStatus::Unknown, _) => {
            "the harness's status word says it had not finished".to_owned()
        }
        (StatusBasis::NoResult, _, _) => {
            "no result was retained: not assumed to have worked".to_owned()
        }
        (StatusBasis::UnmappedWord, _, _) => "a status word the adapter does not know".to_owned(),
        (StatusBasis::NoStatus, _, _) => "a result that carries no status".to_owned(),
    };
    Row {
        harness: harness.to_owned(),
        tool: call.name.clone(),
        target,
        status: call.status,
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_shows_a_failure_a_success_and_an_unknown() -> anyhow::Result<()> {
        let rows = tool_outcomes()?;
        let set = AdapterSet::load(None)?;
        for harness in set.iter().map(|a| a.spec.label.as_str()) {
            let statuses: Vec<ToolStatus> = rows
                .iter()
                .filter(|r| r.harness == harness)
                .map(|r| r.status)
                .collect();
            assert_eq!(
                statuses,
                [ToolStatus::Error, ToolStatus::Ok, ToolStatus::Unknown],
                "{harness}: {rows:#?}"
            );
        }
        let failures: Vec<&Row> = rows
            .iter()
            .filter(|r| r.status == ToolStatus::Error)
            .collect();
        assert!(
            failures.iter().all(|r| r.why.starts_with("exit code ")),
            "{failures:#?}"
        );
        let text = table(&rows);
        assert!(text.contains("a tool was called"), "{text}");
        Ok(())
    }
}

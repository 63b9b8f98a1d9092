//! The page around the turns: its head, the session's facts, the strip, the turn list and the
//! filters.

use askama::Template;

use super::filters;
use super::overview::Overview;
use super::safe::SafeHtml;
use super::toc::TocStored;
use crate::report::model::{Report, ToolKind, ToolStatus};
use crate::report::row::first_line;

pub(super) fn title(report: &Report) -> String {
    let s = &report.session;
    let first = report
        .turns
        .iter()
        .find_map(|t| t.prompt.as_ref())
        .map(|p| first_line(&p.text, 80));
    match (first, &s.project) {
        (Some(p), Some(proj)) => format!("{p} · {proj} · tracebook"),
        (Some(p), None) => format!("{p} · tracebook"),
        (None, Some(proj)) => format!("{proj} · tracebook"),
        (None, None) => format!("{} · tracebook", s.source),
    }
}

#[derive(Template)]
#[template(path = "report.html")]
pub(super) struct PageTemplate<'a> {
    pub(super) report: &'a Report,
    /// The version that made the report, for the page's generator line.
    pub(super) tool_version: &'a str,
    pub(super) toc: SafeHtml,
    /// The turn list's entries past the first, when they are stored compressed.
    pub(super) toc_stored: Option<TocStored>,
    pub(super) csp: SafeHtml,
    pub(super) css: SafeHtml,
    pub(super) js: SafeHtml,
    /// The stored blocks' decoder, when the page stores any.
    pub(super) decoder: Option<SafeHtml>,
    /// The grammars the page colours code with, when it holds code marked for colouring.
    pub(super) highlighter: Option<SafeHtml>,
    pub(super) turns: SafeHtml,
    pub(super) unlinked: SafeHtml,
    pub(super) stored: SafeHtml,
    pub(super) data: SafeHtml,
    pub(super) title: String,
    pub(super) conversation: bool,
    pub(super) overview: Overview,
    /// The session's verdict over every turn's outcome, in order.
    pub(super) verdict: Vec<super::turns::Verdict>,
    /// The turns with failed calls of their own: id, number and how many.
    pub(super) failed: Vec<(String, usize, usize)>,
}

impl PageTemplate<'_> {
    fn kinds(&self) -> &'static [&'static str] {
        ToolKind::NAMES
    }

    /// The session's tool calls with this status.
    fn status_count(&self, status: ToolStatus) -> usize {
        let s = &self.report.summary;
        match status {
            ToolStatus::Ok => s.ok,
            ToolStatus::Error => s.error,
            ToolStatus::Unknown => s.unknown,
        }
    }
}

//! The offline index of a batch: one row per session, linking its notebook.

use askama::Template;

use super::assets::{INDEX_CSP, INDEX_CSS, INDEX_JS};
use super::safe::SafeHtml;

/// One row of the batch index.
#[derive(Debug, Clone)]
pub struct IndexRow {
    /// Adapter name.
    pub harness: String,
    /// Session id (or file name).
    pub id: String,
    /// The notebook's file name in the same folder; `None` when it could not be rendered.
    pub href: Option<String>,
    /// Privacy-filtered project.
    pub project: Option<String>,
    /// First timestamp.
    pub started_at: Option<String>,
    /// Turns.
    pub turns: usize,
    /// Tool calls.
    pub tool_calls: usize,
    /// Tool calls with status error.
    pub errors: usize,
    /// First prompt's first line.
    pub title: Option<String>,
    /// Why it could not be rendered.
    pub error: Option<String>,
    /// The session this one is a subagent of, when the index lists it: its notebook holds this
    /// one nested.
    pub parent: Option<ParentLink>,
}

/// A link from a subagent's row to its parent session's notebook.
#[derive(Debug, Clone)]
pub struct ParentLink {
    /// The parent's session id.
    pub id: String,
    /// The parent's notebook, in the same folder.
    pub href: String,
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexTemplate<'a> {
    rows: &'a [IndexRow],
    failed: usize,
    tool_version: &'a str,
    csp: SafeHtml,
    css: SafeHtml,
    js: SafeHtml,
}

/// Renders the offline index of a batch: a sortable, filterable table linking each notebook.
pub fn index(rows: &[IndexRow]) -> askama::Result<String> {
    IndexTemplate {
        rows,
        failed: rows.iter().filter(|r| r.error.is_some()).count(),
        tool_version: env!("CARGO_PKG_VERSION"),
        csp: SafeHtml::asset_text(&INDEX_CSP),
        css: SafeHtml::asset(INDEX_CSS),
        js: SafeHtml::asset(INDEX_JS),
    }
    .render()
}

//! The offline index of a batch: one row per session, linking its notebook.

use askama::Template;

use super::assets::{INDEX_CSP, INDEX_CSS, INDEX_JS};
use super::safe::SafeHtml;
use crate::report::row::SessionRow;

/// One row of the batch index.
#[derive(Debug, Clone)]
pub struct IndexRow {
    /// The session's row; for a session that could not be rendered, its harness and file
    /// name only.
    pub row: SessionRow,
    /// The notebook's file name in the same folder; `None` when it could not be rendered.
    pub href: Option<String>,
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

//! The turn list: one entry per turn, in lists a browser can skip whole.

use askama::Template;

use super::overview::Tally;
use crate::report::model::TurnView;

/// Turn-list entries per list: a list out of view is skipped whole.
pub(super) const TOC_INLINE: usize = 200;

/// The turn-list entries a page that stores turns writes as HTML, about a screenful: the rest
/// of the list is stored compressed with the turns and listed when the reader scrolls the list
/// to its end. Fewer than a list's worth, so the first paint of a long session's page lays out
/// no more of the list than a short one's (measured: the 100 MB bench page's load event 8 ms
/// earlier, its first paint no later).
pub(super) const TOC_FIRST: usize = 50;

/// The turn list's stored entries: their block and the turns they list.
pub(super) struct TocStored {
    pub(super) id: String,
    pub(super) first: usize,
    pub(super) last: usize,
}

#[derive(Template)]
#[template(path = "partials/toc.html")]
pub(super) struct TocTemplate<'a> {
    pub(super) entries: &'a [TocEntry],
}

/// What the turn list shows of a turn.
pub(super) struct TocEntry {
    pub(super) id: String,
    pub(super) number: usize,
    pub(super) status: &'static str,
    /// The start of the prompt, long enough for the list's 60-byte cut to read as it would on
    /// the whole prompt.
    pub(super) prompt: Option<String>,
    pub(super) tally: Tally,
}

impl TocEntry {
    pub(super) fn of(turn: &TurnView) -> Self {
        Self {
            id: turn.id.clone(),
            number: turn.number,
            status: turn.response_status.as_str(),
            prompt: turn.prompt.as_ref().map(|p| {
                let mut end = p.text.len().min(80);
                while !p.text.is_char_boundary(end) {
                    end += 1;
                }
                p.text[..end].to_owned()
            }),
            tally: Tally::of(turn),
        }
    }
}

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

/// The stored entries' lists are held in pieces of about this size until the list is done.
const PIECE_BYTES: usize = 4 << 20;

/// The turn list, written as the turns are rendered, so that a long session's list is held as
/// its HTML rather than one entry per turn. Where the page stores turns, the entries past the
/// first [`TOC_FIRST`] are written in their stored lists at once; until then (and on a page
/// that stores none) the entries wait, and are written as one list at the end.
#[derive(Default)]
pub(super) struct TocList {
    /// Entries not yet written: the page may still store none of its turns.
    waiting: Vec<TocEntry>,
    /// The first entries' HTML, once the page stores turns.
    first: Option<String>,
    /// The stored entries' lists, each list's entries gathered until it is full: the lists
    /// written so far in pieces of about [`PIECE_BYTES`] and the last piece, joined once at
    /// the end (a long session's list, grown in one string, was copied into one twice its
    /// size as it grew).
    pieces: Vec<String>,
    rest: String,
    list: Vec<TocEntry>,
    /// The numbers of the first and last stored entries.
    numbers: Option<(usize, usize)>,
}

impl TocList {
    /// Lists the next turns; `stored` once the page stores any of its turns (from then on).
    pub(super) fn add(&mut self, turns: &[TurnView], stored: bool) -> askama::Result<()> {
        self.add_entries(turns.iter().map(TocEntry::of), stored)
    }

    fn add_entries(
        &mut self,
        entries: impl Iterator<Item = TocEntry>,
        stored: bool,
    ) -> askama::Result<()> {
        self.waiting.extend(entries);
        if stored {
            for entry in std::mem::take(&mut self.waiting) {
                self.place(entry)?;
            }
        }
        Ok(())
    }

    fn place(&mut self, entry: TocEntry) -> askama::Result<()> {
        if self.first.is_none() {
            self.waiting.push(entry);
            if self.waiting.len() == TOC_FIRST {
                let first = TocTemplate {
                    entries: &self.waiting,
                }
                .render()?;
                self.first = Some(first);
                self.waiting.clear();
            }
            return Ok(());
        }
        self.numbers = Some((self.numbers.map_or(entry.number, |n| n.0), entry.number));
        self.list.push(entry);
        if self.list.len() == TOC_INLINE {
            self.write_list()?;
        }
        Ok(())
    }

    fn write_list(&mut self) -> askama::Result<()> {
        if !self.list.is_empty() {
            if self.rest.len() >= PIECE_BYTES {
                let next = String::with_capacity(PIECE_BYTES + PIECE_BYTES / 4);
                self.pieces.push(std::mem::replace(&mut self.rest, next));
            }
            TocTemplate {
                entries: &self.list,
            }
            .render_into(&mut self.rest)?;
            self.list.clear();
        }
        Ok(())
    }

    /// The list the page shows as HTML, and the stored entries' lists with the numbers of
    /// their first and last turns (none when the page stores no turns or has no more than
    /// [`TOC_FIRST`]).
    pub(super) fn finish(mut self) -> askama::Result<(String, Option<StoredEntries>)> {
        let Some(first) = self.first.take() else {
            // Fewer than the first entries were placed, or the page stores no turns.
            let html = TocTemplate {
                entries: &self.waiting,
            }
            .render()?;
            return Ok((html, None));
        };
        self.write_list()?;
        self.pieces.push(std::mem::take(&mut self.rest));
        let stored = self.numbers.map(|(first, last)| StoredEntries {
            html: std::mem::take(&mut self.pieces).concat(),
            first,
            last,
        });
        Ok((first, stored))
    }
}

/// The turn list's entries past the first, to be stored: their lists' HTML and the numbers of
/// the first and last turns they list.
pub(super) struct StoredEntries {
    pub(super) html: String,
    pub(super) first: usize,
    pub(super) last: usize,
}

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
            id: turn.id.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(number: usize) -> TocEntry {
        TocEntry {
            id: format!("t{number}"),
            number,
            status: if number % 3 == 0 {
                "incomplete"
            } else {
                "complete"
            },
            prompt: (number % 5 != 0).then(|| format!("prompt <{number}> & more")),
            tally: Tally {
                ok: number % 4,
                error: number % 7 / 5,
                unknown: number % 11 / 9,
            },
        }
    }

    #[test]
    fn the_list_written_as_it_goes_is_the_list_written_at_once() -> askama::Result<()> {
        for n in [0, 1, 49, 50, 51, 249, 250, 251, 449, 450, 451, 1000] {
            let all: Vec<TocEntry> = (1..=n).map(entry).collect();
            for stores_from in [None, Some(0), Some(1), Some(60), Some(n)] {
                let mut list = TocList::default();
                let mut from = 1;
                for window in (1..=n).collect::<Vec<_>>().chunks(32) {
                    let to = from + window.len();
                    let stored = stores_from.is_some_and(|s| s < to);
                    list.add_entries((from..to).map(entry), stored)?;
                    from = to;
                }
                let stored = stores_from.is_some_and(|s| s <= n);
                let (html, rest) = list.finish()?;
                if stored && n > TOC_FIRST {
                    let (first, others) = all.split_at(TOC_FIRST);
                    assert_eq!(html, TocTemplate { entries: first }.render()?, "{n}");
                    let rest = rest.expect("stored entries");
                    assert_eq!(rest.html, TocTemplate { entries: others }.render()?, "{n}");
                    assert_eq!((rest.first, rest.last), (TOC_FIRST + 1, n));
                } else {
                    assert_eq!(html, TocTemplate { entries: &all }.render()?, "{n}");
                    assert!(rest.is_none());
                }
            }
        }
        Ok(())
    }
}

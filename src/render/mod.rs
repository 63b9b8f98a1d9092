//! Rendering: the report model becomes one self-contained HTML page.
//!
//! Askama templates under `templates/` escape every value; the only unescaped values are
//! [`SafeHtml`] (sanitized Markdown, nested partials, and our own inlined assets), each written
//! with `|safe`, so `grep '|safe' templates/` lists them all. Every page extends
//! `templates/base.html`, its shared head. CSS and JS come from `assets/` and are allowed by
//! hash in a Content-Security-Policy that forbids every network load. The report model is
//! embedded, compressed and inert, for tools that read it back ([`embed`]).

mod assets;
pub mod embed;
mod filters;
pub mod gfm;
pub mod highlight;
mod index;
pub mod markdown;
mod overview;
mod page;
mod safe;
mod storage;
mod toc;
mod turns;
mod words;

use askama::Template;

pub use crate::report::model::View;
use crate::report::model::{Report, TurnView};
use crate::report::select;
use assets::{CSS, DECODER, JS};
use embed::EmbeddedReport;
pub use index::{IndexExtra, IndexRow, ParentLink, SearchTurn, index};
use overview::overview;
use page::{PageTemplate, title};
pub use safe::SafeHtml;
use storage::Layout;
pub use storage::{BLOCK_BYTES, INLINE_BYTES, Storage};
use toc::{TocList, TocStored};
use turns::{SubagentTemplate, TurnsTemplate};
pub use words::human_size;

/// Room for what a page holds besides its turns, blocks and data: styles, script, the turn
/// list and the strip (a long session's turn list is most of it).
const PAGE_EXTRA: usize = 1 << 20;

/// Turns a page renders and writes into its embedded report together, per core, before it
/// lets them go.
const WINDOW_PER_CORE: usize = 16;

/// Windows rendered between two hand-backs of the memory their turns held
/// ([`crate::memory::release`]): after every window costs time for little; after every
/// fourth takes the 80 MB Gemini CLI bench session's peak from 115–117 MiB to 109–111 MiB.
const RELEASE_EVERY: usize = 4;

/// A rendered notebook, in the pieces it is written in: the page's markup, and its large inert
/// data (stored blocks, the embedded report) where it stands, so that writing it out never
/// copies the data into one string.
#[derive(Debug, Clone)]
pub struct Notebook {
    /// The page, in order.
    pub parts: Vec<Part>,
    /// Secrets the last shape-only scan found in the turns stored compressed (the rest is
    /// scanned by [`Notebook::final_scan`]).
    pub caught: usize,
    /// The last scan the notebook was rendered with.
    scan: Scan,
}

/// The last secret scan, given by the caller (the privacy stage's shape-only rules): it reads a
/// text of the page before the text is compressed or written and returns it with what it found
/// replaced, and how many it found. The render stage runs it; it does not know the rules.
pub type Scan = fn(&str) -> (std::borrow::Cow<'_, str>, usize);

/// A scan that finds nothing, for a page that is read, not written for a reader (tests,
/// tools).
pub fn no_scan(text: &str) -> (std::borrow::Cow<'_, str>, usize) {
    (std::borrow::Cow::Borrowed(text), 0)
}

/// A piece of a notebook.
#[derive(Debug, Clone)]
pub enum Part {
    /// Markup and text: the final secret scan reads each piece on its own (the turns' HTML
    /// comes in pieces of a few MiB, split between turns, as stored blocks are).
    Text(String),
    /// Base64 data inside the page's own `<template>` elements: inert, and already scanned
    /// before it was compressed.
    Data(String),
}

impl Notebook {
    /// The last scan (the notebook's [`Scan`]) over the page's text. Returns how many secrets
    /// it redacted. Its data (the embedded report, the turns a large page stores compressed)
    /// is left alone: those bytes are not text a rule could read, and a replacement inside them
    /// would break them. What they hold went through the privacy stage like the page itself,
    /// and stored turns through this scan before they were compressed.
    pub fn final_scan(&mut self) -> usize {
        let mut caught = 0;
        for part in &mut self.parts {
            if let Part::Text(text) = part {
                let (scanned, n) = (self.scan)(text);
                if let std::borrow::Cow::Owned(s) = scanned {
                    *text = s;
                }
                caught += n;
            }
        }
        caught
    }

    /// The page's pieces in order, as written.
    pub fn pieces(&self) -> Vec<&str> {
        self.parts.iter().map(Part::as_str).collect()
    }

    /// The whole page as one string.
    pub fn html(&self) -> String {
        self.pieces().concat()
    }
}

impl Part {
    /// Its text.
    pub fn as_str(&self) -> &str {
        match self {
            Part::Text(s) | Part::Data(s) => s,
        }
    }
}

/// Where the stored blocks and the embedded report stand in the page's markup while it is
/// rendered: tags no escaped text or sanitized Markdown can hold.
const TURNS_AT: &str = "<tracebook-turns/>";
const STORED_AT: &str = "<tracebook-stored/>";
const DATA_AT: &str = "<tracebook-data/>";

/// Renders the whole notebook, from a copy of the report, without the last scan
/// ([`no_scan`]): for a page that is read, not written.
pub fn html(report: &Report) -> askama::Result<String> {
    notebook(report.clone(), Storage::default(), no_scan).map(|n| n.html())
}

/// [`html`] in the given view ([`select::view`]).
pub fn html_with(report: &Report, view: View) -> askama::Result<String> {
    let mut report = report.clone();
    select::view(&mut report, view);
    notebook(report, Storage::default(), no_scan).map(|n| n.html())
}

/// Renders the whole notebook of a report, in the view the report records, with the turns
/// written as asked; `scan` runs over each stored block before it is compressed and, in
/// [`Notebook::final_scan`], over the rest. The report is taken over: each turn is let go
/// once it is rendered.
pub fn notebook(report: Report, storage: Storage, scan: Scan) -> askama::Result<Notebook> {
    page(report, storage, scan)
}

fn page(mut report: Report, storage: Storage, scan: Scan) -> askama::Result<Notebook> {
    // What the page shows of the turns outside their own HTML (the turn list, the strip, the
    // title) is taken first. Then each window of turns is rendered (on every core) while it
    // is written into the embedded report, and let go: the page's text is never held twice.
    let mut toc = TocList::default();
    let overview = overview(&report.turns);
    let title = title(&report);
    let verdict = turns::verdict_of(report.turns.iter().map(|t| &*t.outcome), None);
    let failed: Vec<(String, usize, usize)> = report
        .turns
        .iter()
        .filter(|t| t.counts.error > 0)
        .map(|t| (t.id.to_string(), t.number, t.counts.error as usize))
        .collect();
    let turns = std::mem::take(&mut report.turns);
    let mut data = EmbeddedReport::start(&report);
    let page = TurnsTemplate;
    // The languages of the code marked for colouring: the page carries their grammars.
    let mut languages = std::collections::BTreeSet::new();
    let mut layout = Layout::new(storage, scan);
    let window = WINDOW_PER_CORE * rayon::current_num_threads();
    let (mut first, mut windows) = (0, 0);
    // The list of turns is taken from the front a window at a time; each turn's own room is
    // given back as it is written, and the list's as it empties (shrinking the list copied
    // what was left beside it; holding it whole until the last turn left two million one-line
    // records' 145 MiB of turns resident beside the page they had become).
    let mut rest = crate::memory::Taking::new(turns);
    loop {
        let turns: Vec<TurnView> = rest.take(window);
        if turns.is_empty() {
            break;
        }
        let (placed, ()) = rayon::join(
            || {
                page.each_turn(&turns, first, &mut |i, turn, steps, html| {
                    highlight::languages_in(&html, &mut languages);
                    layout.place(&page, i, turn, steps, html)
                })
            },
            || data.turns(&turns),
        );
        placed?;
        toc.add(&turns, layout.stores())?;
        first += turns.len();
        drop(turns);
        windows += 1;
        if windows % RELEASE_EVERY == 0 {
            rest.give_back();
            crate::memory::release();
        }
    }
    drop(rest);
    let (turns, mut stored) = layout.finish()?;
    // A page that stores turns stores its turn list past the first entries too: the list of
    // a long session is otherwise most of what the browser builds before it shows the page.
    let (toc, rest) = toc.finish()?;
    let toc_stored = match rest {
        Some(rest) => {
            let id = stored.next_id();
            let stub = TocStored {
                id: id.clone(),
                first: rest.first,
                last: rest.last,
            };
            stored.write(id, rest.html, None)?;
            stored.seal()?;
            Some(stub)
        }
        None => None,
    };
    stored.let_go();
    let caught = stored.caught;
    let data = data.finish();
    let mut unlinked = String::new();
    for sub in &report.unlinked_subagents {
        unlinked.push_str(&SubagentTemplate { sub }.render()?);
    }
    highlight::languages_in(&unlinked, &mut languages);
    // The markup around the turns is written once, with markers where the turns and the data
    // go: the turns' HTML, most of the page, stays the string it was rendered into and is
    // written as a piece of its own, never copied.
    let decoder = (!stored.html.is_empty()).then(|| SafeHtml::asset(DECODER));
    let highlighter = (!languages.is_empty()).then(|| assets::highlighter(&languages));
    let csp = assets::csp(highlighter.as_deref());
    let mut html = String::with_capacity(unlinked.len() + PAGE_EXTRA);
    PageTemplate {
        report: &report,
        tool_version: &report.meta.tool_version,
        toc: SafeHtml::rendered(toc),
        toc_stored,
        csp: SafeHtml::asset_text(&csp),
        css: SafeHtml::asset(CSS),
        js: SafeHtml::asset(JS),
        decoder,
        highlighter: highlighter.map(SafeHtml::assets),
        turns: SafeHtml::rendered(TURNS_AT.to_owned()),
        unlinked: SafeHtml::rendered(unlinked),
        stored: SafeHtml::rendered(STORED_AT.to_owned()),
        data: SafeHtml::rendered(DATA_AT.to_owned()),
        title,
        conversation: report.view == View::Conversation,
        overview,
        verdict,
        failed,
    }
    .render_into(&mut html)?;
    let mut parts = Vec::with_capacity(turns.len() + stored.html.len() + 5);
    let mut markup = html.as_str();
    for (at, pieces) in [
        (TURNS_AT, turns.into_iter().map(Part::Text).collect()),
        (STORED_AT, stored.html.into_iter().map(Part::Data).collect()),
        (DATA_AT, vec![Part::Data(data)]),
    ] {
        let Some((before, after)) = markup.split_once(at) else {
            return Err(askama::Error::Custom(
                "a marker is missing from the page".into(),
            ));
        };
        parts.push(Part::Text(before.to_owned()));
        parts.extend(pieces);
        markup = after;
    }
    parts.push(Part::Text(markup.to_owned()));
    Ok(Notebook {
        parts,
        caught,
        scan,
    })
}

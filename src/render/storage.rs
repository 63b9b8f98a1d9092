//! Where a page's turns go: inline HTML while the page's budget lasts, then zstd-compressed
//! blocks inside inert `<template>` elements, each leaving a stub the page's script replaces.

use askama::Template;
use base64::Engine as _;
use rayon::prelude::*;
use std::collections::BTreeMap;

use super::Scan;
use super::safe::SafeHtml;
use super::turns::TurnsTemplate;
use crate::report::model::TurnView;

/// Where a page's turns are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Storage {
    /// Whole turns as HTML while `inline` bytes of it last; later turns are stored
    /// zstd-compressed in inert data blocks of about `block` bytes of HTML, each turn leaving a
    /// short stub, which the page's script decodes as the reader scrolls to them, follows a link
    /// into them, searches or filters. A stored turn's steps over `block` bytes (and the first
    /// turn's, whose prompt and response always stay HTML) get a block of their own, decoded
    /// when its Process opens. The page opens as fast whatever the session's size.
    Budget {
        /// HTML written inline, by default [`INLINE_BYTES`].
        inline: usize,
        /// HTML per stored block, by default [`BLOCK_BYTES`].
        block: usize,
    },
    /// Every turn as HTML, readable with JavaScript off, however large the page.
    Inline,
}

impl Default for Storage {
    fn default() -> Self {
        Self::Budget {
            inline: INLINE_BYTES,
            block: BLOCK_BYTES,
        }
    }
}

impl From<crate::report::model::Storage> for Storage {
    /// The storage a report records: the default budget, or every turn inline.
    fn from(storage: crate::report::model::Storage) -> Self {
        match storage {
            crate::report::model::Storage::Stored => Self::default(),
            crate::report::model::Storage::Inline => Self::Inline,
        }
    }
}

/// The HTML of turns a page writes inline before it stores the rest compressed: a typical
/// session reads whole with JavaScript off. Measured in headless Chromium on a 200-turn,
/// 848-call session: at this budget the page loads in about 0.35-0.5 s with its longest task
/// 60-140 ms; written whole (5.3 MB), its longest task is 360 ms.
pub const INLINE_BYTES: usize = 3 * 512 * 1024;
/// The HTML of stored turns compressed together in one block.
pub const BLOCK_BYTES: usize = 256 * 1024;
/// The turns' HTML (inline turns and the stubs of stored ones) is held in pieces of about this
/// size, each one text of the page: a 100 MB session's fits in one, two million one-line
/// records' stubs (170 MB) are never copied into a string twice their size as they grow.
const PIECE_BYTES: usize = 4 << 20;

/// Where rendered turns go: into the page while its inline budget lasts, then into stored
/// blocks ([`Storage`]).
pub(super) struct Layout {
    out: String,
    /// The turns' HTML written before `out`, in pieces of about [`PIECE_BYTES`]: a long
    /// session's stubs are never copied into a larger string as they grow.
    pieces: Vec<String>,
    /// Bytes of turn HTML the page still takes as HTML; `None` once a turn did not fit.
    left: Option<usize>,
    /// Bytes of HTML per stored block.
    block: usize,
    blocks: Stored,
    chunk: Chunk,
}

impl Layout {
    pub(super) fn new(storage: Storage, scan: Scan) -> Self {
        let (inline, block) = match storage {
            Storage::Budget { inline, block } => (inline, block),
            Storage::Inline => (usize::MAX, usize::MAX),
        };
        Self {
            out: String::new(),
            pieces: Vec::new(),
            left: Some(inline),
            block,
            blocks: Stored::new(scan),
            chunk: Chunk::default(),
        }
    }

    /// Places turn number `i` (from 0), whose steps' HTML is `steps` bytes of its `html`.
    pub(super) fn place(
        &mut self,
        page: &TurnsTemplate,
        i: usize,
        turn: &TurnView,
        steps: usize,
        html: String,
    ) -> askama::Result<()> {
        // A full piece is set aside between turns, before the next is written.
        if self.out.len() >= PIECE_BYTES {
            let next = String::with_capacity(PIECE_BYTES + PIECE_BYTES / 4);
            self.pieces.push(std::mem::replace(&mut self.out, next));
        }
        if let Some(room) = self.left {
            if html.len() <= room {
                self.left = Some(room - html.len());
                self.out.push_str(&html);
                return Ok(());
            }
            self.left = None;
        }
        let first = i == 0;
        if !first && self.chunk.id.is_empty() {
            self.chunk.id = self.blocks.next_id();
        }
        // Read from the whole turn before its steps may leave it for a block of their own.
        let stub = (!first).then(|| StubTurn::of(turn, &html));
        let html = if !turn.steps.is_empty() && (first || steps > self.block) {
            // The steps get a block of their own and the turn a placeholder: both rendered
            // again.
            let id = self.blocks.next_id();
            let within = (!first).then(|| self.chunk.id.clone());
            let steps = page.steps_of(turn)?;
            let placeholder = StepsStub::of(&turn.id, &steps, &id).render()?;
            self.blocks.write(id, steps, within)?;
            page.turn_html(turn, placeholder)?
        } else {
            html
        };
        let Some(stub) = stub else {
            self.out.push_str(&html);
            return Ok(());
        };
        self.chunk.add(stub, &html, self.block);
        if self.chunk.html.len() >= self.block {
            self.chunk.flush(&mut self.out, &mut self.blocks)?;
        }
        Ok(())
    }

    /// Whether the page stores any of its turns: from the first turn (or first turn's steps)
    /// given a block on, which the page then holds.
    pub(super) fn stores(&self) -> bool {
        self.blocks.last > 0
    }

    /// The turns' HTML, in pieces split between turns, and the stored blocks.
    pub(super) fn finish(mut self) -> askama::Result<(Vec<String>, Stored)> {
        self.chunk.flush(&mut self.out, &mut self.blocks)?;
        self.blocks.seal()?;
        self.pieces.push(self.out);
        Ok((self.pieces, self.blocks))
    }
}

/// The blocks a page stores compressed, numbered in the order they are written (the turns',
/// then the turn list's), written together after the notebook (the parser reaches the turns
/// first).
pub(super) struct Stored {
    /// The last scan, over each block before it is compressed.
    scan: Scan,
    last: usize,
    /// Blocks given but not yet sealed: id, HTML, and the block holding its placeholder.
    pending: Vec<(String, String, Option<String>)>,
    /// Each sealed block's element, in order (written as they stand, never joined).
    pub(super) html: Vec<String>,
    /// Secrets the final scan found in them.
    pub(super) caught: usize,
    /// Compressors between blocks, one per core at most: a new one clears its tables (about
    /// 1 MiB) for each block, a tenth of what compressing a block costs.
    compressors: std::sync::Mutex<Vec<zstd::bulk::Compressor<'static>>>,
}

impl Stored {
    fn new(scan: Scan) -> Self {
        Stored {
            scan,
            last: 0,
            pending: Vec::new(),
            html: Vec::new(),
            caught: 0,
            compressors: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub(super) fn next_id(&mut self) -> String {
        self.last += 1;
        format!("b{}", self.last)
    }

    /// Stores `html` as the inert data block `id`; `within` names the block whose HTML holds
    /// its placeholder, when that is stored too. Blocks are sealed a few at a time, on every
    /// core, in the order given.
    pub(super) fn write(
        &mut self,
        id: String,
        html: String,
        within: Option<String>,
    ) -> askama::Result<()> {
        self.pending.push((id, html, within));
        if self.pending.len() >= 2 * rayon::current_num_threads() {
            self.seal()?;
        }
        Ok(())
    }

    pub(super) fn seal(&mut self) -> askama::Result<()> {
        let sealed: Vec<askama::Result<(String, usize)>> = std::mem::take(&mut self.pending)
            .into_par_iter()
            .map(|(id, html, within)| {
                seal(&id, &html, within.as_deref(), self.scan, &self.compressors)
            })
            .collect();
        for sealed in sealed {
            let (block, caught) = sealed?;
            self.html.push(block);
            self.caught += caught;
        }
        Ok(())
    }

    /// Lets the compressors go, once the last block is sealed.
    pub(super) fn let_go(&mut self) {
        if let Ok(mut compressors) = self.compressors.lock() {
            *compressors = Vec::new();
        }
    }
}

/// One stored block's element, and the secrets the final scan found in it. The final scan runs
/// over the HTML before it is compressed, as it runs over the rest of the page after. The frame
/// records its size, so the page's decoder allocates once. A compressor is taken from
/// `compressors` (or made) and given back: a frame does not depend on what its compressor
/// compressed before.
fn seal(
    id: &str,
    html: &str,
    within: Option<&str>,
    scan: Scan,
    compressors: &std::sync::Mutex<Vec<zstd::bulk::Compressor<'static>>>,
) -> askama::Result<(String, usize)> {
    let (html, caught) = scan(html);
    let taken = compressors.lock().ok().and_then(|mut c| c.pop());
    let mut compressor = taken.or_else(|| zstd::bulk::Compressor::new(3).ok());
    let compressed = compressor
        .as_mut()
        .and_then(|c| c.compress(html.as_bytes()).ok())
        .unwrap_or_default();
    if let (Some(compressor), Ok(mut compressors)) = (compressor, compressors.lock()) {
        compressors.push(compressor);
    }
    let data = base64::engine::general_purpose::STANDARD.encode(compressed);
    let mut out = String::with_capacity(data.len() + 160);
    Block {
        id,
        within,
        data: SafeHtml::base64(data),
    }
    .render_into(&mut out)?;
    Ok((out, caught))
}

/// One stored block's element.
#[derive(Template)]
#[template(path = "partials/stored/block.html")]
struct Block<'a> {
    id: &'a str,
    /// The stored block whose HTML holds this one's placeholder.
    within: Option<&'a str>,
    data: SafeHtml,
}

/// The stub of a stored block of turns.
#[derive(Template)]
#[template(path = "partials/stored/turns.html")]
struct TurnsStub<'a> {
    id: &'a str,
    /// What a reader with JavaScript off reads of each turn.
    turns: &'a [StubTurn],
    first: usize,
    last: usize,
}

/// The placeholder of a turn's steps stored in a block of their own.
#[derive(Template)]
#[template(path = "partials/stored/steps.html")]
struct StepsStub<'a> {
    id: &'a str,
    /// The steps' census, for the page's filters.
    census: String,
    /// The ids inside the steps, as empty anchors, so their links land with JavaScript off.
    anchors: Vec<&'a str>,
}

impl<'a> StepsStub<'a> {
    /// The placeholder of the steps (`html`) of turn `turn` stored in block `id`.
    fn of(turn: &str, html: &'a str, id: &'a str) -> Self {
        Self {
            id,
            census: census(html),
            anchors: anchors(turn, html),
        }
    }
}

/// One stored turn as its stub lists it: an anchored line with its prompt's start, its
/// response status and its failed and unknown calls, so links land and the turn reads without
/// JavaScript; an empty anchor for each id inside the turn, so links to its steps land there
/// too; and the census of its steps, so the page's filters count the turn without decoding it.
struct StubTurn {
    id: String,
    number: usize,
    prompt: Option<String>,
    status: &'static str,
    error: usize,
    unknown: usize,
    census: String,
    /// The ids inside the turn, for empty anchors.
    anchors: Vec<String>,
}

impl StubTurn {
    /// `turn` as its stub lists it; `html` is the whole turn, steps included.
    fn of(turn: &TurnView, html: &str) -> Self {
        let tally = super::overview::Tally::of(turn);
        Self {
            id: turn.id.to_string(),
            number: turn.number,
            prompt: turn
                .prompt
                .as_ref()
                .map(|p| crate::report::row::first_line(&p.text, 100)),
            status: turn.response_status.as_str(),
            error: tally.error,
            unknown: tally.unknown,
            census: census(html),
            anchors: anchors(&turn.id, html)
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// The ids inside turn `turn`'s HTML (`html`) past the turn's own, for empty anchors: the ids
/// the page gives a turn's parts all start with the turn's id and `-`, and are made of
/// letters, digits, `-` and `_`, so they are written unquoted.
fn anchors<'h>(turn: &str, html: &'h str) -> Vec<&'h str> {
    let mut out = Vec::new();
    for at in memchr::memmem::find_iter(html.as_bytes(), " id=\"") {
        let rest = &html[at + 5..];
        let Some(end) = rest.find('"') else { break };
        let id = &rest[..end];
        let inside = id.len() > turn.len()
            && id.starts_with(turn)
            && id.as_bytes()[turn.len()] == b'-'
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if inside {
            out.push(id);
        }
    }
    out
}

/// The census of the step elements in `html`, as the page's filters count them: each step's
/// kind and status (`edit.error:2 message:3`, a step without a status by its kind alone), read
/// from the elements themselves, so a stored turn counts as it will show once decoded.
fn census(html: &str) -> String {
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    const STEP: &str = "<li class=\"step";
    for at in memchr::memmem::find_iter(html.as_bytes(), STEP) {
        let rest = &html[at..];
        let tag = &rest[..rest.find('>').unwrap_or(rest.len())];
        if !matches!(tag.as_bytes().get(STEP.len()), Some(b' ' | b'"')) {
            continue;
        }
        let kind = attribute(tag, " data-kind=\"").unwrap_or_default();
        let status = attribute(tag, " data-status=\"").unwrap_or_default();
        *counts.entry((kind, status)).or_default() += 1;
    }
    let mut out = String::new();
    for ((kind, status), n) in counts {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(kind);
        if !status.is_empty() {
            out.push('.');
            out.push_str(status);
        }
        out.push(':');
        out.push_str(&n.to_string());
    }
    out
}

/// The value of the attribute that `key` (` name="`) opens in `tag`.
fn attribute<'t>(tag: &'t str, key: &str) -> Option<&'t str> {
    let start = tag.find(key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

/// Turns gathered for one stored block.
#[derive(Default)]
struct Chunk {
    id: String,
    html: String,
    turns: Vec<StubTurn>,
}

impl Chunk {
    /// Adds a turn to a block of about `block` bytes of HTML: the block's room is taken at its
    /// first turn, so its HTML is not copied as it grows.
    fn add(&mut self, turn: StubTurn, html: &str, block: usize) {
        if self.html.is_empty()
            && let Some(room) = block.checked_add(block / 4)
        {
            self.html.reserve(room.max(html.len()));
        }
        self.html.push_str(html);
        self.turns.push(turn);
    }

    /// Writes the block's stub and the block, and starts over.
    fn flush(&mut self, out: &mut String, blocks: &mut Stored) -> askama::Result<()> {
        let (Some(first), Some(last)) = (self.turns.first(), self.turns.last()) else {
            return Ok(());
        };
        TurnsStub {
            id: &self.id,
            turns: &self.turns,
            first: first.number,
            last: last.number,
        }
        .render_into(out)?;
        blocks.write(
            std::mem::take(&mut self.id),
            std::mem::take(&mut self.html),
            None,
        )?;
        *self = Chunk::default();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{anchors, census};

    #[test]
    fn census_counts_step_elements_by_kind_and_status_nested_ones_included() {
        let html = concat!(
            r#"<ol class="steps"><li class="step tool st-error" id="t3-s1" data-kind="shell" data-status="error">"#,
            r#"<li class="step assistant" data-kind="message" id="t3-s2">"#,
            r#"<li class="step tool st-ok" id="t3-s3" data-kind="subagent" data-status="ok"><ol class="steps">"#,
            r#"<li class="step tool st-error" id="t3-s3-a-t1-s1" data-kind="shell" data-status="error">"#,
            r#"<li class="tool-group" data-kind="group"><li class="steps-like" data-kind="x">"#,
            r#"<pre>&lt;li class=&quot;step tool&quot;</pre>"#,
        );
        assert_eq!(census(html), "message:1 shell.error:2 subagent.ok:1");
        assert_eq!(census("<p>no steps</p>"), "");
    }

    #[test]
    fn anchors_are_the_ids_inside_the_turn_past_its_own() {
        let html = concat!(
            r##"<section class="turn" id="t12"><div id="t12-p"></div><li id="t12-s1">"##,
            r##"<li id="t12-s1-a-t1-s2"><a href="#t12-s3" data-id="t12-x"></a><li id="t120-s1">"##,
            r##"<li id="other"><li id="t12-s&amp;1">"##,
        );
        assert_eq!(anchors("t12", html), ["t12-p", "t12-s1", "t12-s1-a-t1-s2"]);
    }
}

//! Rendering: the report model becomes one self-contained HTML page.
//!
//! Askama templates under `templates/` escape every value; the only unescaped values are
//! [`SafeHtml`] (sanitized Markdown, nested partials, and our own inlined assets). CSS and JS
//! come from `assets/` and are allowed by hash in a Content-Security-Policy that forbids every
//! network load. The report model is embedded as inert JSON for tools that read it back.

use askama::Template;
use base64::Engine as _;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::sync::LazyLock;

use crate::events::{ToolKind, ToolStatus};
use crate::highlight::{self, Highlighted, Highlighter, Language};
use crate::projection::ResponseStatus;
use crate::report::markdown::{self, SafeHtml};
use crate::report::model::{OutcomeView, Report, StepView, SubagentView, ToolCallView, TurnView};

const CSS: &str = include_str!("../assets/report.css");
const JS: &str = include_str!("../assets/report.js");
/// fzstd (MIT, `assets/vendor/fzstd.LICENSE`): the zstd decoder a page with stored turns
/// carries, about 8 KB.
const DECODER: &str = concat!(
    "/*! fzstd 0.1.1 (c) 2020 Arjun Barrett, MIT License */\n",
    include_str!("../assets/vendor/fzstd.js")
);

/// Output longer than this many lines is split: the rest sits in a closed fold.
const OUTPUT_HEAD_LINES: usize = 80;
/// Read and search output is shown shorter: the rest is one click away.
const COMPACT_HEAD_LINES: usize = 20;
/// Output longer than this many bytes is split the same way.
const OUTPUT_HEAD_BYTES: usize = 16 * 1024;
/// A file read up to this size is highlighted whole; a longer one only in its shown head.
const HIGHLIGHT_WHOLE_BYTES: usize = 16 * 1024;

static CSP: LazyLock<String> = LazyLock::new(|| csp_for(&[DECODER, JS], CSS));

/// The Content-Security-Policy of a page whose only scripts and style are `js` and `css`,
/// allowed by hash; every network load is forbidden.
fn csp_for(js: &[&str], css: &str) -> String {
    let scripts: Vec<String> = js.iter().map(|j| format!("'{}'", hash(j))).collect();
    format!(
        "default-src 'none'; script-src {}; style-src '{}'; img-src data:; \
         base-uri 'none'; form-action 'none'",
        scripts.join(" "),
        hash(css)
    )
}

fn hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// What a notebook holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Prompts, process, responses and outcomes.
    #[default]
    Full,
    /// Prompts and responses only; process steps, outcomes and unlinked subagents are left
    /// out of the file, the embedded report model included.
    Conversation,
}

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

/// The HTML of turns a page writes inline before it stores the rest compressed.
pub const INLINE_BYTES: usize = 512 * 1024;
/// The HTML of stored turns compressed together in one block.
pub const BLOCK_BYTES: usize = 256 * 1024;

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
}

/// A piece of a notebook.
#[derive(Debug, Clone)]
pub enum Part {
    /// Markup and text: the final secret scan reads it.
    Text(String),
    /// Base64 data inside the page's own `<template>` elements: inert, and already scanned
    /// before it was compressed.
    Data(String),
}

impl Notebook {
    /// The last scan: shape-only secret rules over the page's text. Returns how many secrets
    /// it redacted. Its data (the embedded report, the turns a large page stores compressed)
    /// is left alone: those bytes are not text a rule could read, and a replacement inside them
    /// would break them. What they hold went through the privacy stage like the page itself,
    /// and stored turns through this scan before they were compressed.
    pub fn final_scan(&mut self) -> usize {
        let mut caught = 0;
        for part in &mut self.parts {
            if let Part::Text(text) = part {
                let (scanned, n) = crate::privacy::secrets::backstop(text);
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
const STORED_AT: &str = "<tracebook-stored/>";
const DATA_AT: &str = "<tracebook-data/>";

/// Renders the whole notebook in the full view, from a copy of the report.
pub fn html(report: &Report) -> askama::Result<String> {
    html_with(report, View::Full)
}

/// Renders the whole notebook in the given view, from a copy of the report.
pub fn html_with(report: &Report, view: View) -> askama::Result<String> {
    notebook(report.clone(), view, Storage::default()).map(|n| n.html())
}

/// Renders the whole notebook in the given view, with the turns written as asked. The report
/// is taken over: each turn is let go once it is rendered.
pub fn notebook(report: Report, view: View, storage: Storage) -> askama::Result<Notebook> {
    match view {
        View::Full => page(report, view, storage),
        View::Conversation => page(conversation_only(report), view, storage),
    }
}

/// The report without anything but prompts and responses (and the session facts).
/// The report of `--view conversation`: prompts and responses, no process steps or outcomes.
pub fn conversation_only(mut report: Report) -> Report {
    for turn in &mut report.turns {
        turn.steps.clear();
        turn.outcome = OutcomeView::default();
    }
    report.unlinked_subagents.clear();
    report
}

fn page(mut report: Report, view: View, storage: Storage) -> askama::Result<Notebook> {
    // What the page shows of the turns outside their own HTML (the turn list, the strip, the
    // title) is taken first. Then each window of turns is rendered (on every core) while it
    // is written into the embedded report, and let go: the page's text is never held twice.
    let mut toc: Vec<TocEntry> = report.turns.iter().map(TocEntry::of).collect();
    let overview = overview(&report.turns);
    let title = title(&report);
    let turns = std::mem::take(&mut report.turns);
    let mut data = EmbeddedReport::start(&report);
    let hl = Highlighter::new();
    let page = TurnsTemplate { hl: &hl };
    let mut layout = Layout::new(storage);
    let window = WINDOW_PER_CORE * rayon::current_num_threads();
    let (mut first, mut windows) = (0, 0);
    let mut rest = turns.into_iter();
    loop {
        let turns: Vec<TurnView> = rest.by_ref().take(window).collect();
        if turns.is_empty() {
            break;
        }
        let (placed, ()) = rayon::join(
            || {
                page.each_turn(&turns, first, &mut |i, turn, steps, html| {
                    layout.place(&page, i, turn, steps, html)
                })
            },
            || data.turns(&turns),
        );
        placed?;
        first += turns.len();
        drop(turns);
        windows += 1;
        if windows % RELEASE_EVERY == 0 {
            crate::memory::release();
        }
    }
    let (turns, mut stored) = layout.finish();
    // A page that stores turns stores its turn list past the first entries too: the list of
    // a long session is otherwise most of what the browser builds before it shows the page.
    let toc_stored = if !stored.html.is_empty() && toc.len() > TOC_FIRST {
        let rest = toc.split_off(TOC_FIRST);
        let id = stored.next_id();
        let stub = TocStored {
            id: id.clone(),
            first: rest.first().map_or(0, |t| t.number),
            last: rest.last().map_or(0, |t| t.number),
        };
        stored.write(id, TocTemplate { entries: &rest }.render()?, None);
        stored.seal();
        Some(stub)
    } else {
        None
    };
    let toc = TocTemplate { entries: &toc }.render()?;
    let caught = stored.caught;
    let data = data.finish();
    let mut unlinked = String::new();
    for sub in &report.unlinked_subagents {
        unlinked.push_str(&SubagentTemplate { sub, hl: &hl }.render()?);
    }
    // What the highlighter remembers is not needed past this point.
    drop(hl);
    // The markup is written once into a string of about its final size, with markers where
    // the data goes.
    let decoder = (!stored.html.is_empty()).then(|| SafeHtml::asset(DECODER));
    let mut html = String::with_capacity(turns.len() + unlinked.len() + PAGE_EXTRA);
    PageTemplate {
        report: &report,
        toc: SafeHtml::rendered(toc),
        toc_stored,
        csp: SafeHtml::asset_text(&CSP),
        css: SafeHtml::asset(CSS),
        js: SafeHtml::asset(JS),
        decoder,
        turns: SafeHtml::rendered(turns),
        unlinked: SafeHtml::rendered(unlinked),
        stored: SafeHtml::rendered(STORED_AT.to_owned()),
        data: SafeHtml::rendered(DATA_AT.to_owned()),
        title,
        conversation: view == View::Conversation,
        overview,
    }
    .render_into(&mut html)?;
    let mut parts = Vec::with_capacity(5);
    let mut markup = html.as_str();
    for (at, data) in [(STORED_AT, stored.html), (DATA_AT, data)] {
        let Some((before, after)) = markup.split_once(at) else {
            return Err(askama::Error::Custom(
                "a data marker is missing from the page".into(),
            ));
        };
        parts.push(Part::Text(before.to_owned()));
        parts.push(Part::Data(data));
        markup = after;
    }
    parts.push(Part::Text(markup.to_owned()));
    Ok(Notebook { parts, caught })
}

/// The report model as zstd-compressed JSON in base64: inert inside its `<template>` element
/// (base64 has neither `<` nor `&`), and a small fraction of the JSON's size. The JSON is
/// written straight into the compressor, a window of turns at a time, so the turns can be let
/// go as they are rendered: `turns` comes first, then the report's other fields.
struct EmbeddedReport {
    /// Small writes (serde_json's pieces) reach the compressor in large blocks: each of its
    /// writes costs as much as a small write itself. `None` once a write failed.
    out: Option<std::io::BufWriter<zstd::stream::write::Encoder<'static, Vec<u8>>>>,
    /// The report's fields other than `turns`.
    rest: serde_json::Map<String, serde_json::Value>,
    /// Turns written so far.
    written: usize,
}

impl EmbeddedReport {
    /// Starts with the report's other fields in hand (its turns taken out).
    fn start(report: &Report) -> Self {
        let mut rest = match serde_json::to_value(report) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        rest.remove("turns");
        let mut out = zstd::stream::write::Encoder::new(Vec::new(), 3)
            .ok()
            .map(|z| std::io::BufWriter::with_capacity(256 * 1024, z));
        Self::write(&mut out, |w| w.write_all(b"{\"turns\":["));
        Self {
            out,
            rest,
            written: 0,
        }
    }

    /// Writes the next turns.
    fn turns(&mut self, turns: &[TurnView]) {
        for turn in turns {
            let comma = self.written > 0;
            Self::write(&mut self.out, |w| {
                if comma {
                    w.write_all(b",")?;
                }
                serde_json::to_writer(w, turn).map_err(std::io::Error::from)
            });
            self.written += 1;
        }
    }

    /// Writes the other fields and returns the whole in base64 (empty if writing failed,
    /// which only running out of memory can cause).
    fn finish(mut self) -> String {
        let rest = std::mem::take(&mut self.rest);
        Self::write(&mut self.out, |w| {
            w.write_all(b"]")?;
            for (key, value) in &rest {
                w.write_all(b",")?;
                serde_json::to_writer(&mut *w, key)?;
                w.write_all(b":")?;
                serde_json::to_writer(&mut *w, value)?;
            }
            w.write_all(b"}")
        });
        let bytes = self
            .out
            .and_then(|buf| buf.into_inner().ok())
            .and_then(|z| z.finish().ok())
            .unwrap_or_default();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn write(
        out: &mut Option<std::io::BufWriter<zstd::stream::write::Encoder<'static, Vec<u8>>>>,
        f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) {
        if let Some(w) = out.as_mut()
            && f(w).is_err()
        {
            *out = None;
        }
    }
}

/// Where rendered turns go: into the page while its inline budget lasts, then into stored
/// blocks ([`Storage`]).
struct Layout {
    out: String,
    /// Bytes of turn HTML the page still takes as HTML; `None` once a turn did not fit.
    left: Option<usize>,
    /// Bytes of HTML per stored block.
    block: usize,
    blocks: Stored,
    chunk: Chunk,
}

impl Layout {
    fn new(storage: Storage) -> Self {
        let (inline, block) = match storage {
            Storage::Budget { inline, block } => (inline, block),
            Storage::Inline => (usize::MAX, usize::MAX),
        };
        Self {
            out: String::new(),
            left: Some(inline),
            block,
            blocks: Stored::default(),
            chunk: Chunk::default(),
        }
    }

    /// Places turn number `i` (from 0), whose steps' HTML is `steps` bytes of its `html`.
    fn place(
        &mut self,
        page: &TurnsTemplate<'_>,
        i: usize,
        turn: &TurnView,
        steps: usize,
        html: String,
    ) -> askama::Result<()> {
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
        let html = if !turn.steps.is_empty() && (first || steps > self.block) {
            // The steps get a block of their own and the turn a placeholder: both rendered
            // again, with the answers the highlighter gave the first time.
            let id = self.blocks.next_id();
            let within = (!first).then(|| self.chunk.id.clone());
            let placeholder = stored_steps(turn, &id);
            self.blocks.write(id, page.steps_of(turn)?, within);
            page.turn_html(turn, placeholder)?
        } else {
            html
        };
        if first {
            self.out.push_str(&html);
            return Ok(());
        }
        self.chunk.add(turn, &html);
        if self.chunk.html.len() >= self.block {
            self.chunk.flush(&mut self.out, &mut self.blocks);
        }
        Ok(())
    }

    /// The turns' HTML, and the stored blocks.
    fn finish(mut self) -> (String, Stored) {
        self.chunk.flush(&mut self.out, &mut self.blocks);
        self.blocks.seal();
        (self.out, self.blocks)
    }
}

/// Turn-list entries per list: a list out of view is skipped whole.
const TOC_INLINE: usize = 200;

/// The turn-list entries a page that stores turns writes as HTML, about a screenful: the rest
/// of the list is stored compressed with the turns and listed when the reader scrolls the list
/// to its end. Fewer than a list's worth, so the first paint of a long session's page lays out
/// no more of the list than a short one's (measured: the 100 MB bench page's load event 8 ms
/// earlier, its first paint no later).
const TOC_FIRST: usize = 50;

/// The turn list's stored entries: their block and the turns they list.
struct TocStored {
    id: String,
    first: usize,
    last: usize,
}

#[derive(Template)]
#[template(path = "partials/toc.html")]
struct TocTemplate<'a> {
    entries: &'a [TocEntry],
}

/// What the turn list shows of a turn.
struct TocEntry {
    id: String,
    number: usize,
    status: &'static str,
    /// The start of the prompt, long enough for the list's 60-byte cut to read as it would on
    /// the whole prompt.
    prompt: Option<String>,
    tally: Tally,
}

impl TocEntry {
    fn of(turn: &TurnView) -> Self {
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

/// The blocks a page stores compressed, numbered in the order they are written (the turns',
/// then the turn list's), written together after the notebook (the parser reaches the turns
/// first).
#[derive(Default)]
struct Stored {
    last: usize,
    /// Blocks given but not yet sealed: id, HTML, and the block holding its placeholder.
    pending: Vec<(String, String, Option<String>)>,
    html: String,
    /// Secrets the final scan found in them.
    caught: usize,
}

impl Stored {
    fn next_id(&mut self) -> String {
        self.last += 1;
        format!("b{}", self.last)
    }

    /// Stores `html` as the inert data block `id`; `within` names the block whose HTML holds
    /// its placeholder, when that is stored too. Blocks are sealed a few at a time, on every
    /// core, in the order given.
    fn write(&mut self, id: String, html: String, within: Option<String>) {
        self.pending.push((id, html, within));
        if self.pending.len() >= 2 * rayon::current_num_threads() {
            self.seal();
        }
    }

    fn seal(&mut self) {
        let sealed: Vec<(String, usize)> = std::mem::take(&mut self.pending)
            .into_par_iter()
            .map(|(id, html, within)| seal(&id, &html, within.as_deref()))
            .collect();
        for (block, caught) in sealed {
            self.html.push_str(&block);
            self.caught += caught;
        }
    }
}

/// One stored block's element, and the secrets the final scan found in it. The final scan runs
/// over the HTML before it is compressed, as it runs over the rest of the page after. The frame
/// records its size, so the page's decoder allocates once.
fn seal(id: &str, html: &str, within: Option<&str>) -> (String, usize) {
    let (html, caught) = crate::privacy::secrets::backstop(html);
    let compressed = zstd::bulk::compress(html.as_bytes(), 3).unwrap_or_default();
    let mut out = String::with_capacity(compressed.len() * 4 / 3 + 160);
    out.push_str("\n<template class=\"stored\" data-block=\"");
    out.push_str(id);
    if let Some(parent) = within {
        out.push_str("\" data-in=\"");
        out.push_str(parent);
    }
    out.push_str("\" data-encoding=\"zstd+base64\">");
    base64::engine::general_purpose::STANDARD.encode_string(compressed, &mut out);
    out.push_str("</template>");
    (out, caught)
}

/// Turns gathered for one stored block.
#[derive(Default)]
struct Chunk {
    id: String,
    html: String,
    turns: Vec<(String, usize)>,
    statuses: std::collections::BTreeSet<&'static str>,
    kinds: std::collections::BTreeSet<&'static str>,
}

impl Chunk {
    fn add(&mut self, turn: &TurnView, html: &str) {
        self.html.push_str(html);
        self.turns.push((turn.id.clone(), turn.number));
        facets(&turn.steps, &mut self.statuses, &mut self.kinds);
    }

    /// Writes the block's stub and the block, and starts over. The stub keeps what links,
    /// filters and a reader with JavaScript off need: which turns the block holds, and the
    /// statuses and kinds of their steps.
    fn flush(&mut self, out: &mut String, blocks: &mut Stored) {
        let (Some(first), Some(last)) = (self.turns.first(), self.turns.last()) else {
            return;
        };
        let numbers = if first.1 == last.1 {
            format!("Turn {}", first.1)
        } else {
            format!("Turns {}–{}", first.1, last.1)
        };
        out.push_str("\n<section class=\"turn stored\" data-block=\"");
        out.push_str(&self.id);
        out.push_str("\" data-turns=\"");
        for (i, (id, _)) in self.turns.iter().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            escape_attr(out, id);
        }
        out.push_str(&format!(
            "\" data-statuses=\"{}\" data-kinds=\"{}\"><h2 class=\"turn-head\">{numbers}</h2>\
             <p class=\"lazy-note\">Stored compressed in the page so that it opens fast; shown \
             as you scroll here, follow a link, search or filter, when JavaScript runs. \
             <code>tracebook render --inline</code> writes every turn as plain HTML.</p></section>",
            join(&self.statuses),
            join(&self.kinds)
        ));
        blocks.write(
            std::mem::take(&mut self.id),
            std::mem::take(&mut self.html),
            None,
        );
        *self = Chunk::default();
    }
}

fn join(words: &std::collections::BTreeSet<&'static str>) -> String {
    words.iter().copied().collect::<Vec<_>>().join(" ")
}

/// Calls of one turn by status (its own calls; a subagent's calls count in its own turns).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    ok: usize,
    error: usize,
    unknown: usize,
}

impl Tally {
    fn of(turn: &TurnView) -> Self {
        let mut t = Tally::default();
        for step in &turn.steps {
            if let StepView::ToolCall(c) = step {
                match c.status {
                    ToolStatus::Ok => t.ok += 1,
                    ToolStatus::Error => t.error += 1,
                    ToolStatus::Unknown => t.unknown += 1,
                }
            }
        }
        t
    }

    fn total(&self) -> usize {
        self.ok + self.error + self.unknown
    }
}

impl std::iter::Sum for Tally {
    fn sum<I: Iterator<Item = Tally>>(iter: I) -> Self {
        iter.fold(Tally::default(), |a, b| Tally {
            ok: a.ok + b.ok,
            error: a.error + b.error,
            unknown: a.unknown + b.unknown,
        })
    }
}

/// One rectangle of the overview strip, in the SVG's own units.
struct Rect {
    class: &'static str,
    x: usize,
    y: usize,
    w: usize,
    h: usize,
}

/// One turn's mark in the overview strip.
struct Mark {
    id: String,
    title: String,
    x: usize,
    rects: Vec<Rect>,
}

/// The overview strip: its size and one mark per turn.
///
/// The page draws each mark's link as one transparent slot (the target of a click, the hover
/// highlight and the title), and the bars of every mark as one path per status, so the strip
/// costs the browser a few elements per mark whatever the session's length.
struct Overview {
    width: usize,
    /// Its width on the page in CSS pixels, before the page narrows it.
    shown_width: usize,
    /// Consecutive turns one mark stands for.
    per_mark: usize,
    marks: Vec<Mark>,
}

impl Overview {
    /// The bars of every mark as one path per status, in drawing order: each rectangle is a
    /// subpath starting at its top-left corner (`M{x} {y}`).
    fn paths(&self) -> Vec<(&'static str, String)> {
        const ORDER: [&str; 5] = ["complete", "incomplete", "ok", "unknown", "error"];
        let mut paths: Vec<(&'static str, String)> =
            ORDER.iter().map(|class| (*class, String::new())).collect();
        for rect in self.marks.iter().flat_map(|m| &m.rects) {
            if let Some((_, d)) = paths.iter_mut().find(|(class, _)| *class == rect.class) {
                let _ = write!(
                    d,
                    "M{} {}h{}v{}h-{}z",
                    rect.x, rect.y, rect.w, rect.h, rect.w
                );
            }
        }
        paths.retain(|(_, d)| !d.is_empty());
        paths
    }
}

/// Width of one turn's slot in the overview, in SVG units.
const SLOT: usize = 10;
/// Height of the call bars.
const BAR_H: usize = 32;
/// Height of the response status band under them.
const RESP_H: usize = 6;

/// The most marks the overview strip draws: past this many turns, a mark stands for a run
/// of consecutive turns, so the strip stays light to draw whatever the session's length.
const MAX_MARKS: usize = 240;

/// Lays out the overview strip: a bar per turn (or per run of turns in a long session) split
/// by call status (errors at the base, where they are easiest to see), and a band under it
/// for the response status, incomplete when any of its turns is.
fn overview(turns: &[TurnView]) -> Overview {
    let per_mark = turns.len().div_ceil(MAX_MARKS).max(1);
    let runs: Vec<(&[TurnView], Tally)> = turns
        .chunks(per_mark)
        .map(|run| (run, run.iter().map(Tally::of).sum()))
        .collect();
    let max = runs
        .iter()
        .map(|(_, t)| t.total())
        .max()
        .unwrap_or(0)
        .max(1);
    let marks = runs
        .iter()
        .enumerate()
        .filter_map(|(i, (run, t))| {
            let (first, last) = (run.first()?, run.last()?);
            let x = i * SLOT;
            let mut rects = Vec::new();
            let total = t.total();
            if total > 0 {
                let height = (BAR_H * total).div_ceil(max).max(4);
                let mut y = BAR_H;
                for (n, class) in [(t.error, "error"), (t.unknown, "unknown"), (t.ok, "ok")] {
                    if n == 0 {
                        continue;
                    }
                    let h = (height * n).div_ceil(total).max(2).min(y);
                    y -= h;
                    rects.push(Rect {
                        class,
                        x: x + 1,
                        y,
                        w: SLOT - 2,
                        h,
                    });
                }
            }
            let incomplete = run
                .iter()
                .filter(|t| t.response_status == ResponseStatus::Incomplete)
                .count();
            rects.push(Rect {
                class: if incomplete > 0 {
                    "incomplete"
                } else {
                    "complete"
                },
                x: x + 1,
                y: BAR_H + 2,
                w: SLOT - 2,
                h: RESP_H,
            });
            let mut title = if run.len() == 1 {
                format!("Turn {}: ", first.number)
            } else {
                format!("Turns {}–{}: ", first.number, last.number)
            };
            if total == 0 {
                title.push_str("no tool calls");
            } else {
                title.push_str(&format!(
                    "{} ok, {} error, {} unknown",
                    t.ok, t.error, t.unknown
                ));
            }
            if run.len() == 1 {
                title.push_str(&format!("; response {}", first.response_status.as_str()));
            } else {
                title.push_str(&format!(
                    "; {incomplete} of {} responses incomplete",
                    run.len()
                ));
            }
            Some(Mark {
                id: first.id.clone(),
                title,
                x,
                rects,
            })
        })
        .collect();
    Overview {
        width: (runs.len() * SLOT).max(SLOT),
        shown_width: (runs.len() * 24).clamp(120, 2400),
        per_mark,
        marks,
    }
}

/// Removes terminal escape sequences (colours, cursor moves, titles) and carriage-return
/// line endings, so shell output reads as plain text.
fn clean_terminal(text: &str) -> std::borrow::Cow<'_, str> {
    static ESCAPES: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
        regex::Regex::new(
            r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|\r+(?:\n|$)",
        )
        .ok()
    });
    if !text.contains('\x1b') && !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    match ESCAPES.as_ref() {
        Some(re) => re.replace_all(
            text,
            |c: &regex::Captures<'_>| {
                if c[0].ends_with('\n') { "\n" } else { "" }
            },
        ),
        None => std::borrow::Cow::Borrowed(text),
    }
}

fn title(report: &Report) -> String {
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

/// The first line of a text, cut to `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max {
        out.push('…');
    }
    out
}

#[derive(Template)]
#[template(path = "report.html")]
struct PageTemplate<'a> {
    report: &'a Report,
    toc: SafeHtml,
    /// The turn list's entries past the first, when they are stored compressed.
    toc_stored: Option<TocStored>,
    csp: SafeHtml,
    css: SafeHtml,
    js: SafeHtml,
    /// The stored blocks' decoder, when the page stores any.
    decoder: Option<SafeHtml>,
    turns: SafeHtml,
    unlinked: SafeHtml,
    stored: SafeHtml,
    data: SafeHtml,
    title: String,
    conversation: bool,
    overview: Overview,
}

impl PageTemplate<'_> {
    fn kinds(&self) -> &'static [&'static str] {
        ToolKind::NAMES
    }

    fn num(&self, n: &u64) -> String {
        let digits = n.to_string();
        let mut out = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    fn status_count(&self, status: &str) -> usize {
        let s = &self.report.summary;
        match status {
            "ok" => s.ok,
            "error" => s.error,
            _ => s.unknown,
        }
    }
}

/// Renders the turns of a page or of a subagent; the helpers their templates call.
struct TurnsTemplate<'a> {
    /// Shared by the whole page, so a text is highlighted once.
    hl: &'a Highlighter,
}

/// One turn, its steps already rendered (inline, or a placeholder for a stored block).
#[derive(Template)]
#[template(path = "partials/turn.html")]
struct TurnTemplate<'a> {
    page: &'a TurnsTemplate<'a>,
    turn: &'a TurnView,
    steps: SafeHtml,
}

impl<'a> std::ops::Deref for TurnTemplate<'a> {
    type Target = TurnsTemplate<'a>;
    fn deref(&self) -> &Self::Target {
        self.page
    }
}

/// The process steps of one turn; the helpers of [`TurnsTemplate`] serve it.
#[derive(Template)]
#[template(path = "partials/steps.html")]
struct StepsTemplate<'a> {
    page: &'a TurnsTemplate<'a>,
    turn: &'a TurnView,
}

impl<'a> std::ops::Deref for StepsTemplate<'a> {
    type Target = TurnsTemplate<'a>;
    fn deref(&self) -> &Self::Target {
        self.page
    }
}

#[derive(Template)]
#[template(path = "partials/subagent.html")]
struct SubagentTemplate<'a> {
    sub: &'a SubagentView,
    hl: &'a Highlighter,
}

impl SubagentTemplate<'_> {
    fn turns_html(&self) -> SafeHtml {
        SafeHtml::rendered(
            TurnsTemplate { hl: self.hl }
                .inline(&self.sub.turns)
                .unwrap_or_default(),
        )
    }
}

/// A run of process steps as shown: single steps, or adjacent tool calls folded together.
enum Block<'a> {
    Step(&'a StepView),
    Tools(Vec<&'a ToolCallView>),
}

/// Tool output split for display: escaped, and highlighted where its language is known.
struct Output {
    head: SafeHtml,
    rest: SafeHtml,
    rest_lines: usize,
    rest_bytes: usize,
}

/// One item of a todo or plan list.
struct TodoItem {
    text: String,
    status: String,
}

impl TurnsTemplate<'_> {
    /// Every turn as HTML (a subagent's turns sit inside their parent's steps, which are
    /// inline or stored as a whole).
    fn inline(&self, turns: &[TurnView]) -> askama::Result<String> {
        let mut out = String::new();
        self.each_turn(turns, 0, &mut |_, _, _, html| {
            out.push_str(&html);
            Ok(())
        })?;
        Ok(out)
    }

    /// Renders `turns` (numbered from `first`) and hands each to `place` in order, with its
    /// number, the length of its steps' HTML and its HTML, on every core.
    ///
    /// Until the page's highlighting budget is spent, which texts are coloured depends on page
    /// order. Each turn is then rendered with a highlighter ahead of the page's and settled in
    /// order; the first turn the budget does not cover as assumed is rendered again in place,
    /// and so is every turn after it (once the budget is spent, order no longer matters).
    /// Turns within a turn ahead (a subagent's) are rendered one at a time, in order.
    fn each_turn(
        &self,
        turns: &[TurnView],
        first: usize,
        place: &mut dyn FnMut(usize, &TurnView, usize, String) -> askama::Result<()>,
    ) -> askama::Result<()> {
        let mut next = 0;
        // As many turns at a time as the budget left is likely to cover, at what the turns
        // so far took from it (at least two per core): the turns past the one the budget runs
        // out in are rendered for nothing.
        let fewest = 2 * rayon::current_num_threads();
        let left_at_first = self.hl.left();
        'ahead: while !self.hl.is_spent() && !self.hl.is_ahead() && next < turns.len() {
            let taken = left_at_first.saturating_sub(self.hl.left());
            let likely = match (next, taken) {
                (0, _) => fewest,
                (_, 0) => turns.len(),
                (n, t) => self.hl.left() / t.div_ceil(n),
            };
            let some = &turns[next..turns.len().min(next + likely.max(fewest))];
            let ahead: Vec<(Highlighter, askama::Result<(usize, String)>)> = some
                .par_iter()
                .map(|turn| {
                    let hl = self.hl.ahead();
                    let rendered = TurnsTemplate { hl: &hl }.rendered(turn);
                    (hl, rendered)
                })
                .collect();
            for (turn, (hl, rendered)) in some.iter().zip(ahead) {
                if !self.hl.settle(hl) {
                    break 'ahead;
                }
                let (steps, html) = rendered?;
                place(first + next, turn, steps, html)?;
                next += 1;
            }
        }
        while let Some(turn) = turns.get(next)
            && !self.hl.is_spent()
        {
            let (steps, html) = self.rendered(turn)?;
            place(first + next, turn, steps, html)?;
            next += 1;
        }
        let rest = &turns[next..];
        let rendered: Vec<askama::Result<(usize, String)>> =
            rest.par_iter().map(|turn| self.rendered(turn)).collect();
        for (turn, r) in rest.iter().zip(rendered) {
            let (steps, html) = r?;
            place(first + next, turn, steps, html)?;
            next += 1;
        }
        Ok(())
    }

    /// A turn's HTML, and the length of its steps' HTML within it.
    fn rendered(&self, turn: &TurnView) -> askama::Result<(usize, String)> {
        let steps = self.steps_of(turn)?;
        let len = steps.len();
        Ok((len, self.turn_html(turn, steps)?))
    }

    /// A turn's process steps as HTML (nothing when it has none).
    fn steps_of(&self, turn: &TurnView) -> askama::Result<String> {
        if turn.steps.is_empty() {
            return Ok(String::new());
        }
        StepsTemplate { page: self, turn }.render()
    }

    fn turn_html(&self, turn: &TurnView, steps: String) -> askama::Result<String> {
        TurnTemplate {
            page: self,
            turn,
            steps: SafeHtml::rendered(steps),
        }
        .render()
    }

    fn md(&self, text: &str) -> SafeHtml {
        markdown::render_with(text, self.hl)
    }

    /// A shell command, highlighted as shell.
    fn shell(&self, cmd: &str) -> SafeHtml {
        match Language::shell().and_then(|l| self.hl.code(cmd, l)) {
            Some(h) => SafeHtml::from(&*h),
            None => highlight::plain_html(cmd),
        }
    }

    /// A retained patch: line classes, and the code highlighted by the edited file's language.
    fn patch_html(&self, call: &ToolCallView, patch: &str) -> SafeHtml {
        let lang = call.paths.first().and_then(|p| Language::from_path(p));
        SafeHtml::from(&*self.hl.diff(patch, lang))
    }

    fn blocks<'t>(&self, turn: &'t TurnView) -> Vec<Block<'t>> {
        let mut out: Vec<Block<'t>> = Vec::new();
        for step in &turn.steps {
            match (step, out.last_mut()) {
                (StepView::ToolCall(c), Some(Block::Tools(group))) => group.push(c),
                (StepView::ToolCall(c), _) => out.push(Block::Tools(vec![c])),
                (other, _) => out.push(Block::Step(other)),
            }
        }
        out
    }

    fn subagent_html(&self, sub: &SubagentView) -> SafeHtml {
        SafeHtml::rendered(
            SubagentTemplate { sub, hl: self.hl }
                .render()
                .unwrap_or_default(),
        )
    }

    fn group_summary(&self, calls: &[&ToolCallView]) -> String {
        let mut names: Vec<&str> = Vec::new();
        for c in calls {
            if names.last() != Some(&c.name.as_str()) {
                names.push(&c.name);
            }
        }
        let mut listed = names
            .iter()
            .take(6)
            .copied()
            .collect::<Vec<_>>()
            .join(" → ");
        if names.len() > 6 {
            listed.push_str(" → …");
        }
        format!("{} tool calls: {listed}", calls.len())
    }

    fn group_status(&self, calls: &[&ToolCallView]) -> String {
        let count = |s: ToolStatus| calls.iter().filter(|c| c.status == s).count();
        let mut parts = Vec::new();
        for (s, label) in [
            (ToolStatus::Error, "error"),
            (ToolStatus::Unknown, "unknown"),
        ] {
            let n = count(s);
            if n > 0 {
                parts.push(format!("{n} {label}"));
            }
        }
        parts.join(" · ")
    }

    fn process_summary(&self, turn: &TurnView) -> String {
        let c = &turn.counts;
        let mut parts = vec![plural(c.process_events, "event")];
        if c.intermediate_responses > 0 {
            parts.push(plural(c.intermediate_responses, "message"));
        }
        if c.tool_calls > 0 {
            parts.push(plural(c.tool_calls, "tool call"));
        }
        let errors = turn
            .steps
            .iter()
            .filter(|s| matches!(s, StepView::ToolCall(t) if t.status == ToolStatus::Error))
            .count();
        if errors > 0 {
            parts.push(plural(errors, "error"));
        }
        // What someone said into the running turn is named here, so a closed process does
        // not hide it.
        let (typed, notices) = turn.steps.iter().fold((0, 0), |(u, n), s| match s {
            StepView::UserMessage(_) => (u + 1, n),
            StepView::Notice(_) => (u, n + 1),
            _ => (u, n),
        });
        if typed > 0 {
            parts.push(plural(typed, "user message"));
        }
        if notices > 0 {
            parts.push(plural(notices, "notice"));
        }
        parts.join(" · ")
    }

    fn call_label(&self, call: &ToolCallView) -> String {
        if let Some(cmd) = &call.command {
            return first_line(cmd, 120);
        }
        if let Some(p) = call.paths.first() {
            return p.clone();
        }
        for key in ["description", "pattern", "query", "url", "prompt"] {
            if let Some(v) = call.input.get(key).and_then(|v| v.as_str()) {
                return first_line(v, 120);
            }
        }
        String::new()
    }

    /// The items of a todo or plan list in the call's arguments: the first array of objects
    /// found at the top level, each item's first text field and its status word.
    fn todos(&self, call: &ToolCallView) -> Vec<TodoItem> {
        let Some(obj) = call.input.as_object() else {
            return Vec::new();
        };
        let Some(items) = obj.values().find_map(|v| {
            v.as_array()
                .filter(|a| a.iter().any(serde_json::Value::is_object))
        }) else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|item| {
                let o = item.as_object()?;
                let text = ["content", "step", "text", "description", "title"]
                    .iter()
                    .find_map(|k| o.get(*k).and_then(|v| v.as_str()))?;
                let status = o.get("status").and_then(|v| v.as_str()).unwrap_or_default();
                Some(TodoItem {
                    text: text.to_owned(),
                    status: status.to_owned(),
                })
            })
            .collect()
    }

    fn input_json(&self, call: &ToolCallView) -> String {
        serde_json::to_string_pretty(&call.input).unwrap_or_default()
    }

    /// The call's output, split into what is shown and what sits behind a fold. A successful
    /// read of a file in a known language is highlighted as a whole, then split between lines.
    fn output(&self, call: &ToolCallView, text: &str) -> Output {
        let text = clean_terminal(text);
        let kind = call.kind;
        let lines = match kind {
            ToolKind::Read | ToolKind::Search => COMPACT_HEAD_LINES,
            _ => OUTPUT_HEAD_LINES,
        };
        let mut cut = text.len();
        if let Some((i, _)) = text.match_indices('\n').nth(lines - 1) {
            cut = i + 1;
        }
        if cut > OUTPUT_HEAD_BYTES {
            cut = OUTPUT_HEAD_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
        }
        let (head, rest) = text.split_at(cut);
        let lang = match (kind, call.status) {
            (ToolKind::Read, ToolStatus::Ok) => {
                call.paths.first().and_then(|p| Language::from_path(p))
            }
            _ => None,
        };
        // Split only between lines, where every token span is closed. A long file is
        // highlighted where it is shown first, its head; the rest behind the fold stays plain.
        let whole = text.len() <= HIGHLIGHT_WHOLE_BYTES;
        let highlighted: Option<std::sync::Arc<Highlighted>> = lang
            .filter(|_| head.is_empty() || head.ends_with('\n'))
            .and_then(|l| self.hl.numbered(if whole { &text } else { head }, l));
        let (head_html, rest_html) = match highlighted {
            Some(h) if !whole => (
                SafeHtml::trusted(h.as_str().to_owned()),
                highlight::plain_html(rest),
            ),
            Some(h) => {
                let n = head.matches('\n').count();
                (
                    SafeHtml::trusted(h.lines(0, n).to_owned()),
                    SafeHtml::trusted(h.lines(n, h.line_count()).to_owned()),
                )
            }
            None => (highlight::plain_html(head), highlight::plain_html(rest)),
        };
        Output {
            head: head_html,
            rest: rest_html,
            rest_lines: rest.lines().count(),
            rest_bytes: rest.len(),
        }
    }

    fn size(&self, bytes: &usize) -> String {
        human_size(*bytes)
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Bytes in B, KB or MB (1 KB = 1024 bytes).
pub fn human_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

impl SafeHtml {
    /// One of our own compiled-in assets (CSS or JS), never transcript content.
    fn asset(text: &'static str) -> Self {
        Self::trusted(text.to_owned())
    }

    /// Text we compose from our own constants (the CSP), never transcript content.
    fn asset_text(text: &str) -> Self {
        Self::trusted(text.to_owned())
    }

    /// Output of one of our templates, which escape every transcript value.
    fn rendered(html: String) -> Self {
        Self::trusted(html)
    }
}

const INDEX_CSS: &str = include_str!("../assets/index.css");
const INDEX_JS: &str = include_str!("../assets/index.js");

static INDEX_CSP: LazyLock<String> = LazyLock::new(|| csp_for(&[INDEX_JS], INDEX_CSS));

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

/// The placeholder of a turn's steps stored in block `id`: the statuses and kinds of the
/// steps, for the page's filters, and a note for a reader with JavaScript off.
fn stored_steps(turn: &TurnView, id: &str) -> String {
    let (mut statuses, mut kinds) = Default::default();
    facets(&turn.steps, &mut statuses, &mut kinds);
    format!(
        "<ol class=\"steps lazy\" data-block=\"{id}\" data-statuses=\"{}\" data-kinds=\"{}\">\
         <li class=\"lazy-note\">These steps are stored compressed in the page so that it opens \
         fast; they appear when JavaScript runs. <code>tracebook render --inline</code> writes \
         every step as plain HTML.</li></ol>",
        join(&statuses),
        join(&kinds)
    )
}

/// Escapes text for a double-quoted attribute value.
fn escape_attr(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
}

/// Adds the statuses and kinds of steps, their subagents' included: what the page's filters
/// need to know which stored blocks to open.
fn facets(
    steps: &[StepView],
    statuses: &mut std::collections::BTreeSet<&'static str>,
    kinds: &mut std::collections::BTreeSet<&'static str>,
) {
    for step in steps {
        let kind = match step {
            StepView::ToolCall(c) => {
                statuses.insert(c.status.as_str());
                if let Some(sub) = &c.subagent {
                    for t in &sub.turns {
                        facets(&t.steps, statuses, kinds);
                    }
                }
                c.kind.as_str()
            }
            StepView::Assistant(_) => "message",
            StepView::Thinking { .. } => "thinking",
            StepView::UserMessage(_) => "user_message",
            StepView::Notice(_) => "notice",
            StepView::Interrupt { .. } => "interrupt",
            StepView::Compaction { .. } => "compaction",
        };
        kinds.insert(kind);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csp_forbids_network_loads_and_pins_assets_by_hash() {
        assert!(CSP.starts_with("default-src 'none'; script-src 'sha256-"));
        assert!(CSP.contains("img-src data:"));
        assert!(!CSP.contains("unsafe-inline"));
    }

    #[test]
    fn the_embedded_report_cannot_close_its_element_and_reads_back() -> anyhow::Result<()> {
        let mut report: Report = serde_json::from_value(serde_json::json!({
            "schema_version": 1,
            "meta": {"generated_at": "2026-01-01T00:00:00Z", "tool_version": "0"},
            "session": {"harness": "h", "harness_label": "H", "source": "s"},
            "summary": {"turns": 0, "complete": 0, "incomplete": 0, "tool_calls": 0,
                        "ok": 0, "error": 0, "unknown": 0},
            "turns": [], "unlinked_subagents": [], "skipped": [], "warnings": []
        }))?;
        report.session.project = Some("</script><script>alert(1)</script>".to_owned());
        let mut data = EmbeddedReport::start(&report);
        data.turns(&report.turns);
        let data = data.finish();
        assert!(
            data.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
        );
        let html = format!(
            "<template id=\"tracebook-report\" data-encoding=\"zstd+base64\">{data}</template>"
        );
        let back = crate::report::compat::read(&html)?;
        assert_eq!(back.report, report);
        Ok(())
    }

    #[test]
    fn a_long_session_draws_runs_of_turns_and_keeps_every_call() -> anyhow::Result<()> {
        let turn = |n: usize, status: &str| {
            serde_json::json!({
                "id": format!("t{n}"), "number": n, "prompt": null, "response": null,
                "response_status": if n % 7 == 0 { "incomplete" } else { "complete" },
                "counts": {"intermediate_responses": 0, "tool_calls": 1, "process_events": 1},
                "outcome": {"edits": [], "verifications": [], "commits": []},
                "steps": [{"type": "tool_call", "id": format!("t{n}-s1"), "call_id": "c",
                           "name": "Bash", "kind": "shell", "status": status,
                           "status_basis": "exit_code", "command": "true", "paths": [],
                           "input": {}, "input_size": 0, "result_size": null,
                           "output": null, "exit_code": null, "patch": null,
                           "timestamp": null, "result_timestamp": null, "subagent": null}]
            })
        };
        let turns: Vec<TurnView> = serde_json::from_value(serde_json::Value::Array(
            (1..=1000)
                .map(|n| turn(n, if n % 10 == 0 { "error" } else { "ok" }))
                .collect(),
        ))?;
        let strip = overview(&turns);
        assert!(strip.marks.len() <= MAX_MARKS);
        assert_eq!(strip.marks[0].id, "t1");
        assert_eq!(strip.marks[1].id, "t6", "five turns per mark");
        assert!(strip.marks[0].title.starts_with("Turns 1–5: "));
        let errors = strip
            .marks
            .iter()
            .filter(|m| m.rects.iter().any(|r| r.class == "error"))
            .count();
        assert_eq!(errors, 100, "every run holding a failed call shows it");
        assert!(
            strip.marks[1].rects.iter().any(|r| r.class == "incomplete"),
            "turn 7 is incomplete: {}",
            strip.marks[1].title
        );
        Ok(())
    }

    #[test]
    fn first_line_is_cut_on_characters() {
        assert_eq!(first_line("héllo wörld\nnext", 5), "héllo…");
        assert_eq!(first_line("  short ", 10), "short");
    }

    #[test]
    fn terminal_escapes_are_removed_and_text_kept() {
        let raw = "\x1b[1;31mFAILED\x1b[0m test_a\r\n\x1b]0;title\x07done\x1b[2K\n";
        assert_eq!(clean_terminal(raw), "FAILED test_a\ndone\n");
        assert!(matches!(
            clean_terminal("plain\ntext"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

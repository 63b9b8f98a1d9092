//! Where a page's turns go: inline HTML while the page's budget lasts, then zstd-compressed
//! blocks inside inert `<template>` elements, each leaving a stub the page's script replaces.

use base64::Engine as _;
use rayon::prelude::*;

use super::turns::TurnsTemplate;
use crate::report::model::{StepView, TurnView};

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

/// The HTML of turns a page writes inline before it stores the rest compressed.
pub const INLINE_BYTES: usize = 512 * 1024;
/// The HTML of stored turns compressed together in one block.
pub const BLOCK_BYTES: usize = 256 * 1024;

/// Where rendered turns go: into the page while its inline budget lasts, then into stored
/// blocks ([`Storage`]).
pub(super) struct Layout {
    out: String,
    /// Bytes of turn HTML the page still takes as HTML; `None` once a turn did not fit.
    left: Option<usize>,
    /// Bytes of HTML per stored block.
    block: usize,
    blocks: Stored,
    chunk: Chunk,
}

impl Layout {
    pub(super) fn new(storage: Storage) -> Self {
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
    pub(super) fn place(
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
    pub(super) fn finish(mut self) -> (String, Stored) {
        self.chunk.flush(&mut self.out, &mut self.blocks);
        self.blocks.seal();
        (self.out, self.blocks)
    }
}

/// The blocks a page stores compressed, numbered in the order they are written (the turns',
/// then the turn list's), written together after the notebook (the parser reaches the turns
/// first).
#[derive(Default)]
pub(super) struct Stored {
    last: usize,
    /// Blocks given but not yet sealed: id, HTML, and the block holding its placeholder.
    pending: Vec<(String, String, Option<String>)>,
    pub(super) html: String,
    /// Secrets the final scan found in them.
    pub(super) caught: usize,
}

impl Stored {
    pub(super) fn next_id(&mut self) -> String {
        self.last += 1;
        format!("b{}", self.last)
    }

    /// Stores `html` as the inert data block `id`; `within` names the block whose HTML holds
    /// its placeholder, when that is stored too. Blocks are sealed a few at a time, on every
    /// core, in the order given.
    pub(super) fn write(&mut self, id: String, html: String, within: Option<String>) {
        self.pending.push((id, html, within));
        if self.pending.len() >= 2 * rayon::current_num_threads() {
            self.seal();
        }
    }

    pub(super) fn seal(&mut self) {
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

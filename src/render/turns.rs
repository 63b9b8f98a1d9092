//! The turns: each turn's prompt, process steps and response, and the subagents nested in
//! them, rendered on every core in page order.

use askama::Template;
use rayon::prelude::*;
use std::sync::LazyLock;

use super::filters;
use super::highlight::{self, Language};
use super::safe::SafeHtml;
use super::words::plural;
use crate::report::model::{OutcomeView, StepView, SubagentView, ToolCallView, TurnView};
use crate::report::model::{TodoState, ToolKind, ToolStatus};

/// Output longer than this many lines is split: the rest sits in a closed fold.
const OUTPUT_HEAD_LINES: usize = 80;
/// Read and search output is shown shorter: the rest is one click away.
const COMPACT_HEAD_LINES: usize = 20;
/// Output longer than this many bytes is split the same way.
const OUTPUT_HEAD_BYTES: usize = 16 * 1024;

/// Room for a turn's markup around its steps and texts.
const TURN_MARKUP: usize = 4 << 10;

/// The lines in `text`, as [`str::lines`] counts them: one per line end, and one for a last
/// line without one.
fn line_count(text: &str) -> usize {
    let ends = text.bytes().filter(|&b| b == b'\n').count();
    ends + usize::from(!text.is_empty() && !text.ends_with('\n'))
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

/// Renders the turns of a page or of a subagent.
pub(super) struct TurnsTemplate;

/// One turn, its steps already rendered (inline, or a placeholder for a stored block).
#[derive(Template)]
#[template(path = "partials/turn.html")]
struct TurnTemplate<'a> {
    turn: &'a TurnView,
    steps: SafeHtml,
}

/// The process steps of one turn (its tool calls through `partials/tool.html`).
#[derive(Template)]
#[template(path = "partials/steps.html")]
struct StepsTemplate<'a> {
    turn: &'a TurnView,
}

#[derive(Template)]
#[template(path = "partials/subagent.html")]
pub(super) struct SubagentTemplate<'a> {
    pub(super) sub: &'a SubagentView,
}

impl SubagentTemplate<'_> {
    fn turns_html(&self) -> SafeHtml {
        SafeHtml::rendered(TurnsTemplate.inline(&self.sub.turns).unwrap_or_default())
    }
}

/// A run of process steps as shown: single steps, or adjacent tool calls folded together.
enum Block<'a> {
    Step(&'a StepView),
    Tools(Vec<&'a ToolCallView>),
    /// Adjacent reasoning steps with retained text, shown as one fold.
    Reasoning(Vec<Thought<'a>>),
}

/// One reasoning step of a run.
struct Thought<'a> {
    id: &'a str,
    text: &'a str,
    timestamp: Option<&'a str>,
}

/// Tool output split for display: escaped, and marked for colouring where its language is
/// known.
struct Output {
    head: SafeHtml,
    rest: SafeHtml,
    rest_lines: usize,
    rest_bytes: usize,
}

/// One fact of a turn's verdict line: what it says, how it reads, where it leads.
pub(super) struct Verdict {
    pub(super) text: String,
    /// `ok`, `error`, `unknown` or `plain`.
    pub(super) class: &'static str,
    pub(super) href: Option<String>,
}

impl TurnsTemplate {
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

    /// Renders `turns` (numbered from `first`) on every core and hands each to `place` in
    /// order, with its number, the length of its steps' HTML and its HTML.
    pub(super) fn each_turn(
        &self,
        turns: &[TurnView],
        first: usize,
        place: &mut dyn FnMut(usize, &TurnView, usize, String) -> askama::Result<()>,
    ) -> askama::Result<()> {
        let rendered: Vec<askama::Result<(usize, String)>> =
            turns.par_iter().map(|turn| self.rendered(turn)).collect();
        for (i, (turn, r)) in turns.iter().zip(rendered).enumerate() {
            let (steps, html) = r?;
            place(first + i, turn, steps, html)?;
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
    pub(super) fn steps_of(&self, turn: &TurnView) -> askama::Result<String> {
        if turn.steps.is_empty() {
            return Ok(String::new());
        }
        StepsTemplate { turn }.render()
    }

    pub(super) fn turn_html(&self, turn: &TurnView, steps: String) -> askama::Result<String> {
        // Room for the steps and the turn's own texts, so the turn is not copied as it grows.
        let texts = turn.prompt.as_ref().map_or(0, |p| p.text.len())
            + turn.response.as_ref().map_or(0, |r| r.text.len());
        let mut html = String::with_capacity(steps.len() + texts + texts / 4 + TURN_MARKUP);
        TurnTemplate {
            turn,
            steps: SafeHtml::rendered(steps),
        }
        .render_into(&mut html)?;
        Ok(html)
    }
}

impl StepsTemplate<'_> {
    fn blocks<'t>(&self, turn: &'t TurnView) -> Vec<Block<'t>> {
        let mut out: Vec<Block<'t>> = Vec::new();
        for step in &turn.steps {
            let thought = match step {
                StepView::Thinking {
                    id,
                    text: Some(text),
                    timestamp,
                } => Some(Thought {
                    id,
                    text,
                    timestamp: timestamp.as_deref(),
                }),
                _ => None,
            };
            match (step, thought, out.last_mut()) {
                (StepView::ToolCall(c), _, Some(Block::Tools(group))) => group.push(c),
                (StepView::ToolCall(c), _, _) => out.push(Block::Tools(vec![c])),
                (_, Some(t), Some(Block::Reasoning(run))) => run.push(t),
                (_, Some(t), _) => out.push(Block::Reasoning(vec![t])),
                (other, None, _) => out.push(Block::Step(other)),
            }
        }
        out
    }

    fn subagent_html(&self, sub: &SubagentView) -> SafeHtml {
        SafeHtml::rendered(SubagentTemplate { sub }.render().unwrap_or_default())
    }

    /// The group's calls that are not ok, by status: `[("error", 2), ("unknown", 1)]`.
    fn group_status(&self, calls: &[&ToolCallView]) -> Vec<(&'static str, usize)> {
        let count = |s: ToolStatus| calls.iter().filter(|c| c.status == s).count();
        [ToolStatus::Error, ToolStatus::Unknown]
            .into_iter()
            .map(|s| (s.as_str(), count(s)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    fn output(&self, call: &ToolCallView, text: &str) -> Output {
        let text = clean_terminal(text);
        let kind = call.kind;
        let lines = match kind {
            ToolKind::Read | ToolKind::Search => COMPACT_HEAD_LINES,
            _ => OUTPUT_HEAD_LINES,
        };
        let mut cut = text.len();
        if let Some(i) = memchr::memchr_iter(b'\n', text.as_bytes()).nth(lines - 1) {
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
        // The rest behind the fold is marked too: the page colours it once it is opened.
        let head_html = highlight::numbered(head, lang, call.gutter);
        let rest_html = highlight::numbered(rest, lang, call.gutter);
        Output {
            head: head_html,
            rest: rest_html,
            rest_lines: line_count(rest),
            rest_bytes: rest.len(),
        }
    }
}

impl TurnTemplate<'_> {
    /// The text of the assistant message with anchor `id` in the turn.
    fn step_text<'t>(&self, turn: &'t TurnView, id: &str) -> Option<&'t str> {
        turn.steps.iter().find_map(|s| match s {
            StepView::Assistant(t) if *t.id == *id => Some(t.text.as_str()),
            _ => None,
        })
    }

    /// The turn's verdict in one line, from its outcome: files edited, how the last run of
    /// each verification command ended, commits seen.
    fn verdict(&self, turn: &TurnView) -> Vec<Verdict> {
        verdict_of(
            std::iter::once(&*turn.outcome),
            Some(format!("{}-o", turn.id)),
        )
    }
}

/// A verdict in one line over outcomes in order (one turn's, or a whole session's): paths
/// edited (each once) and edits not ok, how the last run of each verification command ended,
/// commits seen; each fact linking to `href` when given.
pub(super) fn verdict_of<'a>(
    outcomes: impl Iterator<Item = &'a OutcomeView>,
    href: Option<String>,
) -> Vec<Verdict> {
    let (mut paths, mut failed, mut commits) = (Vec::<&str>::new(), 0, 0);
    let mut last: Vec<(&str, ToolStatus)> = Vec::new();
    let mut runs = 0;
    for o in outcomes {
        for e in &o.edits {
            if !paths.contains(&e.path.as_str()) {
                paths.push(&e.path);
            }
            failed += e
                .calls
                .iter()
                .filter(|c| c.status != ToolStatus::Ok)
                .count();
        }
        for v in &o.verifications {
            runs += 1;
            match last.iter_mut().find(|(c, _)| *c == v.command) {
                Some(slot) => slot.1 = v.status,
                None => last.push((&v.command, v.status)),
            }
        }
        commits += o.commits.len();
    }
    let mut out = Vec::new();
    if !paths.is_empty() {
        let mut text = format!("edited {}", plural(paths.len(), "file"));
        if failed > 0 {
            text.push_str(&format!(" ({} not ok)", plural(failed, "edit")));
        }
        out.push(Verdict {
            text,
            class: if failed > 0 { "unknown" } else { "plain" },
            href: href.clone(),
        });
    }
    if !last.is_empty() {
        let count = |s: ToolStatus| last.iter().filter(|(_, x)| *x == s).count();
        let (ok, error, unknown) = (
            count(ToolStatus::Ok),
            count(ToolStatus::Error),
            count(ToolStatus::Unknown),
        );
        let (text, class) = if error == 0 && unknown == 0 {
            ("verification ok".to_owned(), "ok")
        } else {
            let parts: Vec<String> = [(error, "error"), (unknown, "unknown"), (ok, "ok")]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, w)| format!("{n} {w}"))
                .collect();
            let class = if error > 0 { "error" } else { "unknown" };
            (format!("verification: {}", parts.join(", ")), class)
        };
        out.push(Verdict {
            text: if last.len() < runs {
                format!("{text} (last run of each)")
            } else {
                text
            },
            class,
            href: href.clone(),
        });
    }
    if commits > 0 {
        out.push(Verdict {
            text: plural(commits, "commit"),
            class: "plain",
            href,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_as_str_lines_counts_them() {
        for text in [
            "",
            "a",
            "a\n",
            "\n",
            "\n\n",
            "a\nb",
            "a\r\nb\r\n",
            "a\rb",
            "é\n\nz",
        ] {
            assert_eq!(line_count(text), text.lines().count(), "{text:?}");
        }
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

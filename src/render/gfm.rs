//! GitHub-flavoured Markdown of a report, for a ticket or a CI job summary.
//!
//! The same report the notebook shows, already through the privacy stage: the session facts
//! and outcome first, one section per turn (prompt, response status, failed and unknown calls
//! with their first output line, response, outcome), the process in `<details>` folds and
//! retained patches as `diff` blocks, all within a byte budget ([`markdown`]).
//!
//! No text from the log is written as Markdown or HTML it brought. Every such text sits in a
//! code span, or in a fenced block whose fence is longer than any run of backticks in it, and
//! never inside the HTML of a fold's summary line (those hold only this module's words); a
//! response is Markdown this module writes again from what it reads in it, each word escaped
//! (`rewrite`), or else fenced. So a log cannot open or close a tag, end a fold, a fence or a
//! table cell, mention someone or link an issue: GitHub links neither inside code.

use std::fmt::Write as _;

use super::words::{human_size, num, plural, process_counts};
use crate::report::model::ResponseStatus;
use crate::report::model::ToolStatus;
use crate::report::model::{OutcomeView, Report, StepView, SubagentView, ToolCallView, TurnView};

/// The default budget. GitHub takes at most 65,536 characters in an issue or pull request body
/// or comment, and a byte is at most one character; this leaves room for the reporter's words.
pub const DEFAULT_MAX_BYTES: usize = 60_000;

/// The caps tried, in order, on each prompt and response when the whole texts do not fit.
const TEXT_CAPS: [Option<usize>; 6] = [
    None,
    Some(16 * 1024),
    Some(4 * 1024),
    Some(1024),
    Some(400),
    Some(120),
];
/// One line of a list (a first output line, a command) is cut to this many characters.
const LINE_CHARS: usize = 160;
/// A process fold lists at most this many steps.
const FOLD_STEPS: usize = 150;
/// A turn lists at most this many failed or unknown calls, edits, checks or commits each.
const LIST_ITEMS: usize = 40;
/// A retained patch is cut to this many bytes.
const PATCH_BYTES: usize = 16 * 1024;

/// The report as GitHub-flavoured Markdown of at most `max_bytes` bytes.
///
/// The summary, each turn's failures and its response are kept first, with prompts and
/// responses cut shorter until they fit (then the last turns are left out); the process folds
/// and then the patches are added, turn by turn, while they fit. The last lines say what was
/// left out and that the full notebook is the HTML. A budget smaller than the summary alone
/// gives the summary alone.
pub fn markdown(report: &Report, max_bytes: usize) -> String {
    let head = header(report);
    let turns = &report.turns;
    let tail = reading(report);
    let fixed = head.len() + tail.len();
    let mut plan = Plan {
        kept: turns.len(),
        cut: 0,
        cap: None,
        process: vec![false; turns.len()],
        patches: vec![false; turns.len()],
        total: turns.len(),
        has_patch: turns
            .iter()
            .map(|t| calls(&t.steps).iter().any(|c| c.patch.is_some()))
            .collect(),
    };
    // The essentials of every turn, at the largest cap that fits.
    let mut essentials: Vec<(String, usize)> = Vec::new();
    for cap in TEXT_CAPS {
        essentials = turns.iter().map(|t| essential(t, cap)).collect();
        plan.cap = cap;
        plan.cut = essentials.iter().map(|(_, c)| c).sum();
        let size = fixed + essentials.iter().map(|(s, _)| s.len()).sum::<usize>();
        if size + footer(report, &plan).len() <= max_bytes {
            break;
        }
    }
    // Then as many turns, in order, as fit.
    let mut size = fixed;
    plan.kept = 0;
    for (s, _) in &essentials {
        let next = Plan {
            kept: plan.kept + 1,
            ..plan.clone()
        };
        if size + s.len() + footer(report, &next).len() > max_bytes {
            break;
        }
        size += s.len();
        plan.kept += 1;
    }
    plan.cut = essentials[..plan.kept].iter().map(|(_, c)| c).sum();
    // Then the folds, and then the patches, while they fit.
    let folds: Vec<String> = turns[..plan.kept].iter().map(process).collect();
    let diffs: Vec<String> = turns[..plan.kept].iter().map(patches).collect();
    for (extra, chosen) in [(&folds, 0), (&diffs, 1)] {
        for (i, piece) in extra.iter().enumerate() {
            if piece.is_empty() {
                continue;
            }
            let mut next = plan.clone();
            next.choose(chosen, i, true);
            if size + piece.len() + footer(report, &next).len() <= max_bytes {
                size += piece.len();
                plan = next;
            }
        }
    }
    let mut out = String::with_capacity(size + 512);
    out.push_str(&head);
    for (i, (ess, _)) in essentials[..plan.kept].iter().enumerate() {
        // A turn's process fold sits between its prompt and the rest, as in the notebook.
        let (top, rest) = ess.split_at(ess.find(PROCESS_MARK).unwrap_or(ess.len()));
        out.push_str(top);
        if plan.process[i] {
            out.push_str(&folds[i]);
        }
        out.push_str(rest.strip_prefix(PROCESS_MARK).unwrap_or(rest));
        if plan.patches[i] {
            out.push_str(&diffs[i]);
        }
    }
    out.push_str(&tail);
    out.push_str(&footer(report, &plan));
    out
}

/// Where a turn's process fold goes within its essentials (removed when written).
const PROCESS_MARK: &str = "\u{0}process\u{0}";

/// What is written.
#[derive(Debug, Clone)]
struct Plan {
    /// The first `kept` turns are written.
    kept: usize,
    /// How many turns the report holds.
    total: usize,
    /// The cap on each prompt and response.
    cap: Option<usize>,
    /// How many prompts and responses were cut to it.
    cut: usize,
    /// Whether each turn's process fold is written.
    process: Vec<bool>,
    /// Whether each turn's patches are written.
    patches: Vec<bool>,
    /// Whether each turn has a retained patch.
    has_patch: Vec<bool>,
}

impl Plan {
    fn choose(&mut self, which: usize, turn: usize, on: bool) {
        match which {
            0 => self.process[turn] = on,
            _ => self.patches[turn] = on,
        }
    }
}

/// The session facts and its outcome.
fn header(report: &Report) -> String {
    let s = &report.session;
    let sum = &report.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Agent session: {}, {}\n",
        plain_label(&s.harness_label),
        plural(sum.turns, "turn")
    );
    let mut harness = plain_label(&s.harness_label);
    if let Some(v) = &s.version {
        harness.push(' ');
        harness.push_str(&cell(v));
    }
    let _ = writeln!(out, "| Harness | {harness} |\n| --- | --- |");
    let mut row = |name: &str, value: String| {
        let _ = writeln!(out, "| {name} | {value} |");
    };
    let retained = |v: &Option<String>| match v {
        Some(v) => cell(v),
        None => "*not retained*".to_owned(),
    };
    if let Some(m) = &s.model {
        row("Model", cell(m));
    }
    if let Some(p) = &s.project {
        row("Project", cell(p));
    }
    if let Some(b) = &s.branch {
        row("Branch", cell(b));
    }
    if let Some(id) = &s.id {
        row("Session id", cell(id));
    }
    row("Started", retained(&s.started_at));
    row("Ended", retained(&s.ended_at));
    if let Some(t) = s.tokens {
        row(
            "Tokens",
            format!("{} in · {} out", num(t.input), num(t.output)),
        );
    }
    row("Source", cell(&s.source));
    if let Some(p) = &s.parent {
        row("Subagent of", cell(p));
    }
    if let Some(sel) = &report.selection {
        row(
            "Turns kept",
            format!("{} of the session's {}", sel.kept.len(), sel.of),
        );
    }
    let _ = writeln!(
        out,
        "\n**Outcome:** {} ({} complete · {} incomplete) · {}: {} ok · {} error · {} unknown",
        plural(sum.turns, "turn"),
        sum.complete,
        sum.incomplete,
        plural(sum.tool_calls, "tool call"),
        sum.ok,
        sum.error,
        sum.unknown,
    );
    let needs = |f: &dyn Fn(&TurnView) -> bool| {
        numbers(report.turns.iter().filter(|t| f(t)).map(|t| t.number))
    };
    let failed = needs(&|t| {
        t.failure.is_some()
            || calls(&t.steps)
                .iter()
                .any(|c| c.status == ToolStatus::Error)
    });
    let unknown = needs(&|t| {
        calls(&t.steps)
            .iter()
            .any(|c| c.status == ToolStatus::Unknown)
    });
    let incomplete = needs(&|t| t.response_status == ResponseStatus::Incomplete);
    let mut first = true;
    for (label, list) in [
        ("Turns with a failed call or run", failed),
        ("Turns with a call of unknown outcome", unknown),
        ("Turns without a final response", incomplete),
    ] {
        if !list.is_empty() {
            let gap = if std::mem::take(&mut first) { "\n" } else { "" };
            let _ = writeln!(out, "{gap}- {label}: {list}");
        }
    }
    out.push_str(
        "\n> Only what the log retained: the system prompt is not in the log, a call with no \
         retained result is *unknown* (never assumed ok), patches appear only where the log kept \
         them, and outcomes list what the log shows, not the state of the files afterwards.\n\n",
    );
    out
}

/// A turn's heading, prompt, failures, response and outcome, with [`PROCESS_MARK`] where its
/// process fold goes; and how many of its texts were cut to `cap`.
fn essential(turn: &TurnView, cap: Option<usize>) -> (String, usize) {
    let mut out = String::new();
    let mut cut = 0;
    let _ = writeln!(
        out,
        "### Turn {} · {}\n",
        turn.number,
        turn.response_status.as_str()
    );
    match &turn.prompt {
        Some(p) => {
            let _ = writeln!(out, "**Prompt**{}\n", when(&p.timestamp));
            cut += usize::from(fenced(&mut out, "text", &p.text, cap));
        }
        None => out.push_str(
            "*No prompt retained: these events came before any human prompt in the log.*\n\n",
        ),
    }
    out.push_str(PROCESS_MARK);
    failures(&mut out, turn);
    if let Some(f) = &turn.failure {
        let _ = writeln!(out, "**Run failed:** {}\n", code(f));
    }
    match &turn.response {
        Some(r) => {
            let _ = writeln!(out, "**Response**{}\n", when(&r.timestamp));
            cut += usize::from(response(&mut out, &r.text, cap));
        }
        None => out.push_str("*No final response retained: incomplete.*\n\n"),
    }
    outcome(&mut out, &turn.outcome);
    (out, cut)
}

/// The failed and unknown calls of a turn, its subagents' included, each with its first output
/// line.
fn failures(out: &mut String, turn: &TurnView) {
    let mut listed = Vec::new();
    collect_failures(&turn.steps, "", &mut listed);
    if listed.is_empty() {
        return;
    }
    let _ = writeln!(out, "**Failed and unknown calls**\n");
    for line in listed.iter().take(LIST_ITEMS) {
        let _ = writeln!(out, "- {line}");
    }
    more(out, listed.len(), LIST_ITEMS, "call");
    out.push('\n');
}

fn collect_failures(steps: &[StepView], within: &str, listed: &mut Vec<String>) {
    for step in steps {
        let StepView::ToolCall(c) = step else {
            continue;
        };
        if c.status != ToolStatus::Ok {
            let first = match c.output.as_deref().map(first_line) {
                Some(l) if !l.is_empty() => format!(": {}", code(&l)),
                Some(_) => ": no output".to_owned(),
                None => ": no result retained".to_owned(),
            };
            listed.push(format!(
                "{within}**{}** {}{}{first}",
                c.status.as_str(),
                call_words(c),
                c.exit_code
                    .map(|x| format!(" · exit {x}"))
                    .unwrap_or_default(),
            ));
        }
        if let Some(sub) = &c.subagent {
            let within = format!("{within}subagent {} · ", code(&sub.agent_id));
            for t in &sub.turns {
                collect_failures(&t.steps, &within, listed);
            }
        }
    }
}

/// A turn's process as a fold: one line per step.
fn process(turn: &TurnView) -> String {
    if turn.steps.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<details><summary>Process: {}</summary>\n",
        process_summary(turn)
    );
    for step in turn.steps.iter().take(FOLD_STEPS) {
        let _ = writeln!(out, "- {}", step_line(step));
    }
    more(&mut out, turn.steps.len(), FOLD_STEPS, "step");
    out.push_str("\n</details>\n\n");
    out
}

fn process_summary(turn: &TurnView) -> String {
    let c = &turn.counts;
    let mut parts = process_counts(
        c.process_events as usize,
        c.intermediate_responses as usize,
        c.tool_calls as usize,
    );
    let here = calls(&turn.steps);
    for status in [ToolStatus::Error, ToolStatus::Unknown] {
        let n = here.iter().filter(|c| c.status == status).count();
        if n > 0 {
            parts.push(format!("{n} {}", status.as_str()));
        }
    }
    parts.join(" · ")
}

fn step_line(step: &StepView) -> String {
    match step {
        StepView::Assistant(t) => format!("message: {}", code(&first_line(&t.text))),
        StepView::Thinking { text: Some(_), .. } => "thinking".to_owned(),
        StepView::Thinking { text: None, .. } => "thinking (text not retained)".to_owned(),
        StepView::UserMessage(t) => format!("user message: {}", code(&first_line(&t.text))),
        StepView::Notice(t) => format!("notice: {}", code(&first_line(&t.text))),
        StepView::Interrupt { .. } => "interrupted by the user".to_owned(),
        StepView::Compaction { .. } => "conversation compacted".to_owned(),
        StepView::ToolCall(c) => {
            let status = match c.status {
                ToolStatus::Ok => "ok".to_owned(),
                s => format!("**{}**", s.as_str()),
            };
            let mut line = format!("{status} {}", call_words(c));
            if let Some(x) = c.exit_code {
                let _ = write!(line, " · exit {x}");
            }
            match c.result_size {
                Some(n) => {
                    let _ = write!(line, " · {} out", human_size(n));
                }
                None => line.push_str(" · no result"),
            }
            if let Some(sub) = &c.subagent {
                let _ = write!(line, " · {}", subagent_words(sub));
            }
            line
        }
    }
}

/// A subagent in a few words: its id, turns and call statuses.
fn subagent_words(sub: &SubagentView) -> String {
    let all: Vec<&ToolCallView> = sub.turns.iter().flat_map(|t| calls(&t.steps)).collect();
    let count = |s: ToolStatus| all.iter().filter(|c| c.status == s).count();
    format!(
        "subagent {}: {}, {} ({} error · {} unknown)",
        code(&sub.agent_id),
        plural(sub.turns.len(), "turn"),
        plural(all.len(), "tool call"),
        count(ToolStatus::Error),
        count(ToolStatus::Unknown)
    )
}

/// The calls of these steps, in order (not their subagents').
fn calls(steps: &[StepView]) -> Vec<&ToolCallView> {
    steps
        .iter()
        .filter_map(|s| match s {
            StepView::ToolCall(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

/// A call's name and what it ran, named or is labelled by (as the notebook's call line).
fn call_words(c: &ToolCallView) -> String {
    let name = if c.name.is_empty() {
        "*(call not retained)*".to_owned()
    } else {
        code(&c.name)
    };
    let arg = c
        .command
        .as_deref()
        .map(first_line)
        .or_else(|| c.paths.first().cloned())
        .or_else(|| c.label.as_deref().map(first_line))
        .filter(|a| !a.is_empty());
    match arg {
        Some(a) => format!("{name} {}", code(&a)),
        None => name,
    }
}

/// A turn's outcome, as retained.
fn outcome(out: &mut String, o: &OutcomeView) {
    if o.edits.is_empty() && o.verifications.is_empty() && o.commits.is_empty() {
        return;
    }
    out.push_str("**Outcome** (as retained in the log)\n\n");
    let mut lines = Vec::new();
    for e in &o.edits {
        let statuses: Vec<&str> = e.calls.iter().map(|c| c.status.as_str()).collect();
        let mut line = format!("edited {}: {}", code(&e.path), statuses.join(", "));
        if e.patch_unavailable() {
            line.push_str(" · patch unavailable");
        }
        lines.push(line);
    }
    for v in &o.verifications {
        lines.push(format!(
            "checked {}: {}",
            code(&first_line(&v.command)),
            status_word(v.status)
        ));
    }
    for c in &o.commits {
        lines.push(format!("commit {} {}", code(&c.hash), code(&c.subject)));
    }
    for line in lines.iter().take(LIST_ITEMS) {
        let _ = writeln!(out, "- {line}");
    }
    more(out, lines.len(), LIST_ITEMS, "item");
    out.push('\n');
}

/// A turn's retained patches, in one fold.
fn patches(turn: &TurnView) -> String {
    let with: Vec<(&ToolCallView, &str)> = calls(&turn.steps)
        .into_iter()
        .filter_map(|c| c.patch.as_deref().map(|p| (c, p)))
        .collect();
    if with.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<details><summary>{} retained</summary>\n",
        plural(with.len(), "patch")
    );
    for (c, p) in with {
        let path = c
            .paths
            .first()
            .map(|p| code(p))
            .unwrap_or_else(|| code(&c.name));
        let _ = writeln!(out, "{path} · {}\n", status_word(c.status));
        fenced(&mut out, "diff", p, Some(PATCH_BYTES));
    }
    out.push_str("</details>\n\n");
    out
}

/// Unlinked subagents, skipped records and warnings: what the notebook's last section says.
fn reading(report: &Report) -> String {
    let mut out = String::new();
    if !report.unlinked_subagents.is_empty() {
        out.push_str("### Subagents not started by a retained call\n\n");
        for sub in report.unlinked_subagents.iter().take(LIST_ITEMS) {
            let _ = writeln!(out, "- {}", subagent_words(sub));
        }
        more(
            &mut out,
            report.unlinked_subagents.len(),
            LIST_ITEMS,
            "subagent",
        );
        out.push('\n');
    }
    if report.skipped.is_empty() && report.warnings.is_empty() {
        return out;
    }
    out.push_str("### What was not shown\n\n");
    for k in report.skipped.iter().take(LIST_ITEMS) {
        let _ = writeln!(
            out,
            "- skipped on purpose: {} × {}",
            k.count,
            code(&k.reason)
        );
    }
    more(&mut out, report.skipped.len(), LIST_ITEMS, "reason");
    for w in report.warnings.iter().take(LIST_ITEMS) {
        let at = match w.line {
            Some(l) => format!("{}:{l}", w.source),
            None => w.source.clone(),
        };
        let _ = writeln!(
            out,
            "- could not be read: {} {}",
            code(&at),
            code(&w.message)
        );
    }
    more(&mut out, report.warnings.len(), LIST_ITEMS, "warning");
    out.push('\n');
    out
}

/// The last lines: what the budget left out, and where the rest is.
fn footer(report: &Report, plan: &Plan) -> String {
    let mut left = Vec::new();
    if plan.kept < plan.total {
        left.push(format!(
            "turns {}",
            numbers(report.turns[plan.kept..].iter().map(|t| t.number))
        ));
    }
    if plan.cut > 0 {
        left.push(format!(
            "the end of {} of the prompts and responses, each cut to {}",
            plan.cut,
            human_size(plan.cap.unwrap_or_default())
        ));
    }
    let kept = &report.turns[..plan.kept];
    let folds = numbers(
        kept.iter()
            .zip(&plan.process)
            .filter(|(t, on)| !**on && !t.steps.is_empty())
            .map(|(t, _)| t.number),
    );
    if !folds.is_empty() {
        left.push(format!("the process of turns {folds}"));
    }
    let diffs = numbers(
        kept.iter()
            .zip(&plan.patches)
            .zip(&plan.has_patch)
            .filter(|((_, on), has)| !**on && **has)
            .map(|((t, _), _)| t.number),
    );
    if !diffs.is_empty() {
        left.push(format!("the patches of turns {diffs}"));
    }
    let mut out = String::from("---\n\n");
    if !left.is_empty() {
        let _ = writeln!(
            out,
            "**Left out to stay within the size limit:** {}.\n",
            left.join("; ")
        );
    }
    let _ = writeln!(
        out,
        "The full notebook, with every step and its whole output, is the HTML (`tracebook render` \
         without `--format md`). Made by tracebook {} from {}.",
        plain_version(&report.meta.tool_version),
        code(&report.session.source)
    );
    out
}

/// Writes a response, cut to `cap` bytes: as Markdown this module writes again from what
/// pulldown-cmark reads in it (paragraphs, emphasis, code, lists, headings as bold lines, links
/// as their text and address in code), every word escaped, and an address, a mention or a
/// reference in code; a response holding anything else (HTML, a quote, a table, an image) is
/// written as a fenced block. Whether it was cut.
fn response(out: &mut String, text: &str, cap: Option<usize>) -> bool {
    let cleaned = clean(text);
    let (shown, cut) = match cap {
        Some(cap) if cleaned.len() > cap => (cut_at(&cleaned, cap), true),
        _ => (cleaned.as_str(), false),
    };
    match rewrite(shown) {
        Some(md) => {
            out.push_str(&md);
            out.push_str("\n\n");
            if cut {
                more_in_notebook(out, cleaned.len() - shown.len());
            }
            cut
        }
        None => fenced(out, "markdown", text, cap),
    }
}

/// The Markdown of [`response`], or `None` when the text holds more than it writes again.
fn rewrite(text: &str) -> Option<String> {
    use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
    let mut w = Rewriter::default();
    let mut code: Option<(String, String)> = None;
    let mut links: Vec<String> = Vec::new();
    for event in Parser::new_ext(text, Options::empty()) {
        if let Some((_, body)) = &mut code {
            match event {
                Event::Text(t) => body.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let (info, body) = code.take()?;
                    w.code_block(&info, &body);
                }
                _ => return None,
            }
            continue;
        }
        match event {
            Event::Start(Tag::Paragraph) => w.block(),
            Event::End(TagEnd::Paragraph) => w.end_block(),
            Event::Start(Tag::Heading { .. }) => {
                w.block();
                w.push("**");
            }
            Event::End(TagEnd::Heading(_)) => {
                w.push("**");
                w.end_block();
            }
            Event::Start(Tag::Emphasis) | Event::End(TagEnd::Emphasis) => w.push("*"),
            Event::Start(Tag::Strong) | Event::End(TagEnd::Strong) => w.push("**"),
            Event::Code(c) => w.push(&code_span(&c)),
            Event::Text(t) => w.text(&t),
            Event::SoftBreak => w.newline(),
            Event::HardBreak => {
                w.push("\\");
                w.newline();
            }
            Event::Rule => {
                w.block();
                w.push("***");
                w.end_block();
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(i) => i
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '_'))
                        .collect(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((info, String::new()));
            }
            Event::Start(Tag::List(first)) => {
                // A blank line first: an ordered list not starting at 1 cannot interrupt a
                // paragraph, and would read as its text.
                if !w.fresh && !w.out.is_empty() && (w.indent.is_empty() || first.unwrap_or(1) != 1)
                {
                    while !w.out.ends_with("\n\n") {
                        w.out.push('\n');
                    }
                }
                w.lists.push(first);
            }
            Event::End(TagEnd::List(_)) => {
                w.lists.pop();
                w.end_block();
            }
            Event::Start(Tag::Item) => w.item(),
            Event::End(TagEnd::Item) => {
                w.indent.pop();
            }
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.into_string()),
            Event::End(TagEnd::Link) => {
                let url = links.pop()?;
                if !url.is_empty() {
                    w.push(" (");
                    w.push(&code_span(&url));
                    w.push(")");
                }
            }
            _ => return None,
        }
        if w.indent.len() > 8 {
            return None;
        }
    }
    (code.is_none() && !w.out.trim().is_empty()).then(|| w.out.trim_end().to_owned())
}

/// Writes Markdown line by line, with the indentation of the list items it is in.
#[derive(Default)]
struct Rewriter {
    out: String,
    /// The width of each open item's marker.
    indent: Vec<usize>,
    /// Each open list: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// Right after an item's marker: its first block starts on the marker's line.
    fresh: bool,
}

impl Rewriter {
    fn margin(&self) -> String {
        " ".repeat(self.indent.iter().sum())
    }

    fn at_line_start(&self) -> bool {
        self.out.is_empty() || self.out.ends_with('\n') || self.fresh
    }

    /// A block starts: a blank line before it, unless it opens an item or the text.
    fn block(&mut self) {
        if self.fresh {
            return;
        }
        if !self.out.is_empty() {
            while !self.out.ends_with("\n\n") {
                self.out.push('\n');
            }
        }
        let m = self.margin();
        self.out.push_str(&m);
    }

    fn end_block(&mut self) {
        if !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }

    fn newline(&mut self) {
        self.out.push('\n');
        let m = self.margin();
        self.out.push_str(&m);
    }

    fn push(&mut self, s: &str) {
        self.fresh = false;
        self.out.push_str(s);
    }

    fn item(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
        let marker = match self.lists.last_mut() {
            Some(Some(n)) => {
                let m = format!("{n}. ");
                *n += 1;
                m
            }
            _ => "- ".to_owned(),
        };
        let m = self.margin();
        self.out.push_str(&m);
        self.out.push_str(&marker);
        self.indent.push(marker.len());
        self.fresh = true;
    }

    /// Words as text: each character that can start Markdown or HTML escaped (and, first on a
    /// line, those that start a block); a word holding an address, a mention or a reference
    /// (`://`, `www.`, `@`, `#`) written as code.
    fn text(&mut self, t: &str) {
        let mut line_start = self.at_line_start();
        let t = if line_start { t.trim_start() } else { t };
        let mut first = true;
        for word in t.split(' ') {
            if !first {
                self.out.push(' ');
                line_start = false;
            }
            first = false;
            let lower = word.to_lowercase();
            if lower.contains("://") || lower.contains("www.") || word.contains(['@', '#']) {
                self.push(&code_span(word));
                continue;
            }
            let mut escaped = String::with_capacity(word.len());
            for (i, c) in word.char_indices() {
                // First on a line: a list marker (`-`, `+`, `1.`, `1)`) or a heading underline.
                let block = line_start
                    && match c {
                        '-' | '+' | '=' => i == 0,
                        '.' | ')' => i > 0 && word[..i].bytes().all(|b| b.is_ascii_digit()),
                        _ => false,
                    };
                if block
                    || matches!(
                        c,
                        '\\' | '`'
                            | '*'
                            | '_'
                            | '['
                            | ']'
                            | '<'
                            | '>'
                            | '!'
                            | '&'
                            | '~'
                            | '|'
                            | '$'
                            | '#'
                    )
                {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            self.push(&escaped);
        }
    }

    fn code_block(&mut self, info: &str, body: &str) {
        self.block();
        let fence = "`".repeat(longest_run(body, '`').max(2) + 1);
        let m = self.margin();
        self.out.push_str(&fence);
        self.out.push_str(info);
        for line in body.lines() {
            self.out.push('\n');
            if !line.is_empty() {
                self.out.push_str(&m);
            }
            self.out.push_str(line);
        }
        self.out.push('\n');
        self.out.push_str(&m);
        self.out.push_str(&fence);
        self.out.push('\n');
        self.fresh = false;
    }
}

/// [`code`] of a word, or `*(empty)*` for none.
fn code_span(text: &str) -> String {
    code(text)
}

/// Writes `text` as a fenced block, cut to `cap` bytes at a line end where one is near;
/// whether it was cut.
fn fenced(out: &mut String, info: &str, text: &str, cap: Option<usize>) -> bool {
    let text = clean(text);
    let (shown, cut) = match cap {
        Some(cap) if text.len() > cap => (cut_at(&text, cap), true),
        _ => (text.as_str(), false),
    };
    let fence = "`".repeat(longest_run(shown, '`').max(2) + 1);
    let _ = write!(out, "{fence}{info}\n{shown}");
    if !shown.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}\n");
    if cut {
        more_in_notebook(out, text.len() - shown.len());
    }
    cut
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// `text` cut to at most `cap` bytes, at the last line end in its last quarter when there is
/// one, else at a character boundary.
fn cut_at(text: &str, cap: usize) -> &str {
    let mut end = cap.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    match head.rfind('\n') {
        Some(i) if i >= end - end / 4 => &head[..=i],
        _ => head,
    }
}

/// One line of text as an inline code span: the delimiter is longer than any backtick run in
/// it, and a space pads a text that starts or ends with a backtick or a space.
fn code(text: &str) -> String {
    let one: String = clean(text)
        .chars()
        .map(|c| if c == '\n' || c == '\t' { ' ' } else { c })
        .collect();
    if one.trim().is_empty() {
        return "*(empty)*".to_owned();
    }
    let ticks = "`".repeat(longest_run(&one, '`') + 1);
    let pad = one.starts_with(['`', ' ']) || one.ends_with(['`', ' ']);
    let pad = if pad { " " } else { "" };
    format!("{ticks}{pad}{one}{pad}{ticks}")
}

/// [`code`] in a table cell: a pipe is escaped so it does not end the cell (a backslash before
/// a pipe is written as a lookalike, which GFM has no escape for inside code).
fn cell(text: &str) -> String {
    code(&text.replace("\\|", "\u{29f5}|")).replace('|', "\\|")
}

/// The first non-blank line of a text, cut to [`LINE_CHARS`] characters.
fn first_line(text: &str) -> String {
    let text = clean(text);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    let mut out: String = line.chars().take(LINE_CHARS).collect();
    if line.chars().count() > LINE_CHARS {
        out.push('…');
    }
    out
}

/// A text as it can be shown: terminal escape sequences and carriage returns removed, other
/// control characters, bidirectional overrides and invisible characters written as `<U+XXXX>`.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.peek() {
                // CSI: parameters and intermediates up to a final byte.
                Some('[') => {
                    chars.next();
                    for n in chars.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ST.
                Some(']') => {
                    chars.next();
                    while let Some(n) = chars.next() {
                        if n == '\x07' || (n == '\x1b' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                Some(_) => {
                    chars.next();
                }
                None => {}
            },
            '\r' => {}
            '\n' | '\t' => out.push(c),
            c if c.is_control() || hidden(c) => {
                let _ = write!(out, "<U+{:04X}>", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// Characters that change how the text around them reads without being seen.
fn hidden(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// A harness label of the built-in or a user's adapter, with Markdown's punctuation escaped.
fn plain_label(label: &str) -> String {
    let mut out = String::new();
    for c in clean(label).chars() {
        if c.is_ascii_punctuation() {
            out.push('\\');
        }
        if c == '\n' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// The tool's version, digits and dots only.
fn plain_version(v: &str) -> String {
    v.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        .collect()
}

fn when(ts: &Option<Box<str>>) -> String {
    ts.as_deref()
        .map(|t| format!(" {}", code(t)))
        .unwrap_or_default()
}

fn status_word(s: ToolStatus) -> String {
    match s {
        ToolStatus::Ok => "ok".to_owned(),
        s => format!("**{}**", s.as_str()),
    }
}

fn more(out: &mut String, len: usize, shown: usize, word: &str) {
    if len > shown {
        let _ = writeln!(
            out,
            "- … {} more (in the notebook)",
            plural(len - shown, word)
        );
    }
}

/// Turn numbers as ranges: `2–4, 7`.
fn numbers(ns: impl Iterator<Item = usize>) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for n in ns {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => runs.push((n, n)),
        }
    }
    runs.iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The line under a text cut to fit: how much more the notebook holds.
fn more_in_notebook(out: &mut String, omitted: usize) {
    let _ = writeln!(out, "*{} more in the notebook.*\n", human_size(omitted));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_in_markdown_is_written_again_with_every_word_escaped() {
        let md = rewrite(
            "# Title\n\n**bold** and *it* @octocat #12 see www.example.com.\n\n- a\n  - b_c\n\n3. three\n4. `x`\n\n```rust\nfn main() {}\n```\n\nSee [the docs](https://example.com/d).",
        )
        .expect("plain Markdown is written again");
        assert_eq!(
            md,
            "**Title**\n\n**bold** and *it* `@octocat` `#12` see `www.example.com.`\n\n- a\n  - b\\_c\n\n3. three\n4. `x`\n\n```rust\nfn main() {}\n```\n\nSee the docs (`https://example.com/d`)."
        );
    }

    #[test]
    fn a_response_holding_html_a_quote_or_a_table_is_fenced() {
        for text in ["a <b>c</b>", "> quoted", "x\n\n<details>\n", "![i](x.png)"] {
            assert_eq!(rewrite(text), None, "{text}");
        }
    }
}

//! The offline index of a batch: one row per session, linking its notebook; a search over
//! every session's turns (a compact word index embedded in the page, compressed like a
//! notebook's stored turns); filters by harness, project, date and status; and the failed and
//! unknown calls by tool and by harness over time, as inline SVG and as tables.

use askama::Template;
use base64::Engine as _;
use std::collections::{BTreeMap, BTreeSet};

use super::assets::{DECODER, INDEX_CSP, INDEX_CSS, INDEX_JS};
use super::safe::SafeHtml;
use crate::report::model::ToolStatus;
use crate::report::model::{Report, StepView, TurnView};
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
    /// What the index keeps of the session's report, when its notebook could be read back.
    pub extra: Option<IndexExtra>,
    /// The session's entry of the search, once [`IndexRow::keep`] has packed it.
    pub search: Option<SearchEntry>,
}

impl IndexRow {
    /// Keeps what the index needs of the session's report: its calls' counts, and its turns
    /// as its entry of the search, packed until the index is written (`SearchEntry`).
    pub fn keep(&mut self, mut extra: IndexExtra) {
        if let Some(entry) = search_entry(self, &extra) {
            self.search = Some(SearchEntry::pack(entry.to_string()));
            extra.turns = Vec::new();
        }
        self.extra = Some(extra);
    }
}

/// One session's entry of the search data (its JSON), compressed on its own at zstd's fastest
/// level while the index waits for the other sessions: 500 sessions' entries take 36 MiB as
/// text, a sixth of it so.
#[derive(Debug, Clone)]
pub struct SearchEntry {
    /// The JSON's length.
    len: usize,
    /// The JSON, compressed when `packed`.
    bytes: Vec<u8>,
    packed: bool,
}

impl SearchEntry {
    fn pack(json: String) -> Self {
        match zstd::bulk::compress(json.as_bytes(), 1) {
            Ok(bytes) => SearchEntry {
                len: json.len(),
                bytes,
                packed: true,
            },
            Err(_) => Self::plain(json),
        }
    }

    fn plain(json: String) -> Self {
        SearchEntry {
            len: json.len(),
            bytes: json.into_bytes(),
            packed: false,
        }
    }

    /// Appends the JSON to `out`.
    fn unpack_into(&self, out: &mut Vec<u8>) -> std::io::Result<()> {
        if self.packed {
            zstd::stream::copy_decode(self.bytes.as_slice(), out)
        } else {
            out.extend_from_slice(&self.bytes);
            Ok(())
        }
    }
}

/// What the index keeps of one session's report: its calls' failures and its turns' words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexExtra {
    /// Calls of unknown outcome, subagents' included.
    pub unknown: usize,
    /// Failed and unknown calls by tool name: (error, unknown).
    pub tools: BTreeMap<String, (usize, usize)>,
    /// One entry per turn.
    pub turns: Vec<SearchTurn>,
}

/// One turn as the search sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTurn {
    /// The turn's anchor in its notebook (`t3`).
    pub anchor: String,
    /// Its number.
    pub number: usize,
    /// The prompt's first line, shown with a result.
    pub snippet: String,
    /// Its distinct words, lower case, in order of first use, space-separated.
    pub words: String,
}

/// Distinct words kept per turn: a turn of more is searched by its first ones.
const WORDS_PER_TURN: usize = 400;
/// Characters of the prompt shown with a result.
const SNIPPET_CHARS: usize = 100;

impl IndexExtra {
    /// What the index keeps of a report (already through the privacy stage).
    pub fn of(report: &Report) -> Self {
        let mut extra = IndexExtra::default();
        for turn in &report.turns {
            count_calls(turn, &mut extra);
            extra.turns.push(SearchTurn {
                anchor: turn.id.to_string(),
                number: turn.number,
                snippet: turn
                    .prompt
                    .as_ref()
                    .map(|p| snippet(&p.text))
                    .unwrap_or_default(),
                words: words(turn),
            });
        }
        for sub in &report.unlinked_subagents {
            for t in &sub.turns {
                count_calls(t, &mut extra);
            }
        }
        extra
    }
}

fn count_calls(turn: &TurnView, extra: &mut IndexExtra) {
    for step in &turn.steps {
        let StepView::ToolCall(c) = step else {
            continue;
        };
        match c.status {
            ToolStatus::Error => extra.tools.entry(c.name.clone()).or_default().0 += 1,
            ToolStatus::Unknown => {
                extra.tools.entry(c.name.clone()).or_default().1 += 1;
                extra.unknown += 1;
            }
            ToolStatus::Ok => {}
        }
        if let Some(sub) = &c.subagent {
            for t in &sub.turns {
                count_calls(t, extra);
            }
        }
    }
}

/// The words a search finds a turn by: its prompt, messages, tool names and commands, and
/// response.
fn words(turn: &TurnView) -> String {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut out: Vec<String> = Vec::new();
    let mut add = |text: &str| {
        for w in text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| (2..=40).contains(&w.chars().count()))
        {
            if out.len() >= WORDS_PER_TURN {
                return;
            }
            let w = w.to_lowercase();
            if seen.insert(w.clone()) {
                out.push(w);
            }
        }
    };
    if let Some(p) = &turn.prompt {
        add(&p.text);
    }
    if let Some(r) = &turn.response {
        add(&r.text);
    }
    for step in &turn.steps {
        match step {
            StepView::Assistant(t) | StepView::UserMessage(t) => add(&t.text),
            StepView::ToolCall(c) => {
                add(&c.name);
                if let Some(cmd) = &c.command {
                    add(cmd);
                }
                for p in &c.paths {
                    add(p);
                }
            }
            _ => {}
        }
    }
    out.join(" ")
}

fn snippet(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    let mut out: String = line.chars().take(SNIPPET_CHARS).collect();
    if line.chars().count() > SNIPPET_CHARS {
        out.push('…');
    }
    out
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
    decoder: SafeHtml,
    search: SafeHtml,
    harnesses: Vec<String>,
    projects: Vec<String>,
    summary: Summary,
}

impl IndexTemplate<'_> {
    /// A row's status, for the status filter.
    fn status(&self, r: &IndexRow) -> &'static str {
        match (&r.error, &r.extra) {
            (Some(_), _) => "failed",
            _ if r.row.errors > 0 => "error",
            (None, Some(x)) if x.unknown > 0 => "unknown",
            _ => "ok",
        }
    }

    /// The day a row's session started (`2026-03-02`), or empty.
    fn day(&self, r: &IndexRow) -> String {
        day(r.row.started_at.as_deref())
    }

    /// The row's calls of unknown outcome.
    fn unknown(&self, r: &IndexRow) -> usize {
        r.extra.as_ref().map_or(0, |x| x.unknown)
    }
}

fn day(started: Option<&str>) -> String {
    started
        .filter(|s| s.len() >= 10 && s.is_char_boundary(10))
        .map(|s| s[..10].to_owned())
        .unwrap_or_default()
}

/// The failed and unknown calls of every session, for the strip and its tables.
#[derive(Debug, Default)]
struct Summary {
    /// By tool name, most first: (tool, harness, error, unknown) rows of the table.
    by_tool: Vec<(String, String, usize, usize)>,
    /// The bars of the tool chart.
    tool_bars: Vec<Bar>,
    /// By harness and day, in order: (day, harness, error, unknown).
    by_day: Vec<(String, String, usize, usize)>,
    /// One row of day columns per harness.
    day_rows: Vec<DayRow>,
    /// The days the time chart spans, first and last.
    first_day: String,
    last_day: String,
    /// The time chart's width.
    day_width: usize,
}

/// One bar of the tool chart.
#[derive(Debug)]
struct Bar {
    label: String,
    y: usize,
    error_w: usize,
    unknown_x: usize,
    unknown_w: usize,
    title: String,
}

/// One harness's row of the time chart.
#[derive(Debug)]
struct DayRow {
    harness: String,
    y: usize,
    cols: Vec<DayCol>,
}

/// One day of a harness's row.
#[derive(Debug)]
struct DayCol {
    x: usize,
    error_y: usize,
    error_h: usize,
    unknown_y: usize,
    unknown_h: usize,
    title: String,
}

/// Tools in the chart; the table lists them all.
const CHART_TOOLS: usize = 12;
/// Days in the time chart (the last ones); the table lists them all.
const CHART_DAYS: usize = 90;
/// Width of the tool chart's bars at their longest.
const BAR_WIDTH: usize = 360;

fn summary(rows: &[IndexRow]) -> Summary {
    let mut tools: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    let mut days: BTreeMap<(String, String), (usize, usize)> = BTreeMap::new();
    for r in rows {
        let Some(x) = &r.extra else { continue };
        let mut total = (0, 0);
        for (name, (e, u)) in &x.tools {
            let slot = tools
                .entry((name.clone(), r.row.harness.clone()))
                .or_default();
            slot.0 += e;
            slot.1 += u;
            total.0 += e;
            total.1 += u;
        }
        let d = day(r.row.started_at.as_deref());
        if total != (0, 0) && !d.is_empty() {
            let slot = days.entry((d, r.row.harness.clone())).or_default();
            slot.0 += total.0;
            slot.1 += total.1;
        }
    }
    let mut s = Summary::default();
    let mut by_tool: Vec<(String, String, usize, usize)> = tools
        .into_iter()
        .map(|((t, h), (e, u))| (t, h, e, u))
        .collect();
    by_tool.sort_by(|a, b| (b.2 + b.3).cmp(&(a.2 + a.3)).then_with(|| a.0.cmp(&b.0)));
    // The chart sums each tool over harnesses.
    let mut per_tool: Vec<(String, usize, usize)> = Vec::new();
    for (t, _, e, u) in &by_tool {
        match per_tool.iter_mut().find(|p| p.0 == *t) {
            Some(p) => {
                p.1 += e;
                p.2 += u;
            }
            None => per_tool.push((t.clone(), *e, *u)),
        }
    }
    per_tool.sort_by(|a, b| (b.1 + b.2).cmp(&(a.1 + a.2)).then_with(|| a.0.cmp(&b.0)));
    let most = per_tool.first().map_or(1, |p| (p.1 + p.2).max(1));
    for (i, (t, e, u)) in per_tool.iter().take(CHART_TOOLS).enumerate() {
        let error_w = e * BAR_WIDTH / most;
        s.tool_bars.push(Bar {
            label: if t.is_empty() {
                "(not retained)".into()
            } else {
                t.clone()
            },
            y: i * 20,
            error_w,
            unknown_x: 170 + error_w,
            unknown_w: u * BAR_WIDTH / most,
            title: format!("{t}: {e} error, {u} unknown"),
        });
    }
    s.by_tool = by_tool;
    let all_days: BTreeSet<String> = days.keys().map(|(d, _)| d.clone()).collect();
    let shown: Vec<&String> = all_days.iter().rev().take(CHART_DAYS).rev().collect();
    let harnesses: BTreeSet<String> = days.keys().map(|(_, h)| h.clone()).collect();
    let most = days.values().map(|(e, u)| e + u).max().unwrap_or(1).max(1);
    for (row, h) in harnesses.iter().enumerate() {
        let y = row * 36;
        let cols = shown
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let (e, u) = *days.get(&((*d).clone(), h.clone()))?;
                let error_h = (e * 28).div_ceil(most);
                let unknown_h = (u * 28).div_ceil(most);
                Some(DayCol {
                    x: 110 + i * 6,
                    error_y: y + 30 - error_h,
                    error_h,
                    unknown_y: y + 30 - error_h - unknown_h,
                    unknown_h,
                    title: format!("{h} {d}: {e} error, {u} unknown"),
                })
            })
            .collect();
        s.day_rows.push(DayRow {
            harness: h.clone(),
            y,
            cols,
        });
    }
    s.first_day = shown.first().map(|d| (*d).clone()).unwrap_or_default();
    s.last_day = shown.last().map(|d| (*d).clone()).unwrap_or_default();
    s.day_width = 110 + shown.len() * 6 + 10;
    s.by_day = days
        .into_iter()
        .map(|((d, h), (e, u))| (d, h, e, u))
        .collect();
    s
}

/// A session's entry of the search data: its notebook, harness, project, day and turns.
fn search_entry(r: &IndexRow, x: &IndexExtra) -> Option<serde_json::Value> {
    let href = r.href.as_ref()?;
    let turns: Vec<serde_json::Value> = x
        .turns
        .iter()
        .map(|t| serde_json::json!([t.anchor, t.number, t.snippet, t.words]))
        .collect();
    Some(serde_json::json!({
        "f": href,
        "h": r.row.harness,
        "p": r.row.project,
        "d": day(r.row.started_at.as_deref()),
        "t": turns,
    }))
}

/// The search's data: per written session, its notebook and its turns; zstd, then base64.
/// The JSON array is put together from the sessions' entries in one buffer of its exact
/// length, each entry unpacked in turn.
fn search_data(rows: &[IndexRow]) -> String {
    // A row given its report without `IndexRow::keep` has its entry made here.
    let made: Vec<Option<SearchEntry>> = rows
        .iter()
        .map(|r| match r.search {
            Some(_) => None,
            None => Some(SearchEntry::plain(
                search_entry(r, r.extra.as_ref()?)?.to_string(),
            )),
        })
        .collect();
    let entries: Vec<&SearchEntry> = rows
        .iter()
        .zip(&made)
        .filter_map(|(r, made)| r.search.as_ref().or(made.as_ref()))
        .collect();
    let len = 2 + entries.iter().map(|e| e.len).sum::<usize>() + entries.len().saturating_sub(1);
    let mut json = Vec::with_capacity(len);
    json.push(b'[');
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        if e.unpack_into(&mut json).is_err() {
            return String::new();
        }
    }
    json.push(b']');
    let packed = zstd::bulk::compress(&json, 9).unwrap_or_default();
    drop(json);
    base64::engine::general_purpose::STANDARD.encode(packed)
}

/// Renders the offline index of a batch: a sortable, filterable, searchable table linking
/// each notebook, and the summary of failed and unknown calls.
pub fn index(rows: &[IndexRow]) -> askama::Result<String> {
    let distinct = |f: &dyn Fn(&IndexRow) -> Option<String>| -> Vec<String> {
        rows.iter()
            .filter_map(f)
            .collect::<BTreeSet<String>>()
            .into_iter()
            .collect()
    };
    IndexTemplate {
        rows,
        failed: rows.iter().filter(|r| r.error.is_some()).count(),
        tool_version: env!("CARGO_PKG_VERSION"),
        csp: SafeHtml::asset_text(&INDEX_CSP),
        css: SafeHtml::asset(INDEX_CSS),
        js: SafeHtml::asset(INDEX_JS),
        decoder: SafeHtml::asset(DECODER),
        search: SafeHtml::base64(search_data(rows)),
        harnesses: distinct(&|r| Some(r.row.harness.clone())),
        projects: distinct(&|r| r.row.project.clone()),
        summary: summary(rows),
    }
    .render()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize) -> IndexRow {
        IndexRow {
            row: SessionRow {
                harness: "claude-code".into(),
                id: format!("s{i}"),
                parent: None,
                project: (i != 0).then(|| format!("p{i}")),
                started_at: Some("2026-03-02T10:00:00Z".into()),
                turns: 1,
                tool_calls: 0,
                errors: 0,
                title: None,
                subagents: Vec::new(),
            },
            href: Some(format!("s{i}.html")),
            error: None,
            parent: None,
            extra: None,
            search: None,
        }
    }

    fn extra(i: usize) -> IndexExtra {
        IndexExtra {
            unknown: i,
            tools: BTreeMap::new(),
            turns: vec![SearchTurn {
                anchor: "t1".into(),
                number: 1,
                snippet: format!("fix the \"{i}\" test"),
                words: format!("fix the {i} test"),
            }],
        }
    }

    #[test]
    fn a_session_kept_packed_is_searched_as_one_holding_its_turns() -> anyhow::Result<()> {
        let holding: Vec<IndexRow> = (0..3)
            .map(|i| IndexRow {
                extra: Some(extra(i)),
                ..row(i)
            })
            .collect();
        let mut kept: Vec<IndexRow> = (0..3).map(row).collect();
        for (i, r) in kept.iter_mut().enumerate() {
            match i {
                1 => r.extra = Some(extra(i)),
                _ => r.keep(extra(i)),
            }
        }
        let data = search_data(&kept);
        assert_eq!(data, search_data(&holding));
        let packed = base64::engine::general_purpose::STANDARD.decode(data)?;
        let json: serde_json::Value = serde_json::from_slice(&zstd::decode_all(&packed[..])?)?;
        assert_eq!(json.as_array().map(Vec::len), Some(3));
        assert_eq!(json[2]["t"][0][2], "fix the \"2\" test");
        assert_eq!(json[0]["p"], serde_json::Value::Null);
        assert_eq!(kept[2].extra.as_ref().map(|x| x.unknown), Some(2));
        Ok(())
    }
}

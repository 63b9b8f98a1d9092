//! Syntax highlighting at render time: code, shell commands and diffs become escaped text in
//! `<span>`s of a few short token classes, coloured by the notebook's stylesheet.
//!
//! Grammars are syntect's built-in Sublime Text set, run by Oniguruma (the engine they were
//! written for); no theme is loaded, because the page colours a small set of token categories
//! itself ([`CLASSES`]), in light, dark and print. Highlighting only wraps text in spans: the
//! text itself, and so copying and searching it, is unchanged. Work is bounded: text over
//! [`MAX_BYTES`], or with a line over [`MAX_LINE_BYTES`], stays plain, and a [`Highlighter`]
//! highlights a given text in a given language once per page.

use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};

use super::safe::SafeHtml;
use crate::report::model::ReadGutter;

/// Text longer than this many bytes is shown plain: highlighting it would cost more time and
/// page weight than it gives. It takes nothing from the page's budget.
pub const MAX_BYTES: usize = 16 * 1024;
/// A line longer than this many bytes (minified code, data) leaves its whole block plain.
pub const MAX_LINE_BYTES: usize = 2 * 1024;

/// A page highlights at most this many bytes in all (the grammars colour only about 1 MB a
/// second on some languages, so 32 KiB costs a few milliseconds of a core: a fraction of the
/// rest of the page's writing). The first text that does not fit ends the page's
/// highlighting: later text is shown plain (diffs keep their line classes), so a very large
/// session renders in bounded extra time, and the turns after that point can be rendered on
/// every core with the same result. Files a tool read are coloured in their shown head only,
/// so the budget colours what a reader sees first: the responses, commands, diffs and file
/// heads of the session's first turns.
pub const MAX_PAGE_BYTES: usize = 32 * 1024;

/// The token classes highlighted text may carry, as written in the page and allowed by the
/// Markdown sanitizer: comment, string, keyword, number or constant, function, type.
pub const CLASSES: &[&str] = &["hc", "hs", "hk", "hn", "hf", "ht"];
/// The line classes of a rendered diff: added, removed, hunk header, file header.
pub const DIFF_CLASSES: &[&str] = &["add", "del", "hunk", "file"];

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

/// Token categories, innermost scope first; `None` means "no colour here, look outward".
static RULES: LazyLock<Vec<(Scope, Option<&'static str>)>> = LazyLock::new(|| {
    [
        ("comment", Some("hc")),
        ("constant.character.escape", Some("hs")),
        ("string", Some("hs")),
        ("markup.raw", Some("hs")),
        ("constant.numeric", Some("hn")),
        ("constant.language", Some("hn")),
        ("constant.character", Some("hn")),
        ("keyword.operator", None),
        ("keyword", Some("hk")),
        ("storage", Some("hk")),
        ("entity.name.tag", Some("hk")),
        ("markup.heading", Some("hk")),
        ("entity.name.function", Some("hf")),
        ("support.function", Some("hf")),
        ("variable.function", Some("hf")),
        ("entity.other.attribute-name", Some("hf")),
        ("entity.name.type", Some("ht")),
        ("entity.name.class", Some("ht")),
        ("entity.name.struct", Some("ht")),
        ("entity.name.enum", Some("ht")),
        ("entity.name.trait", Some("ht")),
        ("entity.other.inherited-class", Some("ht")),
        ("support.type", Some("ht")),
        ("support.class", Some("ht")),
    ]
    .into_iter()
    .filter_map(|(s, c)| Scope::new(s).ok().map(|s| (s, c)))
    .collect()
});

/// Names readers and file extensions use that the built-in grammars know by another name.
const ALIASES: &[(&str, &str)] = &[
    ("shell", "bash"),
    ("console", "bash"),
    ("zsh", "bash"),
    ("ts", "js"),
    ("typescript", "js"),
    ("tsx", "js"),
    ("jsx", "js"),
    ("mjs", "js"),
    ("cjs", "js"),
    ("mts", "js"),
    ("cts", "js"),
    ("javascript", "js"),
    ("py3", "py"),
    ("python3", "py"),
    ("golang", "go"),
    ("c++", "cpp"),
    ("jsonc", "json"),
    ("json5", "json"),
    ("jsonl", "json"),
    ("yml", "yaml"),
    ("rs", "rust"),
];

/// Grammars shown plain: plain text, and prose formats whose grammars embed every other
/// language and cost about a hundred times more per byte than code (measured: 1 KB of Markdown
/// took 0.28 s).
const UNHIGHLIGHTED: &[&str] = &["Plain Text", "Markdown", "MultiMarkdown"];

/// A grammar the highlighter knows.
#[derive(Clone, Copy)]
pub struct Language(&'static SyntaxReference);

impl std::fmt::Debug for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.name)
    }
}

impl Language {
    /// The language a Markdown fence or a reader names (`rust`, `py`, `sh`, `ts` …); `None` for
    /// plain text and names no grammar knows. `diff` and `patch` are not languages here: see
    /// [`is_diff`].
    pub fn from_name(name: &str) -> Option<Self> {
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty() || matches!(name.as_str(), "text" | "txt" | "plain" | "plaintext") {
            return None;
        }
        let name = ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name.as_str(), |(_, to)| to);
        let set: &'static SyntaxSet = &SYNTAXES;
        set.find_syntax_by_token(name)
            .filter(|s| !UNHIGHLIGHTED.contains(&s.name.as_str()))
            .map(Language)
    }

    /// The language of a file, by its extension (or its whole name, as for `Makefile`).
    pub fn from_path(path: &str) -> Option<Self> {
        let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
        match file.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => Self::from_name(ext),
            _ => {
                let set: &'static SyntaxSet = &SYNTAXES;
                set.find_syntax_by_extension(file)
                    .filter(|s| !UNHIGHLIGHTED.contains(&s.name.as_str()))
                    .map(Language)
            }
        }
    }

    /// Shell commands.
    pub fn shell() -> Option<Self> {
        Self::from_name("bash")
    }
}

/// True when a Markdown fence names a diff.
pub fn is_diff(name: &str) -> bool {
    matches!(
        name.trim().to_ascii_lowercase().as_str(),
        "diff" | "patch" | "udiff"
    )
}

/// Highlighted text: HTML whose tags are only token spans, and where each source line ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlighted {
    html: String,
    /// Byte offset in `html` after each source line's newline (or the end).
    line_ends: Vec<usize>,
}

impl Highlighted {
    /// The HTML of source lines `from..to` (clamped).
    pub fn lines(&self, from: usize, to: usize) -> &str {
        let to = to.min(self.line_ends.len());
        if from >= to {
            return "";
        }
        let start = if from == 0 {
            0
        } else {
            self.line_ends[from - 1]
        };
        self.html.get(start..self.line_ends[to - 1]).unwrap_or("")
    }

    /// How many source lines it holds.
    pub fn line_count(&self) -> usize {
        self.line_ends.len()
    }

    /// All of it.
    pub fn as_str(&self) -> &str {
        &self.html
    }
}

/// What was done to a text, for the memo of a [`Highlighter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Work {
    Code,
    Numbered(ReadGutter),
    Diff,
}

/// What was highlighted: the work, the grammar's name, the text's length and its SHA-256.
type WorkKey = (Work, &'static str, usize, [u8; 32]);

/// The work, grammar and text length of a [`WorkKey`].
type Size = (Work, &'static str, usize);

type Memo = HashMap<WorkKey, Option<Arc<Highlighted>>>;

/// Highlights text for one page, remembering what it has done so the same text in the same
/// language (a file read twice, a command run again) is highlighted once.
///
/// Which texts are coloured depends on page order until the budget is spent; after that
/// every answer is the same whatever the order, so threads may share it. Before then, a turn
/// can still be rendered out of order by a highlighter [`ahead`](Self::ahead) of the page's,
/// which is then [`settle`](Self::settle)d in page order.
#[derive(Default)]
pub struct Highlighter {
    page: Arc<Page>,
    /// Set for a highlighter ahead of the page's.
    ahead: Option<Ahead>,
}

/// What the page's highlighter and those ahead of it share.
#[derive(Default)]
struct Page {
    /// Keyed by the work, the grammar's name and the text's length and SHA-256.
    done: Mutex<Memo>,
    /// The work, grammar and length of every text in `done`: once the budget is spent, a text
    /// of no size listed here is not hashed to be looked up.
    sizes: Mutex<HashSet<Size>>,
    /// Bytes highlighted so far on this page; `usize::MAX` once the budget is spent.
    spent: AtomicUsize,
}

/// What a highlighter ahead of the page's did: every text it highlighted that the page had
/// not, in order, with the bytes it took from the budget (assumed to cover them), and what it
/// made of them.
#[derive(Default)]
struct Ahead {
    calls: Mutex<Vec<(WorkKey, Option<usize>)>>,
    done: Mutex<Memo>,
}

fn locked<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Only ever holds finished entries: a panic elsewhere leaves it usable.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Highlighter {
    /// A highlighter with nothing remembered.
    pub fn new() -> Self {
        Self::default()
    }

    /// A highlighter for rendering a turn before the page's highlighter has reached it: it
    /// reads what the page has done, assumes the budget covers every text it highlights, and
    /// keeps what it does to itself until [`settle`](Self::settle) checks that assumption.
    pub fn ahead(&self) -> Self {
        Self {
            page: Arc::clone(&self.page),
            ahead: Some(Ahead::default()),
        }
    }

    /// True for a highlighter made by [`ahead`](Self::ahead).
    pub fn is_ahead(&self) -> bool {
        self.ahead.is_some()
    }

    /// Takes a highlighter ahead of this page's highlighter at its place in page order: true
    /// when the budget covers what it spent, given what the page has done by now, so that what
    /// it rendered is what this highlighter would have rendered there; its work is then the
    /// page's. False (nothing taken) when it is not: that turn must be rendered again with this
    /// highlighter.
    pub fn settle(&self, ahead: Highlighter) -> bool {
        let Some(Ahead { calls, done }) = ahead.ahead else {
            return false;
        };
        let mut spent = self.page.spent.load(Ordering::Relaxed);
        let mut memo = self.memo();
        for (key, cost) in locked(&calls).iter() {
            // Done by a turn settled before this one: the same answer, at no cost.
            if memo.contains_key(key) {
                continue;
            }
            if let Some(cost) = cost {
                spent = spent.saturating_add(*cost);
                if spent > MAX_PAGE_BYTES {
                    return false;
                }
            }
        }
        self.page.spent.store(spent, Ordering::Relaxed);
        let mut sizes = locked(&self.page.sizes);
        for (key, out) in std::mem::take(&mut *locked(&done)) {
            sizes.insert((key.0, key.1, key.2));
            memo.entry(key).or_insert(out);
        }
        true
    }

    /// `text` highlighted as `lang`; `None` when it is over the size caps or the grammar fails
    /// on it, in which case the caller shows it plain.
    pub fn code(&self, text: &str, lang: Language) -> Option<Arc<Highlighted>> {
        self.remember(Work::Code, Some(lang), text, || {
            (within_caps(text) && self.spend(text)).then(|| highlight(text, lang, |_| 0))?
        })
    }

    /// File contents as a reading tool returned them: the line-number gutter the adapter
    /// named for the tool is kept as plain text and the rest highlighted as `lang`.
    pub fn numbered(
        &self,
        text: &str,
        lang: Language,
        gutter: ReadGutter,
    ) -> Option<Arc<Highlighted>> {
        self.remember(Work::Numbered(gutter), Some(lang), text, || {
            (within_caps(text) && self.spend(text))
                .then(|| highlight(text, lang, |line| gutter.len(line)))?
        })
    }

    /// A unified diff: every line in a class (added, removed, hunk or file header) and the
    /// code in it highlighted by the language of the file it changes (the path in the diff's
    /// own `+++` header, else `lang`). Over the size caps, or in an unknown language, only the
    /// line classes are applied.
    pub fn diff(&self, text: &str, lang: Option<Language>) -> Arc<Highlighted> {
        // Tokens only when some language is known and the page's budget covers the text; the
        // line classes always.
        let run = || {
            let tokens =
                within_caps(text) && diff_language(text, lang).is_some() && self.spend(text);
            Some(diff(text, lang, tokens))
        };
        self.remember(Work::Diff, lang, text, run)
            .unwrap_or_else(|| Arc::new(diff(text, lang, false)))
    }

    fn remember(
        &self,
        work: Work,
        lang: Option<Language>,
        text: &str,
        run: impl FnOnce() -> Option<Highlighted>,
    ) -> Option<Arc<Highlighted>> {
        let name = lang.map_or("", |l| l.0.name.as_str());
        // Once the page's budget is spent, only a text coloured before is coloured: the memo
        // no longer grows, and is looked up only for a text of a size it holds.
        let spent = self.ahead.is_none() && self.is_spent();
        if spent && !locked(&self.page.sizes).contains(&(work, name, text.len())) {
            return run().map(Arc::new);
        }
        let key = (
            work,
            name,
            text.len(),
            Sha256::digest(text.as_bytes()).into(),
        );
        if let Some(done) = self.memo().get(&key) {
            return done.clone();
        }
        let Some(ahead) = &self.ahead else {
            let out = run().map(Arc::new);
            if !spent {
                locked(&self.page.sizes).insert((work, name, text.len()));
                self.memo().insert(key, out.clone());
            }
            return out;
        };
        if let Some(done) = locked(&ahead.done).get(&key) {
            return done.clone();
        }
        locked(&ahead.calls).push((key, None));
        let out = run().map(Arc::new);
        locked(&ahead.done).insert(key, out.clone());
        out
    }

    fn memo(&self) -> std::sync::MutexGuard<'_, Memo> {
        locked(&self.page.done)
    }

    /// Takes `text` from the page's budget; false when the budget cannot cover it, and from
    /// then on for every text. Work that is remembered spends once, however often the text
    /// appears. Ahead of the page, the cost is noted and assumed covered.
    fn spend(&self, text: &str) -> bool {
        if let Some(ahead) = &self.ahead {
            if let Some(last) = locked(&ahead.calls).last_mut() {
                last.1 = Some(text.len());
            }
            return true;
        }
        let spent = &self.page.spent;
        let total = spent.load(Ordering::Relaxed).saturating_add(text.len());
        if total > MAX_PAGE_BYTES {
            spent.store(usize::MAX, Ordering::Relaxed);
            return false;
        }
        spent.store(total, Ordering::Relaxed);
        true
    }

    /// Bytes the page's budget can still cover.
    pub fn left(&self) -> usize {
        MAX_PAGE_BYTES.saturating_sub(self.page.spent.load(Ordering::Relaxed))
    }

    /// True once a text did not fit the page's budget: nothing more will be coloured, and
    /// the answer for a text no longer depends on what came before it.
    pub fn is_spent(&self) -> bool {
        self.page.spent.load(Ordering::Relaxed) > MAX_PAGE_BYTES
    }
}

/// Escapes text for an HTML text node.
pub fn escape_into(out: &mut String, text: &str) {
    let mut rest = text;
    // Runs without a special character are copied whole.
    while let Some(i) = memchr::memchr3(b'&', b'<', b'>', rest.as_bytes()) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            _ => "&gt;",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

/// Text as HTML without highlighting, with its line ends known.
pub fn plain(text: &str) -> Highlighted {
    let mut html = String::with_capacity(text.len() + text.len() / 16);
    let mut line_ends = Vec::new();
    for line in text.split_inclusive('\n') {
        escape_into(&mut html, line);
        line_ends.push(html.len());
    }
    Highlighted { html, line_ends }
}

/// Plain text as [`SafeHtml`].
pub fn plain_html(text: &str) -> SafeHtml {
    let mut html = String::with_capacity(text.len() + text.len() / 16);
    escape_into(&mut html, text);
    SafeHtml::trusted(html)
}

impl From<&Highlighted> for SafeHtml {
    fn from(h: &Highlighted) -> Self {
        SafeHtml::trusted(h.html.clone())
    }
}

/// True when the text is small enough to highlight.
fn within_caps(text: &str) -> bool {
    text.len() <= MAX_BYTES && text.split('\n').all(|l| l.len() <= MAX_LINE_BYTES)
}

/// Highlights `text` line by line; `skip(line)` bytes at the start of each line stay plain and
/// are not seen by the grammar.
fn highlight(text: &str, lang: Language, skip: impl Fn(&str) -> usize) -> Option<Highlighted> {
    if !within_caps(text) {
        return None;
    }
    let mut lines = Lines::new(lang);
    let mut html = String::with_capacity(text.len() * 2);
    let mut line_ends = Vec::new();
    for line in text.split_inclusive('\n') {
        let cut = skip(line).min(line.len());
        let (plain_part, code) = line.split_at_checked(cut)?;
        escape_into(&mut html, plain_part);
        lines.push(code, &mut html)?;
        line_ends.push(html.len());
    }
    Some(Highlighted { html, line_ends })
}

/// A grammar's state across the lines of one text.
struct Lines {
    lang: Language,
    state: ParseState,
    stack: ScopeStack,
}

impl Lines {
    fn new(lang: Language) -> Self {
        Self {
            lang,
            state: ParseState::new(lang.0),
            stack: ScopeStack::new(),
        }
    }

    /// Starts again from the top of a file (a new diff hunk).
    fn reset(&mut self) {
        *self = Self::new(self.lang);
    }

    /// Appends one line (with or without its newline) as HTML; token spans are closed before
    /// the newline, so every line's HTML stands alone. `None` when the grammar fails.
    ///
    /// A line's HTML and the state after it depend only on the grammar's state before it and
    /// the line, so a line already seen in the same state (a file read again, the context
    /// lines of a diff, a line code repeats) is copied from [`SEEN`] instead of parsed again.
    fn push(&mut self, line: &str, out: &mut String) -> Option<()> {
        let key = line_key(self.lang, line);
        let hit = SEEN.with_borrow(|seen| {
            let entry = seen.get(&key)?.iter().find(|e| {
                e.line.as_ref() == line && e.state == self.state && e.stack == self.stack
            })?;
            out.push_str(&entry.html);
            Some((entry.state_after.clone(), entry.stack_after.clone()))
        });
        if let Some((state, stack)) = hit {
            self.state = state;
            self.stack = stack;
            return Some(());
        }
        let (state, stack) = (self.state.clone(), self.stack.clone());
        let start = out.len();
        self.parse(line, out)?;
        let entry = Seen {
            line: line.into(),
            state,
            stack,
            html: out.get(start..).unwrap_or_default().into(),
            state_after: self.state.clone(),
            stack_after: self.stack.clone(),
        };
        SEEN.with_borrow_mut(|seen| {
            if seen.len() >= MAX_SEEN {
                seen.clear();
            }
            seen.entry(key).or_default().push(entry);
        });
        Some(())
    }

    fn parse(&mut self, line: &str, out: &mut String) -> Option<()> {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let owned;
        // The grammars expect each line to end in a newline.
        let parsed: &str = if line.ends_with('\n') {
            line
        } else {
            owned = format!("{line}\n");
            &owned
        };
        let ops = self.state.parse_line(parsed, &SYNTAXES).ok()?;
        let mut open: Option<&'static str> = None;
        let mut at = 0;
        for (pos, op) in ops {
            let pos = pos.min(body.len());
            if pos > at {
                emit(out, body.get(at..pos)?, class_of(&self.stack), &mut open);
                at = pos;
            }
            self.stack.apply(&op).ok()?;
        }
        if at < body.len() {
            emit(out, body.get(at..)?, class_of(&self.stack), &mut open);
        }
        if open.is_some() {
            out.push_str("</span>");
        }
        out.push_str(&line[body.len()..]);
        Some(())
    }
}

/// A line parsed in a grammar state, with its HTML and the state after it.
struct Seen {
    line: Box<str>,
    state: ParseState,
    stack: ScopeStack,
    html: Box<str>,
    state_after: ParseState,
    stack_after: ScopeStack,
}

/// Distinct lines remembered per thread before the memo starts again (a few MiB at most).
const MAX_SEEN: usize = 16 * 1024;

thread_local! {
    /// The lines this thread has parsed, by grammar and line hash. What a line gives is the
    /// same wherever it was first seen, so the memo changes no output, only the time.
    static SEEN: RefCell<HashMap<(usize, u64), Vec<Seen>>> = RefCell::new(HashMap::new());
}

/// Lets go of the lines this thread remembers (`SEEN`), once its page is done. A batch
/// renders one session after another on each thread, and the lines of those before would
/// otherwise stay until the memo fills (up to 16 Ki lines a thread, with their grammar
/// states: 35 MiB of a 40-session batch on two threads).
pub fn forget_seen() {
    SEEN.with_borrow_mut(|seen| *seen = HashMap::new());
}

fn line_key(lang: Language, line: &str) -> (usize, u64) {
    let mut h = std::hash::DefaultHasher::new();
    line.hash(&mut h);
    (std::ptr::from_ref(lang.0) as usize, h.finish())
}

/// Appends a run of text in a token class, reusing the open span when the class is the same
/// and leaving whitespace in whatever span is open.
fn emit(
    out: &mut String,
    text: &str,
    class: Option<&'static str>,
    open: &mut Option<&'static str>,
) {
    if text.is_empty() {
        return;
    }
    if class != *open && !text.trim().is_empty() {
        if open.is_some() {
            out.push_str("</span>");
        }
        if let Some(c) = class {
            out.push_str("<span class=\"");
            out.push_str(c);
            out.push_str("\">");
        }
        *open = class;
    }
    escape_into(out, text);
}

/// The token class of the innermost scope that has one.
fn class_of(stack: &ScopeStack) -> Option<&'static str> {
    for scope in stack.as_slice().iter().rev() {
        if let Some((_, class)) = RULES.iter().find(|(p, _)| p.is_prefix_of(*scope)) {
            if class.is_some() {
                return *class;
            }
        }
    }
    None
}

/// How a diff line is shown.
#[derive(Clone, Copy, PartialEq, Eq)]
enum DiffLine {
    File,
    Hunk,
    Add,
    Del,
    Context,
    Other,
}

fn classify(lines: &[&str], i: usize) -> DiffLine {
    let line = lines[i];
    let next = lines.get(i + 1).copied().unwrap_or("");
    let prev = if i > 0 { lines[i - 1] } else { "" };
    if line.starts_with("@@") {
        DiffLine::Hunk
    } else if (line.starts_with("--- ") && next.starts_with("+++ "))
        || (line.starts_with("+++ ") && prev.starts_with("--- "))
        || line.starts_with("diff --git ")
    {
        DiffLine::File
    } else if line.starts_with('+') {
        DiffLine::Add
    } else if line.starts_with('-') {
        DiffLine::Del
    } else if line.starts_with(' ') || line.trim_end_matches(['\n', '\r']).is_empty() {
        DiffLine::Context
    } else {
        DiffLine::Other
    }
}

/// The path a `+++ ` header names, without a `b/` prefix or a trailing timestamp.
fn header_path(line: &str) -> &str {
    let path = line.trim_start_matches("+++ ").trim_end();
    let path = path.split('\t').next().unwrap_or(path);
    path.strip_prefix("b/").unwrap_or(path)
}

/// The language a diff's code is read in: the first `+++` header's file, else `lang`.
fn diff_language(text: &str, lang: Option<Language>) -> Option<Language> {
    text.lines()
        .filter(|l| l.starts_with("+++ "))
        .find_map(|l| Language::from_path(header_path(l)))
        .or(lang)
}

/// A diff as HTML: line classes always, code tokens when `tokens` is true.
fn diff(text: &str, lang: Option<Language>, tokens: bool) -> Highlighted {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Removed lines continue the old file's state, added lines the new file's; context lines
    // belong to both.
    let mut old: Option<Lines> = lang.filter(|_| tokens).map(Lines::new);
    let mut new: Option<Lines> = lang.filter(|_| tokens).map(Lines::new);
    let mut html = String::with_capacity(text.len() * 2);
    let mut line_ends = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let kind = classify(&lines, i);
        if tokens && kind == DiffLine::File && line.starts_with("+++ ") {
            if let Some(l) = Language::from_path(header_path(line)).or(lang) {
                old = Some(Lines::new(l));
                new = Some(Lines::new(l));
            }
        }
        if kind == DiffLine::Hunk {
            old.iter_mut().chain(new.iter_mut()).for_each(Lines::reset);
        }
        let class = match kind {
            DiffLine::File => Some("file"),
            DiffLine::Hunk => Some("hunk"),
            DiffLine::Add => Some("add"),
            DiffLine::Del => Some("del"),
            DiffLine::Context | DiffLine::Other => None,
        };
        let body = line.strip_suffix('\n').unwrap_or(line);
        if let Some(c) = class {
            html.push_str("<span class=\"");
            html.push_str(c);
            html.push_str("\">");
        }
        let (sign, code) = body.split_at(body.chars().next().map_or(0, char::len_utf8));
        let start = html.len();
        let coloured = match kind {
            DiffLine::Add | DiffLine::Del | DiffLine::Context if !body.is_empty() => {
                let mut piece = String::new();
                escape_into(&mut piece, sign);
                let ok = match kind {
                    DiffLine::Add => new.as_mut().and_then(|n| n.push(code, &mut piece)),
                    DiffLine::Del => old.as_mut().and_then(|o| o.push(code, &mut piece)),
                    _ => {
                        // Advance the old side silently; show the new side's tokens.
                        let mut scratch = String::new();
                        if let Some(o) = old.as_mut() {
                            if o.push(code, &mut scratch).is_none() {
                                old = None;
                            }
                        }
                        new.as_mut().and_then(|n| n.push(code, &mut piece))
                    }
                };
                match ok {
                    Some(()) => {
                        html.push_str(&piece);
                        true
                    }
                    None => false,
                }
            }
            _ => false,
        };
        if !coloured {
            html.truncate(start);
            escape_into(&mut html, body);
        }
        if class.is_some() {
            html.push_str("</span>");
        }
        html.push_str(&line[body.len()..]);
        line_ends.push(html.len());
    }
    Highlighted { html, line_ends }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn escaping_replaces_exactly_the_three_markup_characters(text in "\\PC*") {
            let mut out = String::new();
            escape_into(&mut out, &text);
            let expected: String = text
                .chars()
                .map(|c| match c {
                    '&' => "&amp;".to_owned(),
                    '<' => "&lt;".to_owned(),
                    '>' => "&gt;".to_owned(),
                    c => c.to_string(),
                })
                .collect();
            proptest::prop_assert_eq!(out, expected);
        }
    }

    /// Texts of several sizes (a fifth to a half of the page's budget) and a diff.
    fn pool() -> Vec<String> {
        [7, 9, 11, 13, 15, 2]
            .iter()
            .enumerate()
            .map(|(i, kib)| {
                let line = format!("let v{i} = {i} + 1; // {}\n", "x".repeat(20));
                line.repeat(kib * 1024 / line.len())
            })
            .collect()
    }

    /// What a highlighter gives for one text: code in even calls, a diff of it in odd ones.
    fn call(hl: &Highlighter, text: &str, i: usize) -> String {
        if i % 2 == 0 {
            hl.code(text, lang("rust"))
                .map_or_else(|| "plain".to_owned(), |h| h.as_str().to_owned())
        } else {
            let diff = format!("--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n+{text}");
            hl.diff(&diff, None).as_str().to_owned()
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
        /// Turns rendered ahead of the page (out of order, a few at a time) and settled in
        /// order, the first the budget does not cover and every one after it rendered again in
        /// order, read the same as turns rendered one after another.
        #[test]
        fn turns_rendered_ahead_and_settled_read_as_turns_rendered_in_order(
            turns in proptest::collection::vec(
                proptest::collection::vec((0..6usize, 0..2usize), 0..4),
                1..10,
            ),
            at_once in 1..5usize,
        ) {
            let pool = pool();
            let render = |hl: &Highlighter, turn: &[(usize, usize)]| -> Vec<String> {
                turn.iter().map(|&(t, i)| call(hl, &pool[t], i)).collect()
            };
            let page = Highlighter::new();
            let in_order: Vec<Vec<String>> = turns.iter().map(|t| render(&page, t)).collect();

            let page = Highlighter::new();
            let mut settled = Vec::new();
            'ahead: while !page.is_spent() && settled.len() < turns.len() {
                let some = &turns[settled.len()..turns.len().min(settled.len() + at_once)];
                let mut ahead: Vec<(Highlighter, Vec<String>)> = some
                    .iter()
                    .rev()
                    .map(|t| {
                        let hl = page.ahead();
                        let out = render(&hl, t);
                        (hl, out)
                    })
                    .collect();
                ahead.reverse();
                for (hl, out) in ahead {
                    if !page.settle(hl) {
                        break 'ahead;
                    }
                    settled.push(out);
                }
            }
            for t in &turns[settled.len()..] {
                settled.push(render(&page, t));
            }
            proptest::prop_assert!(settled == in_order);
        }
    }

    /// The text of highlighted HTML: tags removed, entities decoded.
    fn text_of(html: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                _ if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    }

    fn lang(name: &str) -> Language {
        Language::from_name(name).expect("a built-in grammar")
    }

    #[test]
    fn code_is_coloured_and_its_text_unchanged() {
        let src = "fn main() {\n    // hi\n    let s = \"x\";\n    let n = 42;\n}\n";
        let h = Highlighter::new()
            .code(src, lang("rust"))
            .expect("highlighted");
        let html = h.as_str();
        // Whitespace stays in the open span, so spans are fewer.
        assert!(
            html.contains("<span class=\"hk\">fn </span><span class=\"hf\">main</span>"),
            "{html}"
        );
        assert!(html.contains("<span class=\"hc\">// hi</span>"), "{html}");
        assert!(html.contains("<span class=\"hs\">\"x\"</span>"), "{html}");
        assert!(html.contains("<span class=\"hn\">42</span>"), "{html}");
        assert_eq!(text_of(html), src);
        assert_eq!(h.line_count(), 5);
    }

    #[test]
    fn hostile_code_is_escaped_and_stays_text() {
        let src = "x = \"</span><script>alert(1)</script>\" # <b>&amp;\n</code></pre><img src=x onerror=alert(1)>";
        for l in ["py", "bash", "js", "html"] {
            let h = Highlighter::new().code(src, lang(l)).expect("highlighted");
            let html = h.as_str();
            assert!(!html.contains("<script"), "{l}: {html}");
            assert!(!html.contains("</span><script"), "{l}: {html}");
            assert!(!html.contains("<img"), "{l}: {html}");
            assert!(!html.contains("</code>"), "{l}: {html}");
            assert_eq!(text_of(html), src, "{l}");
            // Only our spans are tags.
            let tags: Vec<&str> = html.match_indices('<').map(|(i, _)| &html[i..]).collect();
            for t in tags {
                assert!(
                    t.starts_with("<span class=\"h") || t.starts_with("</span>"),
                    "{l}: {t}"
                );
            }
        }
    }

    #[test]
    fn unknown_and_plain_languages_are_not_highlighted() {
        assert!(Language::from_name("no-such-language").is_none());
        assert!(Language::from_name("text").is_none());
        assert!(Language::from_name("").is_none());
        assert!(Language::from_path("notes.unknownext").is_none());
        assert!(Language::from_path("/a/b.rs").is_some());
        assert!(Language::from_path("src/app.tsx").is_some());
        assert!(Language::from_path("Makefile").is_some());
        assert!(Language::from_name("sh").is_some());
        assert!(Language::from_name("Python").is_some());
    }

    #[test]
    fn text_over_the_size_caps_stays_plain() {
        let hl = Highlighter::new();
        let big = "let x = 1;\n".repeat(MAX_BYTES / 11 + 1);
        assert!(big.len() > MAX_BYTES);
        assert!(hl.code(&big, lang("rust")).is_none());
        let long_line = format!("let x = \"{}\";\n", "a".repeat(MAX_LINE_BYTES));
        assert!(hl.code(&long_line, lang("rust")).is_none());
        // Diffs over the caps keep their line classes but get no tokens.
        let patch = format!(
            "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-{}\n+let y = 2;\n",
            "a".repeat(MAX_LINE_BYTES)
        );
        let d = hl.diff(&patch, None);
        assert!(
            d.as_str()
                .contains("<span class=\"add\">+let y = 2;</span>"),
            "{}",
            d.as_str()
        );
        assert_eq!(text_of(d.as_str()), patch);
    }

    #[test]
    fn a_diff_line_may_start_with_any_character() {
        let patch = "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n→ moved\n\u{a0}kept\n+é\n";
        let d = Highlighter::new().diff(patch, None);
        assert_eq!(text_of(d.as_str()), patch);
        assert!(
            d.as_str().contains("<span class=\"add\">+é</span>"),
            "{}",
            d.as_str()
        );
    }

    #[test]
    fn diff_lines_get_line_classes_and_code_tokens() {
        let patch = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n fn a() {}\n-let x = 1;\n+let x = \"</span><script>\";\n\\ No newline at end of file\n";
        let d = Highlighter::new().diff(patch, None);
        let html = d.as_str();
        assert!(html.starts_with("<span class=\"file\">--- a/src/lib.rs</span>\n<span class=\"file\">+++ b/src/lib.rs</span>\n<span class=\"hunk\">@@ -1,3 +1,3 @@</span>\n"), "{html}");
        assert!(
            html.contains("<span class=\"del\">-<span class=\"hk\">let</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"add\">+<span class=\"hk\">let</span>"),
            "{html}"
        );
        assert!(html.contains("\n <span class=\"hk\">fn </span>"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert_eq!(text_of(html), patch);
        assert_eq!(d.line_count(), 7);
        assert_eq!(
            d.lines(3, 4),
            " <span class=\"hk\">fn </span><span class=\"hf\">a</span>() {}\n"
        );
    }

    #[test]
    fn a_removed_sql_comment_is_not_a_file_header() {
        let patch = "@@ -1,2 +1,2 @@\n--- old comment\n+-- new comment\n";
        let d = Highlighter::new().diff(patch, Language::from_name("sql"));
        assert!(
            d.as_str().contains("<span class=\"del\">-"),
            "{}",
            d.as_str()
        );
        assert!(!d.as_str().contains("class=\"file\""), "{}", d.as_str());
    }

    #[test]
    fn numbered_file_contents_keep_their_gutter_plain() {
        let src = "     1\tdef total(items):\n     2\t    return 0  # none\n";
        let h = Highlighter::new()
            .numbered(src, lang("py"), ReadGutter::Tab)
            .expect("highlighted");
        let html = h.as_str();
        assert!(
            html.starts_with("     1\t<span class=\"hk\">def </span>"),
            "{html}"
        );
        assert!(html.contains("<span class=\"hc\"># none</span>"), "{html}");
        assert_eq!(text_of(html), src);
        // Without the gutter the adapter names, the numbers are code like the rest.
        let h = Highlighter::new()
            .numbered(src, lang("py"), ReadGutter::None)
            .expect("highlighted");
        assert!(
            !h.as_str().starts_with("     1\t<span class=\"hk\">"),
            "{}",
            h.as_str()
        );
    }

    #[test]
    fn the_same_text_is_highlighted_once() {
        let hl = Highlighter::new();
        let a = hl.code("echo hi\n", lang("bash")).expect("highlighted");
        let b = hl.code("echo hi\n", lang("bash")).expect("highlighted");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(hl.memo().len(), 1);
        let c = hl.code("echo hi\n", lang("py")).expect("highlighted");
        assert!(!Arc::ptr_eq(&a, &c));
    }

    #[test]
    fn a_line_seen_before_in_another_state_is_highlighted_in_its_own() {
        let hl = Highlighter::new();
        let code = hl.code("x = 1\n", lang("py")).expect("highlighted");
        assert!(
            code.as_str().contains("<span class=\"hn\">1</span>"),
            "{}",
            code.as_str()
        );
        // The same line inside a string is string, not a number, in a text and in a diff.
        let quoted = hl
            .code("s = \"\"\"\nx = 1\n\"\"\"\n", lang("py"))
            .expect("highlighted");
        assert!(
            !quoted.as_str().contains("class=\"hn\""),
            "{}",
            quoted.as_str()
        );
        assert_eq!(quoted.lines(1, 2), "<span class=\"hs\">x = 1</span>\n");
        // And the same line in the same state reads as it did the first time.
        let again = Highlighter::new()
            .code("y = 2\nx = 1\n", lang("py"))
            .expect("highlighted");
        assert_eq!(again.lines(1, 2), code.as_str());
    }

    #[test]
    fn a_page_stops_highlighting_when_its_budget_is_spent() {
        let hl = Highlighter::new();
        let chunk = "let x = 1;\n".repeat(MAX_BYTES / 12);
        let mut coloured = 0;
        for i in 0..(MAX_PAGE_BYTES / chunk.len() + 3) {
            if hl.code(&format!("{chunk}// {i}\n"), lang("rust")).is_some() {
                coloured += 1;
            }
        }
        assert!(coloured > 0 && coloured <= MAX_PAGE_BYTES / chunk.len());
        // Once a text did not fit, the page's highlighting is over, even for a short text
        // the budget could still cover, so what follows reads the same in any order.
        assert!(hl.is_spent());
        assert!(hl.code("let y = 2;\n", lang("rust")).is_none());
        // Text highlighted before that is still remembered.
        assert!(hl.code(&format!("{chunk}// 0\n"), lang("rust")).is_some());
        // Diffs past the budget keep their line classes, without tokens.
        let d = hl.diff(
            "@@ -1 +1 @@\n-let a = 1;\n+let b = 1;\n",
            lang("rust").into(),
        );
        assert!(
            d.as_str()
                .contains("<span class=\"add\">+let b = 1;</span>"),
            "{}",
            d.as_str()
        );
        // Also when the diff's own header names a language.
        let d = hl.diff(
            "--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-let a = 1;\n+let b = 2;\n",
            None,
        );
        assert!(
            d.as_str()
                .contains("<span class=\"add\">+let b = 2;</span>"),
            "{}",
            d.as_str()
        );
    }

    #[test]
    fn a_last_line_without_newline_is_kept_as_is() {
        let h = Highlighter::new()
            .code("ls -la | grep x", lang("bash"))
            .expect("highlighted");
        assert_eq!(text_of(h.as_str()), "ls -la | grep x");
        assert!(!h.as_str().ends_with('\n'));
    }
}

//! The secret rule engine: rules from the embedded files under `rules/` (tracebook's own and a
//! curated, attributed upstream set), one `aho-corasick` pass over each text to pick the rules
//! whose keywords occur, then each picked rule's regex with its entropy and character-class
//! checks. Every rule carries positive and negative examples that run as tests.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::{Regex, RegexBuilder};
use serde::Deserialize;
use std::sync::{LazyLock, OnceLock};

/// tracebook's own rules: generic key-bound values, headers, URLs, PEM blocks, provider keys.
const OWN: &str = include_str!("../../rules/secrets.yaml");
/// Rules seeded from Titus (Apache-2.0, see `rules/NOTICE-titus.txt`).
const UPSTREAM: &str = include_str!("../../rules/upstream.yaml");

/// One rule as written in a rule file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Shown in the placeholder: `«redacted:<id>»`.
    pub id: String,
    /// Where the rule comes from, for attribution.
    #[serde(default)]
    pub source: Option<String>,
    /// What tracebook changed in an upstream rule, and why.
    #[serde(default)]
    pub note: Option<String>,
    /// A `regex` crate pattern.
    pub pattern: String,
    /// Capture groups that hold the secret, by name or number (each that takes part in a
    /// match is redacted); none: group 1 or the whole match.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Lowercase strings one of which every match contains; none: the rule always runs.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// For a rule without keywords: a pattern every match of the rule contains a match of.
    /// The rule's own regex then runs only near the anchor's matches (as far from them as the
    /// longest possible match reaches), which finds exactly what a search of the whole text
    /// finds. Both patterns must have a longest match.
    #[serde(default)]
    pub anchor: Option<String>,
    /// Minimum Shannon entropy (bits per character) of the secret.
    #[serde(default)]
    pub min_entropy: Option<f64>,
    /// Character-class requirements on the secret.
    #[serde(default)]
    pub requires: Requires,
    /// For a rule whose pattern names the key beside the value (a group `key`): a pattern that
    /// marks a key as naming something other than a secret (`API_KEY_HEADER`, `token_url`,
    /// `password_length`). A find whose key matches it is dropped, and so is a value that
    /// repeats the key or its last word, which is code (`this.apiKey = apiKey`), or a
    /// camelCase name holding that word (`env.API_KEY = apiKeyValue`).
    #[serde(default)]
    pub key_not: Option<String>,
    /// The rule finds a value by the key or header beside it, not by its own shape: it does
    /// not run in the backstop over rendered output.
    #[serde(default)]
    pub context: bool,
    /// Texts the rule must find a secret in.
    #[serde(default)]
    pub examples: Vec<String>,
    /// Texts the rule must leave alone.
    #[serde(default)]
    pub negative_examples: Vec<String>,
}

/// Character-class checks on a secret (Titus's `pattern_requirements`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    #[serde(default)]
    min_digits: usize,
    #[serde(default)]
    min_uppercase: usize,
    #[serde(default)]
    min_lowercase: usize,
    #[serde(default)]
    min_special_chars: usize,
    #[serde(default)]
    special_chars: Option<String>,
    #[serde(default)]
    ignore_if_contains: Vec<String>,
}

/// A rule with its regex, compiled the first time one of its keywords occurs.
pub struct Rule {
    /// The rule as written.
    pub spec: RuleSpec,
    regex: OnceLock<Option<Regex>>,
    near: OnceLock<Option<Near>>,
    window: OnceLock<Option<Window>>,
    shortest: OnceLock<usize>,
    key_not: OnceLock<Option<Regex>>,
}

/// What a rule selected by its keywords runs when every match of its pattern holds one of its
/// keywords and has a longest length: its regex, searched only as far around the keywords'
/// occurrences as a match reaches (see [`Engine::find`]).
struct Window {
    rule: regex_automata::meta::Regex,
    reach: usize,
}

/// What an anchored rule runs: the anchor's regex, the rule's regex for searching a part of a
/// text with the rest of it as context, and how far around an anchor's match a match of the
/// rule can reach.
struct Near {
    anchor: Regex,
    rule: regex_automata::meta::Regex,
    reach: usize,
}

impl Rule {
    /// The compiled pattern, or `None` when it does not compile (a test keeps that from
    /// shipping).
    pub fn regex(&self) -> Option<&Regex> {
        self.regex.get_or_init(|| self.build().ok()).as_ref()
    }

    /// Why the pattern (or its anchor, or its `key_not`) does not compile, if it does not.
    pub fn compile_error(&self) -> Option<String> {
        if let Err(e) = self.build() {
            return Some(e.to_string());
        }
        if let Some(Err(e)) = self.spec.key_not.as_deref().map(Regex::new) {
            return Some(format!("key_not: {e}"));
        }
        self.spec
            .anchor
            .as_ref()
            .and_then(|_| self.build_near().err())
    }

    /// The fewest bytes a match of the pattern can take: a shorter text holds none, and most
    /// of the strings a session is made of (ids, names, short commands) are shorter than most
    /// secrets.
    fn shortest(&self) -> usize {
        *self.shortest.get_or_init(|| {
            regex_syntax::parse(&ascii_word_boundaries(&self.spec.pattern))
                .ok()
                .and_then(|hir| hir.properties().minimum_len())
                .unwrap_or(0)
        })
    }

    /// Whether the key beside a found value says the value is not a secret.
    fn key_rejects(&self, key: &str, secret: &str) -> bool {
        let last = key
            .trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .rsplit(['.', '_', '-', '>', ':', '['])
            .next()
            .unwrap_or(key);
        let bare = secret.trim_matches(['\'', '"', '`', ';', ',']);
        if !last.is_empty() && (bare.eq_ignore_ascii_case(last) || bare.eq_ignore_ascii_case(key)) {
            return true;
        }
        // A camelCase name holding the key's word is the variable that carries the secret
        // (`env.API_KEY = apiKeyValue`, `password: userPassword`).
        let camel = bare.starts_with(|c: char| c.is_ascii_lowercase())
            && bare.contains(|c: char| c.is_ascii_uppercase())
            && bare.chars().all(|c| c.is_ascii_alphabetic());
        if camel
            && last.len() >= 3
            && bare
                .to_ascii_lowercase()
                .contains(&last.to_ascii_lowercase())
        {
            return true;
        }
        self.key_not
            .get_or_init(|| {
                self.spec
                    .key_not
                    .as_deref()
                    .and_then(|p| Regex::new(p).ok())
            })
            .as_ref()
            .is_some_and(|re| re.is_match(key))
    }

    fn near(&self) -> Option<&Near> {
        self.near.get_or_init(|| self.build_near().ok()).as_ref()
    }

    fn build_near(&self) -> Result<Near, String> {
        let Some(anchor) = &self.spec.anchor else {
            return Err("no anchor".to_owned());
        };
        let longest = |pattern: &str| -> Result<usize, String> {
            regex_syntax::parse(pattern)
                .map_err(|e| e.to_string())?
                .properties()
                .maximum_len()
                .ok_or_else(|| format!("`{pattern}` has no longest match"))
        };
        let pattern = ascii_word_boundaries(&self.spec.pattern);
        let anchor = ascii_word_boundaries(anchor);
        let reach = longest(&pattern)? + longest(&anchor)?;
        let rule = meta_regex(&pattern)?;
        let anchor = RegexBuilder::new(&anchor)
            .size_limit(1 << 24)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Near {
            anchor,
            rule,
            reach,
        })
    }

    /// The rule's window, when its keywords bound where its matches lie: every match holds
    /// one of `keywords` (checked on the parsed pattern by [`holds_one_of`]) and no match is
    /// longer than a fixed length.
    fn window(&self, keywords: &[String]) -> Option<&Window> {
        self.window
            .get_or_init(|| {
                let pattern = ascii_word_boundaries(&self.spec.pattern);
                let hir = regex_syntax::parse(&pattern).ok()?;
                let longest = hir.properties().maximum_len()?;
                if keywords.is_empty() || !holds_one_of(&hir, keywords) {
                    return None;
                }
                let reach = longest + keywords.iter().map(String::len).max().unwrap_or(0);
                Some(Window {
                    rule: meta_regex(&pattern).ok()?,
                    reach,
                })
            })
            .as_ref()
    }

    fn build(&self) -> Result<Regex, regex::Error> {
        RegexBuilder::new(&ascii_word_boundaries(&self.spec.pattern))
            .size_limit(1 << 24)
            .build()
    }
}

/// Whether every string `hir` matches holds one of `keywords` (lowercase), matched as the
/// keyword search matches them: ASCII letters in either case. Conservative: `false` when the
/// pattern's shape does not show it. The Kelvin sign and the long s, which a case-insensitive
/// pattern folds to `k` and `s`, count as those letters here; [`Engine::find`] searches a
/// text holding either whole.
fn holds_one_of(hir: &regex_syntax::hir::Hir, keywords: &[String]) -> bool {
    let has = |s: &[u8]| {
        keywords
            .iter()
            .any(|k| memchr::memmem::find(s, k.as_bytes()).is_some())
    };
    holds(hir, &has)
}

/// Strings a pattern can match, past which [`finite`] gives up.
const FINITE: usize = 256;

fn holds(hir: &regex_syntax::hir::Hir, has: &dyn Fn(&[u8]) -> bool) -> bool {
    use regex_syntax::hir::HirKind;
    if finite(hir).is_some_and(|all| all.iter().all(|s| has(s))) {
        return true;
    }
    match hir.kind() {
        HirKind::Capture(c) => holds(&c.sub, has),
        HirKind::Repetition(r) => r.min >= 1 && holds(&r.sub, has),
        HirKind::Alternation(branches) => branches.iter().all(|b| holds(b, has)),
        HirKind::Concat(parts) => {
            if parts.iter().any(|p| holds(p, has)) {
                return true;
            }
            // A keyword can run across parts (`api`, `[_-]?`, `key`): each run of parts that
            // match finitely many strings is tried as one.
            let mut run: Option<Vec<Vec<u8>>> = Some(vec![Vec::new()]);
            for part in parts {
                run = match (run, finite(part)) {
                    (Some(acc), Some(next)) => join(&acc, &next).or(Some(next)),
                    (_, next) => next,
                };
                if run.as_ref().is_some_and(|all| all.iter().all(|s| has(s))) {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

/// Every string `hir` matches, lowercased (ASCII letters; the Kelvin sign and the long s as
/// `k` and `s`), when there are at most [`FINITE`] of them.
fn finite(hir: &regex_syntax::hir::Hir) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::{Class, HirKind};
    let fold = |c: char| match c {
        '\u{212a}' => 'k',
        '\u{17f}' => 's',
        c => c.to_ascii_lowercase(),
    };
    let mut out: Vec<Vec<u8>> = match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => vec![Vec::new()],
        HirKind::Literal(l) => vec![
            std::str::from_utf8(&l.0)
                .ok()?
                .chars()
                .map(fold)
                .collect::<String>()
                .into_bytes(),
        ],
        HirKind::Class(Class::Unicode(c)) => {
            let mut all = Vec::new();
            for r in c.ranges() {
                if (r.end() as u32 - r.start() as u32) as usize + all.len() >= 16 {
                    return None;
                }
                for c in r.start()..=r.end() {
                    all.push(fold(c).to_string().into_bytes());
                }
            }
            all
        }
        HirKind::Class(Class::Bytes(c)) => {
            let mut all = Vec::new();
            for r in c.ranges() {
                if (r.end() - r.start()) as usize + all.len() >= 16 {
                    return None;
                }
                for b in r.start()..=r.end() {
                    all.push(vec![b.to_ascii_lowercase()]);
                }
            }
            all
        }
        HirKind::Capture(c) => finite(&c.sub)?,
        HirKind::Concat(parts) => {
            let mut acc = vec![Vec::new()];
            for p in parts {
                acc = join(&acc, &finite(p)?)?;
            }
            acc
        }
        HirKind::Alternation(branches) => {
            let mut all = Vec::new();
            for b in branches {
                all.extend(finite(b)?);
                if all.len() > FINITE {
                    return None;
                }
            }
            all
        }
        HirKind::Repetition(r) => {
            let max = r.max?;
            if max > 8 {
                return None;
            }
            let one = finite(&r.sub)?;
            let mut all = Vec::new();
            let mut acc = vec![Vec::new()];
            for n in 0..=max {
                if n >= r.min {
                    all.extend(acc.iter().cloned());
                }
                if n < max {
                    acc = join(&acc, &one)?;
                }
            }
            all
        }
    };
    out.sort_unstable();
    out.dedup();
    (out.len() <= FINITE).then_some(out)
}

/// Every string of `a` followed by every string of `b`, when there are at most [`FINITE`].
fn join(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len().saturating_mul(b.len()) > FINITE {
        return None;
    }
    Some(
        a.iter()
            .flat_map(|x| b.iter().map(move |y| [x.as_slice(), y].concat()))
            .collect(),
    )
}

/// A pattern's regex for searching part of a text with the rest of it as context.
fn meta_regex(pattern: &str) -> Result<regex_automata::meta::Regex, String> {
    regex_automata::meta::Builder::new()
        .configure(regex_automata::meta::Config::new().nfa_size_limit(Some(1 << 24)))
        .build(pattern)
        .map_err(|e| e.to_string())
}

/// The pattern in the `regex` crate's dialect: PCRE-style `(?# comment)` groups, which
/// upstream rule sets use, are dropped, and every `\b` and `\B` is made ASCII-only (a Unicode
/// word boundary makes the regex engine fall back to its slowest path on non-ASCII text, and
/// secrets are ASCII).
fn ascii_word_boundaries(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '(' && chars.clone().take(2).eq(['?', '#']) {
            for skipped in chars.by_ref() {
                if skipped == ')' {
                    break;
                }
            }
            continue;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some(b @ ('b' | 'B')) => {
                out.push_str("(?-u:\\");
                out.push(b);
                out.push(')');
            }
            Some(next) => {
                out.push(c);
                out.push(next);
            }
            None => out.push(c),
        }
    }
    out
}

/// For a rule written without keywords or an anchor: the strings one of which every match of
/// its pattern starts with, when there are few and none is shorter than two bytes, to select
/// it as keywords do (none: the rule runs over every text, as written). The pattern's own
/// literal prefixes, so a text the rule finds anything in always holds one: `AKIA` and its
/// kin for an AWS key id, `ghu_` and `ghs_` for a GitHub app token.
fn prefixes(pattern: &str) -> Vec<String> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let Ok(hir) = regex_syntax::parse(&ascii_word_boundaries(pattern)) else {
        return Vec::new();
    };
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let Some(literals) = seq.literals() else {
        return Vec::new();
    };
    if literals.is_empty() || literals.len() > 64 || literals.iter().any(|l| l.len() < 2) {
        return Vec::new();
    }
    // Keywords are matched as text: a prefix cut inside a character is cut back to its last
    // whole one (still a prefix of every match).
    let mut out = Vec::new();
    for l in literals {
        let bytes = l.as_bytes();
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t.to_owned(),
            Err(e) => String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
        };
        if text.len() < 2 {
            return Vec::new();
        }
        out.push(text);
    }
    out
}

/// A secret found in a text: a byte range and the rule that found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Find {
    /// Start byte.
    pub start: usize,
    /// End byte (exclusive).
    pub end: usize,
    /// Index of the rule in [`Engine::rules`].
    pub rule: usize,
}

/// All rules and the keyword prefilter.
pub struct Engine {
    rules: Vec<Rule>,
    keywords: Option<AhoCorasick>,
    /// For each keyword pattern, the rules it selects.
    keyword_rules: Vec<Vec<usize>>,
    /// For each rule, the keyword patterns that select it, and those keywords.
    rule_keywords: Vec<(Vec<usize>, Vec<String>)>,
    /// Rules without keywords: they always run.
    always: Vec<usize>,
}

/// The built-in engine.
pub static ENGINE: LazyLock<Engine> = LazyLock::new(|| {
    let mut specs = Vec::new();
    for text in [OWN, UPSTREAM] {
        // The rule files are fixed at build time; a test checks that both parse.
        if let Ok(mut list) = serde_yaml_ng::from_str::<Vec<RuleSpec>>(text) {
            specs.append(&mut list);
        }
    }
    Engine::new(specs)
});

/// Parses a rule file (for tests and tools that check rule files).
pub fn parse(text: &str) -> Result<Vec<RuleSpec>, String> {
    serde_yaml_ng::from_str(text).map_err(|e| e.to_string())
}

/// The text of the built-in rule files, tracebook's own first.
pub fn builtin_files() -> [(&'static str, &'static str); 2] {
    [
        ("rules/secrets.yaml", OWN),
        ("rules/upstream.yaml", UPSTREAM),
    ]
}

impl Engine {
    /// Builds the prefilter for a list of rules.
    pub fn new(specs: Vec<RuleSpec>) -> Self {
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut rule_keywords = Vec::with_capacity(specs.len());
        let mut always = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let derived;
            let keywords = if spec.keywords.is_empty() && spec.anchor.is_none() {
                derived = prefixes(&spec.pattern);
                &derived
            } else {
                &spec.keywords
            };
            if keywords.is_empty() {
                always.push(i);
            }
            let mut own = (Vec::new(), Vec::new());
            for k in keywords {
                let k = k.to_ascii_lowercase();
                let p = match words.iter().position(|w| *w == k) {
                    Some(p) => {
                        keyword_rules[p].push(i);
                        p
                    }
                    None => {
                        words.push(k.clone());
                        keyword_rules.push(vec![i]);
                        words.len() - 1
                    }
                };
                own.0.push(p);
                own.1.push(k);
            }
            rule_keywords.push(own);
        }
        // A full DFA: the overlapping search that picks rules runs over every string, and the
        // DFA is about twice as fast there as the default noncontiguous automaton.
        let build = |kind| {
            AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::Standard)
                .kind(kind)
                .build(&words)
        };
        let keywords = build(Some(AhoCorasickKind::DFA))
            .or_else(|_| build(None))
            .ok();
        let rules = specs
            .into_iter()
            .map(|spec| Rule {
                spec,
                regex: OnceLock::new(),
                near: OnceLock::new(),
                window: OnceLock::new(),
                shortest: OnceLock::new(),
                key_not: OnceLock::new(),
            })
            .collect();
        Self {
            rules,
            keywords,
            keyword_rules,
            rule_keywords,
            always,
        }
    }

    /// Compiles, on every core, the rules `text` selects, so that the first texts redacted
    /// do not wait on one compile after another.
    pub fn prewarm(&self, text: &str) {
        use rayon::prelude::*;
        self.selected(text).into_par_iter().for_each(|i| {
            let rule = &self.rules[i];
            rule.shortest();
            if rule.spec.anchor.is_some() {
                rule.near();
            } else if rule.window(&self.rule_keywords[i].1).is_none() {
                rule.regex();
            }
        });
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Rules whose keywords occur in `text`, plus the rules that always run, in rule order.
    fn selected(&self, text: &str) -> Vec<usize> {
        self.scan(text, false).0
    }

    /// The rules `text` selects, in rule order, and, when `hits` is asked for, where the
    /// keyword patterns occur (pattern, start, end).
    fn scan(&self, text: &str, hits: bool) -> (Vec<usize>, Vec<(usize, usize, usize)>) {
        let mut on = vec![false; self.rules.len()];
        for &i in &self.always {
            on[i] = true;
        }
        let mut at = Vec::new();
        // A keyword that occurs many times selects its rules once.
        let mut seen = vec![false; self.keyword_rules.len()];
        // Most short strings hold no keyword at all: a plain search says so without visiting
        // every overlapping match. A long text (a tool output) nearly always holds one, and
        // the plain search would only read it twice.
        const SHORT: usize = 4096;
        if let Some(ac) = self
            .keywords
            .as_ref()
            .filter(|ac| text.len() > SHORT || ac.is_match(text))
        {
            for m in ac.find_overlapping_iter(text) {
                let p = m.pattern().as_usize();
                if hits {
                    at.push((p, m.start(), m.end()));
                }
                if std::mem::replace(&mut seen[p], true) {
                    continue;
                }
                for &r in &self.keyword_rules[p] {
                    on[r] = true;
                }
            }
        }
        let rules = on
            .iter()
            .enumerate()
            .filter_map(|(i, &b)| b.then_some(i))
            .collect();
        (rules, at)
    }

    /// Every secret in `text`, merged where finds overlap, in text order. `shape_only` skips
    /// the rules that find a value by its context.
    ///
    /// In a long text, a rule every match of which holds one of its keywords and is no longer
    /// than a fixed length runs only over the parts of the text within that reach of its
    /// keywords' occurrences, as an anchored rule does around its anchor: the same finds as a
    /// search of the whole text, for a fraction of the bytes (a tool output of 100 KB that
    /// says `token` twice is searched over two short parts by every rule `token` selects).
    pub fn find(&self, text: &str, shape_only: bool) -> Vec<Find> {
        // Two characters that are not ASCII fold to ASCII letters in a case-insensitive
        // pattern (the Kelvin sign to `k`, the long s to `s`): a text holding one may hold a
        // match whose keyword the keyword search does not see, and is searched whole.
        const WINDOWS: usize = 4096;
        let windows = text.len() > WINDOWS && !text.contains(['\u{212a}', '\u{17f}']);
        let (selected, hits) = self.scan(text, windows);
        let mut finds = Vec::new();
        for i in selected {
            let rule = &self.rules[i];
            if shape_only && rule.spec.context {
                continue;
            }
            let (patterns, keywords) = &self.rule_keywords[i];
            // A rule that can run around its keywords has one regex for every text: over a
            // short text it searches the whole of it.
            let window = rule
                .spec
                .anchor
                .is_none()
                .then(|| rule.window(keywords))
                .flatten();
            match window {
                Some(w) if text.len() >= rule.shortest() => {
                    let parts = if windows {
                        let mut around: Vec<(usize, usize)> = hits
                            .iter()
                            .filter(|h| patterns.contains(&h.0))
                            .map(|h| (h.1, h.2))
                            .collect();
                        around.sort_unstable();
                        parts(text, around.into_iter(), w.reach)
                    } else {
                        vec![(0, text.len())]
                    };
                    finds.extend(self.find_in_parts(i, &w.rule, text, parts));
                }
                Some(_) => {}
                None => finds.extend(self.find_rule(i, text)),
            }
        }
        merge(finds)
    }

    /// The secrets one rule finds in `text`.
    pub fn find_rule(&self, i: usize, text: &str) -> Vec<Find> {
        let rule = &self.rules[i];
        if text.len() < rule.shortest() {
            return Vec::new();
        }
        if rule.spec.anchor.is_some()
            && let Some(near) = rule.near()
        {
            return self.find_near(i, near, text);
        }
        let Some(re) = rule.regex() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        // The capture search is about twice as slow as a match test, and most texts a rule
        // runs over hold nothing it finds.
        if !re.is_match(text) {
            return out;
        }
        for caps in re.captures_iter(text) {
            let spans: Vec<regex::Match<'_>> = if rule.spec.groups.is_empty() {
                caps.get(1).or_else(|| caps.get(0)).into_iter().collect()
            } else {
                rule.spec
                    .groups
                    .iter()
                    .filter_map(|g| g.parse().map_or_else(|_| caps.name(g), |n| caps.get(n)))
                    .collect()
            };
            let key = rule
                .spec
                .key_not
                .as_ref()
                .and_then(|_| caps.name("key"))
                .map(|k| k.as_str());
            for m in spans {
                let after = text[m.end()..].chars().next();
                if m.as_str().is_empty()
                    || !accept(&rule.spec, m.as_str(), after)
                    || key.is_some_and(|k| rule.key_rejects(k, m.as_str()))
                {
                    continue;
                }
                out.push(Find {
                    start: m.start(),
                    end: m.end(),
                    rule: i,
                });
            }
        }
        out
    }

    /// An anchored rule's secrets: its regex runs over the parts of `text` within its reach of
    /// an anchor match, each searched with the whole text around it as context (word
    /// boundaries see past a part's ends). Every match of the rule holds an anchor match, so
    /// it lies in one part, and the parts are searched in order: the same matches as a search
    /// of the whole text.
    fn find_near(&self, i: usize, near: &Near, text: &str) -> Vec<Find> {
        let around = near.anchor.find_iter(text).map(|m| (m.start(), m.end()));
        self.find_in_parts(i, &near.rule, text, parts(text, around, near.reach))
    }

    /// A rule's secrets in the given parts of `text`, in order, each part searched with the
    /// whole text around it as context.
    fn find_in_parts(
        &self,
        i: usize,
        rule: &regex_automata::meta::Regex,
        text: &str,
        parts: Vec<(usize, usize)>,
    ) -> Vec<Find> {
        let spec = &self.rules[i].spec;
        let mut out = Vec::new();
        for (start, end) in parts {
            let input = regex_automata::Input::new(text).range(start..end);
            for caps in rule.captures_iter(input) {
                let spans: Vec<regex_automata::Span> = if spec.groups.is_empty() {
                    caps.get_group(1)
                        .or_else(|| caps.get_group(0))
                        .into_iter()
                        .collect()
                } else {
                    spec.groups
                        .iter()
                        .filter_map(|g| {
                            g.parse()
                                .map_or_else(|_| caps.get_group_by_name(g), |n| caps.get_group(n))
                        })
                        .collect()
                };
                let key = spec
                    .key_not
                    .as_ref()
                    .and_then(|_| caps.get_group_by_name("key"))
                    .and_then(|k| text.get(k.start..k.end));
                for span in spans {
                    let Some(secret) = text.get(span.start..span.end) else {
                        continue;
                    };
                    let after = text[span.end..].chars().next();
                    if secret.is_empty()
                        || !accept(spec, secret, after)
                        || key.is_some_and(|k| self.rules[i].key_rejects(k, secret))
                    {
                        continue;
                    }
                    out.push(Find {
                        start: span.start,
                        end: span.end,
                        rule: i,
                    });
                }
            }
        }
        out
    }
}

/// The parts of `text` within `reach` bytes of the given matches (in order of their starts),
/// merged where they overlap, widened to whole characters. An anchor match skipped for
/// overlapping the one before starts inside it: the reach counts the anchor's longest match
/// too.
fn parts(
    text: &str,
    around: impl Iterator<Item = (usize, usize)>,
    reach: usize,
) -> Vec<(usize, usize)> {
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for (s, e) in around {
        let mut start = s.saturating_sub(reach);
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let mut end = (e + reach).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        match parts.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => parts.push((start, end)),
        }
    }
    parts
}

/// Sorts finds and merges overlapping ones (the earlier find names the merged one).
fn merge(mut finds: Vec<Find>) -> Vec<Find> {
    finds.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Find> = Vec::with_capacity(finds.len());
    for f in finds {
        match out.last_mut() {
            Some(last) if f.start < last.end => last.end = last.end.max(f.end),
            _ => out.push(f),
        }
    }
    out
}

/// The post-filters: entropy, character classes, and values that are references or
/// placeholders rather than secrets.
fn accept(spec: &RuleSpec, secret: &str, after: Option<char>) -> bool {
    if !plausible(secret, after) {
        return false;
    }
    let r = &spec.requires;
    if r.ignore_if_contains
        .iter()
        .any(|s| secret.contains(s.as_str()))
    {
        return false;
    }
    let count = |f: fn(&char) -> bool| secret.chars().filter(f).count();
    if count(char::is_ascii_digit) < r.min_digits
        || count(char::is_ascii_uppercase) < r.min_uppercase
        || count(char::is_ascii_lowercase) < r.min_lowercase
    {
        return false;
    }
    if r.min_special_chars > 0 {
        let special = r
            .special_chars
            .as_deref()
            .unwrap_or("!@#$%^&*()-_=+[]{};:,.<>/?");
        if secret.chars().filter(|c| special.contains(*c)).count() < r.min_special_chars {
            return false;
        }
    }
    spec.min_entropy.is_none_or(|min| entropy(secret) >= min)
}

/// Whether a whole value could be a secret: not empty, not a reference, a placeholder, a
/// literal or filler (the checks every rule applies to what it finds).
pub fn plausible_value(value: &str) -> bool {
    plausible(value, None)
}

/// Values that are never secrets: placeholders already redacted (ours, or a word such as
/// `REDACTED_TOKEN` that a tool or a person put there), variables, references to code, numbers
/// and literals, scheme words, and filler such as `sk-XXXX…XXXX`.
fn plausible(value: &str, after: Option<char>) -> bool {
    let v = value.trim();
    // An `Authorization` value: the scheme word says nothing, the credential after it does.
    let v = ["Bearer ", "bearer ", "Basic ", "basic ", "Token ", "token "]
        .iter()
        .find_map(|scheme| v.strip_prefix(scheme))
        .map_or(v, str::trim_start);
    if v.is_empty() || matches!(after, Some('(' | '[')) || filler(v) {
        return false;
    }
    let lower = v.to_ascii_lowercase();
    let reference = [
        "process.env",
        "os.environ",
        "os.getenv",
        "env.",
        "self.",
        "this.",
        "secrets.",
    ]
    .iter()
    .any(|p| lower.starts_with(p));
    !(reference
        || v.contains(['«', '»'])
        || placeholder(&lower)
        || variable(v)
        || v.starts_with("{{")
        || v.starts_with('<') && v.ends_with('>')
        || lower.starts_with("{env:")
        || lower.starts_with("{file:")
        || member_access(v)
        || short_number(v)
        || matches!(
            lower.as_str(),
            "true"
                | "false"
                | "null"
                | "nil"
                | "none"
                | "undefined"
                | "redacted"
                | "required"
                | "optional"
                | "string"
                | "str"
                | "bool"
                | "int"
                | "***"
                | "..."
                | "xxx"
                | "bearer"
                | "basic"
                | "digest"
                | "number"
                | "boolean"
                | "any"
                | "object"
                | "unknown"
        ))
}

/// A shell or template variable (`$TOKEN`, `${TOKEN}`, `$(gh auth token)`, `'$PASS'` from
/// `"'$PASS'"` quoting), not a crypt-style hash (`$2a$12$…`, `$6$salt$…`, `$krb5asrep$…`).
fn variable(v: &str) -> bool {
    let v = v.trim_start_matches(['\'', '"']);
    let Some(rest) = v.strip_prefix('$') else {
        return false;
    };
    let id: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    id.is_empty() || !rest[id.len()..].starts_with('$')
}

/// A number that is a count, a port or a version (`4096`, `1.2.3`) rather than a numeric key
/// or PIN-like secret: digits and dots, fewer than six digits. Longer runs of digits are
/// secrets where a rule finds them (`asana_key = "8195513847023883"`, `password=123456`).
fn short_number(v: &str) -> bool {
    v.chars().all(|c| c.is_ascii_digit() || c == '.')
        && v.chars().filter(char::is_ascii_digit).count() < 6
}

/// A placeholder someone already put in place of a secret: the word `redacted` on its own
/// among letters and punctuation (`REDACTED`, `REDACTED_API_KEY`, `[redacted]`), or an
/// instruction to put one there (`your-api-key-here`, `YOUR_TOKEN`, `<placeholder>`,
/// `[Shared Access key goes here]`), no digits.
fn placeholder(lower: &str) -> bool {
    if lower.contains(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .any(|w| matches!(*w, "redacted" | "placeholder"))
        || words.first() == Some(&"your") && words.len() >= 2
        || words.ends_with(&["here"]) && words.len() >= 2
}

/// Code reading a field (`context.credentials`, `config.api.token`): dotted names of letters
/// only. A token with a dot (`ya29.a0Af…`) carries digits.
fn member_access(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    parts.len() >= 2
        && parts
            .iter()
            .all(|p| p.len() >= 2 && p.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
}

/// A documentation placeholder rather than a key: at least 16 characters, most of them one
/// repeated character (`sk-XXXXXXXX…`, `ghp_0000…`, `********`).
fn filler(v: &str) -> bool {
    let n = v.chars().count();
    if n < 16 {
        return false;
    }
    let mut counts = std::collections::HashMap::new();
    for c in v.chars() {
        *counts.entry(c.to_ascii_lowercase()).or_insert(0usize) += 1;
    }
    counts.values().max().is_some_and(|&m| m * 10 >= n * 6)
}

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f64 {
    let mut counts = std::collections::HashMap::new();
    let mut n = 0usize;
    for c in s.chars() {
        *counts.entry(c).or_insert(0usize) += 1;
        n += 1;
    }
    if n == 0 {
        return 0.0;
    }
    let n = n as f64;
    counts
        .values()
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The built-in rules that have an anchor, each alone, and the same rule without it.
    fn anchored() -> Vec<(Engine, Engine)> {
        ENGINE
            .rules()
            .iter()
            .filter(|r| r.spec.anchor.is_some())
            .map(|r| {
                let mut whole = r.spec.clone();
                whole.anchor = None;
                (Engine::new(vec![r.spec.clone()]), Engine::new(vec![whole]))
            })
            .collect()
    }

    #[test]
    fn anchored_rules_find_their_examples_as_a_whole_text_search_does() {
        let rules = anchored();
        assert!(!rules.is_empty());
        for (near, whole) in &rules {
            let spec = &near.rules()[0].spec;
            assert!(near.rules()[0].near().is_some(), "{}", spec.id);
            for ex in spec.examples.iter().chain(&spec.negative_examples) {
                assert_eq!(near.find(ex, false), whole.find(ex, false), "{ex:?}");
            }
        }
    }

    proptest::proptest! {
        /// Texts of examples among decoys: anchor matches alone, overlapping anchors, tokens
        /// run into word characters (ASCII and not) and characters that fold to ASCII letters.
        #[test]
        fn an_anchored_rule_finds_what_its_regex_finds_in_the_whole_text(
            pieces in proptest::collection::vec(0usize..12, 0..60),
        ) {
            for (near, whole) in anchored() {
                let spec = &near.rules()[0].spec;
                let text: String = pieces
                    .iter()
                    .map(|&p| match p {
                        0..=2 => spec.examples[p % spec.examples.len()].clone(),
                        3 => ".abcdef.".to_owned(),
                        4 => "x.abcdef.ghijkl.mnopqr.".to_owned(),
                        5 => "é".to_owned(),
                        6 => "\u{212a}".to_owned(),
                        7 => " see www.google.com and ".to_owned(),
                        8 => "MTk4NjIyNDgzNDcxOTI1MjQ4".to_owned(),
                        9 => "_".repeat(40),
                        10 => "\n".to_owned(),
                        _ => "Nb1Ok1mEhe-3iTdrGOuegj29yQR".to_owned(),
                    })
                    .collect();
                proptest::prop_assert_eq!(near.find(&text, false), whole.find(&text, false));
            }
        }
    }
}

#[cfg(test)]
mod prefix_tests {
    use super::*;

    /// The built-in rules that are selected by their pattern's prefixes.
    fn derived() -> Vec<Engine> {
        ENGINE
            .rules()
            .iter()
            .filter(|r| r.spec.keywords.is_empty() && r.spec.anchor.is_none())
            .filter(|r| !prefixes(&r.spec.pattern).is_empty())
            .map(|r| Engine::new(vec![r.spec.clone()]))
            .collect()
    }

    #[test]
    fn rules_without_keywords_are_selected_by_their_patterns_prefixes() {
        let ids: Vec<String> = derived()
            .iter()
            .map(|e| e.rules()[0].spec.id.clone())
            .collect();
        for id in ["aws-api-key", "aws-api-credentials", "github-app-token"] {
            assert!(ids.iter().any(|i| i == id), "{id}: {ids:?}");
        }
        assert_eq!(
            prefixes(r"\b(?P<token>(?:ghu|ghs)_[a-zA-Z0-9]{36})\b"),
            ["ghu_", "ghs_"]
        );
        assert!(prefixes(r"(?i)\b[A-F0-9]{32}\.").is_empty());
    }

    proptest::proptest! {
        /// Texts of a rule's examples among decoys (prefixes alone, in other cases, run into
        /// word characters, non-ASCII): the selected rule finds what its regex finds over the
        /// whole text.
        #[test]
        fn a_rule_selected_by_its_prefixes_finds_what_its_regex_finds(
            pieces in proptest::collection::vec(0usize..12, 0..40),
        ) {
            for engine in derived() {
                let spec = &engine.rules()[0].spec;
                let text: String = pieces
                    .iter()
                    .map(|&p| match p {
                        0..=2 => spec.examples[p % spec.examples.len()].clone(),
                        3 => spec.examples[0].to_lowercase(),
                        4 => spec.examples[0].to_uppercase(),
                        5 => "é→".to_owned(),
                        6 => "\u{212a}".to_owned(),
                        7 => " AKIA ghu_ ghs_ AQ ".to_owned(),
                        8 => spec.negative_examples.first().cloned().unwrap_or_default(),
                        9 => "_".repeat(40),
                        10 => "\n".to_owned(),
                        _ => "Nb1Ok1mEhe-3iTdrGOuegj29yQR".to_owned(),
                    })
                    .collect();
                proptest::prop_assert_eq!(engine.find(&text, false), merge(engine.find_rule(0, &text)));
            }
        }
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;

    /// The built-in rules that run around their keywords in a long text, each alone.
    fn windowed() -> Vec<Engine> {
        (0..ENGINE.rules().len())
            .filter(|&i| ENGINE.rules()[i].spec.anchor.is_none())
            .filter(|&i| {
                ENGINE.rules()[i]
                    .window(&ENGINE.rule_keywords[i].1)
                    .is_some()
            })
            .map(|i| Engine::new(vec![ENGINE.rules()[i].spec.clone()]))
            .collect()
    }

    #[test]
    fn a_rule_runs_around_its_keywords_only_when_every_match_holds_one() {
        let hir = |p: &str| regex_syntax::parse(p).unwrap();
        let kw = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Across parts of a pattern, in either case, and in every branch.
        assert!(holds_one_of(
            &hir(r"(?i)\bapi[_-]?key\s*=\s*\w{8}"),
            &kw(&["apikey", "api_key", "api-key"])
        ));
        assert!(holds_one_of(
            &hir(r"(?:token|secret)[=:]\w+"),
            &kw(&["token", "secret"])
        ));
        assert!(holds_one_of(&hir(r"(?i)\bt(?:ok)en=\w+"), &kw(&["token"])));
        // A branch without the keyword, an optional keyword, a class too wide to list.
        assert!(!holds_one_of(&hir(r"(?:token|pw)=\w+"), &kw(&["token"])));
        assert!(!holds_one_of(&hir(r"(?:token)?=\w+"), &kw(&["token"])));
        assert!(!holds_one_of(&hir(r"tok[a-z]n=\w+"), &kw(&["token"])));
        let ids: Vec<String> = windowed()
            .iter()
            .map(|e| e.rules()[0].spec.id.clone())
            .collect();
        assert!(ids.len() > 100, "{}", ids.len());
        for id in ["datadog-api-key", "line-messaging-api-token"] {
            assert!(ids.iter().any(|i| i == id), "{id}");
        }
        // Unbounded matches are searched whole.
        assert!(!ids.iter().any(|i| i == "secret-assignment"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]
        /// Long texts of a rule's examples among its keywords alone, other cases, word
        /// characters (ASCII and not) and filler: the rule finds what its regex finds over the
        /// whole text.
        #[test]
        fn a_rule_run_around_its_keywords_finds_what_its_regex_finds(
            pieces in proptest::collection::vec(0usize..12, 1..40),
        ) {
            for engine in windowed() {
                let spec = &engine.rules()[0].spec;
                let keyword = engine.rule_keywords[0].1[0].clone();
                let text: String = pieces
                    .iter()
                    .map(|&p| match p {
                        0..=2 => spec.examples[p % spec.examples.len()].clone(),
                        3 => spec.examples[0].to_uppercase(),
                        4 => format!(" {keyword}: "),
                        5 => "é→".to_owned(),
                        6 => keyword.to_uppercase(),
                        7 => spec.negative_examples.first().cloned().unwrap_or_default(),
                        8 => "_".repeat(40),
                        9 => "\n".to_owned(),
                        10 => format!("{}\n", "let total = items.iter().sum::<u64>();".repeat(30)),
                        _ => "Nb1Ok1mEhe-3iTdrGOuegj29yQR".to_owned(),
                    })
                    .chain([format!("{keyword} {}", "x".repeat(4096))])
                    .collect();
                proptest::prop_assert_eq!(engine.find(&text, false), merge(engine.find_rule(0, &text)));
            }
        }
    }
}

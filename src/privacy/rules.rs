//! The secret rule engine: rules from the embedded files under `rules/` (tracebook's own and a
//! curated, attributed upstream set), one `aho-corasick` pass over each text to pick the rules
//! whose keywords occur, then each picked rule's regex with its entropy and character-class
//! checks. Every rule carries positive and negative examples that run as tests.

mod haystack;
mod keywords;
mod required;

use haystack::Haystack;
use keywords::Keywords;
use regex::Regex;
use regex_automata::{Input, meta};
use required::dialect;
use serde::Deserialize;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

/// The most memory one rule's automaton may take.
const NFA_LIMIT: usize = 1 << 24;

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
    /// Whether the rule reads texts mapped to a byte per character where its pattern allows
    /// it (see [`haystack`]); off only to check that the mapping finds the same.
    mapping: bool,
    parsed: OnceLock<Parsed>,
    regex: OnceLock<Option<Compiled>>,
    near: OnceLock<Option<Near>>,
    key_not: OnceLock<Option<Regex>>,
}

/// A rule's pattern, parsed once: the fewest and the most bytes a match can take, and the
/// pattern over mapped text, when the rule reads mapped text and its pattern allows it.
struct Parsed {
    shortest: usize,
    longest: Option<usize>,
    mapped: Option<regex_syntax::hir::Hir>,
    /// The bytes a match needs (see [`needs`]) in the text as written, and in mapped text
    /// when the pattern reads it.
    needs_written: Vec<Vec<u8>>,
    needs_mapped: Vec<Vec<u8>>,
}

/// A rule's compiled pattern, and whether it reads mapped text or the text as written.
struct Compiled {
    re: meta::Regex,
    mapped: bool,
}

/// What an anchored rule runs: the anchor's regex, the rule's regex for searching a part of a
/// text with the rest of it as context, and how far around an anchor's match a match of the
/// rule can reach. Both read mapped text, or both the text as written.
struct Near {
    anchor: meta::Regex,
    rule: meta::Regex,
    mapped: bool,
    reach: usize,
}

impl Rule {
    fn new(spec: RuleSpec, mapping: bool) -> Self {
        Self {
            spec,
            mapping,
            parsed: OnceLock::new(),
            regex: OnceLock::new(),
            near: OnceLock::new(),
            key_not: OnceLock::new(),
        }
    }

    /// The compiled pattern, or `None` when it does not compile (a test keeps that from
    /// shipping).
    fn compiled(&self) -> Option<&Compiled> {
        self.regex.get_or_init(|| self.build().ok()).as_ref()
    }

    /// Why the pattern (or its anchor, or its `key_not`) does not compile, if it does not.
    pub fn compile_error(&self) -> Option<String> {
        if let Err(e) = compile_as_written(&dialect(&self.spec.pattern)) {
            return Some(e);
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
        self.parsed().shortest
    }

    fn parsed(&self) -> &Parsed {
        self.parsed.get_or_init(|| {
            let Ok(hir) = regex_syntax::parse(&dialect(&self.spec.pattern)) else {
                return Parsed {
                    shortest: 0,
                    longest: None,
                    mapped: None,
                    needs_written: Vec::new(),
                    needs_mapped: Vec::new(),
                };
            };
            let mapped = self.mapping.then(|| haystack::map_hir(&hir)).flatten();
            Parsed {
                shortest: hir.properties().minimum_len().unwrap_or(0),
                longest: hir.properties().maximum_len(),
                needs_written: needs(&hir),
                needs_mapped: mapped.as_ref().map(needs).unwrap_or_default(),
                mapped,
            }
        })
    }

    /// Whether `bytes`, as the rule reads them (mapped or as written), hold a byte of each
    /// set the pattern's matches need: when they do not, they hold no match.
    fn may_match(&self, bytes: &[u8], mapped: bool) -> bool {
        let parsed = self.parsed();
        let needs = if mapped {
            &parsed.needs_mapped
        } else {
            &parsed.needs_written
        };
        needs.iter().all(|set| match set[..] {
            [a] => memchr::memchr(a, bytes).is_some(),
            [a, b] => memchr::memchr2(a, b, bytes).is_some(),
            [a, b, c] => memchr::memchr3(a, b, c, bytes).is_some(),
            _ => true,
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
        let pattern = dialect(&self.spec.pattern);
        let anchor = dialect(anchor);
        let anchor_hir = regex_syntax::parse(&anchor).map_err(|e| e.to_string())?;
        let parsed = self.parsed();
        let longest = |max: Option<usize>, pattern: &str| {
            max.ok_or_else(|| format!("`{pattern}` has no longest match"))
        };
        let reach = longest(parsed.longest, &pattern)?
            + longest(anchor_hir.properties().maximum_len(), &anchor)?;
        let mapped = parsed
            .mapped
            .as_ref()
            .zip(haystack::map_hir(&anchor_hir))
            .and_then(|(rule, anchor)| {
                haystack::compile_mapped(rule, NFA_LIMIT)
                    .zip(haystack::compile_mapped(&anchor, NFA_LIMIT))
            });
        let (rule, anchor, mapped) = match mapped {
            Some((rule, anchor)) => (rule, anchor, true),
            None => (
                compile_as_written(&pattern)?,
                compile_as_written(&anchor)?,
                false,
            ),
        };
        Ok(Near {
            anchor,
            rule,
            mapped,
            reach,
        })
    }

    fn build(&self) -> Result<Compiled, String> {
        if let Some(re) = self
            .parsed()
            .mapped
            .as_ref()
            .and_then(|hir| haystack::compile_mapped(hir, NFA_LIMIT))
        {
            return Ok(Compiled { re, mapped: true });
        }
        Ok(Compiled {
            re: compile_as_written(&dialect(&self.spec.pattern))?,
            mapped: false,
        })
    }
}

/// Sets of one to three bytes every match of `hir` holds a byte of each of (at most eight
/// sets): a text that holds no byte of one of them holds no match. Held by construction: a
/// literal's match holds each of its bytes; a class of at most three bytes (or ASCII
/// characters) matches one of them; a concatenation's match holds each part's match, so all
/// their sets; a repetition of at least one holds its part's; an alternation's match is one
/// branch's, so it holds a set of the first branch's when every other branch needs a set
/// within it. Anything else (an empty match, a look-around, a larger class) needs nothing.
fn needs(hir: &regex_syntax::hir::Hir) -> Vec<Vec<u8>> {
    use regex_syntax::hir::{Class, HirKind};
    let mut sets: Vec<Vec<u8>> = match hir.kind() {
        HirKind::Literal(lit) => lit.0.iter().map(|&b| vec![b]).collect(),
        HirKind::Class(Class::Bytes(class)) => small_set(
            class
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .map(Some),
        ),
        HirKind::Class(Class::Unicode(class)) => small_set(
            class
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .map(|c| u8::try_from(c).ok().filter(u8::is_ascii)),
        ),
        HirKind::Repetition(rep) if rep.min >= 1 => needs(&rep.sub),
        HirKind::Capture(cap) => needs(&cap.sub),
        HirKind::Concat(subs) => subs.iter().flat_map(needs).collect(),
        HirKind::Alternation(subs) => match subs.split_first() {
            Some((first, rest)) => {
                let rest: Vec<Vec<Vec<u8>>> = rest.iter().map(needs).collect();
                needs(first)
                    .into_iter()
                    .filter(|set| {
                        rest.iter()
                            .all(|branch| branch.iter().any(|s| s.iter().all(|b| set.contains(b))))
                    })
                    .collect()
            }
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    let mut seen = Vec::new();
    sets.retain(|set| {
        let fresh = !seen.contains(set);
        if fresh {
            seen.push(set.clone());
        }
        fresh && !set.is_empty()
    });
    sets.truncate(8);
    sets
}

/// The set a class's match needs a byte of: its bytes, when it holds at most three and each is
/// one (`None`: a character that is not an ASCII byte); else none.
fn small_set(bytes: impl Iterator<Item = Option<u8>>) -> Vec<Vec<u8>> {
    match bytes.take(4).collect::<Option<Vec<u8>>>() {
        Some(set) if set.len() <= 3 => vec![set],
        _ => Vec::new(),
    }
}

/// A pattern compiled to read text as written, as the `regex` crate compiles it.
fn compile_as_written(pattern: &str) -> Result<meta::Regex, String> {
    meta::Builder::new()
        .configure(meta::Config::new().nfa_size_limit(Some(NFA_LIMIT)))
        .build(pattern)
        .map_err(|e| e.to_string())
}

/// For a rule written without keywords or an anchor: the strings one of which every match of
/// its pattern starts with, when there are few and none is shorter than two bytes, to select
/// it as keywords do (none: the rule runs over every text, as written). The pattern's own
/// literal prefixes, so a text the rule finds anything in always holds one: `AKIA` and its
/// kin for an AWS key id, `ghu_` and `ghs_` for a GitHub app token.
fn prefixes(pattern: &str) -> Vec<String> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let Ok(hir) = regex_syntax::parse(&dialect(pattern)) else {
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
    keywords: Option<Keywords>,
    /// Rules without keywords: they always run.
    always: Vec<usize>,
    /// The slots of the sets of strings each rule's pattern requires (see [`Table`]).
    required: Vec<Vec<usize>>,
    /// The slots in all: the rules' own, one per required set, and last the slot the
    /// characters `(?i)` matches as ASCII letters set ([`required::FOLD_PARTNERS`]).
    slots: usize,
}

/// The rule files as `build.rs` converts them to JSON, tracebook's own first.
const BUILT: [&str; 2] = [
    include_str!(concat!(env!("OUT_DIR"), "/secrets.json")),
    include_str!(concat!(env!("OUT_DIR"), "/upstream.json")),
];

/// The sets of strings each built-in rule's pattern requires ([`required::required`]), in the
/// rules' order, as `build.rs` works them out.
const BUILT_REQUIRED: &str = include_str!(concat!(env!("OUT_DIR"), "/required.json"));

/// The built-in rules, read from their JSON form.
fn builtin_specs() -> Vec<RuleSpec> {
    let mut specs = Vec::new();
    for text in BUILT {
        // The rule files are fixed at build time; a test checks that both read as their YAML
        // does.
        if let Ok(mut list) = serde_json::from_str::<Vec<RuleSpec>>(text) {
            specs.append(&mut list);
        }
    }
    specs
}

/// What selects each rule: the words the keyword pass looks for (lower case, each once), the
/// slots each word sets (a rule's own slot is its index, for its keywords; slot `specs.len() +
/// g` is the `g`th set of strings its pattern requires; the last slot is set by
/// [`required::FOLD_PARTNERS`]), the rules without keywords, which every text selects, and the
/// slots of each rule's required sets.
struct Table {
    words: Vec<String>,
    slots_of: Vec<Vec<usize>>,
    always: Vec<usize>,
    required: Vec<Vec<usize>>,
}

fn keyword_table(specs: &[RuleSpec], required: &[Vec<Vec<String>>]) -> Table {
    let mut table = Table {
        words: Vec::new(),
        slots_of: Vec::new(),
        always: Vec::new(),
        required: vec![Vec::new(); specs.len()],
    };
    let mut index: std::collections::HashMap<String, usize, foldhash::fast::RandomState> =
        Default::default();
    let mut add = |table: &mut Table, word: &str, slot: usize| {
        let word = word.to_ascii_lowercase();
        match index.get(&word) {
            Some(&w) => table.slots_of[w].push(slot),
            None => {
                index.insert(word.clone(), table.words.len());
                table.words.push(word);
                table.slots_of.push(vec![slot]);
            }
        }
    };
    let mut next_slot = specs.len();
    for (i, spec) in specs.iter().enumerate() {
        let derived;
        let keywords = if spec.keywords.is_empty() && spec.anchor.is_none() {
            derived = prefixes(&spec.pattern);
            &derived
        } else {
            &spec.keywords
        };
        if keywords.is_empty() {
            table.always.push(i);
        }
        for k in keywords {
            add(&mut table, k, i);
        }
        // A set adds nothing when each keyword holds one of its strings: a text that holds a
        // keyword then holds the set.
        for set in required.get(i).into_iter().flatten() {
            let implied = !keywords.is_empty()
                && keywords.iter().all(|k| {
                    let k = k.to_ascii_lowercase();
                    set.iter().any(|s| k.contains(s.as_str()))
                });
            if implied || set.is_empty() {
                continue;
            }
            for word in set {
                add(&mut table, word, next_slot);
            }
            table.required[i].push(next_slot);
            next_slot += 1;
        }
    }
    // The sets leave out the two characters `(?i)` matches as ASCII letters: a text holding
    // one is read as if it held every set.
    for c in required::FOLD_PARTNERS {
        add(&mut table, c.encode_utf8(&mut [0u8; 4]), next_slot);
    }
    table
}

/// The built-in engine.
pub static ENGINE: LazyLock<Engine> =
    LazyLock::new(|| Engine::with_required(builtin_specs(), builtin_required()));

/// The sets of strings the built-in rules' patterns require, in the rules' order. Fixed at
/// build time; a test checks that they are the sets the patterns require. Without them every
/// rule a keyword selects runs, as if its text held each set.
fn builtin_required() -> Vec<Vec<Vec<String>>> {
    serde_json::from_str(BUILT_REQUIRED).unwrap_or_default()
}

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
        let required = specs
            .iter()
            .map(|s| required::required(&s.pattern))
            .collect();
        Self::with_required(specs, required)
    }

    /// Builds the prefilter for a list of rules and the sets of strings their patterns
    /// require (`required[i]` for `specs[i]`).
    fn with_required(specs: Vec<RuleSpec>, required: Vec<Vec<Vec<String>>>) -> Self {
        let table = keyword_table(&specs, &required);
        let keywords = Keywords::new(&table.words, &table.slots_of);
        let slots = specs.len() + table.required.iter().map(Vec::len).sum::<usize>() + 1;
        let rules = specs
            .into_iter()
            .map(|spec| Rule::new(spec, true))
            .collect();
        Self {
            rules,
            keywords,
            always: table.always,
            required: table.required,
            slots,
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
            } else {
                rule.compiled();
            }
        });
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Rules whose keywords occur in `text`, plus the rules that always run, that find a
    /// string of each set their patterns require in it, in rule order.
    fn selected(&self, text: &str) -> Vec<usize> {
        let Some(keywords) = &self.keywords else {
            return self.always.clone();
        };
        let mut on = vec![0u64; self.slots.div_ceil(64)];
        keywords.select(text.as_bytes(), &mut on);
        for &i in &self.always {
            on[i / 64] |= 1 << (i % 64);
        }
        let is_on = |slot: usize| on[slot / 64] & (1 << (slot % 64)) != 0;
        let folds = is_on(self.slots - 1);
        let mut out = Vec::new();
        for (w, &word) in on.iter().enumerate().take(self.rules.len().div_ceil(64)) {
            let mut rest = word;
            while rest != 0 {
                let i = w * 64 + rest.trailing_zeros() as usize;
                rest &= rest - 1;
                if i < self.rules.len()
                    && (folds || self.required[i].iter().all(|&slot| is_on(slot)))
                {
                    out.push(i);
                }
            }
        }
        out
    }

    /// Every secret in `text`, merged where finds overlap, in text order. `shape_only` skips
    /// the rules that find a value by its context.
    pub fn find(&self, text: &str, shape_only: bool) -> Vec<Find> {
        let hay = Haystack::new(text);
        let mut finds = Vec::new();
        for i in self.selected(text) {
            let rule = &self.rules[i];
            if shape_only && rule.spec.context {
                continue;
            }
            self.find_in(i, &hay, &mut finds);
        }
        merge(finds)
    }

    /// The secrets one rule finds in `text`.
    pub fn find_rule(&self, i: usize, text: &str) -> Vec<Find> {
        let mut finds = Vec::new();
        self.find_in(i, &Haystack::new(text), &mut finds);
        finds
    }

    fn find_in(&self, i: usize, hay: &Haystack<'_>, out: &mut Vec<Find>) {
        let rule = &self.rules[i];
        if hay.text().len() < rule.shortest() {
            return;
        }
        if rule.spec.anchor.is_some()
            && let Some(near) = rule.near()
        {
            return self.find_near(i, near, hay, out);
        }
        let Some(c) = rule.compiled() else {
            return;
        };
        let bytes = hay.bytes(c.mapped);
        // The capture search is about twice as slow as a match test, and most texts a rule
        // runs over hold nothing it finds.
        if rule.may_match(bytes, c.mapped) && c.re.is_match(bytes) {
            self.captures(i, &c.re, hay, c.mapped, 0..bytes.len(), out);
        }
    }

    /// An anchored rule's secrets: its regex runs over the parts of the text within its reach
    /// of an anchor match, each searched with the whole text around it as context (word
    /// boundaries see past a part's ends). Every match of the rule holds an anchor match, so
    /// it lies in one part, and the parts are searched in order: the same matches as a search
    /// of the whole text.
    fn find_near(&self, i: usize, near: &Near, hay: &Haystack<'_>, out: &mut Vec<Find>) {
        let bytes = hay.bytes(near.mapped);
        // Every match lies in the text.
        if !self.rules[i].may_match(bytes, near.mapped) {
            return;
        }
        // An anchor match skipped for overlapping the one before starts inside it: the reach
        // counts the anchor's longest match too.
        let mut parts: Vec<(usize, usize)> = Vec::new();
        for m in near.anchor.find_iter(bytes) {
            let mut start = m.start().saturating_sub(near.reach);
            while !hay.starts_char(near.mapped, start) {
                start -= 1;
            }
            let mut end = (m.end() + near.reach).min(bytes.len());
            while !hay.starts_char(near.mapped, end) {
                end += 1;
            }
            match parts.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => parts.push((start, end)),
            }
        }
        for (start, end) in parts {
            self.captures(i, &near.rule, hay, near.mapped, start..end, out);
        }
    }

    /// The secrets a rule's matches within `range` of the bytes it reads hold, at their
    /// offsets in the text, after the rule's checks on each.
    fn captures(
        &self,
        i: usize,
        re: &meta::Regex,
        hay: &Haystack<'_>,
        mapped: bool,
        range: Range<usize>,
        out: &mut Vec<Find>,
    ) {
        let rule = &self.rules[i];
        let spec = &rule.spec;
        let text = hay.text();
        let in_text = |span: regex_automata::Span| {
            let (start, end) = (hay.offset(mapped, span.start), hay.offset(mapped, span.end));
            text.get(start..end).map(|s| (start, end, s))
        };
        for caps in re.captures_iter(Input::new(hay.bytes(mapped)).range(range.clone())) {
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
                .and_then(in_text)
                .map(|(_, _, k)| k);
            for span in spans {
                let Some((start, end, secret)) = in_text(span) else {
                    continue;
                };
                let after = text[end..].chars().next();
                if secret.is_empty()
                    || !accept(spec, secret, after)
                    || key.is_some_and(|k| rule.key_rejects(k, secret))
                {
                    continue;
                }
                out.push(Find {
                    start,
                    end,
                    rule: i,
                });
            }
        }
    }
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
mod built_tests {
    use super::*;

    #[test]
    fn the_built_rules_read_as_the_rule_files_do() {
        let mut from_yaml = Vec::new();
        for (name, text) in builtin_files() {
            from_yaml.extend(parse(text).unwrap_or_else(|e| panic!("{name}: {e}")));
        }
        let built = builtin_specs();
        assert_eq!(built.len(), from_yaml.len());
        assert!(built.len() > 400);
        for (b, y) in built.iter().zip(&from_yaml) {
            assert_eq!(format!("{b:?}"), format!("{y:?}"), "{}", y.id);
        }
    }
}

#[cfg(test)]
mod test_texts {
    use super::Rule;

    /// One of the examples of the rule `r` picks (modulo the rules' number), chosen by `seed`;
    /// empty for a rule without one.
    pub(super) fn example(rules: &[Rule], r: usize, seed: u64) -> &str {
        let spec = &rules[r % rules.len()].spec;
        let ex = spec
            .examples
            .get(seed as usize % spec.examples.len().max(1));
        ex.map_or("", String::as_str)
    }

    /// A text with some of its characters swapped for non-ASCII ones the rules' classes
    /// treat in every way: letters that fold to ASCII ones, other letters and digits, spaces
    /// and punctuation.
    pub(super) fn unicode(text: &str, mut seed: u64) -> String {
        text.chars()
            .map(|c| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if (seed >> 60) != 0 {
                    return c;
                }
                match c {
                    's' | 'S' => '\u{17f}',
                    'k' | 'K' => '\u{212a}',
                    ' ' => '\u{a0}',
                    '0'..='9' => '\u{663}',
                    'a'..='z' => 'é',
                    'A'..='Z' => 'Ǆ',
                    '-' => '—',
                    '_' => '\u{2003}',
                    '/' => '→',
                    other => other,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod mapping_tests {
    use super::test_texts::{example, unicode};
    use super::*;

    /// Every built-in rule twice: reading mapped text where its pattern allows it, and
    /// reading the text as written.
    static BOTH: LazyLock<(Engine, Engine)> = LazyLock::new(|| {
        let specs: Vec<RuleSpec> = ENGINE.rules().iter().map(|r| r.spec.clone()).collect();
        let mut written = Engine::new(specs.clone());
        for rule in &mut written.rules {
            rule.mapping = false;
        }
        (Engine::new(specs), written)
    });

    /// Whether a rule's regex matches in `text` only where the text holds the bytes the
    /// rule's matches need, read as the rule reads it.
    fn needs_hold(engine: &Engine, i: usize, text: &str) -> bool {
        let rule = &engine.rules()[i];
        let hay = Haystack::new(text);
        let Some(c) = rule.compiled() else {
            return true;
        };
        let bytes = hay.bytes(c.mapped);
        !c.re.is_match(bytes) || rule.may_match(bytes, c.mapped)
    }

    #[test]
    fn every_rule_matches_its_examples_only_where_they_hold_the_bytes_it_needs() {
        let (mapped, written) = &*BOTH;
        let mut needing = 0;
        for (i, rule) in ENGINE.rules().iter().enumerate() {
            let spec = &rule.spec;
            needing += usize::from(!rule.parsed().needs_mapped.is_empty());
            for (n, ex) in spec
                .examples
                .iter()
                .chain(&spec.negative_examples)
                .enumerate()
            {
                for text in [ex.clone(), unicode(ex, n as u64), format!("→{ex}日本")] {
                    for engine in [mapped, written] {
                        assert!(needs_hold(engine, i, &text), "{}: {text:?}", spec.id);
                    }
                }
            }
        }
        assert!(needing * 2 > ENGINE.rules().len(), "{needing}");
    }

    #[test]
    fn a_match_needs_the_bytes_each_part_and_every_branch_holds() {
        let of = |pattern: &str| needs(&regex_syntax::parse(pattern).expect("parses"));
        let set = |s: &str| s.as_bytes().to_vec();
        let assignment = of("(?:^|[^a-z])key(?:(?::=|=)v|=>w)");
        assert!(assignment.contains(&set("=")), "{assignment:?}");
        assert!(!assignment.contains(&set(":")), "{assignment:?}");
        assert_eq!(of("[ab]c?d+"), [set("ab"), set("d")]);
        assert_eq!(of("(?i)x"), [set("Xx")]);
        // `(?i)k` also matches the Kelvin sign, and `\w` far more than three bytes.
        assert!(of("(?i)k").is_empty());
        assert!(of(r"\w+|q").is_empty());
        assert!(of("(?:ab)*").is_empty());
    }

    #[test]
    fn most_rules_read_mapped_text() {
        let mapped = BOTH
            .0
            .rules()
            .iter()
            .filter(|r| r.compiled().is_some_and(|c| c.mapped));
        assert!(mapped.count() * 10 > ENGINE.rules().len() * 9);
    }

    #[test]
    fn every_rule_finds_in_its_examples_what_it_finds_in_them_as_written() {
        let (mapped, written) = &*BOTH;
        for (i, rule) in ENGINE.rules().iter().enumerate() {
            let spec = &rule.spec;
            for (n, ex) in spec
                .examples
                .iter()
                .chain(&spec.negative_examples)
                .enumerate()
            {
                for text in [
                    ex.clone(),
                    unicode(ex, n as u64),
                    unicode(ex, n as u64 + 7919),
                    format!("→{ex}日本"),
                ] {
                    assert_eq!(
                        mapped.find_rule(i, &text),
                        written.find_rule(i, &text),
                        "{}: {text:?}",
                        spec.id
                    );
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
        /// Texts of several rules' examples, some of their characters made non-ASCII, among
        /// non-ASCII decoys: each rule finds what it finds reading the text as written.
        #[test]
        fn a_mapped_rule_finds_what_it_finds_in_the_text_as_written(
            pieces in proptest::collection::vec((0usize..100_000, 0usize..16, 0u64..u64::MAX), 1..10),
        ) {
            let (mapped, written) = &*BOTH;
            let rules = ENGINE.rules();
            let text: String = pieces
                .iter()
                .map(|&(r, kind, seed)| {
                    let ex = example(rules, r, seed);
                    match kind {
                        0..=3 => ex.to_owned(),
                        4..=8 => unicode(ex, seed),
                        9 => "\u{17f}\u{212a}".to_owned(),
                        10 => "é\u{663}".to_owned(),
                        11 => "\u{a0}\u{3000}".to_owned(),
                        12 => "→日本語😀".to_owned(),
                        13 => "\n".to_owned(),
                        _ => " ".to_owned(),
                    }
                })
                .collect();
            for (i, rule) in rules.iter().enumerate() {
                proptest::prop_assert_eq!(
                    mapped.find_rule(i, &text),
                    written.find_rule(i, &text),
                    "{}",
                    rule.spec.id
                );
                proptest::prop_assert!(needs_hold(mapped, i, &text), "{}", rule.spec.id);
                proptest::prop_assert!(needs_hold(written, i, &text), "{}", rule.spec.id);
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
mod required_tests {
    use super::test_texts::{example, unicode};
    use super::*;

    /// The built-in rules without the sets of strings their patterns require: every rule a
    /// keyword selects reads the text.
    static UNGATED: LazyLock<Engine> =
        LazyLock::new(|| Engine::with_required(builtin_specs(), Vec::new()));

    fn id(engine: &Engine, id: &str) -> usize {
        engine
            .rules()
            .iter()
            .position(|r| r.spec.id == id)
            .unwrap_or_else(|| panic!("no rule {id}"))
    }

    #[test]
    fn the_built_sets_are_those_the_patterns_require() {
        let built = builtin_required();
        let specs = builtin_specs();
        assert_eq!(built.len(), specs.len());
        for (sets, spec) in built.iter().zip(&specs) {
            assert_eq!(sets, &required::required(&spec.pattern), "{}", spec.id);
        }
        let gated = ENGINE.required.iter().filter(|r| !r.is_empty()).count();
        assert!(gated > 100, "{gated} rules read a set");
    }

    #[test]
    fn a_rule_a_common_word_selects_reads_a_text_only_with_what_its_pattern_requires() {
        let i = id(&ENGINE, "mattermost-access-token");
        let with = "mattermost_token = 'abcdefghijklmnopqrstuvwxyz'";
        let without = "the access token was refreshed, see the auth key docs";
        assert!(ENGINE.selected(with).contains(&i));
        assert!(!ENGINE.selected(without).contains(&i));
        assert!(UNGATED.selected(without).contains(&i));
        // ASCII case is ignored, as for keywords.
        assert!(ENGINE.selected(&with.to_uppercase()).contains(&i));
    }

    #[test]
    fn a_name_spelt_with_a_letter_that_folds_to_ascii_is_still_read() {
        let i = id(&ENGINE, "mattermost-access-token");
        let text = "matterMOſT_TOKEN = 'abcdefghijklmnopqrstuvwxyz'";
        assert!(ENGINE.selected(text).contains(&i));
        assert!(!ENGINE.find(text, false).is_empty());
        assert_eq!(ENGINE.find(text, false), UNGATED.find(text, false));
        // The Kelvin sign as the `k` of a set's string.
        let text = "mm_ta\u{212a}en mattermost_access = 'abcdefghijklmnopqrstuvwxyz'";
        assert_eq!(ENGINE.find(text, false), UNGATED.find(text, false));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// Texts of several rules' examples, whole, in capitals, with letters swapped for
        /// non-ASCII ones or with a piece cut out, among the words that select rules: the sets
        /// leave out no secret the rules find without them.
        #[test]
        fn the_sets_leave_out_nothing_the_rules_find(
            pieces in proptest::collection::vec((0usize..100_000, 0usize..13, 0u64..u64::MAX), 1..12),
        ) {
            let rules = ENGINE.rules();
            let text: String = pieces
                .iter()
                .map(|&(r, kind, seed)| {
                    let spec = &rules[r % rules.len()].spec;
                    let ex = example(rules, r, seed);
                    let cut = |ex: &str| {
                        let at = seed as usize % ex.len().max(1);
                        let len = (seed >> 32) as usize % 6;
                        let mut out = ex.to_owned();
                        if let Some(end) = (at + len..=ex.len()).find(|&e| ex.is_char_boundary(e))
                            && ex.is_char_boundary(at)
                        {
                            out.replace_range(at..end, "");
                        }
                        out
                    };
                    match kind {
                        0..=2 => ex.to_owned(),
                        3 => ex.to_uppercase(),
                        4 => cut(ex),
                        5 => spec.keywords.join(" "),
                        6 => format!("{} = ", spec.keywords.first().map_or("", String::as_str)),
                        7 => unicode(ex, seed),
                        8 => "\u{17f}".to_owned(),
                        9 => "\n".to_owned(),
                        _ => " ".to_owned(),
                    }
                })
                .collect();
            for shape_only in [false, true] {
                proptest::prop_assert_eq!(
                    ENGINE.find(&text, shape_only),
                    UNGATED.find(&text, shape_only),
                    "{:?}",
                    text
                );
            }
        }
    }
}

//! Texts as the secret rules read them: one byte per character.
//!
//! A rule's Unicode classes (`\w`, `\S`, `.`, `[^"\n]`, and any letter under `(?i)`, which
//! also matches `ſ` or the Kelvin sign) compile to automata that spell out UTF-8, and a counted
//! class (`[\w-]{48}`) repeats that automaton once per count: thousands of states to build for
//! each rule a text selects, and more for the DFA to step through. No rule tells most non-ASCII
//! characters apart, though: each class holds all or none of the word characters, the digits,
//! the spaces and the rest. So a text is read with each non-ASCII character replaced by one
//! byte that names its [`CATEGORIES`] member, and each rule's classes become byte classes
//! holding their ASCII part and the bytes of the categories they hold. A rule then matches the
//! mapped text exactly where its pattern matches the text as written, character for character,
//! and the finds map back to the text's own offsets. ASCII text, most of what a session holds,
//! is its own mapping. A rule whose pattern tells two characters of one category apart (a
//! literal `→`) is not mapped and reads the text as written.

use regex_automata::util::prefilter::Prefilter;
use regex_automata::{MatchKind, meta};
use regex_syntax::hir::{
    Capture, Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind,
    Look, Repetition,
};
use std::cmp::Ordering;
use std::sync::{LazyLock, OnceLock};

/// The non-ASCII characters the rules tell apart, in the order a character is looked up:
/// the two that fold to ASCII letters under `(?i)` (`ſ`, `K`), the other digits, the other
/// word characters, the spaces, and everything else. Member `i` reads as byte `0x80 + i`.
static CATEGORIES: LazyLock<Vec<ClassUnicode>> = LazyLock::new(|| {
    let class = |pattern: &str| match regex_syntax::parse(pattern).map(Hir::into_kind) {
        Ok(HirKind::Class(Class::Unicode(c))) => c,
        _ => ClassUnicode::empty(),
    };
    let one = |c: char| ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
    let less = |mut a: ClassUnicode, b: &ClassUnicode| {
        a.difference(b);
        a
    };
    let ascii = ClassUnicode::new([ClassUnicodeRange::new('\0', '\x7f')]);
    let long_s = one('\u{17f}');
    let kelvin = one('\u{212a}');
    let digit = less(class(r"\d"), &ascii);
    let word = [&ascii, &digit, &long_s, &kelvin]
        .into_iter()
        .fold(class(r"\w"), less);
    let space = less(class(r"\s"), &ascii);
    let other = [&ascii, &long_s, &kelvin, &digit, &word, &space]
        .into_iter()
        .fold(
            ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)]),
            less,
        );
    vec![long_s, kelvin, digit, word, space, other]
});

/// The byte each character of the Basic Multilingual Plane reads as, for a lookup without a
/// search.
static PLANE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    // The categories hold every non-ASCII character; ASCII is never looked up here.
    let mut plane = vec![0u8; 0x1_0000];
    for (i, member) in CATEGORIES.iter().enumerate() {
        for r in member.ranges() {
            let (start, end) = (r.start() as usize, (r.end() as usize).min(0xffff));
            if let Some(span) = plane.get_mut(start.max(0x80)..=end) {
                span.fill(0x80 + i as u8);
            }
        }
    }
    plane
});

/// The byte a non-ASCII character reads as.
fn category(c: char) -> u8 {
    match PLANE.get(c as usize) {
        Some(&b) => b,
        None => search(c),
    }
}

/// The byte a non-ASCII character reads as, looked up in the categories.
fn search(c: char) -> u8 {
    let holds = |class: &ClassUnicode| {
        class
            .ranges()
            .binary_search_by(|r| {
                if r.end() < c {
                    Ordering::Less
                } else if r.start() > c {
                    Ordering::Greater
                } else {
                    Ordering::Equal
                }
            })
            .is_ok()
    };
    let last = CATEGORIES.len().saturating_sub(1);
    let i = CATEGORIES.iter().position(holds).unwrap_or(last);
    0x80 + i as u8
}

/// A pattern over mapped text (see [`map_hir`]) compiled to read mapped text.
pub(super) fn compile_mapped(mapped: &Hir, nfa_limit: usize) -> Option<meta::Regex> {
    // Only a prefilter for the literals every match starts with. Left to choose, the engine
    // may search for a literal inside the pattern and then backwards from it, and on text
    // where that literal occurs often it gives up and runs its slowest engine over the whole
    // text. No one-pass DFA: it only speeds up reading a match's groups, which few texts hold,
    // and building it is a sixth of building the rest.
    let prefix = Prefilter::from_hir_prefix(MatchKind::LeftmostFirst, mapped);
    meta::Builder::new()
        .configure(
            meta::Config::new()
                .nfa_size_limit(Some(nfa_limit))
                .utf8_empty(false)
                .auto_prefilter(false)
                .prefilter(prefix)
                .onepass(false),
        )
        .build_from_hir(mapped)
        .ok()
}

/// The same pattern over mapped text, or `None` when a class or literal in it tells apart
/// characters of one category (it then reads the text as written).
pub(super) fn map_hir(hir: &Hir) -> Option<Hir> {
    Some(match hir.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(lit) => {
            if !lit.0.is_ascii() {
                return None;
            }
            Hir::literal(lit.0.clone())
        }
        HirKind::Class(Class::Bytes(class)) => {
            if class.ranges().iter().any(|r| !r.end().is_ascii()) {
                return None;
            }
            Hir::class(Class::Bytes(class.clone()))
        }
        HirKind::Class(Class::Unicode(class)) => Hir::class(Class::Bytes(map_class(class)?)),
        HirKind::Look(look) => match look {
            Look::WordUnicode
            | Look::WordUnicodeNegate
            | Look::WordStartUnicode
            | Look::WordEndUnicode
            | Look::WordStartHalfUnicode
            | Look::WordEndHalfUnicode => return None,
            other => Hir::look(*other),
        },
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            min: rep.min,
            max: rep.max,
            greedy: rep.greedy,
            sub: Box::new(map_hir(&rep.sub)?),
        }),
        HirKind::Capture(cap) => Hir::capture(Capture {
            index: cap.index,
            name: cap.name.clone(),
            sub: Box::new(map_hir(&cap.sub)?),
        }),
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(map_hir).collect::<Option<_>>()?),
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.iter().map(map_hir).collect::<Option<_>>()?)
        }
    })
}

/// A class's ASCII part and the bytes of the categories it holds whole; `None` when it holds
/// part of one.
fn map_class(class: &ClassUnicode) -> Option<ClassBytes> {
    let mut ranges: Vec<ClassBytesRange> = class
        .ranges()
        .iter()
        .filter(|r| r.start().is_ascii())
        .map(|r| ClassBytesRange::new(r.start() as u8, r.end().min('\x7f') as u8))
        .collect();
    if class.ranges().last().is_none_or(|r| r.end().is_ascii()) {
        return Some(ClassBytes::new(ranges));
    }
    for (i, member) in CATEGORIES.iter().enumerate() {
        if holds_whole(class.ranges(), member.ranges())? {
            let byte = 0x80 + i as u8;
            ranges.push(ClassBytesRange::new(byte, byte));
        }
    }
    Some(ClassBytes::new(ranges))
}

/// Whether a class holds all of a category (`true`) or none of it (`false`); `None` when it
/// holds part of it. Both range lists are sorted and merged, so a category's range the class
/// holds lies in one of the class's ranges.
fn holds_whole(class: &[ClassUnicodeRange], member: &[ClassUnicodeRange]) -> Option<bool> {
    let (mut inside, mut outside) = (false, false);
    let mut j = 0;
    for m in member {
        while class.get(j).is_some_and(|r| r.end() < m.start()) {
            j += 1;
        }
        let Some(r) = class.get(j) else {
            // The class ends before this range, so before every later one too: all of them
            // lie outside it.
            return if inside { None } else { Some(false) };
        };
        if r.start() <= m.start() && m.end() <= r.end() {
            inside = true;
            // The class's range reaches past the category's last range, so it holds every
            // later one too.
            if member.last().is_some_and(|last| last.end() <= r.end()) {
                return if outside { None } else { Some(true) };
            }
        } else if r.start() <= m.end() {
            return None;
        } else {
            outside = true;
        }
        if inside && outside {
            return None;
        }
    }
    Some(inside)
}

/// Every how many mapped bytes the text offset is kept, to map a find back.
const MARK: usize = 64;

/// A text, and its mapped bytes once a rule needs them.
pub(super) struct Haystack<'t> {
    text: &'t str,
    /// `None` for ASCII text, its own mapping.
    mapped: OnceLock<Option<Mapped>>,
}

/// A non-ASCII text's mapped bytes, and the text offset of every [`MARK`]th of them.
struct Mapped {
    bytes: Vec<u8>,
    marks: Vec<usize>,
}

impl<'t> Haystack<'t> {
    /// A text to search.
    pub(super) fn new(text: &'t str) -> Self {
        Self {
            text,
            mapped: OnceLock::new(),
        }
    }

    /// The text as written.
    pub(super) fn text(&self) -> &'t str {
        self.text
    }

    /// The bytes a rule reads: mapped or as written.
    pub(super) fn bytes(&self, mapped: bool) -> &[u8] {
        match self.map(mapped) {
            Some(m) => &m.bytes,
            None => self.text.as_bytes(),
        }
    }

    /// The text offset of an offset into [`Self::bytes`].
    pub(super) fn offset(&self, mapped: bool, at: usize) -> usize {
        let Some(m) = self.map(mapped) else {
            return at;
        };
        if at >= m.bytes.len() {
            return self.text.len();
        }
        let mut offset = m.marks[at / MARK];
        for _ in 0..at % MARK {
            offset += self.text[offset..].chars().next().map_or(1, char::len_utf8);
        }
        offset
    }

    /// Whether an offset into [`Self::bytes`] starts a character.
    pub(super) fn starts_char(&self, mapped: bool, at: usize) -> bool {
        self.map(mapped).is_some() || self.text.is_char_boundary(at)
    }

    /// The mapped bytes, when a mapped rule reads a text that is not all ASCII.
    fn map(&self, mapped: bool) -> Option<&Mapped> {
        if !mapped {
            return None;
        }
        self.mapped.get_or_init(|| Mapped::new(self.text)).as_ref()
    }
}

impl Mapped {
    /// A text's mapping, `None` when it is all ASCII. Runs of ASCII are copied whole.
    fn new(text: &str) -> Option<Self> {
        let from = text.as_bytes();
        let first = ascii_prefix(from);
        if first == from.len() {
            return None;
        }
        let mut bytes = Vec::with_capacity(from.len());
        let mut marks = Vec::with_capacity(from.len() / MARK + 1);
        let mut at = 0;
        let mut end = first;
        loop {
            // An ASCII run `at..end`, its own mapping.
            let mut mark = bytes.len().next_multiple_of(MARK);
            while mark < bytes.len() + (end - at) {
                marks.push(at + mark - bytes.len());
                mark += MARK;
            }
            bytes.extend_from_slice(&from[at..end]);
            at = end;
            let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            if bytes.len() % MARK == 0 {
                marks.push(at);
            }
            bytes.push(category(c));
            at += c.len_utf8();
            end = at + from.get(at..).map_or(0, ascii_prefix);
        }
        Some(Self { bytes, marks })
    }
}

/// How many bytes at the start of `bytes` are ASCII, read sixteen at a time.
fn ascii_prefix(bytes: &[u8]) -> usize {
    const HIGH: u128 = u128::from_ne_bytes([0x80; 16]);
    let mut n = 0;
    for chunk in bytes.chunks_exact(16) {
        let Ok(word) = <[u8; 16]>::try_from(chunk) else {
            break;
        };
        if u128::from_ne_bytes(word) & HIGH != 0 {
            break;
        }
        n += 16;
    }
    n + bytes[n..]
        .iter()
        .position(|b| !b.is_ascii())
        .unwrap_or(bytes.len() - n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(pattern: &str) -> Option<Hir> {
        map_hir(&regex_syntax::parse(pattern).ok()?)
    }

    #[test]
    fn the_categories_split_every_non_ascii_character_once() {
        for c in [
            'é',
            'ſ',
            '\u{212a}',
            '٣',
            '\u{a0}',
            '\u{3000}',
            '→',
            '日',
            '😀',
            '\u{10ffff}',
        ] {
            let holders = CATEGORIES
                .iter()
                .filter(|m| m.ranges().iter().any(|r| r.start() <= c && c <= r.end()))
                .count();
            assert_eq!(holders, 1, "{c:?}");
        }
        assert_eq!(category('ſ'), 0x80);
        assert_eq!(category('\u{212a}'), 0x81);
        assert_eq!(category('٣'), 0x82);
        assert_eq!(category('é'), 0x83);
        assert_eq!(category('\u{3000}'), 0x84);
        assert_eq!(category('→'), 0x85);
        for c in ('\u{80}'..='\u{ffff}').step_by(7) {
            assert_eq!(category(c), search(c), "{c:?}");
        }
    }

    #[test]
    fn a_mapped_find_maps_back_to_the_text() {
        let text = format!("{}é token=abc日本 end", "→".repeat(130));
        let hay = Haystack::new(&text);
        let re = mapped(r"token=(\w+)")
            .and_then(|hir| compile_mapped(&hir, 1 << 20))
            .expect("maps");
        let caps = re
            .captures_iter(hay.bytes(true))
            .next()
            .and_then(|c| c.get_group(1))
            .expect("finds");
        let (start, end) = (hay.offset(true, caps.start), hay.offset(true, caps.end));
        assert_eq!(&text[start..end], "abc日本");
        assert_eq!(hay.offset(true, hay.bytes(true).len()), text.len());
    }

    #[test]
    fn every_mapped_offset_maps_back_to_its_character() {
        let text = format!(
            "{}é{}→日本😀{}",
            "a".repeat(100),
            "b".repeat(63),
            "c".repeat(200)
        );
        let hay = Haystack::new(&text);
        let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        assert_eq!(hay.bytes(true).len(), starts.len());
        for (k, &start) in starts.iter().enumerate() {
            assert_eq!(hay.offset(true, k), start, "{k}");
        }
        assert_eq!(Haystack::new("plain").bytes(true), b"plain");
        for n in 0..40 {
            let text = format!("{}é{}", "a".repeat(n), "b".repeat(n));
            assert_eq!(ascii_prefix(text.as_bytes()), n);
            assert_eq!(ascii_prefix(&text.as_bytes()[n + 2..]), n);
        }
    }

    #[test]
    fn a_pattern_that_names_one_non_ascii_character_is_not_mapped() {
        assert!(mapped("a→b").is_none());
        assert!(mapped(r"\p{Greek}+").is_none());
        assert!(mapped(r"(?i)secret\s*[:=]\s*\S{8,}").is_some());
    }
}

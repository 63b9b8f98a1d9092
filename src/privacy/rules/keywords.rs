//! The keyword automaton that picks which rules read a text: one table lookup per byte.
//!
//! Built from aho-corasick's automaton of the keywords (ASCII case ignored, every match
//! reported, overlapping ones too), with its states numbered again so that the states where a
//! keyword ends come last: the scan then tests one number per byte, and reads what a state
//! selects only the first time the text reaches it.

use aho_corasick::automaton::Automaton;
use aho_corasick::nfa::noncontiguous;
use aho_corasick::{Anchored, MatchKind};

/// The keywords' automaton as a table: for each state, the next state for each byte's class.
pub(super) struct Keywords {
    /// Each byte's class (a column of the table).
    classes: [u8; 256],
    /// The next state of each state and class, as the offset of the next state's row.
    next: Vec<u32>,
    /// Columns per row, a power of two.
    stride_log: u32,
    /// The offset of the start state's row.
    start: u32,
    /// The offset of the first row of the states where a keyword ends: a power of two (or
    /// zero when every state is one), at or past the end of the other states' rows, so that a
    /// row is one of those states' exactly when it has a bit at or above this one's set.
    first_match: u32,
    /// For each of those states in order, the rules its keywords select.
    selects: Vec<Vec<usize>>,
    /// The bytes the longest keyword takes.
    longest: usize,
}

impl Keywords {
    /// The automaton of `words`, where `rules_of[w]` are the rules `words[w]` selects. `None`
    /// when aho-corasick cannot build it.
    pub(super) fn new(words: &[String], rules_of: &[Vec<usize>]) -> Option<Self> {
        let nfa = noncontiguous::Builder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(words)
            .ok()?;
        // A byte no keyword holds leads every state where the start state leads it, so all
        // such bytes share a class. A letter shares its class with its other case, which the
        // automaton reads the same.
        let mut classes = [0u8; 256];
        let mut count = 1u8;
        for &b in words.iter().flat_map(|w| w.as_bytes()) {
            let (lower, upper) = (b.to_ascii_lowercase(), b.to_ascii_uppercase());
            if classes[usize::from(lower)] == 0 {
                classes[usize::from(lower)] = count;
                classes[usize::from(upper)] = count;
                count = count.checked_add(1)?;
            }
        }
        // Classes numbered again without gaps, with a byte standing for each.
        let mut renumber = [u8::MAX; 256];
        let mut stand_for = Vec::new();
        for b in 0..=255u8 {
            let c = usize::from(classes[usize::from(b)]);
            if renumber[c] == u8::MAX {
                renumber[c] = u8::try_from(stand_for.len()).ok()?;
                stand_for.push(b);
            }
            classes[usize::from(b)] = renumber[c];
        }
        let stride_log = stand_for.len().next_power_of_two().trailing_zeros();

        // Every state, in the order a walk of the keywords' trie from the start state finds
        // them: each depth before the next. A state's next state for a byte is its trie child
        // for that byte, or else the next state of its failure state (the state of its
        // longest proper suffix) for that byte, as the automaton's own search follows
        // failures; that state lies at a smaller depth, so its edges are known by then. The
        // failure state of a child is the start's for the start's children, and otherwise
        // its parent's failure state's next state for the child's byte.
        let start = nfa.start_state(Anchored::No).ok()?;
        let mut found = vec![start];
        // The index in `found` of each state's failure state.
        let mut fail = vec![0usize];
        let classes_len = stand_for.len();
        let mut edges: Vec<usize> = Vec::new();
        let mut at = 0;
        while at < found.len() {
            let sid = found[at];
            for (c, &b) in stand_for.iter().enumerate() {
                // The child alone: a search anchored at this state follows no failure. The
                // start state leads every byte without a child back to itself.
                let to = nfa.next_state(Anchored::Yes, sid, b);
                let via_fail = (at > 0).then(|| edges.get(fail[at] * classes_len + c).copied());
                let edge = if nfa.is_dead(to) {
                    via_fail.flatten()?
                } else if at == 0 && to == sid {
                    0
                } else {
                    fail.push(via_fail.flatten().unwrap_or(0));
                    found.push(to);
                    found.len() - 1
                };
                edges.push(edge);
            }
            at += 1;
        }
        // Rows: the states without a match first, then those with one from the next power of
        // two on (the rows between are never reached).
        let mut row = vec![0u32; found.len()];
        let (plain, matching): (Vec<usize>, Vec<usize>) =
            (0..found.len()).partition(|&i| !nfa.is_match(found[i]));
        let stride = 1usize << stride_log;
        let first_match = match plain.len().checked_mul(stride)? {
            0 => 0,
            n => n.checked_next_power_of_two()?,
        };
        for (r, &i) in plain.iter().enumerate() {
            row[i] = u32::try_from(r.checked_mul(stride)?).ok()?;
        }
        for (r, &i) in matching.iter().enumerate() {
            row[i] = u32::try_from(first_match.checked_add(r.checked_mul(stride)?)?).ok()?;
        }
        // A power of two long, so that a row and a class masked by its length are always in
        // it.
        let rows_end = first_match.checked_add(matching.len().checked_mul(stride)?)?;
        let mut next = vec![0u32; rows_end.checked_next_power_of_two()?];
        for (i, targets) in edges.chunks(stand_for.len()).enumerate() {
            let base = row[i] as usize;
            for (c, &to) in targets.iter().enumerate() {
                next[base + c] = row[to];
            }
        }
        let selects = matching
            .iter()
            .map(|&i| {
                let sid = found[i];
                let mut rules: Vec<usize> = (0..nfa.match_len(sid))
                    .flat_map(|k| &rules_of[nfa.match_pattern(sid, k).as_usize()])
                    .copied()
                    .collect();
                rules.sort_unstable();
                rules.dedup();
                rules
            })
            .collect();
        Some(Self {
            classes,
            next,
            stride_log,
            start: row[0],
            first_match: u32::try_from(first_match).ok()?,
            selects,
            longest: words.iter().map(String::len).max().unwrap_or(0),
        })
    }

    /// Sets the bit in `on` of each rule a keyword in `text` selects; says whether `text` held
    /// a keyword.
    pub(super) fn select(&self, text: &[u8], on: &mut [u64]) -> bool {
        let mut seen = vec![0u64; self.selects.len().div_ceil(64)];
        let mut any = false;
        let mut reach = |row: u32| {
            let m = ((row - self.first_match) >> self.stride_log) as usize;
            let (word, bit) = (m / 64, 1u64 << (m % 64));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                any = true;
                for &r in &self.selects[m] {
                    on[r / 64] |= 1 << (r % 64);
                }
            }
        };
        let row = self.start;
        // An empty keyword ends at the start.
        if row >= self.first_match {
            reach(row);
        }
        // Each step of a walk waits on the one before, so two walks side by side take little
        // longer than one: one over the first half, one over the rest from as many bytes
        // before it as the longest keyword takes. Every keyword that ends in the rest starts
        // at or after that, so one of the two walks finds each keyword in the text. Each
        // reads eight bytes between tests (see `eight`), and reads them again one test each
        // only when it passed a match state's row.
        let half = text.len() / 2;
        if half < SIDE_BY_SIDE {
            self.walk(row, text, &mut reach);
            return any;
        }
        let first = &text[..half];
        let rest = &text[half - half.min(self.longest)..];
        let (mut a, mut b) = (row, row);
        let pairs = first.len().min(rest.len()) / 8;
        for (x, y) in first.chunks_exact(8).zip(rest.chunks_exact(8)) {
            let (a_end, a_passed) = self.eight(a, x);
            let (b_end, b_passed) = self.eight(b, y);
            a = if a_passed >= self.first_match {
                self.walk(a, x, &mut reach)
            } else {
                a_end
            };
            b = if b_passed >= self.first_match {
                self.walk(b, y, &mut reach)
            } else {
                b_end
            };
        }
        self.walk(a, &first[pairs * 8..], &mut reach);
        self.walk(b, &rest[pairs * 8..], &mut reach);
        any
    }

    /// The next row after `row` for byte `b`.
    fn step(&self, row: u32, b: u8) -> u32 {
        // `next` is a power of two long: a row and a class masked by its length less one are
        // always in it.
        let mask = self.next.len().wrapping_sub(1);
        let at = (row as usize + usize::from(self.classes[usize::from(b)])) & mask;
        self.next.get(at).copied().unwrap_or(self.start)
    }

    /// The row eight bytes lead `row` to, and every row on the way or-ed together: that has
    /// a bit at or above `first_match` set exactly when one of them is a match state's.
    fn eight(&self, mut row: u32, bytes: &[u8]) -> (u32, u32) {
        let mut passed = 0;
        for &b in bytes {
            row = self.step(row, b);
            passed |= row;
        }
        (row, passed)
    }

    /// Walks `bytes` from `row`, handing `reach` each match state's row it passes; the row it
    /// ends at.
    fn walk(&self, mut row: u32, bytes: &[u8], reach: &mut impl FnMut(u32)) -> u32 {
        for &b in bytes {
            row = self.step(row, b);
            if row >= self.first_match {
                reach(row);
            }
        }
        row
    }
}

/// The fewest bytes in each half of a text that is read by two walks side by side.
const SIDE_BY_SIDE: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::AhoCorasick;
    use proptest::prelude::*;

    /// The rules aho-corasick's own overlapping search selects, and whether it found any.
    fn by_aho_corasick(words: &[String], rules_of: &[Vec<usize>], text: &[u8]) -> (Vec<u64>, bool) {
        let ac = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(words)
            .unwrap();
        let rules = rules_of.iter().flatten().max().map_or(0, |m| m + 1);
        let mut on = vec![0u64; rules.div_ceil(64)];
        let mut any = false;
        for m in ac.find_overlapping_iter(text) {
            any = true;
            for &r in &rules_of[m.pattern().as_usize()] {
                on[r / 64] |= 1 << (r % 64);
            }
        }
        (on, any)
    }

    fn by_table(words: &[String], rules_of: &[Vec<usize>], text: &[u8]) -> (Vec<u64>, bool) {
        let table = Keywords::new(words, rules_of).unwrap();
        let rules = rules_of.iter().flatten().max().map_or(0, |m| m + 1);
        let mut on = vec![0u64; rules.div_ceil(64)];
        let any = table.select(text, &mut on);
        (on, any)
    }

    #[test]
    fn the_built_in_keywords_select_what_aho_corasick_selects_over_every_example() {
        let engine = &*super::super::ENGINE;
        assert!(
            engine.keywords.is_some(),
            "the built-in keywords' table builds"
        );
        let table = super::super::keyword_table(
            &engine
                .rules()
                .iter()
                .map(|r| r.spec.clone())
                .collect::<Vec<_>>(),
            &super::super::builtin_required(),
        );
        let (words, rules_of) = (table.words, table.slots_of);
        let mut texts: Vec<String> = Vec::new();
        for r in engine.rules() {
            texts.extend(r.spec.examples.iter().cloned());
            texts.extend(r.spec.negative_examples.iter().cloned());
        }
        // Every example at once, upper-cased, and framed by non-ASCII text.
        texts.push(texts.join("\n"));
        texts.push(
            texts
                .iter()
                .map(|t| t.to_uppercase())
                .collect::<Vec<_>>()
                .join(" "),
        );
        texts.push(format!("→日本 {} ſK", texts.join("é")));
        for text in &texts {
            assert_eq!(
                by_table(&words, &rules_of, text.as_bytes()),
                by_aho_corasick(&words, &rules_of, text.as_bytes()),
                "{text:?}"
            );
        }
    }

    proptest! {
        /// Keywords that overlap, nest and share prefixes, in any case, over text drawn from
        /// their letters.
        #[test]
        fn any_keywords_select_what_aho_corasick_selects(
            words in prop::collection::vec("[abAB=_-]{1,4}", 1..12),
            text in prop::collection::vec(prop::sample::select(b"abAB=_-x\xc3\xa9".to_vec()), 0..400),
        ) {
            let mut unique: Vec<String> = Vec::new();
            for w in words {
                let w = w.to_ascii_lowercase();
                if !unique.contains(&w) {
                    unique.push(w);
                }
            }
            let rules_of: Vec<Vec<usize>> = (0..unique.len()).map(|i| vec![i, i / 2 + 20]).collect();
            prop_assert_eq!(
                by_table(&unique, &rules_of, &text),
                by_aho_corasick(&unique, &rules_of, &text)
            );
        }
    }
}

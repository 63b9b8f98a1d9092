//! What every match of a rule's pattern holds: sets of strings such that a text holding none
//! of one set's strings (ASCII case ignored) holds no match. The keyword pass reads them with
//! the keywords, so a rule selected by a common word (`token`, `key`) reads a text only when
//! the text also holds what its pattern cannot match without (`mattermost`, `datadog`).
//!
//! `build.rs` reads this file too (it works out the built-in rules' sets once, at build time,
//! as the analysis takes a quarter of a second), so it uses nothing but `regex-syntax`.
//!
//! Case folding: under `(?i)` the pattern's `s` also matches `ſ` (U+017F) and its `k` the
//! Kelvin sign (U+212A), which an ASCII-case-blind search does not see as `s` and `k`. The sets
//! leave those two out, so they hold only for texts without them ([`FOLD_PARTNERS`]); a text
//! that holds one is read as if it held every set.

use regex_syntax::hir::{Class, Hir, HirKind};

/// The most strings one set may hold.
const MOST: usize = 16;
/// The fewest bytes each string of a set takes: a shorter one occurs in nearly every text.
const FEWEST: usize = 3;
/// The most sets one rule keeps, the longest first.
const SETS: usize = 2;
/// The most strings a part's language may hold while it is worked out.
const LANGUAGE: usize = 64;

/// The characters outside ASCII that simple case folding makes match an ASCII letter: `ſ`
/// matches `s` and the Kelvin sign `k` under `(?i)`.
pub(crate) const FOLD_PARTNERS: [char; 2] = ['\u{17f}', '\u{212a}'];

/// The pattern in the `regex` crate's dialect: PCRE-style `(?# comment)` groups, which
/// upstream rule sets use, are dropped, and every `\b` and `\B` is made ASCII-only (a Unicode
/// word boundary makes the regex engine fall back to its slowest path on non-ASCII text, and
/// secrets are ASCII).
pub(crate) fn dialect(pattern: &str) -> String {
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

/// The sets of strings (lower case) every match of `pattern` holds one of each of, in a text
/// without [`FOLD_PARTNERS`]: at most [`SETS`], the longest strings first; none for a pattern
/// that does not parse.
pub(crate) fn required(pattern: &str) -> Vec<Vec<String>> {
    let Ok(hir) = regex_syntax::parse(&dialect(pattern)) else {
        return Vec::new();
    };
    let mut sets = Vec::new();
    collect(&hir, &mut sets);
    let mut sets: Vec<Vec<String>> = sets
        .into_iter()
        .filter(|s| usable(s))
        .filter_map(|s| s.into_iter().map(|b| String::from_utf8(b).ok()).collect())
        .collect();
    sets.sort_by_key(|s| std::cmp::Reverse(score(s)));
    sets.dedup();
    sets.truncate(SETS);
    sets
}

/// A set is worth reading when it holds a string and none of its strings is short.
fn usable(set: &[Vec<u8>]) -> bool {
    !set.is_empty() && set.len() <= MOST && set.iter().all(|s| s.len() >= FEWEST)
}

/// The longer a set's shortest string, and the fewer its strings, the fewer texts hold one.
fn score<S: AsRef<[u8]>>(set: &[S]) -> (usize, std::cmp::Reverse<usize>) {
    let shortest = set.iter().map(|s| s.as_ref().len()).min().unwrap_or(0);
    (shortest, std::cmp::Reverse(set.len()))
}

/// The best of `sets` worth reading, if one is.
fn best(sets: Vec<Vec<Vec<u8>>>) -> Option<Vec<Vec<u8>>> {
    sets.into_iter()
        .filter(|s| usable(s))
        .max_by_key(|s| score(s))
}

/// Adds to `sets` sets of strings every match of `hir` holds one of each of. A part whose
/// matches are few strings is one set; a concatenation's match holds a match of each part, and
/// the parts side by side whose matches are few strings match their strings joined (the best
/// run of them is kept); a repetition of at least one holds its part's; an alternation's match
/// holds one branch's, so one of the strings of one set of each branch.
fn collect(hir: &Hir, sets: &mut Vec<Vec<Vec<u8>>>) {
    if let Some(words) = language(hir).filter(|w| usable(w)) {
        sets.push(words);
        return;
    }
    match hir.kind() {
        HirKind::Capture(c) => collect(&c.sub, sets),
        HirKind::Repetition(r) if r.min >= 1 => collect(&r.sub, sets),
        HirKind::Concat(parts) => {
            let mut run: Vec<Vec<Vec<u8>>> = Vec::new();
            for part in parts {
                match language(part) {
                    Some(words) => {
                        // Too many strings alone, its own parts may still require some.
                        if !usable(&words) {
                            collect(part, sets);
                        }
                        run.push(words);
                    }
                    None => {
                        sets.extend(best_run(&std::mem::take(&mut run)));
                        collect(part, sets);
                    }
                }
            }
            sets.extend(best_run(&run));
        }
        HirKind::Alternation(branches) => {
            let mut union = Vec::new();
            for branch in branches {
                let mut of_branch = Vec::new();
                collect(branch, &mut of_branch);
                let Some(set) = best(of_branch) else {
                    return;
                };
                union.extend(set);
            }
            union.sort();
            union.dedup();
            sets.push(union);
        }
        _ => {}
    }
}

/// The best set the parts side by side of some stretch of `run` match, each part's strings
/// given: their strings joined.
fn best_run(run: &[Vec<Vec<u8>>]) -> Option<Vec<Vec<u8>>> {
    let mut found = Vec::new();
    for start in 0..run.len() {
        let mut words = vec![Vec::new()];
        for part in &run[start..] {
            let Some(longer) = joined(&words, part) else {
                break;
            };
            words = longer;
            found.push(words.clone());
        }
    }
    best(found)
}

/// Every string `hir` matches, ASCII letters in lower case, when they are few; in a text
/// without fold partners, so those are left out of classes.
fn language(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let words = match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => vec![Vec::new()],
        HirKind::Literal(lit) => vec![lit.0.to_ascii_lowercase()],
        HirKind::Class(Class::Unicode(class)) => {
            let mut words = Vec::new();
            for range in class.ranges() {
                if u32::from(range.end()) - u32::from(range.start()) >= LANGUAGE as u32 {
                    return None;
                }
                for c in range.start()..=range.end() {
                    if FOLD_PARTNERS.contains(&c) {
                        continue;
                    }
                    let mut buf = [0u8; 4];
                    words.push(c.encode_utf8(&mut buf).as_bytes().to_ascii_lowercase());
                }
            }
            words
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut words = Vec::new();
            for range in class.ranges() {
                if usize::from(range.end() - range.start()) >= LANGUAGE {
                    return None;
                }
                words.extend((range.start()..=range.end()).map(|b| vec![b.to_ascii_lowercase()]));
            }
            words
        }
        HirKind::Capture(c) => language(&c.sub)?,
        HirKind::Concat(parts) => {
            let mut words = vec![Vec::new()];
            for part in parts {
                words = joined(&words, &language(part)?)?;
            }
            words
        }
        HirKind::Alternation(branches) => {
            let mut words = Vec::new();
            for branch in branches {
                words.extend(language(branch)?);
            }
            words
        }
        HirKind::Repetition(r) => {
            let max = r.max.filter(|&m| m <= 4)?;
            let one = language(&r.sub)?;
            let mut words = Vec::new();
            let mut times = vec![Vec::new()];
            for n in 0..=max {
                if n >= r.min {
                    words.extend(times.iter().cloned());
                }
                if n < max {
                    times = joined(&times, &one)?;
                }
            }
            words
        }
    };
    let mut words = words;
    words.sort();
    words.dedup();
    (words.len() <= LANGUAGE).then_some(words)
}

/// Each string of `before` followed by each of `after`, when they are few.
fn joined(before: &[Vec<u8>], after: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if before.len().saturating_mul(after.len()) > LANGUAGE {
        return None;
    }
    let mut words = Vec::with_capacity(before.len() * after.len());
    for b in before {
        for a in after {
            let mut w = b.clone();
            w.extend_from_slice(a);
            words.push(w);
        }
    }
    words.sort();
    words.dedup();
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(pattern: &str) -> Vec<Vec<&'static str>> {
        required(pattern)
            .into_iter()
            .map(|set| {
                set.into_iter()
                    .map(|s| &*Box::leak(s.into_boxed_str()))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_pattern_requires_its_fixed_parts_joined_in_lower_case() {
        assert_eq!(
            sets(
                r"(?i)\b(?:mattermost|mm[_.\-])(?:.|[\n\r]){0,32}?(?:SECRET|TOKEN)[:=]\s*([A-Z0-9]{26})"
            ),
            [
                vec!["secret:", "secret=", "token:", "token="],
                vec!["mattermost", "mm-", "mm.", "mm_"],
            ]
        );
        // Optional parts are joined both ways.
        assert_eq!(
            sets(r"messag(?:e[_-]?)?bird[A-Z]{10}"),
            [vec![
                "messagbird",
                "message-bird",
                "message_bird",
                "messagebird"
            ]]
        );
    }

    #[test]
    fn an_alternation_requires_one_string_of_each_branch() {
        assert_eq!(
            sets(r"(?:ghp_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,})"),
            [vec!["ghp_", "github_pat_"]]
        );
        // A branch that requires nothing long enough leaves the whole alternation without a set.
        assert!(sets(r"(?:ghp_[A-Za-z0-9]{36}|[A-Za-z0-9]{40})").is_empty());
    }

    #[test]
    fn a_part_with_too_many_strings_still_requires_what_its_parts_do() {
        // Optional quotes and `hub` make 25 strings; the names they surround are 5.
        assert_eq!(
            sets(
                r#"(?i)(?:["']?(?:hub)?(?:access|api|notification(?:hub)?)key|sharedaccesskey)["']?\s*=\s*([a-z0-9]{40})"#
            ),
            [vec![
                "accesskey",
                "apikey",
                "notificationhubkey",
                "notificationkey",
                "sharedaccesskey"
            ]]
        );
    }

    #[test]
    fn short_or_many_strings_make_no_set() {
        assert!(sets(r"s\.[A-Za-z0-9]{24}").is_empty());
        assert!(sets(r"[A-Za-z0-9]{32}").is_empty());
        assert!(sets(r"(?i)[a-f][a-f][a-f]x").is_empty());
        assert!(sets("(unclosed").is_empty());
    }

    #[test]
    fn letters_that_fold_to_ascii_ones_are_left_out() {
        // `(?i)s` matches `ſ` and `(?i)k` the Kelvin sign; the sets hold texts without them.
        assert_eq!(sets(r"(?i)sk_[0-9a-f]{48}"), [vec!["sk_"]]);
        assert_eq!(sets(r"ſk_[0-9a-f]{48}"), [vec!["ſk_"]]);
    }

    #[test]
    fn comments_and_word_boundaries_read_as_the_engine_reads_them() {
        assert_eq!(dialect(r"\bkey(?# the name)\B"), r"(?-u:\b)key(?-u:\B)");
    }
}

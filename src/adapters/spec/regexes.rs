//! A regex an adapter file names (`matches`, `regex`, `strip`).
//!
//! A run reads its input with one adapter of several, and a session's records reach only some
//! of that adapter's patterns, while building a regex's search engines costs several times
//! more than checking it. So a pattern is checked when its adapter is read, as the `regex` crate
//! checks it (its syntax, and the size of its automata in both directions, under the crate's
//! default limit), and compiled the first time a value is tested against it. The built-in
//! adapters' patterns were checked when the binary was tested (the automata are most of an
//! adapter's reading time): theirs are taken as written ([`Pattern::checked_before`]).

use regex::Regex;
use regex_automata::nfa::thompson;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// The `regex` crate's default limit on the size of a compiled pattern.
const SIZE_LIMIT: usize = 10 * (1 << 20);

/// A checked regex, compiled on first use; clones share the compiled regex.
#[derive(Clone)]
pub struct Pattern(Arc<Inner>);

struct Inner {
    source: String,
    regex: OnceLock<Regex>,
}

impl Pattern {
    /// Checks `source` as `Regex::new` would, without building its search engines.
    pub fn new(source: &str) -> Result<Self, String> {
        let hir = regex_syntax::parse(source).map_err(|e| e.to_string())?;
        for reverse in [false, true] {
            thompson::Compiler::new()
                .configure(
                    thompson::Config::new()
                        .nfa_size_limit(Some(SIZE_LIMIT))
                        .reverse(reverse)
                        .which_captures(if reverse {
                            thompson::WhichCaptures::None
                        } else {
                            thompson::WhichCaptures::All
                        }),
                )
                .build_from_hir(&hir)
                .map_err(|e| e.to_string())?;
        }
        Ok(Self(Arc::new(Inner {
            source: source.to_owned(),
            regex: OnceLock::new(),
        })))
    }

    /// A pattern already known to pass [`Pattern::new`]'s checks: a built-in adapter's, which
    /// a test reads with every check. Were it to fail to compile after all, it would match
    /// nothing, as a pattern that fails [`Deref`] does.
    pub fn checked_before(source: &str) -> Self {
        Self(Arc::new(Inner {
            source: source.to_owned(),
            regex: OnceLock::new(),
        }))
    }

    /// The pattern as the adapter file writes it.
    pub fn as_str(&self) -> &str {
        &self.0.source
    }
}

impl Deref for Pattern {
    type Target = Regex;

    fn deref(&self) -> &Regex {
        self.0.regex.get_or_init(|| {
            // The check above is the one `Regex::new` makes, so this does not fail; if it did,
            // the pattern would match nothing rather than everything.
            Regex::new(&self.0.source)
                .or_else(|_| Regex::new(r"[^\s\S]"))
                .expect("fixed regex")
        })
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.0.source).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_refused_where_the_regex_crate_refuses_it() {
        for bad in ["(unclosed", r"\p{NoSuchClass}", r"\w{1000}{1000}", "[z-a]"] {
            let ours = Pattern::new(bad).err();
            let theirs = Regex::new(bad).err();
            assert!(
                ours.is_some() && theirs.is_some(),
                "{bad}: {ours:?} / {theirs:?}"
            );
        }
        let p = Pattern::new(r"^\s*<hook_context>").expect("valid");
        assert!(p.is_match("  <hook_context> x"));
        assert!(!p.is_match("x <hook_context>"));
        assert_eq!(p.as_str(), r"^\s*<hook_context>");
    }
}

//! Turn selection (`--turns 3-7,12`, `--exclude-turns 5`) and the conversation view
//! (`--view conversation`): steps on the report model, each recorded in it, so every page and
//! JSON file made from it, and every later `rerender`, sees only what was kept. Kept turns keep
//! their numbers and anchors; what is left out is absent from the model, not hidden.

use std::collections::BTreeSet;
use std::fmt;

use super::model::{Outcome, Report, Selection, View};
use super::summarize;

/// A set of 1-based turn numbers, written as `3-7,12`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnSet {
    ranges: Vec<(usize, usize)>,
}

impl TurnSet {
    /// Parses `3-7,12`; `flag` names the option in messages.
    pub fn parse(flag: &str, text: &str) -> Result<Self, String> {
        let mut ranges = Vec::new();
        for part in text.split(',').map(str::trim) {
            let bad = || {
                format!("{flag} {text}: `{part}` is not a turn number or range (write e.g. 3-7,12)")
            };
            let num = |s: &str| s.trim().parse::<usize>().ok().filter(|n| *n >= 1);
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (num(a).ok_or_else(bad)?, num(b).ok_or_else(bad)?),
                None => {
                    let n = num(part).ok_or_else(bad)?;
                    (n, n)
                }
            };
            if a > b {
                return Err(format!("{flag} {text}: range `{part}` runs backwards"));
            }
            ranges.push((a, b));
        }
        Ok(Self { ranges })
    }

    /// Whether turn `n` is in the set.
    pub fn contains(&self, n: usize) -> bool {
        self.ranges.iter().any(|(a, b)| (*a..=*b).contains(&n))
    }
}

impl fmt::Display for TurnSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .ranges
            .iter()
            .map(|(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// Which turns to keep: those in `turns` (all when absent) and not in `exclude`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TurnSelection {
    /// `--turns`.
    pub turns: Option<TurnSet>,
    /// `--exclude-turns`.
    pub exclude: Option<TurnSet>,
}

impl TurnSelection {
    /// Whether nothing is selected out.
    pub fn is_all(&self) -> bool {
        self.turns.is_none() && self.exclude.is_none()
    }

    fn keeps(&self, n: usize) -> bool {
        self.turns.as_ref().is_none_or(|s| s.contains(n))
            && !self.exclude.as_ref().is_some_and(|s| s.contains(n))
    }
}

/// Keeps only the selected turns of a report, recomputes its totals from them, and records
/// the selection in the report. Subagents that no kept turn started are dropped with the rest.
/// Errors when the selection keeps no turn.
pub fn apply(report: &mut Report, sel: &TurnSelection) -> Result<(), String> {
    if sel.is_all() {
        return Ok(());
    }
    let numbers: BTreeSet<usize> = report.turns.iter().map(|t| t.number).collect();
    let before = report.turns.len();
    report.turns.retain(|t| sel.keeps(t.number));
    if report.turns.is_empty() {
        let have = match (numbers.first(), numbers.last()) {
            (Some(a), Some(b)) => format!("turns {a} to {b}"),
            _ => "no turns".to_owned(),
        };
        return Err(format!(
            "the turn selection keeps none of the session's {have}"
        ));
    }
    report.unlinked_subagents.clear();
    report.summary = summarize(&report.turns);
    report.selection = Some(Selection {
        turns: sel.turns.as_ref().map(ToString::to_string),
        exclude: sel.exclude.as_ref().map(ToString::to_string),
        kept: report.turns.iter().map(|t| t.number).collect(),
        of: before,
    });
    Ok(())
}

/// Keeps what `view` shows and records it: the conversation view drops every turn's process
/// steps and outcome and the unlinked subagents, leaving prompts, responses and the session's
/// facts and totals. A report already in the conversation view stays in it.
pub fn view(report: &mut Report, view: View) {
    if view == View::Full {
        return;
    }
    for turn in &mut report.turns {
        turn.steps.clear();
        turn.outcome = Outcome::default();
    }
    report.unlinked_subagents.clear();
    report.view = View::Conversation;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ranges_and_single_turns() {
        let s = TurnSet::parse("--turns", "3-7, 12").unwrap_or_default();
        assert!(s.contains(3) && s.contains(7) && s.contains(12));
        assert!(!s.contains(2) && !s.contains(8));
        assert_eq!(s.to_string(), "3-7,12");
    }

    #[test]
    fn rejects_bad_selections_naming_the_flag() {
        for bad in ["", "0", "7-3", "a-b", "3-", "1,,2"] {
            let e = TurnSet::parse("--turns", bad).err().unwrap_or_default();
            assert!(e.starts_with("--turns"), "{bad}: {e}");
        }
    }

    #[test]
    fn exclusion_applies_after_inclusion() {
        let sel = TurnSelection {
            turns: TurnSet::parse("--turns", "1-5").ok(),
            exclude: TurnSet::parse("--exclude-turns", "2,4").ok(),
        };
        let kept: Vec<usize> = (1..=6).filter(|n| sel.keeps(*n)).collect();
        assert_eq!(kept, vec![1, 3, 5]);
    }
}

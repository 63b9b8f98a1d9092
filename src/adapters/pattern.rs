//! File-name patterns: the one dialect adapters use for session, subagent and tree files.
//!
//! A pattern names one file or folder: `*` is any run of characters and `?` any one character,
//! within that name; `/` separates the names of a path pattern. `{name}` placeholders are
//! filled by the caller (a session's id, a parent record's field) with values that can name a
//! file only: nothing that climbs out of the folder.

use std::path::Path;

/// Matches a file-name pattern: `*` is any run of characters, `?` any one character.
pub(crate) fn wildcard(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    // The length of the character at `j` (a literal byte of a longer character steps one).
    let step = |j: usize| {
        name.get(j..)
            .and_then(|rest| rest.chars().next())
            .map_or(1, char::len_utf8)
    };
    let (mut i, mut j) = (0, 0);
    // The last `*` seen, and where in the name its run would end if it took one more character.
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some(b'*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(b'?') => {
                i += 1;
                j += step(j);
            }
            Some(c) if *c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + step(sj);
                    star = Some((si, j));
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|c| *c == b'*')
}

/// What a pattern's one `*` matched in a name (`agent-*.jsonl` and `agent-a1.jsonl` give
/// `a1`); `None` when the pattern has no `*` or more than one, or the match is empty.
pub(crate) fn star_match(pattern: &str, name: &str) -> Option<String> {
    let (head, tail) = pattern.split_once('*')?;
    if tail.contains('*') {
        return None;
    }
    let id = name.strip_prefix(head)?.strip_suffix(tail)?;
    (!id.is_empty()).then(|| id.to_owned())
}

/// Whether a file's name ends in `.<ending>` (`jsonl`, `jsonl.zst`).
pub(crate) fn has_ending(path: &Path, ending: &str) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.len() > ending.len() + 1 && n.ends_with(ending) && {
            let dot = n.len() - ending.len() - 1;
            n.as_bytes().get(dot) == Some(&b'.')
        }
    })
}

/// The names of the `{name}` placeholders of a pattern, in order.
pub(crate) fn placeholders(pattern: &str) -> impl Iterator<Item = &str> {
    pattern
        .split('{')
        .skip(1)
        .filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

/// Replaces `{name}` placeholders with `value(name)`; `None` when a value is missing or
/// unsafe as a file name (see [`name_part`]).
pub(crate) fn substitute(pattern: &str, value: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = pattern;
    while let Some(start) = rest.find('{') {
        let end = rest[start..].find('}')? + start;
        out.push_str(&rest[..start]);
        let value = value(&rest[start + 1..end])?;
        out.push_str(name_part(&value)?);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// A value usable as (part of) one file name: not empty, no separator, not `.` or `..`.
pub(crate) fn name_part(value: &str) -> Option<&str> {
    (!value.is_empty() && !value.contains(['/', '\\']) && value != ".." && value != ".")
        .then_some(value)
}

/// A file's display name: its name only, never the folders above it.
pub fn display_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "input".to_owned())
}

/// A file's name relative to the folder of `main` (`subagents/agent-a1.jsonl`), or its
/// display name when it is not under that folder.
pub(crate) fn relative_name(main: &Path, path: &Path) -> String {
    main.parent()
        .and_then(|d| path.strip_prefix(d).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|| display_name(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_matches_file_name_patterns() {
        assert!(wildcard("agent-*.jsonl", "agent-1a2b.jsonl"));
        assert!(!wildcard("agent-*.jsonl", "agent-1a2b.meta.json"));
        assert!(!wildcard("agent-*.jsonl", "x.jsonl"));
        assert!(wildcard("*", "anything"));
        assert!(wildcard("a*b*c", "aXbYc"));
        assert!(!wildcard("a*b*c", "aXc"));
        assert!(wildcard("??", "07"));
        assert!(!wildcard("??", "2026"));
        assert!(wildcard(
            "rollout-*-a1.jsonl",
            "rollout-2026-01-02T00-00-01-a1.jsonl"
        ));
        assert!(!wildcard(
            "rollout-*-a1.jsonl",
            "rollout-2026-01-02T00-00-01-a1.jsonl.zst"
        ));
        assert!(wildcard("*.jsonl", ".jsonl"));
        assert!(wildcard("?-*", "é-x"), "one character, not one byte");
        assert!(!wildcard("?", "ab"));
    }

    #[test]
    fn placeholders_cannot_leave_the_folder() {
        let id = |v: &'static str| move |name: &str| (name == "id").then(|| v.to_owned());
        assert_eq!(substitute("{id}", id("msg_1")).as_deref(), Some("msg_1"));
        assert_eq!(
            substitute("a/{id}.json", id("m")).as_deref(),
            Some("a/m.json")
        );
        assert_eq!(substitute("{id}", id("../x")), None);
        assert_eq!(substitute("{id}", id("..")), None);
        assert_eq!(substitute("{id}", id(".")), None);
        assert_eq!(substitute("{id}", id("")), None);
        assert_eq!(substitute("{other}", id("m")), None);
        assert_eq!(
            placeholders("a/{x}/{y}.json").collect::<Vec<_>>(),
            ["x", "y"]
        );
    }

    #[test]
    fn a_star_match_is_what_the_one_star_took() {
        assert_eq!(
            star_match("agent-*.jsonl", "agent-a1.jsonl").as_deref(),
            Some("a1")
        );
        assert_eq!(star_match("agent-*.jsonl", "agent-.jsonl"), None);
        assert_eq!(star_match("*-*.jsonl", "a-b.jsonl"), None);
        assert!(has_ending(Path::new("s.jsonl.zst"), "jsonl.zst"));
        assert!(!has_ending(Path::new(".jsonl"), "jsonl"));
        assert!(!has_ending(Path::new("sjsonl"), "jsonl"));
    }
}

//! Path privacy: paths under the working directory become repository-relative, home folders
//! become `~`, and no user name survives in a path.

use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

use super::Redactor;
use crate::events::SessionFacts;

/// Any home folder, whoever's: the user name is the segment after `/Users/` or `/home/`.
static HOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:/Users|/home)/[^/\s:;,'`<>|\\]+|[A-Za-z]:\\Users\\[^\\\s:;,'`<>|]+")
        .expect("fixed regex")
});

/// Claude's dash-encoded project folder names (`-Users-alice-work-app`).
static DASHED_HOME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-(?:Users|home)-[A-Za-z0-9_.]+-").expect("fixed regex"));

/// Rewrites paths for one session.
pub struct Paths {
    /// Working directories, longest first, so nested ones win.
    cwds: Vec<String>,
    /// Known home folders, longest first.
    homes: Vec<String>,
}

impl Paths {
    /// A path redactor for a session's working directories and the given home folders.
    pub fn new(facts: &SessionFacts, homes: &[String]) -> Self {
        let mut cwds: Vec<String> = facts
            .cwds
            .iter()
            .chain(facts.cwd.iter())
            .map(|c| c.trim_end_matches('/').to_owned())
            .filter(|c| c.len() > 1)
            .collect();
        cwds.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        cwds.dedup();
        let mut homes: Vec<String> = homes
            .iter()
            .map(|h| h.trim_end_matches(['/', '\\']).to_owned())
            .filter(|h| h.len() > 1)
            .collect();
        homes.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        homes.dedup();
        Self { cwds, homes }
    }
}

impl Redactor for Paths {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for cwd in &self.cwds {
            if out.contains(cwd.as_str()) {
                out = Cow::Owned(relativize(&out, cwd));
            }
        }
        for home in &self.homes {
            if out.contains(home.as_str()) {
                out = Cow::Owned(replace_prefix(&out, home, "~"));
            }
        }
        if HOME.is_match(&out) {
            out = Cow::Owned(HOME.replace_all(&out, "~").into_owned());
        }
        if DASHED_HOME.is_match(&out) {
            out = Cow::Owned(DASHED_HOME.replace_all(&out, "-~-").into_owned());
        }
        out
    }
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '@' | '+')
}

/// `cwd/x` → `x`, a bare `cwd` → `.`; `cwd2` (a different folder) is left alone.
fn relativize(text: &str, cwd: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(cwd) {
        let after = &rest[i + cwd.len()..];
        out.push_str(&rest[..i]);
        match after.chars().next() {
            Some('/') if after[1..].starts_with(|c: char| is_path_char(c)) => {
                rest = &after[1..];
            }
            Some(c) if is_path_char(c) || c == '/' => {
                out.push_str(cwd);
                rest = after;
            }
            _ => {
                out.push('.');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Replaces `prefix` where it stands as a whole path prefix.
fn replace_prefix(text: &str, prefix: &str, with: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        out.push_str(&rest[..i]);
        if after.starts_with(|c: char| is_path_char(c)) {
            out.push_str(prefix);
        } else {
            out.push_str(with);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Replaces every home folder (and Claude's dash-encoded form) in a message with `~`, for text
/// that names no session, such as a batch's error lines.
pub fn scrub_home(text: &str) -> String {
    let out = HOME.replace_all(text, "~");
    DASHED_HOME.replace_all(&out, "-~-").into_owned()
}

/// The last segment of a working directory: the project's name.
pub fn project_name(cwd: &str) -> String {
    cwd.trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or(".")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(cwd: &str, home: &str) -> Paths {
        let facts = SessionFacts {
            cwd: Some(cwd.to_owned()),
            ..Default::default()
        };
        Paths::new(&facts, &[home.to_owned()])
    }

    #[test]
    fn paths_under_the_working_directory_become_relative() {
        let p = paths("/Users/dain/work/app", "/root");
        assert_eq!(
            p.redact("edit /Users/dain/work/app/src/a.rs now"),
            "edit src/a.rs now"
        );
        assert_eq!(p.redact("cd /Users/dain/work/app && make"), "cd . && make");
        assert_eq!(p.redact("/Users/dain/work/app2/x"), "~/work/app2/x");
    }

    #[test]
    fn no_user_name_survives_in_a_path() {
        let p = paths("/srv/app", "/home/zed");
        assert_eq!(p.redact("/home/zed/.config/x"), "~/.config/x");
        assert_eq!(p.redact("see /Users/someone/else.txt"), "see ~/else.txt");
        assert_eq!(p.redact(r"C:\Users\bob\proj"), r"~\proj");
        assert_eq!(p.redact("-Users-bob-work-app"), "-~-work-app");
        assert_eq!(p.redact("/homepage/index"), "/homepage/index");
    }

    #[test]
    fn project_name_is_the_last_segment() {
        assert_eq!(project_name("/Users/dain/work/app/"), "app");
        assert_eq!(project_name("/"), ".");
    }
}

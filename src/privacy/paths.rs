//! Path privacy and identity. Known values go first, in every encoding a log uses (raw,
//! JSON-escaped, URL-encoded, `file://`, Claude's dash-encoded project folder): the home
//! folder, the user name, the host name, every working directory and repository root the log
//! names. Then each remaining absolute path is classified: under a home folder → `~/…`; tool
//! trees (package registries, site-packages, node_modules, temporary folders) → fixed
//! placeholders; system paths stay; anything else → a keyed pseudonym that keeps the basename.

use aho_corasick::AhoCorasick;
use hmac::{Hmac, KeyInit, Mac};
use regex::{Captures, Regex};
use sha2::Sha256;
use std::borrow::Cow;
use std::sync::LazyLock;

use super::Redactor;
use crate::events::SessionFacts;

/// Any home folder, whoever's: the user name is the segment after `/Users/` or `/home/`. The
/// word boundary after `/root` is ASCII-only: a Unicode one makes the regex engine fall back to
/// its slowest path on any non-ASCII text, and it only ever redacts more.
static HOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:/Users|/home)/[^/\s:;,'`<>|\\]+|/root(?-u:\b)|[A-Za-z]:\\Users\\[^\\\s:;,'`<>|]+|[A-Za-z]:/Users/[^/\s:;,'`<>|]+")
        .expect("fixed regex")
});

/// Claude's dash-encoded project folder names (`-Users-alice-work-app`).
static DASHED_HOME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"-(?:Users|home)-[A-Za-z0-9_.]+-").expect("fixed regex"));

/// An absolute path under a folder that holds files (not a URL path), with what precedes it.
static ABSOLUTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?P<pre>^|[\s"'`(=,\[{<>|;]|file://)(?P<path>/(?:tmp|var|private|opt|usr|etc|srv|mnt|media|Volumes|data|workspace|workspaces|builds|code|src|nix|run|snap|app|Library|System|Applications|bin|sbin|lib|lib64|dev|proc|sys)(?:/[A-Za-z0-9._@%+~-]+)*/?)"#)
        .expect("fixed regex")
});

/// Folders whose paths say nothing about the user: they stay as they are.
const SYSTEM: &[&str] = &[
    "/usr/",
    "/etc/",
    "/bin/",
    "/sbin/",
    "/lib/",
    "/lib64/",
    "/dev/",
    "/proc/",
    "/sys/",
    "/System/",
    "/Library/",
    "/Applications/",
    "/opt/homebrew/",
    "/nix/store/",
    "/run/",
];

/// Tool trees: a marker in the path and the placeholder that replaces everything up to it.
const TOOL_TREES: &[(&str, &str)] = &[
    ("/node_modules/", "<node_modules>/"),
    ("/site-packages/", "<site-packages>/"),
    ("/dist-packages/", "<site-packages>/"),
    ("/.cargo/registry/src/", "<cargo-registry>/"),
    ("/.cargo/git/checkouts/", "<cargo-git>/"),
    ("/.rustup/toolchains/", "<rustup>/"),
    ("/go/pkg/mod/", "<go-mod>/"),
    ("/.m2/repository/", "<maven>/"),
    ("/.gradle/caches/", "<gradle>/"),
    ("/.npm/", "<npm>/"),
    ("/.pnpm-store/", "<pnpm>/"),
    ("/.cache/", "<cache>/"),
];

/// Temporary folders, replaced by `<tmp>`.
static TEMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:/private)?(?:/tmp|/var/tmp|/var/folders/[^/]+/[^/]+/[A-Z])(?:/|$)")
        .expect("fixed regex")
});

/// User names too short or too common to replace in free text.
const COMMON_NAMES: &[&str] = &[
    "root", "admin", "user", "users", "dev", "test", "guest", "ubuntu", "runner", "node", "app",
    "home", "build", "ci", "debian", "vagrant", "docker", "git", "www", "data", "code", "work",
];

/// What a known value is replaced by.
#[derive(Debug, Clone)]
enum Known {
    /// A repository root or working directory: paths under it become relative.
    Repo,
    /// Replaced by fixed text where it stands as a whole path prefix or segment.
    Prefix(String),
    /// Replaced by fixed text wherever it occurs.
    Anywhere(String),
}

/// Rewrites paths and identity for one session.
pub struct Paths {
    /// Known values and their replacement, longest first.
    known: Vec<(String, Known)>,
    /// Finds any known value in one pass, so text that holds none skips the replacements.
    any_known: Option<AhoCorasick>,
    /// User names to replace only as `user@host` or a path segment, with the pattern that
    /// finds them.
    short_users: Vec<(String, Option<Regex>)>,
    /// The per-report pseudonym key; never written out.
    key: [u8; 32],
}

/// The user's identity from the environment: home folders, user names, host names.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// Home folders.
    pub homes: Vec<String>,
    /// User names.
    pub users: Vec<String>,
    /// Host names.
    pub hosts: Vec<String>,
}

impl Identity {
    /// Home folders only (user and host names are inferred from them and the log).
    pub fn homes(homes: &[String]) -> Self {
        Self {
            homes: homes.to_vec(),
            ..Self::default()
        }
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.retain(|s| s.len() > 1);
    v.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    v.dedup();
    v
}

/// A path's encodings as logs write them.
fn encodings(path: &str) -> Vec<String> {
    let mut out = vec![path.to_owned()];
    out.push(path.replace('\\', "\\\\"));
    out.push(path.replace('/', "\\/"));
    out.push(path.replace('/', "%2F"));
    out.push(path.replace('/', "%2f"));
    out.push(path.replace(' ', "%20"));
    out.retain(|s| s.len() > 1);
    out.dedup();
    out
}

/// Claude's project folder name for a path: every character but letters and digits is `-`.
pub fn dash_encoded(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The user name in a home folder path (`/home/bob` → `bob`).
fn user_of(home: &str) -> Option<String> {
    let caps =
        Regex::new(r"^(?:/Users|/home)/([^/\\]+)|^[A-Za-z]:[\\/]Users[\\/]([^/\\]+)").ok()?;
    let c = caps.captures(home)?;
    c.get(1).or(c.get(2)).map(|m| m.as_str().to_owned())
}

impl Paths {
    /// A path redactor for a session's working directories and the given home folders.
    pub fn new(facts: &SessionFacts, homes: &[String]) -> Self {
        Self::with_identity(facts, &Identity::homes(homes))
    }

    /// A path redactor for a session and the user's identity.
    pub fn with_identity(facts: &SessionFacts, id: &Identity) -> Self {
        let cwds = sorted(
            facts
                .cwds
                .iter()
                .chain(facts.cwd.iter())
                .map(|c| c.trim_end_matches(['/', '\\']).to_owned())
                .collect(),
        );
        let mut homes: Vec<String> = id
            .homes
            .iter()
            .map(|h| h.trim_end_matches(['/', '\\']).to_owned())
            .collect();
        // A working directory under a home folder names that home folder.
        for c in &cwds {
            if let Some(m) = HOME.find(c) {
                homes.push(m.as_str().to_owned());
            }
        }
        let homes = sorted(homes);
        let mut users: Vec<String> = id.users.clone();
        users.extend(homes.iter().filter_map(|h| user_of(h)));
        let users = sorted(users);

        let mut known: Vec<(String, Known)> = Vec::new();
        for c in &cwds {
            for e in encodings(c) {
                let kind = if e == *c || e.contains("\\\\") || e.contains("\\/") {
                    Known::Repo
                } else {
                    Known::Anywhere(".".into())
                };
                known.push((e, kind));
            }
            let dashed = dash_encoded(c);
            if dashed.len() > 3 {
                known.push((dashed, Known::Anywhere(format!("-{}", project_name(c)))));
            }
        }
        for h in &homes {
            for e in encodings(h) {
                known.push((e, Known::Prefix("~".into())));
            }
            known.push((dash_encoded(h), Known::Anywhere("-~".into())));
        }
        for host in &id.hosts {
            if host.len() >= 4 && host != "localhost" {
                known.push((host.clone(), Known::Anywhere("<host>".into())));
            }
        }
        let mut short_users = Vec::new();
        for u in &users {
            if u.len() >= 5 && !COMMON_NAMES.contains(&u.to_ascii_lowercase().as_str()) {
                known.push((u.clone(), Known::Prefix("<user>".into())));
            } else {
                short_users.push((u.clone(), short_user_pattern(u)));
            }
        }
        known.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        known.dedup_by(|a, b| a.0 == b.0);
        let mut key = [0u8; 32];
        if getrandom::fill(&mut key).is_err() {
            // No random source: a key from the process's hasher seed, still never written out.
            use std::hash::{BuildHasher, Hasher};
            for chunk in key.chunks_mut(8) {
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_usize(chunk.as_ptr() as usize);
                chunk.copy_from_slice(&h.finish().to_le_bytes());
            }
        }
        // Without the automaton every text goes through the replacements, as if it matched.
        let any_known = AhoCorasick::new(known.iter().map(|(k, _)| k)).ok();
        Self {
            known,
            any_known,
            short_users,
            key,
        }
    }

    /// A stable pseudonym for a folder within this report.
    fn pseudonym(&self, folder: &str) -> String {
        let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key) else {
            return "<path>".into();
        };
        mac.update(folder.as_bytes());
        let tag = mac.finalize().into_bytes();
        format!("<path-{:02x}{:02x}{:02x}>", tag[0], tag[1], tag[2])
    }

    /// Classifies one absolute path that no known value covered.
    fn classify(&self, path: &str) -> String {
        for (marker, placeholder) in TOOL_TREES {
            if let Some(i) = path.find(marker) {
                return format!("{placeholder}{}", &path[i + marker.len()..]);
            }
        }
        if let Some(m) = TEMP.find(path) {
            let rest = &path[m.end()..];
            return if rest.is_empty() {
                "<tmp>".into()
            } else {
                format!("<tmp>/{rest}")
            };
        }
        if SYSTEM
            .iter()
            .any(|s| path.starts_with(s) || path == s.trim_end_matches('/'))
        {
            return path.to_owned();
        }
        let trimmed = path.trim_end_matches('/');
        match trimmed.rsplit_once('/') {
            Some((folder, base)) if !folder.is_empty() => {
                format!("{}/{base}", self.pseudonym(folder))
            }
            // A top-level folder alone (`/tmp`, `/srv`) says nothing.
            _ => path.to_owned(),
        }
    }
}

impl Redactor for Paths {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        // A replacement only ever adds a known value where one was already found, so text
        // without any skips the loop whole.
        if self.any_known.as_ref().is_none_or(|ac| ac.is_match(text)) {
            for (needle, kind) in &self.known {
                if !out.contains(needle.as_str()) {
                    continue;
                }
                out = Cow::Owned(match kind {
                    Known::Repo => relativize(&out, needle),
                    Known::Prefix(with) => replace_prefix(&out, needle, with),
                    Known::Anywhere(with) => out.replace(needle.as_str(), with),
                });
            }
        }
        for (u, pattern) in &self.short_users {
            if out.contains(u.as_str()) {
                out = Cow::Owned(replace_short_user(&out, pattern.as_ref()));
            }
        }
        // Every remaining rewrite needs a path separator (or a dash-encoded folder's dash).
        let separator = memchr::memchr2(b'/', b'\\', out.as_bytes()).is_some();
        if separator && HOME.is_match(&out) {
            out = Cow::Owned(HOME.replace_all(&out, "~").into_owned());
        }
        if memchr::memchr(b'-', out.as_bytes()).is_some() && DASHED_HOME.is_match(&out) {
            out = Cow::Owned(DASHED_HOME.replace_all(&out, "-~-").into_owned());
        }
        if separator && ABSOLUTE.is_match(&out) {
            let replaced = ABSOLUTE.replace_all(&out, |c: &Captures<'_>| {
                let pre = c.name("pre").map_or("", |m| m.as_str());
                let path = c.name("path").map_or("", |m| m.as_str());
                format!("{pre}{}", self.classify(path))
            });
            if let Cow::Owned(s) = replaced {
                out = Cow::Owned(s);
            }
        }
        out
    }
}

/// Where a short or common user name stands as `name@host` or a whole path segment.
fn short_user_pattern(user: &str) -> Option<Regex> {
    Regex::new(&format!(
        r"(?P<a>^|[\s/\\]){}(?P<b>@[A-Za-z0-9]|[/\\])",
        regex::escape(user)
    ))
    .ok()
}

/// A short or common user name, replaced only as `name@host` or a whole path segment.
fn replace_short_user(text: &str, pattern: Option<&Regex>) -> String {
    match pattern {
        Some(re) => re.replace_all(text, "${a}<user>${b}").into_owned(),
        None => text.to_owned(),
    }
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '@' | '+')
}

/// `cwd/x` → `x`, a bare `cwd` → `.`; `cwd2` (a different folder) is left alone.
fn relativize(text: &str, cwd: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let sep_len = if cwd.contains("\\\\") || cwd.contains("\\/") {
        2
    } else {
        1
    };
    while let Some(i) = rest.find(cwd) {
        let after = &rest[i + cwd.len()..];
        out.push_str(&rest[..i]);
        let sep = after.starts_with('/') || after.starts_with('\\');
        match after.chars().next() {
            Some(_)
                if sep && after.len() > sep_len && after[sep_len..].starts_with(is_path_char) =>
            {
                rest = &after[sep_len..];
            }
            Some(c) if is_path_char(c) || c == '/' || c == '\\' => {
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
        let before_ok = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric());
        out.push_str(&rest[..i]);
        if after.starts_with(is_path_char) || !before_ok {
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
    fn known_values_in_every_encoding() {
        let p = paths("/home/dainty/work/app", "/home/dainty");
        assert_eq!(
            p.redact(r#"{"p":"\/home\/dainty\/work\/app\/src\/a.rs"}"#),
            r#"{"p":"src\/a.rs"}"#
        );
        assert_eq!(p.redact("file:///home/dainty/work/app/x.rs"), "file://x.rs");
        assert_eq!(
            p.redact("?path=%2Fhome%2Fdainty%2Fnotes"),
            "?path=~%2Fnotes"
        );
        assert_eq!(
            p.redact("~/.claude/projects/-home-dainty-work-app/s.jsonl"),
            "~/.claude/projects/-app/s.jsonl"
        );
        assert_eq!(p.redact("-home-dainty-other"), "-~-other");
        assert_eq!(p.redact("signed off by dainty"), "signed off by <user>");
        let w = paths(r"C:\Users\bob\proj", r"C:\Users\bob");
        assert_eq!(
            w.redact(r#"{"f":"C:\\Users\\bob\\proj\\src\\x.rs"}"#),
            r#"{"f":"src\\x.rs"}"#
        );
    }

    #[test]
    fn short_user_names_only_as_segments_or_user_at_host() {
        let p = paths("/home/dev/app", "/home/dev");
        assert_eq!(p.redact("ssh dev@build-box"), "ssh <user>@build-box");
        assert_eq!(p.redact("the dev server"), "the dev server");
        assert_eq!(p.redact("cd /home/dev/app/src"), "cd src");
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
    fn other_paths_are_classified() {
        let p = paths("/srv/app", "/home/zed");
        assert_eq!(
            p.redact("at /srv/other/lib/node_modules/react/index.js"),
            "at <node_modules>/react/index.js"
        );
        assert_eq!(
            p.redact("/usr/lib/python3.12/site-packages/yaml/x.py"),
            "<site-packages>/yaml/x.py"
        );
        assert_eq!(
            p.redact("wrote /tmp/tmp.abc/out.txt"),
            "wrote <tmp>/tmp.abc/out.txt"
        );
        assert_eq!(p.redact("/var/folders/xy/abc123/T/x.log"), "<tmp>/x.log");
        assert_eq!(
            p.redact("run /usr/bin/env and /etc/hosts"),
            "run /usr/bin/env and /etc/hosts"
        );
        let a = p.redact("open /data/projects/secret-client/notes.md");
        assert!(
            a.starts_with("open <path-") && a.ends_with(">/notes.md"),
            "{a}"
        );
        assert!(!a.contains("secret-client"), "{a}");
        assert_eq!(p.redact("open /data/projects/secret-client/notes.md"), a);
        assert_eq!(
            p.redact("GET https://api.example.com/var/x"),
            "GET https://api.example.com/var/x"
        );
        assert_eq!(p.redact("route /api/users"), "route /api/users");
    }

    #[test]
    fn project_name_is_the_last_segment() {
        assert_eq!(project_name("/Users/dain/work/app/"), "app");
        assert_eq!(project_name("/"), ".");
    }
}

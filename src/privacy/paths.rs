//! Path privacy and identity. Known values go first, in every encoding a log uses (raw,
//! JSON-escaped, URL-encoded, `file://`, Claude's dash-encoded project folder): the home
//! folder, the user name, the host name, every working directory and repository root the log
//! names. Then each remaining absolute path is classified: under a home folder → `~/…`; tool
//! trees (package registries, site-packages, node_modules, temporary folders) → fixed
//! placeholders; system paths stay; anything else → a keyed pseudonym that keeps the basename.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use hmac::{Hmac, KeyInit, Mac};
use memchr::memmem::Finder;
use regex::{Captures, Regex};
use sha2::Sha256;
use std::borrow::Cow;
use std::sync::LazyLock;

use super::Redactor;
use crate::events::SessionFacts;

/// A home folder's user segment: no separator, space or quote, an apostrophe only between
/// letters (`O'Brien`).
macro_rules! seg {
    () => {
        r"[^/\\\s:;,'`<>|\x22]+(?:'[A-Za-z][^/\\\s:;,'`<>|\x22]*)*"
    };
}

/// Any home folder, whoever's, in every form a log writes: `/home/x`, macOS `/Users/x` (also
/// under `/Volumes/…` and WSL's `/mnt/c`), `/root`, `C:\Users\x` (also JSON-escaped and with
/// forward slashes), WSL's `\\wsl$\…\home\x`, UNC home shares (`\\server\home\x`,
/// `\\server\x$`), URL-encoded (`%2FUsers%2Fx`) and `~x/`. The word boundary after `/root` is
/// ASCII-only: a Unicode one makes the regex engine fall back to its slowest path on any
/// non-ASCII text, and it only ever redacts more.
static HOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:/Volumes/[^/\s]+(?: [^/\s]+)*|/mnt/[a-z])?/Users/",
        seg!(),
        r"|/home/",
        seg!(),
        r"|/root(?-u:\b)",
        r"|[A-Za-z]:(?:\\){1,4}Users(?:\\){1,4}",
        seg!(),
        r"|[A-Za-z]:/Users/",
        seg!(),
        r"|(?:\\){2,8}wsl(?:\$|\.localhost)(?:\\){1,4}[^\\\s]+(?:\\){1,4}home(?:\\){1,4}",
        seg!(),
        r"|(?:\\){2,8}[A-Za-z0-9._-]+(?:\\){1,4}(?:[A-Za-z0-9._$-]+(?:\\){1,4})?(?i:users|home|homes|profiles?)\$?(?:\\){1,4}",
        seg!(),
        r"|(?:\\){2,8}[A-Za-z0-9._-]+(?:\\){1,4}[A-Za-z][A-Za-z0-9._-]*\$",
        r"|(?i:%2F(?:Users|home)%2F)(?:[^%/\s&\x22'<>?#]|%20)+",
        r"|(?i:%5CUsers%5C)[^%\\\s&\x22'<>?#]+",
    ))
    .expect("fixed regex")
});

/// A home folder whose user segment holds spaces (`/Users/First Last/…`), up to the separator
/// after it: each further word starts with a capital, so `/home/bob foo/x` stays a list.
static HOME_SPACED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?:/Users/|/home/|[A-Za-z]:\\Users\\|[A-Za-z]:\\\\Users\\\\|[A-Za-z]:/Users/)",
        seg!(),
        r"(?: [A-Z]",
        r"[^/\\\s:;,'`<>|\x22]*(?:'[A-Za-z][^/\\\s:;,'`<>|\x22]*)*",
        r")+(?P<sep>\\\\|[/\\])",
    ))
    .expect("fixed regex")
});

/// Another user's home as `~name/` (after a space, quote or line start).
static TILDE_USER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)(?P<pre>^|[\s"'`(=:,\[])~[A-Za-z_][A-Za-z0-9_.-]{0,31}(?P<post>/)"#)
        .expect("fixed regex")
});

/// A macOS volume's name (`/Volumes/Alice's Drive/…`): often its owner's.
static VOLUME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"/Volumes/",
        seg!(),
        r"(?: [A-Z0-9][^/\\\s:;,'`<>|\x22]*(?:'[A-Za-z][^/\\\s:;,'`<>|\x22]*)*)*"
    ))
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
    /// Known values and their replacement, longest first, each with its searcher.
    known: Vec<(String, Known, Finder<'static>)>,
    /// Finds any known value in one pass, so text that holds none skips the replacements.
    /// Leftmost-first, so that it searches with its SIMD prefilter: whether a text holds any
    /// known value does not depend on the match kind.
    any_known: Option<AhoCorasick>,
    /// The per-report pseudonym key; never written out.
    key: [u8; 32],
}

pub use super::identity::Identity;

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
        // A working directory under a home folder names that home folder, its user's
        // segment whole (`/Users/First Last`).
        for c in &cwds {
            homes.extend(super::identity::home_of(c));
        }
        let homes = sorted(homes);

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
        let any_known = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .build(known.iter().map(|(k, _)| k))
            .ok();
        let known = known
            .into_iter()
            .map(|(k, kind)| {
                let finder = Finder::new(k.as_bytes()).into_owned();
                (k, kind, finder)
            })
            .collect();
        Self {
            known,
            any_known,
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
            for (needle, kind, finder) in &self.known {
                if finder.find(out.as_bytes()).is_none() {
                    continue;
                }
                out = Cow::Owned(match kind {
                    Known::Repo => relativize(&out, needle),
                    Known::Prefix(with) => replace_prefix(&out, needle, with),
                    Known::Anywhere(with) => out.replace(needle.as_str(), with),
                });
            }
        }
        // Every remaining rewrite needs a path separator, a URL-encoded one or a dash-encoded
        // folder's dash.
        let separator = memchr::memchr2(b'/', b'\\', out.as_bytes()).is_some();
        if separator {
            out = scrub_homes(out);
        } else if memchr::memchr(b'%', out.as_bytes()).is_some() && HOME.is_match(&out) {
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

/// Every home folder form ([`HOME`], [`HOME_SPACED`], [`TILDE_USER`]) to `~`, and macOS
/// volume names to `<volume>`.
fn scrub_homes(text: Cow<'_, str>) -> Cow<'_, str> {
    let mut out = text;
    // A spaced home is a home: text without one skips both.
    if may_hold_home(out.as_bytes()) && HOME.is_match(&out) {
        if memchr::memchr(b' ', out.as_bytes()).is_some() && HOME_SPACED.is_match(&out) {
            out = Cow::Owned(HOME_SPACED.replace_all(&out, "~${sep}").into_owned());
        }
        out = Cow::Owned(HOME.replace_all(&out, "~").into_owned());
    }
    if memchr::memchr(b'~', out.as_bytes()).is_some() && TILDE_USER.is_match(&out) {
        out = Cow::Owned(TILDE_USER.replace_all(&out, "${pre}~${post}").into_owned());
    }
    if memchr::memmem::find(out.as_bytes(), b"/Volumes/").is_some() && VOLUME.is_match(&out) {
        let replaced = VOLUME.replace_all(&out, |c: &Captures<'_>| {
            let whole = c.get(0).map_or("", |m| m.as_str());
            let start = c.get(0).map_or(0, |m| m.start());
            // macOS's own `/System/Volumes/Data` is no one's.
            if out[..start].ends_with("System") {
                whole.to_owned()
            } else {
                "/Volumes/<volume>".to_owned()
            }
        });
        if let Cow::Owned(s) = replaced {
            out = Cow::Owned(s);
        }
    }
    out
}

/// Words every form of [`HOME`] holds one of: `Users` (macOS, Windows), `/home/`, `/root`,
/// two backslashes (UNC and WSL shares) and `%` (URL-encoded); each searched with a searcher
/// built once.
static HOME_WORDS: LazyLock<[Finder<'static>; 4]> = LazyLock::new(|| {
    [b"Users".as_slice(), b"/home/", b"/root", b"\\\\"].map(|w| Finder::new(w).into_owned())
});

/// Whether [`HOME`] can match in `text`: a text without any of [`HOME_WORDS`] holds no home.
fn may_hold_home(text: &[u8]) -> bool {
    memchr::memchr(b'%', text).is_some() || HOME_WORDS.iter().any(|w| w.find(text).is_some())
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
    let out = scrub_homes(Cow::Borrowed(text));
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
        let w = paths(r"C:\Users\bob\proj", r"C:\Users\bob");
        assert_eq!(
            w.redact(r#"{"f":"C:\\Users\\bob\\proj\\src\\x.rs"}"#),
            r#"{"f":"src\\x.rs"}"#
        );
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
    fn every_home_folder_form_of_any_user() {
        let p = paths("/srv/app", "/home/zed");
        let cases = [
            (r"C:\Users\Kim\AppData\x", r"~\AppData\x"),
            (r#"{"cwd":"C:\\Users\\Kim\\src"}"#, r#"{"cwd":"~\\src"}"#),
            ("C:/Users/kim/src", "~/src"),
            (r"C:\Users\KIMLEE~1\AppData", r"~\AppData"),
            ("/mnt/c/Users/kim/Documents", "~/Documents"),
            (r"\\wsl$\Ubuntu\home\kim\x", r"~\x"),
            (r"\\wsl.localhost\Ubuntu-22.04\home\kim\x", r"~\x"),
            (r"\\fileserver\home\kim\docs", r"~\docs"),
            (r"\\fs01\kim$\docs", r"~\docs"),
            ("/Users/kim.lee/Desktop", "~/Desktop"),
            ("/Volumes/Macintosh HD/Users/kim/x", "~/x"),
            ("/Volumes/Kim's Drive/backup", "/Volumes/<volume>/backup"),
            ("/Users/Kim Lee/work/x.md", "~/work/x.md"),
            (r"C:\Users\Kim Lee\x", r"~\x"),
            (r"C:\Users\O'Brien\x", r"~\x"),
            (
                "vscode://file/%2FUsers%2Fkim%2Fx.rs",
                "vscode://file/~%2Fx.rs",
            ),
            ("?p=%2Fhome%2FKim%20Lee%2Fx", "?p=~%2Fx"),
            ("file:///home/kim/notes.md", "file://~/notes.md"),
            ("cat ~kim/.ssh/config", "cat ~/.ssh/config"),
            ("-Users-kim-work-shop", "-~-work-shop"),
            ("C--Users-Kim-proj", "C--~-proj"),
        ];
        for (text, want) in cases {
            assert_eq!(p.redact(text), want, "{text}");
        }
        // Lists of paths and words after a home stay words.
        assert_eq!(p.redact("ls /home/bob src/x"), "ls ~ src/x");
        assert_eq!(p.redact("'/home/bob' and ~ alone"), "'~' and ~ alone");
    }

    #[test]
    fn the_logs_own_home_with_a_space_is_known_whole() {
        let p = paths(r"C:\Users\First Last\proj", "/root");
        assert_eq!(p.redact(r"C:\Users\First Last\AppData\x"), r"~\AppData\x");
        assert_eq!(p.redact(r"cd C:\Users\First Last\proj\src"), "cd src");
        assert_eq!(p.redact("C--Users-First-Last-proj"), "-proj");
    }

    /// Texts made of a session's known values in their encodings, cut anywhere, and
    /// separators and words around them.
    fn pieced() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let pieces = prop_oneof![
            Just("/Users/dain/work/app".to_owned()),
            Just(r"\/Users\/dain".to_owned()),
            Just("%2FUsers%2Fdain".to_owned()),
            Just("-Users-dain-work-app".to_owned()),
            Just("/Users/dain".to_owned()),
            "[/\\% a-z-]{0,6}",
            any::<String>(),
        ];
        proptest::collection::vec((pieces, 0..24usize), 0..6).prop_map(|v| {
            v.into_iter()
                .map(|(p, cut)| p.chars().take(cut).collect::<String>())
                .collect()
        })
    }

    proptest::proptest! {
        /// The one-pass search says a text holds a known value exactly when one of the known
        /// values' own searchers finds it in the text, and each searcher finds its value
        /// exactly where `str::contains` does.
        #[test]
        fn the_known_value_searches_agree_with_contains(text in pieced()) {
            let p = paths("/Users/dain/work/app", "/Users/dain");
            let any = p.known.iter().any(|(k, _, _)| text.contains(k.as_str()));
            let ac = p.any_known.as_ref().map(|ac| ac.is_match(&text));
            proptest::prop_assert_eq!(ac, Some(any));
            for (k, _, finder) in &p.known {
                proptest::prop_assert_eq!(
                    finder.find(text.as_bytes()).is_some(),
                    text.contains(k.as_str())
                );
            }
        }
    }

    proptest::proptest! {
        /// A text the home check passes over holds no home folder the regex finds.
        #[test]
        fn the_home_check_passes_over_no_home(text in pieced()) {
            if !may_hold_home(text.as_bytes()) {
                proptest::prop_assert!(!HOME.is_match(&text), "{:?}", text);
            }
        }
    }

    #[test]
    fn every_home_form_holds_a_home_word() {
        for text in [
            "/Users/kim",
            "/home/kim",
            "/root",
            r"C:\Users\kim",
            r"\\srv\kim$",
            r"\\wsl$\Ubuntu\home\kim",
            "%2fhome%2fkim",
        ] {
            assert!(
                HOME.is_match(text) && may_hold_home(text.as_bytes()),
                "{text}"
            );
        }
    }

    #[test]
    fn project_name_is_the_last_segment() {
        assert_eq!(project_name("/Users/dain/work/app/"), "app");
        assert_eq!(project_name("/"), ".");
    }
}

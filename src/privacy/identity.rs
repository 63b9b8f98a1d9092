//! Identity: who the person sharing a notebook is, learned from the machine and from the log
//! itself before anything is projected, then removed from every string.
//!
//! [`Identity::machine`] reads the environment (`HOME`, `USER`, `LOGNAME`, `HOSTNAME`, …), the
//! host name the OS reports, git's `user.name`/`user.email` and the account's full name in
//! `/etc/passwd`. [`Identity::learn_session`] adds what the log states: its working
//! directories (and so its author's home), `git config` output, commit author lines, `gh auth
//! status`, shell prompts `user@host`, `uname -a`, `hostname`/`whoami`/`id` output, ssh key
//! comments and `/etc/passwd` lines. [`Scrub`] then replaces, after the path stage:
//!
//! - e-mail addresses, except reserved example domains and `noreply`-style addresses;
//! - full names, user names of five characters or more and host names of five or more,
//!   wherever they stand as a word (ASCII case-insensitive);
//! - shorter or common user and host names only where they name someone: `user@host`, a path
//!   segment, `~user`, `host\user`, `uname -a`, and the owner columns of `ls -l`, `ps` and `id`;
//! - the name on commit trailer lines (`Author:`, `Co-authored-by:`, …) and the user and full
//!   name of a human account's `/etc/passwd` line, whoever's they are.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::{Captures, Regex};
use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, OnceLock};

use super::Redactor;
use crate::events::{Event, EventKind, Session};
use rayon::prelude::*;

/// What a user name is replaced by.
pub const USER: &str = "<user>";
/// What a host name is replaced by.
pub const HOST: &str = "<host>";
/// What a person's full name is replaced by.
pub const NAME: &str = "<name>";
/// What an e-mail address is replaced by.
pub const EMAIL: &str = "<email>";

/// The most values of one kind learned from one session: a log that states thousands of names
/// (a long `git log`) costs no more than this many patterns.
const MAX_LEARNED: usize = 256;

/// A user name shorter than this, or a common one, is replaced only where it names someone.
const WORD_MIN: usize = 5;

/// User names that are ordinary words or shared accounts: replaced only where they name
/// someone (`user@host`, a path segment, a column of `ls -l`), never in prose.
const COMMON_USERS: &[&str] = &[
    "admin",
    "administrator",
    "android",
    "app",
    "build",
    "builder",
    "ci",
    "code",
    "coder",
    "daemon",
    "data",
    "debian",
    "default",
    "deploy",
    "email",
    "host",
    "name",
    "dev",
    "developer",
    "docker",
    "git",
    "guest",
    "home",
    "jenkins",
    "jovyan",
    "local",
    "master",
    "mobile",
    "node",
    "nobody",
    "owner",
    "public",
    "python",
    "root",
    "runner",
    "server",
    "service",
    "student",
    "system",
    "test",
    "tester",
    "ubuntu",
    "user",
    "users",
    "vagrant",
    "vscode",
    "work",
    "www",
    "www-data",
];

/// Host names that are ordinary words or distribution defaults: replaced only where they
/// name a host (`user@host`, `uname -a`, `host\user`).
const COMMON_HOSTS: &[&str] = &[
    "alpine",
    "archlinux",
    "box",
    "buildkitsandbox",
    "codespaces",
    "container",
    "debian",
    "desktop",
    "dev",
    "devbox",
    "devcontainer",
    "docker-desktop",
    "fedora",
    "host",
    "imac",
    "kali",
    "laptop",
    "linux",
    "localhost",
    "mac",
    "macbook",
    "macbook-air",
    "macbook-pro",
    "mac-mini",
    "nixos",
    "pc",
    "raspberrypi",
    "runner",
    "sandbox",
    "server",
    "ubuntu",
    "vm",
    "workstation",
];

/// Names that agents and services sign commits with: kept on trailer lines, never learned.
const SERVICE_NAMES: &[&str] = &[
    "anthropic",
    "claude",
    "claude code",
    "codex",
    "copilot",
    "cursor",
    "dependabot",
    "gemini",
    "gemini cli",
    "github",
    "github actions",
    "gitlab",
    "openai",
    "opencode",
    "renovate",
    "web-flow",
];

/// The user's identity: home folders, user names, host names, full names and e-mail
/// addresses.
#[derive(Debug, Clone, Default)]
pub struct Identity {
    /// Home folders.
    pub homes: Vec<String>,
    /// User names (account names, GitHub handles).
    pub users: Vec<String>,
    /// Host names, short and fully qualified.
    pub hosts: Vec<String>,
    /// Full names.
    pub names: Vec<String>,
    /// E-mail addresses.
    pub emails: Vec<String>,
}

impl Identity {
    /// Home folders only (user and host names are inferred from them and the log).
    pub fn homes(homes: &[String]) -> Self {
        let mut id = Self::default();
        for h in homes {
            id.add_home(h);
        }
        id
    }

    /// The identity of the user running tracebook, read once per process: the environment,
    /// the host name the OS reports, git's `user.name` and `user.email`, and the account's
    /// full name in `/etc/passwd`.
    pub fn machine() -> &'static Identity {
        static MACHINE: OnceLock<Identity> = OnceLock::new();
        MACHINE.get_or_init(|| {
            Identity::from_sources(
                |k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()),
                |p| std::fs::read_to_string(p).ok(),
                os_host_names(),
            )
        })
    }

    /// The identity from the given environment, files and OS host names (testable without
    /// the real machine).
    pub fn from_sources(
        env: impl Fn(&str) -> Option<String>,
        read: impl Fn(&Path) -> Option<String>,
        os_hosts: Vec<String>,
    ) -> Self {
        let mut id = Self::default();
        for k in ["HOME", "USERPROFILE"] {
            if let Some(h) = env(k) {
                id.add_home(&h);
            }
        }
        for k in ["USER", "LOGNAME", "USERNAME"] {
            if let Some(u) = env(k) {
                id.add_user(&u);
            }
        }
        for k in ["HOSTNAME", "COMPUTERNAME", "HOST"] {
            if let Some(h) = env(k) {
                id.add_host(&h);
            }
        }
        for h in os_hosts {
            id.add_host(&h);
        }
        for file in ["/etc/hostname", "/proc/sys/kernel/hostname"] {
            if let Some(h) = read(Path::new(file)) {
                id.add_host(h.trim());
            }
        }
        // git's own order: the XDG file, then ~/.gitconfig.
        let mut configs: Vec<PathBuf> = Vec::new();
        if let Some(x) = env("XDG_CONFIG_HOME") {
            configs.push(Path::new(&x).join("git/config"));
        }
        for h in id.homes.clone() {
            configs.push(Path::new(&h).join(".config/git/config"));
            configs.push(Path::new(&h).join(".gitconfig"));
        }
        for c in configs {
            if let Some(text) = read(&c) {
                id.read_gitconfig(&text);
            }
        }
        if let Some(passwd) = read(Path::new("/etc/passwd")) {
            let users: BTreeSet<String> = id.users.iter().cloned().collect();
            // Line by line, as the regex matches: its own compiling is left to a line whose
            // numbers are not ASCII digits.
            for line in passwd.split('\n') {
                match passwd_line(line) {
                    PasswdLine::Fields(f) => {
                        if users.contains(f[0]) {
                            id.add_name(gecos_name(f[4]));
                        }
                    }
                    PasswdLine::Not => {}
                    PasswdLine::Unsure => {
                        for c in PASSWD.captures_iter(line) {
                            if users.contains(&c["user"]) {
                                id.add_name(gecos_name(&c["gecos"]));
                            }
                        }
                    }
                }
            }
        }
        id
    }

    /// Adds what a session's log states about its author, subagents included. A string is
    /// searched by the learning patterns only when a literal that every one of them needs
    /// occurs in it.
    pub fn learn_session(&mut self, session: &Session) {
        let f = &session.facts;
        for c in f.cwd.iter().chain(&f.cwds) {
            if let Some(h) = home_of(c) {
                self.add_home(&h);
            }
        }
        // Every string the privacy stage redacts: a log can put anything anywhere.
        for s in [
            &f.id,
            &f.parent,
            &f.branch,
            &f.model,
            &f.version,
            &f.started_at,
            &f.ended_at,
        ]
        .into_iter()
        .flatten()
        .chain(f.cwd.iter())
        .chain(&f.cwds)
        .chain([&session.source])
        {
            self.learn_text(s);
        }
        // The events on every core, each run of them into its own list of facts; the lists
        // are then taken in the events' order, so the identity ends as one pass in order
        // leaves it (each list keeps what it saw first, up to its cap).
        let found: Vec<Facts> = session
            .events
            .par_chunks(EVENTS_PER_TASK)
            .map(|events| {
                let mut facts = Facts::default();
                for e in events {
                    facts.read_event(e);
                }
                facts
            })
            .collect();
        for facts in found {
            for (fact, value) in facts.0 {
                self.fact(fact, &value);
            }
        }
        for sub in &session.subagents {
            self.learn_text(&sub.agent_id);
            self.learn_session(&sub.session);
        }
    }

    /// Adds what one text states: `git config` output, commit author lines, `gh auth
    /// status`, shell prompts, `uname -a`, ssh key comments, `/etc/passwd` and `id` lines.
    pub fn learn_text(&mut self, text: &str) {
        self.read_text(text);
    }

    fn add_home(&mut self, home: &str) {
        let home = home.trim().trim_end_matches(['/', '\\']);
        if home.len() < 2 || self.homes.len() >= MAX_LEARNED || !home.contains(['/', '\\']) {
            return;
        }
        if let Some(u) = user_of(home) {
            self.add_user(&u);
        }
        push_new(&mut self.homes, home);
    }

    fn add_user(&mut self, user: &str) {
        let user = user.trim();
        let valid = (2..=64).contains(&user.chars().count())
            && user.starts_with(|c: char| c.is_alphanumeric() || c == '_')
            && user
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '-' | ' ' | '\''))
            && !user.starts_with('<')
            // The superuser is everyone's: `root` in `ls -l` or `uid=0(root)` names no one.
            && !user.eq_ignore_ascii_case("root");
        if !valid || self.users.len() >= MAX_LEARNED {
            return;
        }
        // A Windows account folder named after the person ("First Last") is a full name too.
        if user.contains(' ') {
            self.add_name(user);
        }
        push_new(&mut self.users, user);
    }

    fn add_host(&mut self, host: &str) {
        let host = host.trim().trim_end_matches('.');
        let valid = (2..=253).contains(&host.len())
            && host.starts_with(|c: char| c.is_ascii_alphanumeric())
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
            && host.chars().any(|c| c.is_ascii_alphabetic())
            && !host.eq_ignore_ascii_case("localhost")
            && !host.eq_ignore_ascii_case("localhost.localdomain");
        if !valid || self.hosts.len() >= MAX_LEARNED {
            return;
        }
        push_new(&mut self.hosts, host);
        // The short name of a fully qualified one (`box.corp.lan`, `Alices-MBP.local`).
        if let Some((short, _)) = host.split_once('.')
            && short.len() >= 2
        {
            push_new(&mut self.hosts, short);
        }
    }

    fn add_name(&mut self, name: &str) {
        let name = name.trim().trim_matches('"');
        let words = name.split_whitespace().count();
        let valid = (2..=6).contains(&words)
            && name.len() <= 80
            && name.chars().any(char::is_alphabetic)
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '\'' | '-' | ','))
            && !is_service(name);
        if !valid || self.names.len() >= MAX_LEARNED {
            return;
        }
        push_new(&mut self.names, name);
    }

    fn add_email(&mut self, email: &str) {
        let email = email.trim().trim_matches(['<', '>', '"']);
        let valid = EMAIL_SHAPE.is_match(email) && email.len() <= 254;
        if !valid || self.emails.len() >= MAX_LEARNED || keep_email(email) {
            return;
        }
        push_new(&mut self.emails, email);
    }
}

/// A kind of fact about the author that learning finds.
#[derive(Debug, Clone, Copy)]
enum Fact {
    Home,
    User,
    Host,
    Name,
    Email,
}

/// Events one task of [`Identity::learn_session`] reads.
const EVENTS_PER_TASK: usize = 256;

/// The facts some events state, in the order they state them, for an identity to take.
#[derive(Default)]
struct Facts(Vec<(Fact, String)>);

impl Learn for Facts {
    fn fact(&mut self, fact: Fact, value: &str) {
        self.0.push((fact, value.to_owned()));
    }
}

impl Learn for Identity {
    fn fact(&mut self, fact: Fact, value: &str) {
        match fact {
            Fact::Home => self.add_home(value),
            Fact::User => self.add_user(value),
            Fact::Host => self.add_host(value),
            Fact::Name => self.add_name(value),
            Fact::Email => self.add_email(value),
        }
    }
}

/// How texts, commands and events are read for facts about the author: into an identity
/// itself, or into a list of facts it takes later.
trait Learn {
    /// Takes one fact.
    fn fact(&mut self, fact: Fact, value: &str);

    /// Reads every string of one event the privacy stage redacts: a log can put anything
    /// anywhere.
    fn read_event(&mut self, e: &Event) {
        if let Some(t) = &e.timestamp {
            self.read_text(t);
        }
        match &e.kind {
            EventKind::Prompt { text } | EventKind::Assistant { text } => self.read_text(text),
            EventKind::Thinking { text: Some(t) } | EventKind::Compaction { summary: Some(t) } => {
                self.read_text(t)
            }
            EventKind::Failure(failure) => {
                if let Some(id) = &failure.call_id {
                    self.read_text(id);
                }
            }
            EventKind::ToolCall(call) => {
                for s in [&call.call_id, &call.name]
                    .into_iter()
                    .chain(&call.agent_id)
                    .chain(&call.command)
                    .chain(&call.paths)
                    .chain(&call.label)
                    .chain(call.todos.iter().map(|t| &t.text))
                {
                    self.read_text(s);
                }
                json_strings(&call.input, &mut |s| self.read_text(s));
                if let Some(r) = &call.result {
                    for s in [&r.output].into_iter().chain(&r.patch).chain(&r.timestamp) {
                        self.read_text(s);
                    }
                    if let Some(c) = &call.command {
                        self.read_command(c, &r.output);
                    }
                }
            }
            _ => {}
        }
    }

    /// Adds what one text states: `git config` output, commit author lines, `gh auth
    /// status`, shell prompts, `uname -a`, ssh key comments, `/etc/passwd` and `id` lines.
    fn read_text(&mut self, text: &str) {
        let found = triggers(text);
        if !found.contains(&true) {
            return;
        }
        // A terminal's colours would hide a prompt from the patterns.
        let cleaned;
        let text = if text.contains('\x1b') {
            cleaned = super::clean::Clean { keep_images: true }
                .redact(text)
                .into_owned();
            cleaned.as_str()
        } else {
            text
        };
        // Text a tool printed as JSON holds its lines as `\n` escapes.
        let unescaped;
        let text = if text.contains("\\n") {
            unescaped = text
                .replace("\\n", "\n")
                .replace("\\t", "\t")
                .replace("\\\"", "\"")
                .replace("\\\\", "\\");
            unescaped.as_str()
        } else {
            text
        };
        let has = |t: Trigger| found[t as usize];
        if has(Trigger::GitUser) {
            for c in GIT_CONFIG_LIST.captures_iter(text) {
                match &c["key"].to_ascii_lowercase()[..] {
                    "name" => self.fact(Fact::Name, c["value"].trim()),
                    _ => self.fact(Fact::Email, c["value"].trim()),
                }
            }
        }
        if has(Trigger::GitSection) {
            self.read_gitconfig(text);
        }
        if has(Trigger::Trailer) {
            for c in TRAILER.captures_iter(text) {
                if !is_service_signer(&c["name"], &c["mail"]) {
                    self.fact(Fact::Name, c["name"].trim());
                    self.fact(Fact::Email, c["mail"].trim());
                }
            }
        }
        if has(Trigger::Gh) {
            for c in GH_ACCOUNT.captures_iter(text) {
                self.fact(Fact::User, &c["user"]);
            }
        }
        if has(Trigger::At) {
            // The prompt regex (and its compiling) only where a line can hold a prompt.
            let prompts = may_hold_prompt(text).then(|| PROMPT.captures_iter(text));
            for c in prompts
                .into_iter()
                .flatten()
                .chain(SSH_KEY.captures_iter(text))
            {
                let (user, host) = (&c["user"], &c["host"]);
                // `alice@example.com # …` is an address, not a prompt; an ssh key's comment
                // can be an address too.
                if local_host(host) {
                    self.fact(Fact::User, user);
                    self.fact(Fact::Host, host);
                } else {
                    self.fact(Fact::Email, &format!("{user}@{host}"));
                }
            }
        }
        if has(Trigger::Kernel) {
            for c in UNAME.captures_iter(text) {
                self.fact(Fact::Host, &c["host"]);
            }
        }
        if has(Trigger::Colon) && may_hold_passwd_line(text) {
            for c in PASSWD.captures_iter(text) {
                if human_uid(&c["uid"]) {
                    self.fact(Fact::User, &c["user"]);
                    self.fact(Fact::Name, gecos_name(&c["gecos"]));
                    self.fact(Fact::Home, &c["home"]);
                }
            }
        }
        if has(Trigger::Uid) {
            for c in ID_USER.captures_iter(text) {
                if human_uid(&c["uid"]) {
                    self.fact(Fact::User, &c["user"]);
                }
            }
        }
        if has(Trigger::Hostname) {
            for c in STATIC_HOSTNAME.captures_iter(text) {
                self.fact(Fact::Host, &c["host"]);
            }
        }
        if has(Trigger::Whoami) {
            for c in WHOAMI_TEXT.captures_iter(text) {
                self.fact(Fact::Host, &c["host"]);
                self.fact(Fact::User, &c["user"]);
            }
        }
    }

    /// Adds what a command that asks for identity printed: `hostname`, `whoami`, `id -un`,
    /// `git config user.name`, `echo $HOME`, … (several joined by `&&` or `;` print one line
    /// each).
    fn read_command(&mut self, command: &str, output: &str) {
        let asks: Vec<Ask> = command
            .split("&&")
            .flat_map(|c| c.split(';'))
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(ask_of)
            .collect();
        if asks.is_empty() || asks.contains(&Ask::Other) {
            return;
        }
        let lines: Vec<&str> = output
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        for (ask, line) in asks.iter().zip(lines) {
            match ask {
                Ask::Host => self.fact(Fact::Host, line),
                Ask::User => self.fact(Fact::User, line),
                Ask::Whoami => match line.split_once('\\') {
                    Some((host, user)) => {
                        self.fact(Fact::Host, host);
                        self.fact(Fact::User, user);
                    }
                    None => self.fact(Fact::User, line),
                },
                Ask::Name => self.fact(Fact::Name, line),
                Ask::Email => self.fact(Fact::Email, line),
                Ask::Home => self.fact(Fact::Home, line),
                Ask::Shortlog => {}
                Ask::Other => {}
            }
        }
        if asks.contains(&Ask::Shortlog) {
            for c in SHORTLOG.captures_iter(output) {
                self.fact(Fact::Name, c["name"].trim());
            }
        }
    }

    /// `[user]` name and email of a git config file's text.
    fn read_gitconfig(&mut self, text: &str) {
        let mut in_user = false;
        for line in text.lines() {
            let l = line.trim();
            if l.starts_with('[') {
                in_user = l.eq_ignore_ascii_case("[user]");
                continue;
            }
            if !in_user {
                continue;
            }
            if let Some((k, v)) = l.split_once('=') {
                let v = v.trim().trim_matches('"');
                match k.trim().to_ascii_lowercase().as_str() {
                    "name" => self.fact(Fact::Name, v),
                    "email" => self.fact(Fact::Email, v),
                    _ => {}
                }
            }
        }
    }
}

fn push_new(list: &mut Vec<String>, value: &str) {
    if !list.iter().any(|v| v == value) {
        list.push(value.to_owned());
    }
}

/// Whether a host name in `user@host` is a machine's own name rather than a domain: no dot,
/// or a local suffix (`.local`, `.lan`, `.home`, `.internal`, `.localdomain`).
fn local_host(host: &str) -> bool {
    let lower = host.to_ascii_lowercase();
    !lower.contains('.')
        || [
            ".local",
            ".lan",
            ".home",
            ".internal",
            ".localdomain",
            ".home.arpa",
        ]
        .iter()
        .any(|s| lower.ends_with(s))
}

/// Whether a name is one that agents and services sign with.
fn is_service(name: &str) -> bool {
    let lower = name.to_lowercase();
    lower.contains("[bot]") || lower.ends_with(" bot") || SERVICE_NAMES.contains(&lower.as_str())
}

/// Whether a commit line's signer is an agent or a service: a known name or its first word
/// (`Claude Opus 4.6`), a `[bot]`, or a `noreply` address that is not a person's GitHub one.
fn is_service_signer(name: &str, mail: &str) -> bool {
    let name = name.trim();
    let first = name.split_whitespace().next().unwrap_or("").to_lowercase();
    let mail = mail.trim().trim_matches(['<', '>']).to_ascii_lowercase();
    let noreply = mail.split_once('@').is_some_and(|(local, domain)| {
        matches!(local, "noreply" | "no-reply") && !domain.starts_with("users.noreply.")
    });
    is_service(name) || SERVICE_NAMES.contains(&first.as_str()) || noreply
}

/// Whether a uid is a person's account rather than a system one.
fn human_uid(uid: &str) -> bool {
    uid.parse::<u64>()
        .is_ok_and(|u| (500..65534).contains(&u) && u != 65534)
}

/// The full name in a GECOS field (`Alice Smith,,,` → `Alice Smith`).
fn gecos_name(gecos: &str) -> &str {
    gecos.split(',').next().unwrap_or("").trim()
}

/// The home folder a path lies under, the user's segment whole (spaces, apostrophes):
/// `/Users/First Last/work` → `/Users/First Last`.
pub fn home_of(path: &str) -> Option<String> {
    HOME_OF
        .captures(path)
        .and_then(|c| c.get(1))
        .map(|m| m.as_str().to_owned())
}

/// The user name of a home folder (`/home/bob` → `bob`).
pub fn user_of(home: &str) -> Option<String> {
    let seg = home_of(home)?;
    let last = seg.rsplit(['/', '\\']).next()?;
    (!last.is_empty()).then(|| last.to_owned())
}

static HOME_OF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^((?:/Volumes/[^/]+)?/Users/[^/\\]+|/home/[^/\\]+|/root|/mnt/[a-z]/Users/[^/\\]+|[A-Za-z]:[\\/]Users[\\/][^/\\]+|\\\\wsl(?:\$|\.localhost)\\[^\\]+\\home\\[^\\]+)(?:[/\\]|$)",
    )
    .expect("fixed regex")
});

/// A string that is an e-mail address and nothing else.
static EMAIL_SHAPE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}$")
        .expect("fixed regex")
});

/// What the learning patterns need, one literal per group of patterns.
#[derive(Clone, Copy)]
enum Trigger {
    GitUser,
    GitSection,
    Trailer,
    Gh,
    At,
    Kernel,
    Colon,
    Uid,
    Hostname,
    Whoami,
}

/// How many triggers there are.
const TRIGGERS: usize = Trigger::Whoami as usize + 1;

/// Literals in trigger order; several literals may map to one trigger. Case-sensitive, with
/// the spellings tools print, so the automaton's fast prefilter applies.
const TRIGGER_WORDS: &[(&str, Trigger)] = &[
    ("user.name", Trigger::GitUser),
    ("user.email", Trigger::GitUser),
    ("[user]", Trigger::GitSection),
    ("uthor:", Trigger::Trailer),
    ("ommit:", Trigger::Trailer),
    ("-by:", Trigger::Trailer),
    ("-By:", Trigger::Trailer),
    ("ogged in to", Trigger::Gh),
    ("Linux ", Trigger::Kernel),
    ("Darwin ", Trigger::Kernel),
    ("BSD ", Trigger::Kernel),
    ("SunOS ", Trigger::Kernel),
    ("_NT-", Trigger::Kernel),
    ("uid=", Trigger::Uid),
    ("ostname", Trigger::Hostname),
    ("whoami", Trigger::Whoami),
];

/// The trigger literals. Leftmost-first matching lets the automaton search with its SIMD
/// prefilter (the standard kind scans byte by byte); since no literal holds another or begins
/// another at the same place, it finds the same literals.
static LEARN_TRIGGERS: LazyLock<Option<AhoCorasick>> = LazyLock::new(|| {
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostFirst)
        .build(TRIGGER_WORDS.iter().map(|(w, _)| w))
        .ok()
});

/// Which triggers occur in `text` (all of them without an automaton).
fn triggers(text: &str) -> [bool; TRIGGERS] {
    let Some(ac) = LEARN_TRIGGERS.as_ref() else {
        return [true; TRIGGERS];
    };
    let mut found = [false; TRIGGERS];
    // One-byte literals are found faster by memchr than by the automaton.
    found[Trigger::At as usize] = memchr::memchr(b'@', text.as_bytes()).is_some();
    found[Trigger::Colon as usize] = memchr::memmem::find(text.as_bytes(), b":/").is_some();
    for m in ac.find_iter(text) {
        if let Some((_, t)) = TRIGGER_WORDS.get(m.pattern().as_usize()) {
            found[*t as usize] = true;
        }
        if !found.contains(&false) {
            break;
        }
    }
    found
}

/// `git config --list` lines.
static GIT_CONFIG_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)(?:^|[\s'`])user\.(?P<key>name|email)\s*[=\s]\s*(?P<value>[^\n=]{2,80}?)\s*$")
        .expect("fixed regex")
});

/// Commit header and trailer lines naming a person: `Author: Name <mail>`.
static TRAILER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)^[ \t>*-]*(?:Author|Commit|Committer|Co-authored-by|Signed-off-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Suggested-by|Helped-by):[ \t]*(?P<name>[^<\n]*?)[ \t]*<(?P<mail>[^>\n]*)>")
        .expect("fixed regex")
});

/// `gh auth status`: `Logged in to github.com account NAME` (older: `as NAME`).
static GH_ACCOUNT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)Logged in to [A-Za-z0-9.-]+ (?:account|as) (?P<user>[A-Za-z0-9][A-Za-z0-9-]{0,38})",
    )
    .expect("fixed regex")
});

/// A shell prompt at the start of a line: `user@host:~/dir$`, `[user@host dir]$`, zsh's
/// `user@Host dir %`, with an optional `(venv)` before it.
static PROMPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*(?:\([^)\n]{1,40}\)[ \t]*)?\[?(?P<user>[A-Za-z_][A-Za-z0-9_.-]{0,31})@(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,62})(?::[ \t]*|[ \t]+)[^\s$#%\]]{0,200}\]?[ \t]?[$#%](?:[ \t]|$)")
        .expect("fixed regex")
});

/// Whether [`PROMPT`] can match in `text`: a match lies within one line (no part of it
/// holds a newline) and holds an `@` with a `$`, `#` or `%` after it.
fn may_hold_prompt(text: &str) -> bool {
    text.split('\n').any(|line| {
        let line = line.as_bytes();
        memchr::memchr(b'@', line)
            .is_some_and(|at| memchr::memchr3(b'$', b'#', b'%', &line[at + 1..]).is_some())
    })
}

/// An ssh public key's comment, `user@host`.
static SSH_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)[ \t]+AAAA[A-Za-z0-9+/=]+[ \t]+(?P<user>[A-Za-z0-9_.-]{1,32})@(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,62})")
        .expect("fixed regex")
});

/// `uname -a`: the kernel name, then the host name, then a version.
static UNAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*(?:Linux|Darwin|FreeBSD|OpenBSD|NetBSD|SunOS|(?:MINGW|MSYS|CYGWIN)\S*_NT-\S+)[ \t]+(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,62})[ \t]+\d+\.\d+")
        .expect("fixed regex")
});

/// An `/etc/passwd` line.
static PASSWD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(?P<user>[A-Za-z_][A-Za-z0-9_.-]{0,31}):(?P<pw>[^:\n]{0,128}):(?P<uid>\d{1,10}):(?P<gid>\d{1,10}):(?P<gecos>[^:\n]{0,128}):(?P<home>[^:\n]{0,256}):(?P<shell>[^:\n]{0,128})$")
        .expect("fixed regex")
});

/// What [`PASSWD`] makes of one line, told without it.
#[derive(Debug, PartialEq, Eq)]
enum PasswdLine<'a> {
    /// It matches the whole line, with these fields.
    Fields([&'a str; 7]),
    /// It does not match.
    Not,
    /// A user or group id holds a character other than an ASCII digit: only the regex
    /// knows whether it is a Unicode one.
    Unsure,
}

/// What [`PASSWD`] makes of `line` (no newline in it). A match is a whole line (`^` and `$`
/// in multi-line mode, no field holds a newline) of seven fields split by its six colons (no
/// field holds a colon): a user name, then fields of at most 128, 10, 10, 128, 256 and 128
/// characters, the ids of one to ten digits.
fn passwd_line(line: &str) -> PasswdLine<'_> {
    if line.bytes().filter(|&b| b == b':').count() != 6 {
        return PasswdLine::Not;
    }
    let mut f = [""; 7];
    for (slot, part) in f.iter_mut().zip(line.split(':')) {
        *slot = part;
    }
    let user = f[0].as_bytes();
    let user_ok = user.len() <= 32
        && user
            .first()
            .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_')
        && user
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    let fits = |s: &str, most: usize| s.len() <= most || s.chars().count() <= most;
    if !user_ok || !fits(f[1], 128) || !fits(f[4], 128) || !fits(f[5], 256) || !fits(f[6], 128) {
        return PasswdLine::Not;
    }
    let mut unsure = false;
    for id in [f[2], f[3]] {
        if id.bytes().all(|b| b.is_ascii_digit()) {
            if id.is_empty() || id.len() > 10 {
                return PasswdLine::Not;
            }
        } else if id.is_ascii() || id.chars().count() > 10 {
            return PasswdLine::Not;
        } else {
            unsure = true;
        }
    }
    if unsure {
        PasswdLine::Unsure
    } else {
        PasswdLine::Fields(f)
    }
}

/// Whether [`PASSWD`] can match some line of `text`: a text without such a line is passed
/// over without the regex (nor its compiling).
fn may_hold_passwd_line(text: &str) -> bool {
    text.split('\n')
        .any(|line| passwd_line(line) != PasswdLine::Not)
}

/// `id` output: `uid=1000(alice)`.
static ID_USER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"uid=(?P<uid>\d{1,10})\((?P<user>[A-Za-z0-9_.-]{1,32})\)").expect("fixed regex")
});

/// `hostnamectl`: `Static hostname: NAME`.
static STATIC_HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)^[ \t]*(?:static |transient |pretty )?hostname:[ \t]*(?P<host>[A-Za-z0-9][A-Za-z0-9.-]{0,62})[ \t]*$")
        .expect("fixed regex")
});

/// A typed `whoami` and its Windows answer on the next line: `host\user`.
static WHOAMI_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)whoami[ \t]*\r?\n[ \t]*(?P<host>[A-Za-z0-9][A-Za-z0-9-]{0,62})\\(?P<user>[A-Za-z0-9_.-]{1,64})[ \t]*$")
        .expect("fixed regex")
});

/// `git shortlog -sn` lines: a count, a tab, a name.
static SHORTLOG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*\d+\t(?P<name>[^\t<\n]{2,80}?)[ \t]*(?:<[^>\n]*>)?[ \t]*$")
        .expect("fixed regex")
});

/// What a command asks the machine about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    Host,
    User,
    Whoami,
    Name,
    Email,
    Home,
    Shortlog,
    Other,
}

fn ask_of(command: &str) -> Ask {
    let c = command.trim().trim_start_matches("$ ").trim();
    let words: Vec<&str> = c.split_whitespace().collect();
    match words.as_slice() {
        ["hostname"] | ["hostname", "-s" | "-f" | "--fqdn" | "--short" | "-A"] => Ask::Host,
        ["uname", "-n"] | ["hostnamectl", "hostname"] => Ask::Host,
        ["scutil", "--get", "LocalHostName" | "HostName"] => Ask::Host,
        ["scutil", "--get", "ComputerName"] => Ask::Name,
        ["echo", v] if matches!(*v, "$HOSTNAME" | "$HOST" | "\"$HOSTNAME\"") => Ask::Host,
        ["$env:COMPUTERNAME"] | ["echo", "%COMPUTERNAME%"] => Ask::Host,
        ["whoami"] => Ask::Whoami,
        ["id", "-un"] | ["id", "-u", "-n"] | ["logname"] => Ask::User,
        ["echo", v] if matches!(*v, "$USER" | "$LOGNAME" | "\"$USER\"" | "%USERNAME%") => Ask::User,
        ["$env:USERNAME"] => Ask::User,
        ["echo", v] if matches!(*v, "$HOME" | "~" | "\"$HOME\"" | "%USERPROFILE%") => Ask::Home,
        ["$env:USERPROFILE"] => Ask::Home,
        ["git", "config", rest @ ..] => match rest.last() {
            Some(&"user.name") => Ask::Name,
            Some(&"user.email") => Ask::Email,
            _ => Ask::Other,
        },
        ["git", "shortlog", ..] => Ask::Shortlog,
        _ => Ask::Other,
    }
}

/// Calls `f` with every string value and key of a JSON value.
fn json_strings(v: &serde_json::Value, f: &mut impl FnMut(&str)) {
    match v {
        serde_json::Value::String(s) => f(s),
        serde_json::Value::Array(items) => items.iter().for_each(|i| json_strings(i, f)),
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                f(k);
                json_strings(v, f);
            }
        }
        _ => {}
    }
}

/// The host names the OS reports: on Linux the kernel's (what `gethostname` returns), read
/// from `/proc`; elsewhere `hostname`'s answer, and on macOS also the local and computer names
/// shells and Finder show.
fn os_host_names() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        out.push(h.trim().to_owned());
        return out;
    }
    let mut run = |cmd: &str, args: &[&str]| {
        if let Ok(o) = std::process::Command::new(cmd)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            && o.status.success()
        {
            let s = String::from_utf8_lossy(&o.stdout).trim().to_owned();
            if !s.is_empty() {
                out.push(s);
            }
        }
    };
    if cfg!(unix) {
        run("hostname", &[]);
    }
    if cfg!(target_os = "macos") {
        run("scutil", &["--get", "LocalHostName"]);
    }
    out
}

/// Whether an e-mail address is kept: reserved example domains (`example.com`, `*.test`,
/// `*.invalid`, `*.localhost`), `noreply`-style senders, `git@` remotes, placeholder local
/// parts (`test@`, `email@`, `john.doe@`), and `name@2x.png` file names that only look like
/// addresses. A GitHub or GitLab `users.noreply` address names its user: never kept.
pub fn keep_email(address: &str) -> bool {
    let Some((local, domain)) = address.rsplit_once('@') else {
        return true;
    };
    let local = local.to_ascii_lowercase();
    let domain = domain.to_ascii_lowercase();
    let last = domain.rsplit('.').next().unwrap_or("");
    let reserved = ["example.com", "example.net", "example.org"]
        .iter()
        .any(|d| domain == *d || domain.ends_with(&format!(".{d}")))
        || matches!(last, "example" | "test" | "invalid" | "localhost");
    let service = matches!(
        local.as_str(),
        "noreply" | "no-reply" | "donotreply" | "do-not-reply" | "git"
    );
    // Placeholders in docs and test data: nobody's address.
    let placeholder = matches!(
        local.as_str(),
        "test"
            | "tester"
            | "example"
            | "email"
            | "user"
            | "username"
            | "foo"
            | "bar"
            | "baz"
            | "someone"
            | "somebody"
            | "name"
            | "you"
            | "your"
            | "your-email"
            | "youremail"
            | "your.email"
            | "your_email"
            | "john.doe"
            | "jane.doe"
            | "johndoe"
            | "janedoe"
    );
    let file = matches!(
        last,
        "png"
            | "jpg"
            | "jpeg"
            | "gif"
            | "svg"
            | "webp"
            | "ico"
            | "js"
            | "mjs"
            | "cjs"
            | "ts"
            | "tsx"
            | "jsx"
            | "json"
            | "md"
            | "txt"
            | "py"
            | "rs"
            | "go"
            | "css"
            | "scss"
            | "html"
            | "yaml"
            | "yml"
            | "toml"
            | "lock"
            | "xml"
            | "pdf"
            | "zip"
            | "gz"
            | "sh"
            | "log"
            | "vue"
            | "svelte"
            | "java"
            | "kt"
            | "rb"
            | "php"
            | "swift"
    );
    (reserved || service || placeholder || file) && !domain.starts_with("users.noreply.")
}

/// An e-mail address: the local part, `@`, a domain with an alphabetic top-level label, and
/// the character after it (a letter, digit or dash there means the match is not a whole
/// address).
static EMAIL_ADDRESS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<local>[A-Za-z0-9._%+-]{1,64})@(?P<domain>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})(?P<after>[A-Za-z0-9_-]?)")
        .expect("fixed regex")
});

/// The replacement for one e-mail address match in `text`.
fn email_replacement(text: &str, c: &Captures<'_>) -> String {
    let (Some(whole), Some(local_m), Some(domain_m)) =
        (c.get(0), c.name("local"), c.name("domain"))
    else {
        return String::new();
    };
    let after = c.name("after").map_or("", |m| m.as_str());
    let mut start = local_m.start();
    // `\n@decorator` in JSON-escaped text: the escape's letter is not a local part.
    if text[..start].ends_with('\\') {
        start += local_m.as_str().chars().next().map_or(0, char::len_utf8);
    }
    // `.@x`, `-@x`: punctuation before an address is not part of it.
    let local = text[start..local_m.end()].trim_start_matches(['.', '-', '+']);
    start = local_m.end() - local.len();
    let domain = domain_m.as_str();
    if local.is_empty() || local.ends_with('.') || !after.is_empty() {
        return whole.as_str().to_owned();
    }
    let kept = &text[whole.start()..start];
    if domain.to_ascii_lowercase().starts_with("users.noreply.") {
        return format!("{kept}{USER}@{domain}");
    }
    if keep_email(&format!("{local}@{domain}")) {
        return whole.as_str().to_owned();
    }
    format!("{kept}{EMAIL}")
}

/// `:/`, before an `/etc/passwd` line's home folder.
static COLON_SLASH: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b":/"));

/// `uid=`, in `id` output.
static UID: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new(b"uid="));

/// The ends of trailer keywords as git and people write them (`Author:`, `Co-authored-by:`),
/// each with its searcher built once.
static TRAILER_WORDS: LazyLock<Vec<memchr::memmem::Finder<'static>>> = LazyLock::new(|| {
    [
        "uthor:",
        "ommit:",
        "ommitter:",
        "-by:",
        "-By:",
        "UTHOR:",
        "-BY:",
    ]
    .iter()
    .map(|w| memchr::memmem::Finder::new(w.as_bytes()))
    .collect()
});

/// A commit header or trailer line's name: replaced whoever's it is, unless a service's.
static TRAILER_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?mi)(?P<lead>(?:^|\\n)[ \t>*-]*(?:Author|Commit|Committer|Co-authored-by|Signed-off-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Suggested-by|Helped-by):[ \t]*)(?P<name>[^<\n]*?)(?P<rest>[ \t]*<[^>\n]*>)")
        .expect("fixed regex")
});

/// `ls -l` lines: the owner and group columns.
static LS_LONG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?P<lead>(?:^|\\n)[-dlcbpsD][rwxsStTl-]{9}[@+.]?[ \t]+\d+[ \t]+)(?P<owner>\S+)(?P<gap>[ \t]+)(?P<group>\S+)")
        .expect("fixed regex")
});

/// `ps aux` / `top` / `ps -ef` / `who` lines: the user column.
static PS_USER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(?P<lead>(?:^|\\n)[ \t]*(?:\d+[ \t]+)?)(?P<user>[A-Za-z_][A-Za-z0-9_.+-]{0,31})(?P<rest>[ \t]+(?:\d+[ \t]+\d+\.\d+[ \t]+\d+\.\d+[ \t]|\d+[ \t]+\d+[ \t]+\d+[ \t]|\d+[ \t]+-?\d+[ \t]|(?:pts/\d+|tty\S*|console)[ \t]))")
        .expect("fixed regex")
});

/// `id` output: a name in parentheses after a number (`uid=1000(bob)`, `,27(sudo)`).
static ID_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?P<lead>(?:uid|gid|euid|egid|groups)=\d+\(|,\d+\()(?P<name>[A-Za-z0-9_.-]{1,32})\)",
    )
    .expect("fixed regex")
});

/// A human account's `/etc/passwd` line (see [`PASSWD`]).
fn passwd_replacement(c: &Captures<'_>) -> String {
    let whole = c.get(0).map_or("", |m| m.as_str());
    if !human_uid(&c["uid"]) {
        return whole.to_owned();
    }
    let gecos = &c["gecos"];
    let name = gecos_name(gecos);
    let gecos = if name.is_empty() || name.starts_with('<') {
        gecos.to_owned()
    } else {
        gecos.replacen(name, NAME, 1)
    };
    format!(
        "{USER}:{}:{}:{}:{gecos}:{}:{}",
        &c["pw"], &c["uid"], &c["gid"], &c["home"], &c["shell"]
    )
}

/// What a word match is replaced by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Word {
    User,
    Host,
    Name,
    Email,
}

impl Word {
    fn text(self) -> &'static str {
        match self {
            Word::User => USER,
            Word::Host => HOST,
            Word::Name => NAME,
            Word::Email => EMAIL,
        }
    }
}

/// Removes the user's identity from text, after the path stage; see the module docs.
pub struct Scrub {
    /// Full names, learned e-mail addresses, long user and host names, found as words.
    words: Option<AhoCorasick>,
    /// What each pattern of `words` is replaced by.
    word_kinds: Vec<Word>,
    /// Every user and host name, lower-cased: a text that holds none skips the position rules.
    any_name: Option<AhoCorasick>,
    /// User names, lower-cased, for the column rules.
    users: BTreeSet<String>,
    /// Where a short or common user name names someone: `user@host`, `host\user`, and
    /// for a short one that is no ordinary word a path segment or `~user`.
    user_positions: Vec<Regex>,
    /// Where a short or common host name names a host: `@host`, `host\user`, `uname -a`.
    host_positions: Vec<Regex>,
}

/// An automaton for `words` that ignores ASCII case, searched in a text's ASCII lower-case
/// copy ([`lower_case`]): it finds the same matches at the same places as one built to
/// ignore case searching the text itself, and it can search with its SIMD prefilter, which
/// an automaton that ignores case goes without.
fn lower_case_words(
    words: impl IntoIterator<Item = impl AsRef<str>>,
    kind: MatchKind,
) -> Option<AhoCorasick> {
    AhoCorasickBuilder::new()
        .match_kind(kind)
        .build(words.into_iter().map(|w| w.as_ref().to_ascii_lowercase()))
        .ok()
}

/// A text's ASCII lower-case copy: the same length, each byte where it was.
fn lower_case(text: &str) -> Vec<u8> {
    text.as_bytes().to_ascii_lowercase()
}

fn alternation(names: &[String]) -> String {
    let mut sorted: Vec<&String> = names.iter().collect();
    sorted.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    sorted
        .iter()
        .map(|n| regex::escape(n))
        .collect::<Vec<_>>()
        .join("|")
}

fn is_common(list: &[&str], value: &str) -> bool {
    list.contains(&value.to_ascii_lowercase().as_str())
}

impl Scrub {
    /// The scrubber for one identity.
    pub fn new(id: &Identity) -> Self {
        let mut words: Vec<(String, Word)> = Vec::new();
        let mut short_users = Vec::new();
        let mut short_hosts = Vec::new();
        for e in &id.emails {
            words.push((e.clone(), Word::Email));
        }
        for n in &id.names {
            words.push((n.clone(), Word::Name));
        }
        for u in &id.users {
            if u.chars().count() >= WORD_MIN && !is_common(COMMON_USERS, u) {
                words.push((u.clone(), Word::User));
            } else {
                short_users.push(u.clone());
            }
        }
        for h in &id.hosts {
            let short = h.split('.').next().unwrap_or(h);
            if h.len() >= WORD_MIN && !is_common(COMMON_HOSTS, h) && !is_common(COMMON_HOSTS, short)
            {
                words.push((h.clone(), Word::Host));
            } else {
                short_hosts.push(h.clone());
            }
        }
        // Longest first, so a full name wins over a user name inside it.
        words.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        words.dedup_by(|a, b| a.0.eq_ignore_ascii_case(&b.0));
        let words_ac = (!words.is_empty())
            .then(|| lower_case_words(words.iter().map(|(w, _)| w), MatchKind::LeftmostLongest))
            .flatten();
        // Long names are gone after the word pass: the position rules need only short ones.
        let all_names: Vec<String> = short_users.iter().chain(&short_hosts).cloned().collect();
        // Leftmost-first: whether a text holds a name does not depend on the match kind.
        let any_name = (!all_names.is_empty())
            .then(|| lower_case_words(&all_names, MatchKind::LeftmostFirst))
            .flatten();
        let mut user_positions = Vec::new();
        // `git@github.com` is a remote, whoever the user is.
        let at_users: Vec<String> = short_users
            .iter()
            .filter(|u| !u.eq_ignore_ascii_case("git"))
            .cloned()
            .collect();
        let segment_users: Vec<String> = short_users
            .iter()
            .filter(|u| !is_common(COMMON_USERS, u))
            .cloned()
            .collect();
        if !at_users.is_empty() {
            let names = alternation(&at_users);
            user_positions.extend(
                Regex::new(&format!(
                    r"(?mi)(?P<pre>^|\\[ntr]|[^A-Za-z0-9._%+<-])(?P<name>{names})(?P<post>@(?:[A-Za-z0-9]|<host>))"
                ))
                .ok(),
            );
            user_positions.extend(
                Regex::new(&format!(
                    r"(?mi)(?P<pre>(?:^|\\n)[ \t]*[A-Za-z0-9][A-Za-z0-9-]{{0,62}}(?:\\){{1,2}})(?P<name>{names})(?P<post>[ \t]*(?:$|\\[nr]))"
                ))
                .ok(),
            );
        }
        if !segment_users.is_empty() {
            let names = alternation(&segment_users);
            // A folder or branch prefix (`alex/feature`, `/srv/alex/app`), and a path's last
            // segment (`/srv/alex`).
            user_positions.extend(
                Regex::new(&format!(
                    r#"(?mi)(?P<pre>^|\\[ntr]|[\s"'`(\[=:,/\\~])(?P<name>{names})(?P<post>[/\\])"#
                ))
                .ok(),
            );
            user_positions.extend(
                Regex::new(&format!(
                    r#"(?mi)(?P<pre>[/\\~])(?P<name>{names})(?P<post>[\s"'`),;:\]]|$)"#
                ))
                .ok(),
            );
        }
        let mut host_positions = Vec::new();
        if !short_hosts.is_empty() {
            let names = alternation(&short_hosts);
            host_positions.extend(
                Regex::new(&format!(
                    r"(?mi)(?P<pre>@|(?:^|\\n)[ \t]*(?:Linux|Darwin|FreeBSD|OpenBSD|NetBSD|SunOS|\S*_NT-\S+)[ \t]+|hostname:[ \t]*)(?P<name>{names})(?P<post>[^A-Za-z0-9-]|$)"
                ))
                .ok(),
            );
            host_positions.extend(
                Regex::new(&format!(
                    r"(?mi)(?P<pre>(?:^|\\n)[ \t]*)(?P<name>{names})(?P<post>(?:\\){{1,2}}(?:<user>|[A-Za-z0-9_.-]+)[ \t]*(?:$|\\[nr]))"
                ))
                .ok(),
            );
        }
        Self {
            words: words_ac,
            word_kinds: words.iter().map(|(_, k)| *k).collect(),
            any_name,
            users: id.users.iter().map(|u| u.to_lowercase()).collect(),
            user_positions,
            host_positions,
        }
    }

    /// Replaces every word match that stands alone (no letter or digit on either side).
    fn replace_words<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(ac) = &self.words else {
            return Cow::Borrowed(text);
        };
        let mut out = String::new();
        let mut last = 0;
        let lower = lower_case(text);
        for m in ac.find_iter(&lower) {
            // A JSON escape (`\n`, `\t`) before a name is no letter of it.
            let escaped = ["\\n", "\\t", "\\r"]
                .iter()
                .any(|e| text[..m.start()].ends_with(e));
            let before = if escaped {
                None
            } else {
                text[..m.start()].chars().next_back()
            };
            let after = text[m.end()..].chars().next();
            let placeholder = before == Some('<') && after == Some('>');
            if placeholder
                || before.is_some_and(char::is_alphanumeric)
                || after.is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            let kind = self.word_kinds[m.pattern().as_usize()];
            out.push_str(&text[last..m.start()]);
            out.push_str(kind.text());
            last = m.end();
        }
        if last == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }

    fn is_user(&self, name: &str) -> bool {
        self.users.contains(&name.to_lowercase())
    }
}

fn apply<'a>(out: Cow<'a, str>, f: impl FnOnce(&str) -> Cow<'_, str>) -> Cow<'a, str> {
    match f(&out) {
        Cow::Owned(s) => Cow::Owned(s),
        Cow::Borrowed(_) => out,
    }
}

impl Redactor for Scrub {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        let bytes = text.as_bytes();
        let at = memchr::memchr(b'@', bytes).is_some();
        let colon = COLON_SLASH.find(bytes).is_some();
        let uid = UID.find(bytes).is_some();
        // Trailer keywords as git and people write them (`Author:`, `Co-authored-by:`).
        let trailer = memchr::memchr(b':', bytes).is_some()
            && TRAILER_WORDS.iter().any(|w| w.find(bytes).is_some());
        if trailer {
            out = apply(out, |t| {
                TRAILER_NAME.replace_all(t, |c: &Captures<'_>| {
                    let name = c["name"].trim();
                    if name.is_empty()
                        || name.starts_with('<')
                        || is_service_signer(name, &c["rest"])
                    {
                        c[0].to_owned()
                    } else {
                        format!("{}{NAME}{}", &c["lead"], &c["rest"])
                    }
                })
            });
        }
        if colon && may_hold_passwd_line(&out) {
            out = apply(out, |t| PASSWD.replace_all(t, passwd_replacement));
        }
        if at {
            out = apply(out, |t| {
                EMAIL_ADDRESS.replace_all(t, |c: &Captures<'_>| email_replacement(t, c))
            });
        }
        out = apply(out, |t| self.replace_words(t));
        let names_left = self
            .any_name
            .as_ref()
            .is_some_and(|ac| ac.is_match(&lower_case(&out)));
        if names_left {
            for re in &self.user_positions {
                out = apply(out, |t| {
                    re.replace_all(t, format!("${{pre}}{USER}${{post}}"))
                });
            }
            for re in &self.host_positions {
                out = apply(out, |t| {
                    re.replace_all(t, format!("${{pre}}{HOST}${{post}}"))
                });
            }
            out = apply(out, |t| {
                LS_LONG.replace_all(t, |c: &Captures<'_>| {
                    let col = |s: &str| {
                        if self.is_user(s) {
                            USER.to_owned()
                        } else {
                            s.to_owned()
                        }
                    };
                    format!(
                        "{}{}{}{}",
                        &c["lead"],
                        col(&c["owner"]),
                        &c["gap"],
                        col(&c["group"])
                    )
                })
            });
            out = apply(out, |t| {
                PS_USER.replace_all(t, |c: &Captures<'_>| {
                    if self.is_user(&c["user"]) {
                        format!("{}{USER}{}", &c["lead"], &c["rest"])
                    } else {
                        c[0].to_owned()
                    }
                })
            });
            if uid {
                out = apply(out, |t| {
                    ID_NAME.replace_all(t, |c: &Captures<'_>| {
                        if self.is_user(&c["name"]) {
                            format!("{}{USER})", &c["lead"])
                        } else {
                            c[0].to_owned()
                        }
                    })
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::SessionFacts;
    use crate::privacy::paths::Paths;

    /// The path stage, then the identity stage, for an identity learned from `stated`.
    fn scrub(stated: &str, text: &str) -> String {
        let mut id = Identity::default();
        id.learn_text(stated);
        both(&id, text)
    }

    fn both(id: &Identity, text: &str) -> String {
        let paths = Paths::with_identity(&SessionFacts::default(), id);
        let p = paths.redact(text).into_owned();
        Scrub::new(id).redact(&p).into_owned()
    }

    #[test]
    fn no_trigger_literal_holds_another_so_leftmost_matching_finds_every_one() {
        for (a, _) in TRIGGER_WORDS {
            for (b, _) in TRIGGER_WORDS {
                assert!(a == b || !a.contains(b), "{a:?} holds {b:?}");
            }
        }
        let found = triggers("Author: A <a@b>\nLinux box 6.1 uid=1000 whoami\nhostname");
        for t in [
            Trigger::Trailer,
            Trigger::At,
            Trigger::Kernel,
            Trigger::Uid,
            Trigger::Whoami,
            Trigger::Hostname,
        ] {
            assert!(found[t as usize]);
        }
        assert!(!found[Trigger::Gh as usize] && !found[Trigger::GitUser as usize]);
    }

    #[test]
    fn the_machine_identity_comes_from_the_environment_the_os_git_and_passwd() {
        let env = |k: &str| match k {
            "HOME" => Some("/home/jdoe".to_owned()),
            "USER" => Some("jdoe".to_owned()),
            _ => None,
        };
        let read = |p: &Path| {
            match p.to_str() {
            Some("/home/jdoe/.gitconfig") => {
                Some("[core]\n\teditor = vim\n[user]\n\tname = Jane Doe\n\temail = jane@corp.io\n".into())
            }
            Some("/etc/passwd") => Some(
                "root:x:0:0:root:/root:/bin/bash\njdoe:x:1000:1000:Jane Q. Doe,,,:/home/jdoe:/bin/zsh\n"
                    .into(),
            ),
            Some("/etc/hostname") => Some("jd-laptop\n".into()),
            _ => None,
        }
        };
        let id = Identity::from_sources(env, read, vec!["jd-laptop.lan".into()]);
        assert_eq!(id.homes, ["/home/jdoe"]);
        assert_eq!(id.users, ["jdoe"]);
        assert_eq!(id.hosts, ["jd-laptop.lan", "jd-laptop"]);
        assert_eq!(id.names, ["Jane Doe", "Jane Q. Doe"]);
        assert_eq!(id.emails, ["jane@corp.io"]);
        assert_eq!(
            both(&id, "jdoe@jd-laptop:~$ echo Jane Doe jane@corp.io"),
            "<user>@<host>:~$ echo <name> <email>"
        );
    }

    #[test]
    fn user_and_host_from_prompts_uname_ssh_keys_and_whoami() {
        assert_eq!(
            scrub(
                "alice@devbox9:~/work$ ls",
                "alice@devbox9:~$ ssh Alice at DEVBOX9"
            ),
            "<user>@<host>:~$ ssh <user> at <host>"
        );
        assert_eq!(
            scrub(
                "bob@Bobs-MBP shop % ls",
                "ping bobs-mbp.local; bob@Bobs-MBP"
            ),
            "ping <host>.local; <user>@<host>"
        );
        assert_eq!(
            scrub(
                "Linux buildhost7 6.8.0 #45-Ubuntu SMP x86_64 GNU/Linux",
                "Linux buildhost7 6.8.0 #45; on buildhost7.corp.lan"
            ),
            "Linux <host> 6.8.0 #45; on <host>.corp.lan"
        );
        assert_eq!(
            scrub(
                "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIabc carol@carolpc",
                "key comment carol@carolpc"
            ),
            "key comment <user>@<host>"
        );
        assert_eq!(
            scrub(
                "PS C:\\> whoami\ndesktop-a1b2\\dave",
                "desktop-a1b2\\dave\nhi dave"
            ),
            "<host>\\<user>\nhi dave"
        );
        assert_eq!(
            scrub(" Static hostname: stationx", "on stationx now"),
            "on <host> now"
        );
    }

    #[test]
    fn names_and_addresses_from_git_gh_and_passwd() {
        let stated = "user.name=Erin Vale\nuser.email=erin@vale.dev\n✓ Logged in to github.com account erinv (keyring)\nfrank:x:1001:1001:Frank Lee,,,:/home/frank:/bin/bash";
        assert_eq!(
            scrub(
                stated,
                "Erin Vale and ERIN VALE, erinv and frank; Frank Lee"
            ),
            "<name> and <name>, <user> and <user>; <name>"
        );
        let mut id = Identity::default();
        id.learn_text(stated);
        assert_eq!(id.users, ["erinv", "frank"]);
        assert_eq!(id.homes, ["/home/frank"]);
        assert_eq!(
            both(&id, "github.com/erinv/x and erinv@host"),
            "github.com/<user>/x and <user>@host"
        );
    }

    #[test]
    fn commit_author_lines_lose_the_name_whoever_it_is() {
        let log = "commit abc\nAuthor: Grace Hopper <grace@navy.mil>\n    Co-authored-by: Claude <noreply@anthropic.com>\n    Signed-off-by: Ann <ann@x.org>";
        assert_eq!(
            scrub("", log),
            "commit abc\nAuthor: <name> <<email>>\n    Co-authored-by: Claude <noreply@anthropic.com>\n    Signed-off-by: <name> <<email>>"
        );
        assert_eq!(scrub(log, "thanks Grace Hopper"), "thanks <name>");
    }

    #[test]
    fn commands_that_ask_for_identity_teach_it() {
        let mut id = Identity::default();
        id.read_command("whoami && hostname", "henry\nhenrys-box\n");
        id.read_command("git config user.email", "h@henry.dev\n");
        id.read_command("git config --get user.name", "Henry Ford\n");
        id.read_command("ls", "henrys-other-box\n");
        assert_eq!(id.users, ["henry"]);
        assert_eq!(id.hosts, ["henrys-box"]);
        assert_eq!(id.names, ["Henry Ford"]);
        assert_eq!(id.emails, ["h@henry.dev"]);
    }

    #[test]
    fn emails_are_redacted_except_examples_and_noreply() {
        let s = |t: &str| scrub("", t);
        assert_eq!(s("mail ops@corp.io now"), "mail <email> now");
        assert_eq!(s("a.b+c@mail.co.uk."), "<email>.");
        assert_eq!(
            s("dev@example.com and x@mail.test"),
            "dev@example.com and x@mail.test"
        );
        assert_eq!(s("noreply@github.com"), "noreply@github.com");
        assert_eq!(
            s("123+octo@users.noreply.github.com"),
            "<user>@users.noreply.github.com"
        );
        assert_eq!(
            s("git@github.com:org/repo.git"),
            "git@github.com:org/repo.git"
        );
        assert_eq!(
            s("logo@2x.png and npm i react@18.2.0"),
            "logo@2x.png and npm i react@18.2.0"
        );
        assert_eq!(s(r"x\n@pytest.fixture"), r"x\n@pytest.fixture");
        assert_eq!(s("@decorator and @scope/pkg"), "@decorator and @scope/pkg");
    }

    #[test]
    fn short_user_names_only_where_they_name_someone() {
        let id = Identity {
            users: vec!["al".into(), "dev".into()],
            hosts: vec!["vm".into()],
            ..Default::default()
        };
        let s = |t: &str| both(&id, t);
        // Ordinary words keep their letters.
        assert_eq!(
            s("all along, the dev server in vm terms"),
            "all along, the dev server in vm terms"
        );
        assert_eq!(
            s("al@vm:~$ ssh dev@vm"),
            "<user>@<host>:~$ ssh <user>@<host>"
        );
        assert_eq!(
            s("open https://git.corp/al/x and ~al/y"),
            "open https://git.corp/<user>/x and ~/y"
        );
        // A common name is no path segment: `src/dev/` is a folder.
        assert_eq!(s("see src/dev/x"), "see src/dev/x");
        assert_eq!(
            s("-rw-r--r--  1 al  staff  12 Jan  1 12:00 a\ndrwxr-xr-x  2 root  al  64 Jan  1 b"),
            "-rw-r--r--  1 <user>  staff  12 Jan  1 12:00 a\ndrwxr-xr-x  2 root  <user>  64 Jan  1 b"
        );
        assert_eq!(
            s(
                "al        4242  0.0  0.1 12 34 ?  S  0:00 node\nroot         1  0.0  0.0 1 2 ?  S  0:00 init"
            ),
            "<user>        4242  0.0  0.1 12 34 ?  S  0:00 node\nroot         1  0.0  0.0 1 2 ?  S  0:00 init"
        );
        assert_eq!(
            s("uid=1001(al) gid=1001(al) groups=1001(al),27(sudo)"),
            "uid=1001(<user>) gid=1001(<user>) groups=1001(<user>),27(sudo)"
        );
        assert_eq!(s("Linux vm 6.8.0 x"), "Linux <host> 6.8.0 x");
        assert_eq!(s("vm\\al"), "<host>\\<user>");
    }

    #[test]
    fn long_names_go_wherever_they_stand_as_a_word() {
        let id = Identity {
            users: vec!["marot".into()],
            hosts: vec!["marot-laptop".into()],
            ..Default::default()
        };
        let s = |t: &str| both(&id, t);
        assert_eq!(
            s("Marot's marot-laptop, marot_x"),
            "<user>'s <host>, <user>_x"
        );
        assert_eq!(s("marots and amarot stay"), "marots and amarot stay");
    }

    proptest::proptest! {
        /// The one-pass searches that decide which rules run say what a search for each word
        /// says: the trailer keywords, `:/`, `uid=`, and the short names (ASCII case ignored).
        #[test]
        fn the_scrubs_searches_agree_with_contains(
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just("Author:".to_owned()),
                    proptest::strategy::Just("Co-Authored-BY:".to_owned()),
                    proptest::strategy::Just("Committer:".to_owned()),
                    proptest::strategy::Just("uid=1000(Qz)".to_owned()),
                    proptest::strategy::Just("https://HoSt/".to_owned()),
                    "[a-zA-Z:/=( -]{0,8}",
                    proptest::arbitrary::any::<String>(),
                ],
                0..8,
            )
        ) {
            let text: String = pieces.concat();
            let bytes = text.as_bytes();
            let has = |n: &str| text.contains(n);
            let trailer = ["uthor:", "ommit:", "ommitter:", "-by:", "-By:", "UTHOR:", "-BY:"]
                .iter()
                .any(|w| has(w));
            let found = TRAILER_WORDS.iter().any(|w| w.find(bytes).is_some());
            proptest::prop_assert_eq!(found, trailer);
            proptest::prop_assert_eq!(COLON_SLASH.find(bytes).is_some(), has(":/"));
            proptest::prop_assert_eq!(UID.find(bytes).is_some(), has("uid="));
            let scrub = Scrub::new(&Identity {
                users: vec!["qz".into(), "root".into()],
                hosts: vec!["host".into()],
                ..Default::default()
            });
            let lower = text.to_ascii_lowercase();
            let names = ["qz", "root", "host"].iter().any(|n| lower.contains(n));
            let found = scrub.any_name.as_ref().map(|ac| ac.is_match(&lower_case(&text)));
            proptest::prop_assert_eq!(found, Some(names));
        }

        /// The word automaton searching a text's lower-case copy finds what an automaton that
        /// ignores ASCII case finds in the text, match for match, words of the same letters
        /// in other cases included.
        #[test]
        fn the_lower_case_search_finds_what_a_case_blind_one_finds(
            words in proptest::collection::vec("[a-cA-C é]{1,6}", 1..6),
            text in "[a-cA-C éÉ<>x]{0,40}",
        ) {
            let mut words = words;
            words.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
            for kind in [MatchKind::LeftmostLongest, MatchKind::LeftmostFirst] {
                let blind = AhoCorasickBuilder::new()
                    .ascii_case_insensitive(true)
                    .match_kind(kind)
                    .build(&words)
                    .ok();
                let lower = lower_case_words(&words, kind);
                let found = |ac: &Option<AhoCorasick>, hay: &[u8]| {
                    ac.as_ref().map(|ac| {
                        ac.find_iter(hay)
                            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
                            .collect::<Vec<_>>()
                    })
                };
                proptest::prop_assert_eq!(
                    found(&lower, &lower_case(&text)),
                    found(&blind, text.as_bytes())
                );
            }
        }
    }

    proptest::proptest! {
        /// What the line reader says of a line is what the `/etc/passwd` regex says: the
        /// same fields where it matches, no match where it says none.
        #[test]
        fn passwd_lines_read_as_the_regex_reads_them(
            fields in proptest::collection::vec(
                proptest::prop_oneof![
                    "[a-z_][a-z0-9_.-]{0,3}",
                    "[0-9]{0,11}",
                    "[0-9٣]{1,3}",
                    "[a-zé ,/]{0,6}",
                    "x{125,130}",
                    "é{125,130}",
                    "[:\\r a]{0,3}",
                ],
                5..9,
            )
        ) {
            let line = fields.join(":");
            let regex: Option<Vec<String>> = PASSWD.captures(&line).map(|c| {
                ["user", "pw", "uid", "gid", "gecos", "home", "shell"]
                    .iter()
                    .map(|n| c[*n].to_owned())
                    .collect()
            });
            match passwd_line(&line) {
                PasswdLine::Fields(f) => {
                    proptest::prop_assert_eq!(Some(f.iter().map(|s| s.to_string()).collect()), regex)
                }
                PasswdLine::Not => proptest::prop_assert_eq!(regex, None),
                PasswdLine::Unsure => {}
            }
        }
    }

    proptest::proptest! {
        /// A text the prompt check passes over holds no prompt the regex finds.
        #[test]
        fn the_prompt_check_passes_over_no_prompt(
            text in "([a-z]{0,3}[@$#% \\t:\\n\\[\\]()~/.]){0,24}"
        ) {
            if !may_hold_prompt(&text) {
                proptest::prop_assert!(!PROMPT.is_match(&text), "{:?}", text);
            }
        }
    }

    #[test]
    fn prompts_are_checked_for_line_by_line() {
        assert!(may_hold_prompt("x\nalice@box:~/src$ ls"));
        assert!(PROMPT.is_match("x\nalice@box:~/src$ ls"));
        assert!(!may_hold_prompt("$ ls\nmail alice@example.com\n"));
    }

    #[test]
    fn passwd_lines_whose_ids_are_other_digits_go_to_the_regex() {
        assert_eq!(
            passwd_line("bob:x:1000:1000:Bob,,,:/home/bob:/bin/sh"),
            PasswdLine::Fields(["bob", "x", "1000", "1000", "Bob,,,", "/home/bob", "/bin/sh"])
        );
        assert_eq!(
            passwd_line("bob:x:١٠٠٠:1000::/home/bob:/bin/sh"),
            PasswdLine::Unsure
        );
        assert_eq!(passwd_line("bob:x:1000:1000::/home/bob"), PasswdLine::Not);
        assert!(!may_hold_passwd_line("see https://example.com:8080/a"));
        assert!(may_hold_passwd_line(
            "x\nbob:x:1000:1000::/home/bob:/bin/sh\ny"
        ));
    }

    #[test]
    fn scrubbing_is_idempotent() {
        let id = Identity {
            users: vec!["user".into(), "email".into(), "qz".into()],
            hosts: vec!["host".into()],
            names: vec!["Ann Lee".into()],
            ..Default::default()
        };
        let once = both(
            &id,
            "user@host qz@host Ann Lee a@b.io /home/qz/x Author: Ann Lee <a@b.io>",
        );
        assert_eq!(both(&id, &once), once);
    }

    #[test]
    fn the_home_of_a_working_directory_keeps_its_whole_user_segment() {
        assert_eq!(
            home_of("/Users/First Last/work").as_deref(),
            Some("/Users/First Last")
        );
        assert_eq!(
            home_of(r"C:\Users\O'Brien\src").as_deref(),
            Some(r"C:\Users\O'Brien")
        );
        assert_eq!(
            home_of(r"\\wsl$\Ubuntu\home\kim\x").as_deref(),
            Some(r"\\wsl$\Ubuntu\home\kim")
        );
        assert_eq!(home_of("/srv/app"), None);
        assert_eq!(user_of("/home/kim").as_deref(), Some("kim"));
        // `root` is nobody in particular: its `ls -l` and `id` columns stay.
        let id = Identity::homes(&["/root".into()]);
        assert!(id.users.is_empty(), "{:?}", id.users);
        assert_eq!(
            both(&id, "-rw-r--r--  1 root  wheel  1 Jan  1 x\nuid=0(root)"),
            "-rw-r--r--  1 root  wheel  1 Jan  1 x\nuid=0(root)"
        );
    }

    #[test]
    fn the_learning_pass_reads_every_field_of_a_session_before_redaction() {
        use crate::events::{Event, StatusBasis, ToolCall, ToolKind, ToolResult, ToolStatus};
        let call = ToolCall {
            call_id: "c1".into(),
            name: "Bash".into(),
            kind: ToolKind::Shell,
            input: serde_json::json!({"command": "uname -a"}),
            input_size: 0,
            command: Some("uname -a".into()),
            paths: vec![],
            label: None,
            todos: Vec::new(),
            gutter: crate::events::ReadGutter::None,
            result: Some(ToolResult {
                output: "Linux kestrel9 6.8.0-45-generic #45 SMP x86_64".into(),
                size: 0,
                exit_code: None,
                patch: None,
                timestamp: None,
            }),
            status: ToolStatus::Ok,
            basis: StatusBasis::StatusWord,
            agent_id: None,
        };
        let session = Session {
            facts: SessionFacts {
                cwd: Some(r"C:\Users\Mia Wong\proj".into()),
                ..Default::default()
            },
            events: vec![
                Event {
                    timestamp: None,
                    kind: EventKind::Prompt {
                        text: "why is kestrel9 slow? ask Mia Wong".into(),
                    },
                },
                Event {
                    timestamp: None,
                    kind: EventKind::ToolCall(Box::new(call)),
                },
            ],
            ..Default::default()
        };
        let mut id = Identity::default();
        id.learn_session(&session);
        assert_eq!(id.hosts, ["kestrel9"]);
        assert_eq!(id.homes, [r"C:\Users\Mia Wong"]);
        assert_eq!(id.names, ["Mia Wong"]);
        let scrub = Scrub::new(&id);
        assert_eq!(
            scrub.redact("why is kestrel9 slow? ask Mia Wong"),
            "why is <host> slow? ask <name>"
        );
    }
}

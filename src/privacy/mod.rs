//! Privacy: everything that leaves the machine is redacted here, before projection.
//!
//! [`apply`] runs every [`Redactor`] of a [`Policy`] over every string of a session (texts,
//! arguments, outputs, patches, facts) and returns [`Redacted`], which only this module can
//! build: later stages take `&Redacted<Session>`, so they cannot see unredacted data.
//!
//! - [`clean`]: terminal escapes and control characters removed, base64 attachments dropped;
//! - [`secrets`]: credentials and secret values, replaced by `«redacted:<rule>»` (rules in
//!   [`rules`]);
//! - [`paths`]: repository-relative paths, `~` for home folders;
//! - [`identity`]: no user, host or full name and no e-mail address, learned from the machine
//!   and from the log itself before anything is redacted.

pub mod clean;
pub mod identity;
pub mod paths;
pub mod rules;
pub mod secrets;

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::ops::Deref;
use std::sync::Mutex;

use rayon::prelude::*;
use serde_json::Value as Json;
use siphasher::sip128::{Hasher128, SipHasher13};

use crate::events::{Event, EventKind, Session};

/// Rewrites text to remove something private. Implementations must be idempotent.
pub trait Redactor: Send + Sync {
    /// Returns the text with private parts replaced (borrowed when nothing changed).
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str>;

    /// The replacement for a whole JSON string value bound to `key`, when the key alone says
    /// the value is private (`{"password": "…"}`).
    fn bound_value(&self, _key: &str, _value: &str) -> Option<String> {
        None
    }
}

/// The redactors in force for one session, applied in order.
pub struct Policy {
    redactors: Vec<Box<dyn Redactor>>,
    /// What the redactors made of each long text already seen (`None`: left as it was), by
    /// the text's [`Fingerprint`]: a session repeats its long texts (a file read again, a
    /// result the log keeps twice), and each redactor gives the same text the same result.
    seen: Mutex<HashMap<Fingerprint, Option<String>, foldhash::fast::RandomState>>,
    /// The fingerprint's key, drawn for each policy.
    key: (u64, u64),
}

/// A text's length and its 128-bit SipHash-1-3 value under a key drawn at random for each
/// policy: two texts share one only by a chance of about one in 2^128 per pair, which no
/// input can aim at, since the key is never shown.
type Fingerprint = (usize, u128);

/// Texts shorter than this are redacted each time they occur: looking them up would cost
/// about as much.
const REMEMBER: usize = 256;

/// A fingerprint key from the process's random hash keys, which the system's random source
/// seeds: each draw is the keyed hash of a fixed value under a new key.
fn draw_key() -> (u64, u64) {
    (
        RandomState::new().hash_one(0u64),
        RandomState::new().hash_one(1u64),
    )
}

impl Policy {
    /// The standard policy for a session with default options and the user's own strings.
    pub fn for_session(session: &Session, extra: &[String]) -> Self {
        Self::new(
            session,
            &Options {
                redact: extra.to_vec(),
                keep_images: false,
            },
        )
    }

    /// The standard policy: cleaning first (escapes could split a secret), then secrets (so a
    /// secret inside a path is still caught whole), then paths, then identity. Who the user
    /// is comes from the machine and from a first pass over the whole session's text.
    pub fn new(session: &Session, options: &Options) -> Self {
        let mut id = identity::Identity::machine().clone();
        id.learn_session(session);
        Self::with_identity(session, options, &id)
    }

    /// The standard policy for a session and an identity given whole (the machine's is not
    /// read): for tests and embedders.
    pub fn with_identity(session: &Session, options: &Options, id: &identity::Identity) -> Self {
        let redactors: Vec<Box<dyn Redactor>> = vec![
            Box::new(clean::Clean {
                keep_images: options.keep_images,
            }),
            Box::new(secrets::Secrets::new(&options.redact)),
            Box::new(paths::Paths::with_identity(&session.facts, id)),
            Box::new(identity::Scrub::new(id)),
        ];
        Self::with(redactors)
    }

    /// A policy with exactly these redactors (for tests and embedders).
    pub fn with(redactors: Vec<Box<dyn Redactor>>) -> Self {
        Self {
            redactors,
            seen: Mutex::new(HashMap::default()),
            key: draw_key(),
        }
    }

    /// Applies every redactor to one string.
    pub fn text(&self, text: &str) -> String {
        let mut out = Cow::Borrowed(text);
        for r in &self.redactors {
            if let Cow::Owned(s) = r.redact(&out) {
                out = Cow::Owned(s);
            }
        }
        out.into_owned()
    }

    fn in_place(&self, text: &mut String) {
        if text.len() < REMEMBER {
            self.redact_in_place(text);
            return;
        }
        let print = (text.len(), {
            let mut h = SipHasher13::new_with_keys(self.key.0, self.key.1);
            h.write(text.as_bytes());
            h.finish128().as_u128()
        });
        let known = self
            .seen
            .lock()
            .ok()
            .and_then(|seen| seen.get(&print).cloned());
        match known {
            Some(Some(redacted)) => *text = redacted,
            Some(None) => {}
            None => {
                let changed = self.redact_in_place(text);
                if let Ok(mut seen) = self.seen.lock() {
                    seen.insert(print, changed.then(|| text.clone()));
                }
            }
        }
    }

    /// Applies every redactor to one string in place; says whether any changed it.
    fn redact_in_place(&self, text: &mut String) -> bool {
        let mut changed: Option<String> = None;
        for r in &self.redactors {
            let current = changed.as_deref().unwrap_or(text);
            if let Cow::Owned(s) = r.redact(current) {
                changed = Some(s);
            }
        }
        match changed {
            Some(s) => {
                *text = s;
                true
            }
            None => false,
        }
    }

    fn json(&self, value: &mut Json) {
        match value {
            Json::String(s) => self.in_place(s),
            Json::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Json::Object(map) => {
                let entries = std::mem::take(map);
                for (mut key, mut v) in entries {
                    if let Json::String(s) = &v {
                        if let Some(r) = self.redactors.iter().find_map(|r| r.bound_value(&key, s))
                        {
                            v = Json::String(r);
                        }
                    }
                    self.in_place(&mut key);
                    self.json(&mut v);
                    map.insert(key, v);
                }
            }
            _ => {}
        }
    }
}

/// What the user chose on the command line. Nothing in a transcript can change it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Literal strings to redact wherever they appear (`--redact`).
    pub redact: Vec<String>,
    /// Keep embedded images (`--keep-images`); other attachments are always dropped.
    pub keep_images: bool,
}

/// A value that has been through the privacy stage. Only this module can build one.
#[derive(Debug, Clone, PartialEq)]
pub struct Redacted<T>(T);

impl<T> Deref for Redacted<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl Redacted<Session> {
    /// Moves the events and subagents out, leaving the session's facts: for a stage that
    /// builds its own structures from them without copying their text.
    pub fn take_events(&mut self) -> (Vec<Event>, Vec<crate::events::Subagent>) {
        (
            std::mem::take(&mut self.0.events),
            std::mem::take(&mut self.0.subagents),
        )
    }
}

/// Runs the privacy stage over a report read back from a notebook (`rerender`), so that a
/// notebook written by an older version gains today's rules: the same [`Policy`] as a render
/// (learned from this machine and the options; the report keeps no working directory), over
/// every string of the report, tool inputs' keys and bound values included. Says whether it
/// changed anything. The report is taken as any serializable document, so privacy knows nothing
/// of the report's types (a `turns` array is redacted turn by turn on every core).
pub fn report<T: serde::Serialize + serde::de::DeserializeOwned>(
    report: &T,
    options: &Options,
) -> Result<(T, bool), serde_json::Error> {
    let policy = Policy::new(&Session::default(), options);
    let original = serde_json::to_value(report)?;
    let mut doc = original.clone();
    match &mut doc {
        // Turns are redacted independently of each other: on every core.
        Json::Object(map) => map.iter_mut().for_each(|(key, value)| match value {
            Json::Array(items) if key == "turns" => {
                items.par_iter_mut().for_each(|t| policy.json(t));
            }
            _ => policy.json(value),
        }),
        _ => policy.json(&mut doc),
    }
    let changed = doc != original;
    Ok((serde_json::from_value(doc)?, changed))
}

/// Redacts every string of a session, subagents included.
pub fn apply(mut session: Session, policy: &Policy) -> Redacted<Session> {
    redact_session(&mut session, policy);
    Redacted(session)
}

fn redact_session(session: &mut Session, policy: &Policy) {
    let f = &mut session.facts;
    // The working directory itself is shown as its last segment: the project's name.
    let project = f.cwd.as_deref().map(paths::project_name);
    for s in [
        &mut f.id,
        &mut f.parent,
        &mut f.branch,
        &mut f.model,
        &mut f.version,
    ]
    .into_iter()
    .flatten()
    {
        policy.in_place(s);
    }
    f.cwd = project.map(|p| policy.text(&p));
    f.cwds.clear();
    // Timestamps and the source's name are copied from the log as text: a log can put anything
    // there.
    for s in [&mut f.started_at, &mut f.ended_at].into_iter().flatten() {
        policy.in_place(s);
    }
    policy.in_place(&mut session.source);
    // Events are redacted independently of each other: on every core.
    session
        .events
        .par_iter_mut()
        .for_each(|e| redact_event(e, policy));
    session.subagents.par_iter_mut().for_each(|sub| {
        policy.in_place(&mut sub.agent_id);
        redact_session(&mut sub.session, policy);
    });
}

fn redact_event(event: &mut Event, policy: &Policy) {
    if let Some(t) = &mut event.timestamp {
        policy.in_place(t);
    }
    match &mut event.kind {
        EventKind::Prompt { text }
        | EventKind::Assistant { text }
        | EventKind::UserMessage { text }
        | EventKind::Notice { text } => policy.in_place(text),
        EventKind::Thinking { text } | EventKind::Compaction { summary: text } => {
            if let Some(t) = text {
                policy.in_place(t);
            }
        }
        EventKind::Interrupt | EventKind::TurnStart | EventKind::TurnEnd | EventKind::RunStart => {}
        // A failure's names and numbers are adapter-declared; only the call id it links to
        // comes from the log.
        EventKind::Failure(f) => {
            if let Some(id) = &mut f.call_id {
                policy.in_place(id);
            }
        }
        EventKind::ToolCall(call) => {
            // Ids are redacted the same way wherever they occur, so links between a call, its
            // subagent and a failure still hold.
            policy.in_place(&mut call.call_id);
            if let Some(a) = &mut call.agent_id {
                policy.in_place(a);
            }
            policy.in_place(&mut call.name);
            policy.json(&mut call.input);
            if let Some(c) = &mut call.command {
                policy.in_place(c);
            }
            call.paths.iter_mut().for_each(|p| policy.in_place(p));
            if let Some(l) = &mut call.label {
                policy.in_place(l);
            }
            call.todos
                .iter_mut()
                .for_each(|t| policy.in_place(&mut t.text));
            // Sizes describe what the reader is shown, so they are measured after redaction.
            call.input_size = crate::events::json_len(&call.input);
            if let Some(r) = &mut call.result {
                if let Some(t) = &mut r.timestamp {
                    policy.in_place(t);
                }
                policy.in_place(&mut r.output);
                r.size = r.output.len();
                if let Some(p) = &mut r.patch {
                    policy.in_place(p);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{SessionFacts, StatusBasis, ToolCall, ToolKind, ToolResult, ToolStatus};

    /// A long text met again is given what it was given the first time, and a text of the same
    /// length that differs is redacted on its own.
    #[test]
    fn a_long_text_seen_again_is_redacted_as_it_was_the_first_time() {
        let policy = Policy::for_session(&Session::default(), &[]);
        let filler = "let total = items.iter().map(|i| i.price).sum::<u64>();\n".repeat(8);
        let secret = format!("{filler}export API_KEY=Zx9qT3vLm2Rk8pW4\n");
        let other = format!("{filler}export API_KEZ=Zx9qT3vLm2Rk8pW4\n");
        assert!(secret.len() >= REMEMBER && secret.len() == other.len());
        let fresh = |t: &str| {
            let mut t = t.to_owned();
            Policy::for_session(&Session::default(), &[]).in_place(&mut t);
            t
        };
        for _ in 0..3 {
            for text in [&secret, &other, &filler] {
                let mut t = text.clone();
                policy.in_place(&mut t);
                assert_eq!(t, fresh(text));
            }
        }
        let mut t = secret.clone();
        policy.in_place(&mut t);
        assert!(!t.contains("Zx9qT3vLm2Rk8pW4"), "{t}");
        let mut t = other.clone();
        policy.in_place(&mut t);
        assert!(t.contains("Zx9qT3vLm2Rk8pW4"), "{t}");
    }

    #[test]
    fn redacts_every_string_of_a_tool_call() {
        let facts = SessionFacts {
            cwd: Some("/home/alice/work/app".into()),
            cwds: vec!["/home/alice/work/app".into()],
            ..Default::default()
        };
        let session = Session {
            facts,
            events: vec![Event {
                timestamp: None,
                kind: EventKind::ToolCall(Box::new(ToolCall {
                    call_id: "c1".into(),
                    name: "Read".into(),
                    kind: ToolKind::Read,
                    input: serde_json::json!({"file_path": "/home/alice/work/app/src/main.rs"}),
                    input_size: 0,
                    command: None,
                    paths: vec!["/home/alice/work/app/src/main.rs".into()],
                    label: None,
                    todos: Vec::new(),
                    gutter: crate::events::ReadGutter::None,
                    result: Some(ToolResult {
                        output:
                            "token ghp_abcdefghijklmnopqrstuvwxyz0123456789 in /home/alice/.netrc"
                                .into(),
                        size: 0,
                        exit_code: None,
                        patch: None,
                        timestamp: None,
                    }),
                    status: ToolStatus::Ok,
                    basis: StatusBasis::StatusWord,
                    agent_id: None,
                })),
            }],
            ..Default::default()
        };
        let policy = Policy::for_session(&session, &[]);
        let out = apply(session, &policy);
        let EventKind::ToolCall(call) = &out.events[0].kind else {
            panic!("expected a call")
        };
        assert_eq!(call.paths, ["src/main.rs"]);
        assert_eq!(call.input["file_path"], "src/main.rs");
        let output = &call
            .result
            .as_ref()
            .map(|r| r.output.clone())
            .unwrap_or_default();
        assert!(!output.contains("ghp_"), "{output}");
        assert!(!output.contains("alice"), "{output}");
        assert_eq!(out.facts.cwd.as_deref(), Some("app"));
    }
}

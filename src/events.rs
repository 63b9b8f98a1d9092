//! Canonical session events: the only input types the stages after `adapters` see.
//!
//! Everything here is harness-neutral. Vendor words (status strings, record types) were
//! translated at the seam in [`crate::adapters::normalize`]; nothing downstream compares them.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The outcome of one tool call. Exactly three values, on purpose.
///
/// `Unknown` covers "no result retained", "still running" and any vendor word the adapter did
/// not map. It is never shown as success and never as failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// The log says the call did its job.
    Ok,
    /// The log says the call failed, was cancelled or was rejected.
    Error,
    /// The log does not say.
    Unknown,
}

/// Why a tool call has the status it has; canonical, never a vendor word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusBasis {
    /// No result for this call was retained in the log.
    NoResult,
    /// The vendor's status word, translated by the adapter's table.
    StatusWord,
    /// A retained exit code decided it.
    ExitCode,
    /// The vendor used a word the adapter's table does not know.
    UnmappedWord,
    /// A result was retained but carries no status at all.
    NoStatus,
}

/// What kind of operation a tool performs, as the adapter's `tool_kind_map` classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Runs a shell command.
    Shell,
    /// Writes or changes a file.
    Edit,
    /// Reads a file.
    Read,
    /// Searches files or names.
    Search,
    /// Updates a todo or plan list.
    Todo,
    /// Starts a subagent.
    Subagent,
    /// Fetches or searches the web.
    Web,
    /// Anything else.
    Other,
}

/// Where an item of a todo or plan list stands, as the adapter's `todo_state_map` reads the
/// harness's word. A word the table does not know is `Unknown`, never `Done`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TodoState {
    /// Finished.
    Done,
    /// Being worked on.
    Active,
    /// Not started.
    Pending,
    /// Dropped without being done.
    Cancelled,
    /// The log does not say (no state, or a word the adapter did not map).
    Unknown,
}

/// One item of a todo or plan list a call wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Todo {
    /// The item's text.
    pub text: String,
    /// Where it stands.
    pub state: TodoState,
}

/// The line-number gutter a reading tool puts before each line of file contents, as the
/// adapter names it: the page keeps the gutter plain and highlights only the code after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReadGutter {
    /// No gutter: every line is file contents.
    #[default]
    None,
    /// Right-aligned digits and a tab (`cat -n`: `    12\t`).
    Tab,
    /// Digits and an arrow (`    12→`).
    Arrow,
    /// Zero-padded digits, a bar and a space (`00012| `).
    Pipe,
    /// Digits, a colon and a space (`12: `).
    Colon,
}

impl ReadGutter {
    /// The length in bytes of this gutter at the start of `line`: optional spaces, digits and
    /// the separator; 0 when the line does not start with it.
    pub fn len(self, line: &str) -> usize {
        let sep = match self {
            ReadGutter::None => return 0,
            ReadGutter::Tab => "\t",
            ReadGutter::Arrow => "→",
            ReadGutter::Pipe => "| ",
            ReadGutter::Colon => ": ",
        };
        let bytes = line.as_bytes();
        let spaces = bytes.iter().take_while(|b| **b == b' ').count();
        let digits = bytes[spaces..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        match digits > 0 && line[spaces + digits..].starts_with(sep) {
            true => spaces + digits + sep.len(),
            false => 0,
        }
    }
}

/// Error for a canonical name that does not exist (used when validating adapter tables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// The rejected word.
    pub value: String,
    /// The names that would have been accepted.
    pub expected: &'static [&'static str],
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown value `{}`, expected one of {}",
            self.value,
            self.expected.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}

macro_rules! canonical_names {
    ($ty:ty, $( $name:literal => $variant:expr ),+ $(,)?) => {
        impl $ty {
            /// Every canonical spelling, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The canonical spelling.
            pub fn as_str(self) -> &'static str {
                $( if self == $variant { return $name; } )+
                unreachable!("every variant is listed")
            }
        }

        impl FromStr for $ty {
            type Err = UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $( $name => Ok($variant), )+
                    _ => Err(UnknownName { value: s.to_owned(), expected: Self::NAMES }),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

canonical_names!(ToolStatus, "ok" => ToolStatus::Ok, "error" => ToolStatus::Error, "unknown" => ToolStatus::Unknown);
canonical_names!(FailureScope, "session" => FailureScope::Session, "subagent" => FailureScope::Subagent);
canonical_names!(
    ToolKind,
    "shell" => ToolKind::Shell,
    "edit" => ToolKind::Edit,
    "read" => ToolKind::Read,
    "search" => ToolKind::Search,
    "todo" => ToolKind::Todo,
    "subagent" => ToolKind::Subagent,
    "web" => ToolKind::Web,
    "other" => ToolKind::Other,
);
canonical_names!(
    TodoState,
    "done" => TodoState::Done,
    "active" => TodoState::Active,
    "pending" => TodoState::Pending,
    "cancelled" => TodoState::Cancelled,
    "unknown" => TodoState::Unknown,
);
canonical_names!(
    ReadGutter,
    "none" => ReadGutter::None,
    "tab" => ReadGutter::Tab,
    "arrow" => ReadGutter::Arrow,
    "pipe" => ReadGutter::Pipe,
    "colon" => ReadGutter::Colon,
);

/// Whose run a failure ended: the session's own or a subagent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailureScope {
    /// The session's own run.
    Session,
    /// A subagent's run.
    Subagent,
}

/// The category or stage of a failure the adapter's table did not recognise.
pub const UNKNOWN: &str = "unknown";

/// The most bytes a failure line may hold.
pub const FAILURE_LINE_MAX: usize = 4096;

/// A run's failure, as bounded facts: only adapter-declared names and integers, never the
/// vendor's error text.
///
/// `stage` and `category` are names from the adapter's `failures` allowlists or `unknown`;
/// they were checked when the adapter was loaded, so nothing here came from the log as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// Whose run failed.
    pub scope: FailureScope,
    /// The harness's name as the adapter declares it.
    pub product: String,
    /// Where the run failed (an allowlisted stage, or `unknown`).
    pub stage: String,
    /// Why (an allowlisted category, or `unknown`).
    pub category: String,
    /// HTTP status, when the log retains one.
    pub http_status: Option<u16>,
    /// Process exit code, when the log retains one.
    pub exit_code: Option<i64>,
    /// Signal number that ended the process, when the log retains one.
    pub signal: Option<i64>,
    /// The subagent call this failure belongs to, when the log links one.
    pub call_id: Option<String>,
}

impl Failure {
    /// The one fixed diagnostic line, bounded to [`FAILURE_LINE_MAX`] bytes:
    ///
    /// `Product session failure (product: P; stage: S; category: C; HTTP status: N; exit code:
    /// N; signal: N)`, `subagent` instead of `session` for a subagent; fields the log did not
    /// retain are left out.
    pub fn line(&self) -> String {
        let mut line = format!(
            "Product {} failure (product: {}; stage: {}; category: {}",
            self.scope, self.product, self.stage, self.category
        );
        if let Some(s) = self.http_status {
            line.push_str(&format!("; HTTP status: {s}"));
        }
        if let Some(c) = self.exit_code {
            line.push_str(&format!("; exit code: {c}"));
        }
        if let Some(s) = self.signal {
            line.push_str(&format!("; signal: {s}"));
        }
        line.push(')');
        truncate_on_char_boundary(line, FAILURE_LINE_MAX)
    }
}

/// The length of a value's compact JSON text (a call's `input_size`), counted without writing
/// the text out.
pub fn json_len(value: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match value {
        serde_json::Value::Null => 0,
        v => serde_json::to_writer(&mut count, v).map_or(0, |()| count.0),
    }
}

/// Cuts `text` to at most `max` bytes without splitting a character.
pub fn truncate_on_char_boundary(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// One session as read from the log, in observed source order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Session {
    /// The adapter that read it.
    pub harness: String,
    /// Display name of the source (a file name, never a full path).
    pub source: String,
    /// Facts about the session as a whole.
    pub facts: SessionFacts,
    /// Events in source order.
    pub events: Vec<Event>,
    /// Subagent sessions, linked to the call that started them by `agent_id`.
    pub subagents: Vec<Subagent>,
}

/// Facts about a session, each one missing when the log does not retain it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SessionFacts {
    /// The harness's own session id.
    pub id: Option<String>,
    /// The id of the session this one is a subagent of, when its log names it.
    pub parent: Option<String>,
    /// Working directory of the session (the first one seen).
    pub cwd: Option<String>,
    /// Every working directory the log names, in first-seen order.
    pub cwds: Vec<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Model name (the first one seen).
    pub model: Option<String>,
    /// Harness version.
    pub version: Option<String>,
    /// Earliest timestamp seen.
    pub started_at: Option<String>,
    /// Latest timestamp seen.
    pub ended_at: Option<String>,
    /// Token usage, summed over distinct API messages, when retained.
    pub tokens: Option<TokenUsage>,
}

/// Token counts as retained by the log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenUsage {
    /// Input tokens, cache reads and writes included.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
}

/// A subagent session, nested under the call that started it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Subagent {
    /// The harness's id for the subagent.
    pub agent_id: String,
    /// Its own events and facts.
    pub session: Session,
}

/// One canonical event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// When the log says it happened; missing stays missing.
    pub timestamp: Option<String>,
    /// What happened.
    pub kind: EventKind,
}

/// The canonical event kinds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// A human prompt: starts a turn.
    Prompt {
        /// The prompt text.
        text: String,
    },
    /// Assistant text.
    Assistant {
        /// Markdown text.
        text: String,
    },
    /// Model reasoning; `None` when only a signature or an empty block was retained.
    Thinking {
        /// The reasoning text.
        text: Option<String>,
    },
    /// A tool call, with its result and normalized status.
    ToolCall(Box<ToolCall>),
    /// A message the human typed while the agent worked: joins the running turn, in order;
    /// never starts one.
    UserMessage {
        /// The message text.
        text: String,
    },
    /// A message to the agent from something other than the human (a background task's
    /// notification, another agent, a channel): shown in order inside the running turn; never
    /// starts one and is never prompt text.
    Notice {
        /// The notice text.
        text: String,
    },
    /// The user interrupted the agent.
    Interrupt,
    /// A run started without a prompt (a stream that writes none): a new turn begins here,
    /// unless the running turn holds nothing yet.
    TurnStart,
    /// The running turn ended: its last assistant message is its response, and what follows
    /// belongs to a new turn.
    TurnEnd,
    /// A run is under way in a stream that writes no prompts. When no turn is open and the
    /// log ends before anything else, the run is a turn of its own that holds nothing (the
    /// harness was stopped before it wrote more).
    RunStart,
    /// The conversation was compacted; the summary when retained.
    Compaction {
        /// The summary text.
        summary: Option<String>,
    },
    /// The run failed (a local cancellation is an `Interrupt`, never a failure). Boxed: it is
    /// rare and larger than the other kinds, which keeps every event small.
    Failure(Box<Failure>),
}

/// A tool call with everything the log retained about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The vendor's own call id, verbatim.
    pub call_id: String,
    /// Tool name as the harness calls it.
    pub name: String,
    /// Canonical kind of operation.
    pub kind: ToolKind,
    /// Arguments as retained.
    pub input: serde_json::Value,
    /// Size of the serialized arguments in bytes.
    pub input_size: usize,
    /// Shell command, when the call runs one.
    pub command: Option<String>,
    /// Paths the call names.
    pub paths: Vec<String>,
    /// A short human label for the call (a search pattern, a task's description), from the
    /// arguments the adapter names; the command or first path serve when there is none.
    pub label: Option<String>,
    /// The todo or plan list the call wrote, in order; empty when it wrote none.
    pub todos: Vec<Todo>,
    /// The line-number gutter of the file contents this tool returns.
    pub gutter: ReadGutter,
    /// The retained result, if any.
    pub result: Option<ToolResult>,
    /// The normalized outcome.
    pub status: ToolStatus,
    /// What decided the outcome.
    pub basis: StatusBasis,
    /// Subagent started by this call, when the log links one.
    pub agent_id: Option<String>,
}

/// A retained tool result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// Output text as retained.
    pub output: String,
    /// Size of the output in bytes.
    pub size: usize,
    /// Exit code, when the log retains one.
    pub exit_code: Option<i64>,
    /// The patch of an edit, when the log retained it, as unified diff text.
    pub patch: Option<String>,
    /// When the result was written.
    pub timestamp: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_round_trip() -> anyhow::Result<()> {
        for name in ToolStatus::NAMES {
            assert_eq!(name.parse::<ToolStatus>()?.as_str(), *name);
        }
        Ok(())
    }

    fn failure() -> Failure {
        Failure {
            scope: FailureScope::Session,
            product: "Codex".into(),
            stage: "turn".into(),
            category: "usage_limit_exceeded".into(),
            http_status: None,
            exit_code: None,
            signal: None,
            call_id: None,
        }
    }

    #[test]
    fn failure_line_leaves_out_what_was_not_observed() {
        assert_eq!(
            failure().line(),
            "Product session failure (product: Codex; stage: turn; category: usage_limit_exceeded)"
        );
    }

    #[test]
    fn failure_line_keeps_every_observed_fact_in_order() {
        let f = Failure {
            scope: FailureScope::Subagent,
            http_status: Some(502),
            exit_code: Some(1),
            signal: Some(9),
            ..failure()
        };
        assert_eq!(
            f.line(),
            "Product subagent failure (product: Codex; stage: turn; category: \
             usage_limit_exceeded; HTTP status: 502; exit code: 1; signal: 9)"
        );
    }

    #[test]
    fn failure_line_is_cut_on_a_char_boundary() {
        let f = Failure {
            category: "é".repeat(3000),
            ..failure()
        };
        let line = f.line();
        assert!(line.len() <= FAILURE_LINE_MAX);
        assert!(line.len() >= FAILURE_LINE_MAX - 1);
        assert!(line.ends_with('é'));
    }

    #[test]
    fn a_gutter_is_only_its_own_separator() {
        assert_eq!(ReadGutter::Pipe.len("00012| x"), 7);
        assert_eq!(ReadGutter::Arrow.len("  7→x"), 3 + "→".len());
        assert_eq!(ReadGutter::Tab.len("     1\tx"), 7);
        assert_eq!(ReadGutter::Colon.len("12: x"), 4);
        assert_eq!(ReadGutter::Colon.len("  7→x"), 0);
        assert_eq!(ReadGutter::Arrow.len("x = 1"), 0);
        assert_eq!(ReadGutter::None.len("     1\tx"), 0);
    }

    #[test]
    fn unknown_status_name_is_rejected_with_the_choices() {
        let err = "done".parse::<ToolStatus>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown value `done`, expected one of ok, error, unknown"
        );
    }
}

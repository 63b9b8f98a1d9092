//! The report model: plain serde data, embedded in every notebook and written by
//! `--format json`. It is a contract: field names below are stable within a `schema_version`.
//!
//! - every tool call has `call_id` (the vendor's id, verbatim) and `status` (`ok|error|unknown`);
//! - every turn has `response_status` (`complete|incomplete`);
//! - `failure`, on a turn or on the call that started a subagent, is one fixed diagnostic line
//!   when that run failed (absent otherwise): show it, do not parse it;
//! - no HTML: rendering happens later, from this data.

use serde::{Deserialize, Serialize};

// The canonical values the contract holds, so that what reads a report needs nothing else.
pub use crate::events::{ReadGutter, StatusBasis, Todo, TodoState, ToolKind, ToolStatus};
pub use crate::projection::ResponseStatus;

/// The version of this model. Bumped when a field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Version of this model.
    pub schema_version: u32,
    /// Facts about the run that made the report.
    pub meta: Meta,
    /// Facts about the session.
    pub session: SessionInfo,
    /// Totals over the session.
    pub summary: Summary,
    /// Turns in order.
    pub turns: Vec<TurnView>,
    /// Subagents the log holds that no retained call started.
    #[serde(default)]
    pub unlinked_subagents: Vec<SubagentView>,
    /// Records skipped on purpose, by reason.
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// What could not be read, naming input and line.
    #[serde(default)]
    pub warnings: Vec<WarningView>,
    /// Present when only some turns were kept (`--turns`, `--exclude-turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    /// `conversation` when only prompts and responses were kept (`--view conversation`): the
    /// process steps, outcomes and unlinked subagents are absent, not hidden. Left out of the
    /// JSON for the full view.
    #[serde(default, skip_serializing_if = "View::is_full")]
    pub view: View,
    /// `inline` when the notebook writes every turn as HTML (`--inline`). Left out of the JSON
    /// for the default, where turns past the first part of the page are stored compressed.
    #[serde(default, skip_serializing_if = "Storage::is_stored")]
    pub storage: Storage,
}

/// What a report keeps of each turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// Prompts, process steps, responses and outcomes.
    #[default]
    Full,
    /// Prompts and responses only.
    Conversation,
}

impl View {
    /// Whether this is the full view (the default, not written).
    pub fn is_full(&self) -> bool {
        *self == View::Full
    }
}

/// How a notebook writes its turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    /// Turns past the first part of the page stored compressed and shown by its script.
    #[default]
    Stored,
    /// Every turn as HTML, readable with JavaScript off.
    Inline,
}

impl Storage {
    /// Whether this is the default (not written).
    pub fn is_stored(&self) -> bool {
        *self == Storage::Stored
    }
}

/// Which turns a report keeps, when not all of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selection {
    /// The `--turns` value, normalized (`3-7,12`).
    pub turns: Option<String>,
    /// The `--exclude-turns` value, normalized.
    pub exclude: Option<String>,
    /// The numbers of the kept turns.
    pub kept: Vec<usize>,
    /// How many turns the session had.
    pub of: usize,
}

/// Facts about the tracebook run, kept apart so tests can pin them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// When the report was made (RFC 3339, UTC).
    pub generated_at: String,
    /// tracebook's version.
    pub tool_version: String,
}

/// Facts about the session; each one is `null` when the log does not retain it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// Adapter name (`claude-code`).
    pub harness: String,
    /// Human-readable harness name.
    pub harness_label: String,
    /// Input file name.
    pub source: String,
    /// The harness's session id.
    pub id: Option<String>,
    /// The id of the session this one is a subagent of, when its log names it (its parent's
    /// notebook holds it nested). Left out of the JSON otherwise: a field added within schema
    /// version 1, so every other report reads as it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The project: last segment of the working directory.
    pub project: Option<String>,
    /// Git branch.
    pub branch: Option<String>,
    /// Model.
    pub model: Option<String>,
    /// Harness version.
    pub version: Option<String>,
    /// First timestamp in the log.
    pub started_at: Option<String>,
    /// Last timestamp in the log.
    pub ended_at: Option<String>,
    /// Token usage, when retained.
    pub tokens: Option<Tokens>,
}

/// Token counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// Input tokens, cache included.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
}

/// Totals over the kept turns: their response statuses, and the statuses of every tool call they
/// hold, subagents' calls included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// Number of turns.
    pub turns: usize,
    /// Turns with a terminal response.
    pub complete: usize,
    /// Turns without one.
    pub incomplete: usize,
    /// Tool calls, subagents' included.
    pub tool_calls: usize,
    /// Tool calls with status ok.
    pub ok: usize,
    /// Tool calls with status error.
    pub error: usize,
    /// Tool calls with status unknown.
    pub unknown: usize,
}

/// One turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnView {
    /// Stable anchor, from the turn's position (`t3`).
    pub id: Box<str>,
    /// 1-based position.
    pub number: usize,
    /// The human prompt; `null` for events before any prompt (boxed, as is the response: a
    /// session's turns are held side by side, and the render lets them go a few at a time).
    pub prompt: Option<Box<TextView>>,
    /// Process events in source order.
    pub steps: Vec<StepView>,
    /// The terminal response, when retained.
    pub response: Option<Box<TextView>>,
    /// `complete` only with a terminal response.
    pub response_status: ResponseStatus,
    /// Counts.
    pub counts: CountsView,
    /// Evidence-bounded outcome.
    pub outcome: Outcome,
    /// The fixed failure line when the turn's run failed (such a turn is `incomplete`); a
    /// plain string for readers, not for parsing. Absent when the run did not fail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<Box<str>>,
    /// Milliseconds from the prompt (or the first event) to the last time the turn holds;
    /// absent when fewer than two times are retained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Why an `incomplete` turn has no final response; absent on a complete turn (boxed:
    /// most turns are complete, and a session's turns are held side by side).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ending: Option<Box<EndingView>>,
}

/// Why a turn has no final response, in words, with the steps that show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EndingView {
    /// One line: what the last event was and whether the log ends there
    /// (`interrupted by the user at 14:21:43 UTC; the log ends here`).
    pub reason: String,
    /// The anchor of the step the reason names (the interrupt, the last call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// The anchor of the turn's last assistant message, which is not a final response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_message: Option<String>,
}

/// Counts of one turn (32 bits each: a session's turns are held side by side, and a turn's
/// view takes the place of its projected turn, no larger than it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CountsView {
    /// Assistant messages that are not the terminal response.
    pub intermediate_responses: u32,
    /// Tool calls.
    pub tool_calls: u32,
    /// Every retained process event.
    pub process_events: u32,
    /// The turn's own tool calls with status error (a subagent's are counted in its turns).
    #[serde(default)]
    pub error: u32,
    /// The turn's own tool calls with status unknown.
    #[serde(default)]
    pub unknown: u32,
}

/// A text with its anchor and time (the anchor and the time boxed, taking 56 bytes: a
/// session's prompts and responses are held side by side).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextView {
    /// Stable anchor.
    pub id: Box<str>,
    /// The text (Markdown for assistant text).
    pub text: String,
    /// When; `null` when the log has no time.
    pub timestamp: Option<Box<str>>,
}

/// One process event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StepView {
    /// An intermediate assistant message.
    Assistant(TextView),
    /// Reasoning; `text` is `null` when not retained.
    Thinking {
        /// Stable anchor.
        id: String,
        /// The reasoning text.
        text: Option<String>,
        /// When.
        timestamp: Option<String>,
    },
    /// A tool call.
    ToolCall(Box<ToolCallView>),
    /// A message the human typed while the agent worked.
    UserMessage(TextView),
    /// A message from something other than the human (a task's notification, another agent).
    Notice(TextView),
    /// The user interrupted.
    Interrupt {
        /// Stable anchor.
        id: String,
        /// When.
        timestamp: Option<String>,
    },
    /// The conversation was compacted.
    Compaction {
        /// Stable anchor.
        id: String,
        /// The summary, when retained.
        summary: Option<String>,
        /// When.
        timestamp: Option<String>,
    },
}

impl StepView {
    /// The step's anchor.
    pub fn id(&self) -> &str {
        match self {
            StepView::Assistant(t) | StepView::UserMessage(t) | StepView::Notice(t) => &t.id,
            StepView::ToolCall(c) => &c.id,
            StepView::Thinking { id, .. }
            | StepView::Interrupt { id, .. }
            | StepView::Compaction { id, .. } => id,
        }
    }
}

/// One tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallView {
    /// Stable anchor.
    pub id: String,
    /// The vendor's call id, verbatim.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Canonical kind.
    pub kind: ToolKind,
    /// `ok`, `error` or `unknown`.
    pub status: ToolStatus,
    /// What decided the status.
    pub status_basis: StatusBasis,
    /// Shell command, when it runs one.
    pub command: Option<String>,
    /// Paths it names.
    pub paths: Vec<String>,
    /// A short label from the arguments the adapter names (a pattern, a description); the
    /// command and the first path come first on the page. Absent when the adapter names none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The todo or plan list the call wrote, each item `done`, `active`, `pending`,
    /// `cancelled` or `unknown`. Left out when it wrote none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub todos: Vec<Todo>,
    /// The line-number gutter of the file contents the tool returns (`tab`, `arrow`, `pipe`,
    /// `colon`); left out when it has none.
    #[serde(default, skip_serializing_if = "is_no_gutter")]
    pub gutter: ReadGutter,
    /// Arguments as retained.
    pub input: serde_json::Value,
    /// Size of the arguments in bytes.
    pub input_size: usize,
    /// Size of the retained output in bytes; `null` when no result was retained.
    pub result_size: Option<usize>,
    /// Retained output; `null` when no result was retained.
    pub output: Option<String>,
    /// Retained exit code.
    pub exit_code: Option<i64>,
    /// Retained patch as unified diff; `null` when the log kept none.
    pub patch: Option<String>,
    /// When the call was made.
    pub timestamp: Option<String>,
    /// When its result was written.
    pub result_timestamp: Option<String>,
    /// The subagent this call started, with its own turns.
    pub subagent: Option<SubagentView>,
    /// The fixed failure line of the subagent this call started, when its run failed; a plain
    /// string, not for parsing. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Milliseconds from the call to its result, when both times are retained.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// For a call with status error, the output line that says what went wrong (cut to 160
    /// characters): for a non-zero exit the last line naming a failure, otherwise the first
    /// line with words. Absent when no line qualifies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_line: Option<String>,
    /// For a call with status unknown, why, in words, from `status_basis`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_reason: Option<String>,
}

fn is_no_gutter(g: &ReadGutter) -> bool {
    *g == ReadGutter::None
}

/// A subagent and its turns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubagentView {
    /// Stable anchor.
    pub id: String,
    /// The harness's id for it.
    pub agent_id: String,
    /// Its turns (anchors prefixed by the parent's).
    pub turns: Vec<TurnView>,
}

/// A turn's [`OutcomeView`], read through `*` (or a field, as `outcome.edits`): written and
/// read as the view itself, and held boxed, taking no room when empty (most turns edit,
/// verify and commit nothing, and a session's turns are held side by side).
#[derive(Clone, Default)]
pub struct Outcome(Option<Box<OutcomeView>>);

/// The outcome of a turn that retained none.
static NO_OUTCOME: OutcomeView = OutcomeView {
    edits: Vec::new(),
    verifications: Vec::new(),
    commits: Vec::new(),
};

impl From<OutcomeView> for Outcome {
    fn from(view: OutcomeView) -> Self {
        match view.edits.is_empty() && view.verifications.is_empty() && view.commits.is_empty() {
            true => Outcome(None),
            false => Outcome(Some(Box::new(view))),
        }
    }
}

impl std::ops::Deref for Outcome {
    type Target = OutcomeView;
    fn deref(&self) -> &OutcomeView {
        self.0.as_deref().unwrap_or(&NO_OUTCOME)
    }
}

impl std::ops::DerefMut for Outcome {
    fn deref_mut(&mut self) -> &mut OutcomeView {
        self.0.get_or_insert_default()
    }
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Outcome {}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        OutcomeView::deserialize(deserializer).map(Outcome::from)
    }
}

/// What the log retained of a turn's effects.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OutcomeView {
    /// Edited paths with the status of each edit call.
    pub edits: Vec<EditView>,
    /// Verification commands and their status.
    pub verifications: Vec<VerificationView>,
    /// Commits seen in tool output.
    pub commits: Vec<CommitView>,
}

/// One edited path and every call that edited it, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditView {
    /// The path.
    pub path: String,
    /// The edit calls that named it.
    pub calls: Vec<EditCall>,
}

impl EditView {
    /// Whether any edit of this path lacks a retained patch.
    pub fn patch_unavailable(&self) -> bool {
        self.calls.iter().any(|c| c.patch.is_unavailable())
    }
}

/// One edit call on a path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditCall {
    /// The edit call's status.
    pub status: ToolStatus,
    /// The edit call's vendor id.
    pub call_id: String,
    /// The anchor of the step.
    pub step: String,
    /// `retained` or `unavailable`.
    pub patch: Availability,
}

/// Whether the log kept something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Availability {
    /// The log kept it.
    Retained,
    /// The log did not keep it.
    Unavailable,
}

impl Availability {
    /// Whether the log did not keep it.
    pub fn is_unavailable(self) -> bool {
        self == Availability::Unavailable
    }
}

/// One verification command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerificationView {
    /// The command.
    pub command: String,
    /// Its status.
    pub status: ToolStatus,
    /// The call's vendor id.
    pub call_id: String,
    /// The anchor of the step.
    pub step: String,
}

/// One commit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitView {
    /// Hash as printed.
    pub hash: String,
    /// Subject line.
    pub subject: String,
    /// The call whose output showed it.
    pub call_id: String,
    /// The anchor of the step.
    pub step: String,
}

/// Records skipped on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// The adapter's reason.
    pub reason: String,
    /// How many.
    pub count: usize,
}

/// A warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarningView {
    /// Input name.
    pub source: String,
    /// Line, when about one line.
    pub line: Option<usize>,
    /// What happened.
    pub message: String,
}

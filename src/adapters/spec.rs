//! The adapter language: serde structs for one adapter YAML file, validated at load.
//!
//! This is the only file that names the YAML crate, so swapping it touches nothing else.
//! The language is documented for users in `adapters/README.md`.

use regex::Regex;
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;

use crate::events::{FailureScope, ToolKind, ToolStatus, UNKNOWN};

/// A loading or validation failure, naming the file, the field and the value.
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    /// The YAML did not parse into the schema.
    #[error("adapter {file}: {message}")]
    Syntax {
        /// The adapter file name.
        file: String,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A field holds a value the language does not accept.
    #[error("adapter {file}: field `{field}`: {message}")]
    Invalid {
        /// The adapter file name.
        file: String,
        /// Where in the file, as a dotted path.
        field: String,
        /// What is wrong and what is expected.
        message: String,
    },
}

/// One adapter, validated: every regex compiled and every table resolved.
#[derive(Debug, Clone)]
pub struct AdapterSpec {
    /// Adapter name, used by `--harness`.
    pub name: String,
    /// Human-readable harness name.
    pub label: String,
    /// How input files are laid out.
    pub input: InputSpec,
    /// How to recognize this harness's files.
    pub detect: Vec<Condition>,
    /// Session facts, read from every record (first present value wins).
    pub session: SessionSpec,
    /// Record-level rules that apply before `event_map`.
    pub records: RecordsSpec,
    /// The rule list, tried in order; the first rule whose `when` matches is applied.
    pub event_map: Vec<Rule>,
    /// Named translation tables (`*_map`).
    pub tables: BTreeMap<String, Table>,
    /// The stage and category names this adapter's failure lines may carry.
    pub failures: FailureVocabulary,
    /// Where this harness keeps its sessions, for `tracebook list` and `render --all`.
    pub discover: Option<DiscoverSpec>,
}

/// The allowlists of a failure line's `stage` and `category`. Tables that feed those
/// fields may only name these words or `unknown`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FailureVocabulary {
    /// Where a run can fail, in this harness's terms.
    #[serde(default)]
    pub stages: Vec<String>,
    /// Why a run can fail, in this harness's terms.
    #[serde(default)]
    pub categories: Vec<String>,
}

/// Where a harness keeps its sessions on disk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoverSpec {
    /// Candidate base folders, tried in order: the first whose variable is set is used.
    pub root: Vec<RootSpec>,
    /// Glob patterns, relative to the base folder, of main session files (`*` stays inside
    /// one folder, `**` crosses folders).
    pub files: Vec<String>,
    /// File-name patterns that are never main session files (subagent transcripts, say).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Variables that name one more session file (or database): an absolute path, or one
    /// relative to the base folder. A value that names no file is ignored.
    #[serde(default)]
    pub file_env: Vec<String>,
    /// A found file that holds no turn is not a session: the harness leaves such files
    /// behind and does not list them itself (Gemini CLI's resume writes one).
    #[serde(default)]
    pub skip_empty: bool,
}

/// One candidate base folder: an environment variable or a folder under the home folder,
/// optionally followed by a relative path.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootSpec {
    /// An environment variable holding a folder (`CODEX_HOME`).
    #[serde(default)]
    pub env: Option<String>,
    /// A folder relative to the home folder (`.claude`); `""` is the home folder itself.
    #[serde(default)]
    pub home: Option<String>,
    /// A relative path appended to the folder (`opencode` after `XDG_DATA_HOME`).
    #[serde(default)]
    pub join: Option<String>,
}

/// How an input is read.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    /// The container format.
    pub format: InputFormat,
    /// File name endings this adapter reads (without the dot).
    #[serde(default)]
    pub extensions: Vec<String>,
    /// For `json` documents: JSON pointer to the array of records.
    #[serde(default)]
    pub records_at: Option<String>,
    /// File endings read as one JSON document (records at `records_at`) whatever `format`
    /// says: a harness that wrote one document per session before it switched to JSONL.
    #[serde(default)]
    pub document_extensions: Vec<String>,
    /// Sibling files or folders holding subagent sessions, as glob-like patterns relative to
    /// the main file's folder; `{stem}` is the main file's name without extension, `{id}` the
    /// main session's id.
    #[serde(default)]
    pub subagent_files: Vec<String>,
    /// For `tree` and `sqlite` inputs: how files or tables join into records.
    #[serde(default)]
    pub join: Option<JoinSpec>,
    /// Further layouts the same harness writes, each read and detected on its own.
    #[serde(default)]
    pub layouts: Vec<InputSpec>,
}

/// How a `tree` (a folder of JSON files) or `sqlite` (a database) input joins into records:
/// one session, its records, each record's children, and child sessions (subagents).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinSpec {
    /// For `tree`: sub-folders of the input that may hold the tree (`.` is the input itself),
    /// tried in order.
    #[serde(default)]
    pub roots: Vec<String>,
    /// The session object.
    pub session: JoinLevel,
    /// The records of a session.
    pub records: JoinLevel,
    /// The children of each record.
    #[serde(default)]
    pub children: Option<JoinLevel>,
    /// Child sessions of a session, read like the session and kept as subagents.
    #[serde(default)]
    pub subsessions: Option<JoinLevel>,
}

/// One level of a join. `{field}` in `files` and `:field` in `query` are the parent object's
/// top-level field of that name (the session for records and subsessions, the record for
/// children).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JoinLevel {
    /// For `tree`: a path pattern relative to the root; `*` matches within one name.
    #[serde(default)]
    pub files: Option<String>,
    /// For `sqlite`: a query; each row becomes an object keyed by column name.
    #[serde(default)]
    pub query: Option<String>,
    /// For `sqlite`: a column holding a JSON object; the other columns are put into it.
    #[serde(default)]
    pub merge: Option<String>,
    /// Wrap each object under this key (`as: info` gives `{info: …}`).
    #[serde(default, rename = "as")]
    pub wrap: Option<String>,
    /// For children: the key of the parent record that receives the list.
    #[serde(default)]
    pub into: Option<String>,
    /// For the session: of several candidates, pick the one with the greatest value here.
    #[serde(default)]
    pub latest: Option<String>,
    /// Leave out objects where this pointer is present (child sessions, as main session).
    #[serde(default)]
    pub unless: Option<String>,
    /// For `tree` subsessions: the field that must equal the parent session's `id`.
    #[serde(default)]
    pub link: Option<String>,
    /// Order objects by this pointer (stable; file order breaks ties).
    #[serde(default)]
    pub order_by: Option<String>,
}

/// Input container formats the language knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputFormat {
    /// One JSON record per line; the last line may be partial.
    Jsonl,
    /// One JSON document with the records at `records_at`.
    Json,
    /// A folder of JSON files joined into records by `join`.
    Tree,
    /// An SQLite database, opened read-only, joined into records by `join` queries.
    Sqlite,
}

/// Where session facts live.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    /// Session id.
    pub id: Option<ValueSpec>,
    /// The id of the session this one is a subagent of, read from the record the id comes
    /// from: a subagent's own log that its parent's reads nested.
    pub parent: Option<ValueSpec>,
    /// Working directory.
    pub cwd: Option<ValueSpec>,
    /// Git branch.
    pub branch: Option<ValueSpec>,
    /// Harness version.
    pub version: Option<ValueSpec>,
    /// Model name.
    pub model: Option<ValueSpec>,
    /// Record timestamp; also the default timestamp of every event emitted from the record.
    pub timestamp: Option<ValueSpec>,
    /// Token usage of an API message, counted once per `usage_key`.
    pub usage: Option<UsageSpec>,
}

/// Token usage fields.
#[derive(Debug, Clone)]
pub struct UsageSpec {
    /// Counts each API message once (usage is repeated on every record of one message).
    pub key: ValueSpec,
    /// Input token fields, summed.
    pub input: Vec<ValueSpec>,
    /// Output token fields, summed.
    pub output: Vec<ValueSpec>,
}

/// Record-level rules.
#[derive(Debug, Clone, Default)]
pub struct RecordsSpec {
    /// Where a record's (or element's) type name is, for messages about unmatched records.
    pub type_at: Option<Pointer>,
    /// A record whose key was seen before is skipped (resumed sessions repeat records).
    pub dedup: Option<ValueSpec>,
    /// Records that belong to a subagent, written inline in the parent's file.
    pub sidechain: Option<SidechainSpec>,
    /// Append-only logs that rewrite earlier records (replayed before the rules run).
    pub replay: Option<ReplaySpec>,
    /// Records are regrouped so each one follows the group of the record its parent names.
    pub group_by: Option<GroupBy>,
    /// Where a record can carry conversation (a message, content, a tool call or result). A
    /// record no rule matches that holds none of these is a metadata record: counted as
    /// skipped, not warned about. Empty: every record no rule matches is warned about.
    pub conversation: Vec<Pointer>,
}

/// How an append-only log replaces, rewinds and resets its records. The records are replayed
/// first, and the rules then see the final list in order.
#[derive(Debug, Clone)]
pub struct ReplaySpec {
    /// A record whose key was seen before replaces the earlier copy, in its place.
    pub key: Pointer,
    /// A record holding a key here removes the record with that key and every later one.
    pub rewind: Option<Pointer>,
    /// A record holding an array here replaces every record read so far with its elements.
    pub reset: Option<Pointer>,
    /// A reset keeps the records before it (an audit keeps what the log wrote): a listed
    /// record whose key is already in the log leaves that copy as first written, one with a
    /// new key is added in the reset's place.
    pub reset_keeps: bool,
    /// With `reset_keeps`, the listed records with a new key that are added; any other is a
    /// copy of an earlier record under a new key (counted as skipped, as is every later copy
    /// with that key). Empty: every one is added.
    pub reset_adds: Vec<Condition>,
}

/// Regrouping records by a parent link (a turn's replies point at the prompt that started it).
#[derive(Debug, Clone)]
pub struct GroupBy {
    /// A record's own key.
    pub key: Pointer,
    /// The key of the record it belongs after.
    pub parent: Pointer,
}

/// Inline subagent records.
#[derive(Debug, Clone)]
pub struct SidechainSpec {
    /// Which records are sidechain records.
    pub when: Vec<Condition>,
    /// The subagent's id.
    pub agent: ValueSpec,
}

/// One rule of `event_map`.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Conditions, all of which must hold.
    pub when: Vec<Condition>,
    /// What the rule does.
    pub action: Action,
}

/// What a matching rule does.
#[derive(Debug, Clone)]
pub enum Action {
    /// Drop the record or element; the reason is counted in the report.
    Skip(String),
    /// Emit one canonical event.
    Emit(Box<Emit>),
    /// Apply, in order, every nested rule whose `when` holds (not only the first).
    Steps(Vec<Rule>),
    /// Emit several canonical events from one item, in order (a call and its result).
    EmitAll(Vec<Emit>),
    /// Apply nested rules to each element of an array, in order.
    Each {
        /// Pointer to the array.
        at: Pointer,
        /// Rules for each element.
        rules: Vec<Rule>,
    },
}

/// An event to emit, with its fields.
#[derive(Debug, Clone)]
pub enum Emit {
    /// A human prompt.
    Prompt {
        /// Prompt text.
        text: ValueSpec,
        /// When set, the prompt stands only if its stream holds no other prompt; otherwise it
        /// is skipped and counted under this reason (history items that repeat the prompt
        /// events a log may lack).
        fallback: Option<String>,
    },
    /// A message the human typed while the agent worked (joins the running turn).
    UserMessage {
        /// Message text.
        text: ValueSpec,
    },
    /// A message from something other than the human (joins the running turn).
    Notice {
        /// Notice text.
        text: ValueSpec,
    },
    /// Assistant text.
    Assistant(Box<AssistantEmit>),
    /// Reasoning text (empty means not retained).
    Thinking {
        /// Reasoning text.
        text: Option<ValueSpec>,
        /// As for `Assistant`.
        key: Option<Box<ValueSpec>>,
        /// As for `Assistant`.
        revise: bool,
    },
    /// A tool call.
    ToolCall(Box<ToolCallEmit>),
    /// A tool result, paired with its call by id.
    ToolResult(Box<ToolResultEmit>),
    /// A user interrupt.
    Interrupt,
    /// A record that starts a turn without a prompt (a run's start in a stream that writes
    /// no prompts).
    TurnStart,
    /// A record that says the running turn has ended (completed or failed).
    TurnEnd,
    /// A record that says a run is under way (a step began) in a stream that writes no
    /// prompts: a log that ends right after it still shows that run as a turn.
    RunStart,
    /// A compaction marker or summary.
    Compaction {
        /// Summary text.
        summary: Option<ValueSpec>,
    },
    /// A run's failure, as bounded facts.
    Failure(Box<FailureEmit>),
}

/// Fields of emitted assistant text.
#[derive(Debug, Clone)]
pub struct AssistantEmit {
    /// Markdown text.
    pub text: ValueSpec,
    /// Events with equal key and text are kept once (one message written twice).
    pub key: Option<ValueSpec>,
    /// When this value is `true`, the text continues the assistant event just before it
    /// (streamed chunks).
    pub delta: Option<ValueSpec>,
    /// With `key`: a later event with the same key replaces the earlier one's text where it
    /// stands (one item written again as it grows).
    pub revise: bool,
}

/// Fields of an emitted failure. `stage` and `category` go through tables checked against the
/// adapter's `failures` allowlists; the numbers are kept only when they are integers.
#[derive(Debug, Clone)]
pub struct FailureEmit {
    /// `session` or `subagent`; derived from where the record sits when absent.
    pub scope: Option<ValueSpec>,
    /// Where the run failed.
    pub stage: Option<ValueSpec>,
    /// Why it failed.
    pub category: Option<ValueSpec>,
    /// HTTP status (an integer from 100 to 599).
    pub http_status: Option<ValueSpec>,
    /// Process exit code (an integer).
    pub exit_code: Option<ValueSpec>,
    /// Signal number (an integer).
    pub signal: Option<ValueSpec>,
    /// The subagent call whose run failed, when the record names it.
    pub call_id: Option<ValueSpec>,
}

/// Fields of an emitted tool call.
#[derive(Debug, Clone)]
pub struct ToolCallEmit {
    /// The vendor's call id.
    pub call_id: ValueSpec,
    /// Tool name.
    pub name: ValueSpec,
    /// Canonical kind, usually through a table.
    pub kind: Option<ValueSpec>,
    /// Arguments.
    pub input: Option<ValueSpec>,
    /// Shell command.
    pub command: Option<ValueSpec>,
    /// Paths named by the call (every present value is kept).
    pub paths: Vec<ValueSpec>,
}

/// Fields of an emitted tool result.
#[derive(Debug, Clone)]
pub struct ToolResultEmit {
    /// The id of the call this result belongs to (absent with `of_agent`).
    pub call_id: Option<ValueSpec>,
    /// The subagent whose call this result belongs to, for a record that names the subagent,
    /// not the call: the call is the one whose result named that subagent in `agent_id`.
    pub of_agent: Option<ValueSpec>,
    /// Output text.
    pub output: Option<ValueSpec>,
    /// Vendor status word, through a status table.
    pub status: Option<ValueSpec>,
    /// Exit code, through an exit-code table.
    pub exit_code: Option<ValueSpec>,
    /// Retained patch.
    pub patch: Option<PatchSpec>,
    /// Subagent started by the call.
    pub agent_id: Option<ValueSpec>,
    /// The call's name, used only when the log holds no call with this id.
    pub name: Option<ValueSpec>,
    /// The call's kind, used only when the log holds no call with this id.
    pub kind: Option<ValueSpec>,
    /// The call's command, used only when the log holds no call with this id.
    pub command: Option<ValueSpec>,
}

/// Where a patch lives and in which form.
#[derive(Debug, Clone)]
pub enum PatchSpec {
    /// Unified diff text.
    Unified(ValueSpec),
    /// A list of hunk objects.
    Hunks {
        /// The hunk list.
        at: Box<ValueSpec>,
        /// Field names inside each hunk.
        fields: HunkFields,
        /// The edited path, for the diff header.
        path: Option<ValueSpec>,
    },
}

/// Field pointers inside one structured hunk.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HunkFields {
    /// First old line.
    pub old_start: String,
    /// Old line count.
    pub old_lines: String,
    /// First new line.
    pub new_start: String,
    /// New line count.
    pub new_lines: String,
    /// The hunk's lines, each starting with ' ', '-' or '+'.
    pub lines: String,
}

/// A condition over the current item.
#[derive(Debug, Clone)]
pub enum Condition {
    /// The value equals a JSON scalar.
    Eq(Pointer, Json),
    /// The value is one of a set of scalars.
    OneOf(Pointer, Vec<Json>),
    /// The value is present (and not null) or absent.
    Present(Pointer, bool),
    /// The value is a string matching a regex.
    Matches(Pointer, Regex),
    /// The value has a JSON type.
    Is(Pointer, JsonType),
    /// Any of the nested conditions holds.
    Any(Vec<Condition>),
    /// All of the nested conditions hold.
    All(Vec<Condition>),
    /// The nested condition does not hold.
    Not(Box<Condition>),
}

/// JSON value types for `is:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonType {
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
    /// A number.
    Number,
    /// A boolean.
    Bool,
    /// JSON null.
    Null,
}

/// A JSON pointer relative to the current item or, with a leading `^`, to the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// Resolve against the whole record instead of the current element.
    pub from_record: bool,
    /// JSON pointer (`""` is the item itself).
    pub path: String,
}

/// How to compute one value from the current item.
#[derive(Debug, Clone)]
pub struct ValueSpec {
    /// Pointers tried in order; the first present, non-null one wins.
    pub at: Vec<Pointer>,
    /// A constant, used when no pointer is given or none is present.
    pub constant: Option<Json>,
    /// Flatten a string or a list of text parts into one text.
    pub text: bool,
    /// Remove every match of this regex from the text, then trim it; nothing left makes the
    /// value absent.
    pub strip: Option<Box<Regex>>,
    /// With `text`, only the list elements for which these conditions hold are flattened
    /// (a prompt's parts without the ones a hook appended; a reply's parts without its
    /// reasoning). Empty: every element.
    pub parts: Vec<Condition>,
    /// Capture group 1 (or the whole match) of this regex over the string value.
    pub regex: Option<Regex>,
    /// Translate the value through this named table.
    pub map: Option<String>,
    /// Parse a string value as JSON; a string that is not JSON makes the value absent.
    pub json: bool,
    /// After `json`, read this pointer inside the value; absent when it is not there.
    pub pick: Option<Pointer>,
    /// Alternatives tried in order when `at` and `const` give nothing; the first present wins.
    pub first_of: Vec<ValueSpec>,
    /// Values gathered, when `at` and `first_of` give nothing, into a list of the present ones
    /// in order (for `join`: a server and a tool name as one name).
    pub all_of: Vec<ValueSpec>,
    /// Join an array of scalars into one text with this separator.
    pub join: Option<Box<str>>,
    /// Read a number as milliseconds since the Unix epoch and give an RFC 3339 time.
    pub epoch_ms: bool,
    /// Read an externally tagged variant: a string is its own name, an object with exactly one
    /// key gives that key; anything else gives no value.
    pub variant: bool,
}

/// A named translation table.
#[derive(Debug, Clone)]
pub struct Table {
    /// Vendor word → canonical word.
    pub values: BTreeMap<String, String>,
    /// Result when the value is absent.
    pub missing: Option<String>,
    /// Result for any word not in `values`.
    pub default: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Raw serde layer. Kept private: validation turns it into the types above.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAdapter {
    name: String,
    label: String,
    #[serde(default)]
    description: Option<String>,
    input: InputSpec,
    #[serde(default)]
    detect: Vec<RawCondition>,
    #[serde(default)]
    session: RawSession,
    #[serde(default)]
    records: RawRecords,
    event_map: Vec<RawRule>,
    #[serde(default)]
    failures: FailureVocabulary,
    discover: Option<DiscoverSpec>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSession {
    id: Option<RawValue>,
    parent: Option<RawValue>,
    cwd: Option<RawValue>,
    branch: Option<RawValue>,
    version: Option<RawValue>,
    model: Option<RawValue>,
    timestamp: Option<RawValue>,
    usage: Option<RawUsage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUsage {
    key: RawValue,
    #[serde(default)]
    input: Vec<RawValue>,
    #[serde(default)]
    output: Vec<RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRecords {
    type_at: Option<String>,
    dedup: Option<RawValue>,
    sidechain: Option<RawSidechain>,
    replay: Option<RawReplay>,
    group_by: Option<RawGroupBy>,
    #[serde(default)]
    conversation: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReplay {
    key: String,
    rewind: Option<String>,
    reset: Option<String>,
    #[serde(default)]
    reset_keeps: bool,
    #[serde(default)]
    reset_adds: Vec<RawCondition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGroupBy {
    key: String,
    parent: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawEmits {
    One(Box<RawEmit>),
    Many(Vec<RawEmit>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSidechain {
    when: Vec<RawCondition>,
    agent: RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    when: Vec<RawCondition>,
    skip: Option<String>,
    emit: Option<RawEmits>,
    each: Option<String>,
    rules: Option<Vec<RawRule>>,
    steps: Option<Vec<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEmit {
    kind: String,
    text: Option<RawValue>,
    summary: Option<RawValue>,
    call_id: Option<RawValue>,
    name: Option<RawValue>,
    tool_kind: Option<RawValue>,
    input: Option<RawValue>,
    command: Option<RawValue>,
    #[serde(default)]
    paths: Vec<RawValue>,
    output: Option<RawValue>,
    status: Option<RawValue>,
    exit_code: Option<RawValue>,
    patch: Option<RawPatch>,
    agent_id: Option<RawValue>,
    of_agent: Option<RawValue>,
    key: Option<RawValue>,
    delta: Option<RawValue>,
    #[serde(default)]
    revise: bool,
    fallback: Option<String>,
    scope: Option<RawValue>,
    stage: Option<RawValue>,
    category: Option<RawValue>,
    http_status: Option<RawValue>,
    signal: Option<RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPatch {
    unified: Option<RawValue>,
    hunks: Option<RawValue>,
    fields: Option<HunkFields>,
    path: Option<RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCondition {
    at: Option<String>,
    eq: Option<Json>,
    one_of: Option<Vec<Json>>,
    present: Option<bool>,
    matches: Option<String>,
    is: Option<JsonType>,
    any: Option<Vec<RawCondition>>,
    all: Option<Vec<RawCondition>>,
    not: Option<Box<RawCondition>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawValue {
    Pointer(String),
    Pointers(Vec<String>),
    Full(Box<RawValueFull>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawValueFull {
    at: Option<OneOrMany>,
    #[serde(rename = "const")]
    constant: Option<Json>,
    #[serde(default)]
    text: bool,
    strip: Option<String>,
    #[serde(default)]
    parts: Vec<RawCondition>,
    regex: Option<String>,
    map: Option<String>,
    #[serde(default)]
    json: bool,
    pick: Option<String>,
    first_of: Option<Vec<RawValue>>,
    all_of: Option<Vec<RawValue>>,
    join: Option<String>,
    #[serde(default)]
    epoch_ms: bool,
    #[serde(default)]
    variant: bool,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    #[serde(default)]
    values: BTreeMap<String, String>,
    missing: Option<String>,
    default: Option<String>,
}

impl RawValueFull {
    fn at(at: OneOrMany) -> Self {
        Self {
            at: Some(at),
            constant: None,
            text: false,
            strip: None,
            parts: Vec::new(),
            regex: None,
            map: None,
            json: false,
            pick: None,
            first_of: None,
            all_of: None,
            join: None,
            epoch_ms: false,
            variant: false,
        }
    }
}

/// What canonical vocabulary a table is used for; checked when an emit field names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Status,
    Kind,
    Scope,
    Stage,
    Category,
    /// An integer: no table may feed it.
    Integer,
    Free,
}

impl AdapterSpec {
    /// Parses and validates one adapter file. `file` names it in every error.
    pub fn parse(file: &str, text: &str) -> Result<Self, AdapterError> {
        let doc: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(text).map_err(|e| AdapterError::Syntax {
                file: file.to_owned(),
                message: e.to_string(),
            })?;
        let serde_yaml_ng::Value::Mapping(map) = doc else {
            return Err(AdapterError::Syntax {
                file: file.to_owned(),
                message: "the document must be a mapping".to_owned(),
            });
        };
        // Top-level `*_map` keys (other than `event_map`) are named tables; the rest is the
        // fixed schema, checked with deny_unknown_fields.
        let mut fixed = serde_yaml_ng::Mapping::new();
        let mut raw_tables = BTreeMap::new();
        for (key, value) in map {
            let name = key.as_str().unwrap_or_default().to_owned();
            if is_table_name(&name) {
                let table: RawTable =
                    serde_yaml_ng::from_value(value).map_err(|e| AdapterError::Invalid {
                        file: file.to_owned(),
                        field: name.clone(),
                        message: format!("not a table: {e}"),
                    })?;
                raw_tables.insert(name, table);
            } else {
                fixed.insert(key, value);
            }
        }
        let mut raw: RawAdapter = serde_yaml_ng::from_value(serde_yaml_ng::Value::Mapping(fixed))
            .map_err(|e| AdapterError::Syntax {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
        let failures = std::mem::take(&mut raw.failures);
        Validator {
            file,
            tables: &raw_tables,
            failures: &failures,
        }
        .adapter(raw, &raw_tables)
    }
}

/// Whether a top-level key names a translation table: `^(?!event_map$)[a-z][a-z0-9_]*_map$`.
pub fn is_table_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix("_map") else {
        return false;
    };
    let mut chars = stem.chars();
    name != "event_map"
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A path that stays inside its base folder: relative, without `..`.
fn relative_path(p: &str) -> Result<(), String> {
    if p.starts_with('/') || p.starts_with('~') || p.contains('\\') || p.contains(':') {
        return Err(format!("`{p}` must be a relative path with `/` separators"));
    }
    if p.split('/').any(|seg| seg == "..") {
        return Err(format!("`{p}` must not climb out of its folder with `..`"));
    }
    Ok(())
}

struct Validator<'a> {
    file: &'a str,
    tables: &'a BTreeMap<String, RawTable>,
    failures: &'a FailureVocabulary,
}

impl Validator<'_> {
    fn invalid(&self, field: &str, message: impl Into<String>) -> AdapterError {
        AdapterError::Invalid {
            file: self.file.to_owned(),
            field: field.to_owned(),
            message: message.into(),
        }
    }

    fn adapter(
        &self,
        raw: RawAdapter,
        raw_tables: &BTreeMap<String, RawTable>,
    ) -> Result<AdapterSpec, AdapterError> {
        let _ = raw.description;
        if raw.name.is_empty()
            || !raw
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(self.invalid(
                "name",
                format!(
                    "`{}` is not a valid adapter name (lowercase letters, digits, '-')",
                    raw.name
                ),
            ));
        }
        if (raw.input.format == InputFormat::Json || !raw.input.document_extensions.is_empty())
            && raw.input.records_at.is_none()
        {
            return Err(self.invalid(
                "input.records_at",
                "a `json` input needs `records_at`, the pointer to its records",
            ));
        }
        self.input("input", &raw.input)?;
        for (i, layout) in raw.input.layouts.iter().enumerate() {
            let field = format!("input.layouts[{i}]");
            if !layout.layouts.is_empty() {
                return Err(self.invalid(&field, "a layout cannot hold further `layouts`"));
            }
            self.input(&field, layout)?;
        }
        self.vocabulary()?;
        let mut targets = BTreeMap::new();
        let detect = self.conditions("detect", raw.detect)?;
        let session = self.session(raw.session, &mut targets)?;
        let records = RecordsSpec {
            type_at: raw
                .records
                .type_at
                .as_deref()
                .map(|p| self.pointer("records.type_at", p))
                .transpose()?,
            dedup: self.opt_value(
                "records.dedup",
                raw.records.dedup,
                Target::Free,
                &mut targets,
            )?,
            sidechain: match raw.records.sidechain {
                Some(s) => Some(SidechainSpec {
                    when: self.conditions("records.sidechain.when", s.when)?,
                    agent: self.value(
                        "records.sidechain.agent",
                        s.agent,
                        Target::Free,
                        &mut targets,
                    )?,
                }),
                None => None,
            },
            replay: match raw.records.replay {
                Some(r) => Some(ReplaySpec {
                    key: self.pointer("records.replay.key", &r.key)?,
                    rewind: r
                        .rewind
                        .as_deref()
                        .map(|p| self.pointer("records.replay.rewind", p))
                        .transpose()?,
                    reset: r
                        .reset
                        .as_deref()
                        .map(|p| self.pointer("records.replay.reset", p))
                        .transpose()?,
                    reset_keeps: r.reset_keeps,
                    reset_adds: if !r.reset_adds.is_empty() && !r.reset_keeps {
                        return Err(self.invalid(
                            "records.replay.reset_adds",
                            "chooses what a reset adds when it keeps earlier records: set `reset_keeps: true`",
                        ));
                    } else {
                        self.conditions("records.replay.reset_adds", r.reset_adds)?
                    },
                }),
                None => None,
            },
            group_by: match raw.records.group_by {
                Some(g) => Some(GroupBy {
                    key: self.pointer("records.group_by.key", &g.key)?,
                    parent: self.pointer("records.group_by.parent", &g.parent)?,
                }),
                None => None,
            },
            conversation: raw
                .records
                .conversation
                .iter()
                .map(|p| self.pointer("records.conversation", p))
                .collect::<Result<_, _>>()?,
        };
        let event_map = self.rules("event_map", raw.event_map, &mut targets)?;
        let tables = self.tables(raw_tables, &targets)?;
        if let Some(d) = &raw.discover {
            self.discover(d)?;
        }
        Ok(AdapterSpec {
            name: raw.name,
            label: raw.label,
            input: raw.input,
            detect,
            session,
            records,
            event_map,
            tables,
            failures: self.failures.clone(),
            discover: raw.discover,
        })
    }

    /// Checks that an input layout has what its format needs.
    fn input(&self, field: &str, input: &InputSpec) -> Result<(), AdapterError> {
        if input.format == InputFormat::Json && input.records_at.is_none() {
            return Err(self.invalid(
                &format!("{field}.records_at"),
                "a `json` input needs `records_at`, the pointer to its records",
            ));
        }
        let (needs, key) = match input.format {
            InputFormat::Tree => ("files", "tree"),
            InputFormat::Sqlite => ("query", "sqlite"),
            _ => {
                if input.join.is_some() {
                    return Err(self.invalid(
                        &format!("{field}.join"),
                        "`join` is only for `tree` and `sqlite` inputs",
                    ));
                }
                return Ok(());
            }
        };
        let Some(join) = &input.join else {
            return Err(self.invalid(
                &format!("{field}.join"),
                format!("a `{key}` input needs `join` (session, records, children)"),
            ));
        };
        let levels = [
            ("session", Some(&join.session)),
            ("records", Some(&join.records)),
            ("children", join.children.as_ref()),
            ("subsessions", join.subsessions.as_ref()),
        ];
        for (name, level) in levels {
            let Some(level) = level else { continue };
            let here = format!("{field}.join.{name}");
            let has = match key {
                "tree" => level.files.is_some() && level.query.is_none(),
                _ => level.query.is_some() && level.files.is_none(),
            };
            if !has {
                return Err(self.invalid(
                    &here,
                    format!("a `{key}` input reads each level with `{needs}`, and only that"),
                ));
            }
            for p in [&level.latest, &level.unless, &level.order_by]
                .into_iter()
                .flatten()
            {
                self.pointer(&here, p)?;
            }
            if let Some(files) = &level.files
                && (files.starts_with('/') || files.split('/').any(|s| s == ".."))
            {
                return Err(self.invalid(
                    &format!("{here}.files"),
                    format!("`{files}` must stay inside the input folder"),
                ));
            }
        }
        if join.children.as_ref().is_some_and(|c| c.into.is_none()) {
            return Err(self.invalid(
                &format!("{field}.join.children.into"),
                "children need `into`, the key that receives their list",
            ));
        }
        Ok(())
    }

    fn discover(&self, d: &DiscoverSpec) -> Result<(), AdapterError> {
        if d.root.is_empty() {
            return Err(self.invalid("discover.root", "name at least one base folder"));
        }
        for (i, r) in d.root.iter().enumerate() {
            let field = format!("discover.root[{i}]");
            match (&r.env, &r.home) {
                (Some(v), None) if !v.is_empty() => {}
                (None, Some(_)) => {}
                _ => {
                    return Err(self.invalid(
                        &field,
                        "give exactly one of `env` (a variable name) or `home` (a folder under \
                         the home folder)",
                    ));
                }
            }
            for (key, rel) in [("home", &r.home), ("join", &r.join)] {
                if let Some(rel) = rel {
                    relative_path(rel).map_err(|m| self.invalid(&format!("{field}.{key}"), m))?;
                }
            }
        }
        if d.files.is_empty() {
            return Err(self.invalid("discover.files", "name at least one file pattern"));
        }
        for (i, f) in d.files.iter().enumerate() {
            let field = format!("discover.files[{i}]");
            relative_path(f).map_err(|m| self.invalid(&field, m))?;
            glob::Pattern::new(f)
                .map_err(|e| self.invalid(&field, format!("bad pattern `{f}`: {e}")))?;
        }
        for (i, f) in d.exclude.iter().enumerate() {
            let field = format!("discover.exclude[{i}]");
            if f.contains('/') {
                return Err(self.invalid(&field, format!("`{f}` must be a file name pattern")));
            }
            glob::Pattern::new(f)
                .map_err(|e| self.invalid(&field, format!("bad pattern `{f}`: {e}")))?;
        }
        Ok(())
    }

    /// Failure stage and category names end up in a fixed line: no control characters and none
    /// of the line's own punctuation.
    fn vocabulary(&self) -> Result<(), AdapterError> {
        let lists = [
            ("failures.stages", &self.failures.stages),
            ("failures.categories", &self.failures.categories),
        ];
        for (field, names) in lists {
            for name in names {
                if name.trim().is_empty()
                    || name.trim() != name
                    || name.chars().any(|c| c.is_control() || ";()".contains(c))
                {
                    return Err(self.invalid(
                        field,
                        format!(
                            "`{name}` is not a valid name (no surrounding spaces, control \
                             characters, `;`, `(` or `)`)"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Checks one canonical word against what the field it feeds accepts.
    fn canonical(&self, target: Target, word: &str) -> Result<(), String> {
        let allow = |names: &[String], what: &str| {
            if word == UNKNOWN || names.iter().any(|n| n == word) {
                Ok(())
            } else {
                let mut expected: Vec<&str> = names.iter().map(String::as_str).collect();
                expected.push(UNKNOWN);
                Err(format!(
                    "unknown {what} `{word}`, expected one of {} (declare it under `failures`)",
                    expected.join(", ")
                ))
            }
        };
        match target {
            Target::Status => word
                .parse::<ToolStatus>()
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Target::Kind => word
                .parse::<ToolKind>()
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Target::Scope => word
                .parse::<FailureScope>()
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Target::Stage => allow(&self.failures.stages, "stage"),
            Target::Category => allow(&self.failures.categories, "category"),
            Target::Integer | Target::Free => Ok(()),
        }
    }

    fn tables(
        &self,
        raw: &BTreeMap<String, RawTable>,
        targets: &BTreeMap<String, (Target, String)>,
    ) -> Result<BTreeMap<String, Table>, AdapterError> {
        let mut out = BTreeMap::new();
        for (name, table) in raw {
            let target = targets.get(name).map(|(t, _)| *t).unwrap_or(Target::Free);
            let check = |field: String, word: &str| -> Result<(), AdapterError> {
                self.canonical(target, word)
                    .map_err(|e| self.invalid(&field, e))
            };
            for (from, to) in &table.values {
                check(format!("{name}.values.{from}"), to)?;
            }
            if let Some(w) = &table.missing {
                check(format!("{name}.missing"), w)?;
            }
            if let Some(w) = &table.default {
                check(format!("{name}.default"), w)?;
            }
            out.insert(
                name.clone(),
                Table {
                    values: table.values.clone(),
                    missing: table.missing.clone(),
                    default: table.default.clone(),
                },
            );
        }
        Ok(out)
    }

    fn session(
        &self,
        raw: RawSession,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<SessionSpec, AdapterError> {
        Ok(SessionSpec {
            id: self.opt_value("session.id", raw.id, Target::Free, targets)?,
            parent: self.opt_value("session.parent", raw.parent, Target::Free, targets)?,
            cwd: self.opt_value("session.cwd", raw.cwd, Target::Free, targets)?,
            branch: self.opt_value("session.branch", raw.branch, Target::Free, targets)?,
            version: self.opt_value("session.version", raw.version, Target::Free, targets)?,
            model: self.opt_value("session.model", raw.model, Target::Free, targets)?,
            timestamp: self.opt_value("session.timestamp", raw.timestamp, Target::Free, targets)?,
            usage: match raw.usage {
                Some(u) => Some(UsageSpec {
                    key: self.value("session.usage.key", u.key, Target::Free, targets)?,
                    input: self.values("session.usage.input", u.input, targets)?,
                    output: self.values("session.usage.output", u.output, targets)?,
                }),
                None => None,
            },
        })
    }

    fn rules(
        &self,
        field: &str,
        raw: Vec<RawRule>,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<Vec<Rule>, AdapterError> {
        raw.into_iter()
            .enumerate()
            .map(|(i, rule)| {
                let here = match &rule.name {
                    Some(n) => format!("{field}[{i}] ({n})"),
                    None => format!("{field}[{i}]"),
                };
                self.rule(&here, rule, targets)
            })
            .collect()
    }

    fn rule(
        &self,
        field: &str,
        raw: RawRule,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<Rule, AdapterError> {
        let when = self.conditions(&format!("{field}.when"), raw.when)?;
        let action = match (raw.skip, raw.emit, raw.each, raw.rules) {
            (None, None, None, None) if raw.steps.is_some() => Action::Steps(self.rules(
                &format!("{field}.steps"),
                raw.steps.unwrap_or_default(),
                targets,
            )?),
            _ if raw.steps.is_some() => {
                return Err(self.invalid(field, "`steps` cannot be combined with another action"));
            }
            (Some(reason), None, None, None) => Action::Skip(reason),
            (None, Some(RawEmits::One(emit)), None, None) => Action::Emit(Box::new(self.emit(
                &format!("{field}.emit"),
                *emit,
                targets,
            )?)),
            (None, Some(RawEmits::Many(emits)), None, None) => Action::EmitAll(
                emits
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| self.emit(&format!("{field}.emit[{i}]"), e, targets))
                    .collect::<Result<_, _>>()?,
            ),
            (None, None, Some(at), Some(rules)) => Action::Each {
                at: self.pointer(&format!("{field}.each"), &at)?,
                rules: self.rules(&format!("{field}.rules"), rules, targets)?,
            },
            _ => {
                return Err(self.invalid(
                    field,
                    "a rule needs exactly one action: `skip`, `emit`, `steps`, or `each` with `rules`",
                ));
            }
        };
        Ok(Rule { when, action })
    }

    fn emit(
        &self,
        field: &str,
        raw: RawEmit,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<Emit, AdapterError> {
        let f = |name: &str| format!("{field}.{name}");
        let need = |v: Option<RawValue>, name: &str| {
            v.ok_or_else(|| {
                self.invalid(
                    field,
                    format!("a `{}` event needs `{name}`", raw.kind.as_str()),
                )
            })
        };
        let kind = raw.kind.clone();
        let emit = match kind.as_str() {
            "prompt" => Emit::Prompt {
                text: self.value(&f("text"), need(raw.text, "text")?, Target::Free, targets)?,
                fallback: raw.fallback,
            },
            "user_message" => Emit::UserMessage {
                text: self.value(&f("text"), need(raw.text, "text")?, Target::Free, targets)?,
            },
            "notice" => Emit::Notice {
                text: self.value(&f("text"), need(raw.text, "text")?, Target::Free, targets)?,
            },
            "assistant" => Emit::Assistant(Box::new(AssistantEmit {
                text: self.value(&f("text"), need(raw.text, "text")?, Target::Free, targets)?,
                key: self.opt_value(&f("key"), raw.key, Target::Free, targets)?,
                delta: self.opt_value(&f("delta"), raw.delta, Target::Free, targets)?,
                revise: raw.revise,
            })),
            "thinking" => Emit::Thinking {
                text: self.opt_value(&f("text"), raw.text, Target::Free, targets)?,
                key: self
                    .opt_value(&f("key"), raw.key, Target::Free, targets)?
                    .map(Box::new),
                revise: raw.revise,
            },
            "interrupt" => Emit::Interrupt,
            "turn_start" => Emit::TurnStart,
            "turn_end" => Emit::TurnEnd,
            "run_start" => Emit::RunStart,
            "compaction" => Emit::Compaction {
                summary: self.opt_value(&f("summary"), raw.summary, Target::Free, targets)?,
            },
            "tool_call" => Emit::ToolCall(Box::new(ToolCallEmit {
                call_id: self.value(
                    &f("call_id"),
                    need(raw.call_id, "call_id")?,
                    Target::Free,
                    targets,
                )?,
                name: self.value(&f("name"), need(raw.name, "name")?, Target::Free, targets)?,
                kind: self.opt_value(&f("tool_kind"), raw.tool_kind, Target::Kind, targets)?,
                input: self.opt_value(&f("input"), raw.input, Target::Free, targets)?,
                command: self.opt_value(&f("command"), raw.command, Target::Free, targets)?,
                paths: self.values(&f("paths"), raw.paths, targets)?,
            })),
            "tool_result" => Emit::ToolResult(Box::new(ToolResultEmit {
                call_id: match raw.call_id {
                    Some(v) => Some(self.value(&f("call_id"), v, Target::Free, targets)?),
                    None if raw.of_agent.is_some() => None,
                    None => Some(self.value(
                        &f("call_id"),
                        need(None, "call_id")?,
                        Target::Free,
                        targets,
                    )?),
                },
                of_agent: self.opt_value(&f("of_agent"), raw.of_agent, Target::Free, targets)?,
                output: self.opt_value(&f("output"), raw.output, Target::Free, targets)?,
                status: self.opt_value(&f("status"), raw.status, Target::Status, targets)?,
                exit_code: self.opt_value(
                    &f("exit_code"),
                    raw.exit_code,
                    Target::Status,
                    targets,
                )?,
                patch: match raw.patch {
                    Some(p) => Some(self.patch(&f("patch"), p, targets)?),
                    None => None,
                },
                agent_id: self.opt_value(&f("agent_id"), raw.agent_id, Target::Free, targets)?,
                name: self.opt_value(&f("name"), raw.name, Target::Free, targets)?,
                kind: self.opt_value(&f("tool_kind"), raw.tool_kind, Target::Kind, targets)?,
                command: self.opt_value(&f("command"), raw.command, Target::Free, targets)?,
            })),
            "failure" => Emit::Failure(Box::new(FailureEmit {
                scope: self.opt_value(&f("scope"), raw.scope, Target::Scope, targets)?,
                stage: self.opt_value(&f("stage"), raw.stage, Target::Stage, targets)?,
                category: self.opt_value(
                    &f("category"),
                    raw.category,
                    Target::Category,
                    targets,
                )?,
                http_status: self.opt_value(
                    &f("http_status"),
                    raw.http_status,
                    Target::Integer,
                    targets,
                )?,
                exit_code: self.opt_value(
                    &f("exit_code"),
                    raw.exit_code,
                    Target::Integer,
                    targets,
                )?,
                signal: self.opt_value(&f("signal"), raw.signal, Target::Integer, targets)?,
                call_id: self.opt_value(&f("call_id"), raw.call_id, Target::Free, targets)?,
            })),
            other => {
                return Err(self.invalid(
                    &f("kind"),
                    format!(
                        "unknown event kind `{other}`, expected one of prompt, user_message, \
                         notice, turn_start, turn_end, run_start, assistant, thinking, \
                         tool_call, \
                         tool_result, interrupt, compaction, failure"
                    ),
                ));
            }
        };
        Ok(emit)
    }

    fn patch(
        &self,
        field: &str,
        raw: RawPatch,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<PatchSpec, AdapterError> {
        match (raw.unified, raw.hunks, raw.fields) {
            (Some(u), None, None) => Ok(PatchSpec::Unified(self.value(
                &format!("{field}.unified"),
                u,
                Target::Free,
                targets,
            )?)),
            (None, Some(h), Some(fields)) => Ok(PatchSpec::Hunks {
                at: Box::new(self.value(&format!("{field}.hunks"), h, Target::Free, targets)?),
                fields,
                path: self.opt_value(&format!("{field}.path"), raw.path, Target::Free, targets)?,
            }),
            _ => Err(self.invalid(
                field,
                "a patch is either `unified: <value>` or `hunks: <value>` with `fields`",
            )),
        }
    }

    fn values(
        &self,
        field: &str,
        raw: Vec<RawValue>,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<Vec<ValueSpec>, AdapterError> {
        raw.into_iter()
            .enumerate()
            .map(|(i, v)| self.value(&format!("{field}[{i}]"), v, Target::Free, targets))
            .collect()
    }

    fn opt_value(
        &self,
        field: &str,
        raw: Option<RawValue>,
        target: Target,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<Option<ValueSpec>, AdapterError> {
        raw.map(|v| self.value(field, v, target, targets))
            .transpose()
    }

    fn value(
        &self,
        field: &str,
        raw: RawValue,
        target: Target,
        targets: &mut BTreeMap<String, (Target, String)>,
    ) -> Result<ValueSpec, AdapterError> {
        let full = match raw {
            RawValue::Pointer(p) => RawValueFull::at(OneOrMany::One(p)),
            RawValue::Pointers(ps) => RawValueFull::at(OneOrMany::Many(ps)),
            RawValue::Full(f) => *f,
        };
        let at = match full.at {
            Some(OneOrMany::One(p)) => vec![self.pointer(field, &p)?],
            Some(OneOrMany::Many(ps)) => ps
                .iter()
                .map(|p| self.pointer(field, p))
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        };
        let first_of = match full.first_of {
            Some(alts) => {
                let mut out = Vec::with_capacity(alts.len());
                for (i, alt) in alts.into_iter().enumerate() {
                    let here = format!("{field}.first_of[{i}]");
                    let alt = self.value(&here, alt, Target::Free, targets)?;
                    if alt.map.is_some() {
                        return Err(self.invalid(
                            &here,
                            "an alternative cannot name a table; put `map` beside `first_of`",
                        ));
                    }
                    out.push(alt);
                }
                out
            }
            None => Vec::new(),
        };
        let mut all_of = Vec::new();
        for (i, part) in full.all_of.into_iter().flatten().enumerate() {
            let here = format!("{field}.all_of[{i}]");
            let part = self.value(&here, part, Target::Free, targets)?;
            if part.map.is_some() {
                return Err(self.invalid(
                    &here,
                    "a part cannot name a table; put `map` beside `all_of`",
                ));
            }
            all_of.push(part);
        }
        if at.is_empty() && full.constant.is_none() && first_of.is_empty() && all_of.is_empty() {
            return Err(self.invalid(field, "a value needs `at`, `const`, `first_of` or `all_of`"));
        }
        let pick = full
            .pick
            .as_deref()
            .map(|p| self.pointer(&format!("{field}.pick"), p))
            .transpose()?;
        if pick.as_ref().is_some_and(|p| p.from_record) {
            return Err(self.invalid(field, "`pick` reads inside the value: write `/field`"));
        }
        let compile = |r: Option<String>| {
            r.map(|r| {
                Regex::new(&r).map_err(|e| self.invalid(field, format!("bad regex `{r}`: {e}")))
            })
            .transpose()
        };
        let regex = compile(full.regex)?;
        let strip = compile(full.strip)?.map(Box::new);
        if target == Target::Integer && full.map.is_some() {
            return Err(self.invalid(
                field,
                "this field holds an integer read from the log: a table cannot feed it",
            ));
        }
        if let Some(name) = &full.map {
            if !is_table_name(name) {
                return Err(self.invalid(
                    field,
                    format!("`{name}` is not a table name (tables are top-level `*_map` blocks)"),
                ));
            }
            if !self.tables.contains_key(name) {
                return Err(self.invalid(
                    field,
                    format!("names the table `{name}`, which this adapter does not define"),
                ));
            }
            if let Some((other, used_by)) = targets.get(name)
                && *other != target
                && target != Target::Free
                && *other != Target::Free
            {
                return Err(self.invalid(
                    field,
                    format!(
                        "table `{name}` is already used by `{used_by}` for another kind of value"
                    ),
                ));
            }
            if target != Target::Free || !targets.contains_key(name) {
                targets.insert(name.clone(), (target, field.to_owned()));
            }
        } else if !matches!(target, Target::Free | Target::Integer) {
            // A canonical field read without a table would let a vendor word through; a
            // constant must itself be a canonical name.
            match (
                &full.constant,
                at.is_empty() && first_of.is_empty() && all_of.is_empty(),
            ) {
                (Some(c), true) => {
                    let word = c.as_str().unwrap_or_default();
                    self.canonical(target, word)
                        .map_err(|e| self.invalid(field, e))?;
                }
                _ => {
                    return Err(self.invalid(
                        field,
                        "this field holds a canonical value: name a `*_map` table with `map`",
                    ));
                }
            }
        }
        if !full.parts.is_empty() && !full.text {
            return Err(self.invalid(field, "`parts` chooses what `text: true` flattens"));
        }
        let parts = self.conditions(&format!("{field}.parts"), full.parts)?;
        Ok(ValueSpec {
            at,
            constant: full.constant,
            text: full.text,
            strip,
            parts,
            regex,
            map: full.map,
            json: full.json,
            pick,
            first_of,
            all_of,
            join: full.join.map(String::into_boxed_str),
            epoch_ms: full.epoch_ms,
            variant: full.variant,
        })
    }

    fn pointer(&self, field: &str, raw: &str) -> Result<Pointer, AdapterError> {
        let (from_record, path) = match raw.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, raw),
        };
        let path = if path == "." { "" } else { path };
        if !path.is_empty() && !path.starts_with('/') {
            return Err(self.invalid(
                field,
                format!(
                    "`{raw}` is not a pointer: write `/field/sub`, `^/field` for the record, or `.`"
                ),
            ));
        }
        Ok(Pointer {
            from_record,
            path: path.to_owned(),
        })
    }

    fn conditions(
        &self,
        field: &str,
        raw: Vec<RawCondition>,
    ) -> Result<Vec<Condition>, AdapterError> {
        raw.into_iter()
            .enumerate()
            .map(|(i, c)| self.condition(&format!("{field}[{i}]"), c))
            .collect()
    }

    fn condition(&self, field: &str, raw: RawCondition) -> Result<Condition, AdapterError> {
        let at = raw
            .at
            .as_deref()
            .map(|p| self.pointer(field, p))
            .transpose()?;
        let tests = [
            raw.eq.is_some(),
            raw.one_of.is_some(),
            raw.present.is_some(),
            raw.matches.is_some(),
            raw.is.is_some(),
            raw.any.is_some(),
            raw.all.is_some(),
            raw.not.is_some(),
        ];
        if tests.iter().filter(|t| **t).count() != 1 {
            return Err(self.invalid(
                field,
                "a condition needs exactly one test: eq, one_of, present, matches, is, any, all or not",
            ));
        }
        let need_at = || {
            at.clone()
                .ok_or_else(|| self.invalid(field, "this test needs `at`, the pointer it reads"))
        };
        Ok(if let Some(v) = raw.eq {
            Condition::Eq(need_at()?, v)
        } else if let Some(vs) = raw.one_of {
            Condition::OneOf(need_at()?, vs)
        } else if let Some(p) = raw.present {
            Condition::Present(need_at()?, p)
        } else if let Some(r) = raw.matches {
            let re =
                Regex::new(&r).map_err(|e| self.invalid(field, format!("bad regex `{r}`: {e}")))?;
            Condition::Matches(need_at()?, re)
        } else if let Some(t) = raw.is {
            Condition::Is(need_at()?, t)
        } else if let Some(cs) = raw.any {
            Condition::Any(self.conditions(&format!("{field}.any"), cs)?)
        } else if let Some(cs) = raw.all {
            Condition::All(self.conditions(&format!("{field}.all"), cs)?)
        } else if let Some(c) = raw.not {
            Condition::Not(Box::new(self.condition(&format!("{field}.not"), *c)?))
        } else {
            return Err(self.invalid(field, "empty condition"));
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name: tiny
label: Tiny
input: { format: jsonl, extensions: [jsonl] }
event_map:
  - when: [{ at: /t, eq: result }]
    emit:
      kind: tool_result
      call_id: /id
      status: { at: /state, map: state_map }
state_map:
  values: { fine: ok, broken: error }
  default: unknown
"#;

    #[test]
    fn parses_a_minimal_adapter_with_a_named_table() -> anyhow::Result<()> {
        let spec = AdapterSpec::parse("tiny.yaml", MINIMAL)?;
        assert_eq!(spec.name, "tiny");
        assert_eq!(spec.tables["state_map"].values["fine"], "ok");
        Ok(())
    }

    #[test]
    fn table_names_follow_the_schema() {
        assert!(is_table_name("status_map"));
        assert!(is_table_name("exit_code_map"));
        assert!(is_table_name("a1_map"));
        assert!(!is_table_name("event_map"));
        assert!(!is_table_name("Status_map"));
        assert!(!is_table_name("_map"));
        assert!(!is_table_name("status"));
    }

    #[test]
    fn rejects_an_unknown_status_name_naming_file_field_and_value() {
        let text = MINIMAL.replace("broken: error", "broken: done");
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "adapter tiny.yaml: field `state_map.values.broken`: unknown value `done`, \
             expected one of ok, error, unknown"
        );
    }

    #[test]
    fn rejects_a_missing_table() {
        let text = MINIMAL.replace("map: state_map", "map: status_map");
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`status_map`, which this adapter does not define"),
            "{err}"
        );
    }

    #[test]
    fn rejects_a_map_that_is_not_a_table() {
        let text = format!("{MINIMAL}\nother_map: [1, 2]\n");
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("field `other_map`: not a table"), "{err}");
    }

    #[test]
    fn rejects_unknown_fields_and_bad_regexes() {
        let text = MINIMAL.replace("label: Tiny", "label: Tiny\ncolour: red");
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `colour`"), "{err}");

        let text = MINIMAL.replace("{ at: /t, eq: result }", "{ at: /t, matches: '(' }");
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("bad regex `(`"), "{err}");
    }

    #[test]
    fn rejects_a_status_read_without_a_table() {
        let text = MINIMAL.replace("{ at: /state, map: state_map }", "/state");
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("name a `*_map` table"), "{err}");
    }
}

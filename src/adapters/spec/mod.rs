//! The adapter language: one adapter YAML file, validated at load into the types below.
//!
//! `de` is the raw serde mirror of the file, `validate` turns it into these types (every
//! pointer checked, every regex checked, every table resolved against the fields it feeds),
//! and `yaml` is the one file under `adapters/` that names the YAML crate, so swapping it
//! touches nothing else here (the secret rule files in `privacy/rules.rs` are read with the same
//! crate). The language is documented for users in `adapters/README.md`.

mod de;
mod json;
mod regexes;
mod validate;
mod yaml;

pub use regexes::Pattern;
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;

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
    /// For the session: the pointer to a session's own id (what `--session` names, what a
    /// child session is called, what `link` compares); subsessions are read with it too.
    #[serde(default)]
    pub id: Option<String>,
    /// For the session: of several candidates, pick the one with the greatest value here.
    #[serde(default)]
    pub latest: Option<String>,
    /// Leave out objects where this pointer is present (child sessions, as main session).
    #[serde(default)]
    pub unless: Option<String>,
    /// For `tree` subsessions: the field that must equal the parent session's id.
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
    /// A short human label (the first present value wins).
    pub label: Option<ValueSpec>,
    /// The todo or plan list the call writes.
    pub todos: Option<TodosSpec>,
    /// The line-number gutter of the tool's file contents, through a table.
    pub gutter: Option<ValueSpec>,
}

/// Where a call's todo list is and what each item holds.
#[derive(Debug, Clone)]
pub struct TodosSpec {
    /// The array of items.
    pub at: ValueSpec,
    /// Each item's text, read inside the item.
    pub text: ValueSpec,
    /// Each item's state, read inside the item, through a `todo_state_map` table.
    pub state: Option<ValueSpec>,
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
    Matches(Pointer, Pattern),
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
    /// The pointer's steps, unescaped (`~1` is `/`, `~0` is `~`): split once, followed for
    /// every record.
    pub steps: Vec<String>,
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
    pub strip: Option<Box<Pattern>>,
    /// With `text`, only the list elements for which these conditions hold are flattened
    /// (a prompt's parts without the ones a hook appended; a reply's parts without its
    /// reasoning). Empty: every element.
    pub parts: Vec<Condition>,
    /// Capture group 1 (or the whole match) of this regex over the string value.
    pub regex: Option<Pattern>,
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
impl AdapterSpec {
    /// Parses and validates one adapter file. `file` names it in every error.
    pub fn parse(file: &str, text: &str) -> Result<Self, AdapterError> {
        Self::read(file, yaml::read(file, text)?, true)
    }

    /// [`AdapterSpec::parse`] for a built-in file in the JSON form `build.rs` writes of it,
    /// whose regexes its tests check: every other check is made.
    pub fn parse_builtin(file: &str, json: &str) -> Result<Self, AdapterError> {
        Self::read(file, json::read(file, json)?, false)
    }

    fn read(
        file: &str,
        (mut raw, raw_tables): (de::RawAdapter, BTreeMap<String, de::RawTable>),
        check_patterns: bool,
    ) -> Result<Self, AdapterError> {
        let failures = std::mem::take(&mut raw.failures);
        validate::Validator {
            file,
            tables: &raw_tables,
            failures: &failures,
            check_patterns,
        }
        .adapter(raw, &raw_tables)
    }
}

/// The fixed entries of a document, in order, and its named tables by name.
type Split<K, V> = (Vec<(K, V)>, BTreeMap<String, de::RawTable>);

/// A document's top-level entries, in order, with its named tables (the `*_map` keys other
/// than `event_map`) set apart and read by `table`: the YAML and JSON readers' one split. The
/// rest is the fixed schema.
fn split_tables<K, V, E: std::fmt::Display>(
    file: &str,
    entries: impl IntoIterator<Item = (K, V)>,
    name: impl Fn(&K) -> &str,
    table: impl Fn(V) -> Result<de::RawTable, E>,
) -> Result<Split<K, V>, AdapterError> {
    let mut fixed = Vec::new();
    let mut tables = BTreeMap::new();
    for (key, value) in entries {
        let key_name = name(&key).to_owned();
        if is_table_name(&key_name) {
            let read = table(value).map_err(|e| AdapterError::Invalid {
                file: file.to_owned(),
                field: key_name.clone(),
                message: format!("not a table: {e}"),
            })?;
            tables.insert(key_name, read);
        } else {
            fixed.push((key, value));
        }
    }
    Ok((fixed, tables))
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
    fn todo_states_and_gutters_name_only_canonical_words() {
        let call = r#"
  - when: [{ at: /t, eq: call }]
    emit:
      kind: tool_call
      call_id: /id
      name: /name
      todos: { at: /args/items, text: /label, state: { at: /state, map: todo_state_map } }
      gutter: { at: /name, map: gutter_map }
"#;
        let text = MINIMAL.replace("event_map:\n", &format!("event_map:{call}"))
            + "todo_state_map:\n  values: { finished: completed }\n"
            + "gutter_map:\n  values: { cat: colon }\n";
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("field `todo_state_map.values.finished`: unknown value `completed`"),
            "{err}"
        );
        let text = text.replace("finished: completed", "finished: done");
        assert!(AdapterSpec::parse("tiny.yaml", &text).is_ok());
        let text = text.replace("cat: colon", "cat: dots");
        let err = AdapterSpec::parse("tiny.yaml", &text)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown value `dots`"), "{err}");
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

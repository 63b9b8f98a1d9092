//! The raw serde mirror of an adapter file. Private to the language: [`super::validate`]
//! turns it into the validated types of [`super`].

use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;

use super::{DiscoverSpec, FailureVocabulary, HunkFields, InputSpec, JsonType};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAdapter {
    pub(super) name: String,
    pub(super) label: String,
    #[serde(default)]
    pub(super) description: Option<String>,
    pub(super) input: InputSpec,
    #[serde(default)]
    pub(super) detect: Vec<RawCondition>,
    #[serde(default)]
    pub(super) session: RawSession,
    #[serde(default)]
    pub(super) records: RawRecords,
    pub(super) event_map: Vec<RawRule>,
    #[serde(default)]
    pub(super) failures: FailureVocabulary,
    pub(super) discover: Option<DiscoverSpec>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSession {
    pub(super) id: Option<RawValue>,
    pub(super) parent: Option<RawValue>,
    pub(super) cwd: Option<RawValue>,
    pub(super) branch: Option<RawValue>,
    pub(super) version: Option<RawValue>,
    pub(super) model: Option<RawValue>,
    pub(super) timestamp: Option<RawValue>,
    pub(super) usage: Option<RawUsage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUsage {
    pub(super) key: RawValue,
    #[serde(default)]
    pub(super) input: Vec<RawValue>,
    #[serde(default)]
    pub(super) output: Vec<RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRecords {
    pub(super) type_at: Option<String>,
    pub(super) dedup: Option<RawValue>,
    pub(super) sidechain: Option<RawSidechain>,
    pub(super) replay: Option<RawReplay>,
    pub(super) group_by: Option<RawGroupBy>,
    #[serde(default)]
    pub(super) conversation: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawReplay {
    pub(super) key: String,
    pub(super) rewind: Option<String>,
    pub(super) reset: Option<String>,
    #[serde(default)]
    pub(super) reset_keeps: bool,
    #[serde(default)]
    pub(super) reset_adds: Vec<RawCondition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGroupBy {
    pub(super) key: String,
    pub(super) parent: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawEmits {
    One(Box<RawEmit>),
    Many(Vec<RawEmit>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSidechain {
    pub(super) when: Vec<RawCondition>,
    pub(super) agent: RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRule {
    #[serde(default)]
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) when: Vec<RawCondition>,
    pub(super) skip: Option<String>,
    pub(super) emit: Option<RawEmits>,
    pub(super) each: Option<String>,
    pub(super) rules: Option<Vec<RawRule>>,
    pub(super) steps: Option<Vec<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawEmit {
    pub(super) kind: String,
    pub(super) text: Option<RawValue>,
    pub(super) summary: Option<RawValue>,
    pub(super) call_id: Option<RawValue>,
    pub(super) name: Option<RawValue>,
    pub(super) tool_kind: Option<RawValue>,
    pub(super) input: Option<RawValue>,
    pub(super) command: Option<RawValue>,
    #[serde(default)]
    pub(super) paths: Vec<RawValue>,
    pub(super) label: Option<RawValue>,
    pub(super) todos: Option<RawTodos>,
    pub(super) gutter: Option<RawValue>,
    pub(super) output: Option<RawValue>,
    pub(super) status: Option<RawValue>,
    pub(super) exit_code: Option<RawValue>,
    pub(super) patch: Option<RawPatch>,
    pub(super) agent_id: Option<RawValue>,
    pub(super) of_agent: Option<RawValue>,
    pub(super) key: Option<RawValue>,
    pub(super) delta: Option<RawValue>,
    #[serde(default)]
    pub(super) revise: bool,
    pub(super) fallback: Option<String>,
    pub(super) scope: Option<RawValue>,
    pub(super) stage: Option<RawValue>,
    pub(super) category: Option<RawValue>,
    pub(super) http_status: Option<RawValue>,
    pub(super) signal: Option<RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTodos {
    pub(super) at: RawValue,
    pub(super) text: RawValue,
    pub(super) state: Option<RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPatch {
    pub(super) unified: Option<RawValue>,
    pub(super) hunks: Option<RawValue>,
    pub(super) fields: Option<HunkFields>,
    pub(super) path: Option<RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCondition {
    pub(super) at: Option<String>,
    pub(super) eq: Option<Json>,
    pub(super) one_of: Option<Vec<Json>>,
    pub(super) present: Option<bool>,
    pub(super) matches: Option<String>,
    pub(super) is: Option<JsonType>,
    pub(super) any: Option<Vec<RawCondition>>,
    pub(super) all: Option<Vec<RawCondition>>,
    pub(super) not: Option<Box<RawCondition>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum RawValue {
    Pointer(String),
    Pointers(Vec<String>),
    Full(Box<RawValueFull>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawValueFull {
    pub(super) at: Option<OneOrMany>,
    #[serde(rename = "const")]
    pub(super) constant: Option<Json>,
    #[serde(default)]
    pub(super) text: bool,
    pub(super) strip: Option<String>,
    #[serde(default)]
    pub(super) parts: Vec<RawCondition>,
    pub(super) regex: Option<String>,
    pub(super) map: Option<String>,
    #[serde(default)]
    pub(super) json: bool,
    pub(super) pick: Option<String>,
    pub(super) first_of: Option<Vec<RawValue>>,
    pub(super) all_of: Option<Vec<RawValue>>,
    pub(super) join: Option<String>,
    #[serde(default)]
    pub(super) epoch_ms: bool,
    #[serde(default)]
    pub(super) variant: bool,
}

#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTable {
    #[serde(default)]
    pub(super) values: BTreeMap<String, String>,
    pub(super) missing: Option<String>,
    pub(super) default: Option<String>,
}

impl RawValueFull {
    pub(super) fn at(at: OneOrMany) -> Self {
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

//! Reading back a report model's JSON (the one a notebook embeds, for `tracebook rerender`),
//! including reports of older schema versions or missing newer fields.
//!
//! The compatibility projection is conservative: it fills what an old report lacks with the
//! weakest claim, never a stronger one. A turn without a response status is `incomplete`; a tool
//! call (or edit, or verification) without a status is `unknown`; a word this version does not
//! know reads the same way. Totals are recomputed from the turns.

use serde_json::{Map, Value as Json, json};

use super::model::{ReadGutter, Report, SCHEMA_VERSION, TodoState};
use super::summarize;
use crate::events::{ToolKind, ToolStatus};

/// Why an embedded report's JSON could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum CompatError {
    /// The element does not hold JSON.
    #[error("the embedded report is not valid JSON: {0}")]
    Json(serde_json::Error),
    /// Made by a newer tracebook.
    #[error(
        "the report has schema_version {found}, newer than this tracebook reads (up to {SCHEMA_VERSION}); \
         use a newer tracebook"
    )]
    Newer {
        /// The version found.
        found: u64,
    },
    /// Something the compatibility projection cannot fill.
    #[error("the embedded report cannot be read: {0}")]
    Shape(serde_json::Error),
}

/// A report read back, with notes on what the compatibility projection filled in.
#[derive(Debug)]
pub struct ReadBack {
    /// The report, in the current model.
    pub report: Report,
    /// The schema version it was written with (0 when it names none).
    pub from_version: u64,
    /// One line per kind of field that was missing or unknown, with how often.
    pub notes: Vec<String>,
}

/// Reads a report model's JSON text (as a notebook embeds it) through the compatibility
/// projection.
pub fn from_json(json: &str) -> Result<ReadBack, CompatError> {
    let mut doc: Json = serde_json::from_str(json).map_err(CompatError::Json)?;
    let from_version = doc
        .get("schema_version")
        .and_then(Json::as_u64)
        .unwrap_or(0);
    if from_version > u64::from(SCHEMA_VERSION) {
        return Err(CompatError::Newer {
            found: from_version,
        });
    }
    let mut notes = Notes::default();
    if let Some(obj) = doc.as_object_mut() {
        obj.insert("schema_version".into(), json!(SCHEMA_VERSION));
        for key in ["unlinked_subagents", "skipped", "warnings"] {
            obj.entry(key).or_insert_with(|| json!([]));
        }
        if let Some(turns) = obj.get_mut("turns") {
            fix_turns(turns, "", &mut notes);
        }
        if let Some(Json::Array(subs)) = obj.get_mut("unlinked_subagents") {
            for sub in subs {
                fix_subagent(sub, &mut notes);
            }
        }
        // Totals are recomputed below; placeholders let the old object deserialize.
        obj.insert(
            "summary".into(),
            json!({"turns": 0, "complete": 0, "incomplete": 0,
            "tool_calls": 0, "ok": 0, "error": 0, "unknown": 0}),
        );
    }
    let mut report: Report = serde_json::from_value(doc).map_err(CompatError::Shape)?;
    super::glance::fill(&mut report.turns);
    for sub in &mut report.unlinked_subagents {
        super::glance::fill(&mut sub.turns);
    }
    report.summary = summarize(&report.turns);
    Ok(ReadBack {
        report,
        from_version,
        notes: notes.lines(),
    })
}

/// Counts of what was filled in, by description.
#[derive(Default)]
struct Notes(std::collections::BTreeMap<&'static str, usize>);

impl Notes {
    fn add(&mut self, what: &'static str) {
        *self.0.entry(what).or_default() += 1;
    }

    fn lines(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(w, n)| format!("{n} {w}"))
            .collect()
    }
}

/// Sets `obj[key]` to `fallback` when missing or not one of `known`; notes it.
fn weakest(
    obj: &mut Map<String, Json>,
    key: &str,
    known: &[&str],
    fallback: &str,
    note: &'static str,
    notes: &mut Notes,
) {
    let ok = obj
        .get(key)
        .and_then(Json::as_str)
        .is_some_and(|s| known.contains(&s));
    if !ok {
        obj.insert(key.to_owned(), json!(fallback));
        notes.add(note);
    }
}

fn fill(obj: &mut Map<String, Json>, key: &str, value: Json) {
    match obj.get(key) {
        None | Some(Json::Null) => {
            obj.insert(key.to_owned(), value);
        }
        Some(_) => {}
    }
}

fn fix_turns(turns: &mut Json, prefix: &str, notes: &mut Notes) {
    let Json::Array(turns) = turns else {
        return;
    };
    for (i, turn) in turns.iter_mut().enumerate() {
        let Some(t) = turn.as_object_mut() else {
            continue;
        };
        let number = t
            .get("number")
            .and_then(Json::as_u64)
            .unwrap_or(i as u64 + 1);
        fill(t, "number", json!(number));
        fill(t, "id", json!(format!("{prefix}t{number}")));
        fill(t, "steps", json!([]));
        weakest(
            t,
            "response_status",
            &["complete", "incomplete"],
            "incomplete",
            "turn(s) without a known response status, read as incomplete",
            notes,
        );
        // `complete` claims a terminal response; without one retained, it is not complete.
        if t.get("response_status") == Some(&json!("complete"))
            && t.get("response").is_none_or(Json::is_null)
        {
            t.insert("response_status".into(), json!("incomplete"));
            notes.add("turn(s) marked complete without a response, read as incomplete");
        }
        if let Some(Json::Array(steps)) = t.get_mut("steps") {
            for step in steps.iter_mut() {
                fix_step(step, notes);
            }
        }
        let steps = t.get("steps").and_then(Json::as_array);
        let count = |ty: &str| {
            steps.map_or(0, |s| {
                s.iter()
                    .filter(|x| x.get("type").and_then(Json::as_str) == Some(ty))
                    .count()
            })
        };
        let counts = json!({
            "intermediate_responses": count("assistant"),
            "tool_calls": count("tool_call"),
            "process_events": steps.map_or(0, Vec::len),
        });
        fill(t, "counts", counts);
        fill(
            t,
            "outcome",
            json!({"edits": [], "verifications": [], "commits": []}),
        );
        if let Some(Json::Object(outcome)) = t.get_mut("outcome") {
            fix_outcome(outcome, notes);
        }
    }
}

fn fix_step(step: &mut Json, notes: &mut Notes) {
    let Some(s) = step.as_object_mut() else {
        return;
    };
    if s.get("type").and_then(Json::as_str) != Some("tool_call") {
        return;
    }
    weakest(
        s,
        "status",
        ToolStatus::NAMES,
        ToolStatus::Unknown.as_str(),
        "tool call(s) without a known status, read as unknown",
        notes,
    );
    let has_result = s.get("output").is_some_and(|o| !o.is_null());
    weakest(
        s,
        "status_basis",
        &[
            "no_result",
            "status_word",
            "exit_code",
            "unmapped_word",
            "no_status",
        ],
        if has_result { "no_status" } else { "no_result" },
        "tool call(s) without a known status basis",
        notes,
    );
    fill(s, "call_id", json!(""));
    fill(s, "name", json!(""));
    weakest(
        s,
        "kind",
        ToolKind::NAMES,
        ToolKind::Other.as_str(),
        "tool call(s) without a known kind, read as other",
        notes,
    );
    fill(s, "paths", json!([]));
    if let Some(Json::Array(todos)) = s.get_mut("todos") {
        for todo in todos.iter_mut().filter_map(Json::as_object_mut) {
            fill(todo, "text", json!(""));
            weakest(
                todo,
                "state",
                TodoState::NAMES,
                TodoState::Unknown.as_str(),
                "todo item(s) without a known state, read as unknown",
                notes,
            );
        }
    }
    if s.contains_key("gutter") {
        weakest(
            s,
            "gutter",
            ReadGutter::NAMES,
            "none",
            "tool call(s) with an unknown line-number gutter, read as none",
            notes,
        );
    }
    fill(s, "input", Json::Null);
    fill(s, "input_size", json!(0));
    if let Some(sub) = s.get_mut("subagent") {
        if !sub.is_null() {
            fix_subagent(sub, notes);
        }
    }
}

fn fix_subagent(sub: &mut Json, notes: &mut Notes) {
    let Some(o) = sub.as_object_mut() else {
        return;
    };
    let prefix = o
        .get("id")
        .and_then(Json::as_str)
        .map(|id| format!("{id}-"))
        .unwrap_or_default();
    fill(o, "agent_id", json!(""));
    fill(o, "turns", json!([]));
    if let Some(turns) = o.get_mut("turns") {
        fix_turns(turns, &prefix, notes);
    }
}

fn fix_outcome(outcome: &mut Map<String, Json>, notes: &mut Notes) {
    for key in ["edits", "verifications", "commits"] {
        fill(outcome, key, json!([]));
    }
    if let Some(Json::Array(edits)) = outcome.get_mut("edits") {
        for edit in edits.iter_mut().filter_map(Json::as_object_mut) {
            fill(edit, "calls", json!([]));
            if let Some(Json::Array(calls)) = edit.get_mut("calls") {
                for c in calls.iter_mut().filter_map(Json::as_object_mut) {
                    weakest(
                        c,
                        "status",
                        ToolStatus::NAMES,
                        ToolStatus::Unknown.as_str(),
                        "edit(s) without a known status, read as unknown",
                        notes,
                    );
                    weakest(
                        c,
                        "patch",
                        &["retained", "unavailable"],
                        "unavailable",
                        "edit(s) without patch availability, read as unavailable",
                        notes,
                    );
                }
            }
        }
    }
    if let Some(Json::Array(vs)) = outcome.get_mut("verifications") {
        for v in vs.iter_mut().filter_map(Json::as_object_mut) {
            weakest(
                v,
                "status",
                ToolStatus::NAMES,
                ToolStatus::Unknown.as_str(),
                "verification(s) without a known status, read as unknown",
                notes,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_schema_is_refused() {
        assert!(matches!(
            from_json(r#"{"schema_version": 99}"#),
            Err(CompatError::Newer { found: 99 })
        ));
    }

    #[test]
    fn unknown_words_read_as_the_weakest_claim() {
        let mut step = json!({
            "type": "tool_call", "status": "succeeded", "output": "x",
            "todos": [{"text": "a", "state": "completed"}], "gutter": "dots",
        });
        let mut notes = Notes::default();
        fix_step(&mut step, &mut notes);
        assert_eq!(step["status"], "unknown");
        assert_eq!(step["todos"][0]["state"], "unknown");
        assert_eq!(step["gutter"], "none");
        assert_eq!(step["status_basis"], "no_status");
        let mut turns = json!([{"response_status": "complete", "response": null}]);
        fix_turns(&mut turns, "", &mut notes);
        assert_eq!(turns[0]["response_status"], "incomplete");
        assert_eq!(turns[0]["id"], "t1");
    }

    #[test]
    fn every_canonical_kind_and_status_reads_back_as_itself() {
        let mut notes = Notes::default();
        for kind in ToolKind::NAMES {
            for status in ToolStatus::NAMES {
                let mut step = json!({
                    "type": "tool_call", "kind": kind, "status": status,
                    "status_basis": "status_word", "output": "x",
                });
                fix_step(&mut step, &mut notes);
                assert_eq!(
                    (&step["kind"], &step["status"]),
                    (&json!(kind), &json!(status))
                );
            }
        }
        assert_eq!(notes.lines(), Vec::<String>::new());
    }
}

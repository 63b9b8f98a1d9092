//! Validation: the raw file ([`super::de`]) becomes an [`AdapterSpec`]. Pointers, regexes and
//! conditions are checked where they appear; tables are checked against every field that names
//! them, and canonical fields against the words their target accepts.

use std::collections::BTreeMap;

use super::de::{
    OneOrMany, RawAdapter, RawCondition, RawEmit, RawEmits, RawPatch, RawRule, RawSession,
    RawTable, RawValue, RawValueFull,
};
use super::*;
use crate::events::{FailureScope, ReadGutter, TodoState, ToolKind, ToolStatus, UNKNOWN};

/// What canonical vocabulary a table is used for; checked when an emit field names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Status,
    Kind,
    Scope,
    Stage,
    Category,
    TodoState,
    Gutter,
    /// An integer: no table may feed it.
    Integer,
    Free,
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

pub(super) struct Validator<'a> {
    pub(super) file: &'a str,
    pub(super) tables: &'a BTreeMap<String, RawTable>,
    pub(super) failures: &'a FailureVocabulary,
    /// Whether each regex is checked as the `regex` crate would check it (a built-in file's
    /// were checked by its tests).
    pub(super) check_patterns: bool,
}

impl Validator<'_> {
    /// The regex `source` of `field`, checked unless the file's patterns were checked before.
    fn pattern(&self, field: &str, source: &str) -> Result<Pattern, AdapterError> {
        if !self.check_patterns {
            return Ok(Pattern::checked_before(source));
        }
        Pattern::new(source).map_err(|e| self.invalid(field, format!("bad regex `{source}`: {e}")))
    }

    fn invalid(&self, field: &str, message: impl Into<String>) -> AdapterError {
        AdapterError::Invalid {
            file: self.file.to_owned(),
            field: field.to_owned(),
            message: message.into(),
        }
    }

    pub(super) fn adapter(
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
            for p in [&level.id, &level.latest, &level.unless, &level.order_by]
                .into_iter()
                .flatten()
            {
                self.pointer(&here, p)?;
            }
            if name != "session" && level.id.is_some() {
                return Err(self.invalid(
                    &format!("{here}.id"),
                    "`id` belongs on the session level (subsessions are read with it)",
                ));
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
            Target::TodoState => word
                .parse::<TodoState>()
                .map(|_| ())
                .map_err(|e| e.to_string()),
            Target::Gutter => word
                .parse::<ReadGutter>()
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
                label: self.opt_value(&f("label"), raw.label, Target::Free, targets)?,
                todos: match raw.todos {
                    Some(t) => Some(TodosSpec {
                        at: self.value(&f("todos.at"), t.at, Target::Free, targets)?,
                        text: self.value(&f("todos.text"), t.text, Target::Free, targets)?,
                        state: self.opt_value(
                            &f("todos.state"),
                            t.state,
                            Target::TodoState,
                            targets,
                        )?,
                    }),
                    None => None,
                },
                gutter: self.opt_value(&f("gutter"), raw.gutter, Target::Gutter, targets)?,
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
        let compile = |r: Option<String>| r.map(|r| self.pattern(field, &r)).transpose();
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
            steps: match path.strip_prefix('/') {
                Some(rest) => rest
                    .split('/')
                    .map(|s| s.replace("~1", "/").replace("~0", "~"))
                    .collect(),
                None => Vec::new(),
            },
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
            Condition::Matches(need_at()?, self.pattern(field, &r)?)
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

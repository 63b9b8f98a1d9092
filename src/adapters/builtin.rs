//! The built-in adapters, embedded in the binary from `adapters/*.yaml`.

/// The built-in adapters, named once: each one's YAML file and the JSON `build.rs` writes of
/// it (`build.rs` converts every file in `adapters/`).
macro_rules! builtin_adapters {
    ($($name:literal),* $(,)?) => {
        /// (file name, YAML text) of every built-in adapter, in detection order.
        pub(crate) const BUILTIN: &[(&str, &str)] = &[$((
            concat!($name, ".yaml"),
            include_str!(concat!("../../adapters/", $name, ".yaml")),
        )),*];

        /// (file name, JSON text) of every built-in adapter, in [`BUILTIN`]'s order: what a
        /// run reads (a test checks that each reads as its YAML does).
        pub(crate) const BUILTIN_JSON: &[(&str, &str)] = &[$((
            concat!($name, ".yaml"),
            include_str!(concat!(env!("OUT_DIR"), "/adapter-", $name, ".json")),
        )),*];
    };
}

builtin_adapters!["claude-code", "codex", "gemini-cli", "opencode"];

/// (file name, text) of each built-in harness's demo session, in that harness's own format
/// (`examples/tool-outcomes/<adapter>.<ext>`): one per adapter above, in the same order, each
/// holding a call that failed, one that worked and one whose result was never written.
pub(crate) const SAMPLES: &[(&str, &str)] = &[
    (
        "claude-code.jsonl",
        include_str!("../../examples/tool-outcomes/claude-code.jsonl"),
    ),
    (
        "codex.jsonl",
        include_str!("../../examples/tool-outcomes/codex.jsonl"),
    ),
    (
        "gemini-cli.jsonl",
        include_str!("../../examples/tool-outcomes/gemini-cli.jsonl"),
    ),
    (
        "opencode.json",
        include_str!("../../examples/tool-outcomes/opencode.json"),
    ),
];

#[cfg(test)]
mod tests {
    //! The built-in vocabularies: every way each harness says worked, failed, still running or
    //! cancelled, and the safety property that a word no table knows is unknown.

    use serde_json::{Value as Json, json};
    use std::collections::BTreeSet;

    use super::BUILTIN;
    use crate::adapters::interpret::{RawResult, Word};
    use crate::adapters::normalize::tool_status;
    use crate::adapters::spec::AdapterSpec;
    use crate::events::ToolStatus;

    fn spec(file: &str) -> AdapterSpec {
        let (_, text) = BUILTIN
            .iter()
            .find(|(f, _)| *f == file)
            .expect("built-in adapter exists");
        AdapterSpec::parse(file, text).expect("built-in adapter is valid")
    }

    /// The status of a result whose status word (through `status_table`) and exit code (through
    /// `exit_code_map`) are the given values.
    fn status(
        spec: &AdapterSpec,
        status_table: &str,
        word: Option<Json>,
        exit: Option<Json>,
    ) -> ToolStatus {
        let result = RawResult {
            call_id: "c".into(),
            output: None,
            status: Some(Word {
                raw: word,
                table: Some(status_table.into()),
            }),
            exit_code: exit.map(|e| Word {
                raw: Some(e),
                table: Some("exit_code_map".into()),
            }),
            patch: None,
            agent_id: None,
            of_agent: None,
            name: None,
            kind: None,
            command: None,
        };
        tool_status(spec, Some(&result), &mut BTreeSet::new()).0
    }

    #[test]
    fn every_built_in_adapter_loads() {
        for (file, text) in BUILTIN {
            AdapterSpec::parse(file, text).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn codex_vocabulary() {
        let s = spec("codex.yaml");
        let end = |w: Json| status(&s, "end_status_map", Some(w), None);
        assert_eq!(end(json!("completed")), ToolStatus::Ok);
        assert_eq!(end(json!(true)), ToolStatus::Ok);
        assert_eq!(end(json!("failed")), ToolStatus::Error);
        assert_eq!(end(json!(false)), ToolStatus::Error);
        assert_eq!(end(json!("declined")), ToolStatus::Error);
        assert_eq!(end(json!("in_progress")), ToolStatus::Unknown);
        assert_eq!(end(json!("splendid")), ToolStatus::Unknown);

        let out = |w: Option<&str>| status(&s, "output_status_map", w.map(|w| json!(w)), None);
        assert_eq!(out(None), ToolStatus::Ok);
        for failed in [
            "failed in sandbox",
            "apply_patch verification failed",
            "command timed out",
            "aborted by user",
        ] {
            assert_eq!(out(Some(failed)), ToolStatus::Error, "{failed}");
        }
        assert_eq!(
            out(Some("Process running with session ID")),
            ToolStatus::Unknown
        );

        assert_eq!(
            status(
                &s,
                "end_status_map",
                Some(json!("completed")),
                Some(json!(0))
            ),
            ToolStatus::Ok
        );
        assert_eq!(
            status(
                &s,
                "end_status_map",
                Some(json!("completed")),
                Some(json!(1))
            ),
            ToolStatus::Error
        );
        assert_eq!(
            status(&s, "output_status_map", None, Some(json!("-1"))),
            ToolStatus::Error
        );
        assert_eq!(
            status(&s, "output_status_map", None, Some(json!("127"))),
            ToolStatus::Error
        );
        assert_eq!(
            status(&s, "mcp_result_map", Some(json!("Ok")), None),
            ToolStatus::Ok
        );
        assert_eq!(
            status(&s, "mcp_result_map", Some(json!("Err")), None),
            ToolStatus::Error
        );
        assert_eq!(
            status(&s, "mcp_result_map", Some(json!("Maybe")), None),
            ToolStatus::Unknown
        );
    }

    #[test]
    fn gemini_cli_vocabulary() {
        let s = spec("gemini-cli.yaml");
        let word = |w: &str| status(&s, "status_map", Some(json!(w)), None);
        assert_eq!(word("success"), ToolStatus::Ok);
        assert_eq!(word("error"), ToolStatus::Error);
        assert_eq!(word("cancelled"), ToolStatus::Error);
        for running in ["validating", "scheduled", "executing", "awaiting_approval"] {
            assert_eq!(word(running), ToolStatus::Unknown, "{running}");
        }
        assert_eq!(word("splendid"), ToolStatus::Unknown);
        assert_eq!(status(&s, "status_map", None, None), ToolStatus::Unknown);
        assert_eq!(
            status(&s, "status_map", Some(json!("success")), Some(json!("1"))),
            ToolStatus::Error
        );
        assert_eq!(
            status(&s, "status_map", Some(json!("success")), Some(json!("0"))),
            ToolStatus::Ok
        );
    }

    #[test]
    fn claude_code_status_map_still_resolves() {
        let s = spec("claude-code.yaml");
        assert_eq!(
            status(&s, "is_error_map", Some(json!(true)), None),
            ToolStatus::Error
        );
        assert_eq!(status(&s, "is_error_map", None, None), ToolStatus::Ok);
        assert_eq!(
            status(&s, "is_error_map", Some(json!(false)), Some(json!("2"))),
            ToolStatus::Error
        );
    }

    #[test]
    fn every_builtin_adapter_has_a_demo_session() {
        let stem = |f: &str| f.split('.').next().unwrap_or_default().to_owned();
        let adapters: Vec<String> = BUILTIN.iter().map(|(f, _)| stem(f)).collect();
        let samples: Vec<String> = super::SAMPLES.iter().map(|(f, _)| stem(f)).collect();
        assert_eq!(samples, adapters);
    }
}

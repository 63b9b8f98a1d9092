//! Tool outcomes of Codex CLI and Gemini CLI, read from fixtures in each harness's own format:
//! failures surface, successes are not flagged, unknown stays unknown, and a retained non-zero
//! exit code overrides a success word.

use std::collections::BTreeMap;
use std::path::Path;

use tracebook::events::{StatusBasis, ToolStatus};
use tracebook::report::model::{Report, StepView, ToolCallView};

use crate::{fixtures, report};

/// Every tool call of a report (subagents included), by the vendor's call id.
pub(crate) fn calls(report: &Report) -> BTreeMap<String, ToolCallView> {
    fn walk(
        turns: &[tracebook::report::model::TurnView],
        out: &mut BTreeMap<String, ToolCallView>,
    ) {
        for t in turns {
            for s in &t.steps {
                if let StepView::ToolCall(c) = s {
                    out.insert(c.call_id.clone(), (**c).clone());
                    if let Some(sub) = &c.subagent {
                        walk(&sub.turns, out);
                    }
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&report.turns, &mut out);
    out
}

fn statuses(path: &Path) -> anyhow::Result<BTreeMap<String, (ToolStatus, StatusBasis)>> {
    let report = report(path)?;
    Ok(calls(&report)
        .into_iter()
        .map(|(id, c)| (id, (c.status, c.status_basis)))
        .collect())
}

fn status_of(map: &BTreeMap<String, (ToolStatus, StatusBasis)>, id: &str) -> ToolStatus {
    map.get(id)
        .map(|s| s.0)
        .unwrap_or_else(|| panic!("no call {id}"))
}

#[test]
fn codex_rollout_failure_surfaces_and_success_is_not_flagged() -> anyhow::Result<()> {
    let s = statuses(&fixtures().join("codex/tool-outcomes/session.jsonl"))?;
    assert_eq!(status_of(&s, "call_fail"), ToolStatus::Error);
    assert_eq!(s["call_fail"].1, StatusBasis::ExitCode);
    assert_eq!(status_of(&s, "call_ok"), ToolStatus::Ok);
    assert_eq!(status_of(&s, "call_patch_bad"), ToolStatus::Error);
    // `Process exited with code 2` and the end event's exit code agree.
    assert_eq!(status_of(&s, "call_exec"), ToolStatus::Error);
    // Still running when the output was written; no output at all.
    assert_eq!(status_of(&s, "call_running"), ToolStatus::Unknown);
    assert_eq!(
        s["call_no_output"],
        (ToolStatus::Unknown, StatusBasis::NoResult)
    );
    assert_eq!(s.len(), 6, "each call is counted once: {s:?}");
    Ok(())
}

#[test]
fn codex_paginated_rollout_reads_prompts_and_outcomes_from_turn_items() -> anyhow::Result<()> {
    let path = fixtures().join("codex/paginated-rollout/session.jsonl");
    let report = report(&path)?;
    assert_eq!(report.turns.len(), 1);
    let prompt = report.turns[0].prompt.as_ref().map(|p| p.text.as_str());
    assert_eq!(prompt, Some("Run the tests."));
    let s = statuses(&path)?;
    assert_eq!(s["call_t1"], (ToolStatus::Error, StatusBasis::ExitCode));
    assert_eq!(status_of(&s, "call_t2"), ToolStatus::Ok);
    // `inProgress` on the last turn item: still running, not assumed to have worked.
    assert_eq!(status_of(&s, "call_t3"), ToolStatus::Unknown);
    assert_eq!(s.len(), 3, "each call is counted once: {s:?}");
    Ok(())
}

#[test]
fn codex_subagent_thread_is_nested_under_its_spawn_call() -> anyhow::Result<()> {
    let report = report(&fixtures().join("codex/subagent/session.jsonl"))?;
    let spawn = report.turns[0]
        .steps
        .iter()
        .find_map(|s| match s {
            StepView::ToolCall(c) if c.call_id == "call_spawn" => Some(c),
            _ => None,
        })
        .expect("the spawn call");
    let sub = spawn
        .subagent
        .as_ref()
        .expect("the subagent's own rollout is nested");
    assert_eq!(sub.agent_id, "0199dddd-5555-7666-8777-88889999aaaa");
    assert_eq!(
        sub.turns[0].prompt.as_ref().map(|p| p.text.as_str()),
        Some("Time each crate's build.")
    );
    let s = statuses(&fixtures().join("codex/subagent/session.jsonl"))?;
    assert_eq!(s["call_c2"], (ToolStatus::Error, StatusBasis::ExitCode));
    // The subagent's calls count in the parent's totals.
    assert_eq!((report.summary.tool_calls, report.summary.error), (4, 1));
    assert!(report.unlinked_subagents.is_empty());
    Ok(())
}

/// A subagent started past midnight writes its rollout in the next day's folder, and at the
/// turn of a month or a year in another month's or year's: it is found there all the same.
#[test]
fn codex_subagent_rollout_in_a_later_days_folder_is_nested() -> anyhow::Result<()> {
    let case = fixtures().join("codex/subagent");
    let child = "rollout-2026-06-10T14-00-02-0199dddd-5555-7666-8777-88889999aaaa.jsonl";
    for later in ["2026/06/11", "2026/07/01", "2027/01/01"] {
        let home = tempfile::tempdir()?;
        let day = home.path().join("sessions/2026/06/10");
        std::fs::create_dir_all(&day)?;
        let main =
            day.join("rollout-2026-06-10T14-00-00-0199dddd-4444-7555-8666-777788889999.jsonl");
        std::fs::copy(case.join("session.jsonl"), &main)?;
        let next = home.path().join("sessions").join(later);
        std::fs::create_dir_all(&next)?;
        std::fs::copy(case.join(child), next.join(child))?;
        let report = report(&main)?;
        let nested = report.turns[0].steps.iter().any(|s| {
            matches!(s, StepView::ToolCall(c) if c.call_id == "call_spawn"
                && c.subagent.as_ref().is_some_and(|sub| !sub.turns.is_empty()))
        });
        assert!(nested, "the rollout under {later} is not nested");
        assert_eq!((report.summary.tool_calls, report.summary.error), (4, 1));
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    }
    // Nowhere to be found: the spawn call keeps its result, and the report says what is missing.
    let home = tempfile::tempdir()?;
    let main = home.path().join("rollout-2026-06-10T14-00-00-alone.jsonl");
    std::fs::copy(case.join("session.jsonl"), &main)?;
    let report = report(&main)?;
    assert_eq!(report.summary.tool_calls, 2);
    let said: Vec<&str> = report.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(
        said,
        [
            "subagent 0199dddd-5555-7666-8777-88889999aaaa: its own transcript is not in the files \
          read with this session; the call that started it shows its result only"
        ]
    );
    Ok(())
}

#[test]
fn codex_legacy_rollout_reads_exit_codes_inside_json_output() -> anyhow::Result<()> {
    let s = statuses(&fixtures().join("codex/legacy-rollout/session.jsonl"))?;
    assert_eq!(status_of(&s, "call_ls"), ToolStatus::Ok);
    assert_eq!(s["call_cat"], (ToolStatus::Error, StatusBasis::ExitCode));
    assert_eq!(
        s["call_sandbox"],
        (ToolStatus::Error, StatusBasis::ExitCode)
    );
    Ok(())
}

#[test]
fn codex_exec_json_statuses_cover_every_item_state() -> anyhow::Result<()> {
    let s = statuses(&fixtures().join("codex/exec-json/session.jsonl"))?;
    assert_eq!(status_of(&s, "item_1"), ToolStatus::Error); // failed, exit 1
    assert_eq!(status_of(&s, "item_2"), ToolStatus::Ok); // file change completed
    assert_eq!(status_of(&s, "item_3"), ToolStatus::Ok); // completed, exit 0
    assert_eq!(status_of(&s, "item_4"), ToolStatus::Error); // declined
    assert_eq!(status_of(&s, "item_5"), ToolStatus::Unknown); // in_progress, never completed
    Ok(())
}

#[test]
fn codex_compressed_rollout_reads_like_the_plain_one() -> anyhow::Result<()> {
    let plain = fixtures().join("codex/tool-outcomes/session.jsonl");
    let dir = tempfile::tempdir()?;
    let zst = dir.path().join("rollout.jsonl.zst");
    let bytes = zstd::encode_all(std::fs::read(&plain)?.as_slice(), 3)?;
    std::fs::write(&zst, bytes)?;
    let a = report(&plain)?;
    let b = report(&zst)?;
    assert_eq!(a.session.harness, b.session.harness);
    assert_eq!(calls(&a), calls(&b));
    assert_eq!(a.turns.len(), b.turns.len());
    Ok(())
}

#[test]
fn gemini_recording_failure_surfaces_and_success_is_not_flagged() -> anyhow::Result<()> {
    let s = statuses(&fixtures().join("gemini-cli/tool-outcomes/session.jsonl"))?;
    assert_eq!(status_of(&s, "edit_fail"), ToolStatus::Error);
    assert_eq!(status_of(&s, "edit_ok"), ToolStatus::Ok);
    assert_eq!(status_of(&s, "shell_ok"), ToolStatus::Ok);
    assert_eq!(status_of(&s, "shell_watch"), ToolStatus::Error); // cancelled
    assert_eq!(status_of(&s, "shell_pending"), ToolStatus::Unknown); // executing
    assert_eq!(
        s["shell_odd"],
        (ToolStatus::Unknown, StatusBasis::UnmappedWord)
    );
    Ok(())
}

#[test]
fn gemini_legacy_json_and_stream_json_statuses() -> anyhow::Result<()> {
    let s = statuses(&fixtures().join("gemini-cli/legacy-json/session.json"))?;
    assert_eq!(status_of(&s, "read_ok"), ToolStatus::Ok);
    assert_eq!(status_of(&s, "read_fail"), ToolStatus::Error);
    let s = statuses(&fixtures().join("gemini-cli/stream-json/session.jsonl"))?;
    assert_eq!(s["run_1"], (ToolStatus::Error, StatusBasis::ExitCode));
    assert_eq!(status_of(&s, "read_1"), ToolStatus::Error);
    assert_eq!(status_of(&s, "read_2"), ToolStatus::Ok);
    Ok(())
}

#[test]
fn a_non_zero_exit_code_overrides_a_success_word() -> anyhow::Result<()> {
    // Gemini: status `success`, output ends `Exit Code: 1`.
    let s = statuses(&fixtures().join("gemini-cli/tool-outcomes/session.jsonl"))?;
    assert_eq!(s["shell_fail"], (ToolStatus::Error, StatusBasis::ExitCode));
    // Codex: no failure marker in the output, `Exit code: 1` on its first line.
    let s = statuses(&fixtures().join("codex/tool-outcomes/session.jsonl"))?;
    assert_eq!(s["call_fail"], (ToolStatus::Error, StatusBasis::ExitCode));
    Ok(())
}

#[test]
fn identical_calls_that_failed_and_succeeded_have_distinguishable_records() -> anyhow::Result<()> {
    for (path, failed, worked) in [
        ("codex/tool-outcomes/session.jsonl", "call_fail", "call_ok"),
        (
            "gemini-cli/tool-outcomes/session.jsonl",
            "shell_fail",
            "shell_ok",
        ),
        ("codex/exec-json/session.jsonl", "item_1", "item_3"),
    ] {
        let report = report(&fixtures().join(path))?;
        let c = calls(&report);
        let (f, w) = (&c[failed], &c[worked]);
        assert_eq!(
            (&f.name, &f.input, &f.command),
            (&w.name, &w.input, &w.command),
            "{path}"
        );
        assert_eq!(f.status, ToolStatus::Error, "{path}");
        assert_eq!(w.status, ToolStatus::Ok, "{path}");
        let (fj, wj) = (serde_json::to_value(f)?, serde_json::to_value(w)?);
        assert_ne!(fj["status"], wj["status"], "{path}");
    }
    Ok(())
}

#[test]
fn gemini_replay_log_keeps_the_last_copy_and_honours_rewinds() -> anyhow::Result<()> {
    let report = report(&fixtures().join("gemini-cli/tool-outcomes/session.jsonl"))?;
    let json = serde_json::to_string(&report)?;
    assert!(!json.contains("Draft answer that was rewound"));
    // The tool-result copy is not a prompt: one turn, one prompt.
    assert_eq!(report.turns.len(), 1);
    // The message first written without tool calls gains them from its later copy.
    assert!(calls(&report).contains_key("shell_fail"));
    Ok(())
}

#[test]
fn detection_picks_the_right_adapter_for_every_fixture() -> anyhow::Result<()> {
    for harness in ["codex", "gemini-cli", "claude-code"] {
        for entry in std::fs::read_dir(fixtures().join(harness))? {
            let dir = entry?.path();
            for f in std::fs::read_dir(&dir)? {
                let f = f?.path();
                if f.file_stem().and_then(|s| s.to_str()) == Some("session") && f.is_file() {
                    assert_eq!(report(&f)?.session.harness, harness, "{}", f.display());
                }
            }
        }
    }
    Ok(())
}

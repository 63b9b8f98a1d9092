//! OpenCode in each of its native layouts: an export, a `run --format json` stream, a JSON
//! storage tree and an `opencode.db` built here from SQL. One logical session is written in every
//! layout; each must give the same per-call statuses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tracebook::events::ToolStatus;
use tracebook::report::model::{Report, StepView, ToolCallView, TurnView};

use crate::{fixtures, report, tracebook};

fn case(name: &str) -> PathBuf {
    fixtures().join("opencode").join(name)
}

/// Builds `opencode.db` from the fixture's SQL in a fresh folder.
pub(crate) fn build_db(dir: &Path) -> anyhow::Result<PathBuf> {
    let db = dir.join("opencode.db");
    let sql = std::fs::read_to_string(case("sqlite-store").join("opencode.sql"))?;
    let conn = rusqlite::Connection::open(&db)?;
    conn.execute_batch(&sql)?;
    drop(conn);
    Ok(db)
}

fn calls(turns: &[TurnView]) -> Vec<&ToolCallView> {
    turns
        .iter()
        .flat_map(|t| &t.steps)
        .filter_map(|s| match s {
            StepView::ToolCall(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

fn statuses(report: &Report) -> BTreeMap<String, ToolStatus> {
    calls(&report.turns)
        .into_iter()
        .map(|c| (c.call_id.clone(), c.status))
        .collect()
}

/// Every way OpenCode says worked, failed or not finished, as the fixtures write it.
fn expected(with_unfinished: bool) -> BTreeMap<String, ToolStatus> {
    use ToolStatus::*;
    let mut m: BTreeMap<String, ToolStatus> = [
        ("call_ok", Ok),          // completed, exit 0
        ("call_fail", Error),     // completed bash, exit 101
        ("call_read_err", Error), // error state
        ("call_invalid", Error),  // the `invalid` tool "completed"
        ("call_task", Ok),        // completed subagent call
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    if with_unfinished {
        m.insert("call_pending".into(), Unknown); // pending
        m.insert("call_running".into(), Unknown); // running
        m.insert("call_word".into(), Unknown); // a word OpenCode never wrote: `queued`
    }
    m
}

#[test]
fn export_statuses_follow_the_vocabulary() -> anyhow::Result<()> {
    let r = report(&case("export-outcomes").join("session.json"))?;
    assert_eq!(r.session.harness, "opencode");
    assert_eq!(statuses(&r), expected(true));
    // The unlearned word is reported once, naming the table, and becomes unknown.
    let unmapped: Vec<_> = r
        .warnings
        .iter()
        .filter(|w| w.message.contains("`queued`"))
        .collect();
    assert_eq!(unmapped.len(), 1, "{:?}", r.warnings);
    assert!(unmapped[0].message.contains("tool_state_map"));
    Ok(())
}

#[test]
fn a_completed_bash_call_with_a_non_zero_exit_is_an_error() -> anyhow::Result<()> {
    let r = report(&case("export-outcomes").join("session.json"))?;
    let all = calls(&r.turns);
    let ok = all
        .iter()
        .find(|c| c.call_id == "call_ok")
        .expect("ok call");
    let fail = all
        .iter()
        .find(|c| c.call_id == "call_fail")
        .expect("failed call");
    // Identical inputs, one failing and one succeeding: the records tell them apart.
    assert_eq!(ok.input, fail.input);
    assert_eq!(ok.command.as_deref(), Some("cargo test"));
    assert_eq!(ok.command, fail.command);
    assert_eq!(
        (ok.status, fail.status),
        (ToolStatus::Ok, ToolStatus::Error)
    );
    assert_eq!((ok.exit_code, fail.exit_code), (Some(0), Some(101)));
    assert_ne!(serde_json::to_value(ok)?, serde_json::to_value(fail)?);
    assert_ne!(ok.status_basis, fail.status_basis);
    Ok(())
}

#[test]
fn a_turn_holds_every_step_of_its_prompt() -> anyhow::Result<()> {
    let r = report(&case("export-outcomes").join("session.json"))?;
    assert_eq!(r.turns.len(), 1);
    let t = &r.turns[0];
    assert!(t.prompt.is_some());
    assert!(
        t.response.is_some(),
        "the final `stop` message answers the turn"
    );
    Ok(())
}

fn child_of_task(r: &Report) -> BTreeMap<String, ToolStatus> {
    let task = calls(&r.turns)
        .into_iter()
        .find(|c| c.call_id == "call_task")
        .expect("task call");
    let sub = task
        .subagent
        .as_ref()
        .expect("child session nested under its call");
    assert_eq!(sub.agent_id, "ses_child000001");
    calls(&sub.turns)
        .into_iter()
        .map(|c| (c.call_id.clone(), c.status))
        .collect()
}

#[test]
fn the_storage_tree_joins_into_the_same_session() -> anyhow::Result<()> {
    // The data folder and storage/ itself are both accepted.
    for input in [
        case("storage-tree").join("tree"),
        case("storage-tree").join("tree/storage"),
    ] {
        let r = report(&input)?;
        assert_eq!(r.session.harness, "opencode");
        assert_eq!(statuses(&r), expected(true), "{}", input.display());
        let child = child_of_task(&r);
        assert_eq!(child.get("call_child_ls"), Some(&ToolStatus::Ok));
    }
    Ok(())
}

#[test]
fn the_sqlite_store_is_read_read_only_with_ids_put_back() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let db = build_db(dir.path())?;
    let before = std::fs::read(&db)?;
    let r = report(&db)?;
    assert_eq!(r.session.harness, "opencode");
    assert_eq!(statuses(&r), expected(true));
    assert_eq!(
        child_of_task(&r).get("call_child_ls"),
        Some(&ToolStatus::Ok)
    );
    assert_eq!(std::fs::read(&db)?, before, "the database was changed");
    let mut names: Vec<_> = std::fs::read_dir(dir.path())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["opencode.db"], "no journal or lock file is left");
    Ok(())
}

#[test]
fn run_format_json_keeps_finished_calls() -> anyhow::Result<()> {
    let r = report(&case("run-json").join("session.jsonl"))?;
    assert_eq!(r.session.harness, "opencode");
    assert_eq!(statuses(&r), expected(false));
    Ok(())
}

#[test]
fn an_unrecognised_folder_or_database_names_the_input_and_the_way_out() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let conn = rusqlite::Connection::open(dir.path().join("other.db"))?;
    conn.execute_batch("CREATE TABLE notes (id TEXT); INSERT INTO notes VALUES ('x');")?;
    drop(conn);
    let out = tracebook()
        .args(["render"])
        .arg(dir.path().join("other.db"))
        .output()?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("other.db") && err.contains("no such table: session"),
        "{err}"
    );

    let empty = tempfile::tempdir()?;
    std::fs::create_dir_all(empty.path().join("storage/session"))?;
    let out = tracebook().args(["render"]).arg(empty.path()).output()?;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no session file"), "{err}");
    Ok(())
}

#[test]
fn appended_run_outputs_are_one_turn_per_run() -> anyhow::Result<()> {
    // Two `opencode run --format json` runs of OpenCode 1.18.33 in one file (the second
    // continued the session): no prompt in either; each ends with a `stop` step.
    let r = crate::report(&case("run-json-runs").join("session.jsonl"))?;
    assert_eq!(r.turns.len(), 2);
    let answers: Vec<Option<&str>> = r
        .turns
        .iter()
        .map(|t| t.response.as_ref().map(|a| a.text.as_str()))
        .collect();
    assert_eq!(
        answers,
        [
            Some("There is a README."),
            Some("missing.txt does not exist.")
        ]
    );
    assert!(r.turns.iter().all(|t| t.prompt.is_none()));
    let first: Vec<_> = calls(&r.turns[..1]).iter().map(|c| c.status).collect();
    let second: Vec<_> = calls(&r.turns[1..]).iter().map(|c| c.status).collect();
    assert_eq!(first, [ToolStatus::Ok]);
    assert_eq!(second, [ToolStatus::Error]);
    Ok(())
}

#[test]
fn a_forced_adapter_reads_a_tree_whose_ids_lack_the_usual_prefix_in_creation_order()
-> anyhow::Result<()> {
    let dir = case("plain-ids");
    // Not recognised on its own: the error says what the folder looks like and the way out.
    let out = crate::tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(&dir)
        .output()?;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a storage tree in OpenCode's layout")
            && err.contains("name it with --harness opencode"),
        "{err}"
    );
    // A folder with no session file at all names each ending it looked for once.
    let empty = tempfile::tempdir()?;
    let out = crate::tracebook()
        .args(["render", "--format", "json", "-o", "-"])
        .arg(empty.path())
        .output()?;
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("looked for files ending in jsonl, ndjson, jsonl.zst, json)"),
        "{err}"
    );
    // `--harness opencode` reads it; the assistant message (whose id sorts first) follows
    // the prompt it answers, as their creation times say.
    let out = crate::tracebook()
        .args([
            "render",
            "--harness",
            "opencode",
            "--format",
            "json",
            "-o",
            "-",
        ])
        .arg(&dir)
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let turns = r["turns"].as_array().cloned().unwrap_or_default();
    assert_eq!(turns.len(), 1, "{r}");
    assert_eq!(turns[0]["prompt"]["text"], "List the files");
    assert_eq!(turns[0]["response"]["text"], "There is a README.");
    assert_eq!(turns[0]["steps"][0]["status"], "ok");
    Ok(())
}

/// `tracebook list --json` with only `env` set (HOME and the data folder variables cleared).
fn list_with(env: &[(&str, &Path)]) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut cmd = crate::tracebook();
    cmd.env_remove("XDG_DATA_HOME")
        .env_remove("OPENCODE_DB")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .args(["list", "--json", "--harness", "opencode"])
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

#[test]
fn list_finds_a_channel_database_and_the_one_opencode_db_names() -> anyhow::Result<()> {
    // A dev-channel build writes opencode-<channel>.db beside where a release writes
    // opencode.db.
    let home = tempfile::tempdir()?;
    let data = home.path().join(".local/share/opencode");
    std::fs::create_dir_all(&data)?;
    let db = build_db(&data)?;
    std::fs::rename(&db, data.join("opencode-dev.db"))?;
    let rows = list_with(&[("HOME", home.path())])?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["id"], "ses_main0000001");

    // OPENCODE_DB names a database anywhere (absolute), or under the data folder (relative).
    let elsewhere = tempfile::tempdir()?;
    let other = build_db(elsewhere.path())?;
    let empty_home = tempfile::tempdir()?;
    let rows = list_with(&[("HOME", empty_home.path()), ("OPENCODE_DB", &other)])?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let rows = list_with(&[
        ("HOME", home.path()),
        ("OPENCODE_DB", Path::new("opencode-dev.db")),
    ])?;
    assert_eq!(rows.len(), 1, "the same database is listed once: {rows:?}");
    Ok(())
}

#[test]
fn a_background_task_is_unknown_until_its_outcome_which_is_a_notice_in_the_turn()
-> anyhow::Result<()> {
    // OPENCODE_EXPERIMENTAL_BACKGROUND_SUBAGENTS: the task part "completes" at launch with
    // `metadata.background`; the outcome comes later as synthetic text that prompts the agent.
    let path = case("background-task").join("session.json");
    let r = crate::report(&path)?;
    assert_eq!(r.turns.len(), 1, "the outcome's message starts no turn");
    // The outcome settles the call it names by its child session.
    let statuses: Vec<_> = calls(&r.turns).iter().map(|c| c.status).collect();
    assert_eq!(statuses, [ToolStatus::Ok]);
    let notices: Vec<&str> = r.turns[0]
        .steps
        .iter()
        .filter_map(|s| match s {
            StepView::Notice(n) => Some(n.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notices, ["Background task completed: run the check"]);
    assert_eq!(
        r.turns[0].response.as_ref().map(|a| a.text.as_str()),
        Some("The background check passed.")
    );
    // Before the outcome arrives (the session cut there), the launch alone is not ok.
    let mut doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
    if let Some(messages) = doc["messages"].as_array_mut() {
        messages.truncate(3);
    }
    let dir = tempfile::tempdir()?;
    let cut = dir.path().join("session.json");
    std::fs::write(&cut, serde_json::to_string(&doc)?)?;
    let r = crate::report(&cut)?;
    let statuses: Vec<_> = calls(&r.turns).iter().map(|c| c.status).collect();
    assert_eq!(statuses, [ToolStatus::Unknown]);
    Ok(())
}

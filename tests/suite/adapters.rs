//! User adapters: adding a harness, replacing a built-in, and rejecting bad files.

use predicates::prelude::*;
use std::fs;

use crate::{fixtures, tracebook};

#[test]
fn an_invented_harness_renders_from_yaml_alone() -> anyhow::Result<()> {
    let dir = fixtures().join("adapters/valid");
    let out = tracebook()
        .args(["render", "--format", "json", "-o", "-", "--adapters"])
        .arg(&dir)
        .arg(dir.join("toolbox-session.jsonl"))
        .assert()
        .success()
        // A plan word the adapter does not map is reported, not taken for done.
        .stderr(predicate::str::contains(
            "table `todo_state_map` has no entry for `blocked`",
        ))
        .get_output()
        .stdout
        .clone();
    let report: serde_json::Value = serde_json::from_slice(&out)?;
    assert_eq!(report["session"]["harness"], "toolbox");
    let steps = report["turns"][0]["steps"].as_array().expect("steps");
    let calls: Vec<_> = steps.iter().filter(|s| s["type"] == "tool_call").collect();
    let statuses: Vec<_> = calls
        .iter()
        .map(|s| (s["call_id"].clone(), s["status"].clone()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("a".into(), "ok".into()),
            ("b".into(), "error".into()),
            ("c".into(), "unknown".into()),
            ("d".into(), "unknown".into()),
            ("e".into(), "error".into()),
            ("f".into(), "ok".into()),
            ("g".into(), "ok".into()),
            ("h".into(), "ok".into()),
        ]
    );
    let call = |id: &str| {
        calls
            .iter()
            .find(|c| c["call_id"] == id)
            .copied()
            .cloned()
            .unwrap_or_default()
    };
    // The search tool's own argument name labels the call.
    assert_eq!(call("f")["label"], "TODO");
    // The plan tool's items, each with a canonical state.
    let todos: Vec<_> = call("g")["todos"]
        .as_array()
        .expect("todos")
        .iter()
        .map(|t| (t["text"].clone(), t["state"].clone()))
        .collect();
    assert_eq!(
        todos,
        [
            ("Fix the build".into(), "done".into()),
            ("Fix lint".into(), "active".into()),
            ("Write docs".into(), "pending".into()),
            ("Ship".into(), "unknown".into()),
            ("Watch mode".into(), "cancelled".into()),
        ]
    );
    // The reader's gutter, named by the adapter; other tools have none.
    assert_eq!(call("h")["gutter"], "colon");
    assert!(call("b").get("gutter").is_none());
    Ok(())
}

#[test]
fn an_invented_harness_gets_labels_todo_states_and_plain_gutters_on_the_page() -> anyhow::Result<()>
{
    let dir = fixtures().join("adapters/valid");
    let out = tracebook()
        .args(["render", "-o", "-", "--adapters"])
        .arg(&dir)
        .arg(dir.join("toolbox-session.jsonl"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let html = String::from_utf8(out)?;
    // The search call is labelled by its own argument.
    assert!(
        html.contains(r#"<code class="tool-arg" title="TODO">TODO</code>"#),
        "no label"
    );
    // Each plan item has the mark of its canonical state; the unmapped one is not done.
    for (state, mark, text) in [
        ("done", "☑", "Fix the build"),
        ("active", "◐", "Fix lint"),
        ("pending", "☐", "Write docs"),
        ("unknown", "?", "Ship"),
        ("cancelled", "☒", "Watch mode"),
    ] {
        let item = format!(
            r#"<li class="todo-{state}"><span class="todo-mark">{mark}</span> {text} <span class="dim">{state}</span></li>"#
        );
        assert!(html.contains(&item), "missing {item}");
    }
    // The file's contents are marked as Python, with the reader's `1: ` gutter named, so the
    // page colours the code after it and leaves the gutter plain.
    assert!(
        html.contains(
            r#"<pre class="output"><code data-lang="python" data-gutter="colon">1: def "#
        ),
        "file contents not marked for colouring"
    );
    Ok(())
}

#[test]
fn adapters_list_names_each_origin() -> anyhow::Result<()> {
    tracebook()
        .args(["adapters", "list", "--adapters"])
        .arg(fixtures().join("adapters/valid"))
        .assert()
        .success()
        .stdout(predicate::str::contains("claude-code"))
        .stdout(predicate::str::contains("built-in"))
        .stdout(predicate::str::contains("toolbox"))
        .stdout(predicate::str::contains("user file"));
    Ok(())
}

#[test]
fn dumped_adapters_load_back_and_replace_the_built_ins() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    tracebook()
        .args(["adapters", "dump"])
        .arg(dir.path())
        .assert()
        .success();
    let path = dir.path().join("claude-code.yaml");
    let text = fs::read_to_string(&path)?;
    fs::write(
        &path,
        text.replace("label: Claude Code", "label: Claude Code (mine)"),
    )?;
    tracebook()
        .args(["adapters", "list", "--adapters"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("Claude Code (mine)"))
        .stdout(predicate::str::contains("replaces built-in"));
    Ok(())
}

#[test]
fn invalid_adapters_are_rejected_naming_file_field_and_value() -> anyhow::Result<()> {
    let cases = [
        (
            "unknown-status.yaml",
            "field `state_map.values.broken`: unknown value `done`",
        ),
        (
            "missing-table.yaml",
            "names the table `status_map`, which this adapter does not define",
        ),
        ("not-a-table.yaml", "field `colour_map`: not a table"),
        ("bad-regex.yaml", "bad regex"),
        ("unknown-field.yaml", "unknown field `colour`"),
    ];
    for (file, message) in cases {
        let dir = tempfile::tempdir()?;
        fs::copy(
            fixtures().join("adapters/invalid").join(file),
            dir.path().join(file),
        )?;
        tracebook()
            .args(["adapters", "list", "--adapters"])
            .arg(dir.path())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("adapter {file}")))
            .stderr(predicate::str::contains(message));
    }
    Ok(())
}

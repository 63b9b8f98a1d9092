//! Everyday use: `list`, `render --session`, `render --all` with its index and
//! manifest, turn selection, and `rerender` of old notebooks. Sessions are found in a fake home
//! folder built from the fixtures in a temporary directory.

use predicates::prelude::*;
use serde_json::Value as Json;
use std::fs;
use std::path::{Path, PathBuf};

use crate::{CANARIES, fixtures, sample, tracebook};

const FIXTURE_ID: &str = "5b0c1f9e-2c1d-4c7e-9a51-0d3f7e2a6b11";

/// Copies a fixture into a Claude projects folder under a new session id, optionally moving it
/// to another project or day.
fn plant(
    projects: &Path,
    fixture: &str,
    id: &str,
    project: &str,
    day: &str,
) -> anyhow::Result<PathBuf> {
    let text = fs::read_to_string(
        fixtures()
            .join("claude-code")
            .join(fixture)
            .join("session.jsonl"),
    )?
    .replace(FIXTURE_ID, id)
    .replace(
        "/Users/alice/work/shop",
        &format!("/Users/alice/work/{project}"),
    )
    .replace("2026-03-02", day);
    let dir = projects.join(format!("-Users-alice-work-{project}"));
    fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{id}.jsonl"));
    fs::write(&path, text)?;
    Ok(path)
}

/// A home folder with four Claude Code sessions in two projects, a subagent file that must not
/// be listed on its own, and one unreadable session.
fn fake_home() -> anyhow::Result<tempfile::TempDir> {
    let home = tempfile::tempdir()?;
    let projects = home.path().join(".claude/projects");
    plant(
        &projects,
        "ordered-steps",
        "aaaa1111-0000-4000-8000-000000000001",
        "shop",
        "2026-03-02",
    )?;
    plant(
        &projects,
        "outcome-evidence",
        "aaaa2222-0000-4000-8000-000000000002",
        "shop",
        "2026-03-05",
    )?;
    plant(
        &projects,
        "interrupted",
        "bbbb3333-0000-4000-8000-000000000003",
        "garden",
        "2025-12-01",
    )?;
    let sub = plant(
        &projects,
        "subagent",
        "cccc4444-0000-4000-8000-000000000004",
        "garden",
        "2026-03-04",
    )?;
    let sub_dir = sub.with_extension("").join("subagents");
    fs::create_dir_all(&sub_dir)?;
    for f in ["agent-a1b2c3d.jsonl", "agent-a1b2c3d.meta.json"] {
        let text = fs::read_to_string(
            fixtures()
                .join("claude-code/subagent/session/subagents")
                .join(f),
        )?
        .replace(FIXTURE_ID, "cccc4444-0000-4000-8000-000000000004");
        fs::write(sub_dir.join(f), text)?;
    }
    fs::write(sub.with_file_name("agent-flat.jsonl"), "{}\n")?;
    fs::write(
        projects.join("-Users-alice-work-shop/broken.jsonl"),
        "this is not json\n",
    )?;
    Ok(home)
}

fn list_json(home: &Path, extra: &[&str]) -> anyhow::Result<Vec<Json>> {
    let out = tracebook()
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("XDG_DATA_HOME")
        .args(["list", "--json"])
        .args(extra)
        .output()?;
    // 3: the fake home's broken file is a session that could not be read.
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

#[test]
fn list_shows_every_session_of_the_home_folder() -> anyhow::Result<()> {
    let home = fake_home()?;
    let rows = list_json(home.path(), &[])?;
    let ids: Vec<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "aaaa2222-0000-4000-8000-000000000002",
            "cccc4444-0000-4000-8000-000000000004",
            "aaaa1111-0000-4000-8000-000000000001",
            "bbbb3333-0000-4000-8000-000000000003",
        ],
        "newest first, subagents and the broken file not listed as sessions"
    );
    let first = &rows[2];
    assert_eq!(first["harness"], "claude-code");
    assert_eq!(first["project"], "shop");
    assert_eq!(first["turns"], 1);
    assert_eq!(first["tool_calls"], 2);
    assert_eq!(first["errors"], 0);
    let text = serde_json::to_string(&rows)?;
    for canary in CANARIES {
        assert!(!text.contains(canary), "{canary} leaked into the list");
    }
    Ok(())
}

#[test]
fn list_reports_a_broken_session_and_goes_on() -> anyhow::Result<()> {
    let home = fake_home()?;
    tracebook()
        .env("HOME", home.path())
        .arg("list")
        .assert()
        .code(3)
        .stdout(predicate::str::contains("HARNESS"))
        .stdout(predicate::str::contains("bbbb3333"))
        .stderr(predicate::str::contains("broken.jsonl"))
        .stderr(predicate::str::contains("alice").not());
    Ok(())
}

#[test]
fn list_filters_by_harness_since_and_project() -> anyhow::Result<()> {
    let home = fake_home()?;
    assert_eq!(list_json(home.path(), &["--project", "GARD"])?.len(), 2);
    assert_eq!(list_json(home.path(), &["--since", "2026-03-03"])?.len(), 2);
    assert_eq!(
        list_json(home.path(), &["--harness", "claude-code"])?.len(),
        4
    );
    tracebook()
        .env("HOME", home.path())
        .args(["list", "--harness", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown harness `nope`"));
    tracebook()
        .env("HOME", home.path())
        .args(["list", "--since", "someday"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--since someday"));
    Ok(())
}

#[test]
fn claude_config_dir_replaces_the_default_location() -> anyhow::Result<()> {
    let home = fake_home()?;
    let config = tempfile::tempdir()?;
    plant(
        &config.path().join("projects"),
        "tool-after-message",
        "dddd5555-0000-4000-8000-000000000005",
        "lab",
        "2026-03-06",
    )?;
    let out = tracebook()
        .env("HOME", home.path())
        .env("CLAUDE_CONFIG_DIR", config.path())
        .args(["list", "--json"])
        .output()?;
    let rows: Vec<Json> = serde_json::from_slice(&out.stdout)?;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["id"], "dddd5555-0000-4000-8000-000000000005");
    Ok(())
}

/// A Codex home whose session spawned a subagent thread: the thread's own rollout sits beside
/// the parent's.
fn codex_home_with_a_subagent() -> anyhow::Result<tempfile::TempDir> {
    let home = tempfile::tempdir()?;
    let day = home.path().join(".codex/sessions/2026/06/10");
    fs::create_dir_all(&day)?;
    let case = fixtures().join("codex/subagent");
    fs::copy(
        case.join("session.jsonl"),
        day.join("rollout-2026-06-10T14-00-00-0199dddd-4444-7555-8666-777788889999.jsonl"),
    )?;
    let child = "rollout-2026-06-10T14-00-02-0199dddd-5555-7666-8777-88889999aaaa.jsonl";
    fs::copy(case.join(child), day.join(child))?;
    Ok(home)
}

#[test]
fn list_leaves_out_a_subagent_session_its_parent_holds() -> anyhow::Result<()> {
    let home = codex_home_with_a_subagent()?;
    let (parent, child) = (
        "0199dddd-4444-7555-8666-777788889999",
        "0199dddd-5555-7666-8777-88889999aaaa",
    );
    // The JSON keeps every row, the subagent's with its parent.
    let rows = list_json(home.path(), &[])?;
    let of = |id: &str| rows.iter().find(|r| r["id"] == id).cloned();
    assert_eq!(
        of(child).map(|r| r["parent"].clone()),
        Some(Json::from(parent))
    );
    assert_eq!(of(parent).map(|r| r.get("parent").is_none()), Some(true));
    // The table shows the parent only, and says why the other is not there.
    let out = tracebook()
        .env("HOME", home.path())
        .env_remove("CODEX_HOME")
        .arg("list")
        .output()?;
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains(parent), "{stdout}");
    assert!(!stdout.contains(child), "{stdout}");
    assert!(
        stderr.contains("1 subagent session(s) not shown"),
        "{stderr}"
    );
    // The index of `render --all` links the subagent's row to its parent's notebook, and the
    // subagent's own notebook names its parent.
    let out_dir = tempfile::tempdir()?;
    render_all(home.path(), out_dir.path(), &["--quiet"]).success();
    let index = fs::read_to_string(out_dir.path().join("index.html"))?;
    assert!(
        index.contains(&format!(
            "subagent of <a href=\"codex-rollout-2026-06-10T14-00-00-{parent}.html\">{parent}</a>"
        )),
        "{index}"
    );
    let own = fs::read_to_string(
        out_dir
            .path()
            .join(format!("codex-rollout-2026-06-10T14-00-02-{child}.html")),
    )?;
    assert!(own.contains(&format!("<dt>Subagent of</dt><dd><code>{parent}</code>")));
    Ok(())
}

#[test]
fn render_session_by_unique_prefix_and_refuses_an_ambiguous_one() -> anyhow::Result<()> {
    let home = fake_home()?;
    let out = tempfile::tempdir()?;
    let file = out.path().join("s.html");
    tracebook()
        .env("HOME", home.path())
        .args(["render", "--session", "bbbb"])
        .arg("-o")
        .arg(&file)
        .assert()
        .success();
    assert!(fs::read_to_string(&file)?.contains("bbbb3333-0000-4000-8000-000000000003"));
    tracebook()
        .env("HOME", home.path())
        .args(["render", "--session", "aaaa", "-o", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("ambiguous"))
        .stderr(predicate::str::contains(
            "aaaa1111-0000-4000-8000-000000000001",
        ))
        .stderr(predicate::str::contains(
            "aaaa2222-0000-4000-8000-000000000002",
        ));
    tracebook()
        .env("HOME", home.path())
        .args(["render", "--session", "zzzz", "-o", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no listed session"));
    Ok(())
}

fn render_all(home: &Path, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    tracebook()
        .env("HOME", home)
        .args(["render", "--all", "-o"])
        .arg(out)
        .args(extra)
        .assert()
}

#[test]
fn render_all_writes_notebooks_an_index_and_reports_failures() -> anyhow::Result<()> {
    let home = fake_home()?;
    let out = tempfile::tempdir()?;
    render_all(home.path(), out.path(), &[])
        .code(3)
        .stderr(predicate::str::contains(
            "4 rendered, 0 unchanged, 1 failed",
        ))
        .stderr(predicate::str::contains("broken.jsonl"));
    let index = fs::read_to_string(out.path().join("index.html"))?;
    for id in ["aaaa1111", "aaaa2222", "bbbb3333", "cccc4444"] {
        let file = format!(
            "claude-code-{id}-0000-4000-8000-00000000000{}.html",
            &id[4..5]
        );
        assert!(
            index.contains(&format!("href=\"{file}\"")),
            "{file} not linked"
        );
        assert!(out.path().join(&file).is_file(), "{file} not written");
    }
    assert!(index.contains("could not be rendered"));
    assert!(
        index.contains(
            "Content-Security-Policy\" content=\"default-src 'none'; script-src 'sha256-"
        )
    );
    assert!(!index.contains("<script src"));
    assert!(!index.contains("http://") && !index.contains("https://"));
    for canary in CANARIES {
        assert!(!index.contains(canary), "{canary} leaked into the index");
    }

    // A second run re-renders nothing; a changed source is rendered again; --force renders all.
    render_all(home.path(), out.path(), &[])
        .code(3)
        .stderr(predicate::str::contains(
            "0 rendered, 5 unchanged, 1 failed",
        ));
    let changed = home.path().join(
        ".claude/projects/-Users-alice-work-garden/bbbb3333-0000-4000-8000-000000000003.jsonl",
    );
    let mut text = fs::read_to_string(&changed)?;
    text.push('\n');
    fs::write(&changed, text)?;
    render_all(home.path(), out.path(), &[])
        .code(3)
        .stderr(predicate::str::contains(
            "1 rendered, 4 unchanged, 1 failed",
        ));
    render_all(home.path(), out.path(), &["--force", "--quiet"])
        .code(3)
        .stderr(predicate::str::contains("rendered").not());
    Ok(())
}

#[test]
fn render_all_applies_the_filters() -> anyhow::Result<()> {
    let home = fake_home()?;
    fs::remove_file(
        home.path()
            .join(".claude/projects/-Users-alice-work-shop/broken.jsonl"),
    )?;
    let out = tempfile::tempdir()?;
    render_all(home.path(), out.path(), &["--project", "garden"]).success();
    let index = fs::read_to_string(out.path().join("index.html"))?;
    assert!(index.contains("bbbb3333") && index.contains("cccc4444"));
    assert!(!index.contains("aaaa1111"));
    assert!(
        !out.path()
            .join("claude-code-aaaa1111-0000-4000-8000-000000000001.html")
            .exists()
    );
    Ok(())
}

fn report_json(args: &[&str]) -> anyhow::Result<Json> {
    let out = tracebook()
        .arg("render")
        .arg(sample())
        .args(["--format", "json", "-o", "-"])
        .args(args)
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

#[test]
fn turn_selection_keeps_original_numbers_and_drops_the_rest() -> anyhow::Result<()> {
    let all = report_json(&[])?;
    let total = all["turns"].as_array().map_or(0, Vec::len);
    assert!(total >= 4, "fixture has {total} turns");
    let some = report_json(&["--turns", "2-4", "--exclude-turns", "3"])?;
    let numbers: Vec<u64> = some["turns"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["number"].as_u64()).collect())
        .unwrap_or_default();
    assert_eq!(numbers, [2, 4]);
    assert_eq!(some["turns"][0]["id"], "t2");
    assert_eq!(some["summary"]["turns"], 2);
    assert_eq!(some["selection"]["of"], total);
    let third_prompt = all["turns"][2]["prompt"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(!third_prompt.is_empty());
    assert!(!serde_json::to_string(&some)?.contains(third_prompt));

    let html = tracebook()
        .arg("render")
        .arg(sample())
        .args(["--turns", "2", "-o", "-"])
        .output()?;
    let html = String::from_utf8(html.stdout)?;
    assert!(html.contains("id=\"t2\"") && !html.contains("id=\"t1\""));
    assert!(html.contains("keeps 1 of the session"));

    tracebook()
        .arg("render")
        .arg(sample())
        .args(["--turns", "90-99", "-o", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("keeps none"));
    tracebook()
        .arg("render")
        .arg(sample())
        .args(["--turns", "4-2", "-o", "-"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--turns 4-2"));
    Ok(())
}

/// The report model embedded in a notebook.
fn embedded(html: &str) -> anyhow::Result<Json> {
    let text = tracebook::render::embed::json(html)?;
    Ok(serde_json::from_str(&text)?)
}

fn rerender(input: &Path) -> anyhow::Result<(String, String)> {
    let out = tracebook()
        .arg("rerender")
        .arg(input)
        .args(["-o", "-"])
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((
        String::from_utf8(out.stdout)?,
        String::from_utf8(out.stderr)?,
    ))
}

#[test]
fn every_past_schema_version_rerenders() -> anyhow::Result<()> {
    let dir = fixtures().join("reports");
    let mut seen = 0;
    for entry in fs::read_dir(&dir)? {
        let version = entry?.path();
        for file in fs::read_dir(&version)? {
            let file = file?.path();
            let (html, _) = rerender(&file)?;
            let model = embedded(&html)?;
            assert_eq!(
                model["schema_version"],
                tracebook::report::model::SCHEMA_VERSION
            );
            assert!(html.contains("<main"), "{} did not render", file.display());
            seen += 1;
        }
    }
    assert!(seen >= 2, "expected fixtures under {}", dir.display());
    Ok(())
}

#[test]
fn a_current_notebook_rerenders_to_the_same_model() -> anyhow::Result<()> {
    let file = fixtures().join("reports/v1/sample.html");
    let before = embedded(&fs::read_to_string(&file)?)?;
    let (html, _) = rerender(&file)?;
    assert_eq!(embedded(&html)?, before);
    Ok(())
}

#[test]
fn missing_statuses_read_as_incomplete_and_unknown() -> anyhow::Result<()> {
    let file = fixtures().join("reports/v0/missing-statuses.html");
    let (html, notes) = rerender(&file)?;
    let model = embedded(&html)?;
    assert_eq!(model["turns"][0]["response_status"], "incomplete");
    assert_eq!(model["turns"][0]["steps"][0]["status"], "unknown");
    assert_eq!(
        model["turns"][0]["steps"][1]["status"], "error",
        "a stated status is kept"
    );
    assert_eq!(model["summary"]["unknown"], 1);
    assert_eq!(model["summary"]["ok"], 0);
    assert_eq!(model["summary"]["complete"], 0);
    assert!(notes.contains("read as incomplete") && notes.contains("read as unknown"));
    Ok(())
}

#[test]
fn rerender_refuses_a_page_without_a_report() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let page = dir.path().join("page.html");
    fs::write(&page, "<!doctype html><p>hello</p>")?;
    tracebook()
        .arg("rerender")
        .arg(&page)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("page.html"))
        .stderr(predicate::str::contains("no embedded report"));
    Ok(())
}

/// A home folder holding one session of each harness where it keeps them, and an OpenCode
/// database and storage tree that hold several sessions each.
fn four_harness_home() -> anyhow::Result<tempfile::TempDir> {
    let home = fake_home()?;
    let h = home.path();
    let codex = h.join(".codex/sessions/2026/03/02");
    fs::create_dir_all(&codex)?;
    fs::copy(
        fixtures().join("codex/tool-outcomes/session.jsonl"),
        codex.join("rollout-2026-03-02T10-00-00-0199aaaa-1111-7222-8333-444455556666.jsonl"),
    )?;
    let chats = h.join(".gemini/tmp/shop/chats");
    fs::create_dir_all(&chats)?;
    fs::copy(
        fixtures().join("gemini-cli/tool-outcomes/session.jsonl"),
        chats.join("session-2026-08-21T10-00-5f1c2a9e.jsonl"),
    )?;
    let data = h.join(".local/share/opencode");
    fs::create_dir_all(&data)?;
    let db = crate::opencode::build_db(&data)?;
    // A second top-level session in the same database.
    let conn = rusqlite::Connection::open(&db)?;
    conn.execute_batch(
        "INSERT INTO session VALUES ('ses_second000001', 'proj0001', NULL, NULL, 'second', \
           '/repo', 'second', '1.2.5', 1767000100000, 1767000100050);
         INSERT INTO message VALUES ('msg_s001', 'ses_second000001', 1767000100000, 1767000100000,
           '{\"role\": \"user\", \"time\": {\"created\": 1767000100000}}');
         INSERT INTO part VALUES ('prt_s001', 'msg_s001', 'ses_second000001', 1767000100000,
           1767000100000, '{\"type\": \"text\", \"text\": \"Second session prompt\"}');",
    )?;
    drop(conn);
    Ok(home)
}

#[test]
fn list_finds_every_harness_and_each_session_of_a_database() -> anyhow::Result<()> {
    let home = four_harness_home()?;
    let rows = list_json(home.path(), &["--harness", "codex"])?;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let all = list_json(home.path(), &[])?;
    let by_harness = |h: &str| {
        all.iter()
            .filter(|r| r["harness"] == h)
            .filter_map(|r| r["id"].as_str())
            .collect::<Vec<_>>()
    };
    assert_eq!(by_harness("claude-code").len(), 4);
    assert_eq!(
        by_harness("codex"),
        ["0199aaaa-1111-7222-8333-444455556666"]
    );
    assert_eq!(
        by_harness("gemini-cli"),
        ["5f1c2a9e-3b7d-4c21-9a4e-8d2f61b0c7bb"]
    );
    // Each top-level session of the database is its own row; the child session is not.
    let mut opencode = by_harness("opencode");
    opencode.sort();
    assert_eq!(opencode, ["ses_main0000001", "ses_second000001"]);

    // `render --session` reads that session out of the database.
    let out = tracebook()
        .env("HOME", home.path())
        .env_remove("XDG_DATA_HOME")
        .args([
            "render",
            "--session",
            "ses_second",
            "--format",
            "json",
            "-o",
            "-",
        ])
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Json = serde_json::from_slice(&out.stdout)?;
    assert_eq!(report["session"]["id"], "ses_second000001");
    assert_eq!(
        report["turns"][0]["prompt"]["text"],
        "Second session prompt"
    );

    // `render --all` writes one notebook for each.
    let dir = tempfile::tempdir()?;
    tracebook()
        .env("HOME", home.path())
        .env_remove("XDG_DATA_HOME")
        .args(["render", "--all", "--harness", "opencode", "-o"])
        .arg(dir.path())
        .assert()
        .success();
    for file in [
        "opencode-ses_main0000001.html",
        "opencode-ses_second000001.html",
    ] {
        assert!(dir.path().join(file).is_file(), "{file} not written");
    }
    Ok(())
}

#[test]
fn list_reads_each_top_level_session_of_an_opencode_storage_tree() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let data = home.path().join("data");
    let storage = fixtures().join("opencode/storage-tree/tree/storage");
    for entry in walk(&storage)? {
        let to = data
            .join("opencode/storage")
            .join(entry.strip_prefix(&storage)?);
        fs::create_dir_all(to.parent().unwrap_or(&data))?;
        fs::copy(&entry, &to)?;
    }
    let out = tracebook()
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", &data)
        .args(["list", "--json", "--harness", "opencode"])
        .output()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Json> = serde_json::from_slice(&out.stdout)?;
    let ids: Vec<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(
        ids,
        ["ses_main0000001"],
        "the child session is read with its parent"
    );
    // The same session as rendering the tree directly, subagent calls included.
    let direct = crate::report(&data.join("opencode"))?;
    assert_eq!(rows[0]["tool_calls"], direct.summary.tool_calls);
    Ok(())
}

/// Every file under a folder.
fn walk(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(walk(&path)?);
        } else {
            out.push(path);
        }
    }
    Ok(out)
}

/// Every file under a folder, as text.
fn folder_text(dir: &Path) -> anyhow::Result<Vec<(PathBuf, String)>> {
    walk(dir)?
        .into_iter()
        .map(|p| {
            Ok((
                p.clone(),
                String::from_utf8_lossy(&fs::read(&p)?).into_owned(),
            ))
        })
        .collect()
}

#[test]
fn render_all_writes_no_redact_string_and_no_excluded_prompt_anywhere() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    let project = home.path().join(".claude/projects/-home-u-work-shop");
    fs::create_dir_all(&project)?;
    let text = fs::read_to_string(sample())?
        .replace("Please find the bug.", "Please find the bug in ZEPHYRCODE.")
        .replace(
            "Also deploy it to staging.",
            "Also deploy ZEPHYRCODE to staging.",
        );
    fs::write(project.join("s1.jsonl"), text)?;
    fs::write(project.join("ZEPHYRCODE-notes.jsonl"), "not a session\n")?;
    let out = home.path().join("out");
    let run = || {
        tracebook()
            .env("HOME", home.path())
            .args([
                "render",
                "--all",
                "--redact",
                "ZEPHYRCODE",
                "--exclude-turns",
                "1",
                "-o",
            ])
            .arg(&out)
            .assert()
    };
    run().code(3);
    let files = folder_text(&out)?;
    assert!(files.len() >= 3, "{files:?}");
    for (path, text) in &files {
        for gone in ["ZEPHYRCODE", "The cart total is wrong"] {
            assert!(!text.contains(gone), "{gone} in {}", path.display());
        }
    }
    // The notebook, the index and the manifest take the title of the first selected turn.
    let index = fs::read_to_string(out.join("index.html"))?;
    assert!(index.contains("Fix it, add a test"), "{index}");
    let manifest: Json =
        serde_json::from_str(&fs::read_to_string(out.join(".tracebook-manifest.json"))?)?;
    let options = manifest["options"].as_str().unwrap_or_default();
    assert!(options.starts_with("hmac-sha256:"), "{options}");
    // The key is kept on this machine, outside the folder, so a second run still recognises
    // its options.
    assert!(
        home.path()
            .join(".local/state/tracebook/manifest.key")
            .is_file()
    );
    run()
        .code(3)
        .stderr(predicate::str::contains("0 rendered, 2 unchanged"));
    Ok(())
}

#[test]
fn rerender_runs_todays_privacy_stage_over_an_old_notebook() -> anyhow::Result<()> {
    // A notebook "written by an old version" whose embedded report holds what today's rules
    // remove: a token, a password assignment, a home folder, a string the user redacts.
    let token = format!("ghp_{}", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2");
    let old = fs::read_to_string(fixtures().join("reports/v0/missing-statuses.html"))?
        .replace(
            "test result: ok",
            &format!("token {token} and DB_PASSWORD=Hunter2Secret99 in /home/zoe.q/proj"),
        )
        .replace("Run the tests", "Run the tests for PROJECTNIGHT");
    let dir = tempfile::tempdir()?;
    let input = dir.path().join("old.html");
    fs::write(&input, &old)?;
    let out = tracebook()
        .env("HOME", "/home/zoe.q")
        .env("USER", "zoe.q")
        .arg("rerender")
        .arg(&input)
        .args(["--redact", "PROJECTNIGHT", "-o", "-"])
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let html = String::from_utf8(out.stdout)?;
    let model = serde_json::to_string(&embedded(&html)?)?;
    for gone in [token.as_str(), "Hunter2Secret99", "zoe.q", "PROJECTNIGHT"] {
        assert!(!model.contains(gone), "{gone} in the embedded report");
        assert!(!html.contains(gone), "{gone} in the page");
    }
    assert!(model.contains("Run the tests for"), "{model}");
    assert!(stderr.contains("privacy rules redacted"), "{stderr}");
    Ok(())
}

#[test]
fn a_notebook_whose_transcript_holds_the_report_id_rerenders() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let log = dir.path().join("s.jsonl");
    let text = fs::read_to_string(sample())?.replace(
        "Also deploy it to staging.",
        "grep says <template id=\\\"tracebook-report\\\" data-encoding=\\\"zstd+base64\\\"> here",
    );
    fs::write(&log, text)?;
    let page = dir.path().join("s.html");
    tracebook()
        .arg("render")
        .arg(&log)
        .arg("-o")
        .arg(&page)
        .assert()
        .success();
    let (html, _) = rerender(&page)?;
    let model = embedded(&html)?;
    assert_eq!(model["turns"].as_array().map(Vec::len), Some(4));
    assert!(serde_json::to_string(&model)?.contains("grep says <template id="));
    Ok(())
}

#[test]
fn json_output_honours_the_conversation_view() -> anyhow::Result<()> {
    let full = report_json(&[])?;
    let conversation = report_json(&["--view", "conversation"])?;
    let steps = |r: &Json| -> usize {
        r["turns"].as_array().map_or(0, |t| {
            t.iter()
                .filter_map(|t| t["steps"].as_array())
                .map(Vec::len)
                .sum()
        })
    };
    assert!(steps(&full) > 0);
    assert_eq!(steps(&conversation), 0);
    assert_eq!(
        conversation["turns"][0]["prompt"]["text"],
        full["turns"][0]["prompt"]["text"]
    );
    Ok(())
}

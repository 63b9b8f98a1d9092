//! What an installed tool offers beside its commands: shell completions, manual pages, and a
//! `list` that says where it looked when it finds nothing.

use crate::tracebook;

#[test]
fn completions_are_generated_for_each_shell() -> anyhow::Result<()> {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = tracebook().args(["completions", shell]).output()?;
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout)?;
        for word in ["render", "rerender", "format", "max-bytes", "completions"] {
            assert!(script.contains(word), "{shell} completion lacks {word}");
        }
    }
    // The bash script is valid bash.
    let script = tracebook().args(["completions", "bash"]).output()?.stdout;
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("tracebook.bash");
    std::fs::write(&file, script)?;
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .output();
    if let Ok(check) = check {
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stderr)
        );
    }
    tracebook()
        .args(["completions", "tcsh"])
        .assert()
        .failure()
        .code(2);
    Ok(())
}

#[test]
fn man_prints_the_page_and_writes_one_per_command() -> anyhow::Result<()> {
    let out = tracebook().arg("man").output()?;
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout)?;
    assert!(page.contains(".TH tracebook 1"), "{page}");
    assert!(page.contains("tracebook\\-render(1)"));
    let dir = tempfile::tempdir()?;
    tracebook()
        .arg("man")
        .arg("--dir")
        .arg(dir.path())
        .assert()
        .success();
    for name in [
        "tracebook.1",
        "tracebook-render.1",
        "tracebook-list.1",
        "tracebook-man.1",
    ] {
        assert!(dir.path().join(name).is_file(), "{name}");
    }
    let render = std::fs::read_to_string(dir.path().join("tracebook-render.1"))?;
    assert!(render.contains("\\-\\-max\\-bytes"));
    Ok(())
}

#[test]
fn list_with_nothing_found_says_where_it_looked_and_succeeds() -> anyhow::Result<()> {
    let home = tempfile::tempdir()?;
    std::fs::create_dir_all(home.path().join(".claude/projects"))?;
    let out = tracebook()
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("OPENCODE_DB")
        .arg("list")
        .output()?;
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "no empty table");
    let err = String::from_utf8(out.stderr)?;
    let home = home.path().display().to_string();
    assert!(err.contains("note: no session found"), "{err}");
    assert!(
        err.contains(&format!(
            "claude-code: nothing in {home}/.claude matches projects/*/*.jsonl"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("codex: {home}/.codex does not exist")),
        "{err}"
    );
    assert!(
        err.contains("gemini-cli: ") && err.contains("opencode: "),
        "{err}"
    );
    // With no home folder at all, it says which variables would have named one.
    let out = tracebook()
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("XDG_DATA_HOME")
        .args(["list", "--harness", "codex", "--json"])
        .output()?;
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout)?.trim(), "[]");
    let err = String::from_utf8(out.stderr)?;
    assert!(
        err.contains("codex: not looked for, neither CODEX_HOME nor HOME is set"),
        "{err}"
    );
    assert!(
        !err.contains("claude-code"),
        "only the harness asked for: {err}"
    );
    Ok(())
}

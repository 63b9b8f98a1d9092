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

/// Colour on standard error only where someone sees it: not through a pipe, forced by
/// `CLICOLOR_FORCE`, and never with `NO_COLOR`.
#[test]
fn stderr_is_coloured_only_on_a_terminal_or_when_forced_and_never_with_no_color()
-> anyhow::Result<()> {
    let run = |vars: &[(&str, &str)]| -> anyhow::Result<String> {
        let mut cmd = tracebook();
        cmd.env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE");
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let bad = crate::fixtures().join("claude-code/bad-input/session.jsonl");
        let dir = tempfile::tempdir()?;
        let out = cmd
            .arg("render")
            .arg(&bad)
            .arg("-o")
            .arg(dir.path().join("x.html"))
            .output()?;
        let missing = tracebook()
            .env_remove("NO_COLOR")
            .envs(vars.iter().copied())
            .args(["render", "/no/such/session.jsonl"])
            .output()?;
        Ok(String::from_utf8(out.stderr)? + &String::from_utf8(missing.stderr)?)
    };
    let piped = run(&[])?;
    assert!(
        piped.contains("warning: ") && piped.contains("error: "),
        "{piped}"
    );
    assert!(!piped.contains('\u{1b}'), "{piped:?}");
    let forced = run(&[("CLICOLOR_FORCE", "1")])?;
    assert!(
        forced.contains("\u{1b}[1;33mwarning: \u{1b}[0m"),
        "{forced:?}"
    );
    assert!(
        forced.contains("\u{1b}[1;31merror: \u{1b}[0m"),
        "{forced:?}"
    );
    let no_color = run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])?;
    assert!(!no_color.contains('\u{1b}'), "{no_color:?}");
    Ok(())
}

/// A stand-in for the system's opener that records what it was asked to open.
#[cfg(target_os = "linux")]
fn fake_opener(dir: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin)?;
    let script = bin.join("xdg-open");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n",
            dir.join("opened").display()
        ),
    )?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    Ok(bin)
}

#[cfg(target_os = "linux")]
#[test]
fn open_opens_the_written_notebook_except_in_ci() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let bin = fake_opener(dir.path())?;
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fixture = crate::fixtures().join("codex/tool-outcomes/session.jsonl");
    let out = dir.path().join("s.html");
    tracebook()
        .env_remove("TRACEBOOK_NO_OPEN")
        .env_remove("CI")
        .env("PATH", &path)
        .arg("render")
        .arg(&fixture)
        .arg("-o")
        .arg(&out)
        .arg("--open")
        .assert()
        .success();
    let opened = std::fs::read_to_string(dir.path().join("opened"))?;
    assert_eq!(std::path::Path::new(&opened), out.canonicalize()?);
    std::fs::remove_file(dir.path().join("opened"))?;
    // In CI, and wherever TRACEBOOK_NO_OPEN is set (these tests), nothing is opened.
    for var in ["CI", "TRACEBOOK_NO_OPEN"] {
        let run = tracebook()
            .env_remove("TRACEBOOK_NO_OPEN")
            .env(var, "true")
            .env("PATH", &path)
            .arg("render")
            .arg(&fixture)
            .arg("-o")
            .arg(&out)
            .arg("--open")
            .output()?;
        assert!(run.status.success());
        assert!(String::from_utf8(run.stderr)?.contains("is set"), "{var}");
        assert!(!dir.path().join("opened").exists(), "{var}: opened");
    }
    // There is nothing to open on standard output.
    tracebook()
        .arg("render")
        .arg(&fixture)
        .args(["-o", "-", "--open"])
        .assert()
        .code(2);
    Ok(())
}

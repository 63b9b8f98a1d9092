//! `--open`: what a command wrote, opened in the default browser (`xdg-open`, `open` or
//! `start`), except where no one is there to see it.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::console::Console;

/// Variables whose presence (not empty) means no browser is opened: CI runners set `CI`, and
/// `TRACEBOOK_NO_OPEN` is for anything else that runs tracebook unattended (its tests).
const NO_OPEN: [&str; 2] = ["TRACEBOOK_NO_OPEN", "CI"];

/// Opens `path` in the default browser, or says why it does not; a failure to open is a
/// warning, never a failed run (the file is written).
pub fn open(path: &Path, console: &Console) {
    if let Some(name) = NO_OPEN
        .iter()
        .find(|n| std::env::var_os(n).is_some_and(|v| !v.is_empty()))
    {
        console.note(&format!("not opening {}: {name} is set", path.display()));
        return;
    }
    let target = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mut cmd = opener(&target);
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => console.warn(&format!(
            "could not open {}: the opener exited {s}",
            path.display()
        )),
        Err(e) => console.warn(&format!(
            "could not open {}: {} ({e})",
            path.display(),
            cmd.get_program().to_string_lossy()
        )),
    }
}

/// The system's command that opens a file in its default application.
fn opener(target: &Path) -> Command {
    if cfg!(target_os = "macos") {
        let mut c = Command::new("open");
        c.arg(target);
        c
    } else if cfg!(windows) {
        // `start` is a cmd built-in; its first quoted argument is a window title.
        let mut c = Command::new("cmd");
        c.args(["/C", "start", ""]).arg(target);
        c
    } else {
        let mut c = Command::new("xdg-open");
        c.arg(target);
        c
    }
}

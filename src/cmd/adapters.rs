//! `tracebook adapters list | dump`.

use crate::adapters::{self, AdapterSet};
use crate::cli::AdaptersAction;
use crate::cmd::Exit;
use crate::console;

/// Lists the adapters with where each came from, or writes the built-in ones to a folder.
pub fn run(action: AdaptersAction) -> anyhow::Result<Exit> {
    let mut text = String::new();
    use std::fmt::Write as _;
    match action {
        AdaptersAction::List { adapters } => {
            let set = AdapterSet::load(adapters.as_deref())?;
            for a in set.iter() {
                let _ = writeln!(
                    text,
                    "{:<14} {:<22} {}",
                    a.spec.name, a.spec.label, a.origin
                );
            }
        }
        AdaptersAction::Dump { dir } => {
            for path in adapters::dump(&dir)? {
                let _ = writeln!(text, "wrote {}", path.display());
            }
        }
    }
    console::write_stdout(&[&text])?;
    Ok(Exit::Success)
}

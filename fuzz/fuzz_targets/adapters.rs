//! Any bytes as a session log, through every built-in adapter, privacy, projection and
//! rendering: nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

static SET: LazyLock<Option<tracebook::adapters::AdapterSet>> =
    LazyLock::new(|| tracebook::adapters::AdapterSet::load(None).ok());

fuzz_target!(|data: &[u8]| {
    let Some(set) = SET.as_ref() else { return };
    let Ok(dir) = tempfile::tempdir() else { return };
    let log = dir.path().join("session.jsonl");
    if std::fs::write(&log, data).is_err() {
        return;
    }
    let names: Vec<String> = set.iter().map(|a| a.spec.name.clone()).collect();
    for name in names {
        let options = tracebook::pipeline::Options {
            harness: Some(&name),
            ..tracebook::pipeline::Options::new(set)
        };
        if let Ok((report, _)) = tracebook::pipeline::report(&log, &options) {
            let _ = tracebook::render::html(&report);
        }
    }
});

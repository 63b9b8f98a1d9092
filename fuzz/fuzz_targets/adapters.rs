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
        if let Ok((report, _)) =
            tracebook::report_for(&log, set, Some(&name), &[], "2026-01-01T00:00:00Z".into())
        {
            let _ = tracebook::render::html(&report);
        }
    }
});

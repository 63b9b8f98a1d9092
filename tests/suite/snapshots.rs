//! The report model of every fixture session, pinned as an insta YAML snapshot.
//!
//! Each fixture under `tests/fixtures/<harness>/<case>/session.*` exercises one behaviour;
//! review changes with `cargo insta review`.

use crate::{fixtures, report};

#[test]
fn report_model_of_each_fixture() {
    insta::glob!(fixtures(), "*/*/session.*", |path| {
        let report = report(path).expect("fixture renders");
        insta::assert_yaml_snapshot!(report, {
            ".meta.tool_version" => "[version]",
        });
    });
}

/// Fixtures that are not one file: storage trees (`<harness>/<case>/tree/`) and databases
/// built from `<harness>/<case>/*.sql`, each pinned once.
#[test]
fn report_model_of_each_tree_and_database_fixture() -> anyhow::Result<()> {
    let mut cases: Vec<std::path::PathBuf> = Vec::new();
    for harness in std::fs::read_dir(fixtures())?.flatten() {
        for case in std::fs::read_dir(harness.path())?.flatten() {
            cases.push(case.path());
        }
    }
    cases.sort();
    let mut seen = 0;
    for case in cases {
        let name = case
            .strip_prefix(fixtures())?
            .to_string_lossy()
            .replace('/', "__");
        let tree = case.join("tree");
        if tree.is_dir() {
            let report = report(&tree)?;
            insta::assert_yaml_snapshot!(format!("tree__{name}"), report, {
                ".meta.tool_version" => "[version]",
            });
            seen += 1;
        }
        if case.join("opencode.sql").is_file() {
            let dir = tempfile::tempdir()?;
            let db = crate::opencode::build_db(dir.path())?;
            let report = report(&db)?;
            insta::assert_yaml_snapshot!(format!("db__{name}"), report, {
                ".meta.tool_version" => "[version]",
            });
            seen += 1;
        }
    }
    assert!(seen >= 2);
    Ok(())
}

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

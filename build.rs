//! Converts the secret rule files (`rules/*.yaml`) and the built-in adapters
//! (`adapters/*.yaml`) to JSON at build time: both are fixed in the binary, and reading them as
//! JSON at each start costs a tenth of reading the YAML. Also works out the strings each rule's
//! pattern requires (`src/privacy/rules/required.rs`), which takes longer than a start may.

use std::path::Path;

#[path = "src/privacy/rules/required.rs"]
mod required;

fn main() {
    let out = std::env::var_os("OUT_DIR").map(std::path::PathBuf::from);
    let Some(out) = out else {
        panic!("cargo sets OUT_DIR for build scripts");
    };
    let rules = ["secrets", "upstream"].map(|n| (format!("rules/{n}.yaml"), format!("{n}.json")));
    // Every adapter file (`src/adapters/builtin.rs` names the ones built in).
    println!("cargo::rerun-if-changed=adapters");
    let mut adapters: Vec<(String, String)> = std::fs::read_dir("adapters")
        .unwrap_or_else(|e| panic!("reading adapters/: {e}"))
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".yaml")?.to_owned();
            Some((format!("adapters/{name}"), format!("adapter-{stem}.json")))
        })
        .collect();
    adapters.sort();
    println!("cargo::rerun-if-changed=src/privacy/rules/required.rs");
    let mut required: Vec<Vec<Vec<String>>> = Vec::new();
    for (source, target) in rules.iter().chain(&adapters) {
        println!("cargo::rerun-if-changed={source}");
        let text =
            std::fs::read_to_string(source).unwrap_or_else(|e| panic!("reading {source}: {e}"));
        let value: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{source}: {e}"));
        if source.starts_with("rules/") {
            let Some(list) = value.as_sequence() else {
                panic!("{source}: not a list of rules");
            };
            for rule in list {
                let pattern = rule.get("pattern").and_then(|p| p.as_str()).unwrap_or("");
                required.push(required::required(pattern));
            }
        }
        let json = serde_json::to_string(&value).unwrap_or_else(|e| panic!("{source}: {e}"));
        let target = Path::new(&out).join(target);
        std::fs::write(&target, json)
            .unwrap_or_else(|e| panic!("writing {}: {e}", target.display()));
    }
    let target = Path::new(&out).join("required.json");
    let json = serde_json::to_string(&required).unwrap_or_else(|e| panic!("required.json: {e}"));
    std::fs::write(&target, json).unwrap_or_else(|e| panic!("writing {}: {e}", target.display()));
}

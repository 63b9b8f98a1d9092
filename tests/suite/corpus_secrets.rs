//! Precision of the secret rules on the real corpus (`$TRACEBOOK_CORPUS`, every harness): no
//! git SHA, hash, UUID, integrity string, tool or message id, or code identifier is taken for
//! a secret. Every find is counted and the first ones printed, as
//! `cargo run --example redactions -- --show` lists them all.

use regex::Regex;
use serde_json::Value as Json;

use tracebook::adapters::AdapterSet;
use tracebook::privacy::rules::{ENGINE, plausible_value};
use tracebook::privacy::secrets::is_secret_key;

/// What the privacy stage would redact in one value: `(rule, secret)` pairs.
fn finds(v: &Json, out: &mut Vec<(String, String)>) {
    match v {
        Json::String(s) => {
            for f in ENGINE.find(s, false) {
                out.push((
                    ENGINE.rules()[f.rule].spec.id.clone(),
                    s[f.start..f.end].to_owned(),
                ));
            }
        }
        Json::Array(a) => a.iter().for_each(|x| finds(x, out)),
        Json::Object(m) => {
            for (k, x) in m {
                if let Json::String(s) = x
                    && is_secret_key(k)
                    && plausible_value(s)
                {
                    out.push((format!("secret-json-key ({k})"), s.clone()));
                    continue;
                }
                finds(&Json::String(k.clone()), out);
                finds(x, out);
            }
        }
        _ => {}
    }
}

#[test]
fn the_corpus_keeps_every_sha_uuid_hash_id_and_identifier() -> anyhow::Result<()> {
    let set = AdapterSet::load(None)?;
    let identifier = Regex::new(concat!(
        r"^(?:[0-9a-fA-F]{7,64}", // git SHAs, hashes
        r"|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}", // UUIDs
        r"|sha(?:1|256|384|512)-[A-Za-z0-9+/=]+", // integrity strings
        r"|(?:toolu|call|msg|req|fc|resp|ses|prt|chatcmpl)_[A-Za-z0-9_]+", // tool and message ids
        r"|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+", // camelCase identifiers
        r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", // member access
        r")$"
    ))?;
    let (mut inputs, mut all) = (0, Vec::new());
    for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
        let Some(dir) = crate::corpus::corpus(harness) else {
            return Ok(());
        };
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            let Ok(loaded) =
                tracebook::adapters::input::load_session(&path, &set, Some(harness), None)
            else {
                continue;
            };
            inputs += 1;
            let mut found = Vec::new();
            finds(&serde_json::to_value(&loaded.session)?, &mut found);
            all.extend(
                found
                    .into_iter()
                    .map(|(rule, secret)| (path.display().to_string(), rule, secret)),
            );
        }
    }
    eprintln!(
        "corpus: {} redactions in {inputs} inputs (none is a real secret: the corpus is public)",
        all.len()
    );
    for (path, rule, secret) in all.iter().take(30) {
        eprintln!("  [{rule}] {secret:?} in {path}");
    }
    let wrong: Vec<String> = all
        .iter()
        .filter(|(_, _, secret)| identifier.is_match(secret))
        .map(|(path, rule, secret)| format!("[{rule}] {secret:?} in {path}"))
        .collect();
    assert!(inputs > 30, "only {inputs} corpus inputs read");
    assert!(
        wrong.is_empty(),
        "identifiers taken for secrets:\n{}",
        wrong.join("\n")
    );
    Ok(())
}

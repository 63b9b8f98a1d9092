//! Lists what the secret rules redact in session logs, to measure precision on real logs.
//! Each input is read the way `tracebook render` reads it (any harness, files and folders), and
//! every string of the canonical session is scanned as the privacy stage scans it: the rules
//! over each text, and the value of each secret-named key of a tool input's JSON.
//!
//! ```sh
//! cargo run --release --example redactions -- $TRACEBOOK_CORPUS/*/*      # counts per input and rule
//! cargo run --release --example redactions -- --show $TRACEBOOK_CORPUS/*/* # each find in context
//! ```
//! `--show` prints the secrets themselves: read it on your own machine, never attach it.

// A measuring tool: its report is what it prints.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::Path;

use tracebook::adapters::AdapterSet;
use tracebook::privacy::rules::ENGINE;
use tracebook::privacy::secrets::is_secret_key;

/// One redaction: the rule, the secret and the text around it.
struct Redaction {
    rule: String,
    secret: String,
    context: String,
}

fn context(text: &str, start: usize, end: usize) -> String {
    let mut lo = start.saturating_sub(40);
    while !text.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (end + 20).min(text.len());
    while !text.is_char_boundary(hi) {
        hi += 1;
    }
    text[lo..hi].replace('\n', "⏎")
}

fn walk(v: &serde_json::Value, out: &mut Vec<Redaction>) {
    match v {
        serde_json::Value::String(s) => {
            for f in ENGINE.find(s, false) {
                out.push(Redaction {
                    rule: ENGINE.rules()[f.rule].spec.id.clone(),
                    secret: s[f.start..f.end].to_owned(),
                    context: context(s, f.start, f.end),
                });
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                if let serde_json::Value::String(s) = x
                    && is_secret_key(k)
                    && tracebook::privacy::rules::plausible_value(s)
                {
                    out.push(Redaction {
                        rule: "secret-json-key (bound)".into(),
                        secret: s.clone(),
                        context: format!("\"{k}\": \"{}\"", context(s, 0, s.len())),
                    });
                    continue;
                }
                walk(&serde_json::Value::String(k.clone()), out);
                walk(x, out);
            }
        }
        _ => {}
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "--show");
    let Ok(set) = AdapterSet::load(None) else {
        eprintln!("the built-in adapters do not load");
        std::process::exit(2);
    };
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    let mut inputs = 0;
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        let loaded =
            match tracebook::adapters::input::load_session(Path::new(path), &set, None, None) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("{path}: skipped: {e}");
                    continue;
                }
            };
        inputs += 1;
        let mut found = Vec::new();
        match serde_json::to_value(&loaded.session) {
            Ok(v) => walk(&v, &mut found),
            Err(e) => eprintln!("{path}: cannot serialize: {e}"),
        }
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for r in &found {
            *per.entry(r.rule.clone()).or_default() += 1;
            *total.entry(r.rule.clone()).or_default() += 1;
            if show {
                println!("  [{}] {:?} in {}", r.rule, r.secret, r.context);
            }
        }
        println!("{:5}  {path}  {per:?}", found.len());
    }
    let n: usize = total.values().sum();
    println!("total {n} redactions in {inputs} inputs: {total:?}");
}

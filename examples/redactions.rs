//! Counts what the secret rules redact in session logs, per file and per rule, to measure
//! precision on real logs. Every line is decoded as JSON and every string (keys and values)
//! is scanned, as the privacy stage does.
//!
//! ```sh
//! cargo run --release --example redactions -- $TRACEBOOK_CORPUS/*/*.json*
//! cargo run --release --example redactions -- --show FILE   # each find with its context
//! ```
//! `--show` prints the secrets themselves: read it on your own machine, never attach it.

// A measuring tool: its report is what it prints.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use tracebook::privacy::rules::ENGINE;

fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                out.push(k.clone());
                strings(x, out);
            }
        }
        _ => {}
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let show = args.iter().any(|a| a == "--show");
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    let mut files = 0;
    for path in args.iter().filter(|a| *a != "--show") {
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("{path}: not readable as UTF-8, skipped");
            continue;
        };
        files += 1;
        let mut texts = Vec::new();
        let whole: Option<serde_json::Value> = serde_json::from_str(&text).ok();
        match whole {
            Some(v) => strings(&v, &mut texts),
            None => {
                for line in text.lines() {
                    match serde_json::from_str::<serde_json::Value>(line) {
                        Ok(v) => strings(&v, &mut texts),
                        Err(_) => texts.push(line.to_owned()),
                    }
                }
            }
        }
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for t in &texts {
            for f in ENGINE.find(t, false) {
                let id = ENGINE.rules()[f.rule].spec.id.clone();
                *per.entry(id.clone()).or_default() += 1;
                *total.entry(id.clone()).or_default() += 1;
                if show {
                    let mut lo = f.start.saturating_sub(40);
                    while !t.is_char_boundary(lo) {
                        lo -= 1;
                    }
                    let mut hi = (f.end + 20).min(t.len());
                    while !t.is_char_boundary(hi) {
                        hi += 1;
                    }
                    let ctx = t[lo..hi].replace('\n', "⏎");
                    println!("  [{id}] {ctx}");
                }
            }
        }
        let n: usize = per.values().sum();
        println!("{n:5}  {path}  {per:?}");
    }
    let n: usize = total.values().sum();
    println!("total {n} redactions in {files} files: {total:?}");
}

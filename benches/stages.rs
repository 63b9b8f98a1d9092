//! Throughput of each stage on a generated Claude Code session: parse (adapters → events),
//! privacy (redaction), projection, report (projection → report model) and render (report
//! model → HTML). Throughput is counted in
//! bytes of the input log, so the figures add up to the end-to-end rate.
//!
//! The session comes from the shared generator (`gen-claude-session.py --turns 20 --seed 42`),
//! found through `TRACEBOOK_GEN_CLAUDE` or at `../shared/tools/` beside the crate. Without it
//! the benchmark says why and does nothing.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, Throughput};
use tracebook::adapters::AdapterSet;
use tracebook::adapters::input::load_session;
use tracebook::privacy::{self, Options, Policy};
use tracebook::report::{self, RunInfo};
use tracebook::{projection, render};

fn generator() -> PathBuf {
    std::env::var_os("TRACEBOOK_GEN_CLAUDE").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/gen-claude-session.py"),
        PathBuf::from,
    )
}

/// Writes the generated session into `dir`, or says why it cannot.
fn generate(dir: &Path) -> Result<PathBuf, String> {
    let script = generator();
    if !script.is_file() {
        return Err(format!(
            "no session generator at {} (set TRACEBOOK_GEN_CLAUDE to gen-claude-session.py)",
            script.display()
        ));
    }
    let out = dir.join("session.jsonl");
    let status = Command::new("python3")
        .arg(&script)
        .args(["--turns", "20", "--seed", "42", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run python3 {}: {e}", script.display()))?;
    if !status.success() {
        return Err(format!("{} failed: {status}", script.display()));
    }
    Ok(out)
}

fn run_info() -> RunInfo {
    RunInfo {
        generated_at: "2026-01-01T00:00:00Z".into(),
        tool_version: "bench".into(),
        harness_label: "Claude Code".into(),
    }
}

fn stages(c: &mut Criterion, input: &Path) -> anyhow::Result<()> {
    let bytes = std::fs::metadata(input)?.len();
    let set = AdapterSet::load(None)?;
    let loaded = load_session(input, &set, None, None)?;
    let options = Options::default();
    let policy = Policy::new(&loaded.session, &options);
    let redacted = privacy::apply(loaded.session.clone(), &policy);
    let projected = projection::project(&mut redacted.clone());
    let built = report::build(
        &redacted,
        projected.clone(),
        &run_info(),
        &loaded.skipped,
        &[],
    );

    let mut group = c.benchmark_group("stages");
    group.throughput(Throughput::Bytes(bytes));
    group.sample_size(20);
    group.bench_function("parse", |b| {
        b.iter(|| load_session(black_box(input), &set, None, None).map(|l| l.session.events.len()))
    });
    group.bench_function("privacy", |b| {
        b.iter_batched(
            || loaded.session.clone(),
            |session| {
                let policy = Policy::new(&session, &options);
                privacy::apply(session, &policy)
            },
            criterion::BatchSize::LargeInput,
        )
    });
    group.bench_function("projection", |b| {
        b.iter_batched(
            || redacted.clone(),
            |mut session| projection::project(&mut session),
            criterion::BatchSize::LargeInput,
        )
    });
    group.bench_function("report", |b| {
        b.iter_batched(
            || projected.clone(),
            |p| report::build(&redacted, p, &run_info(), &loaded.skipped, &[]),
            criterion::BatchSize::LargeInput,
        )
    });
    group.bench_function("render", |b| {
        b.iter(|| render::html(black_box(&built)).map(|h| h.len()))
    });
    group.bench_function("backstop", |b| {
        b.iter_batched(
            || {
                render::notebook(
                    built.clone(),
                    render::Storage::default(),
                    tracebook::privacy::secrets::backstop,
                )
            },
            |page| page.map(|mut p| p.final_scan()),
            criterion::BatchSize::LargeInput,
        )
    });
    group.finish();
    Ok(())
}

fn main() {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("stages: no temporary folder: {e}");
            return;
        }
    };
    let input = match generate(dir.path()) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("stages: skipped: {why}");
            return;
        }
    };
    let mut c = Criterion::default().configure_from_args();
    if let Err(e) = stages(&mut c, &input) {
        eprintln!("stages: {e:#}");
        return;
    }
    c.final_summary();
}

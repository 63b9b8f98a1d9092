//! Conformance with the real harness releases: every capture under `tests/fixtures/captured/`
//! (sessions written by a pinned release against the scripted mock of `scripts/capture/`) is
//! read through the binary, each output form on its own, and compared with its scenario's
//! expectation, which comes from how the scenario was built (which call was scripted to fail,
//! how many prompts were sent, which turn was killed), never from what tracebook printed.
//!
//! A scenario's `known_gaps` lists the mismatches tracebook has today. Any other mismatch fails
//! the test, and so does a listed gap that is no longer there: the list is always true, and a fix
//! removes its entry. A form with no warnings expected must also render with `--strict`.
//! `TRACEBOOK_SHOW_GAPS=1` prints what each known gap reads today.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value as Json;

use tracebook::events::ToolStatus;
use tracebook::projection::ResponseStatus;
use tracebook::report::model::{Report, StepView, ToolCallView, TurnView};

use crate::{fixtures, tracebook};

/// Keys of a scenario that say what to expect; the rest is the script the rig followed.
const EXPECTATION_KEYS: &[&str] = &["about", "expect", "forms", "known_gaps"];

fn rig() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/capture")
}

fn captured() -> PathBuf {
    fixtures().join("captured")
}

/// What a correct reading of a capture is.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// Warnings the reading may have: none for a normal session.
    #[serde(default)]
    warnings: usize,
    turns: Vec<TurnExpect>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnExpect {
    /// Every tool call of the turn, in order.
    #[serde(default)]
    calls: Vec<CallExpect>,
    /// `complete` or `incomplete`.
    #[serde(default = "complete")]
    response: String,
    /// The category the turn's failure line names; absent: no failure line.
    #[serde(default)]
    failure: Option<String>,
    /// How many interrupt steps the turn shows.
    #[serde(default)]
    interrupt: usize,
    /// How many compaction steps the turn shows.
    #[serde(default)]
    compaction: usize,
    /// Texts that occur somewhere in the turn (a mid-turn message, a notice).
    #[serde(default)]
    texts: Vec<String>,
}

fn complete() -> String {
    "complete".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum CallExpect {
    /// `ok`, `error` or `unknown`.
    Status(String),
    /// Calls of one reply that the harness may run, and so record, in any order.
    Parallel(Vec<String>),
    /// A call and the subagent it started.
    Full {
        status: String,
        #[serde(default)]
        subagent: Option<SubagentExpect>,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SubagentExpect {
    turns: Vec<TurnExpect>,
}

/// What one output form of a capture reads as where it cannot carry the whole truth.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FormExpect {
    #[serde(default)]
    turns: Option<Vec<TurnExpect>>,
    #[serde(default)]
    warnings: Option<usize>,
    /// What the form does not carry, and so why it reads differently.
    why: String,
}

/// A mismatch tracebook has today.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Gap {
    form: String,
    at: String,
    what: String,
    /// Which fix removes it.
    why: String,
}

#[derive(Debug)]
struct Scenario {
    expect: Expect,
    forms: BTreeMap<String, FormExpect>,
    known_gaps: Vec<Gap>,
    script: Json,
}

fn load_scenario(path: &Path) -> anyhow::Result<Scenario> {
    let mut all: serde_json::Map<String, Json> = serde_json::from_slice(&std::fs::read(path)?)?;
    let mut take = |k: &str| all.remove(k).unwrap_or(Json::Null);
    let expect = serde_json::from_value(take("expect"))?;
    let forms = match take("forms") {
        Json::Null => BTreeMap::new(),
        v => serde_json::from_value(v)?,
    };
    let known_gaps = match take("known_gaps") {
        Json::Null => Vec::new(),
        v => serde_json::from_value(v)?,
    };
    for k in EXPECTATION_KEYS {
        all.remove(*k);
    }
    Ok(Scenario {
        expect,
        forms,
        known_gaps,
        script: Json::Object(all),
    })
}

/// One output form as the capture lists it in `capture.json`.
#[derive(Debug, Deserialize)]
struct Form {
    form: String,
    path: String,
    /// `"all"` or the 1-based turns of the scenario the form holds.
    turns: Json,
    /// Whether the form records the prompt text at all.
    prompts: bool,
}

#[derive(Debug, Deserialize)]
struct Capture {
    harness: String,
    version: String,
    scenario: String,
    forms: Vec<Form>,
    script: Json,
}

/// One mismatch: where it is (`t2.calls`) and what was read.
struct Mismatch {
    at: String,
    detail: String,
}

fn status_word(s: ToolStatus) -> &'static str {
    match s {
        ToolStatus::Ok => "ok",
        ToolStatus::Error => "error",
        ToolStatus::Unknown => "unknown",
    }
}

fn calls_of(turn: &TurnView) -> Vec<&ToolCallView> {
    turn.steps
        .iter()
        .filter_map(|s| match s {
            StepView::ToolCall(c) => Some(&**c),
            _ => None,
        })
        .collect()
}

/// The category a failure line names (`…; category: rate_limit; …`).
fn category(line: &str) -> Option<&str> {
    let rest = line.split("category: ").nth(1)?;
    rest.split([';', ')']).next().map(str::trim)
}

/// Compares the calls of one turn; `at` is the turn's place (`t2`, `t1.sub1.t1`).
fn compare_calls(
    at: &str,
    expected: &[CallExpect],
    read: &[&ToolCallView],
    out: &mut Vec<Mismatch>,
) {
    let read_words: Vec<&str> = read.iter().map(|c| status_word(c.status)).collect();
    let mut flat: Vec<String> = Vec::new();
    for e in expected {
        match e {
            CallExpect::Status(s) | CallExpect::Full { status: s, .. } => flat.push(s.clone()),
            CallExpect::Parallel(g) => flat.extend(g.iter().cloned()),
        }
    }
    let mut ok = flat.len() == read.len();
    let mut i = 0;
    let mut subagents: Vec<(usize, Option<&SubagentExpect>)> = Vec::new();
    for e in expected {
        if !ok {
            break;
        }
        match e {
            CallExpect::Status(s) => {
                ok &= read_words[i] == s;
                subagents.push((i, None));
                i += 1;
            }
            CallExpect::Full { status, subagent } => {
                ok &= read_words[i] == status;
                subagents.push((i, subagent.as_ref()));
                i += 1;
            }
            CallExpect::Parallel(g) => {
                let mut want: Vec<&str> = g.iter().map(String::as_str).collect();
                let mut got: Vec<&str> = read_words[i..i + g.len()].to_vec();
                want.sort_unstable();
                got.sort_unstable();
                ok &= want == got;
                for k in i..i + g.len() {
                    subagents.push((k, None));
                }
                i += g.len();
            }
        }
    }
    if !ok {
        out.push(Mismatch {
            at: format!("{at}.calls"),
            detail: format!(
                "expected {flat:?}, read {:?}",
                read.iter()
                    .map(|c| format!("{} {}", c.name, status_word(c.status)))
                    .collect::<Vec<_>>()
            ),
        });
        return;
    }
    for (k, want) in subagents {
        let got = read[k].subagent.as_ref();
        match (want, got) {
            (None, None) => {}
            (None, Some(s)) => out.push(Mismatch {
                at: format!("{at}.subagent"),
                detail: format!(
                    "call {} ({}) has a subagent with {} turn(s); none expected",
                    k + 1,
                    read[k].name,
                    s.turns.len()
                ),
            }),
            (Some(_), None) => out.push(Mismatch {
                at: format!("{at}.subagent"),
                detail: format!("call {} ({}) has no subagent nested", k + 1, read[k].name),
            }),
            (Some(w), Some(s)) => {
                compare_turns(&format!("{at}.sub{}", k + 1), &w.turns, &s.turns, None, out)
            }
        }
    }
}

/// Compares turns; `prompts` is the prompt text each turn must show (`None` inside a
/// subagent, where it is not checked; `Some(None)` for a form that records no prompt).
fn compare_turns(
    at: &str,
    expected: &[TurnExpect],
    read: &[TurnView],
    prompts: Option<&[Option<String>]>,
    out: &mut Vec<Mismatch>,
) {
    let sep = if at.is_empty() { "" } else { "." };
    if expected.len() != read.len() {
        out.push(Mismatch {
            at: format!("{at}{sep}turns"),
            detail: format!(
                "expected {} turn(s), read {}: {:?}",
                expected.len(),
                read.len(),
                read.iter()
                    .map(|t| t
                        .prompt
                        .as_ref()
                        .map(|p| p.text.chars().take(40).collect::<String>()))
                    .collect::<Vec<_>>()
            ),
        });
        return;
    }
    for (n, (want, got)) in expected.iter().zip(read).enumerate() {
        let t = format!("{at}{sep}t{}", n + 1);
        if let Some(prompts) = prompts {
            let want_prompt = prompts.get(n).cloned().flatten();
            let got_prompt = got.prompt.as_ref().map(|p| p.text.trim().to_owned());
            if want_prompt != got_prompt {
                out.push(Mismatch {
                    at: format!("{t}.prompt"),
                    detail: format!("expected {want_prompt:?}, read {got_prompt:?}"),
                });
            }
        }
        compare_calls(&t, &want.calls, &calls_of(got), out);
        let response = match got.response_status {
            ResponseStatus::Complete => "complete",
            ResponseStatus::Incomplete => "incomplete",
        };
        if response != want.response {
            out.push(Mismatch {
                at: format!("{t}.response"),
                detail: format!("expected {}, read {response}", want.response),
            });
        }
        let got_failure = got.failure.as_deref().map(|f| category(f).unwrap_or(f));
        if want.failure.as_deref() != got_failure {
            out.push(Mismatch {
                at: format!("{t}.failure"),
                detail: format!(
                    "expected category {:?}, read {:?}",
                    want.failure, got.failure
                ),
            });
        }
        let count = |f: fn(&StepView) -> bool| got.steps.iter().filter(|s| f(s)).count();
        let interrupts = count(|s| matches!(s, StepView::Interrupt { .. }));
        if interrupts != want.interrupt {
            out.push(Mismatch {
                at: format!("{t}.interrupt"),
                detail: format!(
                    "expected {} interrupt step(s), read {interrupts}",
                    want.interrupt
                ),
            });
        }
        let compactions = count(|s| matches!(s, StepView::Compaction { .. }));
        if compactions != want.compaction {
            out.push(Mismatch {
                at: format!("{t}.compaction"),
                detail: format!(
                    "expected {} compaction step(s), read {compactions}",
                    want.compaction
                ),
            });
        }
        if !want.texts.is_empty() {
            let json = serde_json::to_string(got).unwrap_or_default();
            for text in &want.texts {
                if !json.contains(text.as_str()) {
                    out.push(Mismatch {
                        at: format!("{t}.texts"),
                        detail: format!("{text:?} is not in the turn"),
                    });
                }
            }
        }
    }
}

/// The turns of the scenario a form holds.
fn select<T: Clone>(all: &[T], turns: &Json) -> Vec<T> {
    match turns {
        Json::Array(ns) => ns
            .iter()
            .filter_map(|n| n.as_u64())
            .filter_map(|n| all.get((n as usize).checked_sub(1)?).cloned())
            .collect(),
        _ => all.to_vec(),
    }
}

/// Reads one form through the binary and lists every mismatch with the expectation.
fn check_form(
    dir: &Path,
    capture: &Capture,
    scenario: &Scenario,
    form: &Form,
) -> anyhow::Result<Vec<Mismatch>> {
    let mut out = Vec::new();
    let input = dir.join(&form.path);
    let run = tracebook()
        .arg("render")
        .arg(&input)
        .args(["--format", "json", "-o", "-", "-q"])
        .output()?;
    if !run.status.success() {
        out.push(Mismatch {
            at: "read".into(),
            detail: format!(
                "exit {:?}: {}",
                run.status.code(),
                String::from_utf8_lossy(&run.stderr).trim()
            ),
        });
        return Ok(out);
    }
    let report: Report = serde_json::from_slice(&run.stdout)?;
    if report.session.harness != capture.harness {
        out.push(Mismatch {
            at: "harness".into(),
            detail: format!("read as {}", report.session.harness),
        });
    }
    let own = scenario.forms.get(&form.form);
    let script_prompts: Vec<Option<String>> = scenario.script["turns"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| t["prompt"].as_str().map(|p| p.trim().to_owned()))
                .collect()
        })
        .unwrap_or_default();
    let prompts: Vec<Option<String>> = if form.prompts {
        select(&script_prompts, &form.turns)
    } else {
        vec![None; script_prompts.len()]
    };
    let expected = match own.and_then(|f| f.turns.clone()) {
        Some(t) => t,
        None => select(&scenario.expect.turns, &form.turns),
    };
    compare_turns("", &expected, &report.turns, Some(&prompts), &mut out);
    if !report.unlinked_subagents.is_empty() {
        out.push(Mismatch {
            at: "unlinked".into(),
            detail: format!(
                "{} subagent(s) no call started",
                report.unlinked_subagents.len()
            ),
        });
    }
    let warnings = own
        .and_then(|f| f.warnings)
        .unwrap_or(scenario.expect.warnings);
    if report.warnings.len() != warnings {
        out.push(Mismatch {
            at: "warnings".into(),
            detail: format!(
                "expected {warnings}, read {}: {:?}",
                report.warnings.len(),
                report
                    .warnings
                    .iter()
                    .map(|w| w.message.as_str())
                    .collect::<Vec<_>>()
            ),
        });
    }
    if warnings == 0 {
        let strict = tracebook()
            .arg("render")
            .arg(&input)
            .args(["--format", "json", "-o", "-", "-q", "--strict"])
            .output()?;
        if !strict.status.success() {
            out.push(Mismatch {
                at: "strict".into(),
                detail: format!("render --strict exits {:?}", strict.status.code()),
            });
        }
    }
    Ok(out)
}

/// Every capture folder: `captured/<harness>-<version>/<scenario>/`.
fn capture_dirs() -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for release in std::fs::read_dir(captured())? {
        let release = release?.path();
        if !release.is_dir() {
            continue;
        }
        for scenario in std::fs::read_dir(&release)? {
            let scenario = scenario?.path();
            if scenario.join("capture.json").is_file() {
                out.push(scenario);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What checking one capture found: mismatches (and stale gaps), forms read, its harness.
struct Checked {
    failures: Vec<String>,
    forms: usize,
    harness: String,
}

/// Reads every form of one capture and compares it with its scenario.
fn check_capture(dir: &Path) -> anyhow::Result<Checked> {
    let name = dir.strip_prefix(captured())?.display().to_string();
    let capture: Capture = serde_json::from_slice(&std::fs::read(dir.join("capture.json"))?)?;
    let mut failures = Vec::new();
    let release = format!("{}-{}", capture.harness, capture.version);
    if dir.parent().and_then(|p| p.file_name()) != Some(std::ffi::OsStr::new(&release)) {
        failures.push(format!("{name}: capture.json says {release}"));
    }
    let path = rig()
        .join("scenarios")
        .join(&capture.harness)
        .join(format!("{}.json", capture.scenario));
    let scenario = load_scenario(&path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut checked = Checked {
        failures: Vec::new(),
        forms: 0,
        harness: capture.harness.clone(),
    };
    if scenario.script != capture.script {
        failures.push(format!(
            "{name}: the scenario's script changed since it was captured; re-capture it \
             (python3 scripts/capture/capture.py --harness {} --scenario {})",
            capture.harness, capture.scenario
        ));
        checked.failures = failures;
        return Ok(checked);
    }
    for (form, own) in &scenario.forms {
        if own.why.trim().is_empty() {
            failures.push(format!("{name}: `forms.{form}` does not say why"));
        }
    }
    for gap in &scenario.known_gaps {
        if gap.what.trim().is_empty() || gap.why.trim().is_empty() {
            failures.push(format!(
                "{name}: the known gap at {} {} does not say what and why",
                gap.form, gap.at
            ));
        }
    }
    let names: BTreeSet<&str> = capture.forms.iter().map(|f| f.form.as_str()).collect();
    for form in scenario.forms.keys() {
        if !names.contains(form.as_str()) {
            failures.push(format!(
                "{name}: `forms` names {form}, which the capture lacks"
            ));
        }
    }
    let mut gaps_seen = vec![false; scenario.known_gaps.len()];
    for form in &capture.forms {
        let mismatches = check_form(dir, &capture, &scenario, form)?;
        checked.forms += 1;
        for m in mismatches {
            let gap = scenario
                .known_gaps
                .iter()
                .position(|g| g.form == form.form && g.at == m.at);
            match gap {
                Some(i) => {
                    gaps_seen[i] = true;
                    if std::env::var_os("TRACEBOOK_SHOW_GAPS").is_some() {
                        eprintln!("known gap: {name} {}: {}: {}", form.form, m.at, m.detail);
                    }
                }
                None => failures.push(format!("{name} {}: {}: {}", form.form, m.at, m.detail)),
            }
        }
    }
    for (gap, seen) in scenario.known_gaps.iter().zip(gaps_seen) {
        if !seen {
            failures.push(format!(
                "{name} {}: known gap at {} is no longer there ({}): remove it from {}",
                gap.form,
                gap.at,
                gap.what,
                path.display()
            ));
        }
    }
    checked.failures = failures;
    Ok(checked)
}

#[test]
fn every_capture_reads_as_its_scenario_says() -> anyhow::Result<()> {
    let dirs = capture_dirs()?;
    // Captures are checked on every core, each by one worker; the report keeps their order.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<anyhow::Result<Checked>>>> =
        std::sync::Mutex::new(dirs.iter().map(|_| None).collect());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(8));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(dir) = dirs.get(i) else { break };
                    let result = check_capture(dir);
                    results.lock().expect("no worker panicked")[i] = Some(result);
                }
            });
        }
    });
    let mut failures: Vec<String> = Vec::new();
    let mut checked = 0;
    let mut harnesses = BTreeSet::new();
    for result in results.into_inner().expect("no worker panicked") {
        let result = result.expect("every capture was checked")?;
        failures.extend(result.failures);
        checked += result.forms;
        harnesses.insert(result.harness);
    }
    assert!(
        checked >= 40,
        "only {checked} capture forms were checked; are the captures there?"
    );
    assert_eq!(
        harnesses.len(),
        4,
        "captures of every harness are checked: {harnesses:?}"
    );
    assert!(
        failures.is_empty(),
        "{} mismatch(es) with the scenarios (a gap another fix will remove goes in the \
         scenario's known_gaps):\n{}",
        failures.len(),
        failures.join("\n")
    );
    Ok(())
}

/// Every scenario has a capture of the pinned release, and the manifest names the pinned
/// releases.
#[test]
fn every_scenario_is_captured_with_the_pinned_release() -> anyhow::Result<()> {
    let manifest: Json = serde_json::from_slice(&std::fs::read(captured().join("MANIFEST.json"))?)?;
    let versions: Json = serde_json::from_slice(&std::fs::read(rig().join("versions.json"))?)?;
    let mut missing = Vec::new();
    for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
        let pinned = versions[harness]["version"]
            .as_str()
            .unwrap_or_default()
            .replace("-{platform}", "");
        assert_eq!(
            manifest["pinned"][harness].as_str(),
            Some(pinned.as_str()),
            "MANIFEST.json names the pinned {harness} release"
        );
        let mut names: Vec<String> = std::fs::read_dir(rig().join("scenarios").join(harness))?
            .filter_map(Result::ok)
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(|n| n.strip_suffix(".json"))
                    .map(str::to_owned)
            })
            .collect();
        names.sort();
        assert!(!names.is_empty(), "{harness} has scenarios");
        for name in names {
            let dir = captured().join(format!("{harness}-{pinned}")).join(&name);
            if !dir.join("capture.json").is_file() {
                missing.push(format!("{harness}/{name}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "scenarios without a capture of the pinned release (run scripts/capture/capture.py): {missing:?}"
    );
    Ok(())
}

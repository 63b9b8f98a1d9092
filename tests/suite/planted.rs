//! Planted secrets: a secret or a user path written into any string of any harness's
//! log, one string at a time, never reaches the HTML or the JSON report.
//!
//! The fixtures under `tests/fixtures/<harness>/` give the shape. For every string value of a
//! fixture (strings holding JSON, such as Codex's `arguments`, are opened and planted inside),
//! the test writes a copy with a secret appended to that one string and renders it through the
//! library. Where the canonical session carries the planted text (the proof the field is read
//! at all), the report must not. Every harness must have carried a planted secret in its
//! prompts, assistant text, tool inputs and tool outputs, and, where its fixtures have them,
//! subagents; failure records are covered by `failures.rs`.

use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use tracebook::adapters::AdapterSet;
use tracebook::events::{EventKind, Session};

use crate::fixtures;

/// The `n`-th planted secret: several shapes a log carries, each with a unique core that is
/// what must never appear in output.
fn secret(n: usize) -> (String, String) {
    let letters: String = format!("{n:06}")
        .bytes()
        .map(|b| char::from(b'A' + (b - b'0')))
        .collect();
    match n % 8 {
        0 => {
            let t = format!("ghp_PlNt{n:06}aB3dE5gH7jK9mN1pQ3sT5vW7yZ");
            (t.clone(), t)
        }
        1 => {
            let t = format!("sk-ant-api03-PlNt{n:06}xY9zW8vU7tS6rQ5pO4nM3");
            (format!("ANTHROPIC_API_KEY={t}"), t)
        }
        2 => {
            let t = format!("AKIAPLNT{letters}QRST");
            (format!("aws_access_key_id = {t}"), t)
        }
        3 => {
            let t = format!("PlNtpw{n:06}");
            (format!("export DB_PASSWORD={t}"), t)
        }
        4 => {
            let t = format!("PlNtcs{n:06}");
            (format!("{{\"client_secret\": \"{t}\"}}"), t)
        }
        5 => {
            let t = format!("PlNtdb{n:06}");
            (format!("postgres://app:{t}@db.internal:5432/x"), t)
        }
        6 => {
            let t = format!("PlNtbr{n:06}abcdef");
            (
                format!("curl -H 'Authorization: Bearer {t}' https://api"),
                t,
            )
        }
        _ => {
            let t = format!("plntuser{n:06}");
            (format!("/Users/{t}/notes/plan.md"), t)
        }
    }
}

/// One file of a fixture: JSON Lines (lines that are not JSON stay as they are) or one JSON
/// document.
#[derive(Clone)]
enum Doc {
    Lines(Vec<Result<Value, String>>),
    One(Value),
}

impl Doc {
    fn read(path: &Path) -> anyhow::Result<Self> {
        // A fixture of broken input may hold invalid UTF-8: planted copies carry U+FFFD there.
        let text = String::from_utf8_lossy(&fs::read(path)?).into_owned();
        Ok(if path.extension().is_some_and(|e| e == "jsonl") {
            Doc::Lines(
                text.lines()
                    .map(|l| serde_json::from_str(l).map_err(|_| l.to_owned()))
                    .collect(),
            )
        } else {
            Doc::One(serde_json::from_str(&text)?)
        })
    }

    fn text(&self) -> String {
        match self {
            Doc::One(v) => v.to_string(),
            Doc::Lines(lines) => {
                let mut out: String = lines
                    .iter()
                    .map(|l| match l {
                        Ok(v) => v.to_string(),
                        Err(raw) => raw.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                out.push('\n');
                out
            }
        }
    }

    /// Appends `with` to the string leaf number `target` (depth first, counted by `seen`);
    /// true when it was in this document.
    fn plant(&mut self, target: usize, seen: &mut usize, with: &str) -> bool {
        match self {
            Doc::One(v) => plant(v, target, seen, with),
            Doc::Lines(lines) => lines
                .iter_mut()
                .filter_map(|l| l.as_mut().ok())
                .any(|v| plant(v, target, seen, with)),
        }
    }
}

fn plant(v: &mut Value, target: usize, seen: &mut usize, with: &str) -> bool {
    match v {
        Value::String(s) => {
            if let Ok(mut inner @ (Value::Object(_) | Value::Array(_))) =
                serde_json::from_str::<Value>(s)
            {
                if plant(&mut inner, target, seen, with) {
                    *s = inner.to_string();
                    return true;
                }
                return false;
            }
            let hit = *seen == target;
            *seen += 1;
            if hit {
                s.push(' ');
                s.push_str(with);
            }
            hit
        }
        Value::Array(items) => items.iter_mut().any(|i| plant(i, target, seen, with)),
        Value::Object(map) => map.values_mut().any(|i| plant(i, target, seen, with)),
        _ => false,
    }
}

/// A fixture: the path given to tracebook (a file or a storage tree) and its JSON files.
struct Case {
    harness: String,
    input: PathBuf,
    files: Vec<PathBuf>,
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)?.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            json_files(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "json" || e == "jsonl") {
            out.push(p);
        }
    }
    Ok(())
}

/// Every session fixture of the four harnesses (the SQLite one holds the same records as the
/// storage tree, as SQL).
fn cases() -> anyhow::Result<Vec<Case>> {
    let mut out = Vec::new();
    for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
        let mut dirs: Vec<PathBuf> = fs::read_dir(fixtures().join(harness))?
            .flatten()
            .map(|e| e.path())
            .collect();
        dirs.sort();
        for case in dirs {
            let tree = case.join("tree");
            if tree.is_dir() {
                let mut files = Vec::new();
                json_files(&tree, &mut files)?;
                out.push(Case {
                    harness: harness.into(),
                    input: tree,
                    files,
                });
                continue;
            }
            for name in ["session.jsonl", "session.json"] {
                let f = case.join(name);
                if f.is_file() {
                    // Files beside the session (a Claude Code session's subagent logs) too.
                    let mut files = Vec::new();
                    json_files(&case, &mut files)?;
                    out.push(Case {
                        harness: harness.into(),
                        input: f,
                        files,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// Where a planted text landed in the canonical session.
fn landed(session: &Session, t: &str, out: &mut BTreeSet<&'static str>) {
    for e in &session.events {
        match &e.kind {
            EventKind::Prompt { text } if text.contains(t) => {
                out.insert("prompt");
            }
            EventKind::Assistant { text } if text.contains(t) => {
                out.insert("assistant");
            }
            EventKind::Thinking { text: Some(text) } if text.contains(t) => {
                out.insert("thinking");
            }
            EventKind::ToolCall(c) => {
                if c.input.to_string().contains(t)
                    || c.command.as_deref().is_some_and(|x| x.contains(t))
                {
                    out.insert("tool input");
                }
                if let Some(r) = &c.result
                    && (r.output.contains(t) || r.patch.as_deref().is_some_and(|x| x.contains(t)))
                {
                    out.insert("tool output");
                }
            }
            _ => {}
        }
    }
    for sub in &session.subagents {
        if serde_json::to_string(&sub.session)
            .unwrap_or_default()
            .contains(t)
        {
            out.insert("subagent");
        }
    }
}

/// Copies a fixture into `to`, the same relative layout.
fn copy_case(case: &Case, to: &Path) -> anyhow::Result<PathBuf> {
    let base = if case.input.is_dir() {
        case.input.clone()
    } else {
        case.input
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    };
    for f in &case.files {
        let dest = to.join(f.strip_prefix(&base)?);
        if let Some(p) = dest.parent() {
            fs::create_dir_all(p)?;
        }
        fs::copy(f, dest)?;
    }
    Ok(to.join(case.input.strip_prefix(&base)?))
}

#[test]
fn a_secret_planted_in_any_field_of_any_harness_never_reaches_output() -> anyhow::Result<()> {
    let set = AdapterSet::load(None)?;
    let mut n = 0;
    let mut leaks = Vec::new();
    let mut carried: std::collections::BTreeMap<String, BTreeSet<&'static str>> =
        Default::default();
    for case in cases()? {
        let base = if case.input.is_dir() {
            case.input.clone()
        } else {
            case.input
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let docs: Vec<Doc> = case
            .files
            .iter()
            .map(|f| Doc::read(f))
            .collect::<anyhow::Result<_>>()?;
        let leaves: usize = docs
            .iter()
            .map(|d| {
                let mut seen = 0;
                d.clone().plant(usize::MAX, &mut seen, "");
                seen
            })
            .sum();
        assert!(leaves > 0, "{}: no strings", case.input.display());
        for target in 0..leaves {
            n += 1;
            let (text, core) = secret(n);
            let tmp = tempfile::tempdir()?;
            let input = copy_case(&case, tmp.path())?;
            let mut seen = 0;
            for (f, d) in case.files.iter().zip(&docs) {
                let mut d = d.clone();
                if d.plant(target, &mut seen, &text) {
                    fs::write(tmp.path().join(f.strip_prefix(&base)?), d.text())?;
                    break;
                }
            }
            let Ok(loaded) =
                tracebook::adapters::input::load_session(&input, &set, Some(&case.harness), None)
            else {
                continue;
            };
            let mut at = BTreeSet::new();
            landed(&loaded.session, &core, &mut at);
            carried.entry(case.harness.clone()).or_default().extend(at);
            let (report, _) =
                tracebook::pipeline::report(&input, &crate::pinned(&set, Some(&case.harness)))?;
            let json = serde_json::to_string(&report)?;
            let html = tracebook::render::html(&report)?;
            if json.contains(&core) || html.contains(&core) {
                leaks.push(format!(
                    "{} string {target}: {text:?}",
                    case.input.display()
                ));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "planted text reached output:\n{}",
        leaks.join("\n")
    );
    let want = ["prompt", "assistant", "tool input", "tool output"];
    for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
        let got = carried.get(harness).cloned().unwrap_or_default();
        for w in want {
            assert!(
                got.contains(w),
                "{harness}: no planted {w} was carried: {got:?}"
            );
        }
    }
    for harness in ["claude-code", "opencode"] {
        assert!(
            carried.get(harness).is_some_and(|s| s.contains("subagent")),
            "{harness}: no planted subagent text was carried"
        );
    }
    assert!(n > 200, "only {n} strings planted");
    Ok(())
}

/// The shapes people paste (`research/privacy-redteam.md`), each with a core that must not
/// reach any output. `{c}` is replaced by a core unique to each planting; a payload that must
/// start a line begins with a newline.
const CLASSES: &[(&str, &str)] = &[
    ("env *_PASS", "SMTP_PASS={c}"),
    ("env *_PWD", "DB_PWD={c}"),
    ("passwd key", "\npasswd: {c}\n"),
    ("MASTER_KEY", "RAILS_MASTER_KEY={c}"),
    ("APP_KEY", "APP_KEY=base64:{c}="),
    ("LICENSE_KEY", "NEW_RELIC_LICENSE_KEY={c}"),
    ("*_AUTH", "CONSUL_HTTP_AUTH=deploy:{c}"),
    ("TF_VAR", "export TF_VAR_db_pass={c}"),
    (".tfvars", "admin_pass = \"{c}\""),
    ("mysql -pX", "mysql -u root -p{c} app"),
    ("mysql -p'X'", "mysqldump -h db -u app -p'{c}' app"),
    ("redis-cli -a", "redis-cli -h cache.internal -a {c} ping"),
    ("curl -u", "curl -u admin:{c} https://api.internal/v1"),
    (
        "curl --user",
        "curl --user 'admin:{c}' https://api.internal/v1",
    ),
    ("httpie -a", "http -a admin:{c} GET api.internal/v1"),
    ("sshpass -p", "sshpass -p '{c}' ssh deploy@build"),
    (
        "docker login -p",
        "docker login -u me -p {c} registry.internal",
    ),
    ("--password X", "pg_dump --password {c} app"),
    ("PGPASSWORD=", "PGPASSWORD={c} psql -h db app"),
    (
        ".netrc",
        "machine api.heroku.com\n  login me@example.org\n  password {c}",
    ),
    (".pgpass", "\ndb.internal:5432:app:app_user:{c}\n"),
    ("npm _auth", "//registry.npmjs.org/:_auth={c}"),
    (
        "cookie jar",
        "\n.example.org\tTRUE\t/\tTRUE\t1798761600\tsessionid\t{c}\n",
    ),
    ("document.cookie", "document.cookie = \"sid={c}; path=/\""),
    ("curl -b", "curl -b 'sessionid={c}' https://app.internal/"),
    (
        "Maven settings.xml",
        "<server><id>nexus</id><password>{c}</password></server>",
    ),
    ("web.config", "<add key=\"DbPassword\" value=\"{c}\" />"),
    ("PHP define", "define('DB_PASSWORD', '{c}');"),
    (
        "Python dict",
        "DATABASES = {'default': {'PASSWORD': '{c}'}}",
    ),
    ("Python settings", "SECRET_KEY = '{c}'"),
    ("requests auth", "requests.get(url, auth=('admin', '{c}'))"),
    ("TOML", "\n[database]\npass = \"{c}\"\n"),
    (".properties", "\ndb.pass={c}\n"),
    (
        "ERB YAML",
        "\n  password: <%= ENV['DB_PASSWORD'] || '{c}' %>\n",
    ),
    (
        "SSH key, cat -n, cut short",
        "     1\t-----BEGIN OPENSSH PRIVATE KEY-----\n     2\tb3BlbnNz{c}\n     3\tAAAAMwAAAAtzc2gtZW",
    ),
    (
        "SSH key, Read gutter, cut short",
        "     1→-----BEGIN OPENSSH PRIVATE KEY-----\n     2→b3BlbnNz{c}\n     3→AAAAMwAAAAtzc2gtZW",
    ),
    (
        "PuTTY key",
        "PuTTY-User-Key-File-3: ssh-ed25519\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\nAAAAIE{c}\nPrivate-MAC: 0a1b2c",
    ),
    ("age", "AGE-SECRET-KEY-1{U}"),
    (
        "Vault hvs.",
        "VAULT_ADDR=https://vault.internal hvs.CAESI{c}",
    ),
    ("Doppler", "dp.st.prd.{c}Zq8pW3xK9vLm2Rt7Zq8"),
    ("Databricks", "dapi{h}"),
    ("Atlassian", "ATATT3xFfGF0{c}Zq8pW3xK9vLm2Rt7=0A1B2C3D"),
    ("Square", "EAAA{c}Zq8pW3xK9vLm2Rt7Zq8pW3xK9vLm2Rt7"),
    ("New Relic", "NRAK-{U}"),
    ("Twilio", "SK{h}"),
    ("Mailgun", "key-{h}"),
    ("Mistral", "MISTRAL_API_KEY={c}"),
    (
        "Terraform Cloud",
        "Zq8pW3xK9vLm2R.atlasv1.{c}Zq8pW3xK9vLm2Rt7Zq8pW3xK9vLm2Rt7Zq8pW3xK9vLm2Rt7",
    ),
    ("Azure AD", "Zq88Q~{c}Zq8pW3x"),
    ("Azure DevOps", "AZURE_DEVOPS_PAT={c}"),
    (
        "Azure storage",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={c}==;EndpointSuffix=core.windows.net",
    ),
    ("Cloudflare", "CLOUDFLARE_API_TOKEN={c}"),
    ("GitHub", "ghp_{c}Zq8pW3xK9vLm"),
    (
        "Authorization header",
        "curl -H 'Authorization: Bearer {c}' https://api",
    ),
    ("URL userinfo", "postgres://app:{c}@db.internal:5432/x"),
];

/// The core of the `n`-th planting for a payload: 24 characters (mixed case and digits), 32
/// hex digits for `{h}`, or the upper-case and digit run `{U}` (age, New Relic).
fn fill(template: &str, n: usize) -> (String, String) {
    let c = format!("PlNt{n:06}Zq8pW3xK9vLm2R");
    let h = format!("{n:08x}9f8e7d6c5b4a39281706f5e4");
    let u = format!("PLNT{n:06}ZQ8PW3XK9VLM2RT7ZQ8PW3XK9VLM2RT7ZQ8PW3XK9VLM2RT7Z");
    if template.contains("{h}") {
        return (template.replace("{h}", &h), h);
    }
    if template.contains("{U}") {
        let u = if template.starts_with("NRAK") {
            u[..27].to_owned()
        } else {
            u
        };
        return (template.replace("{U}", &u), u);
    }
    (template.replace("{c}", &c), c)
}

/// Where a planted text landed: the fields a reader sees, told apart (a shell command from
/// the rest of a tool input).
fn slots(session: &Session, t: &str, out: &mut BTreeSet<&'static str>) {
    for e in &session.events {
        match &e.kind {
            EventKind::Prompt { text } if text.contains(t) => {
                out.insert("prompt");
            }
            EventKind::Assistant { text } if text.contains(t) => {
                out.insert("assistant");
            }
            EventKind::Thinking { text: Some(text) } if text.contains(t) => {
                out.insert("thinking");
            }
            EventKind::ToolCall(c) => {
                if c.command.as_deref().is_some_and(|x| x.contains(t)) {
                    out.insert("shell command");
                } else if c.input.to_string().contains(t) {
                    out.insert("tool input");
                }
                if let Some(r) = &c.result
                    && r.output.contains(t)
                {
                    out.insert("tool output");
                }
            }
            _ => {}
        }
    }
}

/// The page's text as a reader sees it: tags dropped, entities decoded.
fn visible(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// Every class of `CLASSES`, planted one at a time into every field (prompt, assistant text,
/// thinking, shell command, other tool input, tool output) of every harness, reaches none of
/// the three surfaces: the visible page, the report embedded in it, and `--format json`.
#[test]
fn every_pasted_secret_class_in_every_field_of_every_harness_is_redacted() -> anyhow::Result<()> {
    let set = AdapterSet::load(None)?;
    let want = [
        "prompt",
        "assistant",
        "thinking",
        "shell command",
        "tool input",
        "tool output",
    ];
    let mut n = 0;
    let mut leaks = Vec::new();
    let mut covered: BTreeSet<(String, &'static str)> = BTreeSet::new();
    for case in cases()? {
        let base = if case.input.is_dir() {
            case.input.clone()
        } else {
            case.input
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let docs: Vec<Doc> = case
            .files
            .iter()
            .map(|f| Doc::read(f))
            .collect::<anyhow::Result<_>>()?;
        let leaves: usize = docs
            .iter()
            .map(|d| {
                let mut seen = 0;
                d.clone().plant(usize::MAX, &mut seen, "");
                seen
            })
            .sum();
        let write = |target: usize, text: &str, dir: &Path| -> anyhow::Result<PathBuf> {
            let input = copy_case(&case, dir)?;
            let mut seen = 0;
            for (f, d) in case.files.iter().zip(&docs) {
                let mut d = d.clone();
                if d.plant(target, &mut seen, text) {
                    fs::write(dir.join(f.strip_prefix(&base)?), d.text())?;
                    break;
                }
            }
            Ok(input)
        };
        for target in 0..leaves {
            // Which field this string is: a marker planted alone, then loaded.
            let marker = format!("PLNTMARKER{target:06}");
            let tmp = tempfile::tempdir()?;
            let input = write(target, &marker, tmp.path())?;
            let Ok(loaded) =
                tracebook::adapters::input::load_session(&input, &set, Some(&case.harness), None)
            else {
                continue;
            };
            let mut at = BTreeSet::new();
            slots(&loaded.session, &marker, &mut at);
            let Some(slot) = at
                .into_iter()
                .find(|s| !covered.contains(&(case.harness.clone(), *s)))
            else {
                continue;
            };
            covered.insert((case.harness.clone(), slot));
            for (class, template) in CLASSES {
                n += 1;
                let (text, core) = fill(template, n);
                let tmp = tempfile::tempdir()?;
                let input = write(target, &text, tmp.path())?;
                let (report, _) =
                    tracebook::pipeline::report(&input, &crate::pinned(&set, Some(&case.harness)))?;
                let json = serde_json::to_string_pretty(&report)?;
                let html = tracebook::render::html(&report)?;
                let embedded = tracebook::render::embed::json(&html)?;
                for (surface, body) in [
                    ("visible page", visible(&html)),
                    ("embedded report", embedded.into_owned()),
                    ("--format json", json),
                ] {
                    if body.contains(&core) {
                        leaks.push(format!("{} {slot} {class}: {surface}", case.harness));
                    }
                }
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "planted secrets reached output ({} of {n} plantings):\n{}",
        leaks.len(),
        leaks.join("\n")
    );
    for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
        for w in want {
            assert!(
                covered.contains(&(harness.to_owned(), w)),
                "{harness}: no fixture string lands in the {w}"
            );
        }
    }
    Ok(())
}

/// Secret-named keys as JSON objects of a tool input (MCP HTTP tools, WebFetch headers,
/// OpenCode `bash` env), each planted as one more key of the input.
const OBJECTS: &[(&str, &str, &str)] = &[
    (
        "headers",
        "Authorization header",
        r#"{"Authorization": "Bearer {c}"}"#,
    ),
    ("headers", "X-Auth header", r#"{"X-Auth": "{c}"}"#),
    ("headers", "Cookie header", r#"{"Cookie": "sid={c}"}"#),
    (
        "env",
        "DB_PASS",
        r#"{"DB_PASS": "{c}", "PATH": "/usr/bin"}"#,
    ),
    ("env", "RAILS_MASTER_KEY", r#"{"RAILS_MASTER_KEY": "{c}"}"#),
    ("auth", "auth.pass", r#"{"user": "deploy", "pass": "{c}"}"#),
];

/// Adds `key: value` to the JSON object number `target` (depth first, counted by `seen`,
/// objects inside strings holding JSON included); true when it was in this value.
fn plant_object(v: &mut Value, target: usize, seen: &mut usize, key: &str, with: &Value) -> bool {
    match v {
        Value::String(s) => {
            if let Ok(mut inner @ (Value::Object(_) | Value::Array(_))) =
                serde_json::from_str::<Value>(s)
                && plant_object(&mut inner, target, seen, key, with)
            {
                *s = inner.to_string();
                return true;
            }
            false
        }
        Value::Array(items) => items
            .iter_mut()
            .any(|i| plant_object(i, target, seen, key, with)),
        Value::Object(map) => {
            let hit = *seen == target;
            *seen += 1;
            if hit {
                map.insert(key.to_owned(), with.clone());
                return true;
            }
            map.values_mut()
                .any(|i| plant_object(i, target, seen, key, with))
        }
        _ => false,
    }
}

/// Every secret-named key of `OBJECTS`, planted as a JSON object into a tool input of every
/// harness, reaches none of the three surfaces, and the keys beside it stay.
#[test]
fn secret_named_keys_in_tool_input_objects_are_redacted_in_every_harness() -> anyhow::Result<()> {
    let set = AdapterSet::load(None)?;
    let mut n = 0;
    let mut leaks = Vec::new();
    let mut done: BTreeSet<String> = BTreeSet::new();
    for case in cases()? {
        if done.contains(&case.harness) {
            continue;
        }
        let base = if case.input.is_dir() {
            case.input.clone()
        } else {
            case.input
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let docs: Vec<Value> = case
            .files
            .iter()
            .filter_map(|f| match Doc::read(f) {
                Ok(Doc::One(v)) => Some(v),
                Ok(Doc::Lines(lines)) => Some(Value::Array(
                    lines.into_iter().filter_map(Result::ok).collect(),
                )),
                Err(_) => None,
            })
            .collect();
        if docs.len() != case.files.len() {
            continue;
        }
        let write =
            |target: usize, key: &str, with: &Value, dir: &Path| -> anyhow::Result<PathBuf> {
                let input = copy_case(&case, dir)?;
                let mut seen = 0;
                for (f, d) in case.files.iter().zip(&docs) {
                    let mut d = d.clone();
                    if plant_object(&mut d, target, &mut seen, key, with) {
                        let text = if f.extension().is_some_and(|e| e == "jsonl") {
                            let Value::Array(lines) = d else { break };
                            let mut t: String = lines
                                .iter()
                                .map(Value::to_string)
                                .collect::<Vec<_>>()
                                .join("\n");
                            t.push('\n');
                            t
                        } else {
                            d.to_string()
                        };
                        fs::write(dir.join(f.strip_prefix(&base)?), text)?;
                        break;
                    }
                }
                Ok(input)
            };
        let objects: usize = docs
            .iter()
            .map(|d| {
                let mut seen = 0;
                plant_object(&mut d.clone(), usize::MAX, &mut seen, "", &Value::Null);
                seen
            })
            .sum();
        // The first object that is a tool input: a marker key planted alone shows in a call's
        // input once loaded.
        let marker = Value::String("PLNTOBJMARKER".into());
        let mut input_object = None;
        for target in 0..objects {
            let tmp = tempfile::tempdir()?;
            let input = write(target, "plnt_marker", &marker, tmp.path())?;
            let Ok(loaded) =
                tracebook::adapters::input::load_session(&input, &set, Some(&case.harness), None)
            else {
                continue;
            };
            let in_input = loaded.session.events.iter().any(|e| {
                matches!(&e.kind, EventKind::ToolCall(c)
                    if c.input.get("plnt_marker").is_some())
            });
            if in_input {
                input_object = Some(target);
                break;
            }
        }
        let Some(target) = input_object else { continue };
        done.insert(case.harness.clone());
        for (key, class, template) in OBJECTS {
            n += 1;
            let (text, core) = fill(template, n);
            let with: Value = serde_json::from_str(&text)?;
            let tmp = tempfile::tempdir()?;
            let input = write(target, key, &with, tmp.path())?;
            let (report, _) =
                tracebook::pipeline::report(&input, &crate::pinned(&set, Some(&case.harness)))?;
            let json = serde_json::to_string_pretty(&report)?;
            let html = tracebook::render::html(&report)?;
            let embedded = tracebook::render::embed::json(&html)?;
            for (surface, body) in [
                ("visible page", visible(&html)),
                ("embedded report", embedded.into_owned()),
                ("--format json", json.clone()),
            ] {
                if body.contains(&core) {
                    leaks.push(format!("{} {class}: {surface}", case.harness));
                }
            }
            if *class == "DB_PASS" {
                assert!(
                    json.contains("/usr/bin"),
                    "{}: the key beside the secret is kept",
                    case.harness
                );
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "planted secrets reached output:\n{}",
        leaks.join("\n")
    );
    for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
        assert!(
            done.contains(harness),
            "{harness}: no fixture object is a tool input"
        );
    }
    assert_eq!(n, 4 * OBJECTS.len());
    Ok(())
}

/// Identity classes the planted identity test covers, with the text that states or uses
/// each one and the values that must never reach output. Every value is made unique by `k`
/// and starts with `Qx`/`qx`, which no fixture holds; the short names are fixed three-letter
/// ones no fixture holds either.
fn identity_block(k: usize) -> (String, Vec<(&'static str, String)>) {
    let mut lines = Vec::new();
    let mut cores: Vec<(&'static str, String)> = Vec::new();
    let mut add = |class: &'static str, line: String, values: Vec<String>| {
        lines.push(line);
        cores.extend(values.into_iter().map(|v| (class, v)));
    };
    let user = format!("qxlong{k}");
    let host = format!("qxhost{k}");
    // A prompt states the user and the host; later lines use them.
    add(
        "prompt user@host",
        format!("{user}@{host}:~/work/shop$ git status"),
        vec![user.clone(), host.clone()],
    );
    add(
        "user name in prose",
        format!(
            "Ask {} or {user} (on {host}.corp.lan) to check.",
            user.to_uppercase()
        ),
        vec![user.to_uppercase(), user.clone(), host.clone()],
    );
    let mac = format!("Qxmac{k}-MBP");
    add(
        "macOS zsh prompt",
        format!("{user}@{mac} shop % ls"),
        vec![mac.clone()],
    );
    add(
        "host .local",
        format!("ping {}.local", mac.to_lowercase()),
        vec![mac.to_lowercase()],
    );
    let uname = format!("qxuname{k}");
    add(
        "uname -a",
        format!("Linux {uname} 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC x86_64 GNU/Linux"),
        vec![uname.clone()],
    );
    add(
        "host reused",
        format!("deployed from {uname}"),
        vec![uname.clone()],
    );
    let ctl = format!("qxctl{k}");
    add(
        "hostnamectl",
        format!(" Static hostname: {ctl}"),
        vec![ctl.clone()],
    );
    let key_user = format!("qxkey{k}");
    let key_host = format!("qxkeyhost{k}");
    add(
        "ssh key comment",
        format!("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPlNtKeYqx{k}Zz {key_user}@{key_host}"),
        vec![key_user.clone(), key_host.clone()],
    );
    let (gf, gl) = (format!("Qxgit{k}"), format!("Qxcfg{k}"));
    let git_mail = format!("qxgm{k}@qxgdom{k}.io");
    add(
        "git config",
        format!("user.name={gf} {gl}\nuser.email={git_mail}"),
        vec![
            gf.clone(),
            gl.clone(),
            format!("qxgm{k}"),
            format!("qxgdom{k}"),
        ],
    );
    add(
        "full name in prose",
        format!("Thanks, {gf} {gl}!"),
        vec![gf.clone(), gl.clone()],
    );
    let (af, al) = (format!("Qxauth{k}"), format!("Qxor{k}"));
    add(
        "commit author",
        format!(
            "commit 1a2b3c4d\nAuthor: {af} {al} <qxam{k}@qxcorp{k}.com>\n\n    Fix it\n\n    Co-authored-by: Qxco{k} Qxwriter{k} <qxco{k}@qxvendor{k}.net>"
        ),
        vec![
            af.clone(),
            al.clone(),
            format!("qxam{k}"),
            format!("qxcorp{k}"),
            format!("Qxco{k}"),
            format!("Qxwriter{k}"),
            format!("qxvendor{k}"),
        ],
    );
    let gh = format!("qxgh{k}");
    add(
        "gh auth status",
        format!("github.com\n  ✓ Logged in to github.com account {gh} (keyring)"),
        vec![gh.clone()],
    );
    add(
        "gh handle reused",
        format!("see github.com/{gh}/shop"),
        vec![gh.clone()],
    );
    let pw = format!("qxpw{k}");
    add(
        "/etc/passwd line",
        format!("{pw}:x:1001:1001:Qxgecos{k} Qxname{k},,,:/home/{pw}:/bin/bash"),
        vec![pw.clone(), format!("Qxgecos{k}"), format!("Qxname{k}")],
    );
    let (wh, wu) = (format!("DESKTOP-QX{k}"), format!("qxwuser{k}"));
    add(
        "Windows whoami",
        format!("PS C:\\> whoami\n{}\\{wu}", wh.to_lowercase()),
        vec![wh.to_lowercase(), wu.clone()],
    );
    add(
        "e-mail",
        format!("mail qxmail{k}@qxcompany{k}.com, cc Qx.Other{k}@qxpartner{k}.org"),
        vec![
            format!("qxmail{k}@"),
            format!("qxcompany{k}"),
            format!("Other{k}"),
            format!("qxpartner{k}"),
        ],
    );
    add(
        "noreply e-mail",
        format!("author 12345+qxnr{k}@users.noreply.github.com"),
        vec![format!("qxnr{k}")],
    );
    // Home folders of other users, in every form.
    let homes: Vec<(&'static str, String, String)> = vec![
        (
            "home C:\\Users",
            format!("C:\\Users\\Qxwin{k}\\AppData\\x.txt"),
            format!("Qxwin{k}"),
        ),
        (
            "home JSON-escaped",
            format!("{{\"cwd\":\"C:\\\\Users\\\\Qxjson{k}\\\\src\"}}"),
            format!("Qxjson{k}"),
        ),
        (
            "home forward slashes",
            format!("C:/Users/qxfwd{k}/src/x.rs"),
            format!("qxfwd{k}"),
        ),
        (
            "home 8.3",
            format!("C:\\Users\\QX{k:04}~1\\AppData\\Local\\Temp"),
            format!("QX{k:04}"),
        ),
        (
            "home /mnt/c",
            format!("/mnt/c/Users/qxmnt{k}/Documents"),
            format!("qxmnt{k}"),
        ),
        (
            "home WSL",
            format!("\\\\wsl$\\Ubuntu\\home\\qxwsl{k}\\x"),
            format!("qxwsl{k}"),
        ),
        (
            "home WSL localhost",
            format!("\\\\wsl.localhost\\Ubuntu\\home\\qxwlh{k}\\x"),
            format!("qxwlh{k}"),
        ),
        (
            "home UNC",
            format!("\\\\fileserver\\home\\qxunc{k}\\docs"),
            format!("qxunc{k}"),
        ),
        (
            "home macOS",
            format!("/Users/qxmhome{k}/Desktop/a.png"),
            format!("qxmhome{k}"),
        ),
        (
            "home /Volumes",
            format!("/Volumes/Qxvol{k} Drive/backup"),
            format!("Qxvol{k}"),
        ),
        (
            "home with a space",
            format!("/Users/Qxsp{k} Qxlast{k}/work/x.md"),
            format!("Qxlast{k}"),
        ),
        (
            "home with a space (Windows)",
            format!("C:\\Users\\Qxwsp{k} Qxwlast{k}\\x"),
            format!("Qxwlast{k}"),
        ),
        (
            "home with an apostrophe",
            format!("C:\\Users\\O'Qxapo{k}\\x"),
            format!("Qxapo{k}"),
        ),
        (
            "home URL-encoded",
            format!("vscode://file/%2FUsers%2Fqxurl{k}%2Fx.rs"),
            format!("qxurl{k}"),
        ),
        (
            "home file://",
            format!("file:///home/qxfile{k}/notes.md"),
            format!("qxfile{k}"),
        ),
        (
            "home ~user",
            format!("cat ~qxtilde{k}/.ssh/config"),
            format!("qxtilde{k}"),
        ),
        (
            "home dash-encoded",
            format!("~/.claude/projects/-Users-qxdash{k}-work-shop/s.jsonl"),
            format!("qxdash{k}"),
        ),
    ];
    for (class, line, core) in homes {
        add(class, line, vec![core]);
    }
    // A three-letter user and host, stated by a prompt, then used where they name someone.
    add(
        "short user and host",
        "qzx@qzh:~$ ls -l\n-rw-r--r--  1 qzx  staff  1234 Jan  1 12:00 notes.txt".into(),
        vec!["qzx".into(), "qzh".into()],
    );
    add(
        "short user in ps, id, paths",
        "qzx       4242  0.0  0.1 123456  7890 ?  S  12:00  0:00 node server.js\nuid=1002(qzx) gid=1002(qzx) groups=1002(qzx)\nsee /srv/qzx/app and C:\\Users\\qzx\\x".into(),
        vec!["qzx".into()],
    );
    (lines.join("\n"), cores)
}

/// The text a reader sees in a page: the page and its stored blocks without tags, entities
/// decoded; the embedded report is left out (checked on its own).
fn visible_text(page: &str) -> anyhow::Result<String> {
    use base64::Engine as _;
    let stored = regex::Regex::new(
        r#"<template class="stored"[^>]*data-encoding="zstd\+base64">([^<]*)</template>"#,
    )?;
    let mut html = String::new();
    for c in stored.captures_iter(page) {
        let bytes = base64::engine::general_purpose::STANDARD.decode(&c[1])?;
        html.push_str(&String::from_utf8(zstd::decode_all(bytes.as_slice())?)?);
    }
    let report = regex::Regex::new(r#"(?s)<template id="tracebook-report".*?</template>"#)?;
    html.push_str(&report.replace_all(&stored.replace_all(page, ""), ""));
    let tags = regex::Regex::new(r"(?s)<[^>]*>")?;
    Ok(tags
        .replace_all(&html, "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&"))
}

#[test]
fn identity_planted_in_any_field_of_any_harness_never_reaches_output() -> anyhow::Result<()> {
    let set = AdapterSet::load(None)?;
    let mut renders = 0;
    let mut planted: std::collections::BTreeMap<&'static str, usize> = Default::default();
    let mut leaked: std::collections::BTreeMap<&'static str, usize> = Default::default();
    let mut examples = Vec::new();
    let mut carried: std::collections::BTreeMap<String, BTreeSet<&'static str>> =
        Default::default();
    for case in cases()? {
        let base = if case.input.is_dir() {
            case.input.clone()
        } else {
            case.input
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let docs: Vec<Doc> = case
            .files
            .iter()
            .map(|f| Doc::read(f))
            .collect::<anyhow::Result<_>>()?;
        let leaves: usize = docs
            .iter()
            .map(|d| {
                let mut seen = 0;
                d.clone().plant(usize::MAX, &mut seen, "");
                seen
            })
            .sum();
        for target in 0..leaves {
            renders += 1;
            let (block, cores) = identity_block(renders);
            let marker = format!("QXMARK{renders}");
            let text = format!("{marker}\n{block}");
            let tmp = tempfile::tempdir()?;
            let input = copy_case(&case, tmp.path())?;
            let mut seen = 0;
            for (f, d) in case.files.iter().zip(&docs) {
                let mut d = d.clone();
                if d.plant(target, &mut seen, &text) {
                    fs::write(tmp.path().join(f.strip_prefix(&base)?), d.text())?;
                    break;
                }
            }
            let Ok(loaded) =
                tracebook::adapters::input::load_session(&input, &set, Some(&case.harness), None)
            else {
                continue;
            };
            let mut at = BTreeSet::new();
            landed(&loaded.session, &marker, &mut at);
            if at.is_empty() {
                continue;
            }
            carried.entry(case.harness.clone()).or_default().extend(at);
            let (report, _) =
                tracebook::pipeline::report(&input, &crate::pinned(&set, Some(&case.harness)))?;
            let json = serde_json::to_string_pretty(&report)?;
            let page = tracebook::render::html(&report)?;
            let embedded = tracebook::render::embed::json(&page)?.into_owned();
            let visible = visible_text(&page)?;
            let mut seen_class = BTreeSet::new();
            let mut leaked_class = BTreeSet::new();
            for (class, core) in &cores {
                if seen_class.insert(*class) {
                    *planted.entry(class).or_default() += 1;
                }
                let hit = [
                    ("page", &visible),
                    ("embedded report", &embedded),
                    ("json", &json),
                ]
                .into_iter()
                .find(|(_, s)| s.contains(core.as_str()));
                if let Some((surface, _)) = hit {
                    if leaked_class.insert(*class) {
                        *leaked.entry(class).or_default() += 1;
                        if examples.len() < 40 {
                            examples.push(format!(
                                "{} string {target}: {class}: {core:?} on the {surface}",
                                case.input.display()
                            ));
                        }
                    }
                }
            }
        }
    }
    let total_planted: usize = planted.values().sum();
    let total_leaked: usize = leaked.values().sum();
    eprintln!("identity plantings: {total_planted} planted, {total_leaked} leaked");
    for (class, n) in &planted {
        eprintln!(
            "  {class}: {} of {n} leaked",
            leaked.get(class).unwrap_or(&0)
        );
    }
    assert!(
        total_leaked == 0,
        "planted identity reached output:\n{}",
        examples.join("\n")
    );
    let want = ["prompt", "assistant", "tool input", "tool output"];
    for harness in ["claude-code", "codex", "gemini-cli", "opencode"] {
        let got = carried.get(harness).cloned().unwrap_or_default();
        for w in want {
            assert!(
                got.contains(w),
                "{harness}: no planted {w} was carried: {got:?}"
            );
        }
    }
    for harness in ["claude-code", "opencode"] {
        assert!(
            carried.get(harness).is_some_and(|s| s.contains("subagent")),
            "{harness}: no planted subagent text was carried"
        );
    }
    assert!(renders > 200, "only {renders} strings planted");
    Ok(())
}

/// The machine's identity (home, `USER`, `HOSTNAME`) is removed from a log that never states
/// it: the log was written by this user, and its text names them.
#[test]
fn the_machine_users_identity_is_removed_though_the_log_never_states_it() -> anyhow::Result<()> {
    let tmp = tempfile::tempdir()?;
    let log = tmp.path().join("session.jsonl");
    let fixture = fs::read_to_string(fixtures().join("claude-code/ordered-steps/session.jsonl"))?;
    let planted = fixture.replace(
        "The cart total is wrong",
        "qzenvuser on qzenvhost: see /home/qzenvuser/notes and Qzenvuser's ls: -rw-r--r--  1 qzenvuser  staff  1 Jan  1 x. The cart total is wrong",
    );
    assert_ne!(planted, fixture, "the prompt was not found");
    fs::write(&log, planted)?;
    let render = |env: &[(&str, &str)]| -> anyhow::Result<String> {
        let mut cmd = crate::tracebook();
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd
            .arg("render")
            .arg(&log)
            .args(["--format", "json", "-o", "-"])
            .output()?;
        anyhow::ensure!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8(out.stdout)?)
    };
    // Proof the text is carried: rendered by someone else, the names stay.
    let other = render(&[("USER", "someoneelse"), ("HOSTNAME", "elsewhere")])?;
    assert!(
        other.contains("qzenvuser") && other.contains("qzenvhost"),
        "{other}"
    );
    let own = render(&[
        ("HOME", "/home/qzenvuser"),
        ("USER", "qzenvuser"),
        ("HOSTNAME", "qzenvhost"),
    ])?;
    for core in ["qzenvuser", "Qzenvuser", "qzenvhost"] {
        assert!(!own.contains(core), "{core} reached the report");
    }
    assert!(
        own.contains("<user> on <host>: see ~/notes and <user>'s ls"),
        "{own}"
    );
    Ok(())
}

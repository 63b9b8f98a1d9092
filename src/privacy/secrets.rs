//! Secret redaction: credentials and secret values are replaced by `«redacted:<rule>»`, and
//! only the secret is replaced, so the key beside it stays readable
//! (`API_KEY=«redacted:secret-assignment»`). The rules live in `rules/*.yaml` (see
//! [`super::rules`]); the user adds literal strings with `--redact`. Nothing in the transcript
//! can switch a rule off.

use std::borrow::Cow;

use super::Redactor;
use super::rules::{ENGINE, Find};

/// The placeholder for a secret found by `rule`.
pub fn placeholder(rule: &str) -> String {
    format!("«redacted:{rule}»")
}

/// The secret redactor: built-in rules plus the user's own strings (`--redact`).
pub struct Secrets {
    extra: Vec<String>,
}

impl Secrets {
    /// Built-in rules plus literal strings to remove wherever they appear.
    pub fn new(extra: &[String]) -> Self {
        let mut extra: Vec<String> = extra.iter().filter(|s| !s.is_empty()).cloned().collect();
        extra.sort_by_key(|s| std::cmp::Reverse(s.len()));
        Self { extra }
    }
}

impl Redactor for Secrets {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for lit in &self.extra {
            if out.contains(lit.as_str()) {
                out = Cow::Owned(out.replace(lit.as_str(), &placeholder("user-string")));
            }
        }
        match redact_with(&out, false) {
            Cow::Owned(s) => Cow::Owned(s),
            Cow::Borrowed(_) => out,
        }
    }

    fn bound_value(&self, key: &str, value: &str) -> Option<String> {
        (is_secret_key(key) && super::rules::plausible_value(value))
            .then(|| placeholder("secret-json-key"))
    }
}

/// Replaces every secret the rules find; `shape_only` runs only the rules that recognise a
/// secret by its own shape (the backstop over rendered output).
pub fn redact_with(text: &str, shape_only: bool) -> Cow<'_, str> {
    let finds = ENGINE.find(text, shape_only);
    if finds.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(replace(text, &finds))
}

fn replace(text: &str, finds: &[Find]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in finds {
        out.push_str(&text[at..f.start]);
        out.push_str(&placeholder(&ENGINE.rules()[f.rule].spec.id));
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Compiles, on the pool, the rules nearly every session's tool outputs select (by the words
/// `key`, `token`, `secret`, `password`, `auth`), so that they are ready when the first texts
/// are redacted instead of compiling one after another then. The pipeline starts it while the
/// input is read, and a command that reads sessions starts it before it reads the adapters;
/// only the first call does the work (a later one returns at once rather than wait on it).
pub fn prewarm() {
    static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !STARTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        ENGINE.prewarm("key token secret password auth");
    }
}

/// Whether a JSON object key names a secret (`password`, `apiKey`, `client_secret`, …), by
/// the same rule that finds `"key": "value"` in text.
pub fn is_secret_key(key: &str) -> bool {
    if key.len() > 100 {
        return false;
    }
    let Some(i) = ENGINE
        .rules()
        .iter()
        .position(|r| r.spec.id == "secret-json-key")
    else {
        return false;
    };
    let probe = format!("\"{}\": \"probe-value\"", key.replace(['"', '\\'], ""));
    !ENGINE.find_rule(i, &probe).is_empty()
}

/// The last scan: shape-only rules over text that is about to leave the machine (rendered
/// HTML, the JSON report). Returns the text and how many secrets it replaced.
pub fn backstop(text: &str) -> (Cow<'_, str>, usize) {
    let finds = ENGINE.find(text, true);
    if finds.is_empty() {
        return (Cow::Borrowed(text), 0);
    }
    (Cow::Owned(replace(text, &finds)), finds.len())
}

#[cfg(test)]
mod tests {
    use super::super::rules::{self, Engine};
    use super::*;

    fn redact(s: &str) -> String {
        Secrets::new(&["hunter2-corp".into()])
            .redact(s)
            .into_owned()
    }

    #[test]
    fn rule_files_parse_and_every_pattern_compiles() {
        for (name, text) in rules::builtin_files() {
            let specs = rules::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!specs.is_empty(), "{name}");
        }
        let mut ids = std::collections::HashSet::new();
        let mut failures = Vec::new();
        for r in ENGINE.rules() {
            if let Some(e) = r.compile_error() {
                failures.push(format!("{}: pattern does not compile: {e}", r.spec.id));
            }
            if !ids.insert(r.spec.id.clone()) {
                failures.push(format!("duplicate id {}", r.spec.id));
            }
            if r.spec.examples.is_empty() {
                failures.push(format!("{}: no examples", r.spec.id));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(ENGINE.rules().len() > 100);
    }

    #[test]
    fn every_rule_finds_its_examples_through_the_prefilter() {
        let mut failures = Vec::new();
        for (i, r) in ENGINE.rules().iter().enumerate() {
            for ex in &r.spec.examples {
                let alone = Engine::new(vec![r.spec.clone()]);
                if alone.find(ex, false).is_empty() {
                    failures.push(format!("{} ({i}) misses {ex:?}", r.spec.id));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn no_rule_finds_its_negative_examples() {
        let mut failures = Vec::new();
        for r in ENGINE.rules() {
            let alone = Engine::new(vec![r.spec.clone()]);
            for ex in &r.spec.negative_examples {
                if !alone.find(ex, false).is_empty() {
                    failures.push(format!("{} finds {ex:?}", r.spec.id));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn redaction_is_idempotent_on_every_example() {
        for r in ENGINE.rules() {
            for ex in &r.spec.examples {
                let once = redact(ex);
                assert_eq!(redact(&once), once, "{}", r.spec.id);
            }
        }
    }

    /// A value a tool or a person already replaced is left as it reads: redacting it again
    /// would hide nothing and only blur what the session shows.
    #[test]
    fn a_placeholder_already_redacted_is_kept() {
        for text in [
            "const token = 'REDACTED_API_KEY'",
            "curl -H 'Authorization: Bearer REDACTED_TOKEN' https://api",
            "password=[redacted]",
        ] {
            assert_eq!(redact(text), text);
        }
        assert_eq!(
            redact("const token = 'ghp_redactedbutrealabc123'"),
            "const token = '«redacted:secret-assignment»'",
            "a secret that merely holds the word is still one"
        );
    }

    #[test]
    fn keeps_the_key_and_replaces_the_value() {
        assert_eq!(
            redact("export API_KEY=abcd1234efgh"),
            "export API_KEY=«redacted:secret-assignment»"
        );
        assert_eq!(
            redact(r#"{"password": "correct horse"}"#),
            r#"{"password": "«redacted:secret-json-key»"}"#
        );
        assert_eq!(
            redact("db_password: hunter2"),
            "db_password: «redacted:secret-yaml-key»"
        );
    }

    /// The value of every key name the generic rules' patterns name, in each spelling (`_`,
    /// `-` or nothing between its words, upper or lower case), is redacted when the key is
    /// the only one in the text: the keywords that select the rules cover every spelling
    /// their patterns accept.
    #[test]
    fn every_secret_key_spelling_selects_the_generic_rules() {
        let names = [
            "secret",
            "token",
            "passwd",
            "password",
            "passphrase",
            "pwd",
            "api?key",
            "access?key",
            "private?key",
            "auth?key",
            "client?secret",
            "credential",
            "credentials",
            "signing?key",
            "encryption?key",
            "session?key",
            "dsn",
            "webhook?url",
            "connection?string",
            "database?url",
            "db?url",
            "conn?str",
            "master?key",
            "app?key",
            "license?key",
            "licence?key",
            "admin?key",
            "account?key",
            "shared?key",
            "consumer?key",
            "service?key",
            "root?key",
            "write?key",
            "deploy?key",
            "sas?key",
            "management?key",
            "hmac?key",
            "jwt?key",
            "subscription?key",
            "ingest?key",
            "push?key",
        ];
        let value = "Zx9qT3vLm2Rk8pW4";
        for name in names {
            for sep in ["_", "-", ""] {
                for key in [
                    name.replace('?', sep),
                    name.replace('?', sep).to_uppercase(),
                ] {
                    for text in [
                        format!("{key}={value}"),
                        format!("{{\"{key}\": \"{value}\"}}"),
                        format!("{key}: {value}"),
                    ] {
                        let out = redact(&text);
                        assert!(!out.contains(value), "{text} -> {out}");
                    }
                }
            }
        }
    }

    /// Keys named by a separate word (`pass`, `auth`, `cookie`, a `_pat` suffix, an upper-case
    /// `_KEY`), in the forms people paste: env, `.env`, TOML, `.properties`, YAML, JSON.
    #[test]
    fn password_like_keys_are_secrets_in_every_form() {
        let value = "Zx9qT3vLm2Rk8pW4";
        for key in [
            "DB_PASS",
            "SMTP_PASS",
            "admin_pass",
            "pass",
            "db.pass",
            "dbPass",
            "DB_PWD",
            "passwd",
            "MASTER_KEY",
            "RAILS_MASTER_KEY",
            "APP_KEY",
            "LICENSE_KEY",
            "NEW_RELIC_LICENSE_KEY",
            "ALGOLIA_ADMIN_KEY",
            "CONSUL_HTTP_AUTH",
            "_auth",
            "TF_VAR_db_pass",
            "GITHUB_PAT",
            "Authorization",
            "Cookie",
            "X-Auth",
            "STRIPE_KEY",
        ] {
            for text in [
                format!("{key}={value}"),
                format!("export {key}=\"{value}\""),
                format!("{key} = \"{value}\""),
                format!("{key}: {value}"),
                format!("{{\"{key}\": \"{value}\"}}"),
            ] {
                // An upper-case `*_KEY` of no known kind is a secret as an environment or a JSON
                // `env` object sets it; `STRIPE_KEY = "…"` is a constant in code, like
                // `CACHE_KEY = "…"`, and `STRIPE_KEY: …` a YAML key naming one.
                if key == "STRIPE_KEY"
                    && (text.contains(" = ") || text.contains(": "))
                    && !text.starts_with('{')
                {
                    continue;
                }
                let out = redact(&text);
                assert!(!out.contains(value), "{text} -> {out}");
            }
            assert!(is_secret_key(key), "{key}");
        }
    }

    /// A key that names something else than the secret, and a value that is code or an
    /// instruction, are kept.
    #[test]
    fn keys_naming_something_else_and_code_values_are_kept() {
        for text in [
            "API_KEY_HEADER = 'X-Api-Key'",
            "session_key_prefix = 'sess:'",
            "SECRET_NAME=my-app-secret",
            "password_min_length: 12",
            "\"access_token_url\": \"https://github.com/login/oauth/access_token\"",
            "this.apiKey = apiKey;",
            "this.apiKey = apiKey",
            "env.CODEMIE_API_KEY = apiKeyValue;",
            "password: password",
            "API_KEY=your-api-key-here",
            "token = \"YOUR_TOKEN\"",
            "SSH_KEY_PATH=/home/me/.ssh/id_ed25519",
            "const SOURCE_KEY = \"opencode\";",
            "const STORAGE_KEY = 'app-settings';",
            "PASS: http://[2001:db8::1]/",
            "pass_rate = assertion/expectation pass rate",
            "- hidden scripts all pass => attempt passed",
            "\"Authorization\": \"Bearer {env:CONTEXT7_API_KEY}\"",
            "bypass = true",
            "compass_key_id: 7",
        ] {
            assert_eq!(redact(text), text);
        }
    }

    #[test]
    fn redacts_known_token_shapes() {
        let out = redact("a ghp_abcdefghijklmnopqrstuvwxyz0123456789 b AKIAQYLPMN5HHHFPZAM2 c");
        assert!(!out.contains("ghp_abc") && !out.contains("AKIAQ"), "{out}");
        let out = redact("postgres://app:s3cr3t@db:5432/x");
        assert!(!out.contains("s3cr3t"), "{out}");
        assert!(out.starts_with("postgres://app:«redacted:"), "{out}");
        let out = redact("Authorization: Bearer abc.def.ghi123");
        assert!(
            out.ends_with("Bearer «redacted:authorization-header»"),
            "{out}"
        );
    }

    #[test]
    fn escaped_pem_keys_are_redacted() {
        let k = r#"{"text":"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx1yZabcdefghijkl\nmnopqrstu\n-----END RSA PRIVATE KEY-----\n"}"#;
        let out = redact(k);
        assert!(!out.contains("MIIEowIBAAKCAQEAx1yZ"), "{out}");
    }

    #[test]
    fn in_band_allow_markers_do_not_switch_redaction_off() {
        for s in [
            "API_KEY=abcd1234efgh # gitleaks:allow",
            "API_KEY=abcd1234efgh # pragma: allowlist secret",
            "tracebook:allow ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ] {
            let out = redact(s);
            assert!(
                !out.contains("abcd1234efgh") && !out.contains("ghp_abc"),
                "{out}"
            );
        }
    }

    #[test]
    fn redacts_user_strings_and_is_idempotent() {
        let once = redact("the hunter2-corp password=abcdefgh");
        assert_eq!(
            once,
            "the «redacted:user-string» password=«redacted:secret-assignment»"
        );
        assert_eq!(redact(&once), once);
    }

    #[test]
    fn secret_keys_in_structured_json() {
        for k in [
            "password",
            "apiKey",
            "client_secret",
            "GITHUB_TOKEN",
            "x-api-key",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in [
            "input_tokens",
            "tokenizer",
            "file_path",
            "command",
            "description",
        ] {
            assert!(!is_secret_key(k), "{k}");
        }
    }

    #[test]
    fn leaves_look_alikes_alone() {
        for s in [
            "commit 3f2c1a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39",
            "short 3f2c1a9 and sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "id 550e8400-e29b-41d4-a716-446655440000",
            "toolu_01ABCDEFGHJKLMNPQRSTUVWX",
            "call_AbCdEf0123456789GhIjKlMn",
            "msg_01XFDUDYJgAACzvnptvVoYEL",
            "\"integrity\": \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUR3aOtKbtS6MW5lrA==\"",
            "src/token_parser.rs and /usr/lib/python3/site-packages/secrets.py",
            "input_tokens: 123456",
            "API_KEY=$API_KEY",
            "the password prompt appears after login",
            "req_011CUabcdefGHIJKLmnop",
        ] {
            assert_eq!(redact(s), s);
        }
    }
}

#[cfg(test)]
mod structured {
    use super::super::{Policy, apply};
    use super::*;
    use crate::events::{Event, EventKind, Session, StatusBasis, ToolCall, ToolKind, ToolStatus};

    /// A tool input as JSON objects (MCP HTTP tools, WebFetch headers, OpenCode `bash` env):
    /// the value of a secret-named key is redacted as its text form is.
    #[test]
    fn secret_named_keys_in_tool_input_objects_are_redacted() {
        let input = serde_json::json!({
            "url": "https://api.internal/v1",
            "headers": {"Authorization": "Bearer Zx9qT3vLm2Rk8pW4a", "Cookie": "sid=Zx9qT3vLm2Rk8pW4b", "X-Auth": "Zx9qT3vLm2Rk8pW4c"},
            "env": {"DB_PASS": "Zx9qT3vLm2Rk8pW4d", "RAILS_MASTER_KEY": "Zx9qT3vLm2Rk8pW4e", "PATH": "/usr/bin"},
            "auth": {"user": "deploy", "pass": "Zx9qT3vLm2Rk8pW4f"},
        });
        let session = Session {
            events: vec![Event {
                timestamp: None,
                kind: EventKind::ToolCall(Box::new(ToolCall {
                    call_id: "c1".into(),
                    name: "http_request".into(),
                    kind: ToolKind::Other,
                    input,
                    input_size: 0,
                    command: None,
                    paths: Vec::new(),
                    label: None,
                    todos: Vec::new(),
                    gutter: crate::events::ReadGutter::None,
                    result: None,
                    status: ToolStatus::Unknown,
                    basis: StatusBasis::StatusWord,
                    agent_id: None,
                })),
            }],
            ..Default::default()
        };
        let policy = Policy::with(vec![Box::new(Secrets::new(&[]))]);
        let out = apply(session, &policy);
        let EventKind::ToolCall(call) = &out.events[0].kind else {
            panic!("expected a call")
        };
        let text = call.input.to_string();
        for c in ['a', 'b', 'c', 'd', 'e', 'f'] {
            assert!(!text.contains(&format!("Zx9qT3vLm2Rk8pW4{c}")), "{text}");
        }
        assert_eq!(call.input["env"]["PATH"], "/usr/bin");
        assert_eq!(call.input["auth"]["user"], "deploy");
        assert_eq!(call.input["url"], "https://api.internal/v1");
    }
}

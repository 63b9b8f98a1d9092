//! Secret redaction: credentials and secret values are replaced by `«redacted:<rule>»`, and
//! only the secret is replaced, so the key beside it stays readable.

use regex::{Captures, Regex};
use std::borrow::Cow;
use std::sync::LazyLock;

use super::Redactor;

/// One rule: a name for the placeholder and a regex whose group `s` (or whole match) is the
/// secret.
struct Rule {
    id: &'static str,
    re: Regex,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |id, pattern: &str| Rule {
        id,
        re: Regex::new(pattern).expect("fixed regex"),
    };
    vec![
        rule(
            "private-key",
            r"(?s)(?P<s>-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----)",
        ),
        rule(
            "anthropic-api-key",
            r"(?P<s>(?-u:\b)sk-ant-[A-Za-z0-9_-]{20,})",
        ),
        rule(
            "openai-api-key",
            r"(?P<s>(?-u:\b)sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{32,})",
        ),
        rule(
            "github-token",
            r"(?P<s>(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}))",
        ),
        rule(
            "aws-access-key-id",
            r"(?P<s>(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b))",
        ),
        rule(
            "slack-token",
            r"(?P<s>(?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,})",
        ),
        rule(
            "stripe-key",
            r"(?P<s>(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})",
        ),
        rule("google-api-key", r"(?P<s>(?-u:\b)AIza[0-9A-Za-z_-]{35})"),
        rule(
            "jwt",
            r"(?P<s>(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})",
        ),
        rule(
            "authorization-header",
            r"(?i)(?-u:\b)(?:authorization|proxy-authorization)\s*[:=]\s*(?:bearer|basic|token)\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})",
        ),
        rule(
            "url-password",
            r"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]+:(?P<s>[^@\s/]+)@",
        ),
        rule(
            "secret-assignment",
            r#"(?i)(?-u:\b)[A-Z0-9_.-]*(?:secret|token|passwd|password|api[_-]?key|access[_-]?key|private[_-]?key|credentials?)[A-Z0-9_]*["']?\s*[=:]\s*(?:"(?P<q>[^"\n]{4,})"|'(?P<r>[^'\n]{4,})'|(?P<s>[^\s"'`,;{}()\[\]<>]{6,}))"#,
        ),
    ]
});

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
                out = Cow::Owned(out.replace(lit.as_str(), "«redacted:user-string»"));
            }
        }
        for rule in RULES.iter() {
            if !rule.re.is_match(&out) {
                continue;
            }
            let replaced = rule.re.replace_all(&out, |caps: &Captures<'_>| {
                let whole = caps.get(0).map_or("", |m| m.as_str());
                let Some(secret) = caps.name("s").or(caps.name("q")).or(caps.name("r")) else {
                    return whole.to_owned();
                };
                if !plausible_secret(secret.as_str()) {
                    return whole.to_owned();
                }
                let start = secret.start() - caps.get(0).map_or(0, |m| m.start());
                let end = start + secret.len();
                format!("{}«redacted:{}»{}", &whole[..start], rule.id, &whole[end..])
            });
            if let Cow::Owned(s) = replaced {
                out = Cow::Owned(s);
            }
        }
        out
    }
}

/// Values that are never secrets: placeholders already redacted, numbers, literals and
/// references to variables.
fn plausible_secret(value: &str) -> bool {
    let v = value.trim();
    !(v.starts_with('«')
        || v.starts_with('$')
        || v.starts_with("process.env")
        || v.chars().all(|c| c.is_ascii_digit() || c == '.')
        || matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "none" | "undefined" | "redacted" | "required"
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redact(s: &str) -> String {
        Secrets::new(&["hunter2-corp".into()])
            .redact(s)
            .into_owned()
    }

    #[test]
    fn keeps_the_key_and_replaces_the_value() {
        assert_eq!(
            redact("export API_KEY=abcd1234efgh"),
            "export API_KEY=«redacted:secret-assignment»"
        );
        assert_eq!(
            redact(r#"{"password": "correct horse"}"#),
            r#"{"password": "«redacted:secret-assignment»"}"#
        );
    }

    #[test]
    fn redacts_known_token_shapes() {
        let out = redact("a ghp_abcdefghijklmnopqrstuvwxyz0123456789 b AKIAIOSFODNN7EXAMPLE c");
        assert_eq!(
            out,
            "a «redacted:github-token» b «redacted:aws-access-key-id» c"
        );
        let out = redact("postgres://app:s3cr3t@db:5432/x");
        assert_eq!(out, "postgres://app:«redacted:url-password»@db:5432/x");
        let out = redact("Authorization: Bearer abc.def.ghi123");
        assert!(
            out.ends_with("Bearer «redacted:authorization-header»"),
            "{out}"
        );
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
    fn leaves_look_alikes_alone() {
        for s in [
            "commit 3f2c1a9e8b7d6c5f4e3d2c1b0a9f8e7d6c5b4a39",
            "id 550e8400-e29b-41d4-a716-446655440000",
            "toolu_01ABCDEFGHJKLMNPQRSTUVWX",
            "src/token_parser.rs",
            "input_tokens: 123456",
            "API_KEY=$API_KEY",
        ] {
            assert_eq!(redact(s), s);
        }
    }
}

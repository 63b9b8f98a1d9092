//! Any text around a planted secret: redaction never panics, is idempotent, and the secret
//! never survives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tracebook::privacy::Redactor as _;
use tracebook::privacy::secrets::Secrets;

/// A GitHub token of the real shape: `ghp_` and 36 letters and digits.
const CANARY: &str = "ghp_FUZZcanaryFUZZcanaryFUZZcanary012345";

fuzz_target!(|text: &str| {
    let secrets = Secrets::new(&[]);
    let once = secrets.redact(text).into_owned();
    assert_eq!(secrets.redact(&once), once);
    let mid = text.len() / 2;
    if text.is_char_boundary(mid) {
        let planted = format!("{} {CANARY} {}", &text[..mid], &text[mid..]);
        assert!(!secrets.redact(&planted).contains(CANARY));
    }
});

//! Real headless Chromium for browser tests.
//!
//! [`chromium`] finds the browser (`$TRACEBOOK_CHROMIUM`, else `chromium`, `chromium-browser`
//! or `google-chrome` on `PATH`) and starts it with a fresh profile and no background
//! networking. Without a browser the tests say so and pass, except when `CI` is set: then a
//! missing browser fails them. Nothing here downloads a browser.

use headless_chrome::{Browser, LaunchOptions};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

fn find_chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("TRACEBOOK_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
        ] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// A started browser with its own profile folder, or `None` (with a note) when there is no
/// browser and `CI` is not set.
pub(crate) struct Chromium {
    pub(crate) browser: Browser,
    _profile: tempfile::TempDir,
}

pub(crate) fn chromium() -> Option<Chromium> {
    let Some(path) = find_chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set and no Chromium was found (install Debian's `chromium`, or set TRACEBOOK_CHROMIUM)"
        );
        eprintln!("no Chromium found: browser tests skipped (install `chromium` to run them)");
        return None;
    };
    let profile = tempfile::tempdir().expect("temporary profile folder");
    let args: Vec<&OsStr> = [
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
        "--hide-scrollbars",
    ]
    .iter()
    .map(OsStr::new)
    .collect();
    let options = LaunchOptions::default_builder()
        .path(Some(path))
        .headless(true)
        .sandbox(false)
        .user_data_dir(Some(profile.path().to_owned()))
        .window_size(Some((1280, 900)))
        .args(args)
        .idle_browser_timeout(std::time::Duration::from_secs(120))
        .build()
        .expect("launch options");
    let browser = Browser::new(options).expect("Chromium starts");
    Some(Chromium {
        browser,
        _profile: profile,
    })
}

/// A `file://` URL for a local path.
pub(crate) fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[test]
fn a_deep_link_opens_its_folds_and_highlights_the_target() -> anyhow::Result<()> {
    let Some(chrome) = chromium() else {
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let page = dir.path().join("sample.html");
    let report = crate::report(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude-code/sample.jsonl"),
    )?;
    std::fs::write(&page, tracebook::render::html(&report)?)?;
    let tab = chrome.browser.new_tab()?;
    tab.navigate_to(&format!("{}#t2-s3", file_url(&page)))?
        .wait_until_navigated()?;
    let state = tab
        .evaluate(
            "(() => { const el = document.getElementById('t2-s3');
               return [el.closest('details.process').open, el.classList.contains('targeted'),
                       el.querySelector('details').open].join(','); })()",
            false,
        )?
        .value
        .and_then(|v| v.as_str().map(str::to_owned));
    assert_eq!(state.as_deref(), Some("true,true,true"));
    Ok(())
}

//! The notebook's `<main id="notebook">` element of every fixture session, pinned as an insta
//! snapshot: a template or rendering change shows up as a reviewable diff of the turns'
//! markup. The page around it (head, styles, script, the embedded report, the footer's
//! generation time) is left out: it is noise next to the turns, and other tests pin it.
//!
//! Review changes with `cargo insta review`.

use crate::{fixtures, report};

/// The page's `<main id="notebook">` element, its tags included.
fn main_element(html: &str) -> anyhow::Result<&str> {
    const OPEN: &str = "<main id=\"notebook\">";
    const CLOSE: &str = "</main>";
    let start = html
        .find(OPEN)
        .ok_or_else(|| anyhow::anyhow!("the page has no {OPEN}"))?;
    let end = html[start..]
        .find(CLOSE)
        .ok_or_else(|| anyhow::anyhow!("the page's {OPEN} is not closed"))?;
    Ok(&html[start..start + end + CLOSE.len()])
}

#[test]
fn notebook_main_of_each_fixture() {
    insta::glob!(fixtures(), "*/*/session.*", |path| {
        let html = report(path)
            .and_then(|r| Ok(tracebook::render::html(&r)?))
            .expect("fixture renders");
        let main = main_element(&html).expect("the page has its main element");
        insta::assert_snapshot!(main);
    });
}

//! One JSON document (`format: json`, or a file with a document ending): read whole, up to
//! [`MAX_DOCUMENT`], its records found at the layout's `records_at`.

use rayon::prelude::*;
use serde_json::Value as Json;
use std::io::Read as _;

use super::json::{LONE_SURROGATE, describe_json_error, parse_mended};
use super::open::Opened;
use crate::adapters::spec::InputSpec;
use crate::warning::Warning;

/// The largest JSON document (`format: json` or a document ending) read whole.
pub const MAX_DOCUMENT: u64 = 1 << 30;

/// A whole JSON document: a byte order mark before it is passed over, lone surrogate escapes
/// are mended with a warning.
pub(super) fn parse_document(
    bytes: &[u8],
    source: &str,
    warnings: &mut Vec<Warning>,
) -> serde_json::Result<Json> {
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let (doc, mended) = parse_mended(text, |t| serde_json::from_str::<Json>(t))?;
            if mended {
                warnings.push(Warning::whole(source, LONE_SURROGATE));
            }
            Ok(doc)
        }
        Err(_) => serde_json::from_slice(bytes),
    }
}

/// A JSON document read: its own fields (its records taken out), and its records, each made
/// into what the reader keeps of it, in order.
pub(super) struct Document<T> {
    pub(super) facts: Json,
    pub(super) records: Vec<T>,
}

/// Reads a whole JSON document and makes each of its records what `item` makes of it (with
/// its 1-based place), on every core. `None` when there is nothing to read: the document is
/// too large, cut short, not JSON, or holds no record list; a warning says which.
pub(super) fn read<T: Send>(
    opened: Opened<'_>,
    layout: &InputSpec,
    source: &str,
    item: &(dyn Fn(usize, Json) -> T + Sync),
    warnings: &mut Vec<Warning>,
) -> std::io::Result<Option<Document<T>>> {
    let Opened { reader, cut } = opened;
    let mut text = Vec::new();
    reader.take(MAX_DOCUMENT + 1).read_to_end(&mut text)?;
    if text.len() as u64 > MAX_DOCUMENT {
        warnings.push(Warning::whole(
            source,
            format!(
                "a JSON document larger than {} MiB; not read",
                MAX_DOCUMENT >> 20
            ),
        ));
        return Ok(None);
    }
    if let Some(cut) = cut.as_ref().filter(|c| c.passed()) {
        warnings.push(cut.warning(source, 1));
        return Ok(None);
    }
    let mut doc: Json = match parse_document(&text, source, warnings) {
        Ok(d) => d,
        Err(e) => {
            warnings.push(Warning::whole(
                source,
                format!("not valid JSON ({})", describe_json_error(&e)),
            ));
            return Ok(None);
        }
    };
    let at = layout.records_at.as_deref().unwrap_or("");
    let Some(Json::Array(records)) = doc.pointer_mut(at).map(Json::take) else {
        warnings.push(Warning::whole(source, format!("no record list at `{at}`")));
        return Ok(None);
    };
    let records = records
        .into_par_iter()
        .enumerate()
        .map(|(i, rec)| item(i + 1, rec))
        .collect();
    Ok(Some(Document {
        facts: doc,
        records,
    }))
}

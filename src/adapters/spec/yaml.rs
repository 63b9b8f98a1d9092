//! The one file under `adapters/` that names the YAML crate: it reads an adapter document
//! into the raw layer ([`super::de`]) and sets its `*_map` tables apart.

use std::collections::BTreeMap;

use super::de::{RawAdapter, RawTable};
use super::{AdapterError, split_tables};

/// Reads one adapter document: the fixed schema (checked with `deny_unknown_fields`) and the
/// top-level `*_map` keys other than `event_map`, which are named tables.
pub(super) fn read(
    file: &str,
    text: &str,
) -> Result<(RawAdapter, BTreeMap<String, RawTable>), AdapterError> {
    let doc: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(text).map_err(|e| AdapterError::Syntax {
            file: file.to_owned(),
            message: e.to_string(),
        })?;
    let serde_yaml_ng::Value::Mapping(map) = doc else {
        return Err(AdapterError::Syntax {
            file: file.to_owned(),
            message: "the document must be a mapping".to_owned(),
        });
    };
    let (fixed, raw_tables) = split_tables(
        file,
        map,
        |k| k.as_str().unwrap_or_default(),
        serde_yaml_ng::from_value,
    )?;
    let raw: RawAdapter =
        serde_yaml_ng::from_value(serde_yaml_ng::Value::Mapping(fixed.into_iter().collect()))
            .map_err(|e| AdapterError::Syntax {
                file: file.to_owned(),
                message: e.to_string(),
            })?;
    Ok((raw, raw_tables))
}

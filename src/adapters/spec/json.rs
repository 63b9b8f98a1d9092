//! Reads a built-in adapter in the JSON form `build.rs` writes of its YAML file: the same raw
//! layer and tables as [`super::yaml::read`] gives, without a YAML parser at each start.

use std::collections::BTreeMap;

use serde_json::Value;

use super::de::{RawAdapter, RawTable};
use super::{AdapterError, split_tables};

/// Reads one adapter document written as JSON, as [`super::yaml::read`] reads its YAML.
pub(super) fn read(
    file: &str,
    text: &str,
) -> Result<(RawAdapter, BTreeMap<String, RawTable>), AdapterError> {
    let syntax = |e: serde_json::Error| AdapterError::Syntax {
        file: file.to_owned(),
        message: e.to_string(),
    };
    let Value::Object(map) = serde_json::from_str(text).map_err(syntax)? else {
        return Err(AdapterError::Syntax {
            file: file.to_owned(),
            message: "the document must be a mapping".to_owned(),
        });
    };
    let (fixed, raw_tables) = split_tables(file, map, |k| k.as_str(), serde_json::from_value)?;
    let raw: RawAdapter =
        serde_json::from_value(Value::Object(fixed.into_iter().collect())).map_err(syntax)?;
    Ok((raw, raw_tables))
}

//! Warnings: what was skipped or doubtful, returned beside every result and listed in the report.

use serde::Serialize;
use std::fmt;

/// Something the reader skipped or could not decide, naming the input and the line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The input's display name (a file name, never a full path).
    pub source: String,
    /// 1-based line number, when the warning is about one line.
    pub line: Option<usize>,
    /// What happened, lowercase, with what was done about it.
    pub message: String,
}

impl Warning {
    /// A warning about one line of an input.
    pub fn at_line(source: &str, line: usize, message: impl Into<String>) -> Self {
        Self {
            source: source.to_owned(),
            line: Some(line),
            message: message.into(),
        }
    }

    /// A warning about a whole input.
    pub fn whole(source: &str, message: impl Into<String>) -> Self {
        Self {
            source: source.to_owned(),
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.source, line, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

//! Errors at the boundary: a bad scenario names the field, the value and what is wrong.
//!
//! The field keeps its entry (`flows[3]`) apart from the key within it (`cc`), so that the front
//! end can point at the table of the user's file the entry came from without parsing text.

use std::fmt;

/// Where in the resolved scenario a problem is: a top-level key (`duration`), or a key of one
/// entry of a list (`links[0]` + `aqm.max_p`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The list (`links`, `flows`, `sources`, `exchanges`) and the index in it, if any.
    pub entry: Option<(&'static str, usize)>,
    pub key: String,
}

impl Field {
    pub fn top(key: impl Into<String>) -> Self {
        Self {
            entry: None,
            key: key.into(),
        }
    }

    pub fn of(list: &'static str, index: usize, key: impl Into<String>) -> Self {
        Self {
            entry: Some((list, index)),
            key: key.into(),
        }
    }

    /// A key nested below this one: `aqm` → `aqm.max_p`.
    pub fn child(&self, key: &str) -> Self {
        Self {
            entry: self.entry,
            key: format!("{}.{key}", self.key),
        }
    }
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.entry {
            Some((list, index)) => write!(f, "{list}[{index}].{}", self.key),
            None => f.write_str(&self.key),
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ScenarioError {
    pub field: Field,
    pub value: String,
    pub reason: String,
}

impl ScenarioError {
    pub fn new(field: Field, value: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field,
            value: value.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: '{}' {}", self.field, self.value, self.reason)
    }
}

/// Why a run gave no output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The time series could not grow: the run stops rather than abort the process (Rust's
    /// default on a failed allocation).
    #[error("out of memory: the time series could not grow past {rows} rows")]
    OutOfMemory { rows: usize },
    /// [`crate::progress::Progress::stop`] was called.
    #[error("stopped before the end")]
    Stopped,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_reads_as_its_path() {
        let aqm = Field::of("links", 2, "aqm");
        assert_eq!(aqm.child("max_p").to_string(), "links[2].aqm.max_p");
        assert_eq!(Field::top("duration").to_string(), "duration");
    }
}

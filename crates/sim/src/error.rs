//! Errors at the boundary: a bad scenario names the field, the value and what is wrong.

use std::fmt;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct ScenarioError {
    pub field: String,
    pub value: String,
    pub reason: String,
}

impl ScenarioError {
    pub fn new(
        field: impl Into<String>,
        value: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
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

//! Every failure the emulator reports, as one typed enum; `main` prints it as one line.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A config value that cannot be honoured: names the field and the value.
    #[error("config {field}: '{value}' {reason}")]
    Invalid {
        field: String,
        value: String,
        reason: String,
    },
    /// The config file is not valid JSON of the expected shape (serde names the field).
    #[error("config '{path}': {message}")]
    Parse { path: String, message: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl LabError {
    pub fn invalid(
        field: impl Into<String>,
        value: impl ToString,
        reason: impl Into<String>,
    ) -> Self {
        LabError::Invalid {
            field: field.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        LabError::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, LabError>;

//! The error of a scenario a user wrote, and its warnings.

use std::fmt;

/// A user mistake in a scenario: the key path and a message.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), message: message.into() }
    }

    /// Key `key` of the section at `path` holds `value`, which is refused: the error names
    /// the key, the value and what is accepted.
    pub fn not_accepted(path: &str, key: &str, value: impl std::fmt::Display, accepted: &str) -> Self {
        ScenarioError::new(format!("{path}.{key}"), format!("{value} is not accepted (accepted: {accepted})"))
    }

    /// Key `key` of the section at `path` holds queue index `value`, which is not below
    /// `switch.queues` = `queues`: the error names the key, the value, the queues and why
    /// a queue must be left above it.
    pub fn queue_index(path: &str, key: &str, value: u32, queues: u32, why: &str) -> Self {
        ScenarioError::new(
            format!("{path}.{key}"),
            format!(
                "{value} is not accepted with switch.queues = {queues} (accepted: 0 to {}: {why})",
                queues.saturating_sub(1)
            ),
        )
    }

    /// A serde error at `path` (as `serde_path_to_error` writes it, "." for the top),
    /// joined with the key path a scheme's section carries inside its message.
    pub(crate) fn from_serde(path: String, message: &str) -> Self {
        let path = if path == "." { String::new() } else { path };
        match super::keys::split_nested(message) {
            Some((inner, message)) if path.is_empty() => ScenarioError::new(inner, clean_serde_message(message)),
            Some((inner, message)) => ScenarioError::new(format!("{path}.{inner}"), clean_serde_message(message)),
            None => ScenarioError::new(path, clean_serde_message(message)),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// Warnings: legal settings that are almost certainly a mistake.
pub type Warnings = Vec<String>;

/// Shortens serde's messages: "unknown field `x`, expected one of ..." stays readable.
fn clean_serde_message(message: &str) -> String {
    let message = message.trim();
    message.replace("unknown variant", "unknown value").replace("unknown field", "unknown key")
}

//! Why an agent's config could not be loaded or turned into a registry.

use std::fmt;

/// A config problem, naming the file and the entry. The agent does not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct AgentConfigError {
    /// The file (or `<inline>`).
    pub file: String,
    /// The entry, e.g. `hooks.class_hooks[1] (connector_rate_limit)`.
    pub entry: Option<String>,
    /// What is wrong and what to do.
    pub message: String,
}

impl AgentConfigError {
    pub(crate) fn new(file: &str, entry: Option<String>, message: impl Into<String>) -> Self {
        AgentConfigError {
            file: file.to_owned(),
            entry,
            message: message.into(),
        }
    }
}

impl fmt::Display for AgentConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.entry {
            Some(entry) => write!(f, "{}: {entry}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Every problem found in one config, reported together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct AgentConfigErrors(pub Vec<AgentConfigError>);

impl fmt::Display for AgentConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl From<AgentConfigError> for AgentConfigErrors {
    fn from(error: AgentConfigError) -> Self {
        AgentConfigErrors(vec![error])
    }
}

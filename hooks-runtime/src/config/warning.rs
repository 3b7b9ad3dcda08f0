//! What a config check could not verify: the agent runs, and `hooks check`
//! prints it.

use std::fmt;

/// Something in an agent's config that the build could not check (an
/// `args.…` path no schema covers, say). Unlike an
/// [`AgentConfigError`](super::AgentConfigError) it does not stop the agent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConfigWarning {
    /// The file (or `<inline>`).
    pub file: String,
    /// The entry, e.g. `hooks.class_hooks[1] (readonly_guard)`, or the
    /// hook's name when it does not come from an entry of the file.
    pub entry: Option<String>,
    /// What was not checked, and why.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.entry {
            Some(entry) => write!(f, "{}: {entry}: warning: {}", self.file, self.message),
            None => write!(f, "{}: warning: {}", self.file, self.message),
        }
    }
}

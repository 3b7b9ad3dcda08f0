//! Why a registry could not be built.

use std::fmt;

/// A reason a registry could not be built. Nothing is built when any occurs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// A name was asked for that nothing registered.
    #[error("unknown hook \"{name}\"{}", suggestion_text(.suggestion))]
    UnknownHook {
        /// The name asked for.
        name: String,
        /// The closest registered name, if one is close.
        suggestion: Option<String>,
    },
    /// Two hooks share a name.
    #[error(
        "duplicate hook name \"{name}\" ({first} and {second}); hook names must be unique within a registry"
    )]
    DuplicateName {
        /// The shared name.
        name: String,
        /// The point of the first hook with that name.
        first: crate::HookPoint,
        /// The point of the second.
        second: crate::HookPoint,
    },
    /// A hook has an empty name.
    #[error("a {point} hook has an empty name; give every hook a name")]
    EmptyName {
        /// The hook's point.
        point: crate::HookPoint,
    },
    /// Several of the above.
    #[error("{}", Lines(.0))]
    Several(Vec<RegistryError>),
}

fn suggestion_text(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(name) => format!("; did you mean \"{name}\"?"),
        None => String::new(),
    }
}

struct Lines<'a>(&'a [RegistryError]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, error) in self.0.iter().enumerate() {
            if index > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl RegistryError {
    /// The individual errors (one, unless this is [`RegistryError::Several`]).
    pub fn errors(&self) -> &[RegistryError] {
        match self {
            RegistryError::Several(errors) => errors,
            single => std::slice::from_ref(single),
        }
    }
}

//! Why a registry could not be built.

use std::fmt;

use super::registration::Declaration;

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
        "duplicate hook name \"{name}\": declared at {} ({first}) and {} ({second}){}; \
         hook names must be unique within a registry, so rename one (or add it once)",
        place(.first_at),
        place(.second_at),
        same(.first_at, .second_at)
    )]
    DuplicateName {
        /// The shared name.
        name: String,
        /// The point of the first hook with that name.
        first: crate::HookPoint,
        /// Where the first was declared, if known.
        first_at: Option<Declaration>,
        /// The point of the second.
        second: crate::HookPoint,
        /// Where the second was declared, if known.
        second_at: Option<Declaration>,
    },
    /// A hook has an empty name.
    #[error("a {point} hook declared at {} has an empty name; give every hook a name", place(.at))]
    EmptyName {
        /// The hook's point.
        point: crate::HookPoint,
        /// Where it was declared, if known.
        at: Option<Declaration>,
    },
    /// Several of the above.
    #[error("{}", Lines(.0))]
    Several(Vec<RegistryError>),
}

/// A declaration's place, or a note that it is not known.
fn place(at: &Option<Declaration>) -> String {
    match at {
        Some(at) => at.to_string(),
        None => "an unknown place".to_owned(),
    }
}

/// A note when both hooks come from one declaration (added twice).
fn same(first: &Option<Declaration>, second: &Option<Declaration>) -> &'static str {
    if first.is_some() && first == second {
        ", the same declaration added twice"
    } else {
        ""
    }
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

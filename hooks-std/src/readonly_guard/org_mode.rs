//! Where the read-only flag of an org comes from.

use std::collections::HashSet;
use std::sync::RwLock;

use std::future::Future;
use std::pin::Pin;

/// The mode lookup failed; the guard then blocks (fail closed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("could not read the mode of org \"{org_id}\": {message}")]
pub struct OrgModeError {
    /// The org asked about.
    pub org_id: String,
    /// What went wrong.
    pub message: String,
}

/// The future an [`OrgModeSource`] returns.
pub type ModeFuture<'a> = Pin<Box<dyn Future<Output = Result<bool, OrgModeError>> + Send + 'a>>;

/// Answers "is this org read-only right now?".
pub trait OrgModeSource: Send + Sync {
    /// Whether `org_id` is read-only. An error makes the guard block.
    fn is_read_only<'a>(&'a self, org_id: &'a str) -> ModeFuture<'a>;
}

/// An in-process set of read-only orgs, changeable at run time.
#[derive(Debug, Default)]
pub struct StaticOrgModes {
    read_only: RwLock<HashSet<String>>,
}

impl StaticOrgModes {
    /// No org is read-only.
    pub fn new() -> Self {
        Self::default()
    }

    /// These orgs are read-only.
    pub fn with_read_only<I: IntoIterator<Item = S>, S: Into<String>>(orgs: I) -> Self {
        StaticOrgModes {
            read_only: RwLock::new(orgs.into_iter().map(Into::into).collect()),
        }
    }

    /// Turns read-only mode on or off for `org_id`.
    pub fn set_read_only(&self, org_id: &str, read_only: bool) {
        let mut orgs = self
            .read_only
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if read_only {
            orgs.insert(org_id.to_owned());
        } else {
            orgs.remove(org_id);
        }
    }
}

impl OrgModeSource for StaticOrgModes {
    fn is_read_only<'a>(&'a self, org_id: &'a str) -> ModeFuture<'a> {
        let read_only = self
            .read_only
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(org_id);
        Box::pin(async move { Ok(read_only) })
    }
}

//! What factories may need besides their config: typed shared resources.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

/// A type map of shared resources (a database pool, the approval machinery,
/// an org-mode source…) handed to every [`HookFactory`](super::HookFactory).
///
/// ```
/// use hooks_runtime::Resources;
///
/// #[derive(Clone)]
/// struct ApiKey(&'static str);
///
/// let resources = Resources::new().with(ApiKey("k-123"));
/// assert_eq!(resources.get::<ApiKey>().map(|key| key.0), Some("k-123"));
/// assert!(resources.get::<String>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct Resources {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Resources {
    /// No resources.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the resource of type `T`.
    pub fn with<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.insert(value);
        self
    }

    /// Adds (or replaces) the resource of type `T`.
    pub fn insert<T: Any + Send + Sync>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The resource of type `T`, if present.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
    }

    /// The resource of type `T`, or an error saying which hook needs what.
    pub fn require<T: Any + Send + Sync>(&self, hook: &str, what: &str) -> Result<&T, String> {
        self.get::<T>().ok_or_else(|| {
            format!(
                "hook \"{hook}\" needs {what}; add it to the Resources the registry is built with"
            )
        })
    }
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Resources({} entries)", self.map.len())
    }
}

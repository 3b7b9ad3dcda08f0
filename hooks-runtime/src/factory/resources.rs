//! What factories may need besides their config: shared resources under
//! typed keys.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// The name and type of one resource.
///
/// A key fixes the type a resource is stored and looked up as, so a value
/// of a related type cannot be stored where another was meant and then
/// silently not found: storing an `Arc<DatabaseOrgModes>` under a key of
/// `Arc<dyn OrgModeSource>` coerces it to the trait object, and a value of
/// an unrelated type does not compile. The crate that needs a resource
/// declares its key as a constant.
pub struct ResourceKey<T> {
    name: &'static str,
    _type: PhantomData<fn() -> T>,
}

impl<T> ResourceKey<T> {
    /// A key; `name` says what the resource is, in error messages.
    pub const fn new(name: &'static str) -> Self {
        ResourceKey {
            name,
            _type: PhantomData,
        }
    }

    /// What the resource is.
    pub const fn name(&self) -> &'static str {
        self.name
    }
}

impl<T> Clone for ResourceKey<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ResourceKey<T> {}

impl<T> fmt::Debug for ResourceKey<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ResourceKey({})", self.name)
    }
}

/// Shared resources (a database pool, the approval machinery, an org-mode
/// source…) handed to every [`HookFactory`](super::HookFactory), each under
/// its [`ResourceKey`].
///
/// ```
/// use hooks::factory::{ResourceKey, Resources};
///
/// #[derive(Clone, Debug)]
/// struct ApiKey(&'static str);
/// const API_KEY: ResourceKey<ApiKey> = ResourceKey::new("the CRM API key");
///
/// let resources = Resources::new().with(API_KEY, ApiKey("k-123"));
/// assert_eq!(resources.get(API_KEY).map(|key| key.0), Some("k-123"));
/// let missing = Resources::new().require(API_KEY, "crm_lookup").unwrap_err();
/// assert!(missing.contains("hook \"crm_lookup\" needs the CRM API key"));
/// ```
#[derive(Clone, Default)]
pub struct Resources {
    map: HashMap<(&'static str, TypeId), Arc<dyn Any + Send + Sync>>,
}

impl Resources {
    /// No resources.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the resource under `key`.
    pub fn with<T: Any + Send + Sync>(mut self, key: ResourceKey<T>, value: T) -> Self {
        self.insert(key, value);
        self
    }

    /// Adds (or replaces) the resource under `key`.
    pub fn insert<T: Any + Send + Sync>(&mut self, key: ResourceKey<T>, value: T) {
        self.map
            .insert((key.name, TypeId::of::<T>()), Arc::new(value));
    }

    /// The resource under `key`, if present.
    pub fn get<T: Any + Send + Sync>(&self, key: ResourceKey<T>) -> Option<&T> {
        self.map
            .get(&(key.name, TypeId::of::<T>()))
            .and_then(|value| value.downcast_ref::<T>())
    }

    /// The resource under `key`, or an error saying which hook needs what.
    pub fn require<T: Any + Send + Sync>(
        &self,
        key: ResourceKey<T>,
        hook: &str,
    ) -> Result<&T, String> {
        self.get(key).ok_or_else(|| {
            format!(
                "hook \"{hook}\" needs {}; add it to the Resources the registry is built with",
                key.name
            )
        })
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&str> = self.map.keys().map(|(name, _)| *name).collect();
        names.sort_unstable();
        f.debug_tuple("Resources").field(&names).finish()
    }
}

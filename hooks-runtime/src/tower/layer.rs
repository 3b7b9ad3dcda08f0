//! The layer.

use tower_layer::Layer;

use super::service::HookService;
use crate::registry::HookRegistry;

/// A [`Layer`] that runs every call of the service it wraps through a
/// [`HookRegistry`]: `ServiceBuilder::new().layer(HookLayer::new(registry))`.
///
/// The wrapped service takes a [`ToolCall`](super::ToolCall) and answers with
/// the tool's JSON result; see [`HookService`] for what the layered service
/// answers.
#[derive(Debug, Clone)]
pub struct HookLayer {
    registry: HookRegistry,
}

impl HookLayer {
    /// A layer over `registry` (cheap to clone: registries are shared).
    pub fn new(registry: HookRegistry) -> Self {
        HookLayer { registry }
    }
}

impl<S> Layer<S> for HookLayer {
    type Service = HookService<S>;

    fn layer(&self, inner: S) -> HookService<S> {
        HookService::new(self.registry.clone(), inner)
    }
}

//! Entry points for the fuzz targets in `fuzz/`, compiled only with
//! `--cfg fuzzing`: the proxy's own decoders of what an upstream server
//! and a client send, which are not public otherwise.

use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::Value;

/// A `resources/read` URI as the hooks see it, or `None` when it is
/// refused.
pub fn resource_uri(raw: &str) -> Option<String> {
    super::resource_uri::normalized(raw)
}

/// What the post hooks see of an upstream tool result.
pub fn hooks_view(result: &CallToolResult) -> Value {
    super::call::hooks_view(result)
}

/// The result the client receives for the value the post hooks left.
pub fn rebuilt(value: &Value) -> Result<CallToolResult, String> {
    super::call::rebuilt(value)
}

/// A sealer of held calls' `requestState`, with a fresh key.
pub struct Sealer(super::request_state::Sealer);

impl Sealer {
    /// A sealer, or `None` when the system has no randomness.
    pub fn new() -> Option<Self> {
        super::request_state::Sealer::new().map(Self)
    }

    /// A state sealed for a fresh held call, bound to `binding`, with its
    /// id as text.
    pub fn seal(&self, binding: &[u8]) -> Option<(String, String)> {
        let id = self.0.fresh_id()?;
        let state = self.0.seal(&id, Duration::from_secs(600), binding)?;
        Some((state, format!("{id:?}")))
    }

    /// The id a client's `state` opens to for `binding`, as text.
    pub fn open(&self, state: &str, binding: &[u8]) -> Option<String> {
        self.0.open(state, binding).ok().map(|id| format!("{id:?}"))
    }
}

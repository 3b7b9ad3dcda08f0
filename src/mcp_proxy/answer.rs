//! The shape of what the proxy answers with, whichever protocol revision
//! the client speaks.
//!
//! MCP 2026-07-28 requires every result to say `resultType`; a result
//! passed on from an upstream of an earlier revision has none, and the
//! client refuses it. rmcp drops the field again for clients of earlier
//! revisions. Caching hints (`ttlMs`, `cacheScope`) are the proxy's to
//! give, not the upstream's: what a client may keep, and for whom, is what
//! the proxy (after its hooks and its hidden tools) answered, so the
//! upstream's hints are dropped and rmcp fills the conservative default
//! (not fresh, private).

use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ReadResourceResult,
    ResultType,
};

/// A result the proxy answers a client with.
pub(super) trait Answer {
    /// The result marked complete, without the upstream's caching hints.
    fn answered(self) -> Self;
}

macro_rules! cacheable {
    ($($result:ty),*) => {$(
        impl Answer for $result {
            fn answered(mut self) -> Self {
                self.result_type = Some(ResultType::COMPLETE);
                self.ttl_ms = None;
                self.cache_scope = None;
                self
            }
        }
    )*};
}

macro_rules! not_cacheable {
    ($($result:ty),*) => {$(
        impl Answer for $result {
            fn answered(mut self) -> Self {
                self.result_type = Some(ResultType::COMPLETE);
                self
            }
        }
    )*};
}

cacheable!(
    ListToolsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListPromptsResult,
    ReadResourceResult
);
not_cacheable!(CallToolResult, GetPromptResult, CompleteResult);

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::CacheScope;

    #[test]
    fn a_passed_on_listing_is_complete_and_keeps_no_upstream_hints() {
        let upstream: ListToolsResult = serde_json::from_value(serde_json::json!({
            "tools": [],
            "ttlMs": 86_400_000,
            "cacheScope": "public",
        }))
        .expect("a listing");
        let answered = upstream.answered();
        assert_eq!(answered.result_type, Some(ResultType::COMPLETE));
        assert_eq!(answered.ttl_ms, None);
        assert_ne!(answered.cache_scope, Some(CacheScope::Public));
    }
}

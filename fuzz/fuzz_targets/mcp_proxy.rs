//! What the MCP proxy decodes itself: a `resources/read` URI, an upstream
//! tool result (the view the post hooks get, and the result rebuilt from
//! it), and a `requestState` a client hands back. Beyond not failing: a
//! URI reads the same once normalised; a result rebuilt from the hooks'
//! view shows the hooks that same view (what the model reads is what they
//! saw); no state opens unless this proxy sealed it for the same call.

#![no_main]

use std::sync::LazyLock;

use hooks::mcp_proxy::fuzzing::{Sealer, hooks_view, rebuilt, resource_uri};
use libfuzzer_sys::fuzz_target;
use rmcp::model::CallToolResult;
use serde_json::Value;

static SEALER: LazyLock<Sealer> = LazyLock::new(|| Sealer::new().expect("a sealer"));

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    if let Some(normal) = resource_uri(text) {
        assert_eq!(
            resource_uri(&normal).as_deref(),
            Some(normal.as_str()),
            "{text:?} normalises to {normal:?}, which does not normalise to itself"
        );
    }

    if let Ok(result) = serde_json::from_str::<CallToolResult>(text) {
        let view = hooks_view(&result);
        let back = rebuilt(&view)
            .unwrap_or_else(|problem| panic!("the view of {text:?} cannot be rebuilt: {problem}"));
        assert_eq!(
            hooks_view(&back),
            view,
            "the rebuilt result of {text:?} reads differently"
        );
    }
    if let Ok(value) = serde_json::from_str::<Value>(text)
        && let Ok(result) = rebuilt(&value)
    {
        let view = hooks_view(&result);
        let again = rebuilt(&view).expect("a rebuilt result rebuilds");
        assert_eq!(hooks_view(&again), view);
    }

    assert_eq!(
        SEALER.open(text, b"call"),
        None,
        "a forged state opened: {text:?}"
    );
    if let Some((state, id)) = SEALER.seal(data) {
        assert_eq!(SEALER.open(&state, data), Some(id));
        let mut other = data.to_vec();
        other.push(b'x');
        assert_eq!(
            SEALER.open(&state, &other),
            None,
            "a state opened for another call"
        );
    }
});

use hooks::prelude::*;

#[derive(Debug)]
struct PolicyError;

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("policy store unavailable")
    }
}

#[pre_tool_use]
async fn with_result(_ctx: &HookContext) -> Result<HookResult, PolicyError> {
    Ok(HookResult::allow())
}

#[pre_tool_use]
async fn with_string_error(_: &hooks::HookContext) -> Result<HookResult, String> {
    Err("nope".into())
}

fn main() {}

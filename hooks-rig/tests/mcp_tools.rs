//! MCP tools reach a rig agent through `rig-rmcp`, as dynamic tools; wrapped
//! by the hooks they are governed like any other tool. The server is the
//! reference "everything" MCP server from the npm registry (`npm ci --prefix
//! tests/mcp` at the workspace root); without it or Node the tests print
//! SKIPPED and pass.

use std::path::PathBuf;

use hooks::{Hook, HookContext, HookOutcome, HookRegistry, HookResult, PreToolUseHook};
use hooks_rig::scripted::{Turn, scripted_model};
use hooks_rig::{CallContext, Hooks};
use rig_agent::AgentBuilder;
use rig_core::tool::DynamicTool;
use rmcp::ServiceExt as _;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::json;

/// The everything server's entry point, or why the tests skip.
fn everything_server() -> Option<PathBuf> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !script.exists() || !node {
        println!(
            "SKIPPED: Node or tests/mcp/node_modules is missing (run `npm ci --prefix tests/mcp` at the workspace root)"
        );
        return None;
    }
    Some(script)
}

/// Connects to the server over stdio and returns its tools as rig dynamic tools.
async fn mcp_tools(script: PathBuf) -> (RunningService<RoleClient, ()>, Vec<DynamicTool>) {
    let mut command = tokio::process::Command::new("node");
    command.arg(script);
    let transport = TokioChildProcess::new(command).expect("start the everything server");
    let client = ().serve(transport).await.expect("initialize the MCP session");
    let listed = client.list_all_tools().await.expect("tools/list");
    let tools = rig_rmcp::tools_from_server(listed, client.peer())
        .into_iter()
        .map(|tool| DynamicTool::try_from(tool).expect("a named tool"))
        .collect();
    (client, tools)
}

/// Refuses sums with a large first operand; shouts whatever `echo` is asked to say.
struct Guard;

impl Hook for Guard {
    fn name(&self) -> &str {
        "mcp_guard"
    }

    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        HookOutcome::ready(match ctx.tool_name.as_str() {
            "get-sum" if ctx.tool_args["a"].as_f64().is_some_and(|a| a > 1000.0) => {
                HookResult::block("sums over 1000 need a person")
            }
            "echo" => {
                let message = ctx.tool_args["message"].as_str().unwrap_or_default();
                HookResult::allow().with_args(json!({"message": message.to_uppercase()}))
            }
            _ => HookResult::allow(),
        })
    }
}

impl PreToolUseHook for Guard {}

#[tokio::test]
async fn mcp_tools_through_rig_are_blocked_and_rewritten_by_the_hooks() {
    let Some(script) = everything_server() else {
        return;
    };
    let (client, tools) = mcp_tools(script).await;
    let hooks = Hooks::new(HookRegistry::builder().pre(Guard).build().unwrap());
    let (model, runtime) = scripted_model(vec![
        Turn::call("c1", "get-sum", json!({"a": 2, "b": 3})),
        Turn::call("c2", "get-sum", json!({"a": 5000, "b": 3})),
        Turn::call("c3", "echo", json!({"message": "quiet please"})),
        Turn::answer("Done."),
    ]);
    let agent = AgentBuilder::new(model)
        .dynamic_tools(hooks.dynamic_tools(tools))
        .build();
    let ids = CallContext::new()
        .user("alice")
        .org("acme")
        .conversation("mcp-1");
    let run = hooks
        .prepare(agent.prompt("Add and echo.").max_turns(6), ids)
        .await
        .unwrap();
    assert_eq!(run.await.unwrap().output(), "Done.");

    let allowed = &runtime.results_seen(1)[0].text;
    assert!(
        allowed.contains("The sum of 2 and 3 is 5."),
        "the sum ran on the server: {allowed}"
    );
    let blocked = &runtime.results_seen(2)[0].text;
    assert_eq!(
        blocked,
        "Blocked by hook `mcp_guard`: sums over 1000 need a person"
    );
    let echoed = &runtime.results_seen(3)[0].text;
    assert!(
        echoed.contains("Echo: QUIET PLEASE"),
        "the server received the rewritten args: {echoed}"
    );
    client.cancel().await.expect("close the MCP session");
}

//! The hooks as [tower](https://docs.rs/tower) middleware: [`HookLayer`] puts
//! a [`HookRegistry`](crate::HookRegistry) in front of any tool executor that
//! is a `Service<ToolCall>` answering with the tool's JSON result.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use hooks::tower::{HookLayer, ToolCall};
//! use hooks::{Hook, HookContext, HookOutcome, HookRegistry, HookResult, PreToolUseHook};
//! use serde_json::json;
//! use tower::{ServiceBuilder, ServiceExt as _, service_fn};
//!
//! struct NoRm;
//! impl Hook for NoRm {
//!     fn name(&self) -> &str {
//!         "no_rm"
//!     }
//!     fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
//!         let rm = ctx.tool_args["cmd"].as_str().is_some_and(|cmd| cmd.starts_with("rm "));
//!         HookOutcome::ready(if rm { HookResult::block("rm is not allowed") } else { HookResult::allow() })
//!     }
//! }
//! impl PreToolUseHook for NoRm {}
//!
//! let registry = HookRegistry::builder().pre(NoRm).build().unwrap();
//! // Any tool executor: here one that echoes the command it was given.
//! let executor = service_fn(async |call: ToolCall| Ok::<_, String>(json!({"ran": call.args()["cmd"]})));
//! let service = ServiceBuilder::new().layer(HookLayer::new(registry)).service(executor);
//!
//! let ran = service.clone().oneshot(ToolCall::new("shell", json!({"cmd": "ls"}))).await.unwrap();
//! assert_eq!(ran, json!({"ran": "ls"}));
//!
//! let refused = service.oneshot(ToolCall::new("shell", json!({"cmd": "rm -rf /"}))).await.unwrap_err();
//! assert_eq!(refused.to_string(), "the tool call was blocked by hook `no_rm`: rm is not allowed");
//! // What to hand the model instead of a result:
//! assert_eq!(refused.observation().to_string(), "Blocked by hook `no_rm`: rm is not allowed");
//! # });
//! ```

mod error;
mod layer;
mod service;
mod tool_call;

pub use error::ToolCallError;
pub use layer::HookLayer;
pub use service::{HookService, HookServiceFuture};
pub use tool_call::ToolCall;

//! The approval resources the front-end tests (`hooks serve`, `hooks
//! mcp-proxy`) give their agents: hooks-testkit's `ApprovalStack` posting
//! to the ops chat.
#![allow(dead_code, unreachable_pub, unused_imports)]

use hooks::factory::Resources;
use hooks::std_hooks::Database;
use hooks_testkit::feishu::FakeFeishu;
use hooks_testkit::gate::ApprovalStack;
pub use hooks_testkit::gate::STACK_APPROVER as APPROVER;

/// The chat the approval cards go to.
pub const CHAT: &str = "oc_ops_approvals";

/// The resources, the database behind them, the fake Feishu and the URL its
/// button presses are posted to.
pub async fn resources() -> (Resources, Database, FakeFeishu, String) {
    let stack = ApprovalStack::start(CHAT).await;
    (
        stack.resources,
        stack.database,
        stack.feishu,
        stack.callback_url,
    )
}

//! Policy tests: a table of calls and the verdict each must get, run
//! against an agent's config without running tools, asking people or
//! spending quota (`hooks test AGENT_CONFIG CASES`).
//!
//! Each case is dry-run through the pre hooks by the same chain engine as a
//! real call ([`HookRegistry::explain`](crate::HookRegistry::explain)); a
//! case may script the approver's answer (`approval: approve | reject`) and
//! the tool's outcome (`result:` or `tool_error:`), which then goes through
//! the post hooks ([`HookRegistry::explain_result`](crate::HookRegistry::explain_result)).
//! Command hooks run only when asked (`run_commands: true` or
//! `--run-commands`); otherwise a call one decides is
//! [`CaseVerdict::Unknown`]. A rate limit checks its quota without spending
//! it, so each case sees the quota as it stands: a table cannot test "the
//! fourth call in a minute" (a test that makes real calls can).
//!
//! ```standalone_crate
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use hooks::cli::policy_test::PolicyCases;
//! use hooks::config::AgentConfig;
//! use serde_json::json;
//!
//! let resources = hooks::std_hooks::offline_resources(["frozen-co"]).await.unwrap();
//! let config = AgentConfig::from_value(
//!     &json!({"agent": "bot", "hooks": {"class_hooks": ["readonly_guard"]}}),
//!     "agent.yaml",
//!     None,
//! )
//! .unwrap();
//! let registry = config.build_registry(&resources).unwrap();
//! let cases = PolicyCases::from_value(
//!     &json!({"cases": [
//!         {"name": "a write in a frozen org", "tool": "sql_exec",
//!          "args": {"sql": "DELETE FROM t"}, "org": "frozen-co",
//!          "expect": {"verdict": "blocked", "by": "readonly_guard"}},
//!         {"name": "a read", "tool": "sql_exec",
//!          "args": {"sql": "SELECT 1"}, "org": "frozen-co", "expect": "allowed"}
//!     ]}),
//!     "cases.yaml",
//! )
//! .unwrap();
//! let report = cases.run(&registry, &config.agent, false).await;
//! assert_eq!((report.passed(), report.failed()), (2, 0));
//! # });
//! ```

mod cases;
mod error;
mod report;
mod run;

pub use cases::{CaseVerdict, Expectation, PolicyCase, PolicyCases, ScriptedApproval};
pub use error::CasesError;
pub use run::{CaseOutcome, CaseReport, PolicyReport};

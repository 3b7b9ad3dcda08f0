//! Test support for `hooks`: fakes of the chat platforms the approval gate
//! speaks to, and the process the multi-process crash tests kill.
//!
//! Nothing here belongs in a production build; tests and examples take it as
//! a dev-dependency.
//!
//! * [`feishu::FakeFeishu`]: a fake Feishu/Lark Open API on `127.0.0.1` that
//!   records cards, deduplicates sends by `uuid` as Feishu does, and plays
//!   the approver's side with encrypted, signed `card.action.trigger`
//!   callbacks; its control endpoints let a test drive a fake in another
//!   process.
//! * [`slack::FakeSlack`]: the same for Slack's Web API (`chat.postMessage`,
//!   `chat.update`, `chat.postEphemeral`) with signed `block_actions`
//!   payloads.
//! * [`database`]: a SQLite file or the PostgreSQL of
//!   `HOOKS_TEST_POSTGRES_URL` for storage-backed tests; [`gate`]: callback
//!   routers on loopback and the checks the gate suites share.
//! * [`programs`]: whether `python3`, `node` and the like run here, for
//!   tests that skip without them.
//! * The `hooks-crash-process` binary (feature `failpoints`): an agent, a
//!   replica or a fake Feishu as a process of its own, stopped at a gate
//!   failpoint and killed with SIGKILL by `tests/crash_processes.rs`.
//!
//! The fakes speak the platforms' wire formats (headers, bodies, signatures,
//! encryption) so that the real channel code runs unchanged against them.

pub mod database;
pub mod feishu;
pub mod gate;
pub mod programs;
pub mod slack;

/// Seconds since the Unix epoch, as the platforms write timestamps.
fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

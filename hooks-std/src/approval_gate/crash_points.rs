//! The gate's failpoints, for crash tests (cargo feature `failpoints`).
//!
//! Each name below marks a step of the approval flow where a process can die.
//! With the feature on, a test configures one with the `fail` crate (re-exported
//! as `hooks_std::fail`), e.g. `fail::cfg(AFTER_CLAIM, "return")`: the step
//! stops there with an error, exactly as if the process had been killed at
//! that point (nothing after it runs, nothing compensates). The test then
//! "restarts" with a fresh [`Approvals`](super::Approvals) on the same database
//! and checks what survived. Without the feature the points compile to nothing.

/// The gate created (or resumed) the request, before claiming its card.
pub const AFTER_CREATE: &str = "approval_gate::after_create";
/// The gate claimed the card, before calling the platform.
pub const AFTER_CLAIM: &str = "approval_gate::after_claim";
/// The platform accepted the card, before its reference is stored.
pub const AFTER_SEND: &str = "approval_gate::after_send";
/// The card's reference is stored; the gate is about to wait.
pub const WAITING: &str = "gate::waiting";
/// The approval was consumed; the tool is about to run.
pub const AFTER_CONSUME: &str = "approval_gate::after_consume";
/// The callback's event id is written (uncommitted), before its decision.
pub const BETWEEN_EVENT_AND_DECISION: &str = "callback::between_event_and_decision";
/// The callback's event and decision are committed, before the reply.
pub const AFTER_DECISION: &str = "callback::after_decision";
/// An outbox card update is taken, before the platform is called.
pub const BEFORE_CARD_UPDATE: &str = "outbox::before_card_update";

/// Every failpoint, for tests that walk them all.
pub const ALL: &[&str] = &[
    AFTER_CREATE,
    AFTER_CLAIM,
    AFTER_SEND,
    WAITING,
    AFTER_CONSUME,
    BETWEEN_EVENT_AND_DECISION,
    AFTER_DECISION,
    BEFORE_CARD_UPDATE,
];

/// `crash_point!(NAME, |_| early_return_value)`: with the `failpoints`
/// feature, returns that value from the enclosing function (or async block)
/// when failpoint `NAME` is configured to `return`; otherwise nothing.
macro_rules! crash_point {
    ($name:expr, $on_fire:expr) => {
        #[cfg(feature = "failpoints")]
        $crate::fail::fail_point!($name, $on_fire);
        #[cfg(not(feature = "failpoints"))]
        let _ = $name;
    };
}
pub(crate) use crash_point;

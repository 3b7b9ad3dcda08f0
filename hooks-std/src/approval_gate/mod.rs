//! The human-approval gate: a gated tool call pauses until a person decides.
//!
//! * [`ConfirmationStore`] — the durable truth (`confirmation_requests`),
//!   where only a pending request moves, once, before its deadline: each
//!   method a plain transaction, durable when it returns.
//! * [`Approvals`] — the state machine shared by gates and the callback
//!   router: event dedup, channel binding, approver scope, waking waiters
//!   (in process, PostgreSQL `LISTEN/NOTIFY`, a slow fallback poll), sweeping.
//! * [`GateBuilder`] — the gate, its machinery and its callback router in
//!   one expression: `ApprovalGate::builder(database, channel)…build()`.
//! * [`ApprovalGate`] — the pre hook that creates or resumes a request,
//!   claims its card ([`CardDelivery`]) before sending it through a
//!   [`Channel`](channel::Channel), and waits.
//! * The card-update outbox — a final request whose card is not confirmed
//!   redrawn — sent at once where possible and by any replica's sweeper
//!   until the platform confirms.
//! * [`crash_points`] — the failpoints of the crash tests (feature
//!   `failpoints`).
//! * [`channel`] — where the gate talks to people (Feishu/Lark, Slack, the
//!   web approvals page). It lives under the gate because it speaks the
//!   gate's types (requests, decisions); the gate's state machine never
//!   depends on a particular channel.
//!
#![doc = include_str!("../../../docs/approval-gate.md")]

mod approvals;
mod approvers;
mod builder;
mod card_claim;
mod card_delivery;
mod card_outbox;
pub mod channel;
mod columns;
pub mod crash_points;
mod digest;
mod hook;
mod reply_window;
mod request;
mod router;
mod store;
mod wakeup;

pub use approvals::{Approvals, ApprovalsConfig, CallbackOutcome, SweepReport};
pub use approvers::{Approver, ApproverDirectory, DirectoryFuture, StaticDirectory, may_decide};
pub use builder::GateBuilder;
pub use card_claim::CardClaim;
pub use card_delivery::CardDelivery;
pub use columns::UnknownColumnValue;
pub use digest::args_digest;
pub use hook::{ApprovalGate, ApprovalGateConfig, ChannelName, NO_APPROVAL_CHANNEL};
pub use request::{
    ApprovalDecision, ApproverScope, ConfirmationMode, ConfirmationRequest, ConfirmationStatus,
};
pub use store::{
    Cancel, CardUpdates, ConfirmationStore, DecideOutcome, EventOutcome, Listing, MAX_APPROVALS,
    MAX_CARD_UPDATE_ATTEMPTS, NewConfirmation, Quorum, Swept,
};

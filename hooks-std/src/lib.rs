//! Standard hooks for `hooks`: the approval gate, audit log, read-only guard,
//! result truncation and connector rate limit.
//!
//! Nothing is here yet: each hook lands with its own issue (see the README's
//! roadmap). The crate exists so the workspace layout and the `hooks` facade's
//! `std-hooks` feature are stable from the start.

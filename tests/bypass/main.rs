//! The bypass corpus: what a hostile model (or a forged request) sends to get
//! past a guard, each with the verdict it must get.
//!
//! The model writes the tool name and the arguments; a prompt-injected model
//! writes them to get through. Every case here is an attack that was tried,
//! or a close variant of one, and the table says what must happen to it. The
//! corpus grows with every guard: a new guard comes with its attacks, and a
//! bypass found later comes back as a row here before it is fixed.
//!
//! * `tool_calls` — whole calls through an agent's standard stack: tool
//!   names, numbers written as strings, SQL under several keys, rate-limit
//!   spellings.
//! * `sql` — the read-only guard: writes dressed as reads in every dialect's
//!   comments, quotes, EXPLAIN options, functions, blocks and sizes, plus
//!   property tests that generate variants of known writes.
//! * `command_output` — what a command hook prints: decisions hidden after a
//!   BOM, spaces, escapes or progress text, cut short, duplicated, over the
//!   cap — as fail-closed and fail-open hooks.
//! * `callbacks` — approval callbacks: forged, tampered, stale, replayed,
//!   from another chat, pressed by someone out of scope.
//! * `raw_args` — argument text as the model writes it: repeated keys,
//!   escaped spellings of one key, trailing text, lone surrogates, NUL,
//!   10 MB; refused before any hook, or run with the very value the hooks saw.
//! * `hook_processes` — arguments shaped against a policy served as a
//!   Python function: forged answer lines and ids in arguments, amounts
//!   spelt to slip past a comparison, an answer made too long to read.
//! * `hook_server` — what a Claude Code client, or the model through it,
//!   sends `hooks serve`: inputs over the size cap or nested past the
//!   parser, lone surrogates, post events from another session or with other
//!   input, a user header sent twice, refused tool names; every one is
//!   answered 200 with a deny or a withheld result, never a go-ahead.
//! * `mcp_proxy` — `hooks mcp-proxy` in front of a reference MCP server:
//!   result blocks the post hooks never saw, tool names never listed or
//!   re-cased, hidden tools re-cased, resources and prompts read around
//!   the hooks; every refusal audited; HTTP clients with wrong tokens, or
//!   claiming another user by header or `_meta`, or using another client's
//!   session.
//! * `agent_flags` — configs that would drop `require_confirmation_for_all`
//!   by its case, surrounding spaces, a string or number for its value, a
//!   `false` in the other place, or a delegate's own `false`: each sets the
//!   flag or is refused.
//! * `gate_store` — the approval gate's store under argument text written
//!   as SQL, placeholders and script separators, in concurrent writes that
//!   share scripts: each stored as written, one approval used once, by its
//!   own call.
//! * `text` — what people read and what keys mean: hidden characters on
//!   approval cards, secrets in every spelling for redaction, connector and
//!   user ids in every spelling for rate limits.
//!
//! The dispatch engine's own attacks — a sealed `0.0` rewritten as `-0.0`,
//! reasons written to forge trace lines, hooks that panic, spin or outlive
//! their timeout, calls dropped at every await — need hand-scripted hooks
//! and live beside them in `hooks-runtime/tests/misbehaving_hooks.rs`.

mod agent_flags;
mod callbacks;
mod command_output;
mod gate_store;
mod hook_processes;
mod hook_server;
#[cfg(feature = "mcp")]
mod mcp_proxy;
#[cfg(feature = "mcp")]
#[path = "../support/mcp.rs"]
mod mcp_support;
mod raw_args;
mod sql;
mod text;
mod tool_calls;

//! Text that means what it says: the one place where hooks decide how a
//! string is compared and how it is shown.
//!
//! * [`fold`] turns an identifier (a connector, a user id, an argument key)
//!   into the form two spellings of the same name share: NFKC, full case
//!   folding, invisible characters removed; [`fold::skeleton`] goes further
//!   and maps confusables (Cyrillic `а`, Greek `ο`, …) to one prototype
//!   (Unicode TS #39).
//! * [`hidden`] finds the characters a person cannot see or that reorder what
//!   they see (bidi controls, zero-width and other format characters, tags,
//!   variation selectors, fillers, unusual spaces) and writes them escaped as
//!   `\u202E`. Every approval channel renders untrusted text through it, so
//!   what an approver reads is what runs.
//! * [`look_alike`] finds visible words that pass for others (`Аcme` with a
//!   Cyrillic `А`), which the approvals page flags like hidden characters.

pub mod fold;
pub mod hidden;
pub mod look_alike;

pub use fold::{fold_identifier, skeleton, skeleton_of_capitals};
pub use hidden::{EscapedText, escape_hidden, escape_hidden_in_json, has_hidden, is_hidden};
pub use look_alike::has_look_alikes;

//! The syntax pass: tokens to a syntax tree with spans, and the grammar's errors.
//!
//! Grammar (usual precedence: `!` binds tightest, then `&&`, then `||`):
//!
//! ```text
//! expr  := or
//! or    := and ("||" and)*
//! and   := not ("&&" not)*
//! not   := "!" not | "(" expr ")" | test
//! test  := field op literal | field "in" "[" literal ("," literal)* "]"
//!        | field "exists" | field
//! field := name ("." (name | integer | string))*
//! ```
//!
//! This pass knows the shape of the language only: it does not know which
//! fields exist, which hook point asks, or what a literal may be compared with
//! (that is [`crate::check`]). It recovers after a mistake (at the next `&&`,
//! `||` or `)`) and keeps every test it read, even inside a broken part, so
//! the check pass reports the mistakes in those tests too.

mod reader;
mod tree;

pub use reader::MAX_DEPTH;
pub(crate) use reader::read;
pub(crate) use tree::{FieldPath, Node, Operation, Operator, TestSyntax};

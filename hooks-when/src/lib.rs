//! The `when` trigger language of hooks: one grammar, one parser, two back ends.
//!
//! A hook's `when` decides which calls it guards. The same text is accepted in
//! an attribute (`#[pre_tool_use(when = tool_name starts_with "sql_")]`, checked
//! at compile time and compiled to a plain fn) and in an agent's config file
//! (parsed at load time and interpreted). Both go through [`parse`], so they
//! accept the same programs, reject the same mistakes with the same words, and
//! evaluate through the same leaf tests in [`rt`].
//!
//! [`parse`] runs in two passes: a syntax pass (text to a tree with spans:
//! the grammar and its errors) and a check pass (which fields exist at which
//! [`HookPoint`], what each operator compares with, the [`Surface`] names,
//! globs and regular expressions compiled). The hook points and the surfaces
//! are defined here once; the macros and the runtime re-use these enums.
//!
//! ```
//! use hooks_when::{parse, HookPoint, Subject, TextField};
//! use serde_json::{json, Map, Value};
//!
//! struct Call { tool: &'static str, args: Value, metadata: Map<String, Value> }
//!
//! impl Subject for Call {
//!     fn text(&self, field: TextField) -> Option<&str> {
//!         (field == TextField::ToolName).then_some(self.tool)
//!     }
//!     fn metadata(&self) -> &Map<String, Value> { &self.metadata }
//!     fn args(&self) -> &Value { &self.args }
//!     fn result(&self) -> Option<&Value> { None }
//! }
//!
//! let when = parse(r#"tool_name matches "oa__*" && args.amount > 50000"#, HookPoint::PreToolUse).unwrap();
//! let call = Call { tool: "oa__purchase_pay", args: json!({"amount": 50000.5}), metadata: Map::new() };
//! assert!(when.eval(&call));
//! ```
//!
//! The language reference, with every error message, is `docs/when.md` in the
//! repository.

mod analysis;
mod ast;
mod check;
#[cfg(feature = "codegen")]
pub mod codegen;
mod duration;
mod error;
mod eval;
mod front_end;
mod glob;
mod lexer;
mod point;
pub mod rt;
mod suggest;
mod surface;
mod syntax;

pub use analysis::ArgsUse;
pub use ast::{
    Check, Expr, Field, JsonField, JsonRoot, Literal, Number, Ordering, PathSegment, Pattern, Test,
    TextField,
};
pub use duration::{ConfigDuration, DurationError, parse_duration};
pub use error::{WhenError, WhenErrors, line_column};
pub use eval::Subject;
pub use front_end::parse;
pub use glob::{Glob, GlobError, PlainGlob, glob_match};
pub use point::{HookPoint, UnknownEvent};
pub use suggest::{SUGGESTION_MAX_CHARS, did_you_mean, edit_distance};
pub use surface::Surface;
pub use syntax::MAX_DEPTH;

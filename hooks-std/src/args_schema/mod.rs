//! `ArgsSchema`: a tool's arguments must match the JSON Schema declared
//! for that tool before any other hook reads them.
//!
//! Guards further down the chain compare fields (`args.amount > 50000`); a
//! model that writes `{"amount": "60000"}` slips past such a comparison while
//! the tool, which coerces the string, still pays. Checking the shape first,
//! at priority 0, means every later hook and the tool see arguments of the
//! declared types, or the call does not run.

mod builder;
mod config;
mod depth;
mod error;
mod hook;
mod output;
mod reason;

pub use builder::ArgsSchemaBuilder;
pub use config::ArgsSchemaConfig;
pub use error::SchemaError;
pub use hook::ArgsSchema;
pub use output::output_problem;
pub use reason::{MAX_ERROR_CHARS, MAX_REPORTED_ERRORS};

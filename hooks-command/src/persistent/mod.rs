//! Persistent hook processes: a program started once that answers every
//! call of its hook over stdin and stdout, one JSON line each way, matched
//! by id; and Python and JavaScript functions served that way by runners
//! shipped with the crate.

pub(crate) mod answer;
mod function;
mod hook_process;

pub(crate) use answer::Answer;
pub use answer::PERSISTENT_ANSWER_LIMIT;
pub use function::{FunctionLanguage, HookFunction};
pub(crate) use hook_process::{CallFailure, Failure, HookProcess};

//! Persistent hook processes: a program started once that answers every
//! call of its hook over stdin and stdout, one JSON line each way, matched
//! by id; and Python functions served that way by a shipped runner.

mod answer;
mod hook_process;
mod python;

pub(crate) use answer::Answer;
pub use answer::PERSISTENT_ANSWER_LIMIT;
pub(crate) use hook_process::{Failure, HookProcess};
pub use python::{DEFAULT_PYTHON, PythonCallable};

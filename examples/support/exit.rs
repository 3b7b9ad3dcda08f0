//! How the examples end when they fail: the error and each of its causes
//! as a person reads them (`Display`), not the `Debug` form a `main`
//! returning `Result` prints.

use std::error::Error;
use std::process::ExitCode;

/// Success, or `error: …` and a `  caused by: …` line per source on
/// standard error, and a failing exit code.
pub(crate) fn exit_code(result: Result<(), Box<dyn Error>>) -> ExitCode {
    let Err(error) = result else {
        return ExitCode::SUCCESS;
    };
    eprintln!("error: {error}");
    let mut cause = error.source();
    while let Some(inner) = cause {
        eprintln!("  caused by: {inner}");
        cause = inner.source();
    }
    ExitCode::FAILURE
}

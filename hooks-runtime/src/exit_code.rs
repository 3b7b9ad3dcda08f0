//! How a program built on hooks ends when it fails: the error as a person
//! reads it, not the `Debug` form a `main` returning `Result` prints.

use std::error::Error;
use std::fmt::Write as _;
use std::process::ExitCode;

/// `error` and its causes, one per line: `error: …` then `  caused by: …`
/// for each [`source`](Error::source).
pub fn error_report(error: &(dyn Error + 'static)) -> String {
    let mut report = format!("error: {error}");
    let mut cause = error.source();
    while let Some(inner) = cause {
        let _ = write!(report, "\n  caused by: {inner}");
        cause = inner.source();
    }
    report
}

/// The end of a `main`: success, or the error's [`error_report`] on
/// standard error and a failing exit code.
///
/// ```
/// use hooks::text::exit_code;
///
/// fn run() -> Result<(), Box<dyn std::error::Error>> {
///     Ok(())
/// }
///
/// fn main() -> std::process::ExitCode {
///     exit_code(run())
/// }
/// # main();
/// ```
pub fn exit_code(result: Result<(), Box<dyn Error>>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{}", error_report(error.as_ref()));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("the agent could not be built")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn the_report_names_every_cause_in_order() {
        let error = Outer(std::io::Error::other("agent.yaml: no such file"));
        assert_eq!(
            error_report(&error),
            "error: the agent could not be built\n  caused by: agent.yaml: no such file"
        );
    }

    #[test]
    fn a_failure_is_a_failing_exit_code() {
        assert_eq!(exit_code(Ok(())), ExitCode::SUCCESS);
        let failed: Result<(), Box<dyn Error>> = Err("no".into());
        assert_eq!(exit_code(failed), ExitCode::FAILURE);
    }
}

//! [`PythonCallable`]: a Python function served as a persistent hook
//! process by the runner shipped with this crate (`runner.py`).

use std::fmt;

use tokio::process::Command;

/// The runner: Python's standard library only, passed to the interpreter
/// with `-c`, so nothing has to be installed or written to disk.
const RUNNER: &str = include_str!("runner.py");

/// The interpreter used when the entry names none.
pub const DEFAULT_PYTHON: &str = "python3";

/// A Python function that decides calls: `module:function` (in config,
/// `python: "policies.payments:check"`), and the interpreter that runs it.
///
/// The runner imports the module once, from the hook's working directory
/// (the config file's directory by default) and the interpreter's own
/// path, then calls the function with each call's fields as a `dict`. It
/// returns `None` (no decision: the call goes ahead) or a `dict` in Claude
/// Code's JSON output shape; an exception is a failure of the hook.
///
/// ```
/// use hooks::command::PythonCallable;
///
/// let callable = PythonCallable::new("policies.payments:check", None).unwrap();
/// assert_eq!(callable.target(), "policies.payments:check");
/// assert_eq!(callable.interpreter(), "python3");
/// assert!(PythonCallable::new("policies.payments", None).unwrap_err().contains("module:function"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonCallable {
    target: String,
    interpreter: String,
}

impl PythonCallable {
    /// Checks `target` (`module:function`: dotted Python names on both
    /// sides, ASCII letters, digits and `_`) and `interpreter` (a program
    /// name or path; `python3` when `None`).
    pub fn new(target: &str, interpreter: Option<&str>) -> Result<Self, String> {
        let Some((module, function)) = target.split_once(':') else {
            return Err(format!(
                "`python` is {target:?}; write it as `module:function`, e.g. \
                 \"policies.payments:check\" (the module is found from the hook's working \
                 directory, the config file's by default)"
            ));
        };
        if !dotted_name(module) || !dotted_name(function) {
            return Err(format!(
                "`python` is {target:?}; both sides of `module:function` must be Python names \
                 (letters, digits and `_`, parts separated by `.`), e.g. \"policies.payments:check\""
            ));
        }
        let interpreter = interpreter.unwrap_or(DEFAULT_PYTHON);
        if interpreter.trim().is_empty() || interpreter.contains('\0') {
            return Err(
                "`interpreter` is empty or holds a NUL byte: name the Python to run, e.g. \
                 \"python3\" or \"./venv/bin/python\""
                    .into(),
            );
        }
        Ok(PythonCallable {
            target: target.to_owned(),
            interpreter: interpreter.to_owned(),
        })
    }

    /// `module:function`, as written.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The interpreter: a name looked up on `PATH`, or a path.
    pub fn interpreter(&self) -> &str {
        &self.interpreter
    }

    /// Makes a relative interpreter path (`./venv/bin/python`) relative to `base`.
    pub(crate) fn resolve_relative_to(&mut self, base: &std::path::Path) {
        if self.interpreter.contains('/') && !self.interpreter.starts_with('/') {
            self.interpreter = base.join(&self.interpreter).to_string_lossy().into_owned();
        }
    }

    /// The process that serves the function: the interpreter running the
    /// runner, which reads requests on stdin.
    pub(crate) fn command(&self) -> Command {
        let mut command = Command::new(&self.interpreter);
        command.arg("-c").arg(RUNNER).arg(&self.target);
        command
    }
}

/// `python3 policies.payments:check`.
impl fmt::Display for PythonCallable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.interpreter, self.target)
    }
}

/// `a`, `a.b_c`, `_x.y2`: ASCII Python identifiers joined by dots.
fn dotted_name(text: &str) -> bool {
    !text.is_empty()
        && text.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_module_colon_function() {
        for good in ["a:b", "policies.payments:check", "_p:Guard.check", "p2:f_3"] {
            assert!(PythonCallable::new(good, None).is_ok(), "{good}");
        }
        for bad in [
            "",
            "a",
            ":b",
            "a:",
            "a::b",
            "a.:b",
            "1a:b",
            "a:b c",
            "a-b:c",
            "a:b;import os",
            "é:b",
        ] {
            assert!(PythonCallable::new(bad, None).is_err(), "{bad}");
        }
        assert!(PythonCallable::new("a:b", Some(" ")).is_err());
        let callable = PythonCallable::new("a:b", Some("./venv/bin/python")).unwrap();
        assert_eq!(callable.to_string(), "./venv/bin/python a:b");
    }
}

//! [`HookFunction`]: a Python or JavaScript function served as a persistent
//! hook process by a runner shipped with this crate (`runner_python.py`,
//! `runner_node.js`).

use std::fmt;

use tokio::process::Command;

/// The Python runner: the standard library only, passed with `-c`, so
/// nothing has to be installed or written to disk.
const PYTHON_RUNNER: &str = include_str!("runner_python.py");

/// The Node runner: Node's built-in modules only, passed with `-e`.
const NODE_RUNNER: &str = include_str!("runner_node.js");

/// The language a [`HookFunction`] is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FunctionLanguage {
    /// `python: "module:function"`: a module on the interpreter's path
    /// (the hook's working directory first).
    Python,
    /// `node: "./policy.mjs:function"`: a file relative to the hook's
    /// working directory, or a package name; ES module or CommonJS.
    Node,
}

impl FunctionLanguage {
    /// The config key: `python` or `node`.
    pub fn key(self) -> &'static str {
        match self {
            FunctionLanguage::Python => "python",
            FunctionLanguage::Node => "node",
        }
    }

    /// The interpreter used when the entry names none: `python3` or `node`.
    pub fn default_interpreter(self) -> &'static str {
        match self {
            FunctionLanguage::Python => "python3",
            FunctionLanguage::Node => "node",
        }
    }
}

/// A function that decides calls: `module:function` (in config,
/// `python: "policies.payments:check"` or `node: "./policy.mjs:check"`),
/// and the interpreter that runs it.
///
/// The runner loads the module once, from the hook's working directory (the
/// config file's directory by default), then calls the function with each
/// call's fields as one object. It returns nothing (no decision: the call
/// goes ahead) or an object in Claude Code's JSON output shape; an
/// exception is a failure of the hook. Python calls are served one at a
/// time; Node calls concurrently, as their promises settle.
///
/// ```
/// use hooks::command::{FunctionLanguage, HookFunction};
///
/// let function = HookFunction::new(FunctionLanguage::Python, "policies.payments:check", None).unwrap();
/// assert_eq!(function.target(), "policies.payments:check");
/// assert_eq!(function.interpreter(), "python3");
/// let error = HookFunction::new(FunctionLanguage::Python, "policies.payments", None).unwrap_err();
/// assert!(error.contains("module:function"));
/// let node = HookFunction::new(FunctionLanguage::Node, "./hooks/policy.mjs:check", None).unwrap();
/// assert_eq!(node.to_string(), "node ./hooks/policy.mjs:check");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookFunction {
    language: FunctionLanguage,
    target: String,
    interpreter: String,
}

impl HookFunction {
    /// Checks `target` and `interpreter` (a program name or path; the
    /// language's default when `None`). A Python target is dotted Python
    /// names on both sides of the `:` (ASCII letters, digits and `_`); a
    /// Node target is a module path or package name, then `:` and a dotted
    /// JavaScript name.
    pub fn new(
        language: FunctionLanguage,
        target: &str,
        interpreter: Option<&str>,
    ) -> Result<Self, String> {
        let key = language.key();
        let example = match language {
            FunctionLanguage::Python => "\"policies.payments:check\"",
            FunctionLanguage::Node => "\"./hooks/policy.mjs:check\"",
        };
        let Some((module, function)) = target.rsplit_once(':') else {
            return Err(format!(
                "`{key}` is {target:?}; write it as `module:function`, e.g. {example} (the module \
                 is found from the hook's working directory, the config file's by default)"
            ));
        };
        let fits = match language {
            FunctionLanguage::Python => dotted(module, false) && dotted(function, false),
            FunctionLanguage::Node => node_module(module) && dotted(function, true),
        };
        if !fits {
            let rule = match language {
                FunctionLanguage::Python => {
                    "both sides of `module:function` must be Python names (letters, digits and \
                     `_`, parts separated by `.`)"
                }
                FunctionLanguage::Node => {
                    "the module must be a path or package name (no spaces or control \
                     characters) and the function a JavaScript name (letters, digits, `_` and \
                     `$`, parts separated by `.`)"
                }
            };
            return Err(format!("`{key}` is {target:?}; {rule}, e.g. {example}"));
        }
        let interpreter = interpreter.unwrap_or(language.default_interpreter());
        if interpreter.trim().is_empty() || interpreter.contains('\0') {
            return Err(format!(
                "`interpreter` is empty or holds a NUL byte: name the program to run, e.g. \
                 \"{}\"",
                language.default_interpreter()
            ));
        }
        Ok(HookFunction {
            language,
            target: target.to_owned(),
            interpreter: interpreter.to_owned(),
        })
    }

    /// The language.
    pub fn language(&self) -> FunctionLanguage {
        self.language
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
        match self.language {
            FunctionLanguage::Python => command.arg("-c").arg(PYTHON_RUNNER),
            FunctionLanguage::Node => command.arg("-e").arg(NODE_RUNNER),
        };
        command.arg(&self.target);
        command
    }
}

/// `python3 policies.payments:check`.
impl fmt::Display for HookFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.interpreter, self.target)
    }
}

/// `a`, `a.b_c`, `_x.y2` (and `$` in JavaScript): ASCII names joined by dots.
fn dotted(text: &str, dollar: bool) -> bool {
    let allowed = |c: char| c == '_' || (dollar && c == '$');
    !text.is_empty()
        && text.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || allowed(c))
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || allowed(c))
        })
}

/// A module path or package name: printable, without spaces or quotes.
fn node_module(text: &str) -> bool {
    !text.is_empty()
        && !text
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '\\'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn python(target: &str) -> Result<HookFunction, String> {
        HookFunction::new(FunctionLanguage::Python, target, None)
    }

    fn node(target: &str) -> Result<HookFunction, String> {
        HookFunction::new(FunctionLanguage::Node, target, None)
    }

    #[test]
    fn targets_are_module_colon_function() {
        for good in ["a:b", "policies.payments:check", "_p:Guard.check", "p2:f_3"] {
            assert!(python(good).is_ok(), "{good}");
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
            "a:$b",
        ] {
            assert!(python(bad).is_err(), "{bad}");
        }
        for good in [
            "./p.mjs:check",
            "/opt/p.cjs:default",
            "@acme/policy:guards.pay",
            "p:$x",
        ] {
            assert!(node(good).is_ok(), "{good}");
        }
        for bad in [
            "./p.mjs",
            "./p q.mjs:check",
            "./p.mjs:a-b",
            ":check",
            "'x':y",
            "x:",
        ] {
            assert!(node(bad).is_err(), "{bad}");
        }
        assert!(HookFunction::new(FunctionLanguage::Python, "a:b", Some(" ")).is_err());
        let function =
            HookFunction::new(FunctionLanguage::Python, "a:b", Some("./venv/bin/python")).unwrap();
        assert_eq!(function.to_string(), "./venv/bin/python a:b");
    }
}

//! Finding a command hook's program while the config loads, so that a hook
//! that could never start fails the config instead of every call.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::{CommandLine, CommandSpec};

/// Where `execvp` looks when `PATH` is not set (glibc's default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Words `/bin/sh` runs itself (keywords and built-ins): not looked up on `PATH`.
const SHELL_BUILTINS: &[&str] = &[
    "!", "{", "}", ".", ":", "[", "alias", "bg", "break", "case", "cd", "command", "continue",
    "do", "done", "echo", "elif", "else", "esac", "eval", "exec", "exit", "export", "false", "fg",
    "fi", "for", "getopts", "hash", "if", "in", "jobs", "kill", "local", "printf", "pwd", "read",
    "readonly", "return", "set", "shift", "test", "then", "times", "trap", "true", "type",
    "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

/// Checks that the program `spec` runs can be started: an exec-form program
/// must be an executable file — at its path (relative to the spec's `cwd`
/// when relative), or on `PATH` when it is a bare name. For the shell form,
/// only the first word is checked, and only when it is a plain path or
/// program name (no quotes, variables or other shell syntax, except a leading
/// `$CLAUDE_PROJECT_DIR`): a shell command line cannot be fully checked
/// without running it. When the program is a known interpreter (`bash`,
/// `python3`, `node`, … see [`script_of`]), the script it is given must
/// exist too: a missing one would fail every call, and a `fail_open` hook
/// would then be skipped without anyone noticing.
pub(crate) fn check_program(spec: &CommandSpec) -> Result<(), String> {
    let dir = spec.cwd.as_deref();
    match &spec.command {
        // Nothing to find on disk: whether it answers is known only by
        // calling it, and a call that fails is closed unless fail-open.
        CommandLine::Http(_) => Ok(()),
        // The interpreter must be there; whether the module loads is
        // known only by starting it (`hooks check` does, with a probe).
        CommandLine::Function(function) => {
            let interpreter = function.interpreter();
            if interpreter.contains('/') {
                check_file(
                    &within(dir, Path::new(interpreter)),
                    interpreter,
                    "interpreter",
                )
            } else {
                on_path(interpreter)
            }
        }
        CommandLine::Exec(argv) => {
            let Some(program) = argv.first() else {
                return Ok(()); // An empty command is reported by the spec's own check.
            };
            if program.contains('/') {
                check_file(&within(dir, Path::new(program)), program, "command")?;
            } else {
                on_path(program)?;
            }
            check_interpreted_script(argv, dir)
        }
        CommandLine::Shell(line) => {
            let words = plain_words(line, dir);
            let Some(word) = words.first() else {
                return Ok(());
            };
            let program = if word.contains('/') {
                check_file(&within(dir, Path::new(word)), word, "script").map_err(|problem| {
                    format!(
                        "{problem} (it is the first word of the shell command `{line}`; only that \
                         word is checked before running, since a shell line cannot be checked whole)"
                    )
                })
            } else if SHELL_BUILTINS.contains(&word.as_str()) {
                Ok(())
            } else {
                on_path(word).map_err(|problem| {
                    format!("{problem} (it is the first word of the shell command `{line}`)")
                })
            };
            program?;
            check_interpreted_script(&words, dir)
                .map_err(|problem| format!("{problem} (in the shell command `{line}`)"))
        }
    }
}

/// `path` joined to `dir` when it is relative and there is a `dir`.
fn within(dir: Option<&Path>, path: &Path) -> PathBuf {
    match dir {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

/// The leading words of a shell line that are plain enough to check, up to
/// the first that is not; a leading `$CLAUDE_PROJECT_DIR` (quoted or not)
/// becomes `dir`, as it will be when the command runs.
fn plain_words(line: &str, dir: Option<&Path>) -> Vec<String> {
    line.split_whitespace()
        .enumerate()
        .map_while(|(index, word)| plain_word(word, dir, index > 0))
        .collect()
}

/// `word` when it is a plain path, name or option (no quotes, variables or
/// other shell syntax, except a leading `$CLAUDE_PROJECT_DIR` and double
/// quotes around the whole word). `=` is plain only in an argument: in the
/// first word it sets a variable (`A=b cmd`).
fn plain_word(word: &str, dir: Option<&Path>, argument: bool) -> Option<String> {
    let word = word
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .filter(|inner| !inner.contains(['"', '\\', '`']))
        .unwrap_or(word);
    let mut word = word.to_owned();
    for variable in [
        "\"$CLAUDE_PROJECT_DIR\"",
        "\"${CLAUDE_PROJECT_DIR}\"",
        "${CLAUDE_PROJECT_DIR}",
        "$CLAUDE_PROJECT_DIR",
    ] {
        if let Some(rest) = word.strip_prefix(variable) {
            let dir = dir?.to_str()?;
            word = format!("{dir}{rest}");
            break;
        }
    }
    let plain = word
        .chars()
        .all(|c| c.is_alphanumeric() || "_-./+,:@%".contains(c) || (argument && c == '='));
    // A word that sets a variable (`A=b cmd`) or carries any other shell
    // syntax is not a program name.
    (plain && !word.is_empty()).then_some(word)
}

/// When `argv` runs a known interpreter on a script file, that the file
/// exists (its interpreter reads it, so it need not be executable).
fn check_interpreted_script(argv: &[String], dir: Option<&Path>) -> Result<(), String> {
    let Some((interpreter, script)) = script_of(argv) else {
        return Ok(());
    };
    let path = within(dir, Path::new(script));
    let shown = path.display().to_string();
    let at = if shown == script {
        String::new()
    } else {
        format!(" ({shown})")
    };
    let what = format!("the script `{script}`{at} that `{interpreter}` runs");
    match std::fs::metadata(&path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{what} does not exist; fix the path (relative paths start from the config file's \
             directory)"
        )),
        Err(error) => Err(format!(
            "{what} cannot be checked ({error}); make it readable by the agent"
        )),
        Ok(meta) if !meta.is_file() => Err(format!("{what} is not a file")),
        Ok(_) => Ok(()),
    }
}

/// The interpreter (as written) and the script file it runs, when `argv[0]`
/// (or the program after `env` and its assignments) is a known interpreter
/// and its first argument after the options looks like a file path. `None`
/// when the code is given inline (`-c`, `-e`, `-m`, `--eval`, `-Command`…),
/// read from stdin, the directory changes first, or it is not sure: a wrong
/// "missing" would refuse a config that works.
pub(crate) fn script_of(argv: &[String]) -> Option<(&str, &str)> {
    let mut words = argv.iter().map(String::as_str).peekable();
    let mut program = words.next()?;
    if base_name(program) == "env" {
        loop {
            let word = words.next()?;
            match word {
                // Splitting a string, or changing directory: not followed.
                "-S" | "--split-string" | "-C" | "--chdir" => return None,
                "-u" | "--unset" => {
                    words.next();
                }
                _ if word.starts_with('-') || word.contains('=') => {}
                _ => {
                    program = word;
                    break;
                }
            }
        }
    }
    let options = Interpreter::named(base_name(program))?.options();
    let mut subcommand = options.subcommand;
    let mut script_next = false;
    while let Some(word) = words.next() {
        let option = if options.case_insensitive {
            word.to_ascii_lowercase()
        } else {
            word.to_owned()
        };
        if script_next || word == "--" {
            let script = if script_next { word } else { words.next()? };
            return looks_like_file(script).then_some((program, script));
        }
        if word == "-" || options.leaving.contains(&option.as_str()) {
            return None;
        }
        if options.script.contains(&option.as_str()) {
            script_next = true;
            continue;
        }
        if options.valued.contains(&option.as_str()) {
            words.next();
            continue;
        }
        let is_option = word.starts_with('-') || (options.plus && word.starts_with('+'));
        if is_option {
            if !word.starts_with("--") && !options.clusters.is_empty() {
                let letters = &word[1..];
                if letters.contains(|c| options.clusters.inline.contains(c)) {
                    return None;
                }
                if letters
                    .chars()
                    .last()
                    .is_some_and(|c| options.clusters.valued.contains(c))
                {
                    words.next();
                }
            }
            continue;
        }
        if let Some(expected) = subcommand.take() {
            if word == expected {
                continue;
            }
            return None;
        }
        return looks_like_file(word).then_some((program, word));
    }
    None
}

/// The last component of a path.
fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// A path (it has a `/`), or a file name with an extension (`check.py`);
/// never a URL.
fn looks_like_file(word: &str) -> bool {
    if word.contains("://") || word.starts_with('-') {
        return false;
    }
    if word.contains('/') {
        return true;
    }
    word.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && (1..=6).contains(&extension.len())
            && extension.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

/// The interpreters whose script argument is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interpreter {
    Shell,
    Fish,
    Python,
    Node,
    Deno,
    Ruby,
    Perl,
    Php,
    PowerShell,
    OsaScript,
}

/// How an interpreter reads its command line, as far as finding the script
/// goes.
struct Options {
    /// Options after which no script file is named: inline code, a module,
    /// stdin, another working directory.
    leaving: &'static [&'static str],
    /// Options whose value is the next word.
    valued: &'static [&'static str],
    /// Options whose value, the next word, is the script.
    script: &'static [&'static str],
    /// One-letter options written together (`-ec`).
    clusters: Letters,
    /// A subcommand that comes before the script (`deno run`).
    subcommand: Option<&'static str>,
    /// Options also start with `+` (`sh +o posix`).
    plus: bool,
    /// Options are matched without regard to case (PowerShell).
    case_insensitive: bool,
}

/// One-letter options in a cluster such as `-euo`.
struct Letters {
    /// Letters meaning the code is inline or on stdin.
    inline: &'static str,
    /// Letters that, last in a cluster, take the next word as their value.
    valued: &'static str,
}

impl Letters {
    const NONE: Letters = Letters {
        inline: "",
        valued: "",
    };

    fn is_empty(&self) -> bool {
        self.inline.is_empty() && self.valued.is_empty()
    }
}

impl Interpreter {
    fn named(name: &str) -> Option<Interpreter> {
        Some(match name {
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" => Interpreter::Shell,
            "fish" => Interpreter::Fish,
            "node" | "nodejs" => Interpreter::Node,
            "deno" => Interpreter::Deno,
            "ruby" => Interpreter::Ruby,
            "perl" => Interpreter::Perl,
            "php" => Interpreter::Php,
            "pwsh" | "powershell" => Interpreter::PowerShell,
            "osascript" => Interpreter::OsaScript,
            _ => {
                // python, python3, python3.12
                let version = name.strip_prefix("python")?;
                if !version.chars().all(|c| c.is_ascii_digit() || c == '.') {
                    return None;
                }
                Interpreter::Python
            }
        })
    }

    fn options(self) -> Options {
        let base = Options {
            leaving: &[],
            valued: &[],
            script: &[],
            clusters: Letters::NONE,
            subcommand: None,
            plus: false,
            case_insensitive: false,
        };
        match self {
            Interpreter::Shell => Options {
                leaving: &["--command"],
                valued: &["--rcfile", "--init-file"],
                clusters: Letters {
                    inline: "cs",
                    valued: "oO",
                },
                plus: true,
                ..base
            },
            Interpreter::Fish => Options {
                leaving: &["--command"],
                valued: &["--init-command", "--debug", "--profile"],
                clusters: Letters {
                    inline: "c",
                    valued: "C",
                },
                ..base
            },
            Interpreter::Python => Options {
                valued: &["--check-hash-based-pycs"],
                clusters: Letters {
                    inline: "cm",
                    valued: "WX",
                },
                ..base
            },
            Interpreter::Node => Options {
                leaving: &["--eval", "--print"],
                valued: &[
                    "--require",
                    "--import",
                    "--loader",
                    "--experimental-loader",
                    "--conditions",
                    "--input-type",
                ],
                clusters: Letters {
                    inline: "ep",
                    valued: "rC",
                },
                ..base
            },
            Interpreter::Deno => Options {
                valued: &["--config", "--import-map", "--lock", "--location", "--cert"],
                subcommand: Some("run"),
                ..base
            },
            Interpreter::Ruby => Options {
                clusters: Letters {
                    inline: "eC",
                    valued: "IrEF",
                },
                ..base
            },
            Interpreter::Perl => Options {
                clusters: Letters {
                    inline: "eE",
                    valued: "IMm",
                },
                ..base
            },
            Interpreter::Php => Options {
                script: &["-f"],
                leaving: &["-r", "-R", "-B", "-E", "-a", "-S", "-t"],
                valued: &["-c", "-d", "-z"],
                ..base
            },
            Interpreter::PowerShell => Options {
                script: &["-file", "-f"],
                leaving: &[
                    "-command",
                    "-c",
                    "-encodedcommand",
                    "-e",
                    "-ec",
                    "-commandwithargs",
                    "-cwa",
                    "-workingdirectory",
                    "-wd",
                ],
                valued: &[
                    "-executionpolicy",
                    "-ep",
                    "-ex",
                    "-outputformat",
                    "-o",
                    "-of",
                    "-inputformat",
                    "-inp",
                    "-if",
                    "-configurationname",
                    "-config",
                    "-configurationfile",
                    "-settingsfile",
                    "-settings",
                    "-custompipename",
                    "-windowstyle",
                    "-w",
                    "-version",
                    "-v",
                ],
                case_insensitive: true,
                ..base
            },
            Interpreter::OsaScript => Options {
                clusters: Letters {
                    inline: "e",
                    valued: "ls",
                },
                ..base
            },
        }
    }
}

/// An executable regular file at `path` (following symbolic links).
fn check_file(path: &Path, written: &str, what: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let shown = path.display().to_string();
    let at = if shown == written {
        String::new()
    } else {
        format!(" ({shown})")
    };
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "the {what} `{written}`{at} does not exist; fix the path (relative paths start from \
             the config file's directory)"
        )),
        Err(error) => Err(format!(
            "the {what} `{written}`{at} cannot be checked ({error}); make it readable by the agent"
        )),
        Ok(meta) if !meta.is_file() => Err(format!(
            "the {what} `{written}`{at} is not a file; give the path of the program to run"
        )),
        Ok(meta) if meta.permissions().mode() & 0o111 == 0 => Err(format!(
            "the {what} `{written}`{at} is not executable; make it executable \
             (`chmod +x {shown}`) or run it through its interpreter, e.g. [\"sh\", \"{shown}\"]"
        )),
        Ok(_) => Ok(()),
    }
}

/// A bare program name must be an executable file in a `PATH` directory
/// (the agent's `PATH`, which the command inherits).
fn on_path(name: &str) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from(DEFAULT_PATH));
    let found = std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .any(|candidate| check_file(&candidate, name, "command").is_ok());
    if found {
        Ok(())
    } else {
        Err(format!(
            "the command `{name}` is not on PATH ({}); install it, or give its path \
             (relative paths start from the config file's directory)",
            path.to_string_lossy()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hooks_runtime::HookPoint;

    fn exec(program: &str) -> CommandSpec {
        CommandSpec::new(HookPoint::PreToolUse, CommandLine::exec([program]))
    }

    fn shell(line: &str, dir: &str) -> CommandSpec {
        CommandSpec::new(HookPoint::PreToolUse, CommandLine::shell(line)).with_cwd(dir)
    }

    #[test]
    fn programs_are_found_by_path_or_on_path() {
        assert_eq!(check_program(&exec("/bin/sh")), Ok(()));
        assert_eq!(check_program(&exec("sh")), Ok(()));
        let missing = check_program(&exec("no-such-program-4711")).unwrap_err();
        assert!(missing.contains("is not on PATH"), "{missing}");
        let missing = check_program(&exec("/no/such/x.sh")).unwrap_err();
        assert!(missing.contains("does not exist"), "{missing}");
        let directory = check_program(&exec("/tmp")).unwrap_err();
        assert!(directory.contains("is not a file"), "{directory}");
    }

    fn script(argv: &str) -> Option<String> {
        let argv: Vec<String> = argv.split(' ').map(str::to_owned).collect();
        script_of(&argv).map(|(_, script)| script.to_owned())
    }

    #[test]
    fn the_script_an_interpreter_runs_is_found_after_its_options() {
        for (argv, expected) in [
            ("bash x.sh", Some("x.sh")),
            ("/bin/bash -eu -o pipefail ./x.sh a b", Some("./x.sh")),
            ("sh +o posix -- x", None),
            ("sh -- dir/x", Some("dir/x")),
            ("bash --rcfile rc.sh x.sh", Some("x.sh")),
            ("bash -c x.sh", None),
            ("bash -lc x.sh", None),
            ("bash -s x.sh", None),
            ("zsh script", None),
            ("python3 -u -W ignore check.py", Some("check.py")),
            ("python3.12 -X importtime hooks/check", Some("hooks/check")),
            ("python -m pkg.main", None),
            ("python3 -c print(1) x.py", None),
            ("python3 - x.py", None),
            ("python3x check.py", None),
            ("node --require ./r.js hook.mjs", Some("hook.mjs")),
            ("node -e 1 x.js", None),
            ("node --eval=1 x.js", Some("x.js")),
            ("deno run --allow-read hook.ts", Some("hook.ts")),
            ("deno eval x.ts", None),
            ("deno run https://example.com/x.ts", None),
            ("ruby -w -I lib hook.rb", Some("hook.rb")),
            ("ruby -C /tmp hook.rb", None),
            ("ruby -e 1 hook.rb", None),
            ("perl -w -I lib hook.pl", Some("hook.pl")),
            ("perl -ne 1 hook.pl", None),
            ("php -d x=1 -f hook.php", Some("hook.php")),
            ("php -r 1 hook.php", None),
            (
                "pwsh -NoProfile -ExecutionPolicy Bypass -File hook.ps1",
                Some("hook.ps1"),
            ),
            ("pwsh -noprofile hook.ps1", Some("hook.ps1")),
            ("pwsh -Command hook.ps1", None),
            ("osascript -l JavaScript hook.js", Some("hook.js")),
            ("osascript -e x hook.scpt", None),
            ("env A=1 -u B bash x.sh", Some("x.sh")),
            ("/usr/bin/env -S bash x.sh", None),
            ("env -C /tmp bash x.sh", None),
            ("jq -f filter.jq", None),
            ("bash", None),
        ] {
            assert_eq!(script(argv).as_deref(), expected, "{argv}");
        }
    }

    #[test]
    fn a_missing_interpreted_script_is_reported() {
        let missing = check_program(&CommandSpec::new(
            HookPoint::PreToolUse,
            CommandLine::exec(["sh", "-e", "no/such.sh"]),
        ))
        .unwrap_err();
        assert!(
            missing.contains("the script `no/such.sh` that `sh` runs does not exist"),
            "{missing}"
        );
        let directory = check_program(&shell("sh /tmp", "/")).unwrap_err();
        assert!(directory.contains("is not a file"), "{directory}");
        let quoted =
            check_program(&shell("bash \"$CLAUDE_PROJECT_DIR/x.sh\"", "/proj")).unwrap_err();
        assert!(quoted.contains("`/proj/x.sh` that `bash` runs"), "{quoted}");
        assert_eq!(check_program(&shell("bash --norc=1 /bin/sh", "/")), Ok(()));
        assert_eq!(check_program(&shell("sh \"$X/y.sh\"", "/")), Ok(()));
    }

    #[test]
    fn shell_lines_are_checked_by_their_first_plain_word() {
        assert_eq!(check_program(&shell("exit 0", "/")), Ok(()));
        assert_eq!(check_program(&shell("cat ./x | jq .", "/")), Ok(()));
        assert_eq!(check_program(&shell("\"$X\"/y.sh", "/")), Ok(()));
        assert_eq!(check_program(&shell("A=b ./nope.sh", "/")), Ok(()));
        let missing = check_program(&shell("./no/such.sh --flag", "/tmp")).unwrap_err();
        assert!(missing.contains("/tmp/./no/such.sh"), "{missing}");
        assert!(missing.contains("cannot be checked whole"), "{missing}");
        let missing =
            check_program(&shell("\"$CLAUDE_PROJECT_DIR\"/.claude/x.sh", "/proj")).unwrap_err();
        assert!(missing.contains("/proj/.claude/x.sh"), "{missing}");
        let missing = check_program(&shell("no-such-program-4711 -x", "/")).unwrap_err();
        assert!(missing.contains("is not on PATH"), "{missing}");
    }
}

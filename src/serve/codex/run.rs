//! `hooks run-buffered -- PROGRAM ARGS…`: runs a command with no input
//! and prints its output (stdout and stderr, interleaved as written) only
//! when it has exited, with its exit code. Codex runs every shell command
//! this way under `hooks hook-client --client codex` (see
//! [`super::command`]).
//!
//! What the command prints can reach the model only through this
//! process, and only at the end:
//! - its output goes to a pipe this process reads to its end; its input
//!   is `/dev/null`, and no other descriptor this process was given is
//!   passed on;
//! - on Linux this process is not dumpable, so the command cannot open
//!   this process's own output through `/proc/PID/fd`, and the command is
//!   killed if this process dies;
//! - in a terminal (Codex's `tty: true`) nothing runs: a command there
//!   could write to the terminal directly (`/dev/tty`, `/dev/console`).

use std::io::{self, IsTerminal, Read, Write};
use std::process::{Command, Stdio};

/// The most output kept (16 MiB); the rest is read and dropped, and the
/// output says so.
const MAX_OUTPUT: usize = 16 << 20;

/// Runs `command` (a program and its arguments) and prints what it printed
/// to `out` once it has exited; says why to `err` when it cannot run.
/// Returns the command's exit code (128 + the signal when one ended it,
/// 127 when it did not start, 126 in a terminal, 2 for no command).
pub(crate) fn run_buffered(command: &[String], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let Some((program, args)) = command.split_first() else {
        let _ = writeln!(
            err,
            "hooks run-buffered: no command given (usage: hooks run-buffered -- PROGRAM [ARGS]...)"
        );
        return 2;
    };
    if io::stdin().is_terminal() || io::stdout().is_terminal() {
        let _ = writeln!(
            err,
            "hooks run-buffered: not run in a terminal session: the command could write to \
             the terminal before the hooks saw its output. Run it without a terminal \
             (tty: false)."
        );
        return 126;
    }
    guard_this_process();
    match run(program, args) {
        Ok((output, dropped, code)) => {
            let mut write = || -> io::Result<()> {
                out.write_all(&output)?;
                if dropped > 0 {
                    write!(
                        out,
                        "\n[hooks run-buffered: {dropped} more bytes of output were dropped]\n"
                    )?;
                }
                out.flush()
            };
            // The output closed: nothing more can be said.
            let _ = write();
            code
        }
        Err(error) => {
            let _ = writeln!(err, "hooks run-buffered: cannot run `{program}`: {error}");
            127
        }
    }
}

/// The command's output (up to [`MAX_OUTPUT`]), how many bytes past that
/// were dropped, and its exit code.
fn run(program: &str, args: &[String]) -> io::Result<(Vec<u8>, u64, u8)> {
    let (mut reader, writer) = io::pipe()?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    guard_the_child(&mut command);
    let mut child = command.spawn()?;
    // This process's ends of the pipe go with the `Command`: the read ends
    // when every process the command started has closed its own.
    drop(command);
    let mut output = Vec::new();
    (&mut reader)
        .take(MAX_OUTPUT as u64)
        .read_to_end(&mut output)?;
    let dropped = io::copy(&mut reader, &mut io::sink())?;
    let status = child.wait()?;
    Ok((output, dropped, exit_code(status)))
}

#[cfg(unix)]
fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from((128 + signal) & 0xff).unwrap_or(1),
        (None, None) => 1,
    }
}

#[cfg(not(unix))]
fn exit_code(status: std::process::ExitStatus) -> u8 {
    status
        .code()
        .and_then(|code| u8::try_from(code & 0xff).ok())
        .unwrap_or(1)
}

/// Makes this process not dumpable (Linux: its `/proc/PID/fd`, where its
/// own output is, is then closed to the command it runs) and marks every
/// descriptor it was given past 0, 1 and 2 close-on-exec, so the command
/// inherits none of them.
#[cfg(unix)]
fn guard_this_process() {
    // SAFETY: prctl(PR_SET_DUMPABLE) takes plain integers and touches no
    // memory of ours.
    #[cfg(target_os = "linux")]
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    close_on_exec_past_stderr();
}

/// Marks every open descriptor past 0, 1 and 2 close-on-exec.
#[cfg(unix)]
fn close_on_exec_past_stderr() {
    // SAFETY: fcntl(F_GETFD/F_SETFD) takes plain integers and touches no
    // memory of ours; a descriptor that is not open is an error ignored.
    unsafe {
        for fd in 3..4096 {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

#[cfg(not(unix))]
fn guard_this_process() {}

/// In the child before it runs the command: it is killed when this
/// process dies.
#[cfg(target_os = "linux")]
fn guard_the_child(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure makes one async-signal-safe system call and
    // allocates nothing.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn guard_the_child(_command: &mut Command) {}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> (Vec<u8>, u64, u8) {
        run("/bin/sh", &["-c".to_owned(), script.to_owned()]).expect("runs")
    }

    #[test]
    fn output_comes_whole_at_the_end_with_the_exit_code() {
        let (output, dropped, code) = sh("echo one; echo two >&2; printf three; exit 3");
        assert_eq!(
            (String::from_utf8_lossy(&output).as_ref(), dropped, code),
            ("one\ntwo\nthree", 0, 3)
        );
        let (_, _, killed) = sh("kill -9 $$");
        assert_eq!(killed, 137);
    }

    #[test]
    fn the_command_reads_nothing_and_inherits_no_other_descriptor() {
        close_on_exec_past_stderr();
        let (output, _, code) = sh("cat; ls /proc/self/fd | sort -n | tr '\\n' ' '");
        assert_eq!(code, 0);
        // 0, 1, 2 and the one `ls` opens to list the directory.
        assert_eq!(String::from_utf8_lossy(&output), "0 1 2 3 ");
    }

    #[test]
    fn a_background_process_holding_the_output_is_waited_for() {
        let (output, _, _) = sh("(sleep 0.3; echo late) &");
        assert_eq!(String::from_utf8_lossy(&output), "late\n");
    }

    #[test]
    fn a_program_that_is_missing_is_an_error() {
        let error = run("/no/such/program", &[]).expect_err("no program");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert_eq!(run_buffered(&[], &mut Vec::new(), &mut Vec::new()), 2);
    }
}

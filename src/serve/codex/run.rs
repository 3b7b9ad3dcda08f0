//! `hooks run-buffered -- PROGRAM ARGS…`: runs a command with no input
//! and prints its output (stdout and stderr, interleaved as written) only
//! when it has exited, with its exit code. Codex runs every shell command
//! this way under `hooks hook-client --client codex` (see
//! [`super::command`]).
//!
//! What the command prints can reach the model only through this
//! process, and only at the end:
//! - its output goes to a pipe this process reads; its input is
//!   `/dev/null`, and no other descriptor this process was given is
//!   passed on;
//! - on Linux the command runs in a Landlock domain of its own (with
//!   `no_new_privs`), so it can open no other process's descriptors
//!   through `/proc/PID/fd` (this one's, the sandbox's process 1's,
//!   Codex's), root or not; a kernel without Landlock runs nothing. The
//!   command is killed if this process dies;
//! - in a terminal (Codex's `tty: true`) nothing runs: a command there
//!   could write to the terminal directly (`/dev/tty`, `/dev/console`);
//! - once the command has exited, processes it left running that still
//!   hold its output get [`GRACE`] to finish; then what they printed so far
//!   is shown, with a line saying the rest is dropped, and a `cat` reads
//!   and drops the rest so they do not die of a closed pipe.

use std::io::{self, IsTerminal, Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

/// The most output kept (16 MiB); the rest is read and dropped, and the
/// output says so.
const MAX_OUTPUT: usize = 16 << 20;

/// How long processes the command left running may keep its output open
/// after it exits.
const GRACE: Duration = Duration::from_secs(1);

/// What a command printed and how it ended.
#[derive(Debug, Default)]
struct Ran {
    /// Its output, up to [`MAX_OUTPUT`].
    output: Vec<u8>,
    /// Bytes past [`MAX_OUTPUT`], read and dropped.
    dropped: u64,
    /// Its exit code.
    code: u8,
    /// Processes it started still held its output after [`GRACE`].
    left_running: bool,
}

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
        Ok(ran) => {
            let mut write = || -> io::Result<()> {
                out.write_all(&ran.output)?;
                if ran.dropped > 0 {
                    let dropped = ran.dropped;
                    write!(
                        out,
                        "\n[hooks run-buffered: {dropped} more bytes of output were dropped]\n"
                    )?;
                }
                if ran.left_running {
                    write!(
                        out,
                        "\n[hooks run-buffered: the command left processes running that still \
                         hold its output; what they print from now on is dropped]\n"
                    )?;
                }
                out.flush()
            };
            // The output closed: nothing more can be said.
            let _ = write();
            ran.code
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            let _ = writeln!(err, "hooks run-buffered: cannot run `{program}`: {error}");
            127
        }
        Err(error) => {
            let _ = writeln!(
                err,
                "hooks run-buffered: `{program}` was not run: {error} (on Linux the command \
                 runs confined by Landlock, which this kernel must offer)"
            );
            127
        }
    }
}

/// Runs the command and reads its output: to its end, or, once the command
/// has exited, for [`GRACE`] more.
fn run(program: &str, args: &[String]) -> io::Result<Ran> {
    let (reader, writer) = io::pipe()?;
    let spare = reader.try_clone()?;
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
    let captured = Arc::new(Mutex::new(Ran::default()));
    let (done, ended) = mpsc::channel();
    let filling = captured.clone();
    std::thread::spawn(move || {
        let _ = done.send(read_into(reader, &filling));
    });
    let status = child.wait()?;
    let left_running = match ended.recv_timeout(GRACE) {
        Ok(read) => {
            read?;
            false
        }
        Err(_) => {
            drain(spare);
            true
        }
    };
    let mut ran = std::mem::take(&mut *captured.lock().unwrap_or_else(PoisonError::into_inner));
    ran.code = exit_code(status);
    ran.left_running = left_running;
    Ok(ran)
}

/// Reads `reader` to its end into `ran`: up to [`MAX_OUTPUT`] kept, the
/// rest counted.
fn read_into(mut reader: io::PipeReader, ran: &Mutex<Ran>) -> io::Result<()> {
    let mut chunk = vec![0; 64 << 10];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        let mut ran = ran.lock().unwrap_or_else(PoisonError::into_inner);
        let room = MAX_OUTPUT.saturating_sub(ran.output.len()).min(n);
        ran.output.extend_from_slice(&chunk[..room]);
        ran.dropped += (n - room) as u64;
    }
}

/// Hands the output pipe to a `cat` (`/bin/cat` or `/usr/bin/cat`, never
/// one found on PATH) that reads and drops what processes the command left
/// running still print, so they do not die of a closed pipe. Without one
/// they may.
fn drain(reader: io::PipeReader) {
    // By path: a `cat` the command put on PATH would run outside its
    // Landlock domain, holding the output.
    let Some(cat) = ["/bin/cat", "/usr/bin/cat"]
        .into_iter()
        .find(|path| std::path::Path::new(path).is_file())
    else {
        return;
    };
    let _ = Command::new(cat)
        .stdin(reader)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
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
/// process dies, and it enters a Landlock domain of its own, which closes
/// every process outside it to `/proc/PID/fd`, ptrace and
/// `process_vm_readv` (for root too). The domain handles one filesystem
/// right, making block devices, and grants none, so it takes nothing else
/// away. A kernel without Landlock fails the spawn.
#[cfg(target_os = "linux")]
fn guard_the_child(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    /// `struct landlock_ruleset_attr` up to `handled_access_fs` (ABI 1).
    #[repr(C)]
    struct RulesetAttr {
        handled_access_fs: u64,
    }
    /// `LANDLOCK_ACCESS_FS_MAKE_BLOCK`.
    const MAKE_BLOCK: u64 = 1 << 11;
    // SAFETY: the closure makes only async-signal-safe system calls with
    // plain integers or a pointer to a live stack value, and allocates
    // nothing (an `io::Error` from an errno does not allocate).
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            let attr = RulesetAttr {
                handled_access_fs: MAKE_BLOCK,
            };
            let ruleset = libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            );
            if ruleset < 0 {
                return Err(io::Error::last_os_error());
            }
            let ruleset = ruleset as libc::c_int;
            let restricted = libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32);
            let error = io::Error::last_os_error();
            libc::close(ruleset);
            if restricted != 0 {
                return Err(error);
            }
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
        let ran = run("/bin/sh", &["-c".to_owned(), script.to_owned()]).expect("runs");
        (ran.output, ran.dropped, ran.code)
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
    fn a_background_process_holding_the_output_gets_a_grace_period() {
        let (output, _, _) = sh("(sleep 0.3; echo late) &");
        assert_eq!(String::from_utf8_lossy(&output), "late\n");
        let started = std::time::Instant::now();
        let ran = run(
            "/bin/sh",
            &[
                "-c".to_owned(),
                "(sleep 5; echo later) & echo started".to_owned(),
            ],
        )
        .expect("runs");
        assert!(started.elapsed() < Duration::from_secs(4));
        assert_eq!(String::from_utf8_lossy(&ran.output), "started\n");
        assert!(ran.left_running);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_command_cannot_reach_another_process_s_descriptors() {
        // This test process's own stdout, through /proc, as Codex's
        // sandbox leaves process 1's: refused inside the domain.
        let parent = std::process::id();
        let (output, _, code) = sh(&format!("echo leaked > /proc/{parent}/fd/1"));
        assert_ne!(code, 0, "{}", String::from_utf8_lossy(&output));
        assert!(
            String::from_utf8_lossy(&output).contains("Permission denied"),
            "{}",
            String::from_utf8_lossy(&output)
        );
    }

    #[test]
    fn a_program_that_is_missing_is_an_error() {
        let error = run("/no/such/program", &[]).expect_err("no program");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
        assert_eq!(run_buffered(&[], &mut Vec::new(), &mut Vec::new()), 2);
    }
}

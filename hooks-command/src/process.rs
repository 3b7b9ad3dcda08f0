//! Running one command: its input on stdin, its output captured with a cap,
//! and a hard timeout; when it ends, whatever it started ends too.
//!
//! On Linux the command runs under a supervisor (see [`super::supervisor`])
//! that kills every descendant — including ones that called `setsid` — when
//! the command exits, times out or is abandoned. Elsewhere the command leads a
//! process group of its own and that group is killed on timeout or drop:
//! weaker, since `setsid` leaves the group and a normal exit kills nothing.

use std::io;
use std::os::unix::process::ExitStatusExt as _;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::{Child, ChildStdin, Command};

/// How many characters of a command's stdout, and of its stderr, are read.
/// Stdout that reaches it blocks the call, even for a `fail_open` hook (a
/// decision past the cap would go unseen); stderr is cut. The rest is read and discarded, so the command
/// never stalls on a full pipe.
pub const COMMAND_OUTPUT_LIMIT: usize = 10_000;

/// Bytes kept per stream: enough for [`COMMAND_OUTPUT_LIMIT`] characters of
/// any width (UTF-8 needs at most four bytes per character).
pub(crate) const BYTE_LIMIT: usize = COMMAND_OUTPUT_LIMIT * 4;

/// How long to wait, after a timeout, for the command to be killed and
/// reaped (on Linux: for the supervisor to kill and reap every descendant)
/// before the last resort.
const REAP_GRACE: Duration = Duration::from_secs(3);

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal killed it (not ours: ours is [`Exit::TimedOut`]).
    Signal(i32),
    /// It overran its timeout and was killed with its process group.
    TimedOut,
}

/// One output stream, capped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Captured {
    /// The first [`COMMAND_OUTPUT_LIMIT`] characters (invalid UTF-8 replaced).
    pub(crate) text: String,
    /// Whether more was written than `text` holds.
    pub(crate) truncated: bool,
    /// Whether what was kept is valid UTF-8 (`text` then holds it unchanged).
    pub(crate) utf8: bool,
}

impl Captured {
    /// What was read (at most [`BYTE_LIMIT`] bytes; `dropped` when more was
    /// written), cut to [`COMMAND_OUTPUT_LIMIT`] characters on a character
    /// boundary.
    pub(crate) fn from_bytes(bytes: &[u8], dropped: bool) -> Self {
        let utf8 = std::str::from_utf8(bytes).is_ok();
        let text = String::from_utf8_lossy(bytes);
        match text.char_indices().nth(COMMAND_OUTPUT_LIMIT) {
            Some((cut, _)) => Captured {
                text: text[..cut].to_owned(),
                truncated: true,
                utf8,
            },
            None => Captured {
                text: text.into_owned(),
                truncated: dropped,
                utf8,
            },
        }
    }
}

impl Default for Captured {
    fn default() -> Self {
        Captured {
            text: String::new(),
            truncated: false,
            utf8: true,
        }
    }
}

/// What a finished (or killed) command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finished {
    pub(crate) exit: Exit,
    pub(crate) stdout: Captured,
    pub(crate) stderr: Captured,
    /// A failure to write the input or read the output (a broken pipe on
    /// stdin is not one: the command may stop reading whenever it likes).
    pub(crate) io_error: Option<String>,
}

/// Spawns `command`, writes `input` to its stdin (then closes it), reads
/// stdout and stderr concurrently, and waits for it to exit — all within
/// `limit`. On Linux, every process the command started is killed when it
/// exits, so one that keeps stdout open cannot delay the result. Past
/// `limit`, or if the returned future is dropped first, the command and its
/// descendants are killed with `SIGKILL`. `Err` means it could not be started.
///
/// The caller sets the program, arguments, environment and directory; this
/// sets the standard streams, the process group and the supervisor.
pub(crate) async fn run(command: Command, input: &[u8], limit: Duration) -> io::Result<Finished> {
    let mut running = spawn(command)?;
    let stdin = running.child.stdin.take();
    let stdout = running.child.stdout.take();
    let stderr = running.child.stderr.take();
    let mut out = Capture::default();
    let mut err = Capture::default();
    let mut write_error = None;

    // The output must reach EOF and the command must exit; the command is
    // reaped only at the very end, so until then its pid — and so its
    // process group id — cannot be reused, and killing the group is safe.
    let outcome = tokio::time::timeout(limit, async {
        let ((), (), written) =
            tokio::join!(out.fill(stdout), err.fill(stderr), feed(stdin, input));
        write_error = written.err();
        running.child.wait().await
    })
    .await;

    let exit = match outcome {
        Ok(Ok(status)) => {
            running.reaped = true;
            exit_of(status)
        }
        Ok(Err(error)) => return Err(error),
        Err(_elapsed) => {
            running.stop();
            running.reap().await;
            Exit::TimedOut
        }
    };
    let io_error = write_error
        .map(|error| format!("could not write the input to its stdin: {error}"))
        .or_else(|| {
            out.error
                .take()
                .map(|error| format!("could not read its stdout: {error}"))
        })
        .or_else(|| {
            err.error
                .take()
                .map(|error| format!("could not read its stderr: {error}"))
        });
    Ok(Finished {
        exit,
        stdout: out.finish(),
        stderr: err.finish(),
        io_error,
    })
}

/// Starts `command` with piped standard streams in a process group of its
/// own — on Linux under the supervisor that kills every descendant when the
/// command ends or the returned [`Running`] is stopped or dropped.
pub(crate) fn spawn(mut command: Command) -> io::Result<Running> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `install` runs between fork and exec and uses only
        // async-signal-safe calls on stack memory (see its module).
        unsafe {
            command.pre_exec(|| super::supervisor::install());
        }
        // Never `kill_on_drop`: a `SIGKILL` to the supervisor would orphan
        // the tree it guards. `Running`'s drop asks it to stop instead.
        command.kill_on_drop(false);
    }
    #[cfg(not(target_os = "linux"))]
    command.kill_on_drop(true);
    Ok(Running::new(command.spawn()?))
}

pub(crate) fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        // Neither a code nor a signal: not possible on Unix; report it as a failure code.
        (None, None) => Exit::Code(-1),
    }
}

/// Writes the input and closes stdin. A command that exits (or closes stdin)
/// without reading everything is not an error.
async fn feed(stdin: Option<ChildStdin>, input: &[u8]) -> io::Result<()> {
    let Some(mut stdin) = stdin else {
        return Ok(());
    };
    match stdin.write_all(input).await {
        Err(error) if error.kind() != io::ErrorKind::BrokenPipe => Err(error),
        _ => Ok(()),
    }
    // Dropping `stdin` closes the pipe: the command sees end of input.
}

/// A stream being read: the first [`BYTE_LIMIT`] bytes are kept, the rest counted and dropped.
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    dropped: bool,
    error: Option<io::Error>,
}

impl Capture {
    /// Reads `pipe` to its end (or to a read error, which is kept).
    async fn fill(&mut self, pipe: Option<impl AsyncRead + Unpin>) {
        let Some(mut pipe) = pipe else {
            return;
        };
        let mut buffer = [0u8; 8192];
        loop {
            match pipe.read(&mut buffer).await {
                Ok(0) => return,
                Ok(read) => {
                    let room = BYTE_LIMIT.saturating_sub(self.bytes.len());
                    let kept = read.min(room);
                    self.bytes.extend_from_slice(&buffer[..kept]);
                    self.dropped |= kept < read;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    // Dropping the pipe (on return) makes further writes fail
                    // rather than block, so the command cannot hang on it.
                    self.error = Some(error);
                    return;
                }
            }
        }
    }

    /// The text, cut to [`COMMAND_OUTPUT_LIMIT`] characters on a character boundary.
    fn finish(self) -> Captured {
        Captured::from_bytes(&self.bytes, self.dropped)
    }
}

/// A spawned command that has not been reaped yet: dropping it stops the
/// command and what it started (see [`Running::stop`]).
pub(crate) struct Running {
    pub(crate) child: Child,
    /// The pid of what was spawned — the supervisor on Linux, else the
    /// command, which leads its own process group (so this is also its
    /// group id). Never 0 or 1.
    pid: Option<libc::pid_t>,
    pub(crate) reaped: bool,
}

impl Running {
    fn new(child: Child) -> Self {
        let pid = child
            .id()
            .and_then(|pid| libc::pid_t::try_from(pid).ok())
            // Never 0 or 1: `killpg(0)` would hit our own group, and 1 is init.
            .filter(|pid| *pid > 1);
        Running {
            child,
            pid,
            reaped: false,
        }
    }

    /// Linux: asks the supervisor to kill the command and every descendant
    /// (it then reaps them and exits). Elsewhere: `SIGKILL` to the command's
    /// whole process group.
    pub(crate) fn stop(&self) {
        if self.reaped {
            return;
        }
        let Some(pid) = self.pid else {
            return;
        };
        #[cfg(target_os = "linux")]
        let (status, what) = (
            // SAFETY: `kill` only sends a signal. `pid` is our own child and
            // not reaped (`reaped` is false), so it cannot have been reused;
            // it is above 1.
            unsafe { libc::kill(pid, super::supervisor::STOP) },
            "stopping the supervisor",
        );
        #[cfg(not(target_os = "linux"))]
        let (status, what) = (
            // SAFETY: `killpg` only sends a signal. `pid` is the pid of a
            // child we spawned with `process_group(0)`, so it names that
            // child's own group; the child is not reaped, so the group id
            // cannot have been reused. `pid > 1`, so this never signals our
            // own group or init's.
            unsafe { libc::killpg(pid, libc::SIGKILL) },
            "killpg",
        );
        if status != 0 {
            // ESRCH: already gone. Nothing else can go wrong with a valid
            // signal and our own child.
            tracing::trace!(pid, error = %io::Error::last_os_error(), "{what} failed");
        }
    }

    /// Waits (boundedly) for the stopped command to be reaped; on Linux, if
    /// the supervisor does not finish in time, kills it as a last resort.
    pub(crate) async fn reap(&mut self) {
        if let Ok(Ok(_)) = tokio::time::timeout(REAP_GRACE, self.child.wait()).await {
            self.reaped = true;
            return;
        }
        tracing::warn!(
            pid = self.pid,
            "a command hook did not end in time after being stopped; killing it"
        );
        if self.child.start_kill().is_ok()
            && let Ok(Ok(_)) = tokio::time::timeout(REAP_GRACE, self.child.wait()).await
        {
            self.reaped = true;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Runs before `child` is dropped, i.e. while it is still unreaped and
        // its pid still reserved. Tokio reaps a dropped child in the background.
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("/bin/sh");
        command.arg("-c").arg(script);
        command
    }

    #[tokio::test]
    async fn captures_exit_code_and_both_streams() {
        let finished = run(
            sh("cat; printf err >&2; exit 3"),
            b"in",
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        assert_eq!(finished.exit, Exit::Code(3));
        assert_eq!(finished.stdout.text, "in");
        assert_eq!(finished.stderr.text, "err");
        assert!(!finished.stdout.truncated && finished.io_error.is_none());
    }

    #[tokio::test]
    async fn a_command_that_ignores_its_input_is_fine() {
        let input = vec![b'x'; 1 << 20];
        let finished = run(sh("exit 0"), &input, Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(finished.exit, Exit::Code(0));
        assert_eq!(finished.io_error, None);
    }

    #[tokio::test]
    async fn output_is_capped_on_a_character_boundary() {
        // 30,000 two-byte characters; the command must not block on the pipe.
        let script = "i=0; while [ $i -lt 3000 ]; do printf 'éééééééééé'; i=$((i+1)); done";
        let finished = run(sh(script), b"", Duration::from_secs(20)).await.unwrap();
        assert_eq!(finished.exit, Exit::Code(0));
        assert_eq!(finished.stdout.text.chars().count(), COMMAND_OUTPUT_LIMIT);
        assert!(finished.stdout.text.chars().all(|c| c == 'é'));
        assert!(finished.stdout.truncated);
    }

    #[tokio::test]
    async fn signals_are_reported() {
        let finished = run(sh("kill -9 $$"), b"", Duration::from_secs(10))
            .await
            .unwrap();
        assert_eq!(finished.exit, Exit::Signal(libc::SIGKILL));
    }

    #[tokio::test]
    async fn an_overrun_kills_the_command() {
        let started = std::time::Instant::now();
        let finished = run(
            sh("printf partial >&2; sleep 30"),
            b"",
            Duration::from_millis(500),
        )
        .await
        .unwrap();
        assert_eq!(finished.exit, Exit::TimedOut);
        assert_eq!(finished.stderr.text, "partial");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    /// The supervisor exits the way the command did, as soon as it did, even
    /// with a background child holding both pipes open.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_exit_code_comes_back_while_a_child_holds_the_pipes() {
        let finished = run(
            sh("cat > /dev/null; (sleep 97.5) & printf out; printf err >&2; exit 3"),
            b"in",
            Duration::from_secs(20),
        )
        .await
        .unwrap();
        assert_eq!(finished.exit, Exit::Code(3));
        assert_eq!(finished.stdout.text, "out");
        assert_eq!(finished.stderr.text, "err");
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error() {
        let command = Command::new("/nonexistent/hook-program");
        assert!(run(command, b"", Duration::from_secs(1)).await.is_err());
    }
}

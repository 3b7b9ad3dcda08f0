//! Linux: the supervisor each command runs under, so that no process a hook
//! started outlives the hook — not even one that left the command's process
//! group or session with `setsid`.
//!
//! **How.** Spawning forks; in that child, before `exec`, [`install`] makes
//! the child a *child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`) and forks
//! once more — with the raw `clone` system call, not the C library's `fork`,
//! which would run the host program's `pthread_atfork` handlers again in a
//! child of a multi-threaded process (a handler taking a lock another thread
//! held at the first fork would hang the spawn, and the hook's timeout with
//! it). The grandchild goes on to exec the command; the child stays
//! behind as the supervisor and never execs. Any descendant of the command
//! whose parent dies is reparented to the nearest subreaper — the supervisor —
//! so the whole tree stays below it whatever its session or process group.
//! When the command exits, or the runtime sends [`STOP`] (timeout, dropped
//! hook), or the runtime's process disappears, the supervisor kills its
//! children with `SIGKILL` generation by generation (listing them from
//! `/proc/self/task/<pid>/children`) until none is left, reaps them, and then
//! exits with the command's own exit status.
//!
//! **Why not something else.** A process-group kill misses `setsid`. A cgroup
//! (v2, with `cgroup.kill`) would also work but needs a writable, delegated
//! cgroup directory, which an unprivileged agent or a container often lacks.
//! Making the agent's own process a subreaper would change the whole host
//! program: orphans of all its children (not only hooks) would be reparented
//! to it and pile up unreaped. The supervisor needs no privileges and touches
//! only its own process.
//!
//! **What remains possible.** A process the hook asks *another* process to
//! start (`systemd-run`, `at`, a daemon over a socket) is not the hook's
//! descendant and is not killed. A descendant the supervisor may not signal
//! (a set-uid program) is waited for only briefly. Without
//! `CONFIG_PROC_CHILDREN` (no `children` file) the supervisor falls back to
//! killing the command's process group, which `setsid` escapes. If the
//! supervisor itself is killed with `SIGKILL`, the tree is reparented upwards
//! and survives.
//!
//! **Signals.** The supervisor blocks every signal that can be blocked, so a
//! catchable signal sent to it (by the command, or by an operator's `pkill`,
//! which matches it by the agent's name) is never delivered; [`STOP`] ends
//! it early only when the runtime's process sent it. `SIGKILL` and
//! `SIGSTOP` cannot be blocked: `SIGKILL` lets the tree escape as above, and
//! a stopped supervisor waits until the hook's timeout, when the runtime
//! kills it (`SIGKILL`) and the tree escapes the same way.
//!
//! **Constraints.** Everything here runs in a child forked from a
//! multi-threaded process: only async-signal-safe calls are allowed — raw
//! `libc` calls on stack memory; no allocation, no locks, no panics.

use std::io;
use std::mem::MaybeUninit;

/// The signal the runtime sends the supervisor to end the command and
/// everything it started.
pub(crate) const STOP: libc::c_int = libc::SIGTERM;

/// How often the supervisor checks that the runtime's process still exists.
const PARENT_CHECK_SECONDS: libc::time_t = 1;

/// How many idle 1 ms rounds the supervisor waits for killed descendants
/// that do not die (ones it may not signal) before it gives up on them.
const IDLE_ROUNDS: u32 = 2_000;

/// Runs in the child that spawning forked, between fork and exec (it is
/// installed with `pre_exec`). Returns `Ok` in the process that is to exec the
/// command; in the supervisor it never returns.
///
/// # Safety
///
/// Must only be called in a freshly forked child, as a `pre_exec` closure is:
/// it forks, and it exits the process it continues in.
pub(crate) unsafe fn install() -> io::Result<()> {
    // SAFETY: every call below is async-signal-safe and works on stack
    // memory owned by this frame; `raw_fork` in a single-threaded child is
    // safe (see there).
    unsafe {
        let runtime = libc::getppid();
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        // Blocked before the fork, so no `SIGCHLD` or `STOP` can be lost
        // between the fork and the supervisor's first wait.
        let mut waited = empty_set();
        libc::sigaddset(&mut waited, libc::SIGCHLD);
        libc::sigaddset(&mut waited, STOP);
        let mut previous = empty_set();
        if libc::sigprocmask(libc::SIG_BLOCK, &waited, &mut previous) != 0 {
            return Err(io::Error::last_os_error());
        }
        let command = raw_fork();
        if command < 0 {
            return Err(io::Error::last_os_error());
        }
        if command == 0 {
            // The command: the signal mask it would have had, a process group
            // of its own (the supervisor's fallback kills that group), and on
            // to exec. The subreaper flag is not inherited across fork.
            libc::sigprocmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut());
            libc::setpgid(0, 0);
            return Ok(());
        }
        supervise(command, runtime, &waited)
    }
}

/// `fork(2)` straight from the kernel: `clone` with only `SIGCHLD` as the
/// exit signal, on the same (copied) stack. Unlike the C library's `fork` it
/// runs no `pthread_atfork` handlers, so nothing of the host program runs in
/// this child; the price is that the C library's idea of the thread id is
/// the parent's in the new process, so nothing after it may use a thread id
/// (no `raise`, no `pthread_*`; `getpid` and `kill` are plain system calls).
/// Returns the child's pid in the parent, 0 in the child, -1 with `errno`.
///
/// # Safety
///
/// Only in a single-threaded process (a freshly forked child).
unsafe fn raw_fork() -> libc::pid_t {
    // The first two arguments are (flags, stack) everywhere but s390x, which
    // swaps them; the remaining ones (parent tid, child tid, tls — in an
    // order that differs between x86_64 and aarch64) are all unused here.
    #[cfg(not(target_arch = "s390x"))]
    let args: [libc::c_ulong; 2] = [libc::SIGCHLD as libc::c_ulong, 0];
    #[cfg(target_arch = "s390x")]
    let args: [libc::c_ulong; 2] = [0, libc::SIGCHLD as libc::c_ulong];
    // SAFETY: with no CLONE_VM or CLONE_THREAD flag this is fork(2): the
    // child gets a copy of the memory, stack included, and returns here.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            args[0],
            args[1],
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    libc::pid_t::try_from(pid).unwrap_or(-1)
}

/// The supervisor's whole life: wait, then clean up, then exit.
///
/// # Safety
///
/// Only in the supervisor process [`install`] forked off.
unsafe fn supervise(command: libc::pid_t, runtime: libc::pid_t, waited: &libc::sigset_t) -> ! {
    // SAFETY: async-signal-safe calls on stack memory only.
    unsafe {
        reset_signal_handlers();
        // Every signal that can be blocked stays pending and does nothing:
        // a catchable signal (the command's `kill -HUP $PPID`, an operator's
        // `pkill -HUP <agent>`, which matches supervisors by name) must not
        // end the supervisor before the command, or the runtime would read
        // the signal as the command's failure and the tree would escape.
        // `SIGCHLD` and `STOP` are taken with `sigtimedwait` below; `SIGKILL`
        // and `SIGSTOP` cannot be blocked.
        let mut all = empty_set();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
        // A re-raised crash signal must not dump this copy of the runtime.
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        // The command's pipes must reach end-of-file when the command and its
        // descendants are gone; this process must hold none of them (nor the
        // spawn's exec-error pipe, which the runtime reads to end-of-file).
        close_all_descriptors();

        let mut status = None;
        let tick = libc::timespec {
            tv_sec: PARENT_CHECK_SECONDS,
            tv_nsec: 0,
        };
        loop {
            // Reap what has exited: the command, and orphans reparented here.
            loop {
                let mut code = 0;
                let reaped = libc::waitpid(-1, &mut code, libc::WNOHANG);
                if reaped == command {
                    status = Some(code);
                }
                if reaped <= 0 {
                    break;
                }
            }
            if status.is_some() {
                break;
            }
            let mut info = MaybeUninit::<libc::siginfo_t>::zeroed();
            let signal = libc::sigtimedwait(waited, info.as_mut_ptr(), &tick);
            // `STOP` counts only from the runtime: from anyone else (the
            // command itself, a stray `pkill`) it is consumed and ignored.
            let from_runtime = signal == STOP && info.assume_init_ref().si_pid() == runtime;
            if from_runtime || libc::getppid() != runtime {
                break;
            }
        }
        kill_descendants(command);
        exit_like(status)
    }
}

/// Kills every descendant, generation by generation, and reaps them.
///
/// # Safety
///
/// Only in the supervisor.
unsafe fn kill_descendants(command: libc::pid_t) {
    // SAFETY: async-signal-safe calls on stack memory only.
    unsafe {
        let mut path = [0u8; 64];
        children_path(libc::getpid(), &mut path);
        let mut idle = 0;
        loop {
            if kill_children(&path).is_none() {
                // No `children` file: the command's group is the best left.
                libc::kill(-command, libc::SIGKILL);
            }
            let mut code = 0;
            let reaped = libc::waitpid(-1, &mut code, libc::WNOHANG);
            if reaped > 0 {
                idle = 0;
                continue;
            }
            if reaped < 0 && errno() != libc::EINTR {
                return; // ECHILD: nothing is left.
            }
            idle += 1;
            if idle > IDLE_ROUNDS {
                return;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 1_000_000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
    }
}

/// Sends `SIGKILL` to every child listed in the `children` file at `path`
/// (a NUL-terminated path); `None` when the file cannot be read.
///
/// # Safety
///
/// Only in the supervisor.
unsafe fn kill_children(path: &[u8; 64]) -> Option<usize> {
    // SAFETY: `path` is NUL-terminated (see `children_path`); the buffer is
    // ours; `read` never writes past `buffer.len()`.
    unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut buffer = [0u8; 512];
        let mut killed = 0;
        let mut pid: libc::pid_t = 0;
        let mut digits = false;
        loop {
            let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
            if read < 0 && errno() == libc::EINTR {
                continue;
            }
            let Ok(read) = usize::try_from(read) else {
                break;
            };
            if read == 0 {
                break;
            }
            for byte in buffer.iter().take(read) {
                if byte.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add(libc::pid_t::from(byte - b'0'));
                    digits = true;
                } else if digits {
                    killed += kill_one(pid);
                    pid = 0;
                    digits = false;
                }
            }
        }
        if digits {
            killed += kill_one(pid);
        }
        libc::close(fd);
        Some(killed)
    }
}

/// `SIGKILL` to one child (never to 0, 1 or a group); 1 if it was sent.
fn kill_one(pid: libc::pid_t) -> usize {
    if pid <= 1 {
        return 0;
    }
    // SAFETY: `kill` only sends a signal. `pid` is listed as this process's
    // child and is not reaped yet (only this process reaps it), so it cannot
    // name another process.
    usize::from(unsafe { libc::kill(pid, libc::SIGKILL) } == 0)
}

/// Writes `/proc/self/task/<pid>/children` and a NUL into `path`.
fn children_path(pid: libc::pid_t, path: &mut [u8; 64]) {
    let mut at = 0;
    let mut push = |bytes: &[u8]| {
        for byte in bytes {
            if let Some(slot) = path.get_mut(at) {
                *slot = *byte;
                at += 1;
            }
        }
    };
    push(b"/proc/self/task/");
    let mut digits = [0u8; 12];
    let mut len = 0;
    let mut rest = u32::try_from(pid).unwrap_or(0);
    loop {
        if let Some(slot) = digits.get_mut(len) {
            // `rest % 10` is below 10, so this never truncates.
            *slot = b'0' + (rest % 10) as u8;
            len += 1;
        }
        rest /= 10;
        if rest == 0 || len == digits.len() {
            break;
        }
    }
    for index in (0..len).rev() {
        if let Some(digit) = digits.get(index) {
            push(&[*digit]);
        }
    }
    push(b"/children\0");
}

/// Exits the way the command did: its exit code, or its signal re-raised.
///
/// # Safety
///
/// Only in the supervisor.
unsafe fn exit_like(status: Option<libc::c_int>) -> ! {
    // SAFETY: async-signal-safe calls; `_exit` does not run destructors or
    // atexit handlers that belong to the runtime's process.
    unsafe {
        match status {
            Some(code) if libc::WIFEXITED(code) => libc::_exit(libc::WEXITSTATUS(code)),
            Some(code) if libc::WIFSIGNALED(code) => {
                let signal = libc::WTERMSIG(code);
                libc::signal(signal, libc::SIG_DFL);
                let mut only = empty_set();
                libc::sigaddset(&mut only, signal);
                libc::kill(libc::getpid(), signal);
                libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
                libc::_exit(128 + signal)
            }
            // Stopped early (timeout, dropped hook, runtime gone): the
            // runtime does not read this status.
            _ => libc::_exit(128 + libc::SIGKILL),
        }
    }
}

/// Default dispositions for every signal: the runtime's handlers (Tokio's
/// `SIGCHLD` handler, a host's Ctrl-C handler) must not run in this copy of it.
///
/// # Safety
///
/// Only in the supervisor.
unsafe fn reset_signal_handlers() {
    // SAFETY: `signal` is async-signal-safe; invalid numbers just fail.
    unsafe {
        for signal in 1..=64 {
            if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
    }
}

/// Closes every file descriptor of this process.
///
/// # Safety
///
/// Only in the supervisor, which uses no descriptor it did not open later.
unsafe fn close_all_descriptors() {
    // SAFETY: closing descriptors is async-signal-safe; this process owns
    // them all and uses none of them afterwards.
    unsafe {
        let all = libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        if all == 0 {
            return;
        }
        // Kernels before 5.9: one by one, up to the descriptor limit.
        let mut limit = MaybeUninit::<libc::rlimit>::zeroed();
        let highest = if libc::getrlimit(libc::RLIMIT_NOFILE, limit.as_mut_ptr()) == 0 {
            limit.assume_init().rlim_cur.min(1 << 20)
        } else {
            1 << 16
        };
        let highest = libc::c_int::try_from(highest).unwrap_or(1 << 16);
        for fd in 0..highest {
            libc::close(fd);
        }
    }
}

/// An empty signal set.
fn empty_set() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::zeroed();
    // SAFETY: `sigemptyset` initialises the set it is given; zeroed memory
    // is a valid place for it.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        set.assume_init()
    }
}

/// The calling thread's `errno` (reading it does not allocate).
fn errno() -> libc::c_int {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering};
    use std::time::Duration;

    /// This test process's id, and the pipe `record_prepare` writes to.
    static TEST_PID: AtomicI32 = AtomicI32::new(0);
    static PREPARE_PIPE: AtomicI32 = AtomicI32::new(-1);

    /// A host's `pthread_atfork` prepare handler: notes, in the pipe, every
    /// fork called from a process other than this one.
    extern "C" fn record_prepare() {
        // SAFETY: `getpid` and `write` are async-signal-safe; the buffer is
        // a static byte; a full or closed pipe only makes `write` fail.
        unsafe {
            if libc::getpid() != TEST_PID.load(Ordering::SeqCst) {
                libc::write(PREPARE_PIPE.load(Ordering::SeqCst), b"x".as_ptr().cast(), 1);
            }
        }
    }

    /// The supervisor forks without the C library's `fork`: the host's
    /// `pthread_atfork` handlers (which may take locks another thread held
    /// at the first fork) never run inside the spawned child.
    #[tokio::test]
    async fn the_supervisor_runs_no_fork_handlers() {
        let mut fds = [0; 2];
        // SAFETY: `pipe2` fills the two-element array it is given;
        // `pthread_atfork` registers a handler that is async-signal-safe.
        unsafe {
            assert_eq!(
                libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC),
                0
            );
            TEST_PID.store(libc::getpid(), Ordering::SeqCst);
            PREPARE_PIPE.store(fds[1], Ordering::SeqCst);
            assert_eq!(libc::pthread_atfork(Some(record_prepare), None, None), 0);
        }
        let mut command = tokio::process::Command::new("/bin/sh");
        command.arg("-c").arg("exit 4");
        let finished = super::super::process::run(command, b"", Duration::from_secs(20))
            .await
            .expect("the command starts");
        assert_eq!(finished.exit, super::super::process::Exit::Code(4));
        let mut byte = [0u8; 1];
        // SAFETY: reads at most one byte into a one-byte buffer.
        let read = unsafe { libc::read(fds[0], byte.as_mut_ptr().cast(), 1) };
        assert!(read <= 0, "a fork handler ran in the spawned child");
    }

    #[test]
    fn the_children_path_names_this_task() {
        let mut path = [0u8; 64];
        children_path(4_194_304, &mut path);
        let end = path.iter().position(|byte| *byte == 0).unwrap();
        assert_eq!(&path[..end], b"/proc/self/task/4194304/children");
        children_path(7, &mut path);
        let end = path.iter().position(|byte| *byte == 0).unwrap();
        assert_eq!(&path[..end], b"/proc/self/task/7/children");
    }
}

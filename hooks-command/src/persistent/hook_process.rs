//! [`HookProcess`]: one persistent hook process, started on the first call,
//! answering requests matched by id, restarted with back-off when it fails.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher as _;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::answer::{self, Answer, Line, PERSISTENT_ANSWER_LIMIT};
use crate::process::{self, Exit, Running};
use crate::protocol::excerpt;
use hooks_runtime::config::ConfigDuration;

/// The wait before the second start after a failure; it doubles with each
/// failure in a row, up to [`LONGEST_BACK_OFF`]. The first restart after a
/// process that had answered is immediate.
const FIRST_BACK_OFF: Duration = Duration::from_millis(250);

/// The longest wait between two starts.
const LONGEST_BACK_OFF: Duration = Duration::from_secs(30);

/// How long, after stdout closed, the exit status is waited for (to say how
/// the process ended) before it is stopped.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How much of the process's last stderr a failure quotes.
const STDERR_TAIL: usize = 1_000;

/// The longest stderr line logged whole; longer ones are cut.
const STDERR_LINE: usize = 4_096;

/// Calls whose answer may still come after they were cancelled: more than
/// this and the process counts as answering nobody.
const ABANDONED_LIMIT: usize = 1_000;

/// Why a call got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// The process is down, crashed, closed stdout, hung past the timeout
    /// or could not be started or written to: a hook failure.
    Process(String),
    /// The process wrote what cannot be read as an answer while the call
    /// waited: the call's decision may have been in it.
    Unreadable(String),
}

impl Failure {
    fn reason(&self) -> &str {
        match self {
            Failure::Process(reason) | Failure::Unreadable(reason) => reason,
        }
    }
}

/// A call's failure, with the end of what the process wrote on stderr.
/// The stderr is for the operator (the log, `hooks check`), never for the
/// reason the model reads: the process serves every session, and another
/// session's arguments may be in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallFailure {
    pub(crate) failure: Failure,
    pub(crate) stderr: String,
}

/// An answer, with what the runtime did on the way (a restart) for the trace.
#[derive(Debug)]
pub(crate) struct Answered {
    pub(crate) answer: Answer,
    pub(crate) notes: Vec<String>,
}

/// A program kept running between calls: each call is one line of JSON
/// with an `id` on its stdin, each answer one line with that id on its
/// stdout. Several calls may wait at once.
///
/// It starts on the first call. When it exits, closes stdout, writes a line
/// that is not an answer or answers an id no call waits for, every call
/// waiting fails, it is stopped (on Linux with everything it started), and
/// it is started again on a later call: at once the first time, then after
/// a wait that doubles with each failure in a row (up to 30 s). Calls made
/// during that wait fail at once. A call not answered within the timeout
/// fails and restarts the process, which is presumed stuck. Dropping the
/// `HookProcess` stops it.
pub(crate) struct HookProcess {
    shared: Arc<Shared>,
}

/// What the process's reader tasks share with the callers.
struct Shared {
    /// The hook's name, for logs.
    hook: String,
    /// How long a call waits for its answer.
    timeout: Duration,
    state: Mutex<State>,
    generations: AtomicU64,
}

enum State {
    NotStarted,
    Up(Arc<Live>),
    Down {
        reason: String,
        retry_at: Instant,
        failures: u32,
    },
}

/// One run of the process.
struct Live {
    generation: u64,
    stdin: tokio::sync::Mutex<ChildStdin>,
    calls: Mutex<Calls>,
    running: Mutex<Option<Running>>,
    /// Failures in a row before this run; cleared by an answer.
    failures: AtomicU32,
    /// The end of what it wrote on stderr, for the failure message.
    stderr_tail: Mutex<String>,
}

struct Calls {
    /// False once the run is over: no call may wait on it any more.
    open: bool,
    /// Ids are drawn from this keyed hash of a counter, so that text the
    /// model wrote cannot guess one: a forged answer line that reaches
    /// stdout (a child process sharing it) names an unknown id, which blocks.
    ids: std::collections::hash_map::RandomState,
    counter: u64,
    waiting: HashMap<u64, oneshot::Sender<Result<Answer, Failure>>>,
    /// Cancelled calls, whose answers are dropped when they come.
    abandoned: HashSet<u64>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing panics while holding these locks; a poisoned one is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl HookProcess {
    /// A process for hook `hook` whose calls wait at most `timeout`.
    pub(crate) fn new(hook: &str, timeout: Duration) -> Self {
        HookProcess {
            shared: Arc::new(Shared {
                hook: hook.to_owned(),
                timeout,
                state: Mutex::new(State::NotStarted),
                generations: AtomicU64::new(0),
            }),
        }
    }

    /// Sends `request` (with an `id` added) and waits for its answer,
    /// starting the process with `launch` first if it is not running and
    /// not waiting out a back-off.
    pub(crate) async fn call(
        &self,
        request: Map<String, Value>,
        launch: impl FnOnce() -> Result<Command, String>,
    ) -> Result<Answered, CallFailure> {
        let shared = &self.shared;
        let (live, notes) = shared.live(launch).map_err(|failure| CallFailure {
            failure,
            stderr: String::new(),
        })?;
        self.exchange(&live, request)
            .await
            .map(|answer| Answered { answer, notes })
            .map_err(|failure| CallFailure {
                failure,
                stderr: live.stderr_tail(),
            })
    }

    /// One request to the running `live` process, and its answer.
    async fn exchange(
        &self,
        live: &Arc<Live>,
        mut request: Map<String, Value>,
    ) -> Result<Answer, Failure> {
        let shared = &self.shared;
        let (id, mut answer) = live.register()?;
        request.insert("id".into(), id.into());
        let mut line = serde_json::to_vec(&Value::Object(request)).map_err(|error| {
            Failure::Process(format!("could not encode the request as JSON: {error}"))
        })?;
        line.push(b'\n');
        let mut waiting = Waiting {
            live,
            id,
            done: false,
        };
        // The line is written by a task of its own, which a cancelled call
        // does not stop: half a line would run into the next request.
        let writer = {
            let live = Arc::clone(live);
            tokio::spawn(async move {
                let mut stdin = live.stdin.lock().await;
                stdin.write_all(&line).await?;
                stdin.flush().await
            })
        };
        let exchange = async {
            let written = writer.await.unwrap_or_else(|_| {
                Err(std::io::Error::other("the task writing the request ended"))
            });
            if let Err(error) = written {
                // Most often the process has just exited: its reader says
                // how, in a moment.
                if let Ok(Ok(outcome)) = tokio::time::timeout(EXIT_GRACE * 2, &mut answer).await {
                    return outcome;
                }
                let failure = Failure::Process(format!("could not be written to: {error}"));
                shared.gone(live, failure.clone());
                return Err(failure);
            }
            answer
                .await
                .unwrap_or_else(|_| Err(Failure::Process("stopped before it answered".into())))
        };
        let outcome = tokio::time::timeout(shared.timeout, exchange).await;
        waiting.done = true;
        match outcome {
            Ok(Ok(answer)) => {
                live.failures.store(0, Ordering::Relaxed);
                Ok(answer)
            }
            Ok(Err(failure)) => Err(failure),
            Err(_elapsed) => {
                let failure = Failure::Process(format!(
                    "did not answer within {}; it is stopped and will be started again (raise \
                     the hook's `timeout` if it needs longer)",
                    ConfigDuration::from(shared.timeout)
                ));
                shared.gone(live, failure.clone());
                Err(failure)
            }
        }
    }
}

impl Drop for HookProcess {
    fn drop(&mut self) {
        let state = std::mem::replace(&mut *lock(&self.shared.state), State::NotStarted);
        if let State::Up(live) = state {
            live.close(&Failure::Process("its hook was dropped".into()));
            // Dropping `Running` stops the process and what it started.
            drop(lock(&live.running).take());
        }
    }
}

/// A call waiting for its answer: dropped early (the call was cancelled),
/// it leaves its id to be dropped when the answer comes.
struct Waiting<'a> {
    live: &'a Live,
    id: u64,
    done: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let too_many = {
            let mut calls = lock(&self.live.calls);
            if calls.waiting.remove(&self.id).is_some() {
                calls.abandoned.insert(self.id);
            }
            calls.abandoned.len() > ABANDONED_LIMIT
        };
        if too_many {
            // Answering nobody: stop it (its reader then ends the run).
            self.live.close(&Failure::Process(
                "left too many cancelled calls unanswered".into(),
            ));
            drop(lock(&self.live.running).take());
        }
    }
}

impl Shared {
    /// The running process, started if need be; with a note for the trace
    /// when this call (re)started it after a failure.
    fn live(
        self: &Arc<Self>,
        launch: impl FnOnce() -> Result<Command, String>,
    ) -> Result<(Arc<Live>, Vec<String>), Failure> {
        let mut state = lock(&self.state);
        let (failures, previous) = match &*state {
            State::Up(live) => return Ok((Arc::clone(live), Vec::new())),
            State::NotStarted => (0, None),
            State::Down {
                reason,
                retry_at,
                failures,
            } => {
                let now = Instant::now();
                if now < *retry_at {
                    return Err(Failure::Process(format!(
                        "is down ({reason}); it is started again in {}",
                        ConfigDuration::from(*retry_at - now)
                    )));
                }
                (*failures, Some(reason.clone()))
            }
        };
        let started = launch().and_then(|command| {
            process::spawn(command).map_err(|error| {
                format!("could not be started ({error}); check that the program exists and is executable")
            })
        });
        let mut running = match started {
            Ok(running) => running,
            Err(reason) => {
                let failures = failures.saturating_add(1);
                let delay = back_off(failures);
                tracing::warn!(hook = %self.hook, %reason, retry_in = ?delay, "hook process could not be started");
                *state = State::Down {
                    reason: reason.clone(),
                    retry_at: Instant::now() + delay,
                    failures,
                };
                return Err(Failure::Process(reason));
            }
        };
        let (Some(stdin), Some(stdout), Some(stderr)) = (
            running.child.stdin.take(),
            running.child.stdout.take(),
            running.child.stderr.take(),
        ) else {
            return Err(Failure::Process(
                "was started without its standard streams".into(),
            ));
        };
        let live = Arc::new(Live {
            generation: self.generations.fetch_add(1, Ordering::Relaxed),
            stdin: tokio::sync::Mutex::new(stdin),
            calls: Mutex::new(Calls {
                open: true,
                ids: std::collections::hash_map::RandomState::new(),
                counter: 0,
                waiting: HashMap::new(),
                abandoned: HashSet::new(),
            }),
            running: Mutex::new(Some(running)),
            failures: AtomicU32::new(failures),
            stderr_tail: Mutex::new(String::new()),
        });
        let errors = tokio::spawn(read_stderr(self.hook.clone(), stderr, Arc::clone(&live)));
        tokio::spawn(read_answers(
            Arc::downgrade(self),
            Arc::clone(&live),
            stdout,
            errors,
        ));
        *state = State::Up(Arc::clone(&live));
        let notes = match previous {
            Some(reason) => {
                tracing::info!(hook = %self.hook, after = %reason, "hook process started again");
                vec![format!(
                    "started the hook process again (it had stopped: {reason})"
                )]
            }
            None => Vec::new(),
        };
        Ok((live, notes))
    }

    /// The run is over: the calls waiting fail with `failure`, the process
    /// is stopped, and the next start waits out the back-off.
    fn gone(&self, live: &Live, failure: Failure) {
        {
            let mut state = lock(&self.state);
            if let State::Up(current) = &*state
                && current.generation == live.generation
            {
                let failures = live.failures.load(Ordering::Relaxed).saturating_add(1);
                let delay = back_off(failures);
                tracing::warn!(
                    hook = %self.hook,
                    reason = failure.reason(),
                    restart_in = ?delay,
                    "hook process stopped; the calls waiting on it fail"
                );
                *state = State::Down {
                    reason: failure.reason().to_owned(),
                    retry_at: Instant::now() + delay,
                    failures,
                };
            }
        }
        live.close(&failure);
        if let Some(running) = lock(&live.running).take() {
            tokio::spawn(end(running));
        }
    }
}

impl Live {
    /// A new id and the channel its answer comes on; fails once the run is over.
    fn register(&self) -> Result<(u64, oneshot::Receiver<Result<Answer, Failure>>), Failure> {
        let mut calls = lock(&self.calls);
        if !calls.open {
            return Err(Failure::Process("stopped just now".into()));
        }
        let id = loop {
            calls.counter += 1;
            // 53 bits: every JSON reader (JavaScript's numbers too) keeps it exact.
            let id = calls.ids.hash_one(calls.counter) & ((1 << 53) - 1);
            if id != 0 && !calls.waiting.contains_key(&id) && !calls.abandoned.contains(&id) {
                break id;
            }
        };
        let (sender, receiver) = oneshot::channel();
        calls.waiting.insert(id, sender);
        Ok((id, receiver))
    }

    /// Hands an answer to its call. `Err` when no call has that id: the
    /// process is answering requests it was not sent.
    fn deliver(&self, id: u64, answer: Answer) -> Result<(), String> {
        let mut calls = lock(&self.calls);
        if let Some(sender) = calls.waiting.remove(&id) {
            // The call may have just been cancelled: nothing to do then.
            let _ = sender.send(Ok(answer));
            return Ok(());
        }
        if calls.abandoned.remove(&id) {
            return Ok(());
        }
        Err(format!(
            "answered id {id}, which no call is waiting for (each request's `id` must be \
             answered exactly once)"
        ))
    }

    /// Ends the run for its callers: every call waiting gets `failure`.
    fn close(&self, failure: &Failure) {
        let waiting = {
            let mut calls = lock(&self.calls);
            calls.open = false;
            calls.abandoned.clear();
            std::mem::take(&mut calls.waiting)
        };
        for sender in waiting.into_values() {
            let _ = sender.send(Err(failure.clone()));
        }
    }

    fn abandoned_too_many(&self) -> bool {
        lock(&self.calls).abandoned.len() > ABANDONED_LIMIT
    }

    /// The end of what the process wrote on stderr.
    fn stderr_tail(&self) -> String {
        lock(&self.stderr_tail).trim().to_owned()
    }
}

/// The wait before start number `failures + 1` after `failures` failures in a row.
fn back_off(failures: u32) -> Duration {
    match failures {
        0 | 1 => Duration::ZERO,
        n => FIRST_BACK_OFF
            .saturating_mul(1u32.checked_shl(n - 2).unwrap_or(u32::MAX))
            .min(LONGEST_BACK_OFF),
    }
}

/// Reads answers until the process stops making sense or ends, then ends the run.
async fn read_answers(
    shared: Weak<Shared>,
    live: Arc<Live>,
    stdout: ChildStdout,
    errors: JoinHandle<()>,
) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    let failure = loop {
        line.clear();
        match answer::read_line(&mut reader, &mut line, PERSISTENT_ANSWER_LIMIT).await {
            Ok(Line::Whole) => match answer::parse(&line) {
                Ok((id, answer)) => match live.deliver(id, answer) {
                    Ok(()) if live.abandoned_too_many() => {
                        break Failure::Process("left too many cancelled calls unanswered".into());
                    }
                    Ok(()) => {}
                    Err(problem) => break Failure::Unreadable(problem),
                },
                Err(problem) => break Failure::Unreadable(problem),
            },
            Ok(Line::TooLong) => {
                break Failure::Unreadable(format!(
                    "wrote an answer longer than {PERSISTENT_ANSWER_LIMIT} bytes, which is not read"
                ));
            }
            Ok(Line::End) if line.is_empty() => break Failure::Process(String::new()),
            Ok(Line::End) => {
                break Failure::Unreadable(format!(
                    "closed stdout in the middle of an answer: {}",
                    excerpt(&String::from_utf8_lossy(&line), 200)
                ));
            }
            Err(error) => break Failure::Process(format!("could not be read from: {error}")),
        }
    };
    let running = lock(&live.running).take();
    let failure = match (failure, running) {
        // Stdout closed: say how the process ended, when it ends soon.
        (Failure::Process(reason), Some(mut running)) if reason.is_empty() => {
            let exit = match tokio::time::timeout(EXIT_GRACE, running.child.wait()).await {
                Ok(Ok(status)) => {
                    running.reaped = true;
                    Some(process::exit_of(status))
                }
                _ => None,
            };
            let _ = tokio::time::timeout(EXIT_GRACE, errors).await;
            let how = match exit {
                Some(Exit::Code(code)) => format!("exited with code {code}"),
                Some(Exit::Signal(signal)) => format!("was killed by signal {signal}"),
                Some(Exit::TimedOut) | None => "closed its stdout".to_owned(),
            };
            tokio::spawn(end(running));
            Failure::Process(how)
        }
        (Failure::Process(reason), running) if reason.is_empty() => {
            drop(running);
            Failure::Process("closed its stdout".into())
        }
        (failure, running) => {
            if let Some(running) = running {
                tokio::spawn(end(running));
            }
            failure
        }
    };
    match shared.upgrade() {
        Some(shared) => shared.gone(&live, failure),
        None => live.close(&failure),
    }
}

/// Stops a run's process (and, on Linux, what it started) and reaps it.
async fn end(mut running: Running) {
    running.stop();
    running.reap().await;
}

/// Logs what the process writes on stderr, a line at a time, and keeps its end.
async fn read_stderr(hook: String, stderr: ChildStderr, live: Arc<Live>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = answer::read_line(&mut reader, &mut line, STDERR_LINE).await;
        let cut = matches!(read, Ok(Line::TooLong));
        if cut && answer::skip_line(&mut reader).await.is_err() {
            return;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if !text.is_empty() {
            tracing::info!(hook = %hook, cut, "hook process stderr: {text}");
            let mut tail = lock(&live.stderr_tail);
            tail.push_str(text);
            tail.push('\n');
            let excess = tail.chars().count().saturating_sub(STDERR_TAIL);
            if excess > 0 {
                let at = tail
                    .char_indices()
                    .nth(excess)
                    .map_or(tail.len(), |(at, _)| at);
                tail.replace_range(..at, "…");
            }
        }
        if !matches!(read, Ok(Line::Whole | Line::TooLong)) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_up_to_its_bound() {
        assert_eq!(back_off(1), Duration::ZERO);
        assert_eq!(back_off(2), Duration::from_millis(250));
        assert_eq!(back_off(3), Duration::from_millis(500));
        assert_eq!(back_off(9), Duration::from_secs(30));
        assert_eq!(back_off(u32::MAX), Duration::from_secs(30));
    }
}

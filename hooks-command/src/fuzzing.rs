//! Entry points for the fuzz targets in `fuzz/`, compiled only with
//! `--cfg fuzzing`: the decoders of a command hook's output, which are not
//! public otherwise.

use std::time::Duration;

use hooks_runtime::{ErrorPolicy, HookPoint, HookResult};

use crate::persistent::answer;
use crate::process::{Captured, Exit, Finished};
use crate::protocol::{self, Subject, Verdict};

/// What the runtime makes of a command that exited with `exit` after
/// printing `stdout` and `stderr` at `event`: `Ok(Some(result))` when it
/// decided, `Ok(None)` when it asks a person, `Err` with the message when
/// the hook failed.
pub fn interpret(
    event: HookPoint,
    exit: i32,
    stdout: &[u8],
    stderr: &[u8],
    fail_open: bool,
) -> Result<Option<HookResult>, String> {
    let finished = Finished {
        exit: Exit::Code(exit),
        stdout: Captured::from_bytes(stdout, false),
        stderr: Captured::from_bytes(stderr, false),
        io_error: None,
    };
    verdict(protocol::interpret(&subject(event, fail_open), &finished))
}

/// What the runtime makes of one line a persistent hook process answered
/// at `event`: the answer's id and the same as [`interpret`], or `Err`
/// when the line is no answer at all.
pub fn persistent_answer(
    event: HookPoint,
    line: &[u8],
    fail_open: bool,
) -> Result<(u64, Result<Option<HookResult>, String>), String> {
    let (id, answer) = answer::parse(line)?;
    Ok((
        id,
        verdict(protocol::interpret_answer(
            &subject(event, fail_open),
            answer,
        )),
    ))
}

fn subject(event: HookPoint, fail_open: bool) -> Subject<'static> {
    Subject {
        hook: "fuzzed",
        command: "./fuzzed.sh",
        event,
        event_name: match event {
            HookPoint::SessionStart => "SessionStart",
            HookPoint::PostToolUse => "PostToolUse",
            _ => "PreToolUse",
        },
        timeout: Duration::from_secs(5),
        on_error: if fail_open {
            ErrorPolicy::FailOpen
        } else {
            ErrorPolicy::FailClosed
        },
    }
}

fn verdict(
    verdict: Result<Verdict, hooks_runtime::HookError>,
) -> Result<Option<HookResult>, String> {
    match verdict {
        Ok(Verdict::Decided(result)) => Ok(Some(result)),
        Ok(Verdict::Ask { .. }) => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

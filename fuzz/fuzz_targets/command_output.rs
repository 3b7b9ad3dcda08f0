//! What a command hook (or a persistent hook process) printed, read as the
//! runtime reads it. Beyond not failing: a command that exited with
//! another code than 0 or 2, or printed stdout that is not UTF-8, never
//! lets the call through unchanged or rewritten; exit 2 always blocks a
//! tool call.

#![no_main]

use hooks_command::fuzzing::{interpret, persistent_answer};
use hooks_runtime::{HookPoint, HookResult};
use libfuzzer_sys::fuzz_target;

fn lets_through(result: &HookResult) -> bool {
    !result.is_blocked()
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, rest)) = data.split_first() else {
        return;
    };
    let event = match control % 3 {
        0 => HookPoint::PreToolUse,
        1 => HookPoint::PostToolUse,
        _ => HookPoint::SessionStart,
    };
    let exit = [0, 2, 1, 127, -1][usize::from(control / 3) % 5];
    let fail_open = control & 0x80 != 0;
    // stdout, a NUL, stderr.
    let (stdout, stderr) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };

    let read = interpret(event, exit, stdout, stderr, fail_open);
    if let Ok(Some(result)) = &read {
        assert!(
            !(exit != 0 && exit != 2 && lets_through(result)),
            "exit {exit} let the call through: {result:?}"
        );
        assert!(
            !(std::str::from_utf8(stdout).is_err() && lets_through(result)),
            "stdout that is not UTF-8 let the call through: {result:?}"
        );
    }
    if exit == 2 && event != HookPoint::SessionStart {
        assert!(
            matches!(&read, Ok(Some(result)) if result.is_blocked()),
            "exit 2 did not block: {read:?}"
        );
    }

    // The same bytes as a persistent process's answer line.
    if let Ok((_, answer)) = persistent_answer(event, stdout, fail_open) {
        let _ = format!("{answer:?}");
    }
});

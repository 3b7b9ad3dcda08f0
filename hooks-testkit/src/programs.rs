//! Programs some tests run besides the agent (`python3`, `node`): whether
//! they are here, and the `SKIPPED` line when they are not.

/// Whether `program --version` runs and succeeds (found on `PATH`).
pub fn runs(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Whether `program` runs; when it does not, prints
/// `SKIPPED: <program> is not on PATH; <needed_for>` for the test to return on.
pub fn needed(program: &str, needed_for: &str) -> bool {
    let found = runs(program);
    if !found {
        println!("SKIPPED: {program} is not on PATH; {needed_for}");
    }
    found
}

//! Compile-time behaviour of the hook attributes: what compiles, and the exact
//! error (with its span) for every mistake. Snapshots live beside each case.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    cases.compile_fail("tests/ui/fail/*.rs");
}

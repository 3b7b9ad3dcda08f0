//! The two passes (syntax, then check) report as one: every mistake, in
//! reading order, at most 32, first at each position. And the hook points and
//! surfaces the checks use are the one list the runtime re-exports.

use hooks_when::{HookPoint, Surface, parse};

fn messages(source: &str, point: HookPoint) -> Vec<String> {
    parse(source, point)
        .expect_err("must be rejected")
        .errors()
        .iter()
        .map(|error| error.message.clone())
        .collect()
}

#[test]
fn syntax_and_check_errors_come_out_in_reading_order() {
    // check (unknown field), syntax (missing value), check (wrong type), syntax (dangling `||`).
    let found = messages(
        r#"tool_nme == "a" && args.x == && tool_name > 1 ||"#,
        HookPoint::PreToolUse,
    );
    assert_eq!(
        found,
        [
            "unknown field `tool_nme`",
            "expected a value after `==`, found `&&`",
            "`>` compares numbers, but `tool_name` is a string",
            "expected a test after `||`, found the end of the expression",
        ]
    );
}

#[test]
fn tests_inside_a_broken_part_are_still_checked() {
    // The `(` never closes, yet the test inside it is checked at the hook point.
    let found = messages("(result exists && tool_name", HookPoint::SessionStart);
    assert_eq!(
        found,
        [
            "unclosed `(`",
            "`result` is only available in post_tool_use hooks, not in session_start hooks",
            "`tool_name` is not available in session_start hooks",
        ]
    );
}

#[test]
fn a_missing_operator_names_the_field_only_when_it_exists() {
    assert_eq!(
        messages("args.x 5", HookPoint::PreToolUse),
        ["expected an operator after `args.x`, found a number"]
    );
    assert_eq!(
        messages("argz.x 5", HookPoint::PreToolUse),
        [
            "unknown field `argz`",
            "expected an operator after the field, found a number"
        ]
    );
}

#[test]
fn the_cut_keeps_the_first_32_mistakes_read() {
    // 40 type errors inside a `(` that never closes: the `unclosed` error is
    // found last, so the cut drops it although it sits first in the text.
    let tests = vec!["tool_name > 1"; 40].join(" && ");
    let errors = parse(&format!("({tests}"), HookPoint::PreToolUse).expect_err("rejected");
    assert_eq!(errors.errors().len(), 32);
    assert!(
        errors
            .errors()
            .iter()
            .all(|error| error.message.starts_with("`>` compares numbers")),
        "{errors}"
    );
    let starts: Vec<usize> = errors.errors().iter().map(|e| e.span.start).collect();
    assert!(starts.is_sorted(), "errors are reported in source order");
}

#[test]
fn every_surface_name_is_accepted_and_no_other() {
    for surface in Surface::ALL {
        let source = format!("surface == \"{surface}\" || surface in [\"{surface}\"]");
        parse(&source, HookPoint::SessionStart).unwrap_or_else(|e| panic!("{source}: {e}"));
        assert_eq!(Surface::from_name(surface.as_str()), Some(surface));
    }
    assert_eq!(Surface::from_name("Chat"), None);
    assert_eq!(Surface::default(), Surface::Chat);
    let error = parse("surface == \"x\"", HookPoint::PreToolUse).expect_err("unknown");
    let names: Vec<&str> = Surface::ALL.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        error.errors()[0].help.as_deref(),
        Some(format!("the surfaces are {}", names.join(", ")).as_str())
    );
}

#[test]
fn hook_points_sort_in_loop_order_and_print_as_attributes() {
    let mut points = [
        HookPoint::PostToolUse,
        HookPoint::SessionStart,
        HookPoint::PreToolUse,
    ];
    points.sort();
    assert_eq!(points, HookPoint::ALL);
    let names: Vec<String> = HookPoint::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["session_start", "pre_tool_use", "post_tool_use"]);
}

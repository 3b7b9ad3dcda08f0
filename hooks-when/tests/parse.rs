//! The runtime side of the `when` parser: accepted forms, error wording with
//! line and column, and the nesting bound.

use hooks_when::{Check, Expr, HookPoint, MAX_DEPTH, parse};

fn error_text(source: &str, scope: HookPoint) -> String {
    parse(source, scope)
        .expect_err("must be rejected")
        .to_string()
}

#[test]
fn every_operator_parses() {
    let sources = [
        r#"tool_name == "a""#,
        r#"tool_name != "a""#,
        r#"tool_name starts_with "a""#,
        r#"tool_name ends_with "a""#,
        r#"tool_name contains "a""#,
        r#"tool_name matches "a*""#,
        r#"tool_name matches_regex "^a""#,
        r#"tool_name in ["a", "b"]"#,
        "tool_name exists",
        "args.n < 1",
        "args.n <= 1.5",
        "args.n > -1",
        "args.n >= 1e3",
        "args.flag",
        "args.flag == true",
        "args.tags contains 3",
        "args.n in [1, \"one\", true]",
        "!args.flag",
        "(args.flag || metadata.flag) && !metadata.other",
        r#"metadata.a.b.0."c-d" exists"#,
        r#"args.q matches_regex r"\d+""#,
    ];
    for source in sources {
        parse(source, HookPoint::PreToolUse).unwrap_or_else(|error| panic!("{source}: {error}"));
    }
    assert!(
        parse(
            "result contains \"x\" && result.rows.0 exists",
            HookPoint::PostToolUse
        )
        .is_ok()
    );
    assert!(
        parse(
            "org_id == \"acme\" && metadata.tier == \"gold\"",
            HookPoint::SessionStart
        )
        .is_ok()
    );
}

#[test]
fn precedence_is_not_then_and_then_or() {
    let expr = parse("a.x || !args.y && args.z", HookPoint::PreToolUse);
    // `a` is not a field: the error proves the parser reached it first.
    assert!(expr.is_err());
    let expr = parse("args.x || !args.y && args.z", HookPoint::PreToolUse).unwrap();
    let Expr::Or(items) = &expr else {
        panic!("{expr:?}")
    };
    assert!(matches!(&items[1], Expr::And(parts) if matches!(parts[0], Expr::Not(_))));
    assert_eq!(expr.to_string(), "args.x || !(args.y) && args.z");
}

#[test]
fn runtime_errors_carry_line_column_and_the_compile_time_wording() {
    assert_eq!(
        error_text(
            "tool_name == \"a\" &&\n  tool_nme == \"b\"",
            HookPoint::PreToolUse
        ),
        "line 2, column 3: unknown field `tool_nme`\n  help: did you mean `tool_name`?"
    );
    assert_eq!(
        error_text("tool_name > 5", HookPoint::PreToolUse),
        "line 1, column 11: `>` compares numbers, but `tool_name` is a string\n  help: strings take ==, !=, starts_with, ends_with, contains, matches, matches_regex, in or exists"
    );
    assert_eq!(
        error_text("tool_name == 5", HookPoint::PreToolUse),
        "line 1, column 14: `tool_name` is a string, so `==` needs a string, not a number\n  help: quote the value, e.g. `tool_name == \"5\"`"
    );
    assert_eq!(
        error_text("result exists", HookPoint::PreToolUse),
        "line 1, column 1: `result` is only available in post_tool_use hooks, not in pre_tool_use hooks\n  help: the tool has not run yet when a pre_tool_use hook is asked"
    );
    assert_eq!(
        error_text("tool_name == \"a\"", HookPoint::SessionStart),
        "line 1, column 1: `tool_name` is not available in session_start hooks\n  help: a session-start hook runs before any tool call; test agent_id, user_id, org_id, conversation_id, surface or metadata"
    );
    assert_eq!(
        error_text("tool_name in []", HookPoint::PreToolUse),
        "line 1, column 14: `in []` can never be true\n  help: list at least one value"
    );
    assert_eq!(
        error_text("tool_name == \"a\" &&", HookPoint::PreToolUse),
        "line 1, column 18: expected a test after `&&`, found the end of the expression\n  help: remove the dangling `&&` or add a test after it"
    );
    assert_eq!(
        error_text("tool_name == \"a\" metadata.x", HookPoint::PreToolUse),
        "line 1, column 18: unexpected `metadata` after the end of the expression\n  help: join tests with `&&` or `||`"
    );
}

#[test]
fn glob_errors_point_inside_the_literal() {
    let errors = parse(r#"tool_name matches "ab[c""#, HookPoint::PreToolUse).unwrap_err();
    let error = &errors.errors()[0];
    assert_eq!(
        error.message,
        "invalid glob pattern: unclosed character class `[`"
    );
    assert_eq!(
        errors.line_column(error.span.start),
        (1, 22),
        "points at the `[`"
    );
}

#[test]
fn regex_errors_use_the_runtime_engine() {
    let text = error_text(r#"tool_name matches_regex "(a""#, HookPoint::PreToolUse);
    assert!(
        text.starts_with("line 1, column 25: invalid regular expression: unclosed group"),
        "{text}"
    );
    // A pattern the regex crate accepts is accepted here too.
    assert!(
        parse(
            r#"tool_name matches_regex "(?i)^sql_\\w+$""#,
            HookPoint::PreToolUse
        )
        .is_ok()
    );
}

#[test]
fn several_mistakes_are_all_reported() {
    let errors = parse(
        r#"tool_nam == "a" || args.n > "x" || (tool_name in [] && surface == "chta")"#,
        HookPoint::PreToolUse,
    )
    .unwrap_err();
    let messages: Vec<&str> = errors
        .errors()
        .iter()
        .map(|error| error.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "unknown field `tool_nam`",
            "`>` compares numbers, but this is a string",
            "`in []` can never be true",
            "unknown surface \"chta\"",
        ]
    );
}

#[test]
fn a_mistyped_literal_never_parses_as_something_else() {
    for source in [
        "tool_name = \"a\"",
        "tool_name == 'a'",
        "tool_name & x",
        "tool_name == \"a\\q\"",
        "\"unterminated",
    ] {
        assert!(parse(source, HookPoint::PreToolUse).is_err(), "{source}");
    }
    assert!(parse("", HookPoint::PreToolUse).is_err());
    assert!(parse("   ", HookPoint::PreToolUse).is_err());
}

#[test]
fn nesting_is_bounded_with_a_clear_error() {
    let deep = "(".repeat(100_000);
    let text = error_text(&deep, HookPoint::PreToolUse);
    assert!(
        text.contains(&format!(
            "expression is nested more than {MAX_DEPTH} levels deep"
        )),
        "{text}"
    );

    let nots = format!("{}args.x", "!".repeat(100_000));
    assert!(error_text(&nots, HookPoint::PreToolUse).contains("nested more than"));

    let balanced = format!("{}args.x{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(error_text(&balanced, HookPoint::PreToolUse).contains("nested more than"));

    let fine = format!(
        "{}args.x{}",
        "(".repeat(MAX_DEPTH - 1),
        ")".repeat(MAX_DEPTH - 1)
    );
    assert!(parse(&fine, HookPoint::PreToolUse).is_ok());
}

#[test]
fn a_long_flat_chain_is_fine() {
    let long = vec!["args.x"; 20_000].join(" && ");
    let Expr::And(items) = parse(&long, HookPoint::PreToolUse).unwrap() else {
        panic!()
    };
    assert_eq!(items.len(), 20_000);
}

#[test]
fn bare_fields_are_true_tests() {
    let expr = parse("metadata.requires_confirmation", HookPoint::PreToolUse).unwrap();
    assert!(matches!(expr, Expr::Test(ref test) if test.check == Check::IsTrue));
}

/// Found by the property test: a negative number right after a path dot once
/// made the lexer stop advancing.
#[test]
fn a_negative_index_is_rejected_not_looped_on() {
    assert!(parse("args.-1 exists", HookPoint::PreToolUse).is_err());
    assert!(parse("metadata.a.-", HookPoint::PreToolUse).is_err());
}

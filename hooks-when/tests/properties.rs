//! Property tests: the parser never panics, and printing then re-parsing a
//! tree gives the same tree.

use hooks_when::{
    Check, Expr, Field, Glob, HookPoint, JsonField, JsonRoot, Literal, Number, Ordering,
    PathSegment, Test, TextField, parse,
};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 10_000,
        ..ProptestConfig::default()
    }
}

/// Tokens the language uses, glued at random: good at reaching deep parser states.
fn token_soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("tool_name"),
        Just("args.a"),
        Just("metadata.b.0"),
        Just("result"),
        Just("surface"),
        Just("=="),
        Just("!="),
        Just("<"),
        Just(">="),
        Just("&&"),
        Just("||"),
        Just("!"),
        Just("("),
        Just(")"),
        Just("["),
        Just("]"),
        Just(","),
        Just("."),
        Just("starts_with"),
        Just("matches"),
        Just("matches_regex"),
        Just("in"),
        Just("exists"),
        Just("\"x\""),
        Just("\"[\""),
        Just("\"(\""),
        Just("5"),
        Just("-2.5"),
        Just("true"),
        Just("\"\\u{1F600}\""),
        Just("\"unterminated"),
        Just("r#\"raw\"#"),
        Just("中"),
        Just("\\"),
        Just("'"),
    ];
    prop::collection::vec(token, 0..24).prop_map(|tokens| tokens.join(" "))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics(source in any::<String>()) {
        for scope in [HookPoint::PreToolUse, HookPoint::PostToolUse, HookPoint::SessionStart] {
            let _ = parse(&source, scope);
        }
    }

    #[test]
    fn token_soup_never_panics(source in token_soup()) {
        if let Err(errors) = parse(&source, HookPoint::PostToolUse) {
            prop_assert!(!errors.errors().is_empty());
            for error in errors.errors() {
                prop_assert!(error.span.end <= source.len());
                prop_assert!(source.is_char_boundary(error.span.start));
            }
        }
    }

    #[test]
    fn printing_then_parsing_gives_the_same_tree(expr in expr_strategy()) {
        let printed = expr.to_string();
        let reparsed = parse(&printed, HookPoint::PostToolUse)
            .map_err(|error| TestCaseError::fail(format!("{printed}\n{error}")))?;
        prop_assert_eq!(reparsed, expr, "{}", printed);
    }
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,6}",
        "[a-z]{1,3}-[a-z]{1,3}",
        "[ -~]{1,5}",
        Just("中文".to_owned()),
    ]
}

fn path_segment() -> impl Strategy<Value = PathSegment> {
    prop_oneof![
        key().prop_map(PathSegment::Key),
        (0usize..20).prop_map(PathSegment::Index)
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,8}",
        "\\PC{0,6}",
        Just("line\nbreak\t\"q\"\\".to_owned())
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        text().prop_map(Literal::Str),
        any::<i64>().prop_map(Literal::Int),
        (-1e12f64..1e12f64).prop_map(Literal::Float),
        any::<bool>().prop_map(Literal::Bool),
    ]
}

fn field() -> impl Strategy<Value = Field> {
    prop_oneof![
        prop::sample::select(TextField::ALL.to_vec()).prop_map(Field::Text),
        (
            prop::sample::select(vec![JsonRoot::Metadata, JsonRoot::Args]),
            prop::collection::vec(path_segment(), 1..4)
        )
            .prop_map(|(root, path)| Field::Json(JsonField { root, path })),
        prop::collection::vec(path_segment(), 0..3).prop_map(|path| Field::Json(JsonField {
            root: JsonRoot::Result,
            path
        })),
    ]
}

fn glob() -> impl Strategy<Value = Glob> {
    "[a-z*?]{0,6}(\\[[a-c]{1,3}\\])?"
        .prop_map(|source| Glob::new(&source).expect("generated globs are valid"))
}

fn test_strategy() -> impl Strategy<Value = Test> {
    (
        field(),
        any::<u8>(),
        literal(),
        text(),
        glob(),
        prop::collection::vec(literal(), 1..4),
    )
        .prop_map(|(field, choice, literal, text, glob, list)| {
            let is_text = matches!(field, Field::Text(_));
            let string_literal = Literal::Str(text.clone());
            let surface_literal = Literal::Str("chat".to_owned());
            let check = match choice % 11 {
                0 => Check::Eq(if is_text { string_literal } else { literal }),
                1 => Check::Ne(if is_text { string_literal } else { literal }),
                2 => Check::StartsWith(text),
                3 => Check::EndsWith(text),
                4 => Check::Contains(if is_text { string_literal } else { literal }),
                5 => Check::Matches(glob),
                6 if !is_text => Check::Compare(
                    [Ordering::Lt, Ordering::Le, Ordering::Gt, Ordering::Ge]
                        [usize::from(choice) % 4],
                    match literal {
                        Literal::Int(v) => Number::Int(v),
                        Literal::Float(v) => Number::Float(v),
                        _ => Number::Int(i64::from(choice)),
                    },
                ),
                7 if !is_text => Check::IsTrue,
                8 => Check::In(if is_text {
                    vec![Literal::Str(text)]
                } else {
                    list
                }),
                _ => Check::Exists,
            };
            // `surface` only takes known surface names.
            let check = match (&field, check) {
                (Field::Text(TextField::Surface), Check::Eq(_)) => Check::Eq(surface_literal),
                (Field::Text(TextField::Surface), Check::Ne(_)) => Check::Ne(surface_literal),
                (Field::Text(TextField::Surface), Check::In(_)) => Check::In(vec![surface_literal]),
                (_, check) => check,
            };
            Test { field, check }
        })
}

fn expr_strategy() -> impl Strategy<Value = Expr> {
    let leaf = test_strategy().prop_map(Expr::Test);
    leaf.prop_recursive(5, 40, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::Or),
            inner.prop_map(|expr| Expr::Not(Box::new(expr))),
        ]
    })
}

proptest! {
    #![proptest_config(config())]

    /// A number and any string that spells it exactly as JSON (padded with
    /// ASCII whitespace) give every numeric test the same answer.
    #[test]
    fn numbers_written_as_strings_compare_as_the_number(
        value in prop_oneof![
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            (-1e12f64..1e12).prop_map(serde_json::Value::from),
        ],
        literal in prop_oneof![
            any::<i64>().prop_map(hooks_when::rt::Lit::Int),
            (-1e12f64..1e12).prop_map(hooks_when::rt::Lit::Float),
        ],
        left in "[ \t\r\n]{0,3}",
        right in "[ \t\r\n]{0,3}",
    ) {
        use hooks_when::rt::{json_cmp, json_eq, json_ne};
        let spelled = serde_json::Value::String(format!("{left}{value}{right}"));
        for ordering in [Ordering::Lt, Ordering::Le, Ordering::Gt, Ordering::Ge] {
            prop_assert_eq!(
                json_cmp(Some(&value), ordering, literal),
                json_cmp(Some(&spelled), ordering, literal),
                "{:?} {:?} {:?}", spelled, ordering, literal
            );
        }
        prop_assert_eq!(json_eq(Some(&value), literal), json_eq(Some(&spelled), literal));
        prop_assert_eq!(json_ne(Some(&value), literal), json_ne(Some(&spelled), literal));
    }
}

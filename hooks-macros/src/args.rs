//! The attribute's arguments: `name`, `priority`, `when`, `timeout`,
//! `on_error`, `description`, `crate`.

use std::time::Duration;

use hooks_when::did_you_mean;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};

use crate::diagnostics::Diagnostics;
use crate::when_source::WhenSource;

/// The arguments an attribute accepts, in the order the error message lists them.
const ACCEPTED: [&str; 7] = [
    "name",
    "priority",
    "when",
    "timeout",
    "on_error",
    "description",
    "crate",
];

/// Parsed and validated arguments; `None` means "use the default".
#[derive(Default)]
pub(crate) struct HookArgs {
    pub(crate) name: Option<String>,
    pub(crate) priority: Option<i32>,
    pub(crate) when: Option<WhenSource>,
    pub(crate) timeout: Option<Duration>,
    /// Where `timeout`'s value was written, for errors about it.
    pub(crate) timeout_span: Option<Span>,
    pub(crate) fail_open: bool,
    pub(crate) description: Option<String>,
    /// The path the hooks API is reached through (default `::hooks`).
    pub(crate) krate: Option<syn::Path>,
}

/// Parses `key = value, …`, reporting every mistake.
pub(crate) fn parse_args(attr: TokenStream, diagnostics: &mut Diagnostics) -> HookArgs {
    let mut args = HookArgs::default();
    let mut seen: Vec<String> = Vec::new();
    for piece in split_on_commas(attr) {
        let mut tokens = piece.into_iter();
        let Some(first) = tokens.next() else {
            continue;
        };
        let TokenTree::Ident(key) = &first else {
            diagnostics.error(
                first.span(),
                "expected an argument such as `priority = 5`",
                Some(
                    "the arguments are name, priority, when, timeout, on_error, description and crate",
                ),
            );
            continue;
        };
        let key_name = key.to_string();
        if !ACCEPTED.contains(&key_name.as_str()) {
            let help = match did_you_mean(&key_name, ACCEPTED) {
                Some(suggestion) => format!("did you mean `{suggestion}`?"),
                None => "write arguments as `key = value`".to_owned(),
            };
            diagnostics.error(
                key.span(),
                format!(
                    "unknown argument `{key_name}`; expected one of: {}",
                    ACCEPTED.join(", ")
                ),
                Some(&help),
            );
            continue;
        }
        if seen.contains(&key_name) {
            diagnostics.error(
                key.span(),
                format!("duplicate argument `{key_name}`"),
                Some("give each argument once"),
            );
            continue;
        }
        seen.push(key_name.clone());
        match tokens.next() {
            Some(TokenTree::Punct(eq)) if eq.as_char() == '=' => {}
            other => {
                let span = other.as_ref().map_or(key.span(), TokenTree::span);
                diagnostics.error(
                    span,
                    format!("expected `=` after `{key_name}`"),
                    Some(&example(&key_name)),
                );
                continue;
            }
        }
        let value: Vec<TokenTree> = tokens.collect();
        if value.is_empty() {
            diagnostics.error(
                key.span(),
                format!("`{key_name}` needs a value"),
                Some(&example(&key_name)),
            );
            continue;
        }
        match key_name.as_str() {
            "name" => {
                args.name = string_value(&key_name, &value, diagnostics).filter(|name| {
                    if name.is_empty() {
                        diagnostics.error(
                            value[0].span(),
                            "`name` must not be empty",
                            Some(&example("name")),
                        );
                    }
                    !name.is_empty()
                })
            }
            "description" => args.description = string_value(&key_name, &value, diagnostics),
            "priority" => args.priority = priority_value(&value, diagnostics),
            "timeout" => {
                args.timeout = timeout_value(&value, diagnostics);
                args.timeout_span = Some(value[0].span());
            }
            "on_error" => args.fail_open = on_error_value(&value, diagnostics).unwrap_or(false),
            "crate" => args.krate = crate_value(&value, diagnostics),
            _ => args.when = Some(WhenSource::from_tokens(value)),
        }
    }
    args
}

fn example(key: &str) -> String {
    match key {
        "name" => "write e.g. `name = \"readonly_guard\"`",
        "priority" => "write e.g. `priority = 5` (lower runs earlier; the default is 50)",
        "when" => "write e.g. `when = tool_name starts_with \"sql_\"`",
        "timeout" => "write e.g. `timeout = \"500ms\"`, `timeout = \"2s\"` or `timeout = \"2m\"`",
        "on_error" => "write `on_error = fail_closed` (the default) or `on_error = fail_open`",
        "crate" => {
            "write the path the `hooks` API is reached through, e.g. `crate = hooks_runtime` \
             or `crate = \"my_reexport::hooks\"` (the default is `::hooks`)"
        }
        _ => "write e.g. `description = \"blocks writes in read-only orgs\"`",
    }
    .to_owned()
}

/// Splits on top-level commas (commas inside `[…]` or `(…)` belong to a `when` list).
fn split_on_commas(stream: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut pieces = vec![Vec::new()];
    for token in stream {
        match &token {
            TokenTree::Punct(punct) if punct.as_char() == ',' => pieces.push(Vec::new()),
            _ => pieces.last_mut().expect("at least one piece").push(token),
        }
    }
    pieces
}

fn string_value(key: &str, value: &[TokenTree], diagnostics: &mut Diagnostics) -> Option<String> {
    if let [TokenTree::Literal(literal)] = value
        && let Ok(syn::Lit::Str(text)) =
            syn::parse2::<syn::Lit>(TokenTree::Literal(literal.clone()).into())
    {
        return Some(text.value());
    }
    diagnostics.error_range(
        value[0].span(),
        value[value.len() - 1].span(),
        format!("`{key}` must be a string literal"),
        Some(&example(key)),
    );
    None
}

fn priority_value(value: &[TokenTree], diagnostics: &mut Diagnostics) -> Option<i32> {
    let (negative, literal) = match value {
        [TokenTree::Literal(literal)] => (false, literal),
        [TokenTree::Punct(minus), TokenTree::Literal(literal)] if minus.as_char() == '-' => {
            (true, literal)
        }
        _ => {
            diagnostics.error_range(
                value[0].span(),
                value[value.len() - 1].span(),
                "`priority` must be an integer literal",
                Some(&example("priority")),
            );
            return None;
        }
    };
    let span = literal.span();
    match syn::parse2::<syn::Lit>(TokenTree::Literal(literal.clone()).into()) {
        Ok(syn::Lit::Int(int)) => {
            let parsed = int
                .base10_parse::<i64>()
                .ok()
                .map(|v| if negative { -v } else { v });
            match parsed.and_then(|v| i32::try_from(v).ok()) {
                Some(priority) => Some(priority),
                None => {
                    diagnostics.error(
                        span,
                        "`priority` is out of range",
                        Some("priorities are 32-bit integers; lower runs earlier"),
                    );
                    None
                }
            }
        }
        _ => {
            diagnostics.error(
                span,
                "`priority` must be an integer literal",
                Some(&example("priority")),
            );
            None
        }
    }
}

fn timeout_value(value: &[TokenTree], diagnostics: &mut Diagnostics) -> Option<Duration> {
    let text = string_value("timeout", value, diagnostics)?;
    match hooks_when::parse_duration(&text) {
        Ok(duration) => Some(duration),
        Err(message) => {
            diagnostics.error(
                value[0].span(),
                format!("invalid `timeout`: {message}"),
                Some(&example("timeout")),
            );
            None
        }
    }
}

/// `true` for `fail_open`; `None` after reporting a bad value.
fn on_error_value(value: &[TokenTree], diagnostics: &mut Diagnostics) -> Option<bool> {
    let word = match value {
        [TokenTree::Ident(ident)] => Some(ident.to_string()),
        [TokenTree::Literal(_)] => syn::parse2::<syn::LitStr>(value.iter().cloned().collect())
            .ok()
            .map(|text| text.value()),
        [TokenTree::Group(group)] if group.delimiter() == Delimiter::None => {
            Some(group.stream().to_string())
        }
        _ => None,
    };
    match word.as_deref() {
        Some("fail_closed") => Some(false),
        Some("fail_open") => Some(true),
        other => {
            let help = other
                .and_then(|word| did_you_mean(word, ["fail_closed", "fail_open"]))
                .map_or_else(
                    || example("on_error"),
                    |suggestion| format!("did you mean `{suggestion}`?"),
                );
            let last: Span = value[value.len() - 1].span();
            diagnostics.error_range(
                value[0].span(),
                last,
                "`on_error` must be `fail_closed` or `fail_open`",
                Some(&help),
            );
            None
        }
    }
}

/// The path of `crate = path` or `crate = "path"` (tokio-macros' convention).
fn crate_value(value: &[TokenTree], diagnostics: &mut Diagnostics) -> Option<syn::Path> {
    let parsed = match value {
        [TokenTree::Literal(_)] => syn::parse2::<syn::LitStr>(value.iter().cloned().collect())
            .and_then(|text| text.parse::<syn::Path>()),
        _ => syn::parse2::<syn::Path>(value.iter().cloned().collect()),
    };
    match parsed {
        Ok(path) => Some(path),
        Err(_) => {
            diagnostics.error_range(
                value[0].span(),
                value[value.len() - 1].span(),
                "`crate` must be a path",
                Some(&example("crate")),
            );
            None
        }
    }
}

//! Turns a checked expression into a Rust boolean expression (for the macros).
//!
//! The generated code is straight-line `&&`/`||` over calls into [`crate::rt`]:
//! no tree, no allocation; each regex lives in its own lazily compiled static.

use proc_macro2::{Ident, Literal as TokenLiteral, TokenStream};
use quote::quote;

use crate::ast::{Check, Expr, Field, JsonRoot, Literal, Number, Ordering, PathSegment, TextField};
use crate::glob::PlainGlob;

/// The Rust expression evaluating `expr` against the variable `subject`.
///
/// `rt` is the path under which [`crate::rt`] is reachable from the user's
/// crate, e.g. `::hooks::__private::when`.
pub fn predicate(expr: &Expr, subject: &Ident, rt: &TokenStream) -> TokenStream {
    match expr {
        Expr::Or(items) => {
            let items = items.iter().map(|item| predicate(item, subject, rt));
            quote!((#(#items)||*))
        }
        Expr::And(items) => {
            let items = items.iter().map(|item| predicate(item, subject, rt));
            quote!((#(#items)&&*))
        }
        Expr::Not(inner) => {
            let inner = predicate(inner, subject, rt);
            quote!((!#inner))
        }
        Expr::Test(test) => match &test.field {
            Field::Text(field) => text_test(*field, &test.check, subject, rt),
            Field::Json(field) => json_test(field.root, &field.path, &test.check, subject, rt),
        },
    }
}

fn text_field(field: TextField, rt: &TokenStream) -> TokenStream {
    let variant = match field {
        TextField::ToolName => quote!(ToolName),
        TextField::Connector => quote!(Connector),
        TextField::Action => quote!(Action),
        TextField::AgentId => quote!(AgentId),
        TextField::UserId => quote!(UserId),
        TextField::OrgId => quote!(OrgId),
        TextField::ConversationId => quote!(ConversationId),
        TextField::Surface => quote!(Surface),
    };
    quote!(#rt::TextField::#variant)
}

fn text_test(field: TextField, check: &Check, subject: &Ident, rt: &TokenStream) -> TokenStream {
    let field = text_field(field, rt);
    let value = quote!(#rt::text(#subject, #field));
    string_check(value, check, rt).unwrap_or_else(|| quote!(false))
}

/// The checks that work on a string value (`Option<&str>`), for both field kinds.
fn string_check(value: TokenStream, check: &Check, rt: &TokenStream) -> Option<TokenStream> {
    Some(match check {
        Check::Eq(Literal::Str(text)) => quote!(#rt::text_eq(#value, #text)),
        Check::Ne(Literal::Str(text)) => quote!(#rt::text_ne(#value, #text)),
        Check::StartsWith(text) => quote!(#rt::text_starts_with(#value, #text)),
        Check::EndsWith(text) => quote!(#rt::text_ends_with(#value, #text)),
        Check::Contains(Literal::Str(text)) => quote!(#rt::text_contains(#value, #text)),
        Check::Matches(glob) => match glob.plain() {
            // A plain shape is tested directly, as the same test written by
            // hand would be; anything else walks the pattern.
            Some(PlainGlob::Exact(text)) => quote!(#rt::text_eq(#value, #text)),
            Some(PlainGlob::Prefix(text)) => quote!(#rt::text_starts_with(#value, #text)),
            Some(PlainGlob::Suffix(text)) => quote!(#rt::text_ends_with(#value, #text)),
            Some(PlainGlob::Contains(text)) => quote!(#rt::text_contains(#value, #text)),
            None => {
                let source = glob.source();
                quote!(#rt::text_glob(#value, #source))
            }
        },
        Check::MatchesRegex(pattern) => {
            let source = pattern.source();
            quote!({
                static PATTERN: #rt::LazyLock<#rt::Regex> = #rt::LazyLock::new(|| #rt::checked_regex(#source));
                #rt::text_regex(#value, &PATTERN)
            })
        }
        Check::In(items) => {
            let items = items.iter().filter_map(|item| match item {
                Literal::Str(text) => Some(text),
                _ => None,
            });
            quote!(#rt::text_in(#value, [#(#items),*]))
        }
        Check::Exists => quote!(#rt::text_exists(#value)),
        _ => return None,
    })
}

fn lit(literal: &Literal, rt: &TokenStream) -> TokenStream {
    match literal {
        Literal::Str(text) => quote!(#rt::Lit::Str(#text)),
        Literal::Int(value) => {
            let value = TokenLiteral::i64_suffixed(*value);
            quote!(#rt::Lit::Int(#value))
        }
        Literal::Float(value) => {
            let value = TokenLiteral::f64_suffixed(*value);
            quote!(#rt::Lit::Float(#value))
        }
        Literal::Bool(value) => quote!(#rt::Lit::Bool(#value)),
    }
}

fn json_test(
    root: JsonRoot,
    path: &[PathSegment],
    check: &Check,
    subject: &Ident,
    rt: &TokenStream,
) -> TokenStream {
    let root = match root {
        JsonRoot::Metadata => quote!(#rt::JsonRoot::Metadata),
        JsonRoot::Args => quote!(#rt::JsonRoot::Args),
        JsonRoot::Result => quote!(#rt::JsonRoot::Result),
    };
    let segments = path.iter().map(|segment| match segment {
        PathSegment::Key(key) => quote!(#rt::Seg::Key(#key)),
        PathSegment::Index(index) => quote!(#rt::Seg::Index(#index)),
    });
    let value = quote!(#rt::json(#subject, #root, &[#(#segments),*]));
    match check {
        Check::Eq(literal) => {
            let literal = lit(literal, rt);
            quote!(#rt::json_eq(#value, #literal))
        }
        Check::Ne(literal) => {
            let literal = lit(literal, rt);
            quote!(#rt::json_ne(#value, #literal))
        }
        Check::Contains(literal) => {
            let literal = lit(literal, rt);
            quote!(#rt::json_contains(#value, #literal))
        }
        Check::Compare(ordering, number) => {
            let ordering = match ordering {
                Ordering::Lt => quote!(#rt::Ordering::Lt),
                Ordering::Le => quote!(#rt::Ordering::Le),
                Ordering::Gt => quote!(#rt::Ordering::Gt),
                Ordering::Ge => quote!(#rt::Ordering::Ge),
            };
            let literal = match number {
                Number::Int(value) => lit(&Literal::Int(*value), rt),
                Number::Float(value) => lit(&Literal::Float(*value), rt),
            };
            quote!(#rt::json_cmp(#value, #ordering, #literal))
        }
        Check::In(items) => {
            let items = items.iter().map(|item| lit(item, rt));
            quote!(#rt::json_in(#value, [#(#items),*]))
        }
        Check::Exists => quote!(#rt::json_exists(#value)),
        Check::IsTrue => quote!(#rt::json_true(#value)),
        other => {
            let as_str = quote!(#rt::json_str(#value));
            string_check(as_str, other, rt).unwrap_or_else(|| quote!(false))
        }
    }
}

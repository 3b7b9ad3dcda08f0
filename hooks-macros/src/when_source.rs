//! A `when = …` argument: its tokens turned into source text for the one
//! `when` parser, and the parser's byte spans mapped back onto those tokens.

use std::ops::Range;

use hooks_when::{Expr, HookPoint};
use proc_macro2::{Delimiter, Spacing, Span, TokenTree};

use crate::diagnostics::Diagnostics;

/// The tokens after `when =`.
pub(crate) struct WhenSource {
    tokens: Vec<TokenTree>,
}

/// Where one token's text sits in the reconstructed source.
struct Piece {
    range: Range<usize>,
    span: Span,
}

impl WhenSource {
    pub(crate) fn from_tokens(tokens: Vec<TokenTree>) -> Self {
        WhenSource { tokens }
    }

    /// Parses the expression for a hook at `point`. Returns the source text (for tables and
    /// the runtime parser) and the checked tree, or reports every error at its tokens.
    pub(crate) fn compile(
        &self,
        point: HookPoint,
        diagnostics: &mut Diagnostics,
    ) -> Option<(String, Expr)> {
        // `when = "…"` is accepted too; errors then point at the whole string.
        if let [TokenTree::Literal(literal)] = self.tokens.as_slice()
            && let Ok(text) = syn::parse2::<syn::LitStr>(TokenTree::Literal(literal.clone()).into())
        {
            let source = text.value();
            return match hooks_when::parse(&source, point) {
                Ok(expr) => Some((source, expr)),
                Err(errors) => {
                    for error in errors.errors() {
                        diagnostics.error(literal.span(), &error.message, error.help.as_deref());
                    }
                    None
                }
            };
        }
        let mut source = String::new();
        let mut pieces = Vec::new();
        let mut previous: Option<TokenTree> = None;
        reconstruct(&self.tokens, &mut source, &mut pieces, &mut previous);
        match hooks_when::parse(&source, point) {
            Ok(expr) => Some((source, expr)),
            Err(errors) => {
                for error in errors.errors() {
                    let (first, last) = spans_of(&pieces, &error.span);
                    diagnostics.error_range(first, last, &error.message, error.help.as_deref());
                }
                None
            }
        }
    }
}

/// Appends the text of `tokens` to `source`, spaced so the `when` lexer sees
/// what the user wrote: no space around `.` (paths), none after a joint
/// punctuation (`&&`, `==`) or a `-` before a number.
fn reconstruct(
    tokens: &[TokenTree],
    source: &mut String,
    pieces: &mut Vec<Piece>,
    previous: &mut Option<TokenTree>,
) {
    for token in tokens {
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                if !open.is_empty() {
                    push_text(open, group.span_open(), token, source, pieces, previous);
                }
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                reconstruct(&inner, source, pieces, previous);
                if !close.is_empty() {
                    push_text(close, group.span_close(), token, source, pieces, previous);
                }
            }
            other => push_text(
                &other.to_string(),
                other.span(),
                other,
                source,
                pieces,
                previous,
            ),
        }
    }
}

fn push_text(
    text: &str,
    span: Span,
    token: &TokenTree,
    source: &mut String,
    pieces: &mut Vec<Piece>,
    previous: &mut Option<TokenTree>,
) {
    let after_open = source.ends_with('(') || source.ends_with('[');
    let glue = match previous.as_ref() {
        None => true,
        Some(TokenTree::Punct(punct)) => {
            punct.spacing() == Spacing::Joint
                || matches!(punct.as_char(), '.' | '!')
                || (punct.as_char() == '-' && matches!(token, TokenTree::Literal(_)))
        }
        Some(_) => false,
    };
    let tight = matches!(text, "." | ")" | "]" | ",");
    if !glue && !after_open && !tight {
        source.push(' ');
    }
    let start = source.len();
    source.push_str(text);
    pieces.push(Piece {
        range: start..source.len(),
        span,
    });
    *previous = Some(token.clone());
}

/// The first and last token spans overlapping `range` (or the nearest token for an empty range).
fn spans_of(pieces: &[Piece], range: &Range<usize>) -> (Span, Span) {
    let overlapping: Vec<&Piece> = pieces
        .iter()
        .filter(|piece| {
            piece.range.start < range.end.max(range.start + 1) && piece.range.end > range.start
        })
        .collect();
    match (overlapping.first(), overlapping.last()) {
        (Some(first), Some(last)) => (first.span, last.span),
        _ => {
            let nearest = pieces
                .iter()
                .rev()
                .find(|piece| piece.range.start <= range.start)
                .or(pieces.first())
                .map_or_else(Span::call_site, |piece| piece.span);
            (nearest, nearest)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn text_of(tokens: proc_macro2::TokenStream) -> String {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut source = String::new();
        let mut pieces = Vec::new();
        reconstruct(&tokens, &mut source, &mut pieces, &mut None);
        source
    }

    #[test]
    fn tokens_read_back_as_written() {
        assert_eq!(
            text_of(quote!(tool_name starts_with "sql_")),
            r#"tool_name starts_with "sql_""#
        );
        assert_eq!(
            text_of(quote!(!metadata.read_only && args.items.0.id != -5)),
            "!metadata.read_only && args.items.0.id != -5"
        );
        assert_eq!(
            text_of(quote!(tool_name in ["a", "b"] || !(x >= 1.5))),
            r#"tool_name in ["a", "b"] || !(x >= 1.5)"#
        );
        assert_eq!(text_of(quote!(tool_name in [])), "tool_name in []");
    }

    #[test]
    fn every_error_maps_to_a_token() {
        let mut diagnostics = Diagnostics::default();
        let source = WhenSource::from_tokens(quote!(tool_nme == 5 && ( || )).into_iter().collect());
        assert!(
            source
                .compile(HookPoint::PreToolUse, &mut diagnostics)
                .is_none()
        );
        assert!(diagnostics.into_result().is_err());
    }
}

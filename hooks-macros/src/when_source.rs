//! A `when = …` argument: its tokens turned into source text for the one
//! `when` parser, and the parser's byte spans mapped back onto those tokens.

use std::ops::Range;

use hooks_when::{Expr, Scope};
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

    /// Parses the expression for `scope`. Returns the source text (for tables and
    /// the runtime parser) and the checked tree, or reports every error at its tokens.
    pub(crate) fn compile(
        &self,
        scope: Scope,
        diagnostics: &mut Diagnostics,
    ) -> Option<(String, Expr)> {
        // `when = "…"` is accepted too; errors then point at the whole string.
        if let [TokenTree::Literal(literal)] = self.tokens.as_slice()
            && let Ok(text) = syn::parse2::<syn::LitStr>(TokenTree::Literal(literal.clone()).into())
        {
            let source = text.value();
            return match hooks_when::parse(&source, scope) {
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
        match hooks_when::parse(&source, scope) {
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
                    let closing = TokenTree::Punct(proc_macro2::Punct::new(')', Spacing::Alone));
                    push_text(
                        close,
                        group.span_close(),
                        &closing,
                        source,
                        pieces,
                        previous,
                    );
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
    let glue = match previous.as_ref() {
        None => true,
        Some(TokenTree::Punct(punct)) => {
            punct.spacing() == Spacing::Joint
                || punct.as_char() == '.'
                || (punct.as_char() == '-' && matches!(token, TokenTree::Literal(_)))
        }
        Some(_) => false,
    };
    let is_dot = matches!(token, TokenTree::Punct(punct) if punct.as_char() == '.');
    if !glue && !is_dot {
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

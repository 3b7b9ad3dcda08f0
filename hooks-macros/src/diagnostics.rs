//! Collects every error of one attribute before failing (as serde_derive does).

use proc_macro2::{Ident, Span, TokenStream};
use quote::ToTokens;

/// Errors found so far; combined into one `syn::Error` at the end.
#[derive(Default)]
pub(crate) struct Diagnostics {
    errors: Option<syn::Error>,
}

impl Diagnostics {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.errors {
            Some(existing) => existing.combine(error),
            None => self.errors = Some(error),
        }
    }

    /// An error at `span` with an optional `help` line.
    pub(crate) fn error(&mut self, span: Span, message: impl AsRef<str>, help: Option<&str>) {
        self.push(syn::Error::new(span, with_help(message.as_ref(), help)));
    }

    /// An error covering the tokens of `node`.
    pub(crate) fn error_spanned<T: ToTokens>(
        &mut self,
        node: T,
        message: impl AsRef<str>,
        help: Option<&str>,
    ) {
        self.push(syn::Error::new_spanned(
            node,
            with_help(message.as_ref(), help),
        ));
    }

    /// An error from `first` to `last` (a range of tokens).
    pub(crate) fn error_range(
        &mut self,
        first: Span,
        last: Span,
        message: impl AsRef<str>,
        help: Option<&str>,
    ) {
        let range: TokenStream = [Ident::new("start", first), Ident::new("end", last)]
            .into_iter()
            .map(|ident| ident.into_token_stream())
            .collect();
        self.push(syn::Error::new_spanned(
            range,
            with_help(message.as_ref(), help),
        ));
    }

    pub(crate) fn into_result(self) -> Result<(), syn::Error> {
        match self.errors {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// rustc prints extra lines of a `compile_error!` message under the first, so a
/// help line reads like rustc's own.
fn with_help(message: &str, help: Option<&str>) -> String {
    match help {
        Some(help) => format!("{message}\n\n= help: {help}"),
        None => message.to_owned(),
    }
}

//! `surface` is compared only with the names of [`Surface`]s.

use std::ops::Range;

use super::Checker;
use crate::error::WhenError;
use crate::suggest::did_you_mean;
use crate::surface::Surface;

impl Checker<'_> {
    /// True when `value` names a surface; otherwise reports it, with a suggestion.
    pub(super) fn surface(&mut self, value: &str, span: Range<usize>) -> bool {
        if Surface::from_name(value).is_some() {
            return true;
        }
        let names = Surface::ALL.map(Surface::as_str);
        let error = WhenError::new(span, format!("unknown surface \"{value}\""));
        let error = match did_you_mean(value, names) {
            Some(suggestion) => error.with_help(format!("did you mean \"{suggestion}\"?")),
            None => error.with_help(format!("the surfaces are {}", names.join(", "))),
        };
        self.error(error);
        false
    }
}

//! What is wrong with a cases file.

/// A cases file that cannot be run: every problem found, each naming its
/// case. No case of such a table runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{source_name}: {}", problems.join(&format!("\n{source_name}: ")))]
pub struct CasesError {
    /// The file (or the name given to the text).
    pub source_name: String,
    /// What is wrong, one entry per problem.
    pub problems: Vec<String>,
}

impl CasesError {
    pub(super) fn new(source: &str, problem: impl Into<String>) -> Self {
        CasesError {
            source_name: source.to_owned(),
            problems: vec![problem.into()],
        }
    }

    pub(super) fn many(source: &str, problems: Vec<String>) -> Self {
        CasesError {
            source_name: source.to_owned(),
            problems,
        }
    }
}

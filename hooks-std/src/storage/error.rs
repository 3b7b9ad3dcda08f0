//! What can go wrong talking to the database.

/// A database operation of a standard hook failed.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The URL names a backend this build leaves out.
    #[error(
        "database URL \"{url}\" names a backend this build leaves out; enable hooks-std's \
         `{feature}` feature (the facade's `{feature}`)"
    )]
    BackendNotInThisBuild {
        /// The URL given (with any password removed).
        url: String,
        /// The cargo feature that brings the backend.
        feature: &'static str,
    },
    /// The URL names no supported backend.
    #[error(
        "unsupported database URL \"{url}\": use `sqlite::memory:`, `sqlite://<file>` or `postgres://…`"
    )]
    UnsupportedUrl {
        /// The URL given (with any password removed).
        url: String,
    },
    /// Connecting failed.
    #[error("could not connect to {backend} database \"{url}\": {source}")]
    Connect {
        /// `sqlite` or `postgres`.
        backend: &'static str,
        /// The URL given (with any password removed).
        url: String,
        /// The driver's error.
        source: sqlx::Error,
    },
    /// Applying the embedded migrations failed.
    #[error("could not apply the hooks migrations to the {backend} database: {source}")]
    Migrate {
        /// `sqlite` or `postgres`.
        backend: &'static str,
        /// The migrator's error.
        source: sqlx::migrate::MigrateError,
    },
    /// A query failed.
    #[error("{what} failed: {source}")]
    Query {
        /// What was being done, e.g. "writing 12 audit rows".
        what: String,
        /// The driver's error.
        source: sqlx::Error,
    },
    /// The write shared a transaction that failed, or never reached one.
    #[error("{what} failed: {why}")]
    Unavailable {
        /// What was being done.
        what: String,
        /// Why it was not done (the shared transaction's error, or why the writer is gone).
        why: String,
    },
}

impl StorageError {
    pub(crate) fn query(what: impl Into<String>) -> impl FnOnce(sqlx::Error) -> StorageError {
        let what = what.into();
        move |source| StorageError::Query { what, source }
    }
}

/// `url` without its password, for error messages and logs.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split(':').next().unwrap_or_default();
            format!("{scheme}://{user}:***@{host}{tail}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact_url("postgres://app:hunter2@db:5432/x"),
            "postgres://app:***@db:5432/x"
        );
        assert_eq!(
            redact_url("postgres://postgres@127.0.0.1/test"),
            "postgres://postgres:***@127.0.0.1/test"
        );
        assert_eq!(redact_url("sqlite::memory:"), "sqlite::memory:");
    }
}

//! Who is at the page: operators authenticate through [`OperatorAuth`].
//!
//! Built in: [`TokenAuth`] (per-operator access tokens, stored only as
//! Argon2 hashes, exchanged at the login form for a session cookie) and
//! [`TrustedHeaderAuth`] (an auth proxy in front names the operator in a
//! header; refused from any other address). The operator id an
//! authenticator returns is a platform identity of the `web` channel: the
//! gate's [`ApproverDirectory`](crate::approval_gate::ApproverDirectory) maps it to a
//! user, exactly as it maps a Slack user id.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use axum::http::HeaderMap;

/// A boxed future returned by [`OperatorAuth::login`].
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The longest operator id or token read from a request, in bytes.
const MAX_CREDENTIAL_BYTES: usize = 256;

/// What an authenticator sees of a request.
#[derive(Debug, Clone, Copy)]
pub struct AuthRequest<'a> {
    /// The request's headers.
    pub headers: &'a HeaderMap,
    /// The address the connection came from, if the server recorded it
    /// (`axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())`).
    pub peer: Option<SocketAddr>,
}

/// A request was refused before any operator was known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// The identity header came from an address that is not a configured proxy.
    #[error(
        "the operator header came from {peer}, which is not a configured auth proxy; send \
         requests through the proxy (or add its address to `proxies`)"
    )]
    UntrustedPeer {
        /// The peer address, or `unknown`.
        peer: String,
    },
    /// The proxy sent no usable identity header.
    #[error(
        "the auth proxy sent no usable `{header}` header (missing, empty, too long or not \
         plain text); check the proxy's configuration"
    )]
    MissingHeader {
        /// The configured header name.
        header: String,
    },
}

/// How operators prove who they are. Implement it to plug in your own
/// single sign-on; the page checks the approver scope of every request
/// against the operator id it returns, whatever the authenticator.
pub trait OperatorAuth: Send + Sync {
    /// The operator a request names by itself (e.g. a header set by a
    /// trusted proxy), `Ok(None)` if it must carry a session from the login
    /// form instead, or an error that refuses it.
    fn identify(&self, request: AuthRequest<'_>) -> Result<Option<String>, AuthError>;

    /// Whether the login form is offered (operators sign in with a token).
    fn has_login(&self) -> bool;

    /// Checks a login: the operator id if `token` is `operator`'s, else `None`.
    fn login<'a>(&'a self, operator: &'a str, token: &'a str) -> AuthFuture<'a, Option<String>>;
}

/// A token or hash could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// A configured hash is not an Argon2 PHC string.
    #[error(
        "the token hash of operator \"{operator}\" is not an Argon2 PHC string ({why}); \
         generate one with `TokenAuth::hash_token`"
    )]
    BadHash {
        /// The operator.
        operator: String,
        /// What the parser said.
        why: String,
    },
    /// An operator id is empty or holds hidden characters.
    #[error("operator id {0:?} is empty, too long or holds hidden characters; use a plain id")]
    BadOperator(String),
    /// Hashing failed.
    #[error("could not hash the token: {0}")]
    Hash(String),
}

/// Per-operator access tokens from config, stored only as Argon2 hashes.
/// Operators exchange theirs for a session cookie at the login form.
#[derive(Debug, Clone)]
pub struct TokenAuth {
    operators: Vec<(String, String)>,
    /// Verified for an unknown operator, so its answer takes as long.
    decoy: String,
}

impl TokenAuth {
    /// Operators and the Argon2 hashes (PHC strings, as
    /// [`hash_token`](Self::hash_token) makes them) of their tokens. Fails
    /// on a hash that does not parse or an unusable operator id.
    pub fn new<I, O, H>(operators: I) -> Result<Self, TokenError>
    where
        I: IntoIterator<Item = (O, H)>,
        O: Into<String>,
        H: Into<String>,
    {
        let mut checked = Vec::new();
        for (operator, hash) in operators {
            let (operator, hash) = (operator.into(), hash.into());
            if !plain_credential(&operator) {
                return Err(TokenError::BadOperator(operator));
            }
            PasswordHash::new(&hash).map_err(|error| TokenError::BadHash {
                operator: operator.clone(),
                why: error.to_string(),
            })?;
            checked.push((operator, hash));
        }
        let decoy = Self::decoy_like(checked.iter().map(|(_, hash)| hash.as_str()))?;
        Ok(TokenAuth {
            operators: checked,
            decoy,
        })
    }

    /// A hash verified for unknown operators, made with the Argon2
    /// algorithm and parameters of the costliest configured hash (the
    /// defaults if none is Argon2), so an unknown operator's answer takes
    /// as long as a known one's.
    fn decoy_like<'h>(hashes: impl Iterator<Item = &'h str>) -> Result<String, TokenError> {
        let costliest = hashes
            .filter_map(|hash| {
                let parsed = PasswordHash::new(hash).ok()?;
                let algorithm = argon2::Algorithm::try_from(parsed.algorithm).ok()?;
                let version = parsed
                    .version
                    .map_or(Ok(argon2::Version::default()), argon2::Version::try_from)
                    .ok()?;
                let params = argon2::Params::try_from(&parsed).ok()?;
                Some((algorithm, version, params))
            })
            .max_by_key(|(_, _, params)| {
                u64::from(params.m_cost()) * u64::from(params.t_cost()) * u64::from(params.p_cost())
            });
        let hasher = match costliest {
            Some((algorithm, version, params)) => Argon2::new(algorithm, version, params),
            None => Argon2::default(),
        };
        let salt = SaltString::generate(&mut OsRng);
        hasher
            .hash_password(b"decoy", &salt)
            .map(|hash| hash.to_string())
            .map_err(|error| TokenError::Hash(error.to_string()))
    }

    /// A fresh random access token (256 bits, hex) to hand to an operator;
    /// keep only its [`hash_token`](Self::hash_token) in config.
    pub fn generate_token() -> String {
        hex::encode(super::session::random_bytes())
    }

    /// The Argon2id hash (a PHC string with a fresh random salt) of `token`,
    /// to put in config instead of the token.
    pub fn hash_token(token: &str) -> Result<String, TokenError> {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(token.as_bytes(), &salt)
            .map(|hash| hash.to_string())
            .map_err(|error| TokenError::Hash(error.to_string()))
    }
}

impl OperatorAuth for TokenAuth {
    fn identify(&self, _: AuthRequest<'_>) -> Result<Option<String>, AuthError> {
        Ok(None)
    }

    fn has_login(&self) -> bool {
        true
    }

    fn login<'a>(&'a self, operator: &'a str, token: &'a str) -> AuthFuture<'a, Option<String>> {
        let known = self
            .operators
            .iter()
            .find(|(id, _)| id == operator)
            .map(|(_, hash)| hash.clone());
        let hash = known.clone().unwrap_or_else(|| self.decoy.clone());
        let token = token.to_owned();
        let operator = operator.to_owned();
        Box::pin(async move {
            if token.len() > MAX_CREDENTIAL_BYTES {
                return None;
            }
            // Argon2 is slow on purpose: off the async workers.
            let verified = tokio::task::spawn_blocking(move || {
                PasswordHash::new(&hash).is_ok_and(|parsed| {
                    Argon2::default()
                        .verify_password(token.as_bytes(), &parsed)
                        .is_ok()
                })
            })
            .await
            .unwrap_or(false);
            (verified && known.is_some()).then_some(operator)
        })
    }
}

/// Operators named by a header that an auth proxy in front of the page sets
/// (e.g. `X-Forwarded-User`). A request carrying it from any address other
/// than a configured proxy is refused, so nobody can name themselves.
#[derive(Debug, Clone)]
pub struct TrustedHeaderAuth {
    header: String,
    proxies: Vec<IpAddr>,
}

impl TrustedHeaderAuth {
    /// Trusts `header` on requests from `proxies` only.
    pub fn new(header: impl Into<String>, proxies: impl IntoIterator<Item = IpAddr>) -> Self {
        TrustedHeaderAuth {
            header: header.into(),
            proxies: proxies.into_iter().collect(),
        }
    }
}

impl OperatorAuth for TrustedHeaderAuth {
    fn identify(&self, request: AuthRequest<'_>) -> Result<Option<String>, AuthError> {
        let trusted = request.peer.is_some_and(|peer| {
            // IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is the IPv4 address.
            let peer = peer.ip().to_canonical();
            self.proxies
                .iter()
                .any(|proxy| proxy.to_canonical() == peer)
        });
        if !trusted {
            return Err(AuthError::UntrustedPeer {
                peer: request.peer.map_or_else(
                    || "an unknown address".to_owned(),
                    |peer| peer.ip().to_string(),
                ),
            });
        }
        let mut values = request.headers.get_all(self.header.as_str()).iter();
        let value = match (values.next(), values.next()) {
            (Some(value), None) => value.to_str().ok().map(str::trim),
            _ => None,
        };
        match value.filter(|value| plain_credential(value)) {
            Some(operator) => Ok(Some(operator.to_owned())),
            None => Err(AuthError::MissingHeader {
                header: self.header.clone(),
            }),
        }
    }

    fn has_login(&self) -> bool {
        false
    }

    fn login<'a>(&'a self, _: &'a str, _: &'a str) -> AuthFuture<'a, Option<String>> {
        Box::pin(async { None })
    }
}

/// A non-empty id of at most [`MAX_CREDENTIAL_BYTES`] with no hidden characters.
pub(crate) fn plain_credential(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_CREDENTIAL_BYTES
        && !text
            .chars()
            .any(|c| c.is_whitespace() || crate::text::is_hidden(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoy_costs_what_the_configured_hashes_cost() {
        let params = argon2::Params::new(8 * 1024, 3, 1, None).expect("params");
        let strong = Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
        let salt = SaltString::generate(&mut OsRng);
        let hash = strong
            .hash_password(b"alice-token", &salt)
            .expect("hash")
            .to_string();
        let auth = TokenAuth::new([("alice", hash.clone())]).expect("auth");
        let configured = PasswordHash::new(&hash).expect("parse");
        let decoy = PasswordHash::new(&auth.decoy).expect("parse");
        assert_eq!(decoy.algorithm, configured.algorithm);
        assert_eq!(decoy.version, configured.version);
        assert_eq!(decoy.params, configured.params);
    }
}

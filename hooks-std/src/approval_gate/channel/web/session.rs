//! Sessions of signed-in operators, their cookies, and CSRF tokens.
//!
//! A session id is 256 random bits, sent only in an `HttpOnly`,
//! `SameSite=Strict` cookie (`Secure` when the page is served over TLS) and
//! kept server-side only as its SHA-256, with its operator, expiry and CSRF
//! token. Sessions live in memory: a restart signs everyone out (pending
//! requests are in the store and are listed again once they sign in).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use argon2::password_hash::rand_core::{OsRng, RngCore};
use axum::http::HeaderMap;
use axum::http::header::COOKIE;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "hooks_approvals_session";

/// The login form's double-submit cookie (CSRF on the login form itself).
pub(crate) const LOGIN_COOKIE: &str = "hooks_approvals_login";

/// Most sessions kept at once; the oldest-expiring ones go first.
const MAX_SESSIONS: usize = 10_000;

/// A signed-in operator, as a request carries them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signed {
    /// The operator id (a `web` platform identity).
    pub(crate) operator: String,
    /// The token every state-changing request must carry.
    pub(crate) csrf: String,
}

struct Session {
    operator: String,
    csrf: String,
    expires: Instant,
}

/// The sessions of one page, and the key of its header-mode CSRF tokens.
pub(crate) struct Sessions {
    ttl: Duration,
    sessions: Mutex<HashMap<[u8; 32], Session>>,
    key: [u8; 32],
}

impl Sessions {
    pub(crate) fn new(ttl: Duration) -> Self {
        Sessions {
            ttl,
            sessions: Mutex::default(),
            key: random_bytes(),
        }
    }

    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts a session for `operator`; returns the cookie value.
    pub(crate) fn start(&self, operator: &str) -> String {
        let id = hex::encode(random_bytes());
        let now = Instant::now();
        let mut sessions = self.lock();
        sessions.retain(|_, session| session.expires > now);
        if sessions.len() >= MAX_SESSIONS
            && let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, session)| session.expires)
                .map(|(key, _)| *key)
        {
            sessions.remove(&oldest);
        }
        sessions.insert(
            Sha256::digest(id.as_bytes()).into(),
            Session {
                operator: operator.to_owned(),
                csrf: hex::encode(random_bytes()),
                expires: now + self.ttl,
            },
        );
        id
    }

    /// The operator of the session the request's cookie names, if it is
    /// live. An expired session is forgotten.
    pub(crate) fn find(&self, headers: &HeaderMap) -> Option<Signed> {
        let id = cookie(headers, SESSION_COOKIE)?;
        let key: [u8; 32] = Sha256::digest(id.as_bytes()).into();
        let mut sessions = self.lock();
        let session = sessions.get(&key)?;
        if session.expires <= Instant::now() {
            sessions.remove(&key);
            return None;
        }
        Some(Signed {
            operator: session.operator.clone(),
            csrf: session.csrf.clone(),
        })
    }

    /// Ends the session the request's cookie names.
    pub(crate) fn end(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers, SESSION_COOKIE) {
            let key: [u8; 32] = Sha256::digest(id.as_bytes()).into();
            self.lock().remove(&key);
        }
    }

    /// The CSRF token of an operator named by a trusted header (no session):
    /// an HMAC of the operator id under this page's random key.
    pub(crate) fn header_csrf(&self, operator: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key");
        mac.update(b"hooks-approvals-csrf\0");
        mac.update(operator.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }
}

/// 256 random bits from the operating system.
pub(crate) fn random_bytes() -> [u8; 32] {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    bytes
}

/// Whether `given` is `expected` (constant time).
pub(crate) fn tokens_match(given: &str, expected: &str) -> bool {
    !expected.is_empty() && bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// The value of cookie `name`, if the request carries it exactly once.
pub(crate) fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut found = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(|(key, _)| *key == name)
        .map(|(_, value)| value);
    match (found.next(), found.next()) {
        (Some(value), None) if !value.is_empty() => Some(value),
        _ => None,
    }
}

/// A `Set-Cookie` value: `HttpOnly`, `SameSite=Strict`, `Secure` if asked,
/// expiring after `max_age` (zero deletes it).
pub(crate) fn set_cookie(
    name: &str,
    value: &str,
    path: &str,
    max_age: Duration,
    secure: bool,
) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{name}={value}; Path={path}; Max-Age={}; HttpOnly; SameSite=Strict{secure}",
        max_age.as_secs()
    )
}

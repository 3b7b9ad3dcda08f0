//! The clients of the streamable HTTP endpoint (`mcp_proxy.clients`): each
//! token known only by its SHA-256 digest, and the user and org the calls
//! made with it carry.

use sha2::{Digest, Sha256};

use super::config::{McpClient, SECTION};
use super::error::McpProxyError;

/// Who a request's calls are made by: the user and org of the token it
/// carried. Put in the request's extensions by the HTTP endpoint; nothing
/// a client sends besides its token chooses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Caller {
    pub(super) user: String,
    pub(super) org: String,
}

/// The tokens the endpoint accepts, as digests, each with its caller.
pub(super) struct Tokens {
    known: Vec<([u8; 32], Caller)>,
}

/// Whether the configured clients are well formed: each with one way to
/// know its token (a digest or a variable), a user, and no two alike.
pub(super) fn check(clients: &[McpClient]) -> Result<(), McpProxyError> {
    for (index, client) in clients.iter().enumerate() {
        let at = format!("{SECTION}.clients[{index}]");
        match (&client.token_sha256, &client.token_env) {
            (Some(_), Some(_)) | (None, None) => {
                return Err(McpProxyError::Config(format!(
                    "`{at}` needs exactly one of `token_sha256` (the token's SHA-256 digest in hex) \
                     and `token_env` (the variable that holds the token)"
                )));
            }
            (Some(digest), None) if parse_digest(digest).is_none() => {
                return Err(McpProxyError::Config(format!(
                    "`{at}.token_sha256` is not a SHA-256 digest in hex (64 characters 0-9, a-f): \
                     compute it with `printf %s \"$TOKEN\" | sha256sum`"
                )));
            }
            _ => {}
        }
        if client.user.trim().is_empty() || client.user.chars().any(char::is_control) {
            return Err(McpProxyError::Config(format!(
                "`{at}.user` must name the user the client's calls are made by"
            )));
        }
    }
    Ok(())
}

impl Tokens {
    /// The clients' tokens, those named by a variable read from the
    /// environment (`lookup`) and kept as their digest; `shared` (the
    /// one token of `HOOKS_MCP_PROXY_TOKEN`) is accepted too, its calls
    /// made by `fallback`. A variable named but unset, or two clients with
    /// one token, is an error.
    pub(super) fn new(
        clients: &[McpClient],
        shared: Option<&str>,
        fallback: Caller,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Tokens, McpProxyError> {
        let mut known = Vec::with_capacity(clients.len() + 1);
        for (index, client) in clients.iter().enumerate() {
            let digest = match (&client.token_sha256, &client.token_env) {
                (Some(digest), _) => parse_digest(digest),
                (None, Some(name)) => {
                    let token = lookup(name).filter(|token| !token.trim().is_empty());
                    let Some(token) = token else {
                        return Err(McpProxyError::Config(format!(
                            "`{SECTION}.clients[{index}].token_env` names `{name}`, which is not \
                             set in the proxy's environment"
                        )));
                    };
                    Some(digest(&token))
                }
                (None, None) => None,
            };
            let Some(digest) = digest else {
                return Err(McpProxyError::Config(format!(
                    "`{SECTION}.clients[{index}]` has no usable token"
                )));
            };
            let caller = Caller {
                user: client.user.clone(),
                org: client.org.clone(),
            };
            known.push((digest, caller));
        }
        if let Some(token) = shared {
            known.push((digest(token), fallback));
        }
        for (index, (digest, _)) in known.iter().enumerate() {
            if known[..index].iter().any(|(other, _)| other == digest) {
                return Err(McpProxyError::Config(format!(
                    "two clients of `{SECTION}.clients` (or one and HOOKS_MCP_PROXY_TOKEN) have \
                     the same token: each client needs its own"
                )));
            }
        }
        Ok(Tokens { known })
    }

    /// Whether any token is known (else the endpoint is open, on loopback).
    pub(super) fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// The token `given` is (its index among the known ones: what a
    /// session is bound to) and its caller. Every known digest is compared
    /// in full, whichever matches: the time taken says nothing of which
    /// token, or how much of one, a guess got right.
    pub(super) fn caller(&self, given: &str) -> Option<(usize, &Caller)> {
        let given = digest(given);
        let mut found = None;
        for (index, (digest, caller)) in self.known.iter().enumerate() {
            let mut diff = 0u8;
            for (a, b) in digest.iter().zip(given.iter()) {
                diff |= a ^ b;
            }
            if diff == 0 {
                found = Some((index, caller));
            }
        }
        found
    }
}

/// The SHA-256 digest of `token`.
pub(super) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A digest written as 64 hex digits (either case).
fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.trim().as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut digest = [0u8; 32];
    for (byte, pair) in digest.iter_mut().zip(hex.chunks(2)) {
        let high = char::from(pair[0]).to_digit(16)?;
        let low = char::from(pair[1]).to_digit(16)?;
        *byte = u8::try_from(high * 16 + low).ok()?;
    }
    Some(digest)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp_proxy::McpProxyConfig;

    fn caller(user: &str) -> Caller {
        Caller {
            user: user.to_owned(),
            org: "acme".to_owned(),
        }
    }

    #[test]
    fn each_token_names_its_own_caller_and_no_other_token_does() {
        // SHA-256 of "alice-token-0123456789abcdef0123".
        let alice = format!("{:x}", Sha256::digest(b"alice-token-0123456789abcdef0123"));
        let config = McpProxyConfig::from_value(&json!({"clients": [
            {"token_sha256": alice.to_uppercase(), "user": "alice", "org": "acme"},
            {"token_env": "BOB_TOKEN", "user": "bob", "org": "acme"},
        ]}))
        .expect("config");
        let env = |name: &str| (name == "BOB_TOKEN").then(|| "bob-token-xyz".to_owned());
        let tokens =
            Tokens::new(&config.clients, Some("shared"), caller("desk"), env).expect("tokens");
        let user = |token: &str| tokens.caller(token).map(|(_, caller)| caller.user.clone());
        assert_eq!(
            user("alice-token-0123456789abcdef0123").as_deref(),
            Some("alice")
        );
        assert_eq!(user("bob-token-xyz").as_deref(), Some("bob"));
        assert_eq!(user("shared").as_deref(), Some("desk"));
        for wrong in ["", "bob-token-xy", "bob-token-xyz ", &alice, "BOB_TOKEN"] {
            assert_eq!(user(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn malformed_clients_are_refused_with_the_key_at_fault() {
        for (clients, why) in [
            (json!([{"user": "a"}]), "exactly one of"),
            (
                json!([{"token_env": "A", "token_sha256": "00", "user": "a"}]),
                "exactly one of",
            ),
            (
                json!([{"token_sha256": "abc", "user": "a"}]),
                "not a SHA-256 digest",
            ),
            (json!([{"token_env": "A", "user": " "}]), "clients[0].user"),
            (
                json!([{"token_env": "A", "user": "a", "user_id": "root"}]),
                "user_id",
            ),
        ] {
            let error = McpProxyConfig::from_value(&json!({"clients": clients}))
                .expect_err(why)
                .to_string();
            assert!(error.contains(why), "{error}");
        }
        let twice = McpProxyConfig::from_value(&json!({"clients": [
            {"token_env": "A", "user": "a"}, {"token_env": "B", "user": "b"},
        ]}))
        .expect("config");
        let same = |_: &str| Some("one-token".to_owned());
        let error = Tokens::new(&twice.clients, None, caller("x"), same)
            .err()
            .expect("refused");
        assert!(error.to_string().contains("same token"), "{error}");
        let unset = Tokens::new(&twice.clients, None, caller("x"), |_| None)
            .err()
            .expect("refused");
        assert!(unset.to_string().contains("`A`"), "{unset}");
    }
}

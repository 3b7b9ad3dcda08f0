//! The `requestState` the proxy hands a client of MCP 2026-07-28 to carry
//! back on its retry: sealed, so that the client can neither read nor
//! change it.
//!
//! The state names one held call (a random id) and when it expires; it is
//! encrypted and authenticated with ChaCha20-Poly1305 under a key drawn
//! when the proxy starts and never stored (a restarted proxy holds no
//! calls, so no state of an earlier one can be good). The associated data
//! binds it to who asked and what they asked: the caller (the bearer
//! token's entry, or the stdio connection) and a digest of the tool's name
//! and arguments. A state sent back by another caller, with another call,
//! after it expired, or altered in any byte does not open.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

/// The id of one held call.
pub(super) type HeldId = [u8; 16];

/// The state's format, first byte of the plaintext.
const VERSION: u8 = 1;

/// The plaintext's length: version, id, expiry (seconds since the epoch).
const PLAIN_LEN: usize = 1 + 16 + 8;

/// Why a state does not open: the client is told the same in every case.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unopened {
    /// Not a state of this proxy, for this caller and call, or altered.
    Foreign,
    /// Sealed for this caller and call, but past its time.
    Expired,
}

/// Seals and opens request states under this proxy's key.
pub(super) struct Sealer {
    key: LessSafeKey,
    random: SystemRandom,
}

impl Sealer {
    /// A sealer with a fresh random key, or `None` when the system has no
    /// randomness to give (the proxy then asks no client to retry).
    pub(super) fn new() -> Option<Sealer> {
        let random = SystemRandom::new();
        let mut key = [0u8; 32];
        random.fill(&mut key).ok()?;
        let key = UnboundKey::new(&CHACHA20_POLY1305, &key).ok()?;
        Some(Sealer {
            key: LessSafeKey::new(key),
            random,
        })
    }

    /// A fresh random id for a held call.
    pub(super) fn fresh_id(&self) -> Option<HeldId> {
        let mut id = [0u8; 16];
        self.random.fill(&mut id).ok()?;
        Some(id)
    }

    /// The sealed state naming `id`, good for `lifetime` from now, bound
    /// to `binding`.
    pub(super) fn seal(&self, id: &HeldId, lifetime: Duration, binding: &[u8]) -> Option<String> {
        let expires = SystemTime::now()
            .checked_add(lifetime)?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_secs();
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).ok()?;
        let mut sealed = Vec::with_capacity(NONCE_LEN + PLAIN_LEN + 16);
        sealed.push(VERSION);
        sealed.extend_from_slice(id);
        sealed.extend_from_slice(&expires.to_be_bytes());
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(binding),
                &mut sealed,
            )
            .ok()?;
        let mut state = nonce.to_vec();
        state.append(&mut sealed);
        Some(URL_SAFE_NO_PAD.encode(state))
    }

    /// The held call `state` names, when it was sealed by this proxy for
    /// `binding` and has not expired.
    pub(super) fn open(&self, state: &str, binding: &[u8]) -> Result<HeldId, Unopened> {
        // Far longer than any state this proxy seals: not worth decoding.
        if state.len() > 256 {
            return Err(Unopened::Foreign);
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(state)
            .map_err(|_| Unopened::Foreign)?;
        if bytes.len() < NONCE_LEN {
            return Err(Unopened::Foreign);
        }
        let (nonce, sealed) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| Unopened::Foreign)?;
        let mut sealed = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(binding), &mut sealed)
            .map_err(|_| Unopened::Foreign)?;
        if plain.len() != PLAIN_LEN || plain[0] != VERSION {
            return Err(Unopened::Foreign);
        }
        let mut id = [0u8; 16];
        id.copy_from_slice(&plain[1..17]);
        let mut expires = [0u8; 8];
        expires.copy_from_slice(&plain[17..]);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|_| Unopened::Expired)?
            .as_secs();
        if now >= u64::from_be_bytes(expires) {
            return Err(Unopened::Expired);
        }
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn a_state_opens_only_for_its_binding_and_unaltered() {
        let sealer = Sealer::new().expect("randomness");
        let id = sealer.fresh_id().expect("randomness");
        let state = sealer.seal(&id, HOUR, b"token 0 / pay {}").expect("sealed");
        assert_eq!(sealer.open(&state, b"token 0 / pay {}"), Ok(id));
        // Another caller, or another call.
        assert_eq!(
            sealer.open(&state, b"token 1 / pay {}"),
            Err(Unopened::Foreign)
        );
        // Any byte changed.
        let mut bytes = URL_SAFE_NO_PAD.decode(&state).expect("base64");
        for at in [0, NONCE_LEN, bytes.len() - 1] {
            bytes[at] ^= 1;
            let altered = URL_SAFE_NO_PAD.encode(&bytes);
            assert_eq!(
                sealer.open(&altered, b"token 0 / pay {}"),
                Err(Unopened::Foreign)
            );
            bytes[at] ^= 1;
        }
        // Another proxy's key; garbage; nothing.
        let other = Sealer::new().expect("randomness");
        assert_eq!(
            other.open(&state, b"token 0 / pay {}"),
            Err(Unopened::Foreign)
        );
        for garbage in ["", "!!", "AAAA", &"A".repeat(10_000)] {
            assert_eq!(sealer.open(garbage, b""), Err(Unopened::Foreign));
        }
    }

    #[test]
    fn the_id_cannot_be_read_from_the_state() {
        let sealer = Sealer::new().expect("randomness");
        let id = [7u8; 16];
        let state = sealer.seal(&id, HOUR, b"").expect("sealed");
        let bytes = URL_SAFE_NO_PAD.decode(&state).expect("base64");
        assert!(!bytes.windows(16).any(|window| window == id));
    }

    #[test]
    fn an_expired_state_does_not_open() {
        let sealer = Sealer::new().expect("randomness");
        let id = sealer.fresh_id().expect("randomness");
        let state = sealer.seal(&id, Duration::ZERO, b"").expect("sealed");
        assert_eq!(sealer.open(&state, b""), Err(Unopened::Expired));
    }
}

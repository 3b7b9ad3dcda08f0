//! Feishu's callback encryption (AES-256-CBC) and request signature (SHA-256).
//!
//! With an Encrypt Key configured, Feishu posts `{"encrypt": "<base64>"}`
//! where the base64 text decodes to a 16-byte IV followed by the ciphertext;
//! the key is SHA-256 of the Encrypt Key and the plaintext is PKCS#7-padded
//! UTF-8 JSON. Every such request also carries `X-Lark-Signature`, the hex
//! SHA-256 of timestamp + nonce + Encrypt Key + the raw body bytes (a plain
//! digest, not an HMAC).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use cbc::cipher::BlockEncryptMut;
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, KeyIvInit};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

type Aes256CbcDec = cbc::Decryptor<aes::Aes256>;
type Aes256CbcEnc = cbc::Encryptor<aes::Aes256>;

/// AES block size, which is also the IV length.
const BLOCK: usize = 16;

/// An encrypted payload could not be decrypted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecryptError {
    /// The payload is not valid base64.
    #[error(
        "the encrypted payload is not valid base64 ({0}); Feishu sends standard base64 with padding"
    )]
    Base64(String),
    /// The decoded payload is too short to hold the IV and one block.
    #[error(
        "the encrypted payload is {0} bytes long, too short for a 16-byte IV and at least one 16-byte block"
    )]
    TooShort(usize),
    /// The ciphertext length is not a multiple of the AES block size.
    #[error(
        "the ciphertext is {0} bytes long, not a multiple of 16: the payload is truncated or corrupted"
    )]
    BadLength(usize),
    /// The PKCS#7 padding is wrong, almost always because the key is wrong.
    #[error(
        "the decrypted payload has invalid padding: the Encrypt Key in the config probably differs from the one in the Feishu developer console"
    )]
    BadPadding,
    /// The plaintext is not UTF-8.
    #[error(
        "the decrypted payload is not UTF-8 text: the Encrypt Key in the config probably differs from the one in the Feishu developer console"
    )]
    NotUtf8,
}

/// The AES-256 key Feishu derives from an Encrypt Key: SHA-256 of its UTF-8 bytes.
fn derive_key(encrypt_key: &str) -> [u8; 32] {
    Sha256::digest(encrypt_key.as_bytes()).into()
}

/// Decrypts a Feishu `encrypt` field: base64 → IV (first 16 bytes) +
/// AES-256-CBC ciphertext, key = SHA-256(`encrypt_key`), strict PKCS#7
/// unpadding, UTF-8 text.
///
/// ```
/// use hooks::std_hooks::approval_gate::channel::feishu::decrypt;
/// let text = decrypt("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=").unwrap();
/// assert_eq!(text, "hello world");
/// ```
pub fn decrypt(encrypt_key: &str, encrypted_b64: &str) -> Result<String, DecryptError> {
    let raw = BASE64
        .decode(encrypted_b64.as_bytes())
        .map_err(|error| DecryptError::Base64(error.to_string()))?;
    if raw.len() <= BLOCK {
        return Err(DecryptError::TooShort(raw.len()));
    }
    let (iv, ciphertext) = raw.split_at(BLOCK);
    // Non-empty here, so a multiple of 16 means at least one whole block.
    if ciphertext.len() % BLOCK != 0 {
        return Err(DecryptError::BadLength(ciphertext.len()));
    }
    let key = derive_key(encrypt_key);
    // Key and IV lengths are fixed above, so this cannot fail; map it anyway.
    let decryptor =
        Aes256CbcDec::new_from_slices(&key, iv).map_err(|_| DecryptError::BadPadding)?;
    let mut buffer = ciphertext.to_vec();
    let plaintext = decryptor
        .decrypt_padded_mut::<Pkcs7>(&mut buffer)
        .map_err(|_| DecryptError::BadPadding)?;
    String::from_utf8(plaintext.to_vec()).map_err(|_| DecryptError::NotUtf8)
}

/// Encrypts `plaintext` the way Feishu does (the inverse of [`decrypt`]) with
/// the given IV, returning the base64 text for an `{"encrypt": ...}` body.
/// Test support (`hooks-testkit`'s fake Feishu uses it); pass a random IV.
/// An agent only ever decrypts. Encrypting gives no one anything new: a
/// body that verifies also needs the Encrypt Key, which only Feishu and the
/// app hold.
pub fn encrypt(encrypt_key: &str, plaintext: &str, iv: [u8; 16]) -> String {
    let key = derive_key(encrypt_key);
    let message = plaintext.as_bytes();
    let padded_len = (message.len() / BLOCK + 1) * BLOCK;
    let mut buffer = vec![0u8; padded_len];
    buffer[..message.len()].copy_from_slice(message);
    let encryptor = Aes256CbcEnc::new(&key.into(), &iv.into());
    let ciphertext_len = encryptor
        .encrypt_padded_mut::<Pkcs7>(&mut buffer, message.len())
        .map(|ciphertext| ciphertext.len())
        // The buffer always has room for a full padding block.
        .unwrap_or(padded_len);
    let mut raw = Vec::with_capacity(BLOCK + ciphertext_len);
    raw.extend_from_slice(&iv);
    raw.extend_from_slice(&buffer[..ciphertext_len]);
    BASE64.encode(raw)
}

/// The `X-Lark-Signature` value for a request: lowercase hex of
/// SHA-256(`timestamp` + `nonce` + `encrypt_key` + `body`), where `body` is
/// the exact raw request body.
pub fn signature(timestamp: &str, nonce: &str, encrypt_key: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(timestamp.as_bytes());
    hasher.update(nonce.as_bytes());
    hasher.update(encrypt_key.as_bytes());
    hasher.update(body);
    hex::encode(hasher.finalize())
}

/// Whether `given` is the right signature for the request, compared in
/// constant time; hex case does not matter.
pub fn verify_signature(
    timestamp: &str,
    nonce: &str,
    encrypt_key: &str,
    body: &[u8],
    given: &str,
) -> bool {
    let expected = signature(timestamp, nonce, encrypt_key, body);
    let given = given.trim().to_ascii_lowercase();
    expected.as_bytes().ct_eq(given.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTOR: &str = "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=";

    #[test]
    fn official_vector_decrypts() {
        assert_eq!(decrypt("test key", VECTOR).unwrap(), "hello world");
    }

    #[test]
    fn round_trip() {
        for text in ["", "a", "exactly sixteen!", "{\"k\": \"ünïcødé ✓\"}"] {
            let sealed = encrypt("some key", text, [7; 16]);
            assert_eq!(decrypt("some key", &sealed).unwrap(), text);
        }
    }

    #[test]
    fn encrypt_reproduces_the_official_vector() {
        let raw = BASE64.decode(VECTOR).unwrap();
        let iv: [u8; 16] = raw[..16].try_into().unwrap();
        assert_eq!(encrypt("test key", "hello world", iv), VECTOR);
    }

    #[test]
    fn wrong_key_is_refused() {
        let error = decrypt("other key", VECTOR).unwrap_err();
        assert!(matches!(
            error,
            DecryptError::BadPadding | DecryptError::NotUtf8
        ));
    }

    /// `block` encrypted without padding under key "k", IV first, in base64.
    fn encrypted_unpadded(mut block: [u8; 16]) -> String {
        let key = derive_key("k");
        let iv = [1u8; 16];
        let encryptor = Aes256CbcEnc::new(&key.into(), &iv.into());
        let ciphertext = encryptor
            .encrypt_padded_mut::<cbc::cipher::block_padding::NoPadding>(&mut block, 16)
            .unwrap()
            .to_vec();
        let mut raw = iv.to_vec();
        raw.extend_from_slice(&ciphertext);
        BASE64.encode(&raw)
    }

    #[test]
    fn bad_padding_is_refused() {
        // A last byte that is not valid padding.
        assert_eq!(
            decrypt("k", &encrypted_unpadded(*b"0123456789abcde\x00")),
            Err(DecryptError::BadPadding)
        );
        // Inconsistent padding bytes (…\x01\x02) are refused too.
        assert_eq!(
            decrypt("k", &encrypted_unpadded(*b"0123456789abcd\x01\x02")),
            Err(DecryptError::BadPadding)
        );
    }

    #[test]
    fn truncated_and_garbage_input_is_refused() {
        let raw = BASE64.decode(VECTOR).unwrap();
        assert_eq!(
            decrypt("test key", &BASE64.encode(&raw[..31])),
            Err(DecryptError::BadLength(15))
        );
        assert_eq!(
            decrypt("test key", &BASE64.encode(&raw[..16])),
            Err(DecryptError::TooShort(16))
        );
        assert_eq!(decrypt("test key", ""), Err(DecryptError::TooShort(0)));
        let long = BASE64
            .decode(encrypt("test key", &"x".repeat(40), [9; 16]))
            .unwrap();
        assert_eq!(long.len(), 64);
        assert_eq!(
            decrypt("test key", &BASE64.encode(&long[..56])),
            Err(DecryptError::BadLength(40))
        );
        // Dropping a whole block leaves a plaintext block where padding should be.
        assert_eq!(
            decrypt("test key", &BASE64.encode(&long[..48])),
            Err(DecryptError::BadPadding)
        );
        assert!(matches!(
            decrypt("test key", "!!"),
            Err(DecryptError::Base64(_))
        ));
        assert!(matches!(
            decrypt("test key", &VECTOR[..VECTOR.len() - 3]),
            Err(DecryptError::Base64(_))
        ));
    }

    #[test]
    fn signature_vector() {
        let body = br#"{"encrypt":"P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="}"#;
        let expected = "69c61fa99760d59824d588297c0036194769fb54331682c9cbcd93e85b9a8aad";
        assert_eq!(
            signature("1700000000", "abc123", "test key", body),
            expected
        );
        assert!(verify_signature(
            "1700000000",
            "abc123",
            "test key",
            body,
            expected
        ));
        assert!(verify_signature(
            "1700000000",
            "abc123",
            "test key",
            body,
            &expected.to_ascii_uppercase()
        ));
        assert!(!verify_signature(
            "1700000001",
            "abc123",
            "test key",
            body,
            expected
        ));
        assert!(!verify_signature(
            "1700000000",
            "abc123",
            "test key",
            body,
            &expected[..63]
        ));
        assert!(!verify_signature(
            "1700000000",
            "abc123",
            "test key",
            body,
            ""
        ));
    }
}

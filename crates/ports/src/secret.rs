//! Hashing of client secrets (argon2id) and access tokens (SHA-256).
//!
//! Secrets are chosen by people's tools and checked rarely (at token issue), so they get a slow,
//! salted hash. Access tokens are 256 random bits checked on every call, so a fast unsalted
//! digest is enough: nobody can guess a preimage, and any server instance can look one up.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::StoreError;

pub fn hash_secret(secret: &str) -> Result<String, StoreError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(secret.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| StoreError::Internal(format!("hashing a secret failed: {e}")))
}

/// Whether `secret` matches the stored argon2id `hash`.
pub fn verify_secret(secret: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| {
            Argon2::default()
                .verify_password(secret.as_bytes(), &parsed)
                .is_ok()
        })
        .unwrap_or(false)
}

/// Working memory for argon2 checks, kept from one check to the next.
///
/// Each check needs its hash's memory cost (19 MiB for the default parameters). Allocated anew
/// per check, on whichever thread runs it, the allocator keeps that much behind in every
/// thread's arena it passes through: hundreds of MiB after a burst of token requests. A caller
/// that bounds concurrent checks keeps one of these per permitted check instead.
#[derive(Debug, Default)]
pub struct SecretCheckMemory {
    blocks: Vec<Block>,
}

impl SecretCheckMemory {
    /// Whether `secret` matches the stored argon2 `hash`: the answer of [`verify_secret`].
    pub fn verify(&mut self, secret: &str, hash: &str) -> bool {
        self.matches(secret, hash).unwrap_or(false)
    }

    fn matches(&mut self, secret: &str, hash: &str) -> Option<bool> {
        let parsed = PasswordHash::new(hash).ok()?;
        let algorithm = Algorithm::try_from(parsed.algorithm).ok()?;
        let version = match parsed.version {
            Some(v) => Version::try_from(v).ok()?,
            None => Version::default(),
        };
        let params = Params::try_from(&parsed).ok()?;
        let expected = parsed.hash?;
        let mut salt = [0; 64];
        let salt = parsed.salt?.decode_b64(&mut salt).ok()?;
        let needed = params.block_count();
        if self.blocks.len() < needed {
            self.blocks.resize(needed, Block::default());
        }
        let mut out = [0; 64];
        let out = out.get_mut(..expected.len())?;
        Argon2::new(algorithm, version, params)
            .hash_password_into_with_memory(
                secret.as_bytes(),
                salt,
                out,
                self.blocks.as_mut_slice(),
            )
            .ok()?;
        Some(bool::from(out.ct_eq(expected.as_bytes())))
    }
}

/// A hash to verify against when the client is unknown, so that the answer takes as long as for
/// a known client.
pub fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash_secret("decoy secret for unknown clients").unwrap_or_default())
}

/// The token's SHA-256 in lowercase hex: what a stored token is looked up by, on every call (so
/// written digit by digit, not formatted).
pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut hex = String::with_capacity(2 * digest.len());
    for byte in digest {
        hex.extend(char::from_digit(u32::from(byte >> 4), 16));
        hex.extend(char::from_digit(u32::from(byte & 0x0f), 16));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_hash_is_its_sha256_in_lowercase_hex() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(hash_token("").len(), 64);
    }

    #[test]
    fn secrets_verify_only_against_their_own_hash() {
        let hash = hash_secret("s3cr3t").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_secret("s3cr3t", &hash));
        assert!(!verify_secret("s3cr3T", &hash));
        assert!(!verify_secret("s3cr3t", "not a hash"));
    }

    #[test]
    fn reused_memory_gives_the_answers_of_a_fresh_check() {
        let mut memory = SecretCheckMemory::default();
        let first = hash_secret("s3cr3t").unwrap();
        let second = hash_secret("other").unwrap();
        // A hash with other parameters (less memory, more passes) than the default.
        let small = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(64, 3, 1, Some(16)).unwrap(),
        )
        .hash_password(b"small", &SaltString::generate(&mut OsRng))
        .unwrap()
        .to_string();
        let cases = [
            ("s3cr3t", first.as_str()),
            ("s3cr3T", first.as_str()),
            ("other", second.as_str()),
            ("s3cr3t", second.as_str()),
            ("small", small.as_str()),
            ("smalL", small.as_str()),
            ("s3cr3t", first.as_str()),
            ("s3cr3t", "not a hash"),
            ("", first.as_str()),
        ];
        for (secret, hash) in cases {
            assert_eq!(
                memory.verify(secret, hash),
                verify_secret(secret, hash),
                "{secret} against {hash}"
            );
        }
        assert!(memory.verify("s3cr3t", &first));
        assert!(memory.verify("small", &small));
        assert!(!memory.verify("s3cr3t", &second));
    }

    #[test]
    fn token_hashes_are_sha256_hex() {
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

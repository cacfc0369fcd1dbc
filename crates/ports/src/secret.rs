//! Hashing of client secrets (argon2id) and access tokens (SHA-256).
//!
//! Secrets are chosen by people's tools and checked rarely (at token issue), so they get a slow,
//! salted hash. Access tokens are 256 random bits checked on every call, so a fast unsalted
//! digest is enough: nobody can guess a preimage, and any server instance can look one up.

use argon2::Argon2;
use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use sha2::{Digest, Sha256};

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

/// A hash to verify against when the client is unknown, so that the answer takes as long as for
/// a known client.
pub fn decoy_hash() -> &'static str {
    static DECOY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DECOY.get_or_init(|| hash_secret("decoy secret for unknown clients").unwrap_or_default())
}

pub fn hash_token(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_verify_only_against_their_own_hash() {
        let hash = hash_secret("s3cr3t").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_secret("s3cr3t", &hash));
        assert!(!verify_secret("s3cr3T", &hash));
        assert!(!verify_secret("s3cr3t", "not a hash"));
    }

    #[test]
    fn token_hashes_are_sha256_hex() {
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

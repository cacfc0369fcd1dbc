//! Checking client secrets at the token endpoint.
//!
//! An argon2id check costs tens of milliseconds of CPU and about 19 MiB of memory on purpose. Two
//! things keep a burst of token requests from taking the process down with it:
//!
//! - **At most one check per core at a time.** Further requests wait for a permit on the async
//!   runtime, holding neither a blocking thread nor hash memory while they wait. Each permit
//!   comes with one argon2 working memory, kept and reused, so memory stays at one hash's worth
//!   per core however many checks run.
//! - **A successful check is remembered briefly**, keyed by client id and a keyed digest of the
//!   secret (never the secret itself), together with the stored hash it matched. A request whose
//!   secret digest and the account's current hash both match skips argon2; a different secret, or
//!   a rotated one (a new stored hash), is checked in full. The account itself is still read for
//!   every request, so a revoked account is refused at once, as before.

use std::time::Duration;

use hmac::{Hmac, Mac};
use roastery_ports::secret::SecretCheckMemory;
use sha2::Sha256;
use tokio::sync::Semaphore;

use crate::error::ApiError;

/// (client id, keyed digest of the secret) → the stored hash the secret matched.
type Verified = moka::sync::Cache<(String, [u8; 32]), String>;

pub(crate) struct SecretChecks {
    permits: Semaphore,
    /// One argon2 working memory per permit, reused (see [`SecretCheckMemory`]).
    memory: std::sync::Mutex<Vec<SecretCheckMemory>>,
    verified: Verified,
    digest_key: [u8; 32],
}

impl SecretChecks {
    /// Remembers successful checks for `ttl` (no longer than the bearer-token cache, so a
    /// changed secret is never trusted longer than a token answer is).
    pub(crate) fn new(ttl: Duration) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let digest_key: [u8; 32] = rand::random();
        Self {
            permits: Semaphore::new(cores),
            memory: std::sync::Mutex::new(Vec::with_capacity(cores)),
            verified: moka::sync::Cache::builder()
                .max_capacity(10_000)
                .time_to_live(ttl)
                .build(),
            digest_key,
        }
    }

    /// Whether `secret` matches `stored_hash`, the argon2 hash on record for `client_id`.
    pub(crate) async fn matches(
        &self,
        client_id: &str,
        secret: &str,
        stored_hash: &str,
    ) -> Result<bool, ApiError> {
        let key = (client_id.to_owned(), self.digest(secret));
        if self
            .verified
            .get(&key)
            .is_some_and(|hash| hash == stored_hash)
        {
            return Ok(true);
        }
        let permit = self.permits.acquire().await.map_err(ApiError::internal)?;
        let mut memory = self.take_memory();
        let (secret, hash) = (secret.to_owned(), stored_hash.to_owned());
        let (matched, hash, memory) = actix_web::web::block(move || {
            let matched = memory.verify(&secret, &hash);
            (matched, hash, memory)
        })
        .await
        .map_err(ApiError::internal)?;
        self.give_back(memory);
        drop(permit);
        if matched {
            self.verified.insert(key, hash);
        }
        Ok(matched)
    }

    /// A permit holder's working memory: a kept one, or a new one until there is one per permit.
    fn take_memory(&self) -> SecretCheckMemory {
        self.memory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    fn give_back(&self, memory: SecretCheckMemory) {
        self.memory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(memory);
    }

    /// HMAC-SHA-256 of the secret under a key drawn at start: fast, and useless to anyone who
    /// reads the process memory without the key.
    fn digest(&self, secret: &str) -> [u8; 32] {
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.digest_key) else {
            // HMAC takes keys of any length; this branch cannot be taken.
            return [0; 32];
        };
        mac.update(secret.as_bytes());
        mac.finalize().into_bytes().into()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use roastery_ports::secret::hash_secret;

    use super::*;

    #[actix_web::test]
    async fn a_remembered_secret_does_not_let_another_secret_or_hash_through() {
        let checks = SecretChecks::new(Duration::from_secs(30));
        let hash = hash_secret("right").unwrap();
        assert!(checks.matches("rc-1", "right", &hash).await.unwrap());
        let key = ("rc-1".to_owned(), checks.digest("right"));
        assert_eq!(checks.verified.get(&key), Some(hash.clone()));
        // Remembered: answered without argon2.
        assert!(checks.matches("rc-1", "right", &hash).await.unwrap());
        assert!(!checks.matches("rc-1", "wrong", &hash).await.unwrap());
        assert!(!checks.matches("rc-1", "", &hash).await.unwrap());
        // Another client with the same secret is checked against its own hash.
        let other = hash_secret("other").unwrap();
        assert!(!checks.matches("rc-2", "right", &other).await.unwrap());
        // A rotated secret: the old one no longer matches the new hash, the new one does.
        let rotated = hash_secret("new").unwrap();
        assert!(!checks.matches("rc-1", "right", &rotated).await.unwrap());
        assert!(checks.matches("rc-1", "new", &rotated).await.unwrap());
    }

    #[actix_web::test]
    async fn a_remembered_check_expires() {
        let checks = SecretChecks::new(Duration::from_millis(100));
        let hash = hash_secret("right").unwrap();
        assert!(checks.matches("rc-1", "right", &hash).await.unwrap());
        let key = ("rc-1".to_owned(), checks.digest("right"));
        assert!(checks.verified.get(&key).is_some());
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(checks.verified.get(&key).is_none());
    }

    #[actix_web::test]
    async fn the_secret_itself_is_not_kept() {
        let checks = SecretChecks::new(Duration::from_secs(30));
        let hash = hash_secret("a-memorable-secret").unwrap();
        assert!(
            checks
                .matches("rc-1", "a-memorable-secret", &hash)
                .await
                .unwrap()
        );
        let digest = checks.digest("a-memorable-secret");
        assert_ne!(&digest[..], &b"a-memorable-secret"[..]);
        // Keyed: another process (another key) derives another digest from the same secret.
        assert_ne!(
            digest,
            SecretChecks::new(Duration::from_secs(30)).digest("a-memorable-secret")
        );
    }

    #[actix_web::test]
    async fn no_more_checks_run_at_once_than_there_are_permits() {
        let checks = Arc::new(SecretChecks::new(Duration::from_secs(30)));
        let permits = checks.permits.available_permits();
        assert!(permits >= 1);
        let hash = hash_secret("right").unwrap();
        // Every permit taken: a check waits instead of starting.
        let held = checks
            .permits
            .acquire_many(u32::try_from(permits).unwrap())
            .await
            .unwrap();
        let waiting = {
            let (checks, hash) = (checks.clone(), hash.clone());
            actix_web::rt::spawn(async move { checks.matches("rc-1", "right", &hash).await })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!waiting.is_finished());
        drop(held);
        assert!(waiting.await.unwrap().unwrap());
        // Many checks at once keep no more working memories than there are permits.
        let many: Vec<_> = (0..3 * permits)
            .map(|k| {
                let (checks, hash) = (checks.clone(), hash.clone());
                actix_web::rt::spawn(async move {
                    checks.matches("rc-1", &format!("wrong-{k}"), &hash).await
                })
            })
            .collect();
        for check in many {
            assert!(!check.await.unwrap().unwrap());
        }
        let kept = checks.memory.lock().unwrap().len();
        assert!(
            (1..=permits).contains(&kept),
            "{kept} memories for {permits} permits"
        );
    }
}

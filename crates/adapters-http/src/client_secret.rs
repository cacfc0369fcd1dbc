//! Checking client secrets at the token endpoint.
//!
//! An argon2id check costs tens of milliseconds of CPU and about 19 MiB of memory on purpose. Two
//! things keep a burst of token requests from taking the process down with it:
//!
//! - **At most one check per core at a time.** Further requests wait for a permit on the async
//!   runtime, holding neither a blocking thread nor hash memory while they wait; one that waits
//!   longer than [`CHECK_WAIT`] answers 503 with `Retry-After`. The permit belongs to the
//!   blocking work, not to the request: a client that hangs up while its check runs frees
//!   nothing until the hash is done, and one that hangs up while waiting starts nothing. Each
//!   permit comes with one argon2 working memory, kept and reused, so memory stays at one hash's
//!   worth per core however many checks run or are abandoned.
//! - **A successful check is remembered briefly**, keyed by client id and a keyed digest of the
//!   secret (never the secret itself), together with the stored hash it matched. A request whose
//!   secret digest and the account's current hash both match skips argon2; a different secret, or
//!   a rotated one (a new stored hash), is checked in full. The account itself is still read for
//!   every request, so a revoked account is refused at once, as before.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use actix_web::http::StatusCode;
use hmac::{Hmac, Mac};
use roastery_ports::secret::SecretCheckMemory;
use sha2::Sha256;
use tokio::sync::Semaphore;

use crate::error::ApiError;

/// The longest a secret check waits for its turn before the request is answered 503.
pub(crate) const CHECK_WAIT: Duration = Duration::from_secs(5);

/// (client id, keyed digest of the secret) → the stored hash the secret matched.
type Verified = moka::sync::Cache<(String, [u8; 32]), String>;

pub(crate) struct SecretChecks {
    permits: Arc<Semaphore>,
    /// How long a check waits for a permit ([`CHECK_WAIT`]).
    wait: Duration,
    /// One argon2 working memory per permit, reused (see [`SecretCheckMemory`]).
    memory: Arc<Mutex<Vec<SecretCheckMemory>>>,
    verified: Verified,
    digest_key: [u8; 32],
}

/// A permit holder's working memory: a kept one, or a new one until there is one per permit.
fn take_memory(memories: &Mutex<Vec<SecretCheckMemory>>) -> SecretCheckMemory {
    memories
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .pop()
        .unwrap_or_default()
}

fn give_back(memories: &Mutex<Vec<SecretCheckMemory>>, memory: SecretCheckMemory) {
    memories
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(memory);
}

impl SecretChecks {
    /// Remembers successful checks for `ttl` (no longer than the bearer-token cache, so a
    /// changed secret is never trusted longer than a token answer is).
    pub(crate) fn new(ttl: Duration) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let digest_key: [u8; 32] = rand::random();
        Self {
            permits: Arc::new(Semaphore::new(cores)),
            wait: CHECK_WAIT,
            memory: Arc::new(Mutex::new(Vec::with_capacity(cores))),
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
        let permit = tokio::time::timeout(self.wait, Arc::clone(&self.permits).acquire_owned())
            .await
            .map_err(|_| {
                tracing::warn!(
                    "client secret checks are saturated; a token request waited too long"
                );
                ApiError {
                    retry_after: Some(1),
                    ..ApiError::new(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "server_error",
                        "too many token requests are being checked; retry shortly",
                    )
                }
            })?
            .map_err(ApiError::internal)?;
        let memories = Arc::clone(&self.memory);
        let (secret, hash) = (secret.to_owned(), stored_hash.to_owned());
        // Everything the hash needs moves into the blocking work, the permit included: if this
        // future is dropped (the client hung up), the hash still runs to its end holding its
        // permit and its reused memory, so abandoned requests cannot add checks or memories.
        let (matched, hash) = actix_web::web::block(move || {
            let _permit = permit;
            let mut memory = take_memory(&memories);
            let matched = memory.verify(&secret, &hash);
            give_back(&memories, memory);
            (matched, hash)
        })
        .await
        .map_err(ApiError::internal)?;
        if matched {
            self.verified.insert(key, hash);
        }
        Ok(matched)
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

    #[actix_web::test]
    async fn a_check_waiting_past_its_limit_answers_503_with_retry_after() {
        let mut checks = SecretChecks::new(Duration::from_secs(30));
        checks.wait = Duration::from_millis(100);
        let permits = checks.permits.available_permits();
        let held = Arc::clone(&checks.permits)
            .acquire_many_owned(u32::try_from(permits).unwrap())
            .await
            .unwrap();
        let hash = hash_secret("right").unwrap();
        let refused = checks.matches("rc-1", "right", &hash).await.unwrap_err();
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.code, "server_error");
        assert_eq!(refused.retry_after, Some(1));
        drop(held);
        assert!(checks.matches("rc-1", "right", &hash).await.unwrap());
    }

    #[actix_web::test]
    async fn checks_abandoned_mid_hash_keep_their_permit_and_give_their_memory_back() {
        let checks = Arc::new(SecretChecks::new(Duration::from_secs(30)));
        let permits = checks.permits.available_permits();
        let hash = hash_secret("right").unwrap();
        // Every permit taken by a running check, and as many again waiting.
        let requests: Vec<_> = (0..2 * permits)
            .map(|k| {
                let (checks, hash) = (checks.clone(), hash.clone());
                actix_web::rt::spawn(async move {
                    checks.matches("rc-1", &format!("wrong-{k}"), &hash).await
                })
            })
            .collect();
        while checks.permits.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        // Every client hangs up.
        for request in &requests {
            request.abort();
        }
        for request in requests {
            // Cancelled, or finished just before the hang-up: either way it is over.
            let _ = request.await;
        }
        // The running hashes finish and return their permits and memories; the waiting ones
        // never started.
        while checks.permits.available_permits() < permits {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let kept = checks.memory.lock().unwrap().len();
        assert!(
            (1..=permits).contains(&kept),
            "{kept} memories for {permits} permits"
        );
    }
}

//! The open connections of the server and the requests each is serving, so that a shutdown
//! closes idle connections at once and lets requests in flight finish.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// The open connections of the server, by peer address, with the requests each is serving.
#[derive(Debug)]
pub struct Connections {
    busy: Mutex<HashMap<SocketAddr, usize>>,
    shutdown: tokio::sync::watch::Sender<bool>,
}

impl Default for Connections {
    fn default() -> Self {
        Self {
            busy: Mutex::default(),
            shutdown: tokio::sync::watch::Sender::new(false),
        }
    }
}

impl Connections {
    fn busy(&self) -> std::sync::MutexGuard<'_, HashMap<SocketAddr, usize>> {
        // The map holds plain counters: a panic elsewhere cannot leave it inconsistent.
        self.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn begin_shutdown(&self) {
        self.shutdown.send_replace(true);
    }

    /// Whether the server is shutting down: answers then close their connection.
    pub fn shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// Marks a request of the connection from `peer` as in flight until the guard drops.
    pub fn enter(self: &Arc<Self>, peer: SocketAddr) -> InFlight {
        if let Some(count) = self.busy().get_mut(&peer) {
            *count += 1;
        }
        InFlight {
            connections: Arc::clone(self),
            peer,
        }
    }

    /// Serves one connection; dropped at once if it is idle when the shutdown begins.
    pub(crate) async fn serve<F: Future>(
        &self,
        peer: SocketAddr,
        connection: F,
    ) -> Option<F::Output> {
        self.busy().insert(peer, 0);
        let mut shutdown = self.shutdown.subscribe();
        let idle_at_shutdown = async {
            // An error means the sender is gone: no shutdown will come from it.
            if shutdown.wait_for(|down| *down).await.is_err()
                || self.busy().get(&peer).is_some_and(|n| *n > 0)
            {
                std::future::pending::<()>().await;
            }
        };
        let outcome = tokio::select! {
            // The connection first: woken by the shutdown and by a request's first bytes at once,
            // it reads them and the request enters before the connection is judged idle (in
            // random order it was dropped under a request that had been sent).
            biased;
            done = connection => Some(done),
            () = idle_at_shutdown => None,
        };
        self.busy().remove(&peer);
        outcome
    }
}

/// A request in flight; see [`Connections::enter`].
pub struct InFlight {
    connections: Arc<Connections>,
    peer: SocketAddr,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(count) = self.connections.busy().get_mut(&self.peer) {
            *count = count.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 40_000))
    }

    /// A connection whose request arrives as the shutdown begins is served, not dropped as idle:
    /// the connection is polled (and its request enters) before it is judged idle. Tried many
    /// times, as an unordered choice would drop about every second one.
    #[tokio::test]
    async fn a_request_arriving_with_the_shutdown_is_served() {
        for _ in 0..64 {
            let connections = Arc::new(Connections::default());
            connections.begin_shutdown();
            let entering = Arc::clone(&connections);
            let served = connections
                .serve(peer(), async move {
                    let _in_flight = entering.enter(peer());
                    tokio::task::yield_now().await;
                    "answered"
                })
                .await;
            assert_eq!(served, Some("answered"));
        }
    }

    /// A connection idle when the shutdown begins is dropped at once; one with a request in
    /// flight is served to its end.
    #[tokio::test]
    async fn idle_connections_are_dropped_and_busy_ones_finish() {
        let connections = Arc::new(Connections::default());
        let (answer, answered) = tokio::sync::oneshot::channel::<()>();
        let busy = {
            let connections = Arc::clone(&connections);
            tokio::spawn(async move {
                let entering = Arc::clone(&connections);
                connections
                    .serve(peer(), async move {
                        let _in_flight = entering.enter(peer());
                        answered.await.ok();
                        "answered"
                    })
                    .await
            })
        };
        let idle = {
            let connections = Arc::clone(&connections);
            let other = SocketAddr::from(([127, 0, 0, 1], 40_001));
            tokio::spawn(async move {
                connections
                    .serve(other, std::future::pending::<&str>())
                    .await
            })
        };
        tokio::task::yield_now().await;
        connections.begin_shutdown();
        let idle = tokio::time::timeout(std::time::Duration::from_secs(10), idle).await;
        assert_eq!(
            idle.ok().and_then(Result::ok),
            Some(None),
            "the idle connection is dropped at once"
        );
        answer.send(()).ok();
        assert_eq!(busy.await.ok(), Some(Some("answered")));
    }
}

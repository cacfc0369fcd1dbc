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

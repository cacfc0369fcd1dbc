//! The request a log line belongs to: its id, operation, method and path, then the client once
//! authenticated and the status and latency once answered.
//!
//! The HTTP layer makes one [`RequestContext`] per request and makes it the thread's current
//! request while the request's future is polled ([`InRequest`]) and while its blocking work runs
//! ([`current`], [`Entered`]); the log layer of the binary writes the current request
//! ([`current`]) into every line. This is what a `tracing` span around the request did, at a
//! fraction of its cost: a span is registered, entered and left through the subscriber's registry
//! on every poll, and its fields are formatted as they are recorded; a context is allocated once
//! (with its path and, once known, its client), made current by setting a thread-local, and
//! formatted only by the lines that are written.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use actix_web::http::Method;
use actix_web::http::header::HeaderValue;

/// One request, as its log lines name it.
#[derive(Debug)]
pub struct RequestContext {
    id: HeaderValue,
    operation: &'static str,
    method: Method,
    path: Box<str>,
    client_id: OnceLock<Box<str>>,
    answer: OnceLock<Answer>,
}

/// What the request was answered, for its last line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    pub latency_us: u64,
}

impl RequestContext {
    pub fn new(id: HeaderValue, operation: &'static str, method: Method, path: &str) -> Arc<Self> {
        Arc::new(Self {
            id,
            operation,
            method,
            path: path.into(),
            client_id: OnceLock::new(),
            answer: OnceLock::new(),
        })
    }

    /// The request id (always visible ASCII: see [`crate::request_id`]).
    pub fn id(&self) -> &str {
        self.id.to_str().unwrap_or_default()
    }

    /// The operation's label, as metrics name it.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    pub fn method(&self) -> &str {
        self.method.as_str()
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// The authenticated client, once known.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.get().map(|id| &**id)
    }

    /// The status and latency, once answered.
    pub fn answer(&self) -> Option<Answer> {
        self.answer.get().copied()
    }

    /// Records the answer; the first one recorded stays.
    pub fn answered(&self, answer: Answer) {
        let _ = self.answer.set(answer);
    }

    /// Makes this the thread's current request until the returned guard is dropped.
    pub fn enter(self: &Arc<Self>) -> Entered {
        Entered::new(Some(self.clone()))
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<RequestContext>>> = const { RefCell::new(None) };
}

/// The thread's current request: for its log lines, and for work that runs elsewhere (a blocking
/// thread) on its behalf.
pub fn current() -> Option<Arc<RequestContext>> {
    CURRENT
        .try_with(|current| current.try_borrow().ok().and_then(|c| c.clone()))
        .ok()
        .flatten()
}

/// Names the authenticated client in the current request; the first one named stays.
pub fn record_client(client_id: &str) {
    if let Some(request) = current() {
        let _ = request.client_id.set(client_id.into());
    }
}

/// A request made current on this thread; dropping it makes the one before current again.
#[must_use = "the request is current only while this guard lives"]
pub struct Entered {
    previous: Option<Arc<RequestContext>>,
}

impl Entered {
    /// Makes `request` (or none) current on this thread.
    pub fn new(request: Option<Arc<RequestContext>>) -> Self {
        let previous = CURRENT
            .try_with(|current| match current.try_borrow_mut() {
                Ok(mut current) => std::mem::replace(&mut *current, request),
                Err(_) => None,
            })
            .ok()
            .flatten();
        Self { previous }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.previous.take();
        let _ = CURRENT.try_with(|current| {
            if let Ok(mut current) = current.try_borrow_mut() {
                *current = previous;
            }
        });
    }
}

pin_project_lite::pin_project! {
    /// A future whose every poll runs with its request current.
    pub struct InRequest<F> {
        request: Arc<RequestContext>,
        #[pin]
        inner: F,
    }
}

impl<F> InRequest<F> {
    pub fn new(request: Arc<RequestContext>, inner: F) -> Self {
        Self { request, inner }
    }
}

impl<F: Future> Future for InRequest<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = this.request.enter();
        this.inner.poll(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &'static str) -> Arc<RequestContext> {
        RequestContext::new(
            HeaderValue::from_static(id),
            "core.location.listLocations",
            Method::POST,
            "/rpc/v1/core.location.listLocations",
        )
    }

    fn current_id() -> Option<String> {
        current().map(|r| r.id().to_owned())
    }

    #[test]
    fn a_request_is_current_while_entered_and_the_one_before_comes_back() {
        assert_eq!(current_id(), None);
        let outer = request("outer-1");
        let inner = request("inner-1");
        {
            let _outer = outer.enter();
            assert_eq!(current_id().as_deref(), Some("outer-1"));
            {
                let _inner = inner.enter();
                assert_eq!(current_id().as_deref(), Some("inner-1"));
                let _none = Entered::new(None);
                assert_eq!(current_id(), None);
            }
            assert_eq!(current_id().as_deref(), Some("outer-1"));
        }
        assert_eq!(current_id(), None);
        assert_eq!(
            Arc::strong_count(&outer),
            1,
            "no request is kept by the thread"
        );
    }

    #[test]
    fn the_client_and_answer_are_recorded_once() {
        let r = request("rec-1");
        {
            let _in = r.enter();
            record_client("rc-first");
            record_client("rc-second");
        }
        record_client("rc-outside");
        assert_eq!(r.client_id(), Some("rc-first"));
        assert_eq!(r.answer(), None);
        r.answered(Answer {
            status: 200,
            latency_us: 7,
        });
        r.answered(Answer {
            status: 500,
            latency_us: 9,
        });
        assert_eq!(
            r.answer(),
            Some(Answer {
                status: 200,
                latency_us: 7
            })
        );
        assert_eq!(r.id(), "rec-1");
        assert_eq!(r.operation(), "core.location.listLocations");
        assert_eq!(r.method(), "POST");
        assert_eq!(r.path(), "/rpc/v1/core.location.listLocations");
    }

    #[test]
    fn a_future_sees_its_request_on_every_poll_and_others_do_not() {
        let r = request("fut-1");
        let polls = std::cell::Cell::new(0);
        let seen = RefCell::new(Vec::new());
        let future = InRequest::new(
            r.clone(),
            std::future::poll_fn(|cx| {
                seen.borrow_mut().push(current_id());
                polls.set(polls.get() + 1);
                if polls.get() < 3 {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                } else {
                    Poll::Ready(())
                }
            }),
        );
        let mut future = std::pin::pin!(future);
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        while future.as_mut().poll(&mut cx).is_pending() {
            // Between polls, the thread runs other work: no request is current.
            assert_eq!(current_id(), None);
        }
        assert_eq!(*seen.borrow(), vec![Some("fut-1".to_owned()); 3]);
    }

    #[test]
    fn blocking_work_carries_the_request_to_its_thread() {
        let r = request("blk-1");
        let carried = {
            let _in = r.enter();
            current()
        };
        let seen = std::thread::spawn(move || {
            let _in = Entered::new(carried);
            current_id()
        })
        .join()
        .unwrap_or_default();
        assert_eq!(seen.as_deref(), Some("blk-1"));
    }
}

//! The thread that writes log lines, so that a request hands its line over and goes on.
//!
//! A request appends its line to a buffer shared with the thread, under a lock held for that copy
//! only: no allocation per line, no queue. The thread takes the whole buffer at once (swapping in
//! its spare one), writes it out in one write, and sleeps [`BATCH_INTERVAL`] before it looks again;
//! only when it finds the buffer empty does it wait to be woken by the next line. A busy server's
//! requests therefore find the thread asleep on a timer: handing a line over wakes nobody (no
//! system call), and the lines of an interval go out together. (`tracing-appender`'s writer
//! queues each line as an allocation of its own and waits on its queue as soon as it is empty, so
//! on a busy server every line woke it and was written on its own.) A line reaches standard error
//! at most [`BATCH_INTERVAL`] after it was handed over, the first line after a quiet spell at once.
//!
//! The writer is lossy, on purpose: when standard error does not keep up (a stalled collector or
//! terminal), lines wait in memory up to a number of lines and of bytes ([`Room`]; a line's
//! length is not bounded by the writer, so the bytes are) and beyond that lines are dropped rather
//! than requests delayed; [`Dropped`] counts them. Dropping the [`WriterGuard`] writes out every
//! line handed over before it, then ends the thread (waiting at most [`SHUTDOWN_WAIT`] for a
//! stalled standard error, so that a stopping server is not held by its collector).

use std::io::{self, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the thread sleeps after writing a batch before it takes the next one.
pub const BATCH_INTERVAL: Duration = Duration::from_millis(5);

/// How long dropping the guard waits for the waiting lines to be written.
pub const SHUTDOWN_WAIT: Duration = Duration::from_secs(2);

/// Capacity the buffers start with: a busy interval's lines fit without growing them.
const BUFFER: usize = 64 * 1024;

/// How much may wait to be written before lines are dropped.
#[derive(Debug, Clone, Copy)]
pub struct Room {
    pub lines: usize,
    pub bytes: usize,
}

/// What requests and the thread share.
struct Shared {
    waiting: Mutex<Waiting>,
    /// Wakes the thread when it waits for a line.
    woken: Condvar,
    /// Lines dropped because the buffer was full (or the thread had ended).
    dropped: AtomicUsize,
    /// What the buffer may hold.
    room: Room,
}

/// The lines waiting to be written.
struct Waiting {
    bytes: Vec<u8>,
    lines: usize,
    /// The thread waits on [`Shared::woken`] (rather than sleeping between batches).
    idle: bool,
    /// The guard was dropped: no line is taken any more.
    closed: bool,
}

impl Shared {
    /// The lock of the waiting lines; a panic while it was held left nothing half-done that
    /// matters more than the logs, so a poisoned lock is used as it is.
    fn waiting(&self) -> MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Hands lines to the writing thread; cheap to clone.
#[derive(Clone)]
pub struct ThreadWriter {
    shared: Arc<Shared>,
}

/// How many lines were dropped because too many were waiting.
#[derive(Clone)]
pub struct Dropped(Arc<Shared>);

impl Dropped {
    pub fn lines(&self) -> usize {
        self.0.dropped.load(Ordering::Relaxed)
    }
}

/// Ends the writing thread when dropped, once it has written every line handed over before.
#[must_use = "dropping the guard stops the writing of log lines"]
pub struct WriterGuard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl ThreadWriter {
    /// A thread writing to `out`, with up to `room` waiting before lines are dropped.
    pub fn spawn(out: impl Write + Send + 'static, room: Room) -> io::Result<(Self, WriterGuard)> {
        let shared = Arc::new(Shared {
            waiting: Mutex::new(Waiting {
                bytes: Vec::with_capacity(BUFFER),
                lines: 0,
                idle: false,
                closed: false,
            }),
            woken: Condvar::new(),
            dropped: AtomicUsize::new(0),
            room,
        });
        let thread = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("roastery-logs".into())
                .spawn(move || write_lines(&shared, out))?
        };
        Ok((
            Self {
                shared: shared.clone(),
            },
            WriterGuard {
                shared,
                thread: Some(thread),
            },
        ))
    }

    /// Hands `line` over, or counts it dropped when it does not fit in the room left (or the
    /// thread has ended).
    pub fn write_line(&self, line: &[u8]) {
        let mut waiting = self.shared.waiting();
        let room = self.shared.room;
        if waiting.closed
            || waiting.lines >= room.lines
            || waiting.bytes.len().saturating_add(line.len()) > room.bytes
        {
            drop(waiting);
            self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        waiting.bytes.extend_from_slice(line);
        waiting.lines += 1;
        if waiting.idle {
            waiting.idle = false;
            drop(waiting);
            self.shared.woken.notify_one();
        }
    }

    pub fn dropped(&self) -> Dropped {
        Dropped(self.shared.clone())
    }
}

impl Drop for WriterGuard {
    fn drop(&mut self) {
        self.shared.waiting().closed = true;
        self.shared.woken.notify_one();
        let Some(thread) = self.thread.take() else {
            return;
        };
        let deadline = Instant::now() + SHUTDOWN_WAIT;
        while !thread.is_finished() {
            if Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = thread.join();
    }
}

/// The thread: takes what waits, writes it, sleeps; waits for a line when nothing waited.
fn write_lines(shared: &Shared, mut out: impl Write) {
    let mut batch = Vec::with_capacity(BUFFER);
    loop {
        let closed = {
            let mut waiting = shared.waiting();
            while waiting.bytes.is_empty() && !waiting.closed {
                waiting.idle = true;
                waiting = shared
                    .woken
                    .wait(waiting)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            waiting.idle = false;
            std::mem::swap(&mut waiting.bytes, &mut batch);
            waiting.lines = 0;
            waiting.closed
        };
        // A line that cannot be written has nowhere else to go: write errors are ignored.
        let _ = out.write_all(&batch);
        let _ = out.flush();
        batch.clear();
        if batch.capacity() > 16 * BUFFER {
            // Grown by a stall: not kept for the quiet time after.
            batch = Vec::with_capacity(BUFFER);
        }
        if closed {
            return;
        }
        std::thread::sleep(BATCH_INTERVAL);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::AtomicBool;

    use super::*;

    /// A writer whose bytes and write calls the test reads back.
    #[derive(Clone, Default)]
    pub(crate) struct Captured(Arc<Mutex<(Vec<u8>, usize)>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let mut captured = self.0.lock().unwrap();
            captured.0.extend_from_slice(buf);
            captured.1 += 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        pub(crate) fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().0.clone()).unwrap()
        }
        fn writes(&self) -> usize {
            self.0.lock().unwrap().1
        }
    }

    #[test]
    fn every_line_is_written_in_order_by_the_time_the_guard_is_dropped() {
        let out = Captured::default();
        let (writer, guard) = ThreadWriter::spawn(out.clone(), ROOMY).unwrap();
        let expected: String = (0..10_000).map(|n| format!("line {n}\n")).collect();
        for n in 0..10_000 {
            writer.write_line(format!("line {n}\n").as_bytes());
        }
        drop(guard);
        assert_eq!(out.text(), expected);
        assert_eq!(writer.dropped().lines(), 0);
        // The thread has ended: a later line is counted, not lost silently.
        writer.write_line(b"late\n");
        assert_eq!(writer.dropped().lines(), 1);
    }

    #[test]
    fn a_line_after_a_quiet_spell_is_written_at_once_and_a_burst_in_few_writes() {
        let out = Captured::default();
        let (writer, guard) = ThreadWriter::spawn(out.clone(), ROOMY).unwrap();
        writer.write_line(b"alone\n");
        let started = Instant::now();
        while out.text().is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the line was not written"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        // Let the thread go back to waiting on the queue, then hand over a burst.
        std::thread::sleep(BATCH_INTERVAL * 4);
        let before = out.writes();
        // A line every 20 µs, as a busy server hands them over: more than the thread could take
        // one by one if each woke it.
        let burst = Instant::now();
        for n in 0..1_000u32 {
            while burst.elapsed() < Duration::from_micros(20) * n {
                std::hint::spin_loop();
            }
            writer.write_line(format!("burst {n}\n").as_bytes());
        }
        drop(guard);
        assert_eq!(out.text().lines().count(), 1_001);
        // One line a write would be 1,000 writes; the lines wait for the thread's interval.
        let writes = out.writes() - before;
        assert!(writes < 100, "{writes} writes for a burst of 1,000 lines");
    }

    /// A writer that blocks until the gate opens, and says when something waits at the gate.
    struct Gated {
        gate: Arc<Mutex<()>>,
        waiting: Arc<AtomicBool>,
        out: Captured,
    }

    impl Write for Gated {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.waiting.store(true, Ordering::SeqCst);
            let _open = self.gate.lock().unwrap();
            self.out.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            self.waiting.store(true, Ordering::SeqCst);
            let _open = self.gate.lock().unwrap();
            Ok(())
        }
    }

    /// Room no test fills.
    pub(crate) const ROOMY: Room = Room {
        lines: 100_000,
        bytes: usize::MAX,
    };

    /// A writing thread with `room` whose output is stalled, holding one line: the writer, its
    /// guard, the gate's lock (drop it to open) and the output.
    pub(crate) fn stalled(
        room: Room,
    ) -> (
        ThreadWriter,
        WriterGuard,
        std::sync::MutexGuard<'static, ()>,
        Captured,
    ) {
        let gate: &'static Arc<Mutex<()>> = Box::leak(Box::new(Arc::new(Mutex::new(()))));
        let waiting = Arc::new(AtomicBool::new(false));
        let out = Captured::default();
        let closed = gate.lock().unwrap();
        let (writer, guard) = ThreadWriter::spawn(
            Gated {
                gate: gate.clone(),
                waiting: waiting.clone(),
                out: out.clone(),
            },
            room,
        )
        .unwrap();
        writer.write_line(b"held\n");
        let started = Instant::now();
        while !waiting.load(Ordering::SeqCst) {
            assert!(started.elapsed() < Duration::from_secs(5), "never stalled");
            std::thread::sleep(Duration::from_millis(1));
        }
        (writer, guard, closed, out)
    }

    /// Hands `lines` to a writer with `room` while its output is stalled, then lets it write:
    /// how many lines were dropped meanwhile, and what was written in the end.
    fn through_a_stall(room: Room, lines: &[&str]) -> (usize, String) {
        let (writer, guard, closed, out) = stalled(room);
        for line in lines {
            writer.write_line(line.as_bytes());
        }
        let dropped = writer.dropped().lines();
        drop(closed);
        drop(guard);
        (dropped, out.text())
    }

    #[test]
    fn lines_beyond_the_limit_are_counted_dropped_while_the_output_is_stalled() {
        let lines: Vec<String> = (0..20).map(|n| format!("{n}\n")).collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        // The buffer holds four; the thread waits at the gate with the first line.
        assert_eq!(
            through_a_stall(Room { lines: 4, ..ROOMY }, &lines),
            (16, "held\n0\n1\n2\n3\n".into())
        );
    }

    #[test]
    fn lines_beyond_the_bytes_of_room_are_counted_dropped_while_the_output_is_stalled() {
        // 5 + 6 bytes would not fit in 10: dropped, however few the lines; a shorter one fits.
        assert_eq!(
            through_a_stall(
                Room { bytes: 10, ..ROOMY },
                &["four\n", "seven\n", "two\n", "x\n"]
            ),
            (2, "held\nfour\ntwo\n".into())
        );
    }

    #[test]
    fn a_stalled_output_holds_the_guard_no_longer_than_the_shutdown_wait() {
        let (writer, guard, _closed, _out) = stalled(Room { lines: 4, ..ROOMY });
        for n in 0..4 {
            writer.write_line(format!("{n}\n").as_bytes());
        }
        let started = Instant::now();
        drop(guard);
        let waited = started.elapsed();
        assert!(
            waited >= SHUTDOWN_WAIT && waited < SHUTDOWN_WAIT * 3,
            "waited {waited:?}"
        );
    }
}

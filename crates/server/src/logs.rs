//! Logging setup: the filter (`RUST_LOG`, default `info,rustls=error`), the format
//! (`ROASTERY_LOG_FORMAT`: `pretty` or `json`) and the writer.
//!
//! Every request writes one line, so this is on the path of every request and is kept cheap:
//!
//! - A request is not a `tracing` span: the HTTP layer makes the request current on the thread
//!   that works for it ([`request_context`]), and a line written meanwhile carries the request as
//!   its `span` object (`"span":{"request_id":…,…,"name":"request"}`), the same text a span named
//!   `request` with those fields gave. Within a request, the request is the line's span even
//!   where a `tracing` span is entered too, so that every line of a request names it. A span is
//!   registered, entered and left through the registry on every poll of the request and its
//!   fields formatted as recorded: measured, that was most of what logging cost a request
//!   (`docs/performance.md`, "The request log line").
//! - JSON lines are written by [`JsonLayer`]. Outside a request, the current span's fields are
//!   formatted once, as JSON members, when the span is created or a field is recorded (a recorded
//!   field is appended; one recorded again replaces its old member in place), and an event copies
//!   them into its line as they are. (The `json()` format of `tracing-subscriber` parses and
//!   re-serializes a span's fields on every `record` and on every event.) The line is built in a
//!   buffer of the thread, so a request allocates nothing for its log line (the writer copies it
//!   into a buffer it reuses). Strings and the timestamp are written by [`crate::log_text`], which
//!   takes the short way for text with nothing to escape and for a second already formatted.
//! - `roastery serve` writes through a thread of its own ([`crate::log_writer`]): a request hands
//!   its line over and goes on; the thread writes the lines to standard error in batches. When
//!   standard error does not keep up (a stalled collector or terminal), up to [`BUFFERED_LINES`]
//!   lines ([`BUFFERED_BYTES`] at most) wait in memory and beyond that lines are dropped rather
//!   than requests delayed, and the next line written says how many were dropped. The returned
//!   [`LogGuard`] lives as long as the process: dropping it (at the end of `main`) writes out every
//!   line still waiting. Other commands run once and may end with `exit`, so they write to
//!   standard error directly.
//!
//! `pretty` lines are formatted by `tracing-subscriber`'s own format, with the current request
//! written as its span would be ([`PrettyLines`]); they go through the same writer.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::io::{self, Write as _};
use std::sync::atomic::{AtomicUsize, Ordering};

use roastery_adapters_http::request_context::{self, RequestContext};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Subscriber};
use tracing_log::NormalizeEvent;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Registry;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, MakeWriter};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::LogFormat;
use crate::log_text::{Escaped, push_json_str, push_now};
use crate::log_writer::{Dropped, Room, ThreadWriter, WriterGuard};

/// The filter when `RUST_LOG` is unset. rustls warns for every client that sends an IP address as
/// SNI; that is the client's quirk.
pub const DEFAULT_FILTER: &str = "info,rustls=error";

/// Lines that may wait for standard error before lines are dropped: about 6 MiB of request lines,
/// over a second of a busy server's lines.
pub const BUFFERED_LINES: usize = 16_384;

/// Bytes that may wait for standard error before lines are dropped: room for the lines above at
/// their usual length, and a bound on memory however long lines are.
pub const BUFFERED_BYTES: usize = 16 * 1024 * 1024;

/// Span texts kept for reuse per thread.
const POOLED_SPANS: usize = 64;

/// Capacity of a new span text: a request's fields fit without growing it.
const SPAN_CAPACITY: usize = 384;

/// Keeps the writing thread of the logs; dropping it writes out the lines still waiting.
#[must_use = "dropping the guard stops the writing of log lines"]
pub struct LogGuard {
    _worker: Option<WriterGuard>,
}

/// Where log lines go: standard error directly, or a writing thread.
#[derive(Clone)]
pub enum LineWriter {
    Stderr,
    Thread(ThreadWriter),
}

impl LineWriter {
    /// A writing thread over `out`, lossy beyond [`BUFFERED_LINES`] waiting lines or
    /// [`BUFFERED_BYTES`]; its guard writes out the waiting lines when dropped.
    pub fn thread(out: impl io::Write + Send + 'static) -> io::Result<(Self, WriterGuard)> {
        let room = Room {
            lines: BUFFERED_LINES,
            bytes: BUFFERED_BYTES,
        };
        let (writer, guard) = ThreadWriter::spawn(out, room)?;
        Ok((Self::Thread(writer), guard))
    }

    fn dropped(&self) -> Option<Dropped> {
        match self {
            Self::Stderr => None,
            Self::Thread(writer) => Some(writer.dropped()),
        }
    }

    fn write_line(&self, line: &[u8]) {
        match self {
            // A log line that cannot be written has nowhere else to go.
            Self::Stderr => {
                let _ = io::stderr().lock().write_all(line);
            }
            Self::Thread(writer) => writer.write_line(line),
        }
    }
}

/// For `tracing-subscriber`'s own format, which writes each line with one `write_all`.
impl io::Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_line(buf);
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write_line(buf);
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stderr => io::stderr().flush(),
            Self::Thread(_) => Ok(()),
        }
    }
}

impl<'a> MakeWriter<'a> for LineWriter {
    type Writer = LineWriter;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Installs the process's logging: `format` resolved against whether standard error is a
/// terminal, through a writing thread when `threaded` (for `serve`). Keep the guard until exit.
pub fn init(format: Option<LogFormat>, threaded: bool) -> anyhow::Result<LogGuard> {
    use std::io::IsTerminal;
    let terminal = io::stderr().is_terminal();
    let (writer, worker) = if threaded {
        let (writer, guard) = LineWriter::thread(io::stderr())?;
        (writer, Some(guard))
    } else {
        (LineWriter::Stderr, None)
    };
    let filter = filter(std::env::var("RUST_LOG").ok().as_deref());
    let registry = tracing_subscriber::registry().with(filter);
    match LogFormat::resolve(format, terminal) {
        LogFormat::Json => registry.with(JsonLayer::new(writer)).try_init()?,
        LogFormat::Pretty => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_ansi(terminal)
                    .event_format(PrettyLines::default())
                    .with_writer(writer),
            )
            .try_init()?,
    }
    Ok(LogGuard { _worker: worker })
}

/// The filter of `RUST_LOG` (the default when unset or not valid). Directives of targets and
/// levels only (`info,rustls=error`) need no more than [`Targets`], which decides once per call
/// site; [`EnvFilter`] (span and field directives) also takes a shared lock on every entry to and
/// exit from a span, several times a request, so it is used only when `RUST_LOG` needs it.
pub fn filter(rust_log: Option<&str>) -> Box<dyn Layer<Registry> + Send + Sync> {
    let default = || -> Box<dyn Layer<Registry> + Send + Sync> {
        match DEFAULT_FILTER.parse::<Targets>() {
            Ok(targets) => Box::new(targets),
            Err(_) => Box::new(EnvFilter::new(DEFAULT_FILTER)),
        }
    };
    let Some(directives) = rust_log else {
        return default();
    };
    // Span and field directives are the ones in brackets (`[request]=debug`).
    let targets_only = !directives.contains(['[', '{']);
    match directives.parse::<Targets>() {
        Ok(targets) if targets_only => Box::new(targets),
        _ => match EnvFilter::try_new(directives) {
            Ok(filter) => Box::new(filter),
            Err(_) => default(),
        },
    }
}

/// One JSON object per line, as `tracing-subscriber`'s `json()` with the current span writes it:
/// `{"timestamp":…,"level":…,"fields":{"message":…,…},"target":…,"span":{…,"name":…}}`.
pub struct JsonLayer {
    writer: LineWriter,
    dropped: Option<Dropped>,
    /// Dropped lines already reported.
    reported: AtomicUsize,
    /// Reports that were dropped themselves: not lines of the program.
    own: AtomicUsize,
}

impl JsonLayer {
    pub fn new(writer: LineWriter) -> Self {
        Self {
            dropped: writer.dropped(),
            writer,
            reported: AtomicUsize::new(0),
            own: AtomicUsize::new(0),
        }
    }

    /// When lines were dropped since the last report, writes a line saying how many (and counts
    /// them reported only when that line itself got through).
    fn report_dropped(&self, line: &mut String) {
        let Some(counter) = &self.dropped else {
            return;
        };
        let before = counter.lines();
        let dropped = before.saturating_sub(self.own.load(Ordering::Relaxed));
        let reported = self.reported.load(Ordering::Relaxed);
        if dropped <= reported {
            return;
        }
        line.clear();
        start_line(line, "WARN");
        let _ = writeln!(
            line,
            "\"fields\":{{\"message\":\"log lines dropped: standard error did not keep up\",\"dropped\":{}}},\"target\":\"{}\"}}",
            dropped - reported,
            module_path!()
        );
        self.writer.write_line(line.as_bytes());
        if counter.lines() == before {
            let _ = self.reported.compare_exchange(
                reported,
                dropped,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        } else {
            // Still no room: the report was (most likely) dropped itself; it is not counted.
            self.own.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A span's fields as JSON members, each led by a comma: `,"request_id":"abc","status":200`,
/// and which of them (by their index in the span's field set) have been written.
struct SpanFields {
    text: String,
    written: u64,
}

thread_local! {
    static SPAN_TEXTS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    static LINE: RefCell<String> = const { RefCell::new(String::new()) };
}

fn pooled_text() -> String {
    SPAN_TEXTS
        .try_with(|pool| pool.try_borrow_mut().ok().and_then(|mut p| p.pop()))
        .ok()
        .flatten()
        .unwrap_or_else(|| String::with_capacity(SPAN_CAPACITY))
}

fn give_back(mut text: String) {
    text.clear();
    let _ = SPAN_TEXTS.try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut()
            && pool.len() < POOLED_SPANS
        {
            pool.push(text);
        }
    });
}

fn start_line(line: &mut String, level: &str) {
    line.push_str("{\"timestamp\":\"");
    push_now(line);
    line.push_str("\",\"level\":\"");
    line.push_str(level);
    line.push_str("\",");
}

impl<S> Layer<S> for JsonLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut fields = SpanFields {
            text: pooled_text(),
            written: 0,
        };
        attrs.record(&mut JsonMembers::span(&mut fields));
        span.extensions_mut().insert(fields);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut extensions = span.extensions_mut();
        if let Some(fields) = extensions.get_mut::<SpanFields>() {
            values.record(&mut JsonMembers::span(fields));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(&id)
            && let Some(fields) = span.extensions_mut().remove::<SpanFields>()
        {
            give_back(fields.text);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let write = |line: &mut String| {
            self.report_dropped(line);
            line.clear();
            let normalized = event.normalized_metadata();
            let meta = normalized.as_ref().unwrap_or_else(|| event.metadata());
            start_line(line, meta.level().as_str());
            line.push_str("\"fields\":{");
            event.record(&mut JsonMembers::event(line));
            line.push_str("},\"target\":");
            push_json_str(line, meta.target());
            // A tracing span is looked up only outside a request: within one, the request is
            // the line's span.
            if let Some(request) = request_context::current() {
                push_request(line, &request);
            } else if let Some(span) = event
                .parent()
                .and_then(|id| ctx.span(id))
                .or_else(|| ctx.lookup_current())
            {
                line.push_str(",\"span\":{");
                if let Some(fields) = span.extensions().get::<SpanFields>() {
                    // The members without their leading comma, then the span's name.
                    if let Some(members) = fields.text.get(1..) {
                        line.push_str(members);
                        line.push(',');
                    }
                }
                line.push_str("\"name\":");
                push_json_str(line, span.name());
                line.push('}');
            }
            line.push_str("}\n");
            self.writer.write_line(line.as_bytes());
        };
        // A field's `Debug` that logs itself finds the thread's buffer taken: it gets its own.
        let written = LINE.try_with(|line| match line.try_borrow_mut() {
            Ok(mut line) => write(&mut line),
            Err(_) => write(&mut String::new()),
        });
        if written.is_err() {
            write(&mut String::new());
        }
    }
}

/// The request as the line's span: `,"span":{"request_id":…,"operation":…,"method":…,"path":…,
/// "client_id":…,"status":…,"latency_us":…,"name":"request"}`, the client and answer once known.
fn push_request(line: &mut String, request: &RequestContext) {
    line.push_str(",\"span\":{\"request_id\":");
    push_json_str(line, request.id());
    line.push_str(",\"operation\":");
    push_json_str(line, request.operation());
    line.push_str(",\"method\":");
    push_json_str(line, request.method());
    line.push_str(",\"path\":");
    push_json_str(line, request.path());
    if let Some(client_id) = request.client_id() {
        line.push_str(",\"client_id\":");
        push_json_str(line, client_id);
    }
    if let Some(answer) = request.answer() {
        let _ = write!(
            line,
            ",\"status\":{},\"latency_us\":{}",
            answer.status, answer.latency_us
        );
    }
    line.push_str(",\"name\":\"request\"}");
}

/// `pretty` lines: `tracing-subscriber`'s full format, with the current request written as its
/// span would be (`request{request_id="abc-1" … status=200 latency_us=887}: `) after the level.
pub struct PrettyLines {
    /// The rest of the line: spans, target and fields.
    rest: format::Format<format::Full, ()>,
    full: format::Format,
}

impl Default for PrettyLines {
    fn default() -> Self {
        Self {
            rest: format::format().without_time().with_level(false),
            full: format::format(),
        }
    }
}

impl<S, N> FormatEvent<S, N> for PrettyLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: format::Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let Some(request) = request_context::current() else {
            return self.full.format_event(ctx, writer, event);
        };
        let ansi = writer.has_ansi_escapes();
        let style = |code: &'static str| if ansi { code } else { "" };
        let (bold, dimmed, italic, reset) = (
            style("\x1b[1m"),
            style("\x1b[2m"),
            style("\x1b[3m"),
            style("\x1b[0m"),
        );
        write!(writer, "{dimmed}")?;
        if SystemTime.format_time(&mut writer).is_err() {
            writer.write_str("<unknown time>")?;
        }
        write!(writer, "{reset} ")?;
        let normalized = event.normalized_metadata();
        let level = *normalized
            .as_ref()
            .unwrap_or_else(|| event.metadata())
            .level();
        let (color, name) = match level {
            Level::TRACE => ("\x1b[35m", "TRACE"),
            Level::DEBUG => ("\x1b[34m", "DEBUG"),
            Level::INFO => ("\x1b[32m", " INFO"),
            Level::WARN => ("\x1b[33m", " WARN"),
            Level::ERROR => ("\x1b[31m", "ERROR"),
        };
        write!(writer, "{}{name}{reset} ", style(color))?;
        write!(writer, "{bold}request{{{reset}")?;
        let field = |writer: &mut format::Writer<'_>, first: bool, name: &str| {
            let space = if first { "" } else { " " };
            write!(writer, "{space}{italic}{name}{reset}{dimmed}={reset}")
        };
        field(&mut writer, true, "request_id")?;
        write!(writer, "{:?}", request.id())?;
        field(&mut writer, false, "operation")?;
        write!(writer, "{:?}", request.operation())?;
        field(&mut writer, false, "method")?;
        write!(writer, "{:?}", request.method())?;
        field(&mut writer, false, "path")?;
        write!(writer, "{:?}", request.path())?;
        if let Some(client_id) = request.client_id() {
            field(&mut writer, false, "client_id")?;
            write!(writer, "{client_id:?}")?;
        }
        if let Some(answer) = request.answer() {
            field(&mut writer, false, "status")?;
            write!(writer, "{}", answer.status)?;
            field(&mut writer, false, "latency_us")?;
            write!(writer, "{}", answer.latency_us)?;
        }
        write!(writer, "{bold}}}{reset}{dimmed}:{reset} ")?;
        self.rest.format_event(ctx, writer, event)
    }
}

/// Writes fields as JSON members (`"name":value`) into a line or a span's text.
struct JsonMembers<'a> {
    out: &'a mut String,
    /// A span's fields written so far: its members each start with a comma, and a field recorded
    /// again replaces its member. An event's members are separated by commas.
    written: Option<&'a mut u64>,
    first: bool,
}

impl<'a> JsonMembers<'a> {
    fn span(fields: &'a mut SpanFields) -> Self {
        Self {
            out: &mut fields.text,
            written: Some(&mut fields.written),
            first: true,
        }
    }

    fn event(out: &'a mut String) -> Self {
        Self {
            out,
            written: None,
            first: true,
        }
    }

    /// Starts the member of `field`; false when the field is not written.
    fn key(&mut self, field: &Field) -> bool {
        let name = field.name();
        // `log` records carry their metadata as fields; it is in the line already.
        if name.starts_with("log.") {
            return false;
        }
        let name = name.strip_prefix("r#").unwrap_or(name);
        if let Some(written) = self.written.as_deref_mut() {
            // Only a field written before is looked for (all of them past the 64th).
            let bit = u32::try_from(field.index())
                .ok()
                .and_then(|i| 1u64.checked_shl(i));
            if bit.is_none_or(|bit| *written & bit != 0)
                && let Some(old) = find_member(self.out, name)
            {
                self.out.replace_range(old, "");
            }
            *written |= bit.unwrap_or(0);
            self.out.push(',');
        } else if !self.first {
            self.out.push(',');
        }
        self.first = false;
        push_json_str(self.out, name);
        self.out.push(':');
        true
    }
}

impl Visit for JsonMembers<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if self.key(field) {
            push_json_str(self.out, value);
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.key(field) {
            let _ = write!(self.out, "{value}");
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if self.key(field) {
            let _ = write!(self.out, "{value}");
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        if self.key(field) {
            self.out.push_str(if value { "true" } else { "false" });
        }
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if self.key(field) {
            if value.is_finite() {
                let _ = write!(self.out, "{value}");
            } else {
                self.out.push_str("null");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.key(field) {
            self.out.push('"');
            let _ = write!(Escaped(self.out), "{value:?}");
            self.out.push('"');
        }
    }
}

/// The byte range of the member named `name` in a span's text (`,"name":value`).
fn find_member(text: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    // A `"` right after a comma is never escaped, and never a string's closing quote followed
    // by a name: it opens a member.
    let at = text.match_indices(name).map(|(at, _)| at).find(|&at| {
        at >= 2
            && bytes.get(at - 2..at) == Some(&b",\""[..])
            && bytes.get(at + name.len()..at + name.len() + 2) == Some(&b"\":"[..])
    })?;
    let value = at + name.len() + 2;
    let end = if bytes.get(value) == Some(&b'"') {
        let mut i = value + 1;
        loop {
            match bytes.get(i) {
                Some(b'\\') => i += 2,
                Some(b'"') => break i + 1,
                Some(_) => i += 1,
                None => break bytes.len(),
            }
        }
    } else {
        bytes
            .get(value..)
            .and_then(|rest| rest.iter().position(|&b| b == b','))
            .map_or(bytes.len(), |n| value + n)
    };
    Some(at - 2..end.min(bytes.len()))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use actix_web::http::Method;
    use actix_web::http::header::HeaderValue;
    use roastery_adapters_http::request_context::Answer;
    use serde_json::Value;

    use super::*;

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn lines(&self) -> Vec<Value> {
            let bytes = self.0.lock().unwrap().clone();
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect()
        }
    }

    /// Runs `work` with JSON logs at the default level through a writing thread into a buffer;
    /// the lines once the thread wrote them all out.
    fn json_logs(work: impl FnOnce()) -> Vec<Value> {
        let out = Captured::default();
        let (writer, guard) = LineWriter::thread(out.clone()).unwrap();
        let subscriber = tracing_subscriber::registry()
            .with(filter(None))
            .with(JsonLayer::new(writer));
        tracing::subscriber::with_default(subscriber, work);
        // Flushes: every line handed over is written before the guard is gone.
        drop(guard);
        out.lines()
    }

    fn context(id: &str) -> Arc<RequestContext> {
        RequestContext::new(
            HeaderValue::from_str(id).unwrap(),
            "inventory.green.listGreenLots",
            Method::POST,
            "/rpc/v1/inventory.green.listGreenLots",
        )
    }

    /// What the HTTP layer does for a request.
    fn request(id: &str, client: &str, status: u16) {
        let request = context(id);
        {
            let _in = request.enter();
            request_context::record_client(client);
        }
        request.answered(Answer {
            status,
            latency_us: 1234,
        });
        let _in = request.enter();
        tracing::info!("request");
    }

    /// Runs `work` with `pretty` logs (no colours) into a buffer; the text written.
    fn pretty_logs(work: impl FnOnce()) -> String {
        let out = Captured::default();
        let (writer, guard) = LineWriter::thread(out.clone()).unwrap();
        let subscriber = tracing_subscriber::registry().with(filter(None)).with(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .event_format(PrettyLines::default())
                .with_writer(writer),
        );
        tracing::subscriber::with_default(subscriber, work);
        drop(guard);
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn one_line_per_request_with_its_fields_through_the_writing_thread() {
        let lines = json_logs(|| {
            for n in 0..1000 {
                request(&format!("req-{n}"), "rc-1", 200);
            }
            tracing::debug!("below the default level");
        });
        assert_eq!(lines.len(), 1000);
        for (n, line) in lines.iter().enumerate() {
            assert_eq!(line["level"], "INFO");
            assert_eq!(line["fields"]["message"], "request");
            assert_eq!(line["target"], module_path!());
            assert!(line["timestamp"].as_str().unwrap().ends_with('Z'), "{line}");
            let span = &line["span"];
            assert_eq!(span["request_id"], format!("req-{n}"));
            assert_eq!(span["operation"], "inventory.green.listGreenLots");
            assert_eq!(span["method"], "POST");
            assert_eq!(span["path"], "/rpc/v1/inventory.green.listGreenLots");
            assert_eq!(span["client_id"], "rc-1");
            assert_eq!(span["status"], 200);
            assert_eq!(span["latency_us"], 1234);
            assert_eq!(span["name"], "request");
        }
    }

    #[test]
    fn every_line_inside_the_span_names_the_request_and_fields_are_escaped() {
        let lines = json_logs(|| {
            let span = tracing::info_span!("request", request_id = "abc-1", status = 1u16);
            let _in = span.enter();
            tracing::warn!(
                error = %"quote \" backslash \\ newline \n tab \t bell \u{7}",
                r#type = "kind",
                count = -3i64,
                ratio = 0.5f64,
                ok = true,
                "store \"unavailable\""
            );
            // Recorded again: the new value replaces the old one.
            span.record("status", 503u16);
            tracing::error!(detail = ?Some("x,\"status\":9"), "internal error");
        });
        assert_eq!(lines.len(), 2, "{lines:?}");
        let first = &lines[0];
        assert_eq!(first["level"], "WARN");
        assert_eq!(first["span"]["request_id"], "abc-1");
        assert_eq!(first["span"]["status"], 1);
        let fields = &first["fields"];
        assert_eq!(fields["message"], "store \"unavailable\"");
        assert_eq!(
            fields["error"],
            "quote \" backslash \\ newline \n tab \t bell \u{7}"
        );
        assert_eq!(fields["type"], "kind");
        assert_eq!(fields["count"], -3);
        assert_eq!(fields["ratio"], 0.5);
        assert_eq!(fields["ok"], true);
        let second = &lines[1];
        assert_eq!(second["span"]["request_id"], "abc-1");
        assert_eq!(second["span"]["status"], 503);
        assert_eq!(second["fields"]["detail"], "Some(\"x,\\\"status\\\":9\")");
    }

    #[test]
    fn a_line_of_a_request_before_its_answer_names_it_on_any_thread() {
        let lines = json_logs(|| {
            let request = context("early-1");
            let _in = request.enter();
            tracing::warn!("before authentication");
            request_context::record_client("rc-7");
            // Work on a blocking thread, as the HTTP layer hands it the request.
            let carried = request_context::current();
            let dispatch = tracing::dispatcher::get_default(|d| d.clone());
            std::thread::spawn(move || {
                tracing::dispatcher::with_default(&dispatch, || {
                    let _in = request_context::Entered::new(carried);
                    tracing::error!(detail = "x\"y", "store unavailable");
                })
            })
            .join()
            .unwrap();
            // A span inside a request does not hide the request.
            tracing::info_span!("inner", n = 1).in_scope(|| tracing::info!("in a span"));
        });
        assert_eq!(lines.len(), 3, "{lines:?}");
        for line in &lines {
            let span = &line["span"];
            assert_eq!(span["request_id"], "early-1", "{line}");
            assert_eq!(span["operation"], "inventory.green.listGreenLots");
            assert_eq!(span["name"], "request");
            assert!(span.get("status").is_none(), "{line}");
            assert!(span.get("latency_us").is_none(), "{line}");
        }
        assert!(lines[0]["span"].get("client_id").is_none(), "{}", lines[0]);
        assert_eq!(lines[1]["span"]["client_id"], "rc-7");
        assert_eq!(lines[1]["level"], "ERROR");
        assert_eq!(lines[1]["fields"]["detail"], "x\"y");
        assert_eq!(lines[2]["fields"]["message"], "in a span");
    }

    #[test]
    fn the_request_line_is_the_text_a_request_span_gave() {
        let out = Captured::default();
        let (writer, guard) = LineWriter::thread(out.clone()).unwrap();
        let subscriber = tracing_subscriber::registry().with(JsonLayer::new(writer));
        tracing::subscriber::with_default(subscriber, || {
            request("same-1", "rc-1", 201);
            request_in_a_span("same-1", "rc-1", 201);
        });
        drop(guard);
        let raw = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = raw
            .lines()
            .map(|l| l.split_once(",\"level\"").unwrap().1)
            .collect();
        assert_eq!(lines.len(), 2, "{raw}");
        assert_eq!(lines[0], lines[1]);
        assert!(
            lines[0].ends_with(r#""span":{"request_id":"same-1","operation":"inventory.green.listGreenLots","method":"POST","path":"/rpc/v1/inventory.green.listGreenLots","client_id":"rc-1","status":201,"latency_us":1234,"name":"request"}}"#),
            "{raw}"
        );
    }

    /// The span the HTTP layer made before requests had a context of their own, and its line.
    fn request_in_a_span(id: &str, client: &str, status: u16) {
        let span = tracing::info_span!(
            "request",
            request_id = id,
            operation = "inventory.green.listGreenLots",
            method = "POST",
            path = "/rpc/v1/inventory.green.listGreenLots",
            client_id = tracing::field::Empty,
            status = tracing::field::Empty,
            latency_us = tracing::field::Empty,
        );
        span.record("client_id", client);
        span.record("status", status);
        span.record("latency_us", 1234u64);
        span.in_scope(|| tracing::info!("request"));
    }

    #[test]
    fn pretty_lines_name_the_request_as_its_span_did() {
        let text = pretty_logs(|| {
            request("pretty-1", "rc-1", 200);
            request_in_a_span("pretty-1", "rc-1", 200);
            tracing::info!(port = 8443u16, "listening");
        });
        let lines: Vec<(&str, &str)> = text.lines().map(|l| l.split_once(' ').unwrap()).collect();
        assert_eq!(lines.len(), 3, "{text}");
        for (time, _) in &lines {
            assert!(chrono::DateTime::parse_from_rfc3339(time).is_ok(), "{time}");
        }
        assert_eq!(
            lines[0].1,
            r#" INFO request{request_id="pretty-1" operation="inventory.green.listGreenLots" method="POST" path="/rpc/v1/inventory.green.listGreenLots" client_id="rc-1" status=200 latency_us=1234}: roastery_server::logs::tests: request"#
        );
        assert_eq!(lines[0].1, lines[1].1);
        assert_eq!(
            lines[2].1,
            " INFO roastery_server::logs::tests: listening port=8443"
        );
    }

    #[test]
    fn a_line_outside_any_span_has_no_span() {
        let lines = json_logs(|| tracing::info!(port = 8443u16, "listening"));
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0]["fields"]["port"], 8443);
        assert!(lines[0].get("span").is_none(), "{}", lines[0]);
    }

    #[test]
    fn a_member_is_found_only_where_it_starts() {
        let text = r#","a":"x,\"b\":1","b":22,"c":"\\","bb":true"#;
        let b = find_member(text, "b").unwrap();
        assert_eq!(&text[b], r#","b":22"#);
        let c = find_member(text, "c").unwrap();
        assert_eq!(&text[c], r#","c":"\\""#);
        let bb = find_member(text, "bb").unwrap();
        assert_eq!(&text[bb], r#","bb":true"#);
        assert!(find_member(text, "x").is_none());
    }

    #[test]
    fn dropped_lines_are_reported_once_there_is_room() {
        // The output stalls: the thread waits with one line, the queue holds four more.
        let (writer, guard, closed, out) = crate::log_writer::tests::stalled(Room {
            lines: 4,
            ..crate::log_writer::tests::ROOMY
        });
        let layer = JsonLayer::new(LineWriter::Thread(writer));
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            for n in 0..20 {
                tracing::info!(n, "line");
            }
            drop(closed);
            // Let the thread drain the queue.
            std::thread::sleep(std::time::Duration::from_millis(200));
            tracing::info!("after");
        });
        drop(guard);
        let text = out.text();
        let lines: Vec<Value> = text
            .lines()
            .skip(1)
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let report = lines
            .iter()
            .find(|l| l["fields"]["dropped"].is_u64())
            .unwrap_or_else(|| panic!("no report in {lines:?}"));
        assert_eq!(report["level"], "WARN");
        assert_eq!(report["fields"]["dropped"], 16);
        let counted = lines
            .iter()
            .filter(|l| l["fields"]["message"] == "line")
            .count();
        assert_eq!(counted, 4);
        assert_eq!(lines.last().unwrap()["fields"]["message"], "after");
    }
}

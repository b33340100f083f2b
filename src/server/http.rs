//! Answers on the wire: response builders, the Host check made from a request's head,
//! and the writing of answers (big ones off the loop, all of them paced).

use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tiny_http::{Header, Method, Request, Response, StatusCode};

use crate::api::{Answer, ApiError};

/// An answer must go out at this rate on average once `PACE_GRACE` has passed, or it
/// is dropped: a slow reader must not hold up the loop for everyone else.
const MIN_RATE: u64 = 1 << 20;
const PACE_GRACE: Duration = Duration::from_secs(2);
/// Answers bigger than this are written by a thread of their own, at most
/// `MAX_WRITERS` at once (beyond that, in the loop, still paced).
const INLINE_WRITE: usize = 256 << 10;
const MAX_WRITERS: usize = 8;
static WRITERS: AtomicUsize = AtomicUsize::new(0);

pub(super) fn header(name: &str, value: &str) -> Header {
    // Only called with ASCII names and values built here.
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

pub(super) fn json_response(
    status: u16,
    v: &serde_json::Value,
    cors: bool,
) -> Response<Box<dyn Read + Send>> {
    json_bytes(status, serde_json::to_vec(v).unwrap_or_default(), cors)
}

pub(super) fn json_bytes(status: u16, body: Vec<u8>, cors: bool) -> Response<Box<dyn Read + Send>> {
    json_body(status, body.into(), cors)
}

/// An API answer (CORS allowed: the profiler's page runs on another origin).
pub(super) fn json_answer(status: u16, body: Answer) -> Response<Box<dyn Read + Send>> {
    json_body(status, body, true)
}

fn json_body(status: u16, body: Answer, cors: bool) -> Response<Box<dyn Read + Send>> {
    let len = body.len();
    let mut r = Response::new(
        StatusCode(status),
        vec![header("Content-Type", "application/json; charset=UTF-8")],
        paced(body.into_reader()),
        Some(len),
        None,
    )
    // The length is known: no chunked framing (an extra copy of every byte).
    .with_chunked_threshold(usize::MAX);
    if cors {
        r.add_header(header("Access-Control-Allow-Origin", "*"));
    }
    r
}

pub(super) fn error_response(e: &ApiError) -> Response<Box<dyn Read + Send>> {
    json_response(e.status(), &e.to_json(), true)
}

/// Longest panic message a 500 answer carries.
const PANIC_SHOWN: usize = 300;

/// The body of the 500 answer to a request whose handling panicked: the panic's message
/// itself (its first 300 characters, the secret `token` masked), since the server's stderr
/// may be nowhere to read (under mach it is a closed pipe).
pub(super) fn panic_body(payload: &(dyn std::any::Any + Send), token: &str) -> Value {
    let mut why = crate::resolve::panic_message(payload);
    if !token.is_empty() {
        why = why.replace(token, "…");
    }
    let why: String = why.chars().take(PANIC_SHOWN).collect();
    json!({ "error": format!("internal error while answering this request: {why}") })
}

pub(super) fn panic_response(
    payload: &(dyn std::any::Any + Send),
    token: &str,
) -> Response<Box<dyn Read + Send>> {
    json_response(500, &panic_body(payload, token), true)
}

pub(super) fn preflight(request: &Request) -> Response<Box<dyn Read + Send>> {
    let get = |name: &'static str| {
        request
            .headers()
            .iter()
            .find(|h| h.field.equiv(name))
            .map(|h| h.value.as_str().to_string())
    };
    let mut r = Response::new(
        StatusCode(204),
        vec![header("Access-Control-Allow-Origin", "*")],
        Box::new(std::io::empty()) as Box<dyn Read + Send>,
        Some(0),
        None,
    );
    if get("Access-Control-Request-Method").is_some() {
        r.add_header(header("Access-Control-Allow-Methods", "POST, GET, OPTIONS"));
        r.add_header(header("Access-Control-Max-Age", "86400"));
        if let Some(h) = get("Access-Control-Request-Headers")
            && let Ok(h) =
                Header::from_bytes("Access-Control-Allow-Headers".as_bytes(), h.as_bytes())
        {
            r.add_header(h);
        }
    }
    r
}

/// Writes an answer. A big one is written by a thread of its own: a client that reads it
/// slowly (or not at all) must not hold up the loop. Small ones fit the socket buffers.
pub(super) fn send(request: Request, response: Response<Box<dyn Read + Send>>, path: &str) {
    let big = response.data_length().is_none_or(|n| n > INLINE_WRITE);
    if big && WRITERS.fetch_add(1, Ordering::SeqCst) < MAX_WRITERS {
        let path = path.to_string();
        let spawned = std::thread::Builder::new().spawn(move || {
            if let Err(e) = request.respond(response) {
                crate::log::elog!("warning: sending a response to {path} failed: {e}");
            }
            WRITERS.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            WRITERS.fetch_sub(1, Ordering::SeqCst);
        }
        return;
    }
    if big {
        WRITERS.fetch_sub(1, Ordering::SeqCst);
    }
    if let Err(e) = request.respond(response) {
        crate::log::elog!("warning: sending a response to {path} failed: {e}");
    }
}

/// One line of the request log (stderr): method, path without the token, status, bytes
/// in and out, time since the request arrived. Failures show like successes.
pub(super) fn log_request(
    request: &Request,
    path: &str,
    response: &Response<Box<dyn Read + Send>>,
    bytes_in: usize,
    started: Instant,
    note: &str,
) {
    let out = response
        .data_length()
        .map_or_else(|| "streamed".to_string(), |n| n.to_string());
    crate::log::elog!(
        "{} {path} {}: {bytes_in} bytes in, {out} out, {:.0} ms{note}",
        request.method(),
        response.status_code().0,
        started.elapsed().as_secs_f64() * 1000.0
    );
}

/// The answer to a request whose `Host` is not this server's (DNS rebinding), decided
/// from its head alone: its body is never read. Allowed: the names in `allowed`, and the
/// address the client connected to (`local`), which is what a browser sends for a URL
/// with that address; a rebinding page sends its own DNS name instead.
pub(super) fn host_refusal(
    headers: &[Header],
    allowed: &[String],
    local: Option<std::net::SocketAddr>,
) -> Option<tiny_http::Refusal> {
    let ok = headers
        .iter()
        .find(|h| h.field.equiv("Host"))
        .is_some_and(|h| {
            let host = h.value.as_str().to_ascii_lowercase();
            allowed.contains(&host)
                || local.is_some_and(|l| super::addresses::of_connection(l).contains(&host))
        });
    (!ok).then(|| {
        (
            403,
            br#"{"error": "this Host is not allowed (DNS rebinding protection)"}"#.to_vec(),
        )
    })
}

/// The answer to a request outside the token prefix, decided from its head alone: its
/// body is never read. `GET /` (the page saying what this is) passes when it has no body.
pub(super) fn path_refusal(
    method: &Method,
    url: &str,
    headers: &[Header],
    token: &str,
) -> Option<tiny_http::Refusal> {
    let path = url.split(['?', '#']).next().unwrap_or("");
    if super::token::under_token(path, token).is_some() {
        return None;
    }
    let body = headers.iter().any(|h| {
        h.field.equiv("Transfer-Encoding")
            || (h.field.equiv("Content-Length") && h.value.as_str().trim() != "0")
    });
    match (path == "/" && *method == Method::Get, body) {
        (true, false) => None,
        (true, true) => Some((413, br#"{"error": "this path takes no body"}"#.to_vec())),
        (false, _) => Some((404, br#"{"error": "not found"}"#.to_vec())),
    }
}

/// The body, read whole already by the connection's thread.
pub(super) fn read_body(request: &mut Request) -> Result<Vec<u8>, ApiError> {
    // The announced length (at most MAX_BODY, or it was refused): no doubling as it grows.
    let len = request
        .body_length()
        .unwrap_or(0)
        .min(super::MAX_BODY as usize);
    let mut body = Vec::with_capacity(len);
    request
        .as_reader()
        .read_to_end(&mut body)
        .map_err(|e| ApiError::bad_request(format!("reading the request body failed: {e}")))?;
    Ok(body)
}

/// An answer's bytes, given out no slower than [`MIN_RATE`] on average after
/// [`PACE_GRACE`]; past that the answer fails and its connection is dropped.
struct Paced<R> {
    inner: R,
    started: Instant,
    sent: u64,
}

impl<R: Read> Read for Paced<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let elapsed = self.started.elapsed();
        if elapsed > PACE_GRACE && self.sent < MIN_RATE * elapsed.as_secs() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client reads too slowly",
            ));
        }
        let n = self.inner.read(buf)?;
        self.sent += n as u64;
        Ok(n)
    }
}

pub(super) fn paced<R: Read + Send + 'static>(inner: R) -> Box<dyn Read + Send> {
    Box::new(Paced {
        inner,
        started: Instant::now(),
        sent: 0,
    })
}

pub(super) fn index_page(profiler_url: &str) -> Response<Box<dyn Read + Send>> {
    // No token here: any page on the machine may fetch this one.
    let html = format!(
        "<!DOCTYPE html><meta charset=utf-8><title>profiler-symbol-server</title>\
         <p>This is profiler-symbol-server. Open the profile with the link it printed in your \
         terminal; that link carries this server's secret address.</p>\
         <p>Front-end: <a href=\"{0}\">{0}</a></p>",
        profiler_url.replace('"', "%22").replace('<', "%3C")
    );
    let len = html.len();
    Response::new(
        StatusCode(200),
        vec![header("Content-Type", "text/html; charset=UTF-8")],
        Box::new(std::io::Cursor::new(html.into_bytes())) as Box<dyn Read + Send>,
        Some(len),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_500_body_carries_the_panic_message_without_the_token() {
        let token = "s3cr3tt0k3n";
        let payload: Box<dyn std::any::Any + Send> = Box::new(format!(
            "index out of bounds at /{token}/symbolicate/v5: the len is 3 but the index is 7"
        ));
        let body = panic_body(&*payload, token);
        let error = body["error"].as_str().unwrap();
        assert!(error.starts_with("internal error while answering this request: "));
        assert!(error.contains("the len is 3 but the index is 7"), "{error}");
        assert!(!error.contains(token), "{error}");
        assert!(!error.contains("stderr"), "{error}");
        // A `&str` payload (`panic!("literal")`) too; a long one is cut.
        let payload: Box<dyn std::any::Any + Send> = Box::new("boom");
        assert!(
            panic_body(&*payload, token)["error"]
                .as_str()
                .unwrap()
                .ends_with(": boom")
        );
        let payload: Box<dyn std::any::Any + Send> = Box::new("é".repeat(1000));
        let error = panic_body(&*payload, token)["error"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(error.matches('é').count(), PANIC_SHOWN);
        let payload: Box<dyn std::any::Any + Send> = Box::new(42u32);
        assert!(
            panic_body(&*payload, token)["error"]
                .as_str()
                .unwrap()
                .ends_with("unknown panic")
        );
    }

    #[test]
    fn api_error_kinds_have_their_status() {
        assert_eq!(ApiError::bad_request("x").status(), 400);
        assert_eq!(ApiError::not_found("x").status(), 404);
        assert_eq!(ApiError::internal("x").status(), 500);
    }
}

//! The server loop: one blocking `tiny_http` loop serving the profile and the API under a
//! secret path prefix.

use std::fmt;
use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tiny_http::{Method, Request, Response, StatusCode};

use crate::api::{Api, ApiError, Handled};
use crate::cli::{PortSpec, ServerOptions};
use crate::profile::ProfileFile;

mod addresses;
mod browser;
mod http;
mod parked;
mod token;

pub use browser::open_browser;
pub use token::{random_bytes, random_token};

use http::{
    error_response, header, host_refusal, index_page, json_answer, json_response, log_request,
    paced, path_refusal, preflight, read_body, send,
};

/// Quiet this long after a request: the front-end's burst of symbolication requests is
/// over, and the grouped advice about modules without debug info is said.
const ADVICE_AFTER: std::time::Duration = std::time::Duration::from_millis(300);

/// Largest request body accepted (413 beyond, the body left unread).
pub const MAX_BODY: u64 = 64 << 20;
/// Bodies being read or waiting to be answered, all connections together (503 beyond,
/// the body left unread): four bodies at the limit, not 128.
const BODIES_IN_FLIGHT: u64 = 256 << 20;
/// Bodies this small are not counted against `BODIES_IN_FLIGHT` (128 connections hold
/// 128 MiB of them at most): the front-end's requests go through while big ones queue.
const UNCOUNTED_BODY: u64 = 1 << 20;
/// Open connections at most: with two descriptors each, far below the usual limit of
/// 1024; a new one at the cap closes the one idle longest.
const MAX_CONNECTIONS: usize = 128;
/// A request's head and body must arrive within this long, however they trickle.
const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// A single write may block this long; a client that does not read loses its answer.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest request line or header line, and most header lines.
const MAX_LINE: usize = 16 << 10;
const MAX_HEADERS: usize = 100;

#[derive(Debug)]
pub struct ServerError(pub String);

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn percent_encode(s: &str) -> String {
    crate::shared::pathname::percent_encode(s, crate::shared::pathname::UNRESERVED)
}

fn bind(address: IpAddr, port: PortSpec) -> Result<TcpListener, ServerError> {
    let fail = |p: u16, e: std::io::Error| {
        ServerError(format!(
            "cannot listen on {}: {e}",
            SocketAddr::new(address, p)
        ))
    };
    match port {
        PortSpec::Exact(p) => TcpListener::bind((address, p)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                ServerError(format!(
                    "cannot listen on {}: the port is taken; use -P 0 (any free port) or -P {p}+ (the first free one from {p})",
                    SocketAddr::new(address, p)
                ))
            } else {
                fail(p, e)
            }
        }),
        PortSpec::From(first) => {
            let mut last_err = None;
            for p in first..=u16::MAX {
                match TcpListener::bind((address, p)) {
                    Ok(l) => return Ok(l),
                    Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => last_err = Some(e),
                    Err(e) => return Err(fail(p, e)),
                }
            }
            Err(ServerError(format!(
                "no free port on {address} from {first} up ({})",
                last_err.map_or("none tried".into(), |e| e.to_string())
            )))
        }
    }
}

/// What `under_prefix` makes of a request.
enum Served {
    Response(Response<Box<dyn Read + Send>>),
    /// The answer waits for downloads: the request is kept and answered from the loop.
    Park {
        api_path: String,
        parsed: crate::api::Parsed,
        body_len: usize,
    },
}

pub struct Server {
    http: tiny_http::Server,
    token: String,
    local: SocketAddr,
    /// `host:port` of the printed URLs.
    url_host: String,
    profile: Option<ProfileFile>,
    api: Api,
    profiler_url: String,
    quiet: bool,
    /// Requests waiting for downloads.
    parked: parked::Parking,
    /// Bytes of the body of the request being served (for its log line).
    body_in: usize,
    /// The request log's note on the request being served.
    note: &'static str,
    /// Whether idle-time work may run (`api/idle.rs`): from the start when a browser is
    /// opened (it takes seconds to load the front-end and the profile, time the server
    /// would spend waiting), after the first request with `--no-open`, where the client
    /// (mach) asks at once and the first request must not wait behind a module's load.
    idle_allowed: bool,
}

/// The stretch of idle-time work between two looks for requests. A step may go past it:
/// the pieces of a module's first load by up to 3 ms, a DWARF unit's lookups by up to 4 ms
/// at libxul's size (`scripts/idle-latency`: a request's worst wait behind it stays under
/// 10 ms).
const IDLE_SLICE: Duration = Duration::from_millis(2);

impl Server {
    pub fn start(
        opts: &ServerOptions,
        profile: Option<ProfileFile>,
        api: Api,
        quiet: bool,
    ) -> Result<Server, ServerError> {
        let listener = bind(opts.address, opts.port)?;
        let local = listener
            .local_addr()
            .map_err(|e| ServerError(format!("cannot read the listening address: {e}")))?;
        let port = local.port();
        // Besides these, a request may name the address it connected to (see
        // `host_refusal`): for a server on 0.0.0.0, each of the machine's addresses.
        let mut hosts = vec![
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ];
        if !local.ip().is_loopback() {
            // Reachable from the network on purpose: the machine's name is fine too.
            if let Some(name) = addresses::hostname() {
                hosts.push(format!("{name}:{port}"));
            }
        }
        let url_host = addresses::url_host(local);
        if !hosts.contains(&url_host) {
            hosts.push(url_host.clone());
        }
        let token = random_token()?;
        let secret = token.clone();
        let log_token = token.clone();
        let limits = tiny_http::Limits {
            read_timeout: opts.read_timeout,
            write_timeout: WRITE_TIMEOUT,
            request_deadline: REQUEST_DEADLINE,
            max_line: MAX_LINE,
            max_headers: MAX_HEADERS,
            max_body: MAX_BODY,
            max_connections: MAX_CONNECTIONS,
            bodies_in_flight: BODIES_IN_FLIGHT,
            uncounted_body: UNCOUNTED_BODY,
            // Decided from the head, before a byte of the body is read: a stranger (wrong
            // Host, or no token) costs no memory however big a body it announces.
            head_check: Some(Arc::new(move |head: &tiny_http::Head<'_>| {
                host_refusal(head.headers, &hosts, head.local)
                    .or_else(|| path_refusal(head.method, head.url, head.headers, &secret))
            })),
            // Requests refused by the connection's thread never reach the loop: logged
            // there, so that a 403 or 413 is as visible as any other answer.
            on_refusal: (!quiet).then(|| {
                Arc::new(move |head: &tiny_http::Head<'_>, status: u16, out: usize| {
                    let host = match status {
                        403 => match head.headers.iter().find(|h| h.field.equiv("Host")) {
                            Some(h) => format!(
                                " (Host: {})",
                                h.value.as_str().chars().take(100).collect::<String>()
                            ),
                            None => " (no Host)".to_string(),
                        },
                        _ => String::new(),
                    };
                    crate::log::elog!(
                        "{} {} {status}: 0 bytes in, {out} out, refused before the body{host}",
                        head.method,
                        token::log_path(head.url, &log_token)
                    );
                }) as Arc<tiny_http::RefusalLog>
            }),
        };
        let http = tiny_http::Server::from_listener_with_limits(listener, limits)
            .map_err(|e| ServerError(format!("cannot start the HTTP server: {e}")))?;
        Ok(Server {
            http,
            token,
            local,
            url_host,
            profile,
            api,
            profiler_url: opts.profiler_url.clone(),
            quiet,
            parked: Default::default(),
            idle_allowed: !opts.no_open,
            body_in: 0,
            note: "",
        })
    }

    /// `http://ADDR:PORT/<token>`: the base of every API path.
    pub fn server_url(&self) -> String {
        format!("http://{}/{}", self.url_host, self.token)
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// For a server reachable from the network: where, what that exposes, and what a
    /// browser elsewhere needs (no token: this goes to stderr).
    pub fn exposure_note(&self) -> Option<String> {
        if self.local.ip().is_loopback() {
            return None;
        }
        let mut note = format!(
            "Reachable from other machines as http://{} (the address in the URL): whoever has the URL, with its secret token, can read the profile and ask for symbols, source files and disassembly of the modules found on this machine.",
            self.url_host
        );
        if self.profiler_url.starts_with("https://") {
            note.push_str(&format!(
                " Browsers refuse an http:// server other than localhost to an https:// front-end: elsewhere, use --profiler-url with a front-end served over http://, or forward the port (ssh -L {0}:127.0.0.1:{0} THIS-MACHINE) and put 127.0.0.1:{0} in the URL.",
                self.local.port()
            ));
        }
        Some(note)
    }

    /// The front-end URL that loads the profile (if any) and uses this symbol server.
    pub fn profiler_url(&self) -> String {
        let server = self.server_url();
        match &self.profile {
            Some(_) => format!(
                "{}/from-url/{}/?symbolServer={}",
                self.profiler_url,
                percent_encode(&format!("{server}/profile.json")),
                percent_encode(&server)
            ),
            None => format!(
                "{}/?symbolServer={}",
                self.profiler_url,
                percent_encode(&server)
            ),
        }
    }

    /// Serves until Ctrl-C.
    pub fn run(mut self) {
        let mut last_request = std::time::Instant::now();
        // A short tick: downloads are polled and parked requests answered here.
        while !crate::signals::stopping() {
            // With idle work left, a request is only looked for, not waited for.
            let idle = self.idle_allowed && self.api.has_idle_work();
            let received = if idle {
                self.http.try_recv()
            } else {
                self.http.recv_timeout(parked::TICK)
            };
            match received {
                Ok(Some(request)) => {
                    self.serve(request);
                    self.idle_allowed = true;
                    last_request = std::time::Instant::now();
                }
                Ok(None) if idle => {
                    let work = catch_unwind(AssertUnwindSafe(|| self.api.idle_slice(IDLE_SLICE)));
                    if work.is_err() {
                        // A parser bug met a file: the requests find that module's error
                        // themselves; idle work stops.
                        self.idle_allowed = false;
                    }
                }
                Ok(None) => {}
                Err(e) => crate::log::elog!("warning: accepting a connection failed: {e}"),
            }
            self.answer_parked();
            // The front-end asks in several batches at once: the advice that groups
            // modules waits for the burst to end, after all their lines, with every one
            // of them counted.
            if self.parked.is_empty() && last_request.elapsed() >= ADVICE_AFTER {
                self.api.say_advice();
            }
        }
        self.api.shutdown();
        crate::signals::finish();
        if !self.quiet {
            crate::log::elog!("Stopped.");
        }
    }

    fn serve(&mut self, mut request: Request) {
        let started = std::time::Instant::now();
        self.body_in = 0;
        self.note = "";
        // The Host and token checks, the body limit and the reading of the body were done
        // by the connection's own thread (limits.rs in the patched tiny_http): the body is
        // in memory here, and nothing below waits on the client but writing the answer.
        // The token is checked again here all the same (in constant time).
        let url = request.url().to_string();
        let path = url.split(['?', '#']).next().unwrap_or("");
        let rest = match token::under_token(path, &self.token) {
            Some(rest) => rest.to_string(),
            None => {
                let response = if path == "/" && *request.method() == Method::Get {
                    index_page(&self.profiler_url)
                } else {
                    json_response(404, &json!({"error": "not found"}), false)
                };
                let shown = token::log_path(&url, &self.token);
                if !self.quiet {
                    log_request(&request, &shown, &response, 0, started, "");
                }
                send(request, response, &shown);
                return;
            }
        };
        let response =
            match catch_unwind(AssertUnwindSafe(|| self.under_prefix(&mut request, &rest))) {
                Ok(Served::Response(r)) => r,
                Ok(Served::Park {
                    api_path,
                    parsed,
                    body_len,
                }) => {
                    // Answered later, from the loop, when its downloads are done.
                    self.park(request, api_path, parsed, body_len);
                    return;
                }
                Err(payload) => http::panic_response(&*payload, &self.token),
            };
        // Log lines name the path without the token.
        let shown = format!("/…{rest}");
        if !self.quiet {
            log_request(
                &request,
                &shown,
                &response,
                self.body_in,
                started,
                self.note,
            );
        }
        send(request, response, &shown);
    }

    fn under_prefix(&mut self, request: &mut Request, rest: &str) -> Served {
        let method = request.method().clone();
        if method == Method::Options {
            return Served::Response(preflight(request));
        }
        Served::Response(match (method, rest) {
            (Method::Get | Method::Head, "/profile.json") => self.profile_response(),
            (Method::Post, api_path) if api_path.len() > 1 => match read_body(request) {
                Ok(body) => {
                    self.body_in = body.len();
                    match self.api.handle_or_wait(api_path, body, true) {
                        Handled::Answer(Ok(answer)) => {
                            if answer.is_again() {
                                self.note = ", the same answer as before";
                            }
                            json_answer(200, answer)
                        }
                        Handled::Answer(Err(e)) => error_response(&e),
                        Handled::WaitForDownloads(parsed) => {
                            return Served::Park {
                                api_path: api_path.to_string(),
                                parsed,
                                body_len: self.body_in,
                            };
                        }
                    }
                }
                Err(e) => error_response(&e),
            },
            (_, path) => error_response(&ApiError::not_found(format!("unknown path {path}"))),
        })
    }

    fn profile_response(&self) -> Response<Box<dyn Read + Send>> {
        let Some(profile) = &self.profile else {
            return error_response(&ApiError::not_found(
                "this server was started without a profile",
            ));
        };
        match crate::fs::open_regular(&profile.path) {
            Ok(f) => {
                let len = f.metadata().ok().map(|m| m.len() as usize);
                let mut r = Response::new(
                    StatusCode(200),
                    vec![header("Content-Type", "application/json; charset=UTF-8")],
                    paced(f),
                    len,
                    None,
                );
                if profile.gzipped {
                    r.add_header(header("Content-Encoding", "gzip"));
                }
                r.add_header(header("Access-Control-Allow-Origin", "*"));
                r
            }
            Err(e) => error_response(&ApiError::internal(format!(
                "cannot read {}: {e}",
                profile.path.display()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding() {
        assert_eq!(
            percent_encode("http://127.0.0.1:3000/ab/profile.json?x#y%&"),
            "http%3A%2F%2F127.0.0.1%3A3000%2Fab%2Fprofile.json%3Fx%23y%25%26"
        );
    }
}

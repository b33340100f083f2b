//! The server loop: one blocking `tiny_http` loop serving the profile and the API under a
//! secret path prefix.

use std::fmt;
use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tiny_http::{Header, Method, Request, Response, StatusCode};

use crate::api::{Api, ApiError};
use crate::cli::{PortSpec, ServerOptions};
use crate::profile::ProfileFile;

#[path = "server_parked.rs"]
mod parked;

/// Largest request body accepted.
pub const MAX_BODY: u64 = 64 << 20;
/// Announced bodies above this are not drained after the 413 (see `serve`).
const MAX_DRAIN: u64 = 1 << 30;

#[derive(Debug)]
pub struct ServerError(pub String);

impl fmt::Display for ServerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Set by the Ctrl-C handler; the loop checks it between requests.
static STOP: AtomicBool = AtomicBool::new(false);

#[cfg(unix)]
mod sys {
    //! The few libc calls needed, declared here rather than pulling in a crate.
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    use std::time::Duration;

    #[repr(C)]
    struct Timeval {
        tv_sec: i64,
        tv_usec: i64,
    }

    unsafe extern "C" {
        fn setsockopt(fd: i32, level: i32, name: i32, value: *const Timeval, len: u32) -> i32;
        fn getpeername(fd: i32, addr: *mut u8, len: *mut u32) -> i32;
        fn getsockname(fd: i32, addr: *mut u8, len: *mut u32) -> i32;
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
        fn shutdown(fd: i32, how: i32) -> i32;
        fn write(fd: i32, buf: *const u8, len: usize) -> isize;
    }

    #[cfg(target_os = "linux")]
    const SOCKET_OPTS: (i32, i32, i32) = (1, 20, 21); // SOL_SOCKET, SO_RCVTIMEO, SO_SNDTIMEO
    #[cfg(not(target_os = "linux"))]
    const SOCKET_OPTS: (i32, i32, i32) = (0xffff, 0x1006, 0x1005);
    #[cfg(target_os = "linux")]
    const AF_INET6: u8 = 10;
    #[cfg(not(target_os = "linux"))]
    const AF_INET6: u8 = 30;

    fn decode(buf: &[u8; 128]) -> Option<SocketAddr> {
        // Linux: u16 family first; the BSDs: a length byte, then the family byte.
        let family = if cfg!(target_os = "linux") {
            u16::from_ne_bytes([buf[0], buf[1]]) as u8
        } else {
            buf[1]
        };
        let port = u16::from_be_bytes([buf[2], buf[3]]);
        match family {
            2 => Some(SocketAddr::new(
                IpAddr::V4(Ipv4Addr::new(buf[4], buf[5], buf[6], buf[7])),
                port,
            )),
            f if f == AF_INET6 => {
                let mut a = [0u8; 16];
                a.copy_from_slice(&buf[8..24]);
                Some(SocketAddr::new(IpAddr::V6(Ipv6Addr::from(a)), port))
            }
            _ => None,
        }
    }

    fn addr_of(fd: i32, peer: bool) -> Option<SocketAddr> {
        let mut buf = [0u8; 128];
        let mut len = buf.len() as u32;
        // SAFETY: buf is writable for len bytes; a bad fd only makes the call fail.
        let rc = unsafe {
            if peer {
                getpeername(fd, buf.as_mut_ptr(), &mut len)
            } else {
                getsockname(fd, buf.as_mut_ptr(), &mut len)
            }
        };
        if rc == 0 { decode(&buf) } else { None }
    }

    fn open_fds() -> Vec<i32> {
        match std::fs::read_dir("/proc/self/fd").or_else(|_| std::fs::read_dir("/dev/fd")) {
            Ok(dir) => dir
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect(),
            Err(_) => (3..4096).collect(),
        }
    }

    /// tiny_http hides a request's socket; find it by its two addresses and give it read
    /// and write timeouts, so a client that stalls mid-body fails its read instead of
    /// wedging the loop. (A timeout on the listener would also hit accept() and stop
    /// tiny_http's accept thread.)
    pub fn set_timeouts(peer: SocketAddr, local: SocketAddr, t: Duration) -> Option<i32> {
        let fd = open_fds()
            .into_iter()
            .filter(|&fd| fd > 2)
            .find(|&fd| addr_of(fd, true) == Some(peer) && addr_of(fd, false) == Some(local))?;
        let tv = Timeval {
            tv_sec: t.as_secs() as i64,
            tv_usec: i64::from(t.subsec_micros()),
        };
        let (level, rcv, snd) = SOCKET_OPTS;
        let len = std::mem::size_of::<Timeval>() as u32;
        // SAFETY: fd is an open socket of this process; tv outlives the calls.
        unsafe {
            setsockopt(fd, level, rcv, &tv, len);
            setsockopt(fd, level, snd, &tv, len);
        }
        Some(fd)
    }

    /// Writes `bytes` to a socket of this process (best effort: the client may be gone).
    pub fn send_all(fd: i32, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            // SAFETY: writing from a live slice to an fd of this process.
            let n = unsafe { write(fd, bytes.as_ptr(), bytes.len()) };
            if n <= 0 {
                return;
            }
            bytes = &bytes[n as usize..];
        }
    }

    /// Ends both directions of a connection whose client failed us, so that tiny_http
    /// does not wait a second timeout draining the rest of its body. The fd stays open
    /// (tiny_http owns and closes it).
    pub fn hang_up(fd: i32) {
        // SAFETY: shutdown on an fd of this process; it does not close it.
        unsafe {
            shutdown(fd, 2); // SHUT_RDWR
        }
    }

    extern "C" fn on_sigint(_: i32) {
        super::STOP.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub fn install_ctrl_c() {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            signal(2, on_sigint); // SIGINT
            signal(15, on_sigint); // SIGTERM
        }
    }
}

#[cfg(not(unix))]
mod sys {
    pub fn set_timeouts(
        _: std::net::SocketAddr,
        _: std::net::SocketAddr,
        _: std::time::Duration,
    ) -> Option<i32> {
        None
    }
    pub fn hang_up(_: i32) {}
    pub fn send_all(_: i32, _: &[u8]) {}
    pub fn install_ctrl_c() {}
}

/// 128 bits from the operating system's random source, as 32 hex digits (URL-safe).
pub fn random_token() -> Result<String, ServerError> {
    let mut bytes = [0u8; 16];
    #[cfg(unix)]
    {
        let mut f = std::fs::File::open("/dev/urandom")
            .map_err(|e| ServerError(format!("/dev/urandom: {e}")))?;
        f.read_exact(&mut bytes)
            .map_err(|e| ServerError(format!("/dev/urandom: {e}")))?;
    }
    #[cfg(not(unix))]
    {
        // std seeds each RandomState from the OS generator (BCryptGenRandom on Windows).
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(std::process::id() as u64);
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    Ok(crate::debugid::hex_lower(&bytes))
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn bind(address: IpAddr, port: PortSpec) -> Result<TcpListener, ServerError> {
    let fail = |p: u16, e: std::io::Error| {
        ServerError(format!(
            "cannot listen on {}: {e}",
            SocketAddr::new(address, p)
        ))
    };
    match port {
        PortSpec::Exact(p) => TcpListener::bind((address, p)).map_err(|e| fail(p, e)),
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

pub struct Server {
    http: tiny_http::Server,
    token: String,
    local: SocketAddr,
    allowed_hosts: Vec<String>,
    profile: Option<ProfileFile>,
    api: Api,
    profiler_url: String,
    read_timeout: Duration,
    quiet: bool,
    /// Requests waiting for downloads, and the one `under_prefix` just asked to park.
    parked: parked::Parking,
}

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
        let http = tiny_http::Server::from_listener(listener, None)
            .map_err(|e| ServerError(format!("cannot start the HTTP server: {e}")))?;
        let port = local.port();
        let own = match local.ip() {
            IpAddr::V6(ip) => format!("[{ip}]:{port}"),
            IpAddr::V4(ip) => format!("{ip}:{port}"),
        };
        let allowed_hosts = vec![
            own,
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ];
        Ok(Server {
            http,
            token: random_token()?,
            local,
            allowed_hosts,
            profile,
            api,
            profiler_url: opts.profiler_url.clone(),
            read_timeout: opts.read_timeout,
            quiet,
            parked: Default::default(),
        })
    }

    /// `http://ADDR:PORT/<token>`: the base of every API path.
    pub fn server_url(&self) -> String {
        format!("http://{}/{}", self.allowed_hosts[0], self.token)
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local
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
        sys::install_ctrl_c();
        while !STOP.load(Ordering::SeqCst) {
            // A short tick: downloads are polled and parked requests answered here.
            match self.http.recv_timeout(parked::TICK) {
                Ok(Some(request)) => self.serve(request),
                Ok(None) => {}
                Err(e) => crate::elog!("warning: accepting a connection failed: {e}"),
            }
            self.answer_parked();
        }
        self.api.shutdown();
        crate::elog!("Stopped.");
    }

    fn serve(&mut self, mut request: Request) {
        // Bodies of up to 1 KiB were read by tiny_http already; bigger ones, and the
        // profile, are streamed here, in the loop.
        let streams = request.body_length().is_none_or(|n| n > 1024)
            || request.url().ends_with("/profile.json");
        let fd = match request.remote_addr() {
            Some(peer) if streams => sys::set_timeouts(*peer, self.local, self.read_timeout),
            _ => None,
        };
        if let Some(n) = request.body_length().filter(|&n| n as u64 > MAX_BODY) {
            if n as u64 <= MAX_DRAIN {
                // Dropping the answered request drains what the client sends (or times out
                // if it stalls), so the client gets to read the 413.
                let _ = request.respond(error_response(&too_big()));
                return;
            }
            // Dropping this request would have tiny_http drain the body into one buffer of
            // the announced size, and failing that allocation aborts the process. Answer on
            // the socket directly, hang up, and leak the request (its connection thread
            // stays parked) instead.
            if let Some(fd) = fd {
                let body = too_big().to_json().to_string();
                let head = format!(
                    "HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json; charset=UTF-8\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                sys::send_all(fd, head.as_bytes());
                sys::hang_up(fd);
            }
            std::mem::forget(request);
            return;
        }
        let host_ok = request
            .headers()
            .iter()
            .find(|h| h.field.equiv("Host"))
            .is_some_and(|h| {
                let host = h.value.as_str().to_ascii_lowercase();
                self.allowed_hosts.contains(&host)
            });
        if !host_ok {
            let _ = request.respond(json_response(
                403,
                &json!({"error": "this Host is not allowed (DNS rebinding protection)"}),
                false,
            ));
            return;
        }
        let url = request.url().to_string();
        let path = url.split(['?', '#']).next().unwrap_or("");
        let prefix = format!("/{}", self.token);
        let rest = match path.strip_prefix(&prefix) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest.to_string(),
            _ => {
                let response = if path == "/" && *request.method() == Method::Get {
                    index_page(&self.profiler_url)
                } else {
                    json_response(404, &json!({"error": "not found"}), false)
                };
                let _ = request.respond(response);
                return;
            }
        };
        let mut failed_client = false;
        let response = match catch_unwind(AssertUnwindSafe(|| {
            self.under_prefix(&mut request, &rest, &mut failed_client)
        })) {
            Ok(r) => r,
            Err(_) => json_response(
                500,
                &json!({"error": "internal error while answering this request (see the server's stderr)"}),
                true,
            ),
        };
        if let Some((api_path, body)) = self.parked.to_park.take() {
            self.park(request, api_path, body);
            return;
        }
        if let Err(e) = request.respond(response) {
            crate::elog!("warning: sending a response to {path} failed: {e}");
        }
        if failed_client && let Some(fd) = fd {
            sys::hang_up(fd);
        }
    }

    fn under_prefix(
        &mut self,
        request: &mut Request,
        rest: &str,
        failed_client: &mut bool,
    ) -> Response<Box<dyn Read + Send>> {
        let method = request.method().clone();
        if method == Method::Options {
            return preflight(request);
        }
        match (method, rest) {
            (Method::Get | Method::Head, "/profile.json") => self.profile_response(),
            (Method::Post, api_path) if api_path.len() > 1 => match read_body(request) {
                Ok(body) => {
                    let started = std::time::Instant::now();
                    let Some(answer) = self.api.handle_or_wait(api_path, &body, true) else {
                        // Answered later, from the loop, when its downloads are done.
                        self.parked.to_park = Some((api_path.to_string(), body));
                        return json_bytes(202, Vec::new(), true);
                    };
                    if !self.quiet {
                        // Progress on long work: what each request cost.
                        crate::elog!(
                            "{api_path}: {} bytes in, {} out, {:.0} ms",
                            body.len(),
                            answer.as_ref().map_or(0, Vec::len),
                            started.elapsed().as_secs_f64() * 1000.0
                        );
                    }
                    match answer {
                        Ok(text) => json_bytes(200, text, true),
                        Err(e) => error_response(&e),
                    }
                }
                Err(e) => {
                    // Too big or too slow: do not wait for the rest of it.
                    *failed_client = true;
                    error_response(&e)
                }
            },
            (_, path) => error_response(&ApiError {
                status: 404,
                message: format!("unknown path {path}"),
            }),
        }
    }

    fn profile_response(&self) -> Response<Box<dyn Read + Send>> {
        let Some(profile) = &self.profile else {
            return error_response(&ApiError {
                status: 404,
                message: "this server was started without a profile".into(),
            });
        };
        match std::fs::File::open(&profile.path) {
            Ok(f) => {
                let len = f.metadata().ok().map(|m| m.len() as usize);
                let mut r = Response::new(
                    StatusCode(200),
                    vec![header("Content-Type", "application/json; charset=UTF-8")],
                    Box::new(f) as Box<dyn Read + Send>,
                    len,
                    None,
                );
                if profile.gzipped {
                    r.add_header(header("Content-Encoding", "gzip"));
                }
                r.add_header(header("Access-Control-Allow-Origin", "*"));
                r
            }
            Err(e) => error_response(&ApiError {
                status: 500,
                message: format!("cannot read {}: {e}", profile.path.display()),
            }),
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    // Only called with ASCII names and values built here.
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

fn json_response(status: u16, v: &serde_json::Value, cors: bool) -> Response<Box<dyn Read + Send>> {
    json_bytes(status, serde_json::to_vec(v).unwrap_or_default(), cors)
}

fn json_bytes(status: u16, body: Vec<u8>, cors: bool) -> Response<Box<dyn Read + Send>> {
    let len = body.len();
    let mut r = Response::new(
        StatusCode(status),
        vec![header("Content-Type", "application/json; charset=UTF-8")],
        Box::new(std::io::Cursor::new(body)) as Box<dyn Read + Send>,
        Some(len),
        None,
    );
    if cors {
        r.add_header(header("Access-Control-Allow-Origin", "*"));
    }
    r
}

fn error_response(e: &ApiError) -> Response<Box<dyn Read + Send>> {
    json_response(e.status, &e.to_json(), true)
}

fn preflight(request: &Request) -> Response<Box<dyn Read + Send>> {
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

fn too_big() -> ApiError {
    ApiError {
        status: 413,
        message: format!("request body larger than {} MiB", MAX_BODY >> 20),
    }
}

/// Reads the body (the announced length was checked already; chunked bodies are cut off
/// at the limit).
fn read_body(request: &mut Request) -> Result<Vec<u8>, ApiError> {
    let mut body = Vec::new();
    request
        .as_reader()
        .take(MAX_BODY + 1)
        .read_to_end(&mut body)
        .map_err(|e| ApiError::bad_request(format!("reading the request body failed: {e}")))?;
    if body.len() as u64 > MAX_BODY {
        return Err(too_big());
    }
    Ok(body)
}

fn index_page(profiler_url: &str) -> Response<Box<dyn Read + Send>> {
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

/// Opens `url` in the default browser, with the platform's own opener.
pub fn open_browser(url: &str) -> Result<(), String> {
    use std::process::{Command, Stdio};
    let mut cmd = if cfg!(target_os = "macos") {
        let mut c = Command::new("open");
        c.arg(url);
        c
    } else if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", "start", "", url]);
        c
    } else {
        let mut c = Command::new("xdg-open");
        c.arg(url);
        c
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| e.to_string())
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
        let t = random_token().unwrap();
        assert_eq!(t.len(), 32);
        assert_ne!(t, random_token().unwrap());
    }
}

//! One download: the system `curl` as a child process (argument vector, no shell), so the
//! user's proxy settings and certificate store apply as for every other tool, and no TLS
//! stack is linked in. The server loop polls it; nothing here blocks unless asked to.
//!
//! curl writes the body to its stdout, which is a file this process created (`O_EXCL`,
//! 0600) and keeps open: curl never opens a path, so nothing swapped in on disk can be
//! written through, and the bytes received are counted here (curl ignores
//! `--max-filesize` for chunked answers). Redirects are followed here, one curl per hop,
//! each target checked before it is asked: no curl globs (`--globoff`, and a `Location`
//! with `{}[]` outside an IPv6 literal is refused), the host resolved here and pinned
//! (`--resolve`) so that the address checked is the address asked, or, when the
//! environment sends the target through a proxy, only its name checked (the proxy
//! resolves it). A name is looked up on a short-lived thread of its own, never on the
//! loop (see [`Lookup`]). One deadline bounds a download over all its hops.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use super::cache;

/// Largest file accepted, decoded (a libxul `.sym` or `xul.pdb` is well under this).
pub const MAX_FILE_SIZE: u64 = 4 << 30;
/// One download, all its hops together, may take this long: a 1 GB `.sym` (libxul's is
/// under that) needs 0.6 MB/s (5 Mbit/s) to make it. Past half an hour a user would rather
/// have the profile without that module than wait on; a stalled transfer fails long
/// before (see the speed options).
const MAX_SECONDS: u64 = 1800;
/// Redirects followed per download (Tecken answers with one, to its storage): with the
/// first request, at most 6 requests per download.
const MAX_REDIRECTS: u32 = 5;
/// A redirect target's name not looked up by then is given up on (the download fails, its
/// server is paused): glibc waits about 10 s per name when DNS never answers, and a
/// working resolver answers in well under this.
const LOOKUP_TIME: Duration = Duration::from_secs(5);
/// Lookup threads alive at once, those given up on included (each ends only when
/// `getaddrinfo` returns): past this a lookup fails instead of piling up threads.
const MAX_LOOKUPS: usize = 16;
/// How often a blocking wait looks at the file and the child.
pub const WAIT_TICK: Duration = Duration::from_millis(20);
/// Progress of a long download: first after this, then at most this often.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// `--write-out` prints two lines on stderr after curl's own messages: the redirect
/// target, then the status. They are read from the end of stderr: the last line must be
/// the status line and the one before it the location line. Only the location comes
/// from the server, and it cannot hold a newline (curl splits headers at line ends), so
/// nothing a server sends can make a line that passes for the status line.
const LOCATION_MARK: &str = "@@pss-location ";
const STATUS_MARK: &str = "@@pss-status ";

/// How a download ended.
#[derive(Debug)]
pub enum Outcome {
    /// The file is at its destination.
    Saved,
    /// The server does not have it (404/410): remembered for the rest of the run.
    NotFound,
    /// Anything else; `server_down` when the server itself failed (refused, stalled, 5xx).
    Failed { message: String, server_down: bool },
}

pub enum StartError {
    CurlMissing,
    Other(String),
}

pub struct Download {
    child: Child,
    /// The temporary file curl writes to (its stdout); ours to measure and to rename.
    file: File,
    tmp: PathBuf,
    /// The cache root and the file's place under it.
    pub root: PathBuf,
    pub rel: PathBuf,
    /// The URL asked for first: what the download is known by.
    pub url: String,
    /// The URL of the current hop.
    hop: String,
    hops: u32,
    pub source: usize,
    started: Instant,
    /// When the download is dropped, however many hops it took.
    deadline: Instant,
    /// The current hop is the configured server's own host on this machine.
    may_be_local: bool,
    /// The current hop goes through the environment's proxy: curl's `remote_ip` is the
    /// proxy's.
    proxied: bool,
    /// Between two hops: the next hop's host being looked up (no curl running).
    lookup: Option<Lookup>,
    /// When progress was last printed (`None`: never).
    reported: Option<Instant>,
    /// The cache root did not exist before this download (see `Remote::made_roots`).
    pub made_root: bool,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The size limit: [`MAX_FILE_SIZE`], or less with `$PROFILER_SYMBOL_SERVER_MAX_DOWNLOAD`
/// (bytes; for a small disk, and for the tests of the limit).
fn max_size() -> u64 {
    std::env::var("PROFILER_SYMBOL_SERVER_MAX_DOWNLOAD")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .map_or(MAX_FILE_SIZE, |v: u64| v.min(MAX_FILE_SIZE))
}

/// The deadline of one download: [`MAX_SECONDS`], or less with
/// `$PROFILER_SYMBOL_SERVER_DOWNLOAD_SECONDS` (for the tests of the deadline).
fn max_seconds() -> u64 {
    std::env::var("PROFILER_SYMBOL_SERVER_DOWNLOAD_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .map_or(MAX_SECONDS, |v: u64| v.clamp(1, MAX_SECONDS))
}

/// `curl`, or `$PROFILER_SYMBOL_SERVER_CURL` (a curl elsewhere, or none for tests).
fn program() -> std::ffi::OsString {
    std::env::var_os("PROFILER_SYMBOL_SERVER_CURL").unwrap_or_else(|| "curl".into())
}

/// The temporary file's name for `rel`, at the top of the cache root: the folders of
/// `rel` are made only once the file is complete, so a download that finds nothing (a
/// 404 for each of a profile's 200 000 libraries) leaves no folder behind. Its name
/// ends with [`cache::PART_MARK`], the process ID and a counter: what a killed run left is
/// recognised by it and swept when stale (`cache::sweep_parts`).
pub fn part_rel(rel: &Path) -> PathBuf {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    PathBuf::from(format!(
        ".{name}{}{}-{}",
        cache::PART_MARK,
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// How a redirect's target is asked, once checked.
#[derive(Debug, PartialEq)]
pub enum Route {
    /// Straight to the server (`--noproxy *`), connecting to the address checked
    /// (`--resolve` arguments; none for an address literal or the configured server's own
    /// host).
    Direct(Vec<String>),
    /// Through the environment's proxy (`--noproxy ""`), which resolves the name. Either
    /// way curl is told, so that it does what [`uses_proxy`] decided whatever a
    /// `.curlrc` or its version would say.
    Proxied,
}

/// One curl run: one request to `url` (`--globoff`: no `{}`/`[]` expansion into many),
/// for at most `seconds`; a redirect's target the way `route` says (the first request as
/// curl's own settings say).
fn spawn(url: &str, route: Option<&Route>, seconds: u64, file: &File) -> Result<Child, StartError> {
    let out = file
        .try_clone()
        .map_err(|e| StartError::Other(format!("cannot hand the file to curl: {e}")))?;
    let mut cmd = Command::new(program());
    match route {
        None => {}
        Some(Route::Direct(pin)) => {
            cmd.args(["--noproxy", "*"]);
            for p in pin {
                cmd.args(["--resolve", p]);
            }
        }
        Some(Route::Proxied) => {
            cmd.args(["--noproxy", ""]);
        }
    }
    cmd.args([
        "--globoff",
        "--fail",
        "--silent",
        "--show-error",
        "--compressed",
    ])
    .args(["--proto", "=http,https"])
    .args(["--max-filesize", &max_size().to_string()])
    .args(["--max-time", &seconds.max(1).to_string()])
    // A server that refuses or stalls fails fast; a slow but moving one goes on.
    .args([
        "--connect-timeout",
        "5",
        "--speed-limit",
        "1",
        "--speed-time",
        "10",
    ])
    .args([
        "--user-agent",
        concat!("profiler-symbol-server/", env!("CARGO_PKG_VERSION")),
    ])
    .args([
        "--write-out",
        &format!(
            "%{{stderr}}\n{LOCATION_MARK}%{{redirect_url}}\n{STATUS_MARK}%{{http_code}} %{{remote_ip}}\n"
        ),
    ])
    .args(["--url", url])
    .stdin(Stdio::null())
    .stdout(Stdio::from(out))
    .stderr(Stdio::piped())
    .spawn()
    .map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            StartError::CurlMissing
        } else {
            StartError::Other(format!("cannot run curl: {e}"))
        }
    })
}

/// Starts fetching `url` into a fresh temporary file beside `root/rel`, which must be a
/// name under a checked cache root.
pub fn start(url: &str, root: &Path, rel: &Path, source: usize) -> Result<Download, StartError> {
    let tmp_rel = part_rel(rel);
    let made_root = root.symlink_metadata().is_err();
    let tmp = cache::prepare(root, &tmp_rel)
        .map_err(|e| StartError::Other(format!("cannot use the cache: {e}")))?;
    let file = cache::create_new(&tmp).map_err(|e| {
        cache::remove_if_made(root, made_root);
        StartError::Other(format!("cannot create {}: {e}", tmp.display()))
    })?;
    match spawn(url, None, max_seconds(), &file) {
        Ok(child) => {
            crate::signals::track(&tmp, Some(child.id()));
            Ok(Download {
                child,
                file,
                tmp,
                root: root.to_path_buf(),
                rel: rel.to_path_buf(),
                url: url.to_string(),
                hop: url.to_string(),
                hops: 0,
                source,
                started: Instant::now(),
                deadline: Instant::now() + Duration::from_secs(max_seconds()),
                may_be_local: false,
                proxied: false,
                lookup: None,
                reported: None,
                made_root,
            })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            cache::remove_if_made(root, made_root);
            Err(e)
        }
    }
}

/// Where an http(s) URL goes, as curl reads it.
#[derive(Debug, PartialEq)]
struct Target {
    /// Lowercased, without brackets or a final dot.
    host: String,
    port: u16,
    /// The host written as an address (in any spelling `inet_aton` accepts).
    literal: Option<IpAddr>,
}

/// Reads the host and port of `url`, refusing what curl could read otherwise than this
/// does: curl globs (`{}`, and `[]` anywhere but around an IPv6 literal), credentials,
/// blanks and control characters, host names with other than letters, digits, `.`, `-`
/// and `_`.
fn parse_target(url: &str) -> Result<Target, String> {
    if url
        .bytes()
        .any(|b| b.is_ascii_control() || b == b' ' || b == b'{' || b == b'}')
    {
        return Err("blanks, control characters or curl globs ({}) in it".into());
    }
    let (scheme, rest) = url.split_once("://").ok_or("not an absolute URL")?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err("not http or https".into()),
    };
    if url.contains('\\') {
        return Err("a backslash in it".into());
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if tail.contains(['[', ']']) {
        return Err("a curl glob ([]) in it".into());
    }
    if authority.contains('@') {
        return Err("credentials in it".into());
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or("an unclosed [")?;
        let ip: Ipv6Addr = addr
            .parse()
            .map_err(|_| "a curl glob ([]) in it, not an IPv6 address")?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or("text after an IPv6 address")?),
        };
        (ip.to_string(), port)
    } else {
        if authority.contains(['[', ']']) {
            return Err("a curl glob ([]) in it".into());
        }
        match authority.split_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        None | Some("") => default_port,
        Some(p) => p
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| p.parse::<u16>().ok())
            .flatten()
            .filter(|&p| p != 0)
            .ok_or("a port that is not a number from 1 to 65535")?,
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err("no host".into());
    }
    let literal = match host.parse::<Ipv6Addr>() {
        Ok(v6) => Some(IpAddr::V6(v6)),
        Err(_) => {
            if !host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
            {
                return Err(
                    "a host name with characters other than letters, digits, ., - and _".into(),
                );
            }
            lenient_ipv4(&host).map(IpAddr::V4)
        }
    };
    Ok(Target {
        host,
        port,
        literal,
    })
}

/// An IPv4 address as `inet_aton` (and so curl) reads it: `127.1`, `0x7f000001`,
/// `2130706433`, `0177.0.0.1` are all loopback.
fn lenient_ipv4(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let nums: Vec<u64> = parts
        .iter()
        .map(|p| {
            if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
                u64::from_str_radix(h, 16).ok()
            } else if p.len() > 1 && p.starts_with('0') {
                u64::from_str_radix(&p[1..], 8).ok()
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let (last, head) = nums.split_last()?;
    let mut v: u64 = 0;
    for (i, n) in head.iter().enumerate() {
        if *n > 255 {
            return None;
        }
        v |= n << (24 - 8 * i);
    }
    let room = 32 - 8 * head.len() as u32;
    if *last >= 1u64 << room {
        return None;
    }
    Some(Ipv4Addr::from((v | last) as u32))
}

fn local_v4(a: Ipv4Addr) -> bool {
    a.is_loopback() || a.is_link_local() || a.is_unspecified() || a.octets()[0] == 0
}

/// Whether an address is this machine or its link: loopback, link-local, unspecified, or
/// one of this machine's own addresses (one a socket can be bound to).
fn is_local_addr(ip: IpAddr) -> bool {
    let near = match ip {
        IpAddr::V4(v4) => local_v4(v4),
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(local_v4)
        }
    };
    near || UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

/// Whether a host name or address is this machine or its link: loopback, link-local,
/// unspecified, `localhost`, this machine's own addresses. Names are not resolved.
pub fn is_local_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(&host);
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        return is_local_addr(IpAddr::V6(v6));
    }
    lenient_ipv4(host).is_some_and(|v4| is_local_addr(IpAddr::V4(v4)))
}

/// Whether `t` is the host of `base`, the server the user configured, and that is on this
/// machine: the one case a redirect may come here.
fn configured_here(base: &str, t: &Target) -> bool {
    parse_target(base).is_ok_and(|b| {
        b.host == t.host && (is_local_host(&b.host) || b.literal.is_some_and(is_local_addr))
    })
}

/// An environment variable as curl reads it: unset and empty are the same.
fn env_value(name: &str) -> Option<String> {
    std::env::var_os(name)
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.is_empty())
}

/// Whether curl sends a request for `scheme://t` through a proxy, as curl decides it from
/// the environment (`env` reads a variable, see [`env_value`]): `no_proxy`, else
/// `NO_PROXY`, lists the hosts that go direct; otherwise the proxy is `<scheme>_proxy`,
/// then `<SCHEME>_PROXY` (not for http: curl never reads `HTTP_PROXY`, which a CGI
/// request can set), then `all_proxy`, then `ALL_PROXY`.
fn uses_proxy(env: &dyn Fn(&str) -> Option<String>, scheme: &str, t: &Target) -> bool {
    let exceptions = env("no_proxy").or_else(|| env("NO_PROXY"));
    if exceptions.is_some_and(|list| no_proxy_names(&list, t)) {
        return false;
    }
    let own = format!("{scheme}_proxy");
    env(&own)
        .or_else(|| {
            (scheme != "http")
                .then(|| env(&own.to_ascii_uppercase()))
                .flatten()
        })
        .or_else(|| env("all_proxy"))
        .or_else(|| env("ALL_PROXY"))
        .is_some()
}

/// Whether a `no_proxy` list names `t`, as curl reads it: `*` alone is every host;
/// entries are split at commas and blanks; an address matches the same address or a
/// network holding it (`10.0.0.0/8`), a name matches itself or a parent domain (a
/// leading `.` changes nothing), case and a final dot aside.
fn no_proxy_names(list: &str, t: &Target) -> bool {
    if list == "*" {
        return true;
    }
    list.split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter(|e| !e.is_empty())
        .any(|entry| {
            let entry = entry.trim_end_matches('.').to_ascii_lowercase();
            match t.literal {
                Some(ip) => {
                    let (net, bits) = match entry.split_once('/') {
                        Some((n, b)) => (n, Some(b)),
                        None => (entry.as_str(), None),
                    };
                    let net = net.trim_start_matches('[').trim_end_matches(']');
                    let Ok(net) = net.parse::<IpAddr>() else {
                        return false;
                    };
                    let width = if ip.is_ipv4() { 32 } else { 128 };
                    let bits = match bits.map(str::parse::<u32>) {
                        None => width,
                        Some(Ok(b)) if b <= width => b,
                        Some(_) => return false,
                    };
                    let key = |a: IpAddr| match a {
                        IpAddr::V4(v4) => u128::from(u32::from(v4)),
                        IpAddr::V6(v6) => u128::from(v6),
                    };
                    // A shift by the whole width (`/0`) leaves nothing: every address.
                    let prefix = |a: IpAddr| key(a).checked_shr(width - bits).unwrap_or(0);
                    net.is_ipv4() == ip.is_ipv4() && prefix(net) == prefix(ip)
                }
                None => {
                    let name = entry.strip_prefix('.').unwrap_or(&entry);
                    !name.is_empty()
                        && (t.host == name
                            || t.host.strip_suffix(name).is_some_and(|h| h.ends_with('.')))
                }
            }
        })
}

/// What a redirect's target needs before it is asked.
#[derive(Debug, PartialEq)]
pub enum Next {
    Go(Route),
    /// A name to look up first (off the loop: [`Lookup`]), its addresses then checked by
    /// [`check_addrs`].
    Resolve {
        host: String,
        port: u16,
    },
}

/// Whether a redirect from `base` (the URL the user configured, trusted as given) to
/// `target` may be followed, and how: https stays https, no curl globs, and no host on
/// this machine (loopback, link-local, unspecified, its own addresses). A name is looked
/// up before any request and the address checked is pinned ([`Next::Resolve`]), unless
/// the environment sends the target through a proxy (`env`, see [`uses_proxy`]): the
/// proxy resolves names, so only what the name itself says is checked (`localhost`,
/// addresses in every spelling). Only a server configured on this machine may send us to
/// this machine, and only to its own host (another port: a local proxy, the tests).
pub fn check_redirect(
    base: &str,
    target: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Next, String> {
    let lower = target.to_ascii_lowercase();
    let https_only = base.to_ascii_lowercase().starts_with("https://");
    if !(lower.starts_with("https://") || (!https_only && lower.starts_with("http://"))) {
        return Err(format!(
            "redirected to {target}: only {} is followed",
            if https_only { "https" } else { "http or https" }
        ));
    }
    let t =
        parse_target(target).map_err(|why| format!("redirected to {target}: refused, {why}"))?;
    let scheme = if lower.starts_with("https://") {
        "https"
    } else {
        "http"
    };
    let proxied = uses_proxy(env, scheme, &t);
    let go = || {
        Ok(Next::Go(if proxied {
            Route::Proxied
        } else {
            Route::Direct(Vec::new())
        }))
    };
    if configured_here(base, &t) {
        return go();
    }
    if let Some(ip) = t.literal {
        return if is_local_addr(ip) {
            Err(format!(
                "redirected to {target}: {} is {ip}, on this machine: refused",
                t.host
            ))
        } else {
            go()
        };
    }
    if proxied {
        return if is_local_host(&t.host) {
            Err(format!(
                "redirected to {target}: {} is this machine: refused",
                t.host
            ))
        } else {
            go()
        };
    }
    Ok(Next::Resolve {
        host: t.host,
        port: t.port,
    })
}

/// The `--resolve` arguments for a redirect to `target` whose `host` has `addrs`, unless
/// one of them is on this machine.
pub fn check_addrs(
    target: &str,
    host: &str,
    port: u16,
    addrs: &[SocketAddr],
) -> Result<Vec<String>, String> {
    if let Some(a) = addrs.iter().find(|a| is_local_addr(a.ip())) {
        return Err(format!(
            "redirected to {target}: {host} is {}, on this machine: refused",
            a.ip()
        ));
    }
    let Some(first) = addrs.first() else {
        return Err(format!("redirected to {target}: {host} has no address"));
    };
    let ip = match first.ip() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    };
    // curl may key its cache with or without a final dot: both go to the address checked.
    Ok(vec![
        format!("{host}:{port}:{ip}"),
        format!("{host}.:{port}:{ip}"),
    ])
}

/// Lookup threads alive (see [`MAX_LOOKUPS`]).
static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// One of [`LOOKUPS`], given back when its thread ends (or never starts).
struct LookupSlot;

impl Drop for LookupSlot {
    fn drop(&mut self) {
        LOOKUPS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A redirect target's host name looked up on a thread of its own: `getaddrinfo` can be
/// neither bounded nor interrupted, and the server loop must go on answering meanwhile.
/// The download polls it; one given up on is left to end by itself, its answer unread.
struct Lookup {
    answer: Receiver<std::io::Result<Vec<SocketAddr>>>,
    /// Given up on then.
    until: Instant,
    location: String,
    host: String,
    port: u16,
}

impl Lookup {
    fn start(location: &str, host: String, port: u16) -> Result<Lookup, String> {
        LOOKUPS
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_LOOKUPS).then_some(n + 1)
            })
            .map_err(|_| {
                format!(
                    "cannot look up {host}: {MAX_LOOKUPS} lookups are already waiting for an answer"
                )
            })?;
        let slot = LookupSlot;
        let (tx, answer) = mpsc::channel();
        let name = host.clone();
        std::thread::Builder::new()
            .name("lookup".into())
            .spawn(move || {
                let _slot = slot;
                let addrs = (name.as_str(), port)
                    .to_socket_addrs()
                    .map(Iterator::collect);
                // The download may have given up and gone: then nobody is told.
                let _ = tx.send(addrs);
            })
            .map_err(|e| format!("cannot look up {host}: {e}"))?;
        Ok(Lookup {
            answer,
            until: Instant::now() + LOOKUP_TIME,
            location: location.to_string(),
            host,
            port,
        })
    }

    /// The addresses, or why there are none; `None` while the lookup may still answer.
    fn poll(&self) -> Option<Result<Vec<SocketAddr>, String>> {
        match self.answer.try_recv() {
            Ok(Ok(addrs)) => Some(Ok(addrs)),
            Ok(Err(e)) => Some(Err(format!("cannot look up {}: {e}", self.host))),
            Err(TryRecvError::Empty) if Instant::now() < self.until => None,
            Err(TryRecvError::Empty) => Some(Err(format!(
                "no answer looking up {} in {} s",
                self.host,
                LOOKUP_TIME.as_secs()
            ))),
            Err(TryRecvError::Disconnected) => Some(Err(format!(
                "the lookup of {} ended without an answer",
                self.host
            ))),
        }
    }
}

/// What curl said about one hop: its own message, then the `--write-out` lines.
#[derive(Debug, PartialEq)]
struct HopReport<'a> {
    message: String,
    /// 0 without an answer, or when the status line is missing or malformed.
    http: u16,
    ip: &'a str,
    location: &'a str,
}

/// Reads curl's stderr from its end (see [`STATUS_MARK`]): the last line is the status
/// line, `http_code` and `remote_ip` split by one space, exactly two fields; the line
/// before it the location. Anything else is curl's message, never read for fields.
fn read_report(err: &str) -> HopReport<'_> {
    let body = err.strip_suffix('\n').unwrap_or(err);
    let (before, last) = body.rsplit_once('\n').unwrap_or(("", body));
    let status = last.strip_prefix(STATUS_MARK).and_then(|rest| {
        let (code, ip) = rest.split_once(' ')?;
        let ok = code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit()) && !ip.contains(' ');
        Some((code.parse::<u16>().ok().filter(|_| ok)?, ip))
    });
    let Some((http, ip)) = status else {
        return HopReport {
            message: err.trim().to_string(),
            http: 0,
            ip: "",
            location: "",
        };
    };
    let (message, location) = match before.rsplit_once('\n').unwrap_or(("", before)) {
        (m, line) if line.starts_with(LOCATION_MARK) => (m, &line[LOCATION_MARK.len()..]),
        _ => (before, ""),
    };
    HopReport {
        message: message.trim().to_string(),
        http,
        ip,
        location,
    }
}

impl Download {
    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.file.metadata().map(|m| m.len()).unwrap_or(0)
    }

    /// A progress line when one is due: after 2 s, then every 5 s.
    pub fn progress(&mut self) -> Option<String> {
        let now = Instant::now();
        let due = match self.reported {
            None => now.duration_since(self.started) >= PROGRESS_AFTER,
            Some(t) => now.duration_since(t) >= PROGRESS_EVERY,
        };
        if !due {
            return None;
        }
        self.reported = Some(now);
        let secs = now.duration_since(self.started).as_secs_f64();
        let mb = self.received() as f64 / 1e6;
        Some(format!(
            "{}: {mb:.1} MB so far, {:.2} MB/s",
            self.name(),
            mb / secs.max(0.001)
        ))
    }

    /// The closing line of a download that printed progress.
    pub fn done_line(&self) -> Option<String> {
        self.reported?;
        let size = std::fs::symlink_metadata(self.root.join(&self.rel)).map_or(0, |m| m.len());
        Some(format!(
            "{}: {:.1} MB in {:.0} s",
            self.name(),
            size as f64 / 1e6,
            self.started.elapsed().as_secs_f64()
        ))
    }

    fn name(&self) -> String {
        self.rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The outcome if the download has ended; follows a redirect in place (`None`).
    pub fn poll(&mut self) -> Option<Outcome> {
        if Instant::now() >= self.deadline {
            self.kill();
            return Some(Outcome::Failed {
                message: format!(
                    "not complete after {} s, the limit for one download (all redirects included): dropped",
                    max_seconds()
                ),
                server_down: false,
            });
        }
        if self.received() > max_size() {
            self.kill();
            return Some(Outcome::Failed {
                message: format!("larger than the limit of {} bytes", max_size()),
                server_down: false,
            });
        }
        // Between two hops (curl has exited): nothing but the lookup to wait for, and
        // `None` while it may still answer.
        if let Some(lookup) = &self.lookup {
            return self.lookup_polled(lookup.poll()?);
        }
        match self.child.try_wait() {
            Ok(None) => None,
            Ok(Some(status)) => self.hop_ended(status.code()),
            Err(e) => {
                self.kill();
                Some(Outcome::Failed {
                    message: format!("waiting for curl: {e}"),
                    server_down: false,
                })
            }
        }
    }

    /// Stops curl and removes the partial file (Ctrl-C, shutdown).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.tmp);
        crate::signals::untrack(&self.tmp);
    }

    /// A redirect starts the next hop (`None`); anything else ends the download.
    fn hop_ended(&mut self, code: Option<i32>) -> Option<Outcome> {
        // stderr holds one error line and the status line: no deadlock.
        let mut err = String::new();
        if let Some(e) = self.child.stderr.as_mut() {
            let _ = e.read_to_string(&mut err);
        }
        let HopReport {
            message,
            http,
            ip,
            location,
        } = read_report(&err);
        // The address was pinned before the request; this catches what pinning cannot
        // (a proxy's own choice, a curl that ignores `--resolve`).
        if self.hops > 0
            && !self.proxied
            && !ip.is_empty()
            && is_local_host(ip)
            && !self.may_be_local
        {
            return Some(self.end(Outcome::Failed {
                message: format!("redirected to {} on this machine: refused", self.hop),
                server_down: false,
            }));
        }
        let outcome = match code {
            Some(0) if (300..400).contains(&http) && !location.is_empty() => {
                if self.hops >= MAX_REDIRECTS {
                    Outcome::Failed {
                        message: format!("more than {MAX_REDIRECTS} redirects"),
                        server_down: false,
                    }
                } else {
                    match check_redirect(&self.url, location, &env_value) {
                        Ok(Next::Go(route)) => match self.next_hop(location, route) {
                            Ok(()) => return None,
                            Err(message) => Outcome::Failed {
                                message,
                                server_down: false,
                            },
                        },
                        Ok(Next::Resolve { host, port }) => {
                            match self.resolve(location, host, port) {
                                Ok(()) => return None,
                                // Like a lookup that fails later: the server is paused.
                                Err(why) => Outcome::Failed {
                                    message: format!("redirected to {location}: {why}"),
                                    server_down: true,
                                },
                            }
                        }
                        Err(message) => Outcome::Failed {
                            message,
                            server_down: false,
                        },
                    }
                }
            }
            Some(0) if (200..300).contains(&http) => match self.store() {
                Ok(()) => Outcome::Saved,
                Err(e) => Outcome::Failed {
                    message: format!("cannot store {}: {e}", self.rel.display()),
                    server_down: false,
                },
            },
            Some(0) | Some(22) if http == 404 || http == 410 => Outcome::NotFound,
            Some(0) | Some(22) => Outcome::Failed {
                message: format!("HTTP status {http}"),
                server_down: http >= 500 || http == 0,
            },
            Some(63) => Outcome::Failed {
                message: format!("larger than the limit of {} bytes", max_size()),
                server_down: false,
            },
            Some(28) if Instant::now() + Duration::from_secs(1) >= self.deadline => {
                Outcome::Failed {
                    message: format!(
                        "not complete after {} s, the limit for one download (all redirects included): dropped",
                        max_seconds()
                    ),
                    server_down: false,
                }
            }
            Some(28) => Outcome::Failed {
                message: "stalled".to_string(),
                server_down: true,
            },
            other => Outcome::Failed {
                message: if message.is_empty() {
                    format!("curl exited with {other:?}")
                } else {
                    message
                },
                server_down: true,
            },
        };
        Some(self.end(outcome))
    }

    /// The lookup of the next hop's host has answered (or failed, or timed out): the
    /// next hop starts, or the download ends. A lookup that fails pauses the server like
    /// any failure of it: a dead DNS costs one lookup per pause, not one per module.
    fn lookup_polled(&mut self, answer: Result<Vec<SocketAddr>, String>) -> Option<Outcome> {
        let lookup = self.lookup.take()?;
        let location = lookup.location.as_str();
        let outcome = match answer {
            Err(why) => Outcome::Failed {
                message: format!("redirected to {location}: {why}"),
                server_down: true,
            },
            Ok(addrs) => match check_addrs(location, &lookup.host, lookup.port, &addrs)
                .and_then(|pin| self.next_hop(location, Route::Direct(pin)))
            {
                Ok(()) => return None,
                Err(message) => Outcome::Failed {
                    message,
                    server_down: false,
                },
            },
        };
        Some(self.end(outcome))
    }

    /// Starts looking up the next hop's host; [`Self::poll`] goes on when it answers.
    fn resolve(&mut self, location: &str, host: String, port: u16) -> Result<(), String> {
        self.clear_file()?;
        self.lookup = Some(Lookup::start(location, host, port)?);
        // curl has exited: meanwhile Ctrl-C has only the file to remove.
        crate::signals::untrack(&self.tmp);
        crate::signals::track(&self.tmp, None);
        Ok(())
    }

    /// Empties the file for the next hop: the redirect's own body goes.
    fn clear_file(&mut self) -> Result<(), String> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)).map(drop))
            .map_err(|e| format!("cannot reuse {}: {e}", self.tmp.display()))
    }

    fn next_hop(&mut self, location: &str, route: Route) -> Result<(), String> {
        self.clear_file()?;
        let left = self.deadline.saturating_duration_since(Instant::now());
        let seconds = left.as_secs_f64().ceil() as u64;
        let child = spawn(location, Some(&route), seconds, &self.file).map_err(|e| match e {
            StartError::CurlMissing => "curl went missing".to_string(),
            StartError::Other(m) => m,
        })?;
        crate::signals::untrack(&self.tmp);
        crate::signals::track(&self.tmp, Some(child.id()));
        self.child = child;
        self.hop = location.to_string();
        self.hops += 1;
        self.proxied = route == Route::Proxied;
        self.may_be_local = parse_target(location).is_ok_and(|t| configured_here(&self.url, &t));
        Ok(())
    }

    /// Moves the complete file to its place, through checked folders only.
    fn store(&self) -> std::io::Result<()> {
        let dest = cache::prepare(&self.root, &self.rel)?;
        std::fs::rename(&self.tmp, dest)
    }

    fn end(&mut self, outcome: Outcome) -> Outcome {
        let _ = std::fs::remove_file(&self.tmp);
        crate::signals::untrack(&self.tmp);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_hosts_in_every_spelling() {
        for h in [
            "localhost",
            "LOCALHOST.",
            "a.localhost",
            "127.0.0.1",
            "127.1",
            "0x7f000001",
            "2130706433",
            "0177.0.0.1",
            "0",
            "0.0.0.0",
            "169.254.169.254",
            "::1",
            "::",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_local_host(h), "{h}");
        }
        for h in [
            "symbols.mozilla.org",
            "cafe.be",
            "10.0.0.1",
            "8.8.8.8",
            "2001:db8::1",
        ] {
            assert!(!is_local_host(h), "{h}");
        }
    }

    /// [`check_redirect`] without a proxy, a name looked up here and now (the download
    /// does it on a thread, polled).
    fn check_redirect(base: &str, target: &str) -> Result<Route, String> {
        match super::check_redirect(base, target, &|_| None)? {
            Next::Go(route) => Ok(route),
            Next::Resolve { host, port } => {
                let addrs: Vec<SocketAddr> = (host.as_str(), port)
                    .to_socket_addrs()
                    .map_err(|e| e.to_string())?
                    .collect();
                check_addrs(target, &host, port, &addrs).map(Route::Direct)
            }
        }
    }

    #[test]
    fn redirects_stay_https_and_off_this_machine() {
        let tecken = "https://symbols.mozilla.org/try/x.sym";
        let ok = |t: &str| check_redirect(tecken, t).is_ok();
        assert!(!ok("http://storage.googleapis.com/a/x.sym"));
        assert!(!ok("https://127.0.0.1:8080/admin"));
        assert!(!ok("https://[::1]/x"));
        assert!(!ok("https://user@localhost/x"));
        assert!(!ok("https://localhost/x"));
        assert!(!ok("https://169.254.169.254/latest/meta-data"));
        assert!(!ok("https://0x7f000001/x"));
        assert!(!ok("file:///etc/passwd"));
        // A name is looked up here: `localhost` is loopback whatever it is called.
        let e = check_redirect("http://example.org/x", "http://localhost./y").unwrap_err();
        assert!(e.contains("this machine"), "{e}");
        // Globs, credentials, blanks: refused before any lookup.
        for t in [
            "https://{127.0.0.1:9/secret,example.com/final}",
            "https://example.com/final[1-500]",
            "https://example.com/a{b}",
            "https://[1-3].example.com/",
            "https://example.com\\@127.0.0.1/",
            "https://a@example.com/",
            "https://example.com/a b",
            "https://example.com:99999/",
        ] {
            assert!(!ok(t), "{t}");
        }
        // A loopback server (tests, a local proxy) may redirect to its own host.
        assert_eq!(
            check_redirect("http://127.0.0.1:9/x", "http://127.0.0.1:10/y"),
            Ok(Route::Direct(Vec::new()))
        );
        assert!(check_redirect("http://127.0.0.1:9/x", "http://localhost:10/y").is_err());
        assert!(check_redirect("http://127.0.0.1:9/x", "http://[::1]:10/y").is_err());
        assert_eq!(
            parse_target("https://Host.Example.:8443/x?y#z"),
            Ok(Target {
                host: "host.example".into(),
                port: 8443,
                literal: None
            })
        );
        assert_eq!(
            parse_target("http://[2001:db8::1]/x").map(|t| (t.port, t.literal)),
            Ok((80, Some("2001:db8::1".parse().unwrap())))
        );
    }

    #[test]
    fn proxies_as_curl_picks_them_from_the_environment() {
        fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
            move |k: &str| {
                vars.iter()
                    .find(|(n, v)| *n == k && !v.is_empty())
                    .map(|(_, v)| v.to_string())
            }
        }
        let target = |url: &str| parse_target(url).unwrap();
        let proxied = |vars: &[(&str, &str)], url: &str| {
            let scheme = url.split_once("://").unwrap().0;
            uses_proxy(&env(vars), scheme, &target(url))
        };
        let p = "http://127.0.0.1:3128";
        assert!(!proxied(&[], "http://a.example/"));
        assert!(proxied(&[("http_proxy", p)], "http://a.example/"));
        assert!(!proxied(&[("http_proxy", p)], "https://a.example/"));
        // Only the lowercase one for http (curl's own rule); either for https.
        assert!(!proxied(&[("HTTP_PROXY", p)], "http://a.example/"));
        assert!(proxied(&[("HTTPS_PROXY", p)], "https://a.example/"));
        assert!(proxied(&[("https_proxy", p)], "https://a.example/"));
        assert!(proxied(&[("ALL_PROXY", p)], "http://a.example/"));
        assert!(proxied(&[("all_proxy", p)], "https://a.example/"));
        assert!(!proxied(&[("http_proxy", "")], "http://a.example/"));
        // no_proxy: names and their subdomains, `*`, addresses and networks.
        let np = |list: &str, url: &str| proxied(&[("all_proxy", p), ("no_proxy", list)], url);
        assert!(!np("*", "http://a.example/"));
        assert!(!np("example", "http://a.example/"));
        assert!(!np(" .Example., other", "http://a.example/"));
        assert!(!np("a.example", "http://A.Example./"));
        assert!(np("b.example", "http://a.example/"));
        assert!(np("ample", "http://a.example/"));
        assert!(np("x.a.example", "http://a.example/"));
        assert!(!np("10.0.0.0/8", "http://10.1.2.3/"));
        assert!(np("10.0.0.0/8", "http://11.1.2.3/"));
        assert!(!np("10.1.2.3", "http://10.1.2.3/"));
        assert!(!np("2001:db8::/32", "http://[2001:db8::1]/"));
        assert!(np("2001:db8::/32", "http://[2001:db9::1]/"));
        assert!(np("10.0.0.0/99", "http://10.1.2.3/"));
        assert!(np("", "http://a.example/"));
        // NO_PROXY is read when no_proxy is unset or empty.
        let vars = [
            ("all_proxy", p),
            ("no_proxy", ""),
            ("NO_PROXY", "a.example"),
        ];
        assert!(!proxied(&vars, "http://a.example/"));

        // Through a proxy: no lookup here, no pin, and this machine refused by its name.
        let vars = [("http_proxy", p)];
        let via = env(&vars);
        let check = |t: &str| super::check_redirect("http://symbols.example/x", t, &via);
        assert_eq!(
            check("http://symbols-storage.example/x.sym"),
            Ok(Next::Go(Route::Proxied))
        );
        assert_eq!(check("http://10.0.0.1/x"), Ok(Next::Go(Route::Proxied)));
        for t in [
            "http://localhost:8080/x",
            "http://a.localhost/x",
            "http://127.1/x",
            "http://0x7f000001/x",
            "http://[::1]/x",
            "http://169.254.169.254/latest",
            "http://0/x",
        ] {
            assert!(check(t).is_err(), "{t}");
        }
        // Without one: the name is looked up first.
        assert_eq!(
            super::check_redirect("http://symbols.example/x", "http://s.example:81/y", &|_| {
                None
            }),
            Ok(Next::Resolve {
                host: "s.example".into(),
                port: 81
            })
        );
    }

    #[test]
    fn lookups_answer_off_the_calling_thread_and_past_the_cap_fail_at_once() {
        // The only test that starts lookups: the global count is its own.
        LOOKUPS.fetch_add(MAX_LOOKUPS, Ordering::SeqCst);
        let full = Lookup::start("http://a.example/", "a.example".into(), 80).err();
        LOOKUPS.fetch_sub(MAX_LOOKUPS, Ordering::SeqCst);
        assert!(full.is_some_and(|e| e.contains("already waiting")));
        let lookup = Lookup::start("http://localhost/", "localhost".into(), 80).unwrap();
        let answer = loop {
            match lookup.poll() {
                Some(a) => break a,
                None => std::thread::sleep(WAIT_TICK),
            }
        };
        let addrs = answer.unwrap();
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()));
        // The thread gives its slot back as it ends.
        let t = Instant::now();
        while LOOKUPS.load(Ordering::SeqCst) != 0 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(WAIT_TICK);
        }
        assert_eq!(LOOKUPS.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn the_status_line_is_read_from_the_end_and_cannot_be_forged() {
        let r = read_report("\n@@pss-location https://b.example/x\n@@pss-status 302 1.2.3.4\n");
        assert_eq!(
            (r.http, r.ip, r.location, r.message.as_str()),
            (302, "1.2.3.4", "https://b.example/x", "")
        );
        let r = read_report("curl: (7) Failed to connect\n\n@@pss-location \n@@pss-status 000 \n");
        assert_eq!(
            (r.http, r.ip, r.location, r.message.as_str()),
            (0, "", "", "curl: (7) Failed to connect")
        );
        // A Location that holds a status line of its own: the real one comes last.
        let r = read_report(
            "\n@@pss-location http://a/y @@pss-status 200 8.8.8.8\n@@pss-status 302 127.0.0.1\n",
        );
        assert_eq!(
            (r.http, r.location),
            (302, "http://a/y @@pss-status 200 8.8.8.8")
        );
        // No anchored, well-formed status line last: no status at all.
        for bad in [
            "\n@@pss-location x\n@@pss-status 200 8.8.8.8 extra\n",
            "\n@@pss-location x\n @@pss-status 200 8.8.8.8\n",
            "\n@@pss-status 200 8.8.8.8\nmore\n",
            "\n@@pss-status 20 8.8.8.8\n",
            "\n@@pss-status 200\n",
            "",
        ] {
            assert_eq!(read_report(bad).http, 0, "{bad:?}");
        }
    }

    #[test]
    fn this_machines_own_addresses_are_local() {
        // An address a socket can be bound to is this machine's, loopback or not.
        let Ok(s) = std::net::UdpSocket::bind("0.0.0.0:0") else {
            return;
        };
        if s.connect("192.0.2.1:9").is_ok()
            && let Ok(a) = s.local_addr()
        {
            assert!(is_local_addr(a.ip()), "{a}");
        }
        assert!(!is_local_addr("192.0.2.1".parse().unwrap()));
    }
}

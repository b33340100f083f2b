//! Where a download may be redirected, and how the target is reached: a `Location` is
//! parsed as curl reads it, the local-host rule applied (no host on this machine unless
//! the configured server is here), and its host either left to the environment's proxy or
//! looked up here, off the loop, on a short-lived thread ([`Lookup`]), and pinned
//! (`--resolve`) so that the address checked is the address asked. `curl.rs` runs the hops.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

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

/// A redirect target's name not looked up by then is given up on (the download fails, its
/// server is paused): glibc waits about 10 s per name when DNS never answers, and a
/// working resolver answers in well under this.
pub(super) const LOOKUP_TIME: Duration = Duration::from_secs(5);
/// Lookup threads alive at once, those given up on included (each ends only when
/// `getaddrinfo` returns): past this a lookup fails instead of piling up threads.
pub(super) const MAX_LOOKUPS: usize = 16;

/// Where an http(s) URL goes, as curl reads it.
#[derive(Debug, PartialEq)]
pub(super) struct Target {
    /// Lowercased, without brackets or a final dot.
    pub(super) host: String,
    pub(super) port: u16,
    /// The host written as an address (in any spelling `inet_aton` accepts).
    pub(super) literal: Option<IpAddr>,
}

/// Why a URL is refused before curl is given it ([`parse_target`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum UrlRefused {
    BlanksOrGlobs,
    NotAbsolute,
    NotHttp,
    Backslash,
    BracketGlob,
    Credentials,
    UnclosedBracket,
    NotIpv6,
    AfterIpv6,
    BadPort,
    NoHost,
    HostCharacters,
}

impl std::fmt::Display for UrlRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            UrlRefused::BlanksOrGlobs => "blanks, control characters or curl globs ({}) in it",
            UrlRefused::NotAbsolute => "not an absolute URL",
            UrlRefused::NotHttp => "not http or https",
            UrlRefused::Backslash => "a backslash in it",
            UrlRefused::BracketGlob => "a curl glob ([]) in it",
            UrlRefused::Credentials => "credentials in it",
            UrlRefused::UnclosedBracket => "an unclosed [",
            UrlRefused::NotIpv6 => "a curl glob ([]) in it, not an IPv6 address",
            UrlRefused::AfterIpv6 => "text after an IPv6 address",
            UrlRefused::BadPort => "a port that is not a number from 1 to 65535",
            UrlRefused::NoHost => "no host",
            UrlRefused::HostCharacters => {
                "a host name with characters other than letters, digits, ., - and _"
            }
        })
    }
}

/// Reads the host and port of `url`, refusing what curl could read otherwise than this
/// does: curl globs (`{}`, and `[]` anywhere but around an IPv6 literal), credentials,
/// blanks and control characters, host names with other than letters, digits, `.`, `-`
/// and `_`.
pub(super) fn parse_target(url: &str) -> Result<Target, UrlRefused> {
    if url
        .bytes()
        .any(|b| b.is_ascii_control() || b == b' ' || b == b'{' || b == b'}')
    {
        return Err(UrlRefused::BlanksOrGlobs);
    }
    let (scheme, rest) = url.split_once("://").ok_or(UrlRefused::NotAbsolute)?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(UrlRefused::NotHttp),
    };
    if url.contains('\\') {
        return Err(UrlRefused::Backslash);
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if tail.contains(['[', ']']) {
        return Err(UrlRefused::BracketGlob);
    }
    if authority.contains('@') {
        return Err(UrlRefused::Credentials);
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or(UrlRefused::UnclosedBracket)?;
        let ip: Ipv6Addr = addr.parse().map_err(|_| UrlRefused::NotIpv6)?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or(UrlRefused::AfterIpv6)?),
        };
        (ip.to_string(), port)
    } else {
        if authority.contains(['[', ']']) {
            return Err(UrlRefused::BracketGlob);
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
            .ok_or(UrlRefused::BadPort)?,
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err(UrlRefused::NoHost);
    }
    let literal = match host.parse::<Ipv6Addr>() {
        Ok(v6) => Some(IpAddr::V6(v6)),
        Err(_) => {
            if !host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
            {
                return Err(UrlRefused::HostCharacters);
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
pub(super) fn lenient_ipv4(host: &str) -> Option<Ipv4Addr> {
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

pub(super) fn local_v4(a: Ipv4Addr) -> bool {
    a.is_loopback() || a.is_link_local() || a.is_unspecified() || a.octets()[0] == 0
}

/// Whether an address is this machine or its link: loopback, link-local, unspecified, or
/// one of this machine's own addresses (one a socket can be bound to).
pub(super) fn is_local_addr(ip: IpAddr) -> bool {
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
pub(super) fn configured_here(base: &str, t: &Target) -> bool {
    parse_target(base).is_ok_and(|b| {
        b.host == t.host && (is_local_host(&b.host) || b.literal.is_some_and(is_local_addr))
    })
}

/// An environment variable as curl reads it: unset and empty are the same.
pub(super) fn env_value(name: &str) -> Option<String> {
    std::env::var_os(name)
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| !v.is_empty())
}

/// Whether curl sends a request for `scheme://t` through a proxy, as curl decides it from
/// the environment (`env` reads a variable, see [`env_value`]): `no_proxy`, else
/// `NO_PROXY`, lists the hosts that go direct; otherwise the proxy is `<scheme>_proxy`,
/// then `<SCHEME>_PROXY` (not for http: curl never reads `HTTP_PROXY`, which a CGI
/// request can set), then `all_proxy`, then `ALL_PROXY`.
pub(super) fn uses_proxy(env: &dyn Fn(&str) -> Option<String>, scheme: &str, t: &Target) -> bool {
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
pub(super) fn no_proxy_names(list: &str, t: &Target) -> bool {
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

/// Why a redirect is not followed or its next hop not taken. Its text is the download's
/// message, written where the user sees it.
#[derive(Debug)]
pub(super) enum HopError {
    /// A scheme other than https (or http, when the configured server is http).
    Scheme { target: String, https_only: bool },
    /// The target URL itself is refused.
    Refused { target: String, why: UrlRefused },
    /// The target's host is, or resolves to, an address of this machine.
    LocalAddress {
        target: String,
        host: String,
        ip: IpAddr,
    },
    /// The target's host names this machine (checked by name: a proxy resolves it).
    LocalName { target: String, host: String },
    /// The target's host has no address.
    NoAddress { target: String, host: String },
    /// Too many host lookups are waiting for an answer.
    LookupsBusy { host: String },
    /// The lookup's thread could not start.
    LookupThread { host: String, error: std::io::Error },
    /// The download's file could not be emptied for the next hop.
    Reuse {
        file: std::path::PathBuf,
        error: std::io::Error,
    },
    /// curl could not be started for the next hop.
    Start(String),
}

impl std::fmt::Display for HopError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HopError::Scheme { target, https_only } => write!(
                f,
                "redirected to {target}: only {} is followed",
                if *https_only {
                    "https"
                } else {
                    "http or https"
                }
            ),
            HopError::Refused { target, why } => {
                write!(f, "redirected to {target}: refused, {why}")
            }
            HopError::LocalAddress { target, host, ip } => write!(
                f,
                "redirected to {target}: {host} is {ip}, on this machine: refused"
            ),
            HopError::LocalName { target, host } => {
                write!(f, "redirected to {target}: {host} is this machine: refused")
            }
            HopError::NoAddress { target, host } => {
                write!(f, "redirected to {target}: {host} has no address")
            }
            HopError::LookupsBusy { host } => write!(
                f,
                "cannot look up {host}: {MAX_LOOKUPS} lookups are already waiting for an answer"
            ),
            HopError::LookupThread { host, error } => write!(f, "cannot look up {host}: {error}"),
            HopError::Reuse { file, error } => {
                write!(f, "cannot reuse {}: {error}", file.display())
            }
            HopError::Start(why) => f.write_str(why),
        }
    }
}

/// Whether a redirect from `base` (the URL the user configured, trusted as given) to
/// `target` may be followed, and how: https stays https, no curl globs, and no host on
/// this machine (loopback, link-local, unspecified, its own addresses). A name is looked
/// up before any request and the address checked is pinned ([`Next::Resolve`]), unless
/// the environment sends the target through a proxy (`env`, see [`uses_proxy`]): the
/// proxy resolves names, so only what the name itself says is checked (`localhost`,
/// addresses in every spelling). Only a server configured on this machine may send us to
/// this machine, and only to its own host (another port: a local proxy, the tests).
pub(super) fn check_redirect(
    base: &str,
    target: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Next, HopError> {
    let lower = target.to_ascii_lowercase();
    let https_only = base.to_ascii_lowercase().starts_with("https://");
    if !(lower.starts_with("https://") || (!https_only && lower.starts_with("http://"))) {
        return Err(HopError::Scheme {
            target: target.to_string(),
            https_only,
        });
    }
    let t = parse_target(target).map_err(|why| HopError::Refused {
        target: target.to_string(),
        why,
    })?;
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
            Err(HopError::LocalAddress {
                target: target.to_string(),
                host: t.host,
                ip,
            })
        } else {
            go()
        };
    }
    if proxied {
        return if is_local_host(&t.host) {
            Err(HopError::LocalName {
                target: target.to_string(),
                host: t.host,
            })
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
pub(super) fn check_addrs(
    target: &str,
    host: &str,
    port: u16,
    addrs: &[SocketAddr],
) -> Result<Vec<String>, HopError> {
    if let Some(a) = addrs.iter().find(|a| is_local_addr(a.ip())) {
        return Err(HopError::LocalAddress {
            target: target.to_string(),
            host: host.to_string(),
            ip: a.ip(),
        });
    }
    let Some(first) = addrs.first() else {
        return Err(HopError::NoAddress {
            target: target.to_string(),
            host: host.to_string(),
        });
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
pub(super) static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// One of [`LOOKUPS`], given back when its thread ends (or never starts).
pub(super) struct LookupSlot;

impl Drop for LookupSlot {
    fn drop(&mut self) {
        LOOKUPS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A redirect target's host name looked up on a thread of its own: `getaddrinfo` can be
/// neither bounded nor interrupted, and the server loop must go on answering meanwhile.
/// The download polls it; one given up on is left to end by itself, its answer unread.
pub(super) struct Lookup {
    pub(super) answer: Receiver<std::io::Result<Vec<SocketAddr>>>,
    /// Given up on then.
    pub(super) until: Instant,
    pub(super) location: String,
    pub(super) host: String,
    pub(super) port: u16,
}

impl Lookup {
    pub(super) fn start(location: &str, host: String, port: u16) -> Result<Lookup, HopError> {
        LOOKUPS
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < MAX_LOOKUPS).then_some(n + 1)
            })
            .map_err(|_| HopError::LookupsBusy { host: host.clone() })?;
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
            .map_err(|error| HopError::LookupThread {
                host: host.clone(),
                error,
            })?;
        Ok(Lookup {
            answer,
            until: Instant::now() + LOOKUP_TIME,
            location: location.to_string(),
            host,
            port,
        })
    }

    /// The addresses, or why there are none; `None` while the lookup may still answer.
    pub(super) fn poll(&self) -> Option<Result<Vec<SocketAddr>, String>> {
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

#[cfg(test)]
mod tests;

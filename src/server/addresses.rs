//! Which names a request may give in `Host` (the DNS-rebinding check), and which address
//! the printed URL uses, for the address the server is bound to.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};

/// `ip:port` as a `Host` header and a URL write it (`[v6]:port`, no scope).
pub fn host_port(ip: IpAddr, port: u16) -> String {
    match ip {
        IpAddr::V6(ip) => format!("[{ip}]:{port}"),
        IpAddr::V4(ip) => format!("{ip}:{port}"),
    }
}

/// The `Host` values that name the socket a client connected to: what the client dialled
/// is exactly what it may call us (an IPv4 client of a `::` socket has a mapped address).
pub fn of_connection(local: SocketAddr) -> Vec<String> {
    let mut out = vec![host_port(local.ip(), local.port())];
    if let IpAddr::V6(v6) = local.ip()
        && let Some(v4) = v6.to_ipv4_mapped()
    {
        out.push(host_port(IpAddr::V4(v4), local.port()));
    }
    out
}

/// The machine's host name, lower case, when it is a plain DNS name (a `Host` value to
/// accept when the server is reachable from the network).
pub fn hostname() -> Option<String> {
    let name = system_hostname()?.to_ascii_lowercase();
    let plain = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    plain.then_some(name)
}

#[cfg(unix)]
fn system_hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the pointer and length describe `buf`, writable for the call.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0)?;
    String::from_utf8(buf[..end].to_vec()).ok()
}

#[cfg(windows)]
fn system_hostname() -> Option<String> {
    std::env::var("COMPUTERNAME").ok()
}

#[cfg(not(any(unix, windows)))]
fn system_hostname() -> Option<String> {
    None
}

/// The address other machines reach this one by: the source address the system picks
/// for a route out. `connect` on a UDP socket only chooses it; nothing is sent, and
/// offline (no route) there is none.
pub fn outward(v6: bool) -> Option<IpAddr> {
    let (bind, probe): (SocketAddr, SocketAddr) = if v6 {
        let doc = Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1);
        (
            (Ipv6Addr::UNSPECIFIED, 0).into(),
            (doc, 9).into(), // 2001:db8::/32, for documentation: never routed
        )
    } else {
        (
            (Ipv4Addr::UNSPECIFIED, 0).into(),
            (Ipv4Addr::new(192, 0, 2, 1), 9).into(), // TEST-NET-1: never routed
        )
    };
    let socket = UdpSocket::bind(bind).ok()?;
    socket.connect(probe).ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// Where the URL points for a server bound to `bound`: that address; for all addresses
/// (0.0.0.0, ::), the one other machines reach this one by, else the host name, else
/// loopback (this machine only).
pub fn url_host(bound: SocketAddr) -> String {
    let (ip, port) = (bound.ip(), bound.port());
    if !ip.is_unspecified() {
        return host_port(ip, port);
    }
    let v6 = ip.is_ipv6();
    if let Some(out) = outward(v6).or_else(|| outward(!v6).filter(|_| v6)) {
        return host_port(out, port);
    }
    if let Some(name) = hostname() {
        return format!("{name}:{port}");
    }
    let loopback = if v6 {
        IpAddr::V6(Ipv6Addr::LOCALHOST)
    } else {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    };
    host_port(loopback, port)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        let mapped: SocketAddr = "[::ffff:192.168.1.5]:3000".parse().unwrap();
        assert_eq!(
            of_connection(mapped),
            ["[::ffff:192.168.1.5]:3000", "192.168.1.5:3000"]
        );
        let bound: SocketAddr = "127.0.0.2:3000".parse().unwrap();
        assert_eq!(url_host(bound), "127.0.0.2:3000");
        let any: SocketAddr = "0.0.0.0:3000".parse().unwrap();
        assert!(!url_host(any).starts_with("0.0.0.0"));
    }
}

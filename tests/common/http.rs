//! A small HTTP/1.1 client: one request per connection, the response read to its end.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "response is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// One HTTP/1.1 request on its own connection.
pub fn http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    try_http(addr, method, path, host, headers, body)
        .expect("connection closed before a full HTTP header")
}

/// As [`http`]; `None` when the server closed the connection before a whole head.
pub fn try_http(
    addr: SocketAddr,
    method: &str,
    path: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Option<Response> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    // A server may answer (413) before reading a big body and close; that is fine.
    let _ = s.write_all(body);
    try_read_response(&mut s)
}

/// Reads one response: up to its Content-Length, the end of its chunks, or EOF. It does
/// not wait for the server to close the connection.
pub fn read_response(s: &mut TcpStream) -> Response {
    try_read_response(s).expect("connection closed before a full HTTP header")
}

/// As [`read_response`]; `None` when the connection ends (or fails) before a whole head.
pub fn try_read_response(s: &mut TcpStream) -> Option<Response> {
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let end = loop {
        if let Some(p) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        match s.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    };
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let mut body = raw[end + 4..].to_vec();
    let mut fill = |body: &mut Vec<u8>, done: &dyn Fn(&[u8]) -> bool| {
        while !done(body) {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&buf[..n]),
            }
        }
    };
    if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        fill(&mut body, &|b| b.len() >= len);
        body.truncate(len);
    } else if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        fill(&mut body, &|b| b.ends_with(b"0\r\n\r\n"));
        let mut out = Vec::new();
        let mut rest = &body[..];
        loop {
            let nl = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let n = usize::from_str_radix(std::str::from_utf8(&rest[..nl]).unwrap().trim(), 16)
                .unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&rest[nl + 2..nl + 2 + n]);
            rest = &rest[nl + 2 + n + 2..];
        }
        body = out;
    } else if status != 204 && status != 304 {
        fill(&mut body, &|_| false);
    }
    Some(Response {
        status,
        headers,
        body,
    })
}

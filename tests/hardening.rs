//! Hostile clients cannot wedge, crash or exhaust the server: each attack runs while a
//! normal request is made, and the normal request must still be answered.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::*;

fn connect(server: &Server) -> TcpStream {
    let s = TcpStream::connect(server.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

/// The status of the first response on `s` (or 0 when it is closed without one).
fn status_of(s: &mut TcpStream) -> u16 {
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match s.read(&mut b) {
            Ok(1) => head.push(b[0]),
            _ => break,
        }
    }
    String::from_utf8_lossy(&head)
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[cfg(target_os = "linux")]
fn open_fds(server: &Server) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", server.pid()))
        .unwrap()
        .count()
}

#[test]
fn expect_continue_without_a_body_does_not_wedge() {
    let server = Server::start(&[]);
    // Foreign Host: refused from the head, no 100 Continue, the body never awaited.
    let mut foreign = connect(&server);
    write!(
        foreign,
        "POST {} HTTP/1.1\r\nHost: evil.example:80\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n",
        server.path("/symbolicate/v5")
    )
    .unwrap();
    assert_eq!(status_of(&mut foreign), 403);
    // Right Host: 100 Continue, then the body never comes; others are served meanwhile.
    let mut right = connect(&server);
    write!(
        right,
        "POST {} HTTP/1.1\r\nHost: {}\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n",
        server.path("/symbolicate/v5"),
        server.host()
    )
    .unwrap();
    assert_eq!(status_of(&mut right), 100);
    let t = Instant::now();
    server.assert_alive();
    assert!(t.elapsed() < Duration::from_secs(5));
    // At the request deadline it is answered 408 and closed (its thread once waited
    // forever here for the writer that had sent the 100 Continue).
    assert_eq!(status_of(&mut right), 408);
}

#[test]
fn huge_announced_bodies_are_refused_unread_and_leak_nothing() {
    let server = Server::start(&[]);
    server.assert_alive();
    #[cfg(target_os = "linux")]
    let before = open_fds(&server);
    let mut conns = Vec::new();
    for _ in 0..50 {
        let mut s = connect(&server);
        write!(
            s,
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Length: 2000000000\r\n\r\nxx",
            server.path("/symbolicate/v5"),
            server.host()
        )
        .unwrap();
        assert_eq!(status_of(&mut s), 413);
        conns.push(s);
    }
    server.assert_alive();
    drop(conns);
    #[cfg(target_os = "linux")]
    {
        // Descriptors come back once the clients are gone (poll: closing is asynchronous).
        let t = Instant::now();
        while open_fds(&server) > before + 2 && t.elapsed() < Duration::from_secs(10) {
            std::thread::yield_now();
        }
        assert!(open_fds(&server) <= before + 2, "descriptors leaked");
    }
}

#[test]
fn oversized_heads_are_431() {
    let server = Server::start(&[]);
    let mut long = connect(&server);
    let line = "x".repeat(1 << 20);
    let _ = write!(
        long,
        "GET / HTTP/1.1\r\nHost: {}\r\nX-Long: {line}\r\n\r\n",
        server.host()
    );
    assert_eq!(status_of(&mut long), 431);
    let mut many = connect(&server);
    let mut head = format!("GET / HTTP/1.1\r\nHost: {}\r\n", server.host());
    for i in 0..1000 {
        head.push_str(&format!("X-{i}: y\r\n"));
    }
    head.push_str("\r\n");
    let _ = many.write_all(head.as_bytes());
    assert_eq!(status_of(&mut many), 431);
    server.assert_alive();
}

#[test]
fn idle_and_trickling_connections_do_not_exhaust_the_server() {
    let server = Server::start(&[]);
    // More idle connections than the cap: the oldest idle ones are closed to make room.
    let idle: Vec<TcpStream> = (0..400).map(|_| connect(&server)).collect();
    // A body trickled byte by byte: cut off at the request deadline, not per byte.
    let mut trickle = connect(&server);
    write!(
        trickle,
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Length: 100000\r\n\r\n",
        server.path("/symbolicate/v5"),
        server.host()
    )
    .unwrap();
    let t = Instant::now();
    server.assert_alive();
    assert!(t.elapsed() < Duration::from_secs(5));
    drop(idle);
    server.assert_alive();
}

#[test]
fn a_client_that_does_not_read_its_answer_holds_up_nobody() {
    // A 40 MB profile, asked for and never read.
    let dir = scratch("hardening-slow-reader");
    let profile = dir.join("big.json");
    let filler = "0".repeat(40 << 20);
    std::fs::write(&profile, format!("{{\"meta\":{{}},\"x\":\"{filler}\"}}")).unwrap();
    let server = Server::start(&[profile.to_str().unwrap()]);
    let mut slow = Vec::new();
    for _ in 0..3 {
        let mut s = connect(&server);
        write!(
            s,
            "GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
            server.path("/profile.json"),
            server.host()
        )
        .unwrap();
        slow.push(s);
    }
    let t = Instant::now();
    server.assert_alive();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "held up {:?}",
        t.elapsed()
    );
}

#[test]
fn a_chunked_body_over_the_limit_is_413() {
    let server = Server::start(&[]);
    let mut s = connect(&server);
    write!(
        s,
        "POST {} HTTP/1.1\r\nHost: {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        server.path("/symbolicate/v5"),
        server.host()
    )
    .unwrap();
    // 65 chunks of 1 MiB: over the 64 MiB limit, which no Content-Length announced.
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..65 {
        if write!(s, "100000\r\n")
            .and_then(|()| s.write_all(&chunk))
            .and_then(|()| write!(s, "\r\n"))
            .is_err()
        {
            break; // answered and closed early: fine
        }
    }
    let _ = write!(s, "0\r\n\r\n");
    assert_eq!(status_of(&mut s), 413);
    server.assert_alive();
}

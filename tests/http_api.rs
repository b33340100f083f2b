//! The HTTP contract (SPEC section 2): token prefix, Host check, CORS, errors, limits;
//! and the server keeps answering after every bad request.

mod common;

use common::*;
use serde_json::json;

fn error_message(r: &Response) -> String {
    r.json()["error"].as_str().unwrap_or_default().to_string()
}

#[test]
fn cors_preflight_and_post() {
    let server = Server::start(&[]);
    let r = http(
        server.addr,
        "OPTIONS",
        &server.path("/symbolicate/v5"),
        &server.host(),
        &[
            ("Origin", "https://profiler.firefox.com"),
            ("Access-Control-Request-Method", "POST"),
            ("Access-Control-Request-Headers", "user-agent, content-type"),
        ],
        b"",
    );
    assert_eq!(r.status, 204);
    assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
    assert_eq!(
        r.header("Access-Control-Allow-Methods"),
        Some("POST, GET, OPTIONS")
    );
    assert_eq!(r.header("Access-Control-Max-Age"), Some("86400"));
    assert_eq!(
        r.header("Access-Control-Allow-Headers"),
        Some("user-agent, content-type")
    );

    // text/plain, as the front-end sends it; no Content-Type needed.
    let r = http(
        server.addr,
        "POST",
        &server.path("/symbolicate/v5"),
        &server.host(),
        &[("Content-Type", "text/plain;charset=UTF-8"), ("Origin", "https://profiler.firefox.com")],
        br#"{"memoryMap": [["x", "0123456789ABCDEF0123456789ABCDEF0"]], "stacks": [[[0, 16], [-1, 32]]]}"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
    let v = r.json();
    let frames = v["results"][0]["stacks"][0].as_array().unwrap();
    assert_eq!(frames[0]["module_offset"], "0x10");
    assert_eq!(frames[0]["module"], "x");
    assert_eq!(frames[1], json!({"frame": 1, "module_offset": "0x20"}));
    assert_eq!(
        v["results"][0]["found_modules"]["x/0123456789ABCDEF0123456789ABCDEF0"],
        false
    );
}

#[test]
fn token_and_host_are_required() {
    let server = Server::start(&[]);
    assert!(server.token.len() >= 32, "token of 128 bits at least");
    // Without the token.
    let r = http(
        server.addr,
        "POST",
        "/symbolicate/v5",
        &server.host(),
        &[],
        b"{}",
    );
    assert_eq!(r.status, 404);
    assert_eq!(r.header("Access-Control-Allow-Origin"), None);
    let r = http(
        server.addr,
        "GET",
        "/wrongtoken/profile.json",
        &server.host(),
        &[],
        b"",
    );
    assert_eq!(r.status, 404);
    assert_eq!(r.header("Access-Control-Allow-Origin"), None);
    // A prefix of the token is not the token.
    let partial = format!("/{}/symbolicate/v5", &server.token[..20]);
    assert_eq!(
        http(server.addr, "POST", &partial, &server.host(), &[], b"{}").status,
        404
    );

    // The index page does not give the token away.
    let r = server.get("/");
    assert_eq!(r.status, 200);
    let page = String::from_utf8_lossy(&r.body);
    assert!(page.contains("profiler-symbol-server"));
    assert!(!page.contains(&server.token));

    // DNS rebinding: a foreign Host is refused even with the right token.
    let port = server.addr.port();
    let r = http(
        server.addr,
        "POST",
        &server.path("/symbolicate/v5"),
        &format!("evil.example:{port}"),
        &[],
        br#"{"memoryMap": [], "stacks": []}"#,
    );
    assert!(r.status == 403 || r.status == 400, "status {}", r.status);
    assert!(r.json()["error"].as_str().unwrap().contains("Host"));
    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let r = http(
            server.addr,
            "POST",
            &server.path("/symbolicate/v5"),
            &host,
            &[],
            br#"{"memoryMap": [], "stacks": []}"#,
        );
        assert_eq!(r.status, 200, "Host {host}");
    }
    // Right host name, wrong port.
    let r = http(
        server.addr,
        "GET",
        "/",
        &format!("localhost:{}", port.wrapping_add(1)),
        &[],
        b"",
    );
    assert_eq!(r.status, 403);
    server.assert_alive();
}

#[test]
fn bad_requests_get_clear_errors_and_the_server_goes_on() {
    let server = Server::start(&[]);
    let cases: &[(&[u8], &str)] = &[
        (b"{not json", "invalid JSON"),
        (br#"{"stacks": [[[0, 1]]]}"#, "memoryMap"),
        (br#"{"memoryMap": [["a", "0123456789ABCDEF0123456789ABCDEF0"]], "stacks": [[[3, 1]]]}"#, "past the memoryMap"),
        (br#"{"memoryMap": [["a", "0123456789ABCDEF0123456789ABCDEF0"]], "stacks": [[[0, "0x10"]]]}"#, "moduleOffset"),
        (br#"{"jobs": [{"memoryMap": [["a", "0123456789ABCDEF0123456789ABCDEF0"]], "stacks": [[[0, -5]]]}]}"#, "jobs[0].stacks[0][0]"),
    ];
    for (body, needle) in cases {
        let r = server.post("/symbolicate/v5", body);
        assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(body));
        assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
        let msg = error_message(&r);
        assert!(msg.contains(needle), "{msg:?} should mention {needle:?}");
        server.assert_alive();
    }
    // Unknown API path under the prefix.
    let r = server.post("/symbolicate/v9", b"{}");
    assert_eq!(r.status, 404);
    assert!(error_message(&r).contains("/symbolicate/v9"));
    server.assert_alive();
    // Profile asked of a server that has none.
    assert_eq!(server.get(&server.path("/profile.json")).status, 404);
    server.assert_alive();
}

#[test]
fn oversized_body_is_413() {
    let server = Server::start(&["--read-timeout", "1"]);
    // Announced length over the 64 MiB limit: refused before reading it.
    let mut s = std::net::TcpStream::connect(server.addr).unwrap();
    use std::io::Write;
    write!(
        s,
        "POST {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        server.path("/symbolicate/v5"),
        server.host(),
        65u64 << 20
    )
    .unwrap();
    let r = read_response(&mut s);
    assert_eq!(r.status, 413);
    assert!(error_message(&r).contains("MiB"));
    drop(s);
    server.assert_alive();

    // A body that really is that big: the client gets the 413 once it has sent it.
    let big = vec![b' '; (64 << 20) + 10];
    let r = server.post("/symbolicate/v5", &big);
    assert_eq!(r.status, 413);
    server.assert_alive();

    // An announced length no buffer could hold must not bring the server down.
    for len in [1u64 << 40, u64::MAX / 2] {
        let mut s = std::net::TcpStream::connect(server.addr).unwrap();
        write!(
            s,
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Length: {len}\r\n\r\n{{",
            server.path("/symbolicate/v5"),
            server.host()
        )
        .unwrap();
        assert_eq!(read_response(&mut s).status, 413);
        server.assert_alive();
    }
}

#[test]
fn a_stalled_client_does_not_wedge_the_server() {
    let server = Server::start(&["--read-timeout", "1"]);
    // Announces a body and never sends it; the server must keep serving others.
    let mut stalled = std::net::TcpStream::connect(server.addr).unwrap();
    use std::io::Write;
    write!(
        stalled,
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Length: 5000\r\n\r\n{{\"jobs\"",
        server.path("/symbolicate/v5"),
        server.host()
    )
    .unwrap();
    // A half-sent request line, also left open.
    let mut half = std::net::TcpStream::connect(server.addr).unwrap();
    write!(half, "GET /").unwrap();
    // The stalled body is read in the loop; its read times out and the loop goes on.
    server.assert_alive();
    let r = read_response(&mut stalled);
    assert!(r.status == 400 || r.status == 408, "status {}", r.status);
    drop(half);
    server.assert_alive();
}

/// A server started with `args` (and `--no-open -P 0`): the child, its stderr as it comes,
/// and the server URL (`http://HOST:PORT/TOKEN`) from the printed profiler URL.
fn spawn_server(
    args: &[&str],
) -> (
    common::Reaped,
    std::sync::Arc<std::sync::Mutex<String>>,
    String,
) {
    use std::io::BufRead;
    let mut child = common::Reaped::spawn(
        std::process::Command::new(BIN)
            .args(["load", "--no-open", "-P", "0"])
            .args(args)
            .env_remove("PROFILER_URL")
            .env_remove("DEBUGINFOD_URLS")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    );
    let stderr = collect_stderr(&mut child);
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let enc = line
        .trim()
        .split("symbolServer=")
        .nth(1)
        .unwrap_or_else(|| {
            panic!("no URL: {line:?}; {}", stderr.lock().unwrap());
        });
    let base = enc.replace("%3A", ":").replace("%2F", "/");
    (child, stderr, base)
}

/// Waits (polling, 10 s at most) until the server's stderr holds every one of `needles`.
fn wait_for_log(stderr: &std::sync::Mutex<String>, needles: &[&str]) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = stderr.lock().unwrap().clone();
        if needles.iter().all(|n| text.contains(n)) || std::time::Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_server_on_every_address_takes_the_address_it_is_reached_by() {
    let (mut child, stderr, base) = spawn_server(&["--address", "0.0.0.0"]);
    let hostport = base
        .strip_prefix("http://")
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let token = base.rsplit('/').next().unwrap().to_string();
    assert!(!hostport.starts_with("0.0.0.0"), "unreachable URL {base}");
    let port: u16 = hostport.rsplit(':').next().unwrap().parse().unwrap();
    let body = br#"{"memoryMap": [], "stacks": [[]]}"#;
    let post = |addr: std::net::SocketAddr, host: &str| {
        http(
            addr,
            "POST",
            &format!("/{token}/symbolicate/v5"),
            host,
            &[],
            body,
        )
        .status
    };
    let loopback: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    // The URL's own address (the machine's outward address, or its name).
    if let Ok(addr) = hostport.parse::<std::net::SocketAddr>() {
        assert_eq!(post(addr, &hostport), 200, "{}", stderr.lock().unwrap());
    } else {
        assert_eq!(post(loopback, &hostport), 200, "{}", stderr.lock().unwrap());
    }
    // Any other address of the machine, named as the client reached it.
    if cfg!(target_os = "linux") {
        let alias: std::net::SocketAddr = ([127, 0, 0, 2], port).into();
        assert_eq!(post(alias, &format!("127.0.0.2:{port}")), 200);
    }
    // The machine's name.
    if let Ok(name) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        assert_eq!(post(loopback, &format!("{}:{port}", name.trim())), 200);
    }
    // A name that is not this machine's is still refused (DNS rebinding).
    assert_eq!(post(loopback, &format!("evil.example:{port}")), 403);
    let log = wait_for_log(&stderr, &["Reachable from other machines"]);
    assert!(log.contains("Reachable from other machines"), "{log}");
    assert!(!log.contains(&token), "{log}");
    let _ = child.kill();
    let _ = child.wait();

    // A loopback alias: the URL uses it, and requests naming it pass.
    if cfg!(target_os = "linux") {
        let (mut child, _stderr, base) = spawn_server(&["--address", "127.0.0.2"]);
        assert!(base.starts_with("http://127.0.0.2:"), "{base}");
        let hostport = base[7..].split('/').next().unwrap();
        let token = base.rsplit('/').next().unwrap();
        let addr: std::net::SocketAddr = hostport.parse().unwrap();
        let r = http(
            addr,
            "POST",
            &format!("/{token}/symbolicate/v5"),
            hostport,
            &[],
            body,
        );
        assert_eq!(r.status, 200);
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn every_request_is_logged_with_its_status_and_without_the_token() {
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example/profile.json");
    let (mut child, stderr, base) = spawn_server(&["--address", "127.0.0.1", profile]);
    let addr: std::net::SocketAddr = base[7..].split('/').next().unwrap().parse().unwrap();
    let token = base.rsplit('/').next().unwrap();
    let host = addr.to_string();
    let api = format!("/{token}/symbolicate/v5");
    assert_eq!(
        http(addr, "POST", &api, &host, &[], b"{not json").status,
        400
    );
    let foreign = format!("evil.example:{}", addr.port());
    assert_eq!(http(addr, "POST", &api, &foreign, &[], b"{}").status, 403);
    assert_eq!(
        http(addr, "GET", "/nothing/here", &host, &[], b"").status,
        404
    );
    let profile_path = format!("/{token}/profile.json");
    assert_eq!(
        http(addr, "GET", &profile_path, &host, &[], b"").status,
        200
    );
    let size = std::fs::metadata(profile).unwrap().len();
    let lines = [
        "POST /…/symbolicate/v5 400: 9 bytes in, ".to_string(),
        "POST /…/symbolicate/v5 403: 0 bytes in, ".to_string(),
        "(Host: evil.example:".to_string(),
        "GET /nothing/here 404: 0 bytes in".to_string(),
        format!("GET /…/profile.json 200: 0 bytes in, {size} out"),
    ];
    let needles: Vec<&str> = lines.iter().map(String::as_str).collect();
    let log = wait_for_log(&stderr, &needles);
    for n in &needles {
        assert!(log.contains(n), "{n:?} not logged:\n{log}");
    }
    assert!(!log.contains(token), "the token was logged:\n{log}");
    let _ = child.kill();
    let _ = child.wait();
}

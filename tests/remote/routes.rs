//! How a redirect's target is reached: through the environment's proxy (names left to the
//! proxy), or looked up here, off the server loop, when DNS never answers.

use super::*;
use crate::hostile::query_one;

#[cfg(target_os = "linux")]
use std::net::UdpSocket;
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

/// The proxy variables curl reads, emptied (curl takes empty for unset), so that the
/// developer's own settings reach no test server; `http_proxy` then as given.
fn proxy_env(http_proxy: &str) -> Vec<(&'static str, String)> {
    let mut env: Vec<(&'static str, String)> = [
        "https_proxy",
        "HTTPS_PROXY",
        "all_proxy",
        "ALL_PROXY",
        "no_proxy",
        "NO_PROXY",
    ]
    .into_iter()
    .map(|k| (k, String::new()))
    .collect();
    env.push(("http_proxy", http_proxy.to_string()));
    env
}

#[test]
fn redirects_through_a_proxy_on_this_machine_are_followed_and_still_kept_off_it() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-proxy");
    let modules = sym_modules();
    let m = &modules[0];
    let body = sym_text(m).into_bytes();
    // A service on this machine a redirect must not reach, even through the proxy.
    let secret = Fake::start(|_: &str| Reply::Body(b"secret".to_vec()));
    let secret_port = secret.addr.port();
    // The proxy answers the absolute-form requests itself: the configured server (a name
    // only the proxy knows) redirects to storage (another), which has the file.
    let proxy = Fake::start(move |target: &str| {
        let Some(path) = target.strip_prefix("http://symbols.example/") else {
            return match target {
                "http://symbols-storage.example/x.sym" => Reply::Body(body.clone()),
                _ => Reply::NotFound,
            };
        };
        Reply::Redirect(match path.split('/').next().unwrap_or("") {
            "m0.so" => format!("http://localhost:{secret_port}/secret"),
            "m1.so" => format!("http://127.1:{secret_port}/secret"),
            "m2.so" => format!("http://[::1]:{secret_port}/secret"),
            "m3.so" => format!("http://a.localhost:{secret_port}/secret"),
            _ => "http://symbols-storage.example/x.sym".to_string(),
        })
    });
    let mut env = proxy_env(&proxy.url());
    env.push(("XDG_CACHE_HOME", dir.join("xdg").display().to_string()));
    let args = [
        "--breakpad-symbol-server".to_string(),
        "http://symbols.example".to_string(),
    ];
    let (a, stderr) = query_one(&args, &env, m.name, m.id, m.frames[0].0);
    assert_eq!(
        a["results"][0]["stacks"][0][0]["function"],
        json!(m.frames[0].1),
        "{stderr}"
    );
    assert_eq!(proxy.count("http://symbols-storage.example/x.sym"), 1);
    // This machine by name or address, in any spelling: refused before any request.
    for i in 0..4 {
        let (a, stderr) = query_one(
            &args,
            &env,
            &format!("m{i}.so"),
            "0123456789ABCDEF0123456789ABCDEF0",
            0x10,
        );
        assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
        assert!(stderr.contains("refused"), "m{i}.so: {stderr}");
    }
    assert_eq!(proxy.count("secret"), 0, "{:?}", proxy.requests());
    assert!(secret.requests().is_empty());
    assert!(partial_files(&dir.join("xdg")).is_empty());
}

/// Why `unshare -m` with a bind-mounted resolv.conf cannot run here, if it cannot.
#[cfg(target_os = "linux")]
fn no_private_resolver() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: no mount namespace for a resolver of the test's own".into());
    }
    let ok = Command::new("unshare")
        .args(["-m", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (!ok).then(|| "`unshare -m` is missing or not allowed".into())
}

#[cfg(target_os = "linux")]
#[test]
fn a_redirect_to_a_name_dns_never_answers_holds_up_no_other_request() {
    if !have_curl() {
        return;
    }
    if let Some(why) = no_private_resolver() {
        common::skip(&why, true);
        return;
    }
    // The server's resolver asks here, and nothing ever answers.
    let dns = match UdpSocket::bind("127.0.0.77:53") {
        Ok(s) => s,
        Err(e) => {
            common::skip(&format!("cannot bind 127.0.0.77:53: {e}"), true);
            return;
        }
    };
    let dir = scratch("remote-dns-stall");
    let resolv = dir.join("resolv.conf");
    std::fs::write(
        &resolv,
        "nameserver 127.0.0.77\noptions timeout:5 attempts:2\n",
    )
    .unwrap();
    let front =
        Fake::start(|target: &str| Reply::Redirect(format!("http://stalls.example{target}")));
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let mut env = proxy_env("");
    env.push(("XDG_CACHE_HOME", dir.join("cache").display().to_string()));
    let server = Arc::new(Server::launch(common::Launch {
        args: vec![
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            front.url(),
        ],
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
        // Its own mount namespace, where /etc/resolv.conf is the test's.
        wrapper: [
            "unshare",
            "-m",
            "sh",
            "-c",
            "mount --bind \"$0\" /etc/resolv.conf && exec \"$@\"",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([resolv.display().to_string()])
        .collect(),
        ..common::Launch::default()
    }));
    let map: Vec<(String, String)> = (0..4)
        .map(|i| {
            (
                format!("m{i}.so"),
                "0123456789ABCDEF0123456789ABCDEF0".to_string(),
            )
        })
        .collect();
    let waiting = {
        let server = server.clone();
        std::thread::spawn(move || {
            let t = Instant::now();
            let offsets: Vec<(usize, u64)> = (0..map.len()).map(|i| (i, 0x10)).collect();
            (server.symbolicate(&map, &offsets), t.elapsed())
        })
    };
    // A query on the wire: a redirect's name is being looked up.
    dns.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut buf = [0u8; 512];
    let got = dns.recv_from(&mut buf);
    assert!(got.is_ok(), "no DNS query came: {}", server.stderr());
    let t = Instant::now();
    let r = server.get("/");
    let took = t.elapsed();
    eprintln!(
        "GET / answered in {took:?} (status {}) while DNS stalled",
        r.status
    );
    // Answered while the request behind the lookup still waits on it: not after it.
    assert!(
        !waiting.is_finished(),
        "GET / waited {took:?} on a lookup: {}",
        server.stderr()
    );
    let (a, took) = waiting.join().unwrap();
    eprintln!("the request needing the redirects answered after {took:?}");
    assert!(
        frames(&a).iter().all(|f| f.get("function").is_none()),
        "{a}"
    );
    // One lookup's time (5 s), then the server is paused: not one per module in a row.
    // A wall-clock bound on purpose: the claim is the time, 4 lookups in a row take 20 s.
    assert!(took < Duration::from_secs(20), "{took:?}");
    let server = Arc::try_unwrap(server).ok().unwrap();
    let (code, stderr) = server.interrupt_with_stderr();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("no answer looking up stalls.example in 5 s"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("not asked again for").count(), 1, "{stderr}");
    assert!(partial_files(&dir.join("cache")).is_empty());
}

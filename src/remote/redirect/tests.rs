use super::*;
use std::net::ToSocketAddrs;

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
    match super::check_redirect(base, target, &|_| None).map_err(|e| e.to_string())? {
        Next::Go(route) => Ok(route),
        Next::Resolve { host, port } => {
            let addrs: Vec<SocketAddr> = (host.as_str(), port)
                .to_socket_addrs()
                .map_err(|e| e.to_string())?
                .collect();
            check_addrs(target, &host, port, &addrs)
                .map(Route::Direct)
                .map_err(|e| e.to_string())
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
    let check = |t: &str| {
        super::check_redirect("http://symbols.example/x", t, &via).map_err(|e| e.to_string())
    };
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
        })
        .map_err(|e| e.to_string()),
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
    assert!(full.is_some_and(|e| e.to_string().contains("already waiting")));
    let lookup = Lookup::start("http://localhost/", "localhost".into(), 80).unwrap();
    let answer = loop {
        match lookup.poll() {
            Some(a) => break a,
            None => std::thread::sleep(crate::remote::curl::WAIT_TICK),
        }
    };
    let addrs = answer.unwrap();
    assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()));
    // The thread gives its slot back as it ends.
    let t = Instant::now();
    while LOOKUPS.load(Ordering::SeqCst) != 0 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(crate::remote::curl::WAIT_TICK);
    }
    assert_eq!(LOOKUPS.load(Ordering::SeqCst), 0);
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

//! The secret token: on no command line and in no log line, drawn from the system's
//! random source.

mod common;

use std::io::Write;
use std::net::TcpStream;
#[cfg(unix)]
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Waits (polling) for `cond`, at most `limit`.
fn wait_for(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let t = Instant::now();
    while !cond() {
        if t.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

#[cfg(unix)]
/// The token in a profiler URL (`…symbolServer=http%3A%2F%2F…%2F<token>`).
fn token_of(url: &str) -> String {
    let enc = url.split("symbolServer=").nth(1).expect("symbolServer");
    enc.rsplit("%2F").next().unwrap().to_string()
}

#[cfg(unix)]
#[test]
fn the_browser_gets_a_private_file_and_never_the_token() {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    let dir = scratch("token-browser");
    let run = dir.join("run");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    // A browser that records its command line (written whole, then renamed).
    let browser = dir.join("fake-browser");
    std::fs::write(
        &browser,
        "#!/bin/sh\nd=$(dirname \"$0\")\nprintf '%s\\n' \"$0\" \"$@\" > \"$d/argv.part\"\nmv \"$d/argv.part\" \"$d/argv\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let profile = dir.join("p.json");
    std::fs::write(&profile, r#"{"meta":{},"libs":[],"threads":[]}"#).unwrap();
    let mut child = common::Reaped::spawn(
        Command::new(BIN)
            .args(["load", "-P", "0", "--address", "127.0.0.1"])
            .arg(&profile)
            .env("BROWSER", &browser)
            .env("XDG_RUNTIME_DIR", &run)
            .env("TMPDIR", &tmp)
            .env_remove("PROFILER_URL")
            .env_remove("DEBUGINFOD_URLS")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let stderr = collect_stderr(&mut child);
    let argv_file = dir.join("argv");
    let started = wait_for(Duration::from_secs(20), || argv_file.exists());
    if !started {
        let _ = child.kill();
        panic!(
            "the browser was not started; stderr: {}",
            stderr.lock().unwrap()
        );
    }
    let argv = std::fs::read_to_string(&argv_file).unwrap();
    let args: Vec<&str> = argv.lines().collect();
    assert_eq!(args.len(), 2, "{argv}");
    let page = Path::new(args[1]);
    // In the user's runtime folder (Linux) or temporary folder, readable by the user alone.
    let home = if cfg!(target_os = "linux") {
        &run
    } else {
        &tmp
    };
    assert_eq!(page.parent(), Some(home.as_path()), "{argv}");
    let mode = std::fs::metadata(page).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // It leads to the profiler URL; the token is in it and in nothing else.
    let html = std::fs::read_to_string(page).unwrap();
    let url = html
        .split("location.replace(\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("a redirect");
    assert!(
        url.starts_with("https://profiler.firefox.com/from-url/"),
        "{url}"
    );
    assert!(
        html.contains(&format!("url={url}")),
        "no meta refresh: {html}"
    );
    let token = token_of(url);
    assert_eq!(token.len(), 32, "{url}");
    assert!(!argv.contains(&token), "token on the command line: {argv}");
    // The URL works.
    let base = url.split("symbolServer=").nth(1).unwrap();
    let hostport = base
        .trim_start_matches("http%3A%2F%2F")
        .split("%2F")
        .next()
        .unwrap();
    let addr: std::net::SocketAddr = hostport.replace("%3A", ":").parse().unwrap();
    let r = http(
        addr,
        "GET",
        &format!("/{token}/profile.json"),
        &addr.to_string(),
        &[],
        b"",
    );
    assert_eq!(r.status, 200);
    // Ctrl-C: the file goes with the server.
    // SAFETY: kill(2) on the child this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let exited = wait_for(Duration::from_secs(10), || {
        child.try_wait().unwrap().is_some()
    });
    if !exited {
        let _ = child.kill();
        panic!("the server did not stop");
    }
    assert!(!page.exists(), "{} left behind", page.display());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, "", "stdout without --no-open");
    // The last line (the stderr thread reads it as it comes).
    wait_for(Duration::from_secs(5), || {
        stderr.lock().unwrap().contains("Stopped.")
    });
    let log = stderr.lock().unwrap().clone();
    assert!(!log.contains(&token), "token in the log: {log}");
    assert!(log.contains("Opening the profiler"), "{log}");
}

#[test]
fn a_failed_answer_is_logged_without_the_token() {
    // A profile bigger than the socket buffers of both ends.
    let dir = scratch("token-log");
    let profile = dir.join("big.json");
    let filler = "0".repeat(32 << 20);
    std::fs::write(&profile, format!("{{\"meta\":{{}},\"x\":\"{filler}\"}}")).unwrap();
    let server = Server::start(&[profile.to_str().unwrap()]);
    // Asked for and never read: the write times out, and that failure is logged.
    let mut s = TcpStream::connect(server.addr).unwrap();
    write!(
        s,
        "GET {} HTTP/1.1\r\nHost: {}\r\n\r\n",
        server.path("/profile.json"),
        server.host()
    )
    .unwrap();
    let logged = wait_for(Duration::from_secs(15), || {
        server.stderr().contains("sending a response to")
    });
    let log = server.stderr();
    assert!(logged, "no failure logged: {log}");
    assert!(!log.contains(&server.token), "token in the log: {log}");
    assert!(
        log.contains("sending a response to /…/profile.json failed"),
        "{log}"
    );
    drop(s);
}

/// The children of `pid` (Linux: `/proc/PID/task/*/children`).
#[cfg(target_os = "linux")]
fn traced_children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
    {
        let Ok(task) = task else { continue };
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(
            text.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    out
}

/// The token comes from getrandom(2) on Linux, not from a file: seen with strace when it
/// is installed and allowed to trace.
#[cfg(target_os = "linux")]
#[test]
fn the_token_comes_from_getrandom() {
    let dir = scratch("token-strace");
    let trace = dir.join("trace");
    let spawned = Command::new("strace")
        .args(["-f", "-e", "trace=open,openat,getrandom", "-o"])
        .arg(&trace)
        .arg(BIN)
        .args(["load", "--no-open", "-P", "0", "--address", "127.0.0.1"])
        .env_remove("PROFILER_URL")
        .env_remove("DEBUGINFOD_URLS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let Ok(child) = spawned else {
        common::skip("strace is not installed", false);
        return;
    };
    let mut child = common::Reaped::from(child);
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let _ = std::io::BufRead::read_line(&mut out, &mut line);
    // Killing strace would leave the server it traced running: end the server (its
    // child) first, then strace, which exits when its tracee does.
    for pid in traced_children(child.id()) {
        common::signal(pid, libc::SIGKILL);
    }
    drop(child);
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    if !line.contains("symbolServer=") || !text.contains("open") {
        common::skip(&format!("strace cannot trace here ({line:?})"), false);
        return;
    }
    assert!(
        !text.contains("/dev/urandom") && !text.contains("/dev/random"),
        "a random device was opened:\n{text}"
    );
    // 16 bytes with no flags (std's own hash seeds ask with GRND_INSECURE).
    assert!(
        text.lines()
            .any(|l| l.contains("getrandom(") && l.contains(", 16, 0) = 16")),
        "no getrandom for the token:\n{text}"
    );
}

#[test]
fn only_the_exact_token_opens_the_prefix() {
    let server = Server::start(&[]);
    let t = &server.token;
    let mut near = t.clone();
    near.replace_range(..1, if t.starts_with('a') { "b" } else { "a" });
    for path in [
        format!("/{near}/symbolicate/v5"),
        format!("/{}/symbolicate/v5", &t[..31]),
        format!("/{t}0/symbolicate/v5"),
        format!("/{}/symbolicate/v5", t.to_uppercase()),
    ] {
        if path == format!("/{t}/symbolicate/v5") {
            continue; // an all-digit token has no upper case
        }
        let r = http(server.addr, "POST", &path, &server.host(), &[], b"{}");
        assert_eq!(r.status, 404, "{path}");
    }
    server.assert_alive();
}

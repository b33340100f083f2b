//! Shared by the integration tests: the corpus, the real binary as a server, a small
//! HTTP client, and the SPEC's rules for comparing an answer with the ground truth.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

pub const BIN: &str = env!("CARGO_BIN_EXE_profiler-symbol-server");

thread_local! {
    /// The corpus the current test reads (see [`with_shared_corpus`]).
    static ROOT: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

/// The corpus with ground truth the tests compare with: the project's own mini corpus
/// (`fixtures/corpus`, made by `scripts/make-fixtures`), unless a test runs under
/// [`with_shared_corpus`].
pub fn corpus() -> PathBuf {
    if let Some(p) = ROOT.with(|r| r.borrow().clone()) {
        return p;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus")
}

/// Says that a test skipped (some of) its work, on the real stderr: the harness captures
/// `eprintln!` of passing tests, so a skip would otherwise be invisible. `ci_installs`:
/// the missing piece is one `.ci/run` installs, so under `CI=1` the skip is a failure.
pub fn skip(why: &str, ci_installs: bool) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {why}");
    if ci_installs && std::env::var_os("CI").is_some_and(|v| v == "1") {
        panic!("{why}, although .ci/run installs it: CI must not skip this");
    }
}

/// A `python3` command, or `None` (said as a skip) when there is no Python 3 here.
pub fn python3() -> Option<Command> {
    let ok = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip("python3 is not installed", true);
        return None;
    }
    Some(Command::new("python3"))
}

/// Runs `test` against `../shared/corpus` when it is beside the checkout (an extra:
/// bigger inputs and third-party files); says it was skipped otherwise.
pub fn with_shared_corpus(test: fn()) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if !p.is_dir() {
        skip(
            &format!(
                "{} is not there (the shared corpus is an extra)",
                p.display()
            ),
            false,
        );
        return;
    }
    ROOT.with(|r| *r.borrow_mut() = Some(p.canonicalize().unwrap()));
    test();
    ROOT.with(|r| *r.borrow_mut() = None);
}

/// The debug ID of a corpus case, from its truth file (e.g. `elf/libmathlib.so`).
pub fn case_id(case: &str) -> String {
    Truth::load(&corpus().join(format!("truth/{case}.truth.json"))).breakpad_id()
}

/// A profile of the corpus's `fixtures/firefox-profiler` (the shared corpus) or its
/// stand-in of the same shape in `profiles/` (the project's own).
pub fn profiler_fixture(name: &str) -> PathBuf {
    let shared = corpus().join("fixtures/firefox-profiler").join(name);
    if shared.exists() {
        return shared;
    }
    let own = match name {
        "gecko-2.json" => "gecko-with-subprocess.json",
        "unsymbolicated.json" => "processed-unsymbolicated.json",
        other => other,
    };
    corpus().join("profiles").join(own)
}

/// Everything a child writes on stderr, gathered by a thread as it comes (so the child
/// never blocks on a full pipe).
pub fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    collect_stderr_joinable(child).0
}

/// As [`collect_stderr`], with the gathering thread: joined once the child has exited,
/// everything it wrote is in the string (no race with the thread's last read).
pub fn collect_stderr_joinable(
    child: &mut Child,
) -> (Arc<Mutex<String>>, std::thread::JoinHandle<()>) {
    let stderr = Arc::new(Mutex::new(String::new()));
    let sink = stderr.clone();
    let mut pipe = child.stderr.take().unwrap();
    let thread = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    (stderr, thread)
}

/// A child process that is killed and reaped when dropped, also when the test panics:
/// no test leaves a server of ours running.
pub struct Reaped(Option<Child>);

impl Reaped {
    pub fn spawn(cmd: &mut Command) -> Reaped {
        Reaped(Some(cmd.spawn().unwrap_or_else(|e| {
            panic!("cannot start {:?}: {e}", cmd.get_program())
        })))
    }

    /// Waits for the child to end by itself; its output.
    pub fn wait_with_output(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl From<Child> for Reaped {
    fn from(c: Child) -> Reaped {
        Reaped(Some(c))
    }
}

impl std::ops::Deref for Reaped {
    type Target = Child;
    fn deref(&self) -> &Child {
        self.0.as_ref().unwrap()
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Sends `sig` to a child of this test.
#[cfg(unix)]
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on a process this test started and has not reaped.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// A scratch folder under target/, fresh for each test that asks.
pub fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let h = u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap();
            out.push(h);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The real binary running `load --no-open -P 0`, killed and reaped when dropped (also
/// when the test panics).
pub struct Server {
    child: Reaped,
    /// The line printed on stdout.
    pub profiler_url: String,
    /// `http://127.0.0.1:PORT/<token>`, taken from the profiler URL.
    pub base: String,
    pub addr: SocketAddr,
    pub token: String,
    stderr: Arc<Mutex<String>>,
    stderr_thread: Option<std::thread::JoinHandle<()>>,
}

/// How to start a [`Server`]: its folder, arguments, environment and descriptor limit.
#[derive(Default)]
pub struct Launch {
    pub dir: Option<PathBuf>,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub max_files: Option<u64>,
}

impl Server {
    pub fn start(args: &[&str]) -> Server {
        Self::start_in(Path::new("."), args)
    }

    /// Started with `dir` as its current folder.
    pub fn start_in(dir: &Path, args: &[&str]) -> Server {
        Self::start_limited(dir, args, None)
    }

    /// As [`Self::start_in`], with at most `max_files` open descriptors for the server
    /// (RLIMIT_NOFILE), as a desktop session gives: a test of a limit then does not depend
    /// on how high the machine's own limit is.
    pub fn start_limited(dir: &Path, args: &[&str], max_files: Option<u64>) -> Server {
        Self::launch(Launch {
            dir: Some(dir.to_path_buf()),
            args: args.iter().map(|a| a.to_string()).collect(),
            max_files,
            ..Launch::default()
        })
    }

    /// With environment variables of its own (a cache folder, symbol server settings).
    pub fn start_env(args: &[String], env: &[(&str, String)]) -> Server {
        Self::launch(Launch {
            args: args.to_vec(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            ..Launch::default()
        })
    }

    /// The one way the tests start a server.
    pub fn launch(l: Launch) -> Server {
        let mut cmd = Command::new(BIN);
        #[cfg(unix)]
        if let Some(n) = l.max_files {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and
            // exec here.
            unsafe {
                cmd.pre_exec(move || {
                    let lim = libc::rlimit {
                        rlim_cur: n as libc::rlim_t,
                        rlim_max: n as libc::rlim_t,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        if let Some(dir) = &l.dir {
            cmd.current_dir(dir);
        }
        cmd.args(["load", "--no-open", "-P", "0", "--address", "127.0.0.1"])
            .args(&l.args)
            .env_remove("PROFILER_URL")
            // A developer's settings must not send tests to the network.
            .env_remove("DEBUGINFOD_URLS")
            .env_remove("_NT_SYMBOL_PATH")
            .envs(l.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = Reaped::spawn(&mut cmd);
        let (stderr, stderr_thread) = collect_stderr_joinable(&mut child);
        // The URL line is printed once the socket is bound: reading it is the readiness
        // signal, no sleeping.
        let mut line = String::new();
        let _ = BufReader::new(child.stdout.take().unwrap()).read_line(&mut line);
        let profiler_url = line.trim().to_string();
        assert!(
            profiler_url.starts_with("https://profiler.firefox.com/"),
            "unexpected first stdout line {profiler_url:?}; stderr: {}",
            stderr.lock().unwrap()
        );
        let enc = profiler_url
            .split("symbolServer=")
            .nth(1)
            .expect("symbolServer parameter");
        let base = percent_decode(enc);
        let hostport = base
            .strip_prefix("http://")
            .unwrap()
            .split('/')
            .next()
            .unwrap();
        let addr: SocketAddr = hostport.parse().unwrap();
        let token = base.rsplit('/').next().unwrap().to_string();
        Server {
            child,
            profiler_url,
            base,
            addr,
            token,
            stderr,
            stderr_thread: Some(stderr_thread),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server has written on stderr so far (see [`Self::interrupt_with_stderr`]
    /// for all of it).
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Polls (up to 60 s) until stderr holds `needle`; all of stderr then.
    pub fn wait_for_stderr(&self, needle: &str) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let text = self.stderr();
            if text.contains(needle) || std::time::Instant::now() > deadline {
                return text;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Ctrl-C; the exit status.
    #[cfg(unix)]
    pub fn interrupt(self) -> Option<i32> {
        self.interrupt_with_stderr().0
    }

    /// Ctrl-C; the exit status and everything the server wrote on stderr.
    #[cfg(unix)]
    pub fn interrupt_with_stderr(self) -> (Option<i32>, String) {
        signal(self.child.id(), libc::SIGINT);
        self.wait_exit()
    }

    /// Waits for the server to exit (after a signal sent by the test); the exit status and
    /// everything it wrote on stderr.
    pub fn wait_exit(mut self) -> (Option<i32>, String) {
        let code = self.child.wait().unwrap().code();
        if let Some(t) = self.stderr_thread.take() {
            let _ = t.join();
        }
        (code, self.stderr())
    }

    pub fn path(&self, p: &str) -> String {
        format!("/{}{}", self.token, p)
    }

    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    pub fn post(&self, api: &str, body: &[u8]) -> Response {
        match try_http(self.addr, "POST", &self.path(api), &self.host(), &[], body) {
            Some(r) => r,
            None => panic!(
                "the server closed the connection without an answer to {api}; stderr:\n{}",
                self.stderr()
            ),
        }
    }

    pub fn post_json(&self, api: &str, v: &Value) -> Response {
        self.post(api, &serde_json::to_vec(v).unwrap())
    }

    /// `/symbolicate/v5` for one stack of `(module index, offset)` in `memory_map`
    /// (`(debugName, debugId)`); asserts a 200 and gives the answer.
    pub fn symbolicate(&self, memory_map: &[(String, String)], offsets: &[(usize, u64)]) -> Value {
        let body = json!({
            "memoryMap": memory_map.iter().map(|(n, i)| json!([n, i])).collect::<Vec<_>>(),
            "stacks": [offsets.iter().map(|(m, o)| json!([m, o])).collect::<Vec<_>>()],
        });
        let r = self.post_json("/symbolicate/v5", &body);
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()
    }

    pub fn get(&self, path: &str) -> Response {
        http(self.addr, "GET", path, &self.host(), &[], b"")
    }

    /// Asserts the process is still alive and answering.
    pub fn assert_alive(&self) {
        let r = self.post_json("/symbolicate/v5", &json!({"memoryMap": [], "stacks": [[]]}));
        assert_eq!(r.status, 200, "server stopped answering: {}", self.stderr());
    }
}

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

/// `query` with the request on standard input; its answer.
/// Runs `cmd` with `input` on its stdin; its whole output.
pub fn run_with_stdin(cmd: &mut Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

pub fn query_stdin(args: &[&str], env: &[(&str, &str)], request: &Value) -> Value {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .arg("query")
        .args(args)
        .env_remove("DEBUGINFOD_URLS")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(request).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "query failed");
    serde_json::from_slice(&out.stdout).unwrap()
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

// ---------------------------------------------------------------------------------------
// Ground truth

pub struct Truth {
    pub file: PathBuf,
    pub header: Value,
    pub addresses: Vec<Value>,
}

impl Truth {
    pub fn load(path: &Path) -> Truth {
        let text = std::fs::read_to_string(path).unwrap();
        let split = text.find("\"addresses\": [").unwrap();
        let head = text[..split].trim_end().trim_end_matches(',').to_string() + "}";
        let header: Value = serde_json::from_str(&head).unwrap();
        let addresses = text[split + 14..]
            .lines()
            .map(|l| l.trim().trim_end_matches(','))
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        Truth {
            file: path.to_path_buf(),
            header,
            addresses,
        }
    }

    /// The case name, e.g. `elf/shapes-gcc-O2-dwarf4`.
    pub fn case(&self) -> String {
        let s = self.file.to_string_lossy();
        let s = s.split("/truth/").nth(1).unwrap();
        s.trim_end_matches(".truth.json").to_string()
    }

    /// The binary the truth describes.
    pub fn image(&self) -> PathBuf {
        let rel = self.header["image_file"].as_str().unwrap();
        let p = self.file.parent().unwrap().join(rel);
        p.canonicalize().unwrap_or(p)
    }

    pub fn breakpad_id(&self) -> String {
        self.header["module"]["breakpad_id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    pub fn offsets(&self) -> Vec<u64> {
        self.addresses
            .iter()
            .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
            .collect()
    }
}

pub fn parse_hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()
}

/// Every truth file under `truth/<sub>`, sorted.
pub fn truth_files(sub: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.to_string_lossy().ends_with(".truth.json") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    let dir = corpus().join("truth").join(sub);
    if dir.is_dir() {
        walk(&dir, &mut out);
    }
    out.sort();
    out
}

fn fold(s: &str) -> String {
    let mut s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    while s.contains("> >") {
        s = s.replace("> >", ">>");
    }
    s
}

fn strip_rust_hash(s: &str) -> &str {
    match s.rfind("::h") {
        Some(i) if s.len() - i == 19 && s[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => {
            &s[..i]
        }
        _ => s,
    }
}

/// The qualified name once template arguments, the argument list and any return type
/// are dropped (demanglers differ in those).
fn reduce(s: &str) -> String {
    let s = fold(s)
        .replace("(anonymous namespace)", "{anon}")
        .replace("operator()", "operator{call}");
    let mut out = String::new();
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let mut t = out.trim();
    // Clone suffixes: llvm's " (.isra.0)", c++filt's " [clone .isra.0]".
    while let Some(i) = t.rfind(" (.").or_else(|| t.rfind(" [clone ")) {
        if !t.ends_with(')') && !t.ends_with(']') {
            break;
        }
        t = t[..i].trim_end();
    }
    for q in [" const", " volatile", " &&", " &", "&&", "&"] {
        t = t.strip_suffix(q).unwrap_or(t).trim_end();
    }
    // Drop the trailing argument list: from its matching '(' on.
    if t.ends_with(')') {
        let mut d = 0i32;
        for (i, c) in t.char_indices().rev() {
            match c {
                ')' => d += 1,
                '(' => {
                    d -= 1;
                    if d == 0 {
                        t = t[..i].trim_end();
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    // Drop a return type: keep what follows the last space outside parentheses.
    let mut d = 0i32;
    let mut start = 0;
    for (i, c) in t.char_indices() {
        match c {
            '(' | '{' => d += 1,
            ')' | '}' => d -= 1,
            ' ' if d == 0 => start = i + 1,
            _ => {}
        }
    }
    t[start..].to_string()
}

/// The SPEC's rule: equal to an accepted spelling after folding, or the same reduced name.
pub fn name_matches(got: &str, spellings: &[&str]) -> bool {
    let got = strip_rust_hash(got);
    spellings
        .iter()
        .any(|s| fold(got) == fold(strip_rust_hash(s)))
        || spellings
            .iter()
            .any(|s| reduce(got) == reduce(strip_rust_hash(s)))
}

fn spellings(v: &Value) -> Vec<&str> {
    let mut out: Vec<&str> = ["function", "function_llvm", "function_short"]
        .iter()
        .filter_map(|k| v[*k].as_str())
        .collect();
    // A linkage name that is not mangled (C, or MSVC C names) is a spelling too.
    if let Some(m) = v["function_mangled"].as_str()
        && !m.starts_with("_Z")
        && !m.starts_with("__Z")
        && !m.starts_with('?')
        && !m.starts_with("_R")
    {
        out.push(m);
    }
    if let Some(alts) = v["alternative_names_same_code"].as_array() {
        out.extend(alts.iter().filter_map(Value::as_str));
    }
    out
}

/// Normalises the profiler's special path for Rust std files back to `/rustc/<hash>/`.
fn canonical_file(f: &str) -> String {
    if let Some(rest) = f.strip_prefix("git:github.com/rust-lang/rust:")
        && let Some((path, hash)) = rest.rsplit_once(':')
    {
        return format!("/rustc/{hash}/{path}");
    }
    f.to_string()
}

/// Compares one answered frame with a truth entry; `Err` says what differs.
/// Whether `got` names the symbol `want` (its linkage name, as the truth gives it): the
/// same text, or a demangled spelling whose last path segment the mangled name carries as
/// a whole identifier: Itanium and Rust manglings spell each identifier out after its
/// length (`3foo`; Rust v0 may put `_` between), so `foo` is not found inside `3foobar`.
fn same_symbol(got: &str, want: &Value) -> bool {
    let Some(want) = want.as_str() else {
        return false;
    };
    if got == want {
        return true;
    }
    let mangled = ["_Z", "__Z", "_R"].iter().any(|p| want.starts_with(p));
    let last = got.rsplit("::").next().unwrap_or(got);
    let last = last.split(['<', '(']).next().unwrap_or(last);
    if !mangled || last.is_empty() {
        return false;
    }
    let n = last.len();
    [format!("{n}{last}"), format!("{n}_{last}")]
        .iter()
        .any(|ident| {
            want.match_indices(ident.as_str()).any(|(i, _)| {
                // The length starts where no other digit precedes it.
                !want[..i].ends_with(|c: char| c.is_ascii_digit())
            })
        })
}

pub fn check_frame(frame: &Value, entry: &Value) -> Result<(), String> {
    let e = &entry["expect"];
    let offset = parse_hex(entry["module_offset"].as_str().unwrap());
    if frame["module_offset"] != json!(format!("{offset:#x}")) {
        return Err(format!(
            "module_offset {} for {offset:#x}",
            frame["module_offset"]
        ));
    }
    if e["found"] == json!(false) {
        // The truth allows the nearest preceding symbol (a zero-size one, such as
        // crtstuff's `register_tm_clones`, reaches to the next function start).
        let nearest = &e["nearest_preceding_symbol"];
        let start = |f: &Value| {
            let off = frame["function_offset"].as_str().map(parse_hex)?;
            offset
                .checked_sub(off)
                .filter(|_| same_symbol(f.as_str().unwrap_or(""), &nearest["name"]))
        };
        if let Some(f) = frame.get("function")
            && (nearest.is_null() || start(f) != nearest["start"].as_str().map(parse_hex))
        {
            return Err(format!("expected no function, got {f}"));
        }
        if frame.get("file").is_some() || frame.get("line").is_some() {
            return Err("expected no file/line".into());
        }
        return Ok(());
    }
    let got = frame["function"]
        .as_str()
        .ok_or_else(|| format!("no function (expected {})", e["function"]))?;
    if !name_matches(got, &spellings(e)) {
        return Err(format!("function {got:?}, expected {}", e["function"]));
    }
    let start = parse_hex(e["function_start"].as_str().unwrap());
    // An address in a part placed before the entry (gcc .cold) is measured from its part.
    let want_offset = if offset >= start {
        offset - start
    } else {
        offset - parse_hex(e["range_start"].as_str().unwrap())
    };
    if frame["function_offset"] != json!(format!("{want_offset:#x}")) {
        return Err(format!(
            "function_offset {}, expected {want_offset:#x}",
            frame["function_offset"]
        ));
    }
    if let Some(size) = e["function_size"].as_str()
        && frame["function_size"] != json!(size)
    {
        return Err(format!(
            "function_size {}, expected {size}",
            frame["function_size"]
        ));
    }
    // Our frames innermost first: the inlines, then the outer function.
    let mut got_frames: Vec<&Value> = frame["inlines"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    got_frames.push(frame);
    let want = e["frames_innermost_first"].as_array().unwrap();
    if got_frames.len() != want.len() {
        return Err(format!(
            "inline depth {}, expected {}",
            got_frames.len() - 1,
            want.len() - 1
        ));
    }
    for (k, (g, w)) in got_frames.iter().zip(want).enumerate() {
        let outer = k == want.len() - 1;
        let names = if outer { spellings(e) } else { spellings(w) };
        let gname = g["function"].as_str().unwrap_or("");
        if !name_matches(gname, &names) {
            return Err(format!(
                "frame {k}: function {gname:?}, expected {}",
                w["function"]
            ));
        }
        for key in ["file", "line"] {
            if g.get(key) == Some(&Value::Null) {
                return Err(format!("frame {k}: {key} is null (must be omitted)"));
            }
        }
        let gfile = g["file"]
            .as_str()
            .map(canonical_file)
            .map(|f| normalize_path(&f));
        let wfile = w["file"].as_str().map(normalize_path);
        match w["line"].as_u64() {
            // DWARF line 0: tools differ on the file (llvm names the unit); no line.
            None => {
                if g.get("line").is_some() {
                    return Err(format!("frame {k}: line {}, expected none", g["line"]));
                }
                if gfile.is_some() && gfile != wfile {
                    return Err(format!("frame {k}: file {gfile:?}, expected {}", w["file"]));
                }
            }
            Some(line) => {
                if gfile != wfile || g["line"].as_u64() != Some(line) {
                    return Err(format!(
                        "frame {k}: {gfile:?}:{}, expected {}:{line}",
                        g["line"], w["file"]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Agreement counts per case, printed as a table. Each answer is `Ok(label)` (how it
/// agreed: "matched", or a documented kind of oracle disagreement) or `Err(what differs)`.
#[derive(Default)]
pub struct Agreement {
    rows: Vec<(String, Vec<Result<&'static str, String>>)>,
    /// Mismatches tolerated: (case, module offset as the truth writes it, reason).
    allowed: Vec<(String, &'static str, &'static str)>,
}

impl Agreement {
    pub fn add(&mut self, case: &str, results: Vec<Result<(), String>>) {
        self.add_labeled(
            case,
            results.into_iter().map(|r| r.map(|()| "matched")).collect(),
        );
    }

    pub fn add_labeled(&mut self, case: &str, results: Vec<Result<&'static str, String>>) {
        self.rows.push((case.to_string(), results));
    }

    /// Lets `case` mismatch at each listed module offset (`"0x10bd"`), for its reason;
    /// they are still listed. A mismatch elsewhere fails.
    pub fn allow(&mut self, case: &str, at: &[(&'static str, &'static str)]) {
        for (offset, reason) in at {
            self.allowed.push((case.to_string(), offset, reason));
        }
    }

    /// Prints the table and panics on mismatches beyond what is allowed.
    pub fn finish(self, title: &str) {
        let mut labels: Vec<&'static str> = vec!["matched"];
        for (_, rs) in &self.rows {
            for l in rs.iter().flatten() {
                if !labels.contains(l) {
                    labels.push(l);
                }
            }
        }
        print!("\n{title}\n{:<48} {:>6}", "case", "cases");
        for l in &labels {
            print!(" {l:>12}");
        }
        println!(" {:>10}", "mismatched");
        let mut totals = vec![0usize; labels.len() + 2];
        let mut failures = Vec::new();
        for (case, rs) in &self.rows {
            print!("{case:<48} {:>6}", rs.len());
            totals[0] += rs.len();
            for (i, l) in labels.iter().enumerate() {
                let n = rs.iter().filter(|r| r.as_ref().ok() == Some(l)).count();
                totals[i + 1] += n;
                print!(" {n:>12}");
            }
            let errs: Vec<&String> = rs.iter().filter_map(|r| r.as_ref().err()).collect();
            totals[labels.len() + 1] += errs.len();
            println!(" {:>10}", errs.len());
            // An error starts with the offset, as the truth writes it (quoted).
            let reason = |e: &str| {
                let at = e.split(' ').next().unwrap_or("").trim_matches('"');
                self.allowed
                    .iter()
                    .find(|(c, o, _)| c == case && *o == at)
                    .map(|(_, _, r)| *r)
            };
            let (known, unknown): (Vec<&String>, Vec<&String>) =
                errs.iter().partition(|e| reason(e).is_some());
            for e in &known {
                println!("    allowed: {e} ({})", reason(e).unwrap_or_default());
            }
            failures.extend(unknown.iter().take(5).map(|e| format!("{case}: {e}")));
        }
        print!("{:<48} {:>6}", "total", totals[0]);
        for t in &totals[1..] {
            print!(" {t:>12}");
        }
        println!();
        assert!(failures.is_empty(), "mismatches:\n{}", failures.join("\n"));
        assert!(totals[0] > 0, "no cases checked");
    }
}

/// Lexically drops `.` and `dir/..` from a `/` path (dump_syms prints paths normalised,
/// the DWARF may keep `../`).
pub fn normalize_path(p: &str) -> String {
    if !p.starts_with('/') {
        return p.to_string();
    }
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// For a truth entry where the Breakpad `.sym` itself disagrees with `expect`: the answer
/// must be what the `.sym` says (function start, innermost line, inline depth).
pub fn check_frame_against_sym(frame: &Value, entry: &Value) -> Result<(), String> {
    let offset = parse_hex(entry["module_offset"].as_str().unwrap());
    let s = &entry["breakpad_sym"];
    if s.is_null() {
        // No FUNC covers it: at most a PUBLIC's name, never a size or a line.
        if frame.get("function_size").is_some() || frame.get("line").is_some() {
            return Err(format!("no FUNC in the .sym, but got {frame}"));
        }
        return Ok(());
    }
    let start = parse_hex(s["function_start"].as_str().unwrap());
    if frame["function_offset"] != json!(format!("{:#x}", offset - start)) {
        return Err(format!(
            "function_offset {} vs .sym FUNC at {start:#x}",
            frame["function_offset"]
        ));
    }
    let depth = frame["inlines"].as_array().map_or(0, Vec::len);
    let want_depth = s["inlines_outer_to_inner"].as_array().map_or(0, Vec::len);
    if depth != want_depth {
        return Err(format!("inline depth {depth} vs .sym {want_depth}"));
    }
    let innermost = frame["inlines"].get(0).unwrap_or(frame);
    let want_line = s["line"]["line"].as_u64().filter(|&l| l != 0);
    if innermost["line"].as_u64() != want_line {
        return Err(format!("line {} vs .sym {want_line:?}", innermost["line"]));
    }
    Ok(())
}

/// For `expect.found: false` where the answer names the nearest preceding symbol from a
/// symbol-only record (Breakpad PUBLIC): name only, no size, no file/line.
pub fn is_public_fallback(frame: &Value, entry: &Value) -> bool {
    let name = &entry["expect"]["nearest_preceding_symbol"]["name"];
    frame.get("function").is_some()
        && frame.get("function_size").is_none()
        && frame.get("file").is_none()
        && frame.get("line").is_none()
        && (frame["function"] == *name
            || name
                .as_str()
                .is_some_and(|n| frame["function"] == json!(n.trim_start_matches('_'))))
}

/// A front-end-shaped job: the module's addresses cut into stacks of a few frames.
pub fn job(debug_name: &str, breakpad_id: &str, offsets: &[u64]) -> Value {
    let stacks: Vec<Value> = offsets
        .chunks(16)
        .map(|c| Value::Array(c.iter().map(|o| json!([0, o])).collect()))
        .collect();
    json!({ "memoryMap": [[debug_name, breakpad_id]], "stacks": stacks })
}

/// The frames of a job's answer, flattened in request order.
pub fn frames_of(result: &Value) -> Vec<Value> {
    result["stacks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s.as_array().unwrap().iter().cloned())
        .collect()
}

/// Runs a tool; `None` (and a message) when it is not installed.
pub fn tool(cmd: &str, args: &[&str], dir: &Path) -> Option<String> {
    match Command::new(cmd).args(args).current_dir(dir).output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{cmd} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Err(e) => {
            skip(&format!("cannot run {cmd}: {e}"), true);
            None
        }
    }
}

/// The debug ID from the build ID `readelf -n` prints (SPEC: first 16 bytes as a
/// little-endian GUID, age 0).
pub fn elf_debug_id(path: &Path) -> String {
    let notes = tool("readelf", &["-n", path.to_str().unwrap()], Path::new(".")).unwrap();
    let hex = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build ID")
        .trim()
        .to_string();
    let mut b: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    b.resize(16, 0);
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    b.iter().map(|x| format!("{x:02X}")).collect::<String>() + "0"
}

/// The first `PT_LOAD`'s address: module offsets are relative to it.
pub fn elf_image_base(path: &Path) -> u64 {
    let out = tool("readelf", &["-lW", path.to_str().unwrap()], Path::new(".")).unwrap();
    let load = out
        .lines()
        .find(|l| l.trim_start().starts_with("LOAD"))
        .unwrap();
    parse_hex(load.split_whitespace().nth(2).unwrap())
}

//! The real binary as a server on loopback: started one way, killed and reaped by its
//! handle.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::{BIN, Reaped, Response, collect_stderr_joinable, http, signal, try_http};

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
    /// A command the binary runs under (its program and arguments, the binary's path and
    /// arguments appended): `unshare` for a resolver of the test's own.
    pub wrapper: Vec<String>,
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
        let mut cmd = match l.wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
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
            // No prepared indexes in the user's cache folder, and no idle-time indexing
            // unless a test asks (tests/index.rs).
            .env("PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE", "1")
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
        // The front-end the URL opens: the default, or the one the test named (a local
        // copy of the real front-end, for tests/browser.rs).
        let front_end = l
            .args
            .iter()
            .position(|a| a == "--profiler-url")
            .and_then(|i| l.args.get(i + 1))
            .map_or("https://profiler.firefox.com", |u| u.trim_end_matches('/'));
        assert!(
            profiler_url.starts_with(&format!("{front_end}/")),
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

    /// Ctrl-C; the exit status.
    pub fn interrupt(self) -> Option<i32> {
        self.interrupt_with_stderr().0
    }

    /// Ctrl-C; the exit status and everything the server wrote on stderr.
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

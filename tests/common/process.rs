//! Child processes of the tests: stderr gathered as it comes, a guard that kills and
//! reaps, the binary run with input on stdin.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::BIN;

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

/// Windows has no signals to send: the tests that send one run on Unix only (they are
/// type-checked for Windows, never run there).
#[cfg(not(unix))]
pub fn signal(_pid: u32, _sig: i32) {
    unimplemented!("signals are Unix-only");
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

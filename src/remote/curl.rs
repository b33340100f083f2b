//! One download: the system `curl` as a child process (argument vector, no shell), so the
//! user's proxy settings and certificate store apply as for every other tool, and no TLS
//! stack is linked in. The server loop polls it; nothing here blocks unless asked to.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest file accepted (a libxul `.sym` or `xul.pdb` is well under this).
pub const MAX_FILE_SIZE: u64 = 4 << 30;

/// How a download ended.
#[derive(Debug)]
pub enum Outcome {
    /// The file is at its destination.
    Saved,
    /// The server does not have it (404/410): remembered for the rest of the run.
    NotFound,
    /// Anything else; `server_down` when the server itself failed (refused, stalled, 5xx).
    Failed { message: String, server_down: bool },
}

pub enum StartError {
    CurlMissing,
    Other(String),
}

pub struct Download {
    child: Child,
    tmp: PathBuf,
    pub dest: PathBuf,
    pub url: String,
    pub source: usize,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// `curl`, or `$PROFILER_SYMBOL_SERVER_CURL` (a curl elsewhere, or none for tests).
fn program() -> std::ffi::OsString {
    std::env::var_os("PROFILER_SYMBOL_SERVER_CURL").unwrap_or_else(|| "curl".into())
}

/// Starts fetching `url` into a fresh temporary file beside `dest`.
pub fn start(url: &str, dest: &Path, source: usize) -> Result<Download, StartError> {
    let dir = dest
        .parent()
        .ok_or_else(|| StartError::Other(format!("{}: no folder", dest.display())))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| StartError::Other(format!("cannot create {}: {e}", dir.display())))?;
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.part-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // O_EXCL: never write through a file (or link) someone else put there.
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .map_err(|e| StartError::Other(format!("cannot create {}: {e}", tmp.display())))?;
    let spawned = Command::new(program())
        .args(["--fail", "--location", "--silent", "--show-error"])
        .args(["--proto", "=http,https", "--proto-redir", "=http,https"])
        .args(["--max-filesize", &MAX_FILE_SIZE.to_string()])
        // A server that refuses or stalls fails fast; a slow but moving one goes on.
        .args([
            "--connect-timeout",
            "5",
            "--speed-limit",
            "1",
            "--speed-time",
            "10",
        ])
        .args([
            "--user-agent",
            concat!("profiler-symbol-server/", env!("CARGO_PKG_VERSION")),
        ])
        .args(["--write-out", "%{http_code}", "--output"])
        .arg(&tmp)
        .args(["--url", url])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    match spawned {
        Ok(child) => {
            crate::signals::track(&tmp, Some(child.id()));
            Ok(Download {
                child,
                tmp,
                dest: dest.to_path_buf(),
                url: url.to_string(),
                source,
            })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            if e.kind() == std::io::ErrorKind::NotFound {
                Err(StartError::CurlMissing)
            } else {
                Err(StartError::Other(format!("cannot run curl: {e}")))
            }
        }
    }
}

impl Download {
    /// The outcome if curl has exited.
    pub fn poll(&mut self) -> Option<Outcome> {
        match self.child.try_wait() {
            Ok(None) => None,
            Ok(Some(status)) => Some(self.finish(status.code())),
            Err(e) => {
                self.kill();
                Some(Outcome::Failed {
                    message: format!("waiting for curl: {e}"),
                    server_down: false,
                })
            }
        }
    }

    /// Waits for curl (query and CI modes).
    pub fn wait(&mut self) -> Outcome {
        match self.child.wait() {
            Ok(status) => self.finish(status.code()),
            Err(e) => {
                self.kill();
                Outcome::Failed {
                    message: format!("waiting for curl: {e}"),
                    server_down: false,
                }
            }
        }
    }

    /// Stops curl and removes the partial file (Ctrl-C, shutdown).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.tmp);
        crate::signals::untrack(&self.tmp);
    }

    fn finish(&mut self, code: Option<i32>) -> Outcome {
        // Both pipes hold a few bytes (the status code, one error line): no deadlock.
        let mut http = String::new();
        let mut err = String::new();
        if let Some(o) = self.child.stdout.as_mut() {
            let _ = o.read_to_string(&mut http);
        }
        if let Some(e) = self.child.stderr.as_mut() {
            let _ = e.read_to_string(&mut err);
        }
        let http: u16 = http.trim().parse().unwrap_or(0);
        let err = err.trim().to_string();
        let outcome = match code {
            Some(0) if (200..300).contains(&http) => match std::fs::rename(&self.tmp, &self.dest) {
                Ok(()) => Outcome::Saved,
                Err(e) => Outcome::Failed {
                    message: format!("cannot store {}: {e}", self.dest.display()),
                    server_down: false,
                },
            },
            Some(0) | Some(22) if http == 404 || http == 410 => Outcome::NotFound,
            Some(0) | Some(22) => Outcome::Failed {
                message: format!("HTTP status {http}"),
                server_down: http >= 500 || http == 0,
            },
            Some(63) => Outcome::Failed {
                message: format!("larger than the {} GiB limit", MAX_FILE_SIZE >> 30),
                server_down: false,
            },
            other => Outcome::Failed {
                message: if err.is_empty() {
                    format!("curl exited with {other:?}")
                } else {
                    err
                },
                server_down: true,
            },
        };
        let _ = std::fs::remove_file(&self.tmp);
        crate::signals::untrack(&self.tmp);
        outcome
    }
}

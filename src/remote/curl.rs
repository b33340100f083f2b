//! One download: the system `curl` as a child process (argument vector, no shell), so the
//! user's proxy settings and certificate store apply as for every other tool, and no TLS
//! stack is linked in. The server loop polls it; nothing here blocks unless asked to.
//!
//! curl writes the body to its stdout, which is a file this process created (`O_EXCL`,
//! 0600) and keeps open: curl never opens a path, so nothing swapped in on disk can be
//! written through, and the bytes received are counted here (curl ignores
//! `--max-filesize` for chunked answers). Redirects are followed here, one curl per hop,
//! each target checked before it is asked.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::cache;

/// Largest file accepted, decoded (a libxul `.sym` or `xul.pdb` is well under this).
pub const MAX_FILE_SIZE: u64 = 4 << 30;
/// A backstop for one transfer; a moving one is never stopped earlier (a libxul `.sym`
/// over a slow connection), a stalled one is (see the speed options).
const MAX_SECONDS: u32 = 600;
/// Redirects followed per download (Tecken answers with one, to its storage).
const MAX_REDIRECTS: u32 = 5;
/// How often a blocking wait looks at the file and the child.
pub const WAIT_TICK: Duration = Duration::from_millis(20);
/// Progress of a long download: first after this, then at most this often.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// Marks the status line that `--write-out` prints on stderr after curl's own messages.
const STATUS_MARK: &str = "@@pss-status";

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
    /// The temporary file curl writes to (its stdout); ours to measure and to rename.
    file: File,
    tmp: PathBuf,
    /// The cache root and the file's place under it.
    pub root: PathBuf,
    pub rel: PathBuf,
    /// The temporary file's place under the root.
    pub part_rel: PathBuf,
    /// The URL asked for first: what the download is known by.
    pub url: String,
    /// The URL of the current hop.
    hop: String,
    hops: u32,
    pub source: usize,
    started: Instant,
    /// When progress was last printed (`None`: never).
    reported: Option<Instant>,
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The size limit: [`MAX_FILE_SIZE`], or less with `$PROFILER_SYMBOL_SERVER_MAX_DOWNLOAD`
/// (bytes; for a small disk, and for the tests of the limit).
fn max_size() -> u64 {
    std::env::var("PROFILER_SYMBOL_SERVER_MAX_DOWNLOAD")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .map_or(MAX_FILE_SIZE, |v: u64| v.min(MAX_FILE_SIZE))
}

/// `curl`, or `$PROFILER_SYMBOL_SERVER_CURL` (a curl elsewhere, or none for tests).
fn program() -> std::ffi::OsString {
    std::env::var_os("PROFILER_SYMBOL_SERVER_CURL").unwrap_or_else(|| "curl".into())
}

/// The temporary file's path beside `rel` (relative to the cache root).
pub fn part_rel(rel: &Path) -> PathBuf {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    rel.with_file_name(format!(
        ".{name}.part-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

fn spawn(url: &str, file: &File) -> Result<Child, StartError> {
    let out = file
        .try_clone()
        .map_err(|e| StartError::Other(format!("cannot hand the file to curl: {e}")))?;
    Command::new(program())
        .args(["--fail", "--silent", "--show-error", "--compressed"])
        .args(["--proto", "=http,https"])
        .args(["--max-filesize", &max_size().to_string()])
        .args(["--max-time", &MAX_SECONDS.to_string()])
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
        .args([
            "--write-out",
            &format!(
                "%{{stderr}}\n{STATUS_MARK} %{{http_code}} %{{remote_ip}} %{{redirect_url}}\n"
            ),
        ])
        .args(["--url", url])
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                StartError::CurlMissing
            } else {
                StartError::Other(format!("cannot run curl: {e}"))
            }
        })
}

/// Starts fetching `url` into a fresh temporary file beside `root/rel`, which must be a
/// name under a checked cache root.
pub fn start(url: &str, root: &Path, rel: &Path, source: usize) -> Result<Download, StartError> {
    let tmp_rel = part_rel(rel);
    let tmp = cache::prepare(root, &tmp_rel)
        .map_err(|e| StartError::Other(format!("cannot use the cache: {e}")))?;
    let file = cache::create_new(&tmp)
        .map_err(|e| StartError::Other(format!("cannot create {}: {e}", tmp.display())))?;
    match spawn(url, &file) {
        Ok(child) => {
            crate::signals::track(&tmp, Some(child.id()));
            Ok(Download {
                child,
                file,
                tmp,
                root: root.to_path_buf(),
                rel: rel.to_path_buf(),
                part_rel: tmp_rel,
                url: url.to_string(),
                hop: url.to_string(),
                hops: 0,
                source,
                started: Instant::now(),
                reported: None,
            })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The host of an http(s) URL, lowercased, without port, brackets or a final dot.
fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let hostport = authority.rsplit('@').next()?;
    let host = if let Some(v6) = hostport.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        hostport.split(':').next()?
    };
    Some(host.trim_end_matches('.').to_ascii_lowercase())
}

/// An IPv4 address as `inet_aton` (and so curl) reads it: `127.1`, `0x7f000001`,
/// `2130706433`, `0177.0.0.1` are all loopback.
fn lenient_ipv4(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let nums: Vec<u64> = parts
        .iter()
        .map(|p| {
            if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
                u64::from_str_radix(h, 16).ok()
            } else if p.len() > 1 && p.starts_with('0') {
                u64::from_str_radix(&p[1..], 8).ok()
            } else {
                p.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    let (last, head) = nums.split_last()?;
    let mut v: u64 = 0;
    for (i, n) in head.iter().enumerate() {
        if *n > 255 {
            return None;
        }
        v |= n << (24 - 8 * i);
    }
    let room = 32 - 8 * head.len() as u32;
    if *last >= 1u64 << room {
        return None;
    }
    Some(Ipv4Addr::from((v | last) as u32))
}

fn local_v4(a: Ipv4Addr) -> bool {
    a.is_loopback() || a.is_link_local() || a.is_unspecified() || a.octets()[0] == 0
}

/// Whether a host name or address is this machine or its link: loopback, link-local,
/// unspecified, `localhost`.
pub fn is_local_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    if let Ok(v6) = host.parse::<Ipv6Addr>() {
        return v6.is_loopback()
            || v6.is_unspecified()
            || (v6.segments()[0] & 0xffc0) == 0xfe80
            || v6.to_ipv4_mapped().is_some_and(local_v4);
    }
    lenient_ipv4(&host).is_some_and(local_v4)
}

/// Whether a redirect from `base` (the URL first asked) to `target` may be followed:
/// https stays https, and a remote server cannot send us to this machine.
pub fn redirect_allowed(base: &str, target: &str) -> Result<(), String> {
    let lower = target.to_ascii_lowercase();
    let https_only = base.to_ascii_lowercase().starts_with("https://");
    if !(lower.starts_with("https://") || (!https_only && lower.starts_with("http://"))) {
        return Err(format!(
            "redirected to {target}: only {} is followed",
            if https_only { "https" } else { "http or https" }
        ));
    }
    let base_local = host_of(base).is_some_and(|h| is_local_host(&h));
    match host_of(target) {
        Some(h) if !h.is_empty() && (base_local || !is_local_host(&h)) => Ok(()),
        _ => Err(format!(
            "redirected to {target}: a remote server may not send us to this machine"
        )),
    }
}

impl Download {
    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.file.metadata().map(|m| m.len()).unwrap_or(0)
    }

    /// A progress line when one is due: after 2 s, then every 5 s.
    pub fn progress(&mut self) -> Option<String> {
        let now = Instant::now();
        let due = match self.reported {
            None => now.duration_since(self.started) >= PROGRESS_AFTER,
            Some(t) => now.duration_since(t) >= PROGRESS_EVERY,
        };
        if !due {
            return None;
        }
        self.reported = Some(now);
        let secs = now.duration_since(self.started).as_secs_f64();
        let mb = self.received() as f64 / 1e6;
        Some(format!(
            "{}: {mb:.1} MB so far, {:.2} MB/s",
            self.name(),
            mb / secs.max(0.001)
        ))
    }

    /// The closing line of a download that printed progress.
    pub fn done_line(&self) -> Option<String> {
        self.reported?;
        let size = std::fs::symlink_metadata(self.root.join(&self.rel)).map_or(0, |m| m.len());
        Some(format!(
            "{}: {:.1} MB in {:.0} s",
            self.name(),
            size as f64 / 1e6,
            self.started.elapsed().as_secs_f64()
        ))
    }

    fn name(&self) -> String {
        self.rel
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The outcome if the download has ended; follows a redirect in place (`None`).
    pub fn poll(&mut self) -> Option<Outcome> {
        if self.received() > max_size() {
            self.kill();
            return Some(Outcome::Failed {
                message: format!("larger than the limit of {} bytes", max_size()),
                server_down: false,
            });
        }
        match self.child.try_wait() {
            Ok(None) => None,
            Ok(Some(status)) => self.hop_ended(status.code()),
            Err(e) => {
                self.kill();
                Some(Outcome::Failed {
                    message: format!("waiting for curl: {e}"),
                    server_down: false,
                })
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

    /// A redirect starts the next hop (`None`); anything else ends the download.
    fn hop_ended(&mut self, code: Option<i32>) -> Option<Outcome> {
        // stderr holds one error line and the status line: no deadlock.
        let mut err = String::new();
        if let Some(e) = self.child.stderr.as_mut() {
            let _ = e.read_to_string(&mut err);
        }
        let (status, rest) = err.rsplit_once(STATUS_MARK).unwrap_or((&err, ""));
        let mut fields = rest.trim().splitn(3, ' ');
        let http: u16 = fields.next().and_then(|h| h.parse().ok()).unwrap_or(0);
        let ip = fields.next().unwrap_or("");
        let location = fields.next().unwrap_or("").trim();
        let message = status.trim().to_string();
        if self.hops > 0 && !ip.is_empty() && is_local_host(ip) {
            let base_local = host_of(&self.url).is_some_and(|h| is_local_host(&h));
            if !base_local {
                return Some(self.end(Outcome::Failed {
                    message: format!("redirected to {} on this machine: refused", self.hop),
                    server_down: false,
                }));
            }
        }
        let outcome = match code {
            Some(0) if (300..400).contains(&http) && !location.is_empty() => {
                if self.hops >= MAX_REDIRECTS {
                    Outcome::Failed {
                        message: format!("more than {MAX_REDIRECTS} redirects"),
                        server_down: false,
                    }
                } else if let Err(message) = redirect_allowed(&self.url, location) {
                    Outcome::Failed {
                        message,
                        server_down: false,
                    }
                } else {
                    match self.next_hop(location) {
                        Ok(()) => return None,
                        Err(message) => Outcome::Failed {
                            message,
                            server_down: false,
                        },
                    }
                }
            }
            Some(0) if (200..300).contains(&http) => match self.store() {
                Ok(()) => Outcome::Saved,
                Err(e) => Outcome::Failed {
                    message: format!("cannot store {}: {e}", self.rel.display()),
                    server_down: false,
                },
            },
            Some(0) | Some(22) if http == 404 || http == 410 => Outcome::NotFound,
            Some(0) | Some(22) => Outcome::Failed {
                message: format!("HTTP status {http}"),
                server_down: http >= 500 || http == 0,
            },
            Some(63) => Outcome::Failed {
                message: format!("larger than the limit of {} bytes", max_size()),
                server_down: false,
            },
            Some(28) => Outcome::Failed {
                message: format!("stalled, or over {MAX_SECONDS} s"),
                server_down: true,
            },
            other => Outcome::Failed {
                message: if message.is_empty() {
                    format!("curl exited with {other:?}")
                } else {
                    message
                },
                server_down: true,
            },
        };
        Some(self.end(outcome))
    }

    fn next_hop(&mut self, location: &str) -> Result<(), String> {
        // The redirect's own body goes.
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)).map(drop))
            .map_err(|e| format!("cannot reuse {}: {e}", self.tmp.display()))?;
        let child = spawn(location, &self.file).map_err(|e| match e {
            StartError::CurlMissing => "curl went missing".to_string(),
            StartError::Other(m) => m,
        })?;
        crate::signals::untrack(&self.tmp);
        crate::signals::track(&self.tmp, Some(child.id()));
        self.child = child;
        self.hop = location.to_string();
        self.hops += 1;
        Ok(())
    }

    /// Moves the complete file to its place, through checked folders only.
    fn store(&self) -> std::io::Result<()> {
        let dest = cache::prepare(&self.root, &self.rel)?;
        std::fs::rename(&self.tmp, dest)
    }

    fn end(&mut self, outcome: Outcome) -> Outcome {
        let _ = std::fs::remove_file(&self.tmp);
        crate::signals::untrack(&self.tmp);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn redirects_stay_https_and_off_this_machine() {
        let tecken = "https://symbols.mozilla.org/try/x.sym";
        assert!(redirect_allowed(tecken, "https://storage.googleapis.com/a/x.sym").is_ok());
        assert!(redirect_allowed(tecken, "http://storage.googleapis.com/a/x.sym").is_err());
        assert!(redirect_allowed(tecken, "https://127.0.0.1:8080/admin").is_err());
        assert!(redirect_allowed(tecken, "https://[::1]/x").is_err());
        assert!(redirect_allowed(tecken, "https://user@localhost/x").is_err());
        assert!(redirect_allowed(tecken, "https://169.254.169.254/latest/meta-data").is_err());
        assert!(redirect_allowed(tecken, "file:///etc/passwd").is_err());
        assert!(redirect_allowed("http://example.org/x", "http://example.com/y").is_ok());
        // A loopback server (tests, a local proxy) may redirect on this machine.
        assert!(redirect_allowed("http://127.0.0.1:9/x", "http://127.0.0.1:10/y").is_ok());
        assert_eq!(
            host_of("https://u:p@Host.Example:443/x").as_deref(),
            Some("host.example")
        );
    }
}

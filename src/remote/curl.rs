//! One download: the system `curl` as a child process (argument vector, no shell), so the
//! user's proxy settings and certificate store apply as for every other tool, and no TLS
//! stack is linked in. The server loop polls it; nothing here blocks unless asked to.
//!
//! curl writes the body to its stdout, which is a file this process created (`O_EXCL`,
//! 0600) and keeps open: curl never opens a path, so nothing swapped in on disk can be
//! written through, and the bytes received are counted here (curl ignores
//! `--max-filesize` for chunked answers). Redirects are followed here, one curl per hop,
//! each target checked before it is asked: no curl globs (`--globoff`, and a `Location`
//! with `{}[]` outside an IPv6 literal is refused), the host resolved here and pinned
//! (`--resolve`) so that the address checked is the address asked, or, when the
//! environment sends the target through a proxy, only its name checked (the proxy
//! resolves it). A name is looked up on a short-lived thread of its own, never on the
//! loop (see [`Lookup`]). One deadline bounds a download over all its hops.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::cache;
use super::redirect::*;

/// Largest file accepted, decoded (a libxul `.sym` or `xul.pdb` is well under this).
pub const MAX_FILE_SIZE: u64 = 4 << 30;
/// One download, all its hops together, may take this long: a 1 GB `.sym` (libxul's is
/// under that) needs 0.6 MB/s (5 Mbit/s) to make it. Past half an hour a user would rather
/// have the profile without that module than wait on; a stalled transfer fails long
/// before (see the speed options).
const MAX_SECONDS: u64 = 1800;
/// Redirects followed per download (Tecken answers with one, to its storage): with the
/// first request, at most 6 requests per download.
const MAX_REDIRECTS: u32 = 5;
/// How often a blocking wait looks at the file and the child.
pub const WAIT_TICK: Duration = Duration::from_millis(20);
/// Progress of a long download: first after this, then at most this often.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// `--write-out` prints two lines on stderr after curl's own messages: the redirect
/// target, then the status. They are read from the end of stderr: the last line must be
/// the status line and the one before it the location line. Only the location comes
/// from the server, and it cannot hold a newline (curl splits headers at line ends), so
/// nothing a server sends can make a line that passes for the status line.
const LOCATION_MARK: &str = "@@pss-location ";
const STATUS_MARK: &str = "@@pss-status ";

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
    /// The URL asked for first: what the download is known by.
    pub url: String,
    /// The URL of the current hop.
    hop: String,
    hops: u32,
    pub source: usize,
    started: Instant,
    /// When the download is dropped, however many hops it took.
    deadline: Instant,
    /// The current hop is the configured server's own host on this machine.
    may_be_local: bool,
    /// The current hop goes through the environment's proxy: curl's `remote_ip` is the
    /// proxy's.
    proxied: bool,
    /// Between two hops: the next hop's host being looked up (no curl running).
    lookup: Option<Lookup>,
    /// When progress was last printed (`None`: never).
    reported: Option<Instant>,
    /// The cache root did not exist before this download (see `Remote::made_roots`).
    pub made_root: bool,
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

/// The deadline of one download: [`MAX_SECONDS`], or less with
/// `$PROFILER_SYMBOL_SERVER_DOWNLOAD_SECONDS` (for the tests of the deadline).
fn max_seconds() -> u64 {
    std::env::var("PROFILER_SYMBOL_SERVER_DOWNLOAD_SECONDS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .map_or(MAX_SECONDS, |v: u64| v.clamp(1, MAX_SECONDS))
}

/// `curl`, or `$PROFILER_SYMBOL_SERVER_CURL` (a curl elsewhere, or none for tests).
fn program() -> std::ffi::OsString {
    std::env::var_os("PROFILER_SYMBOL_SERVER_CURL").unwrap_or_else(|| "curl".into())
}

/// The temporary file's name for `rel`, at the top of the cache root: the folders of
/// `rel` are made only once the file is complete, so a download that finds nothing (a
/// 404 for each of a profile's 200 000 libraries) leaves no folder behind. Its name
/// ends with [`cache::PART_MARK`], the process ID and a counter: what a killed run left is
/// recognised by it and swept when stale (`cache::sweep_parts`).
pub fn part_rel(rel: &Path) -> PathBuf {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    PathBuf::from(format!(
        ".{name}{}{}-{}",
        cache::PART_MARK,
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// One curl run: one request to `url` (`--globoff`: no `{}`/`[]` expansion into many),
/// for at most `seconds`; a redirect's target the way `route` says (the first request as
/// curl's own settings say).
fn spawn(url: &str, route: Option<&Route>, seconds: u64, file: &File) -> Result<Child, StartError> {
    let out = file
        .try_clone()
        .map_err(|e| StartError::Other(format!("cannot hand the file to curl: {e}")))?;
    let mut cmd = Command::new(program());
    match route {
        None => {}
        Some(Route::Direct(pin)) => {
            cmd.args(["--noproxy", "*"]);
            for p in pin {
                cmd.args(["--resolve", p]);
            }
        }
        Some(Route::Proxied) => {
            cmd.args(["--noproxy", ""]);
        }
    }
    cmd.args([
        "--globoff",
        "--fail",
        "--silent",
        "--show-error",
        "--compressed",
    ])
    .args(["--proto", "=http,https"])
    .args(["--max-filesize", &max_size().to_string()])
    .args(["--max-time", &seconds.max(1).to_string()])
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
            "%{{stderr}}\n{LOCATION_MARK}%{{redirect_url}}\n{STATUS_MARK}%{{http_code}} %{{remote_ip}}\n"
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
    let made_root = root.symlink_metadata().is_err();
    let tmp = cache::prepare(root, &tmp_rel)
        .map_err(|e| StartError::Other(format!("cannot use the cache: {e}")))?;
    let file = cache::create_new(&tmp).map_err(|e| {
        cache::remove_if_made(root, made_root);
        StartError::Other(format!("cannot create {}: {e}", tmp.display()))
    })?;
    match spawn(url, None, max_seconds(), &file) {
        Ok(child) => {
            crate::signals::track(&tmp, Some(child.id()));
            Ok(Download {
                child,
                file,
                tmp,
                root: root.to_path_buf(),
                rel: rel.to_path_buf(),
                url: url.to_string(),
                hop: url.to_string(),
                hops: 0,
                source,
                started: Instant::now(),
                deadline: Instant::now() + Duration::from_secs(max_seconds()),
                may_be_local: false,
                proxied: false,
                lookup: None,
                reported: None,
                made_root,
            })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            cache::remove_if_made(root, made_root);
            Err(e)
        }
    }
}

/// What curl said about one hop: its own message, then the `--write-out` lines.
#[derive(Debug, PartialEq)]
struct HopReport<'a> {
    message: String,
    /// 0 without an answer, or when the status line is missing or malformed.
    http: u16,
    ip: &'a str,
    location: &'a str,
}

/// Reads curl's stderr from its end (see [`STATUS_MARK`]): the last line is the status
/// line, `http_code` and `remote_ip` split by one space, exactly two fields; the line
/// before it the location. Anything else is curl's message, never read for fields.
fn read_report(err: &str) -> HopReport<'_> {
    let body = err.strip_suffix('\n').unwrap_or(err);
    let (before, last) = body.rsplit_once('\n').unwrap_or(("", body));
    let status = last.strip_prefix(STATUS_MARK).and_then(|rest| {
        let (code, ip) = rest.split_once(' ')?;
        let ok = code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit()) && !ip.contains(' ');
        Some((code.parse::<u16>().ok().filter(|_| ok)?, ip))
    });
    let Some((http, ip)) = status else {
        return HopReport {
            message: err.trim().to_string(),
            http: 0,
            ip: "",
            location: "",
        };
    };
    let (message, location) = match before.rsplit_once('\n').unwrap_or(("", before)) {
        (m, line) if line.starts_with(LOCATION_MARK) => (m, &line[LOCATION_MARK.len()..]),
        _ => (before, ""),
    };
    HopReport {
        message: message.trim().to_string(),
        http,
        ip,
        location,
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
        if Instant::now() >= self.deadline {
            self.kill();
            return Some(Outcome::Failed {
                message: format!(
                    "not complete after {} s, the limit for one download (all redirects included): dropped",
                    max_seconds()
                ),
                server_down: false,
            });
        }
        if self.received() > max_size() {
            self.kill();
            return Some(Outcome::Failed {
                message: format!("larger than the limit of {} bytes", max_size()),
                server_down: false,
            });
        }
        // Between two hops (curl has exited): nothing but the lookup to wait for, and
        // `None` while it may still answer.
        if let Some(lookup) = &self.lookup {
            return self.lookup_polled(lookup.poll()?);
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
        let HopReport {
            message,
            http,
            ip,
            location,
        } = read_report(&err);
        // The address was pinned before the request; this catches what pinning cannot
        // (a proxy's own choice, a curl that ignores `--resolve`).
        if self.hops > 0
            && !self.proxied
            && !ip.is_empty()
            && is_local_host(ip)
            && !self.may_be_local
        {
            return Some(self.end(Outcome::Failed {
                message: format!("redirected to {} on this machine: refused", self.hop),
                server_down: false,
            }));
        }
        let outcome = match code {
            Some(0) if (300..400).contains(&http) && !location.is_empty() => {
                if self.hops >= MAX_REDIRECTS {
                    Outcome::Failed {
                        message: format!("more than {MAX_REDIRECTS} redirects"),
                        server_down: false,
                    }
                } else {
                    match check_redirect(&self.url, location, &env_value) {
                        Ok(Next::Go(route)) => match self.next_hop(location, route) {
                            Ok(()) => return None,
                            Err(why) => Outcome::Failed {
                                message: why.to_string(),
                                server_down: false,
                            },
                        },
                        Ok(Next::Resolve { host, port }) => {
                            match self.resolve(location, host, port) {
                                Ok(()) => return None,
                                // Like a lookup that fails later: the server is paused.
                                Err(why) => Outcome::Failed {
                                    message: format!("redirected to {location}: {why}"),
                                    server_down: true,
                                },
                            }
                        }
                        Err(why) => Outcome::Failed {
                            message: why.to_string(),
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
            Some(28) if Instant::now() + Duration::from_secs(1) >= self.deadline => {
                Outcome::Failed {
                    message: format!(
                        "not complete after {} s, the limit for one download (all redirects included): dropped",
                        max_seconds()
                    ),
                    server_down: false,
                }
            }
            Some(28) => Outcome::Failed {
                message: "stalled".to_string(),
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

    /// The lookup of the next hop's host has answered (or failed, or timed out): the
    /// next hop starts, or the download ends. A lookup that fails pauses the server like
    /// any failure of it: a dead DNS costs one lookup per pause, not one per module.
    fn lookup_polled(&mut self, answer: Result<Vec<SocketAddr>, String>) -> Option<Outcome> {
        let lookup = self.lookup.take()?;
        let location = lookup.location.as_str();
        let outcome = match answer {
            Err(why) => Outcome::Failed {
                message: format!("redirected to {location}: {why}"),
                server_down: true,
            },
            Ok(addrs) => match check_addrs(location, &lookup.host, lookup.port, &addrs)
                .and_then(|pin| self.next_hop(location, Route::Direct(pin)))
            {
                Ok(()) => return None,
                Err(why) => Outcome::Failed {
                    message: why.to_string(),
                    server_down: false,
                },
            },
        };
        Some(self.end(outcome))
    }

    /// Starts looking up the next hop's host; [`Self::poll`] goes on when it answers.
    fn resolve(&mut self, location: &str, host: String, port: u16) -> Result<(), HopError> {
        self.clear_file()?;
        self.lookup = Some(Lookup::start(location, host, port)?);
        // curl has exited: meanwhile Ctrl-C has only the file to remove.
        crate::signals::untrack(&self.tmp);
        crate::signals::track(&self.tmp, None);
        Ok(())
    }

    /// Empties the file for the next hop: the redirect's own body goes.
    fn clear_file(&mut self) -> Result<(), HopError> {
        self.file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)).map(drop))
            .map_err(|error| HopError::Reuse {
                file: self.tmp.clone(),
                error,
            })
    }

    fn next_hop(&mut self, location: &str, route: Route) -> Result<(), HopError> {
        self.clear_file()?;
        let left = self.deadline.saturating_duration_since(Instant::now());
        let seconds = left.as_secs_f64().ceil() as u64;
        let child = spawn(location, Some(&route), seconds, &self.file).map_err(|e| match e {
            StartError::CurlMissing => HopError::Start("curl went missing".to_string()),
            StartError::Other(m) => HopError::Start(m),
        })?;
        crate::signals::untrack(&self.tmp);
        crate::signals::track(&self.tmp, Some(child.id()));
        self.child = child;
        self.hop = location.to_string();
        self.hops += 1;
        self.proxied = route == Route::Proxied;
        self.may_be_local = parse_target(location).is_ok_and(|t| configured_here(&self.url, &t));
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
    fn the_status_line_is_read_from_the_end_and_cannot_be_forged() {
        let r = read_report("\n@@pss-location https://b.example/x\n@@pss-status 302 1.2.3.4\n");
        assert_eq!(
            (r.http, r.ip, r.location, r.message.as_str()),
            (302, "1.2.3.4", "https://b.example/x", "")
        );
        let r = read_report("curl: (7) Failed to connect\n\n@@pss-location \n@@pss-status 000 \n");
        assert_eq!(
            (r.http, r.ip, r.location, r.message.as_str()),
            (0, "", "", "curl: (7) Failed to connect")
        );
        // A Location that holds a status line of its own: the real one comes last.
        let r = read_report(
            "\n@@pss-location http://a/y @@pss-status 200 8.8.8.8\n@@pss-status 302 127.0.0.1\n",
        );
        assert_eq!(
            (r.http, r.location),
            (302, "http://a/y @@pss-status 200 8.8.8.8")
        );
        // No anchored, well-formed status line last: no status at all.
        for bad in [
            "\n@@pss-location x\n@@pss-status 200 8.8.8.8 extra\n",
            "\n@@pss-location x\n @@pss-status 200 8.8.8.8\n",
            "\n@@pss-status 200 8.8.8.8\nmore\n",
            "\n@@pss-status 20 8.8.8.8\n",
            "\n@@pss-status 200\n",
            "",
        ] {
            assert_eq!(read_report(bad).http, 0, "{bad:?}");
        }
    }
}

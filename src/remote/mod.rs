//! Remote symbol sources (SPEC section 6, step 7), consulted only for what no local file
//! has: Breakpad symbol servers (Tecken), Windows symbol servers, debuginfod. Each file is
//! fetched at most once per run into a disk cache and verified like a local file before
//! use. Downloads are child processes (see `curl.rs`). A lookup never waits: it answers
//! `Pending` and the caller polls (the server loop, `query`), or waits for many at once
//! ([`crate::store::SymbolStore::fetch_all`]). The caches and what may be
//! removed from them: `cache.rs`.

pub mod cache;
pub mod curl;
pub mod redirect;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::resolve::{LoadError, LoadErrorKind};
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;
use crate::shared::options::SymbolOptions;

/// Downloads running at once; more wait in a queue.
const MAX_RUNNING: usize = 8;
/// Eviction runs again when this many bytes have arrived since it last ran, so that long
/// downloads cannot push the caches past their bound.
const EVICT_STEP: u64 = 1 << 30;

/// How long a server that failed (refused, stalled, 5xx) is not asked: a short outage (a
/// VPN reconnecting, a server restarting) is over by then, and a dead server costs one
/// timeout (5 s to connect, 10 s stalled) per pause instead of one per module. Each
/// failure in a row doubles it, up to [`MAX_PAUSE`]; an answer resets it.
/// `$PROFILER_SYMBOL_SERVER_RETRY_AFTER` (seconds) sets the first pause (tests).
const FIRST_PAUSE: Duration = Duration::from_secs(30);
const MAX_PAUSE: Duration = Duration::from_secs(300);

fn first_pause() -> Duration {
    std::env::var("PROFILER_SYMBOL_SERVER_RETRY_AFTER")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(FIRST_PAUSE, |s| Duration::from_secs(s).min(MAX_PAUSE))
}

/// A server's failures in a row: not asked until `until`.
#[derive(Debug, Clone, Copy, Default)]
struct Backoff {
    until: Option<Instant>,
    failed_at: Option<Instant>,
    /// The last pause (zero after an answer).
    pause: Duration,
}

impl Backoff {
    fn is_down(&self) -> bool {
        self.until.is_some_and(|u| Instant::now() < u)
    }

    /// A failure: the next pause, or `None` when the server was already paused (a
    /// download started before the first failure, failing too, counts once).
    fn fail(&mut self, first: Duration) -> Option<Duration> {
        if self.is_down() {
            return None;
        }
        self.pause = if self.pause.is_zero() {
            first
        } else {
            (self.pause * 2).min(MAX_PAUSE)
        };
        let now = Instant::now();
        self.failed_at = Some(now);
        self.until = Some(now + self.pause);
        Some(self.pause)
    }
}

/// A duration as the user reads it: `30 s`, `5 min`.
fn shown(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{} s", s.max(1))
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Breakpad,
    Windows,
    Debuginfod,
}

#[derive(Debug)]
struct Source {
    kind: Kind,
    /// Without a trailing `/`: paths are joined with exactly one.
    base: String,
    cache: PathBuf,
    /// A default cache (ours, or elfutils'): files we write there are recorded in the
    /// index and may be evicted. A cache the user names is only added to.
    prunable: bool,
}

/// What the remote sources have for a module, one candidate at a time: the store opens
/// and checks a cached file as it does a local one, [`Remote::reject`]s it if it is not
/// the module, and asks again from [`Candidate::next`].
pub enum Lookup {
    /// A file downloaded into a source's cache (now or by an earlier run).
    Cached(Candidate),
    /// A download it needs is running or queued: ask again later.
    Pending,
    Absent,
}

/// A cached file of a remote source.
pub struct Candidate {
    pub path: PathBuf,
    /// The server it came from (its names were chosen there).
    pub server: String,
    /// Where to go on from when this one is rejected.
    pub next: usize,
    source: usize,
    rel: PathBuf,
}

struct Queued {
    url: String,
    /// The file's place under its source's cache root.
    rel: PathBuf,
    source: usize,
}

pub struct Remote {
    sources: Vec<Source>,
    /// Servers that failed, each paused for a while (see [`FIRST_PAUSE`]).
    down: Vec<Backoff>,
    /// The first pause after a failure.
    first_pause: Duration,
    /// URLs the servers do not have (404): one request per missing file and run.
    missed: HashSet<String>,
    /// Files that failed verification (wrong ID, not a symbol file), with why: never used
    /// again, and the reason is given again each time.
    rejected: HashMap<PathBuf, LoadError>,
    /// What we wrote into the prunable caches (`None` without a cache folder of our own).
    index: Option<cache::Index>,
    /// Bytes received by running downloads when eviction last ran.
    evicted_at: u64,
    /// Files this run downloaded (a rejected one is removed even from a user's cache).
    wrote: HashSet<PathBuf>,
    running: Vec<curl::Download>,
    queued: VecDeque<Queued>,
    /// Cache roots this run created for a download and has stored nothing in yet: removed
    /// again (only if empty) once no download uses them, so that downloads that found
    /// nothing leave no folder.
    made_roots: HashSet<PathBuf>,
    curl_missing: bool,
    /// Downloads finished so far: the server loop retries parked requests when it moves.
    pub finished: u64,
    quiet: bool,
    verbose: bool,
}

/// `base` + `/` + `rel`, with exactly one slash between them.
pub fn join_url(base: &str, rel: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        rel.trim_start_matches('/')
    )
}

/// Percent-encodes what may not stand in a URL path (RFC 3986 `pchar` and `/` stay), so a
/// name with `#`, `?`, `%` or a space cannot change the URL's meaning.
fn encode_path(rel: &str) -> String {
    crate::shared::pathname::percent_encode(rel, crate::shared::pathname::PATH_CHARS)
}

impl Remote {
    /// Sources from the options, `_NT_SYMBOL_PATH` and `DEBUGINFOD_URLS`; `None` when
    /// there are none.
    pub fn new(opts: &SymbolOptions, debuginfod_urls: Option<&str>) -> Option<Remote> {
        let root = cache::default_root();
        // (folder, prunable): a folder the user names is theirs.
        let named_or = |named: &Option<PathBuf>, sub: &str| match named {
            Some(d) => Some((d.clone(), false)),
            None => root.as_ref().map(|r| (r.join(sub), true)),
        };
        let breakpad_cache = named_or(&opts.breakpad_symbol_cache, "breakpad");
        let windows_cache = named_or(&opts.windows_symbol_cache, "windows");
        let mut sources = Vec::new();
        let mut no_cache = Vec::new();
        let mut add = |kind, url: &str, cache: Option<(PathBuf, bool)>| match cache {
            Some((cache, prunable)) => sources.push(Source {
                kind,
                base: url.trim_end_matches('/').to_string(),
                cache,
                prunable,
            }),
            None => no_cache.push(url.to_string()),
        };
        for url in &opts.breakpad_symbol_servers {
            add(Kind::Breakpad, url, breakpad_cache.clone());
        }
        let windows = opts
            .windows_symbol_servers
            .iter()
            .map(|u| (u.clone(), None))
            .chain(opts.symbol_path.servers.iter().cloned());
        for (url, cache) in windows {
            let cache = cache.map(|c| (c, false)).or_else(|| windows_cache.clone());
            add(Kind::Windows, &url, cache);
        }
        // elfutils prunes its own cache too; we only ever remove what we wrote there, and
        // nothing from a folder the user names in DEBUGINFOD_CACHE_PATH.
        let debuginfod_cache =
            cache::debuginfod_dir().map(|d| (d, cache::debuginfod_dir_named().is_none()));
        for url in debuginfod_urls.unwrap_or("").split_whitespace() {
            if url.starts_with("http://") || url.starts_with("https://") {
                add(Kind::Debuginfod, url, debuginfod_cache.clone());
            }
        }
        if !no_cache.is_empty() {
            crate::log::elog!(
                "warning: no cache folder (HOME, XDG_CACHE_HOME or LOCALAPPDATA is unset): {} not used; name one with --breakpad-symbol-cache, --windows-symbol-cache or DEBUGINFOD_CACHE_PATH",
                no_cache.join(", ")
            );
        }
        // A cache folder that is a symlink or another user's is refused, with its servers.
        let mut refused: Vec<PathBuf> = Vec::new();
        sources.retain(|s| match cache::check_root(&s.cache) {
            Ok(()) => true,
            Err(e) => {
                if !refused.contains(&s.cache) {
                    crate::log::elog!("warning: {e}; symbol servers using it are not asked");
                    refused.push(s.cache.clone());
                }
                false
            }
        });
        if sources.is_empty() {
            return None;
        }
        Some(Remote {
            down: vec![Backoff::default(); sources.len()],
            first_pause: first_pause(),
            sources,
            missed: HashSet::new(),
            rejected: HashMap::new(),
            index: root.as_deref().map(cache::Index::new),
            evicted_at: 0,
            wrote: HashSet::new(),
            running: Vec::new(),
            queued: VecDeque::new(),
            made_roots: HashSet::new(),
            curl_missing: false,
            finished: 0,
            quiet: opts.quiet,
            verbose: opts.verbose,
        })
    }

    /// The folders downloads are saved in.
    pub fn cache_dirs(&self) -> impl Iterator<Item = &Path> {
        self.sources.iter().map(|s| s.cache.as_path())
    }

    /// Looks a module up on the remote sources that fit it, in order, from source `from`
    /// on: the first cached file, or `Pending` when a download this needs is started (or
    /// queued). Errors of each source passed over go to `errors`.
    pub fn find(
        &mut self,
        debug_name: &str,
        breakpad_id: &DebugId,
        lib: Option<&Lib>,
        from: usize,
        errors: &mut Vec<LoadError>,
    ) -> Lookup {
        if !crate::shared::pathname::is_plain(debug_name) {
            return Lookup::Absent;
        }
        let id = breakpad_id.path_component();
        let build_id = lib.and_then(|l| l.elf_build_id(breakpad_id));
        let mut pending = false;
        for i in from..self.sources.len() {
            let src = &self.sources[i];
            let rel = match src.kind {
                Kind::Breakpad => {
                    crate::shared::pathname::breakpad_sym_path(debug_name, breakpad_id)
                }
                // Symbol servers hold PDBs under their name (binaries by code ID, for
                // code, are not fetched yet).
                Kind::Windows if debug_name.to_ascii_lowercase().ends_with(".pdb") => {
                    format!("{debug_name}/{id}/{debug_name}")
                }
                Kind::Debuginfod => match &build_id {
                    Some(b) => format!("{b}/debuginfo"),
                    None => continue,
                },
                _ => continue,
            };
            let url = match src.kind {
                Kind::Debuginfod => join_url(&src.base, &format!("buildid/{rel}")),
                _ => join_url(&src.base, &encode_path(&rel)),
            };
            match self.fetch(i, &url, Path::new(&rel), errors) {
                Lookup::Cached(c) => return Lookup::Cached(c),
                // Later sources are not asked meanwhile: they come after this one.
                Lookup::Pending => pending = true,
                Lookup::Absent => continue,
            }
            if pending {
                break;
            }
        }
        if pending {
            Lookup::Pending
        } else {
            Lookup::Absent
        }
    }

    fn fetch(
        &mut self,
        source: usize,
        url: &str,
        rel: &Path,
        errors: &mut Vec<LoadError>,
    ) -> Lookup {
        let root = self.sources[source].cache.clone();
        let dest = root.join(rel);
        if let Some(e) = self.rejected.get(&dest) {
            errors.push(e.clone());
            return Lookup::Absent;
        }
        match cache::lookup(&root, rel) {
            // elfutils records a miss as an empty file: absent, without asking.
            Ok(Some(m)) if m.len() == 0 => {
                errors.push(LoadError::new(
                    LoadErrorKind::NotFound,
                    &dest,
                    "an empty cache entry (a miss remembered by the debuginfod client)",
                ));
                return Lookup::Absent;
            }
            Ok(Some(_)) => return self.cached(source, rel, errors),
            Ok(None) => {}
            // A symlink or a non-folder planted in the cache: never followed, never asked
            // over (the download could not be stored there either).
            Err(e) => {
                errors.push(LoadError::msg(LoadErrorKind::CacheRefused, e.to_string()));
                return Lookup::Absent;
            }
        }
        if self.running.iter().any(|d| d.url == url) || self.queued.iter().any(|q| q.url == url) {
            return Lookup::Pending;
        }
        let server = &self.sources[source].base;
        if self.missed.contains(url) {
            errors.push(LoadError::msg(
                LoadErrorKind::NotFound,
                format!("{url}: not on the server"),
            ));
            return Lookup::Absent;
        }
        if self.down[source].is_down() {
            let b = self.down[source];
            let ago = b.failed_at.map_or(Duration::ZERO, |t| t.elapsed());
            let left = b.until.map_or(Duration::ZERO, |u| {
                u.saturating_duration_since(Instant::now())
            });
            errors.push(LoadError::msg(
                LoadErrorKind::ServerDown,
                format!(
                    "{url}: not asked, {server} failed {} ago; asked again in {}",
                    shown(ago),
                    shown(left)
                ),
            ));
            return Lookup::Absent;
        }
        if self.curl_missing {
            errors.push(LoadError::msg(
                LoadErrorKind::NoHttpClient,
                format!("{url}: not fetched, curl is not installed"),
            ));
            return Lookup::Absent;
        }
        let job = Queued {
            url: url.to_string(),
            rel: rel.to_path_buf(),
            source,
        };
        self.queued.push_back(job);
        self.start_queued();
        Lookup::Pending
    }

    /// The cached file at `rel` of `source`, as a candidate: marked as used (eviction
    /// goes by age), and passed over when it is a CAB-compressed answer.
    fn cached(&mut self, source: usize, rel: &Path, errors: &mut Vec<LoadError>) -> Lookup {
        let root = &self.sources[source].cache;
        cache::touch(root, rel);
        let dest = root.join(rel);
        let cab = crate::fs::open_regular(&dest).ok().and_then(|mut f| {
            let mut magic = [0u8; 4];
            std::io::Read::read_exact(&mut f, &mut magic).ok()?;
            Some(&magic == b"MSCF")
        });
        let candidate = Candidate {
            path: dest.clone(),
            server: self.sources[source].base.clone(),
            next: source + 1,
            source,
            rel: rel.to_path_buf(),
        };
        if cab == Some(true) {
            let e = LoadError::new(
                LoadErrorKind::UnsupportedFormat,
                &dest,
                "a CAB-compressed file (.pd_); compressed symbol server answers are not supported",
            );
            self.reject(&candidate, e.clone());
            errors.push(e);
            return Lookup::Absent;
        }
        Lookup::Cached(candidate)
    }

    /// A cached file that is not what was asked for (the store's check failed): never used
    /// again, and not kept in the cache if it is one we wrote (this run, or listed in our
    /// index). Another tool's file (elfutils', gdb's) is left as it is.
    pub fn reject(&mut self, c: &Candidate, e: LoadError) {
        let root = &self.sources[c.source].cache;
        let ours = self.wrote.contains(&c.path)
            || (self.sources[c.source].prunable
                && self.index.as_ref().is_some_and(|i| i.lists(root, &c.rel)));
        if ours {
            let _ = std::fs::remove_file(&c.path);
        } else if self.verbose {
            crate::log::elog!(
                "  {}: not used; left in place, this program did not write it",
                c.path.display()
            );
        }
        self.rejected.insert(c.path.clone(), e);
    }

    /// Starts a download; `None` when it could not start (recorded, so asking again
    /// reports why).
    fn start(&mut self, job: Queued) -> Option<curl::Download> {
        let src = &self.sources[job.source];
        match curl::start(&job.url, &src.cache, &job.rel, job.source) {
            Ok(d) => {
                if self.verbose {
                    crate::log::elog!("  fetching {}", job.url);
                }
                // Not listed in the index: only what was stored is. A partial file that a
                // killed run leaves is recognised by its name (`evict`).
                if d.made_root {
                    self.made_roots.insert(d.root.clone());
                }
                Some(d)
            }
            Err(curl::StartError::CurlMissing) => {
                if !self.curl_missing {
                    crate::log::elog!(
                        "warning: curl is not installed: symbol servers are not used, only local files"
                    );
                }
                self.curl_missing = true;
                None
            }
            Err(curl::StartError::Other(message)) => {
                crate::log::elog!("warning: {}: {message}", job.url);
                self.missed.insert(job.url);
                None
            }
        }
    }

    fn start_queued(&mut self) {
        while self.running.len() < MAX_RUNNING {
            let Some(job) = self.queued.pop_front() else {
                break;
            };
            if self.down[job.source].is_down() || self.curl_missing {
                // Asking again reports it.
                continue;
            }
            match self.start(job) {
                Some(d) => self.running.push(d),
                // It changes what asking again says.
                None => self.finished += 1,
            }
        }
    }

    /// Keeps the prunable caches within their bound, counting the bytes still arriving.
    fn evict(&mut self) {
        let in_flight: u64 = self.running.iter().map(curl::Download::received).sum();
        self.evicted_at = in_flight;
        if let Some(index) = &self.index {
            index.evict(cache::MAX_BYTES, cache::MAX_AGE, in_flight);
        }
        for s in self.sources.iter().filter(|s| s.prunable) {
            cache::sweep_parts(&s.cache);
        }
    }

    fn record(&mut self, d: &curl::Download, outcome: curl::Outcome) {
        self.finished += 1;
        if matches!(outcome, curl::Outcome::Saved) {
            self.made_roots.remove(&d.root);
        } else if self.made_roots.contains(&d.root)
            && !self.running.iter().any(|r| r.root == d.root)
        {
            // `remove_dir` removes an empty folder only.
            cache::remove_if_made(&d.root, true);
            self.made_roots.remove(&d.root);
        }
        match outcome {
            curl::Outcome::Saved => {
                // It answered: a later failure starts from the first pause again.
                self.down[d.source] = Backoff::default();
                if self.verbose {
                    crate::log::elog!("  fetched {}", d.url);
                }
                if !self.quiet
                    && let Some(line) = d.done_line()
                {
                    crate::log::elog!("  {line}");
                }
                let dest = d.root.join(&d.rel);
                self.wrote.insert(dest.clone());
                if self.sources[d.source].prunable
                    && let Some(index) = &self.index
                {
                    let size = std::fs::symlink_metadata(&dest).map_or(0, |m| m.len());
                    index.record(&d.root, &d.rel, size);
                }
                self.evict();
            }
            curl::Outcome::NotFound => {
                self.down[d.source] = Backoff::default();
                self.missed.insert(d.url.clone());
            }
            curl::Outcome::Failed {
                message,
                server_down,
            } => {
                if server_down {
                    // Said once per pause: meanwhile the run works from local data and
                    // the other servers.
                    if let Some(pause) = self.down[d.source].fail(self.first_pause) {
                        crate::log::elog!(
                            "warning: symbol server {} failed ({message}); not asked again for {} (each failure in a row doubles the pause, up to {})",
                            self.sources[d.source].base,
                            shown(pause),
                            shown(MAX_PAUSE)
                        );
                    }
                } else {
                    if !self.quiet {
                        crate::log::elog!("warning: {}: {message}", d.url);
                    }
                    self.missed.insert(d.url.clone());
                }
            }
        }
    }

    /// Reaps finished downloads and starts queued ones (the server loop, every tick).
    pub fn poll(&mut self) {
        let mut i = 0;
        while i < self.running.len() {
            if !self.quiet
                && let Some(line) = self.running[i].progress()
            {
                crate::log::elog!("  {line}");
            }
            match self.running[i].poll() {
                Some(outcome) => {
                    let d = self.running.swap_remove(i);
                    self.record(&d, outcome);
                }
                None => i += 1,
            }
        }
        let in_flight: u64 = self.running.iter().map(curl::Download::received).sum();
        if in_flight >= self.evicted_at.saturating_add(EVICT_STEP) {
            self.evict();
        }
        self.start_queued();
    }

    /// Blocks until one running download ends (the others go on meanwhile), then starts
    /// queued ones. For the modes without a server loop.
    pub fn wait_any(&mut self) {
        let before = self.finished;
        self.poll();
        // Polled, not waited on one child: every running download's bytes stay counted.
        while self.finished == before && !self.running.is_empty() {
            std::thread::sleep(curl::WAIT_TICK);
            self.poll();
        }
    }

    /// Stops every download and removes its partial file (Ctrl-C).
    pub fn shutdown(&mut self) {
        for d in &mut self.running {
            d.kill();
        }
        self.running.clear();
        self.queued.clear();
        for root in self.made_roots.drain() {
            cache::remove_if_made(&root, true);
        }
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_symbol_paths() {
        assert_eq!(join_url("http://a/b/", "c/d"), "http://a/b/c/d");
        assert_eq!(join_url("http://a/b", "c/d"), "http://a/b/c/d");
        assert_eq!(
            encode_path("libstdc++.so.6/ID/a b#?%.sym"),
            "libstdc++.so.6/ID/a%20b%23%3F%25.sym"
        );
        let s = crate::shared::options::SymbolPath::parse(
            r"srv*C:\cache*https://msdl.microsoft.com/download/symbols;D:\syms;srv*http://x/",
        )
        .servers;
        assert_eq!(
            s,
            [
                (
                    "https://msdl.microsoft.com/download/symbols".to_string(),
                    Some(PathBuf::from(r"C:\cache"))
                ),
                ("http://x/".to_string(), None)
            ]
        );
    }

    #[test]
    fn a_failed_server_is_paused_longer_after_each_failure_in_a_row() {
        let mut b = Backoff::default();
        assert!(!b.is_down());
        assert_eq!(b.fail(FIRST_PAUSE), Some(FIRST_PAUSE));
        assert!(b.is_down());
        // Another download failing meanwhile does not lengthen the pause.
        assert_eq!(b.fail(FIRST_PAUSE), None);
        // Once the pause is over, the next failure doubles it, up to the cap.
        let mut pauses = Vec::new();
        for _ in 0..6 {
            b.until = Some(Instant::now());
            pauses.push(b.fail(FIRST_PAUSE).unwrap().as_secs());
        }
        assert_eq!(pauses, [60, 120, 240, 300, 300, 300]);
        assert_eq!(
            (shown(FIRST_PAUSE), shown(MAX_PAUSE)),
            ("30 s".into(), "5 min".into())
        );
    }
}

//! Remote symbol sources (SPEC section 6, step 7), consulted only for what no local file
//! has: Breakpad symbol servers (Tecken), Windows symbol servers, debuginfod. Each file is
//! fetched at most once per run into a disk cache and verified like a local file before
//! use. Downloads are child processes (see `curl.rs`) polled by the server loop, which
//! never waits for one; `query` and `symbolicate` wait (`blocking`).

pub mod cache;
pub mod curl;
pub mod glue;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::cli::SymbolOptions;
use crate::profile::libs::Lib;
use crate::resolve::{LoadError, Module};

/// Downloads running at once; more wait in a queue.
const MAX_RUNNING: usize = 8;

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
}

/// What the remote sources have for a module.
pub enum Lookup {
    Found(Module),
    /// A download it needs is running or queued: ask again later.
    Pending,
    Absent,
}

struct Queued {
    url: String,
    dest: PathBuf,
    source: usize,
}

pub struct Remote {
    sources: Vec<Source>,
    down: Vec<bool>,
    /// URLs the servers do not have (404): one request per missing file and run.
    missed: HashSet<String>,
    /// Files that failed verification (wrong ID, not a symbol file), with why: never used
    /// again, and the reason is given again each time.
    rejected: HashMap<PathBuf, LoadError>,
    running: Vec<curl::Download>,
    queued: VecDeque<Queued>,
    /// Wait for each download (query, symbolicate) instead of answering `Pending`.
    pub blocking: bool,
    curl_missing: bool,
    /// Downloads finished so far: the server loop retries parked requests when it moves.
    pub finished: u64,
    evicted: bool,
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
    let mut out = String::with_capacity(rel.len());
    for b in rel.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\\') && !name.contains("..")
}

/// The `srv*CACHE*URL` entries of a `_NT_SYMBOL_PATH`-style value: each server with the
/// cache folder written before it in its entry, if any.
pub fn symbol_path_servers(value: &str) -> Vec<(String, Option<PathBuf>)> {
    let mut out = Vec::new();
    for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let mut cache = None;
        for p in entry.split('*').filter(|p| !p.is_empty()) {
            if p.starts_with("http://") || p.starts_with("https://") {
                out.push((p.to_string(), cache.clone()));
            } else if !matches!(p.to_ascii_lowercase().as_str(), "srv" | "symsrv" | "cache")
                && !p.ends_with(".dll")
            {
                cache = Some(PathBuf::from(p));
            }
        }
    }
    out
}

/// The GNU build ID of an ELF module, from the profile's code ID, when it is one: hex,
/// and its first 16 bytes give the requested debug ID (which rules out PE and Mach-O
/// code IDs).
fn elf_build_id(lib: Option<&Lib>, breakpad_id: &str) -> Option<String> {
    let code_id = lib?.code_id.as_deref()?.to_ascii_lowercase();
    if code_id.len() < 8
        || code_id.len() % 2 != 0
        || !code_id.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    let bytes: Vec<u8> = (0..code_id.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(&code_id[i..i + 2], 16).ok())
        .collect();
    let id = crate::debugid::elf_from_build_id(&bytes, true);
    crate::debugid::same_id(&id, breakpad_id).then_some(code_id)
}

impl Remote {
    /// Sources from the options, `_NT_SYMBOL_PATH` and `DEBUGINFOD_URLS`; `None` when
    /// there are none.
    pub fn new(
        opts: &SymbolOptions,
        nt_symbol_path: Option<&str>,
        debuginfod_urls: Option<&str>,
    ) -> Option<Remote> {
        let root = cache::default_root();
        let breakpad_cache = opts
            .breakpad_symbol_cache
            .clone()
            .unwrap_or_else(|| root.join("breakpad"));
        let windows_cache = opts
            .windows_symbol_cache
            .clone()
            .unwrap_or_else(|| root.join("windows"));
        let mut sources = Vec::new();
        for url in &opts.breakpad_symbol_servers {
            sources.push(Source {
                kind: Kind::Breakpad,
                base: url.trim_end_matches('/').to_string(),
                cache: breakpad_cache.clone(),
            });
        }
        let mut windows: Vec<(String, Option<PathBuf>)> = opts
            .windows_symbol_servers
            .iter()
            .map(|u| (u.clone(), None))
            .collect();
        for value in opts
            .windows_symbol_path
            .iter()
            .map(String::as_str)
            .chain(nt_symbol_path)
        {
            windows.extend(symbol_path_servers(value));
        }
        for (url, cache) in windows {
            sources.push(Source {
                kind: Kind::Windows,
                base: url.trim_end_matches('/').to_string(),
                cache: cache.unwrap_or_else(|| windows_cache.clone()),
            });
        }
        let debuginfod_cache = cache::debuginfod_dir();
        for url in debuginfod_urls.unwrap_or("").split_whitespace() {
            if url.starts_with("http://") || url.starts_with("https://") {
                sources.push(Source {
                    kind: Kind::Debuginfod,
                    base: url.trim_end_matches('/').to_string(),
                    cache: debuginfod_cache.clone(),
                });
            }
        }
        if sources.is_empty() {
            return None;
        }
        Some(Remote {
            down: vec![false; sources.len()],
            sources,
            missed: HashSet::new(),
            rejected: HashMap::new(),
            running: Vec::new(),
            queued: VecDeque::new(),
            blocking: true,
            curl_missing: false,
            finished: 0,
            evicted: false,
            quiet: opts.quiet,
            verbose: opts.verbose,
        })
    }

    /// The folders downloads are saved in.
    pub fn cache_dirs(&self) -> impl Iterator<Item = &Path> {
        self.sources.iter().map(|s| s.cache.as_path())
    }

    pub fn has_debuginfod(&self) -> bool {
        self.sources.iter().any(|s| s.kind == Kind::Debuginfod)
    }

    /// Looks a module up on the remote sources, in order. `debuginfod_only` for an ELF
    /// module found locally without DWARF. `load` opens and verifies a file (the store's
    /// own check, as for local files); errors of each source tried go to `errors`.
    pub fn find(
        &mut self,
        debug_name: &str,
        breakpad_id: &str,
        lib: Option<&Lib>,
        debuginfod_only: bool,
        load: &mut dyn FnMut(&Path) -> Result<Module, LoadError>,
        errors: &mut Vec<LoadError>,
    ) -> Lookup {
        if !is_plain_name(debug_name) {
            return Lookup::Absent;
        }
        let id = breakpad_id.to_ascii_uppercase();
        let build_id = elf_build_id(lib, breakpad_id);
        let mut pending = false;
        for i in 0..self.sources.len() {
            let src = &self.sources[i];
            let rel = match src.kind {
                Kind::Breakpad if !debuginfod_only => {
                    let stem = debug_name.strip_suffix(".pdb").unwrap_or(debug_name);
                    format!("{debug_name}/{id}/{stem}.sym")
                }
                // Symbol servers hold PDBs under their name (binaries by code ID, for
                // code, are not fetched yet).
                Kind::Windows
                    if !debuginfod_only && debug_name.to_ascii_lowercase().ends_with(".pdb") =>
                {
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
            let dest = src.cache.join(&rel);
            match self.fetch(i, &url, &dest, load, errors) {
                Lookup::Found(m) => return Lookup::Found(m),
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
        dest: &Path,
        load: &mut dyn FnMut(&Path) -> Result<Module, LoadError>,
        errors: &mut Vec<LoadError>,
    ) -> Lookup {
        if let Some(e) = self.rejected.get(dest) {
            errors.push(e.clone());
            return Lookup::Absent;
        }
        match std::fs::metadata(dest) {
            // elfutils records a miss as an empty file: absent, without asking.
            Ok(m) if m.is_file() && m.len() == 0 => {
                errors.push(LoadError::new(
                    "NotFound",
                    dest,
                    "an empty cache entry (a miss remembered by the debuginfod client)",
                ));
                return Lookup::Absent;
            }
            Ok(m) if m.is_file() => return self.verify(dest, load, errors),
            _ => {}
        }
        if self.running.iter().any(|d| d.url == url) || self.queued.iter().any(|q| q.url == url) {
            return Lookup::Pending;
        }
        let server = &self.sources[source].base;
        if self.missed.contains(url) {
            errors.push(LoadError {
                kind: "NotFound",
                message: format!("{url}: not on the server"),
            });
            return Lookup::Absent;
        }
        if self.down[source] {
            errors.push(LoadError {
                kind: "ServerDown",
                message: format!("{url}: not asked, {server} failed earlier in this run"),
            });
            return Lookup::Absent;
        }
        if self.curl_missing {
            errors.push(LoadError {
                kind: "NoHttpClient",
                message: format!("{url}: not fetched, curl is not installed"),
            });
            return Lookup::Absent;
        }
        let job = Queued {
            url: url.to_string(),
            dest: dest.to_path_buf(),
            source,
        };
        if !self.blocking {
            self.queued.push_back(job);
            self.start_queued();
            return Lookup::Pending;
        }
        match self.start(job) {
            Some(mut d) => {
                let outcome = d.wait();
                self.record(&d, outcome);
            }
            None => return self.fetch(source, url, dest, load, errors),
        }
        if dest.is_file() {
            return self.verify(dest, load, errors);
        }
        // The outcome was recorded: this reports it.
        self.fetch(source, url, dest, load, errors)
    }

    fn verify(
        &mut self,
        dest: &Path,
        load: &mut dyn FnMut(&Path) -> Result<Module, LoadError>,
        errors: &mut Vec<LoadError>,
    ) -> Lookup {
        cache::touch(dest);
        let cab = crate::resolve::bytes::open_regular(dest)
            .ok()
            .and_then(|mut f| {
                let mut magic = [0u8; 4];
                std::io::Read::read_exact(&mut f, &mut magic).ok()?;
                Some(&magic == b"MSCF")
            });
        let result = if cab == Some(true) {
            Err(LoadError::new(
                "UnsupportedFormat",
                dest,
                "a CAB-compressed file (.pd_); compressed symbol server answers are not supported",
            ))
        } else {
            load(dest)
        };
        match result {
            Ok(m) => Lookup::Found(m),
            Err(e) => {
                // A complete file that is not what was asked for: never used again, and
                // not kept in the cache.
                let _ = std::fs::remove_file(dest);
                self.rejected.insert(dest.to_path_buf(), e.clone());
                errors.push(e);
                Lookup::Absent
            }
        }
    }

    /// Starts a download; `None` when it could not start (recorded, so asking again
    /// reports why).
    fn start(&mut self, job: Queued) -> Option<curl::Download> {
        match curl::start(&job.url, &job.dest, job.source) {
            Ok(d) => {
                if self.verbose {
                    crate::elog!("  fetching {}", job.url);
                }
                Some(d)
            }
            Err(curl::StartError::CurlMissing) => {
                if !self.curl_missing {
                    crate::elog!(
                        "warning: curl is not installed: symbol servers are not used, only local files"
                    );
                }
                self.curl_missing = true;
                None
            }
            Err(curl::StartError::Other(message)) => {
                crate::elog!("warning: {}: {message}", job.url);
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
            if self.down[job.source] || self.curl_missing {
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

    fn record(&mut self, d: &curl::Download, outcome: curl::Outcome) {
        self.finished += 1;
        match outcome {
            curl::Outcome::Saved => {
                if self.verbose {
                    crate::elog!("  fetched {}", d.url);
                }
                if !self.evicted {
                    // Once per run, after the first download: the cache stays bounded.
                    self.evicted = true;
                    let mut caches: Vec<&Path> = Vec::new();
                    for s in self.sources.iter().filter(|s| s.kind != Kind::Debuginfod) {
                        if !caches.contains(&s.cache.as_path()) {
                            caches.push(&s.cache);
                        }
                    }
                    for c in caches {
                        cache::evict(c, cache::MAX_BYTES, cache::MAX_AGE);
                    }
                }
            }
            curl::Outcome::NotFound => {
                self.missed.insert(d.url.clone());
            }
            curl::Outcome::Failed {
                message,
                server_down,
            } => {
                if server_down {
                    if !self.down[d.source] {
                        // Once per server: the rest of the run works from local data.
                        crate::elog!(
                            "warning: symbol server {} failed ({message}); not used again in this run",
                            self.sources[d.source].base
                        );
                    }
                    self.down[d.source] = true;
                } else {
                    if !self.quiet {
                        crate::elog!("warning: {}: {message}", d.url);
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
            match self.running[i].poll() {
                Some(outcome) => {
                    let d = self.running.swap_remove(i);
                    self.record(&d, outcome);
                }
                None => i += 1,
            }
        }
        self.start_queued();
    }

    /// Blocks until one running download ends (the others go on meanwhile), then starts
    /// queued ones. For the modes without a server loop.
    pub fn wait_any(&mut self) {
        if self.running.is_empty() {
            self.start_queued();
            return;
        }
        let mut d = self.running.swap_remove(0);
        let outcome = d.wait();
        self.record(&d, outcome);
        self.poll();
    }

    /// Stops every download and removes its partial file (Ctrl-C).
    pub fn shutdown(&mut self) {
        for d in &mut self.running {
            d.kill();
        }
        self.running.clear();
        self.queued.clear();
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
        let s = symbol_path_servers(
            r"srv*C:\cache*https://msdl.microsoft.com/download/symbols;D:\syms;srv*http://x/",
        );
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
    fn build_ids_only_for_elf_code_ids() {
        let lib = |code: &str| Lib {
            code_id: Some(code.to_string()),
            ..Default::default()
        };
        let elf = lib("eae34e02f5655745dd557688f4ec4af564554074");
        assert_eq!(
            elf_build_id(Some(&elf), "024EE3EA65F54557DD557688F4EC4AF50").as_deref(),
            Some("eae34e02f5655745dd557688f4ec4af564554074")
        );
        // A PE code ID (timestamp + size) is not a build ID.
        assert!(
            elf_build_id(
                Some(&lib("6553F1003000")),
                "A0EA581CEB06F24F4C4C44205044422E1"
            )
            .is_none()
        );
    }
}

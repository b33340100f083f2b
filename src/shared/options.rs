//! What the store is told by the command line: where debug information is looked for
//! (folders, archives, symbol paths, servers and their caches) and how much to say. The
//! command line fills it in (`cli.rs`); the store and its remote sources read it.

use std::path::PathBuf;

/// Where debug information is looked for, shared by every mode.
/// `--windows-symbol-path` and `$_NT_SYMBOL_PATH`, parsed once here: the store reads its
/// folders (local symstores), the remote sources its servers.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SymbolPath {
    /// Every folder, in order: local symstores (a server's cache folder is one too).
    pub folders: Vec<PathBuf>,
    /// Every `http(s)://` server, with the folder written before it in its entry, if any
    /// (its download cache: `srv*CACHE*URL`).
    pub servers: Vec<(String, Option<PathBuf>)>,
}

impl SymbolPath {
    /// Parses `entry;entry;...`, each entry `*`-separated parts: `srv`, `symsrv` and `cache`
    /// are keywords, `*.dll` a symsrv DLL, `http://` and `https://` parts servers, any other
    /// part a folder (`srv*C:\cache*https://server`, `cache*DIR`, `DIR`).
    pub fn parse(value: &str) -> SymbolPath {
        let mut out = SymbolPath::default();
        for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
            let mut cache = None;
            for p in entry.split('*').filter(|p| !p.is_empty()) {
                if p.starts_with("http://") || p.starts_with("https://") {
                    out.servers.push((p.to_string(), cache.clone()));
                } else if !matches!(p.to_ascii_lowercase().as_str(), "srv" | "symsrv" | "cache")
                    && !p.ends_with(".dll")
                {
                    out.folders.push(PathBuf::from(p));
                    cache = Some(PathBuf::from(p));
                }
            }
        }
        out
    }

    /// Adds `other`'s folders and servers after these.
    pub fn extend(&mut self, other: SymbolPath) {
        self.folders.extend(other.folders);
        self.servers.extend(other.servers);
    }
}

#[derive(Debug, Clone, Default)]
pub struct SymbolOptions {
    pub symbol_dirs: Vec<PathBuf>,
    pub breakpad_symbol_dirs: Vec<PathBuf>,
    pub symbols_zips: Vec<PathBuf>,
    /// `--windows-symbol-path`, then `$_NT_SYMBOL_PATH` (added where the mode starts).
    pub symbol_path: SymbolPath,
    pub verbose: bool,
    pub quiet: bool,
    /// Remote sources and their caches (samply's options; see src/remote/).
    pub breakpad_symbol_servers: Vec<String>,
    pub breakpad_symbol_cache: Option<PathBuf>,
    pub windows_symbol_servers: Vec<String>,
    pub windows_symbol_cache: Option<PathBuf>,
    /// Binaries under their on-device path: `<dir>/<lib path>`.
    pub simpleperf_binary_caches: Vec<PathBuf>,
    /// dyld shared caches (main files) to read system libraries from.
    pub dyld_shared_caches: Vec<PathBuf>,
    /// Prepared indexes between runs: read them, and whether to write them
    /// (`store::index`).
    pub index_cache: IndexCacheUse,
    /// `--index-cache-size`: bytes the index folder may hold; `None`: the default.
    pub index_cache_bytes: Option<u64>,
}

/// What a mode does with the prepared-index folder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IndexCacheUse {
    /// `--no-index-cache` or `PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE`.
    Off,
    /// One-shot modes: read indexes, write none.
    #[default]
    Read,
    /// The server: read them, and write them in its idle time.
    ReadWrite,
}

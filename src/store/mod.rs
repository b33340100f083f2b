//! The symbol store: finds the debug file for `(debugName, breakpadId)`, checks its ID,
//! hands it to the right format resolver, and keeps parsed modules in a bounded cache.
//! The search order (steps 1 to 8) is one list, made in `paths.rs` and walked here; a
//! module's remembered answers are `memo.rs`.

pub mod codefile;
mod downloads;
mod index;
mod memo;
mod paths;
mod prepare;
mod vdso;
pub mod zip;

use crate::shared::pathname::is_plain;
use paths::{Candidate, Step};

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::remote::Remote;
use crate::resolve::macho::dyld::{self, DyldCache};
use crate::resolve::sidecar::{self, SidecarModule};
use crate::resolve::{self, Companion, LoadContext, LoadError, LoadErrorKind, Module};
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;
use crate::shared::options::{IndexCacheUse, SymbolOptions};
use crate::store::zip::ZipArchive;
use downloads::RemoteFound;
pub use memo::{Answered, LoadedModule};

/// Cache bounds: parsed modules kept, and the debug bytes they may hold together.
pub const DEFAULT_MAX_MODULES: usize = 32;
pub const DEFAULT_MAX_BYTES: u64 = crate::resolve::section::BUDGET_MAX;
/// What the cached modules' symbol-table names may hold together, on the heap (a module
/// alone may hold [`crate::resolve::symnames::MAX_NAME_BYTES`]): the module cache's 4 GiB
/// is for mapped debug data, which the system can page out; names are heap a laptop
/// keeps. Two libxul-sized tables fit; 20 crafted files of 100 MB of names each no longer
/// add up (the oldest modules go first).
pub const MAX_NAMES_TOTAL: u64 = 384 << 20;

/// A sidecar's modules by (debug name, upper-case debug ID).
type SidecarModules = std::collections::HashMap<(String, DebugId), Rc<SidecarModule>>;

/// Modules remembered as making a parser panic (beyond that, they are tried again).
const MAX_POISONED: usize = 4096;

/// A local file a module was read from, and its stamp then.
type Source = (PathBuf, crate::fs::FileStamp);

struct CacheEntry {
    debug_name: String,
    breakpad_id: DebugId,
    module: Rc<LoadedModule>,
    last_used: u64,
    /// The local file the module was read from and its stamp then: a file changed since
    /// (rebuilt, truncated, replaced) drops the module, which is read again.
    source: Option<Source>,
}

impl CacheEntry {
    fn is_stale(&self) -> bool {
        self.source
            .as_ref()
            .is_some_and(|(path, stamp)| crate::fs::FileStamp::of(path).as_ref() != Some(stamp))
    }
}

/// A dyld shared cache, mapped and indexed on first use and kept from then on (its
/// images' modules go through the bounded module cache like any other).
struct DyldSource {
    path: PathBuf,
    opened: Option<Result<Rc<DyldCache>, LoadError>>,
}

/// A `--symbols-zip` archive, its central directory read on first use.
struct Archive {
    path: PathBuf,
    opened: Option<Result<ZipArchive, zip::ZipError>>,
}

pub struct SymbolStore {
    opts: SymbolOptions,
    /// Local folders of `--windows-symbol-path` / `_NT_SYMBOL_PATH`.
    symstores: Vec<PathBuf>,
    /// Those of them that are caches of a symbol server (`srv*CACHE*URL`): what is
    /// found there was downloaded, even when found as a local file.
    server_caches: Vec<PathBuf>,
    /// Servers, debuginfod and their caches (step 7); `None` without any.
    remote: Option<Remote>,
    archives: Vec<Archive>,
    /// `--dyld-shared-cache` files, then (macOS) the system's caches.
    dyld_caches: Vec<DyldSource>,
    /// The profile's `.syms.json`, parsed on first need; its modules are taken out as
    /// they are used.
    sidecar: Option<(PathBuf, Option<Result<SidecarModules, LoadError>>)>,
    cache: Vec<CacheEntry>,
    /// Modules whose files made a parser panic: answered with that error from then on,
    /// never parsed again (bounded: one entry per module asked for).
    poisoned: Vec<(String, DebugId, LoadError)>,
    max_modules: usize,
    max_bytes: u64,
    clock: u64,
    /// A module's files being opened ahead by idle-time work (`prepare.rs`).
    preparing: Option<prepare::Preparing>,
    /// Prepared indexes kept between runs (`index.rs`).
    index: index::IndexCache,
}

impl SymbolStore {
    /// Whether `-v` was given (every candidate and the full advice on stderr).
    pub fn verbose(&self) -> bool {
        self.opts.verbose
    }

    pub fn new(opts: SymbolOptions) -> SymbolStore {
        let mut symstores = Vec::new();
        let mut server_caches = Vec::new();
        // Their servers are fetched from by `remote`.
        symstores.extend(opts.symbol_path.folders.iter().cloned());
        server_caches.extend(
            opts.symbol_path
                .servers
                .iter()
                .filter_map(|(_, cache)| cache.clone()),
        );
        let archives = opts
            .symbols_zips
            .iter()
            .map(|p| Archive {
                path: p.clone(),
                opened: None,
            })
            .collect();
        let dyld_caches = opts
            .dyld_shared_caches
            .iter()
            .cloned()
            .chain(paths::system_dyld_caches())
            .map(|path| DyldSource { path, opened: None })
            .collect();
        let index = index::IndexCache::new(
            match opts.index_cache {
                IndexCacheUse::Off => index::IndexMode::Off,
                IndexCacheUse::Read => index::IndexMode::Read,
                IndexCacheUse::ReadWrite => index::IndexMode::ReadWrite,
            },
            opts.index_cache_bytes.unwrap_or(index::DEFAULT_MAX_BYTES),
            opts.quiet,
        );
        SymbolStore {
            index,
            opts,
            symstores,
            server_caches,
            remote: None,
            archives,
            dyld_caches,
            sidecar: None,
            cache: Vec::new(),
            poisoned: Vec::new(),
            max_modules: DEFAULT_MAX_MODULES,
            max_bytes: DEFAULT_MAX_BYTES,
            clock: 0,
            preparing: None,
        }
    }

    /// Whether `path` lies in a folder that downloads fill: a remote source's cache, the
    /// debuginfod client's or a symbol server's `srv*CACHE*URL` folder (symlinks followed
    /// on both sides).
    pub fn is_download_cache(&self, path: &Path) -> bool {
        let Ok(real) = path.canonicalize() else {
            return false;
        };
        // The debuginfod client's cache is read without a server too (by build ID).
        let debuginfod = crate::remote::cache::debuginfod_dir();
        let remote = self.remote.iter().flat_map(Remote::cache_dirs);
        self.server_caches
            .iter()
            .map(PathBuf::as_path)
            .chain(remote)
            .chain(debuginfod.as_deref())
            .filter_map(|c| c.canonicalize().ok())
            .any(|c| real.starts_with(c))
    }

    /// Answers from this sidecar for modules no local file has.
    pub fn set_sidecar(&mut self, path: PathBuf) {
        self.sidecar = Some((path, None));
    }

    /// The sidecar's entry for a module, if there is a sidecar and it has one.
    fn sidecar_module(
        &mut self,
        debug_name: &str,
        breakpad_id: &DebugId,
    ) -> Option<Result<Module, LoadError>> {
        let (path, parsed) = self.sidecar.as_mut()?;
        // Parsed once and kept: a module evicted from the cache is handed out again.
        let modules = match parsed.get_or_insert_with(|| {
            sidecar::load(path).map(|m| m.into_iter().map(|(k, v)| (k, Rc::new(v))).collect())
        }) {
            Ok(m) => m,
            Err(e) => return Some(Err(e.clone())),
        };
        let key = (debug_name.to_string(), breakpad_id.clone());
        Some(match modules.get(&key) {
            Some(m) => Ok(Module::Sidecar(m.clone())),
            None => Err(LoadError::new(
                LoadErrorKind::NotFound,
                path,
                "the sidecar has no entry for this module",
            )),
        })
    }

    fn log(&self, msg: impl FnOnce() -> String) {
        if self.opts.verbose {
            crate::log::elog!("{}", msg());
        }
    }

    /// A candidate as the user names it (`-v` lines): a path, `ZIP:entry`, `[vdso]`,
    /// `CACHE:image`.
    fn shown(&self, c: &Candidate) -> String {
        match c {
            Candidate::File(path) => path.display().to_string(),
            Candidate::ZipEntry(i, entry) => {
                format!("{}:{entry}", self.archives[*i].path.display())
            }
            Candidate::Vdso => "[vdso]".to_string(),
            Candidate::DyldImage { cache, paths, name } => {
                let image = paths.first().unwrap_or(name);
                format!("{}:{image}", self.dyld_caches[*cache].path.display())
            }
        }
    }

    fn try_candidate(&mut self, c: &Candidate, breakpad_id: &DebugId) -> Result<Module, LoadError> {
        match c {
            Candidate::File(path) => self.try_file(path, breakpad_id),
            Candidate::ZipEntry(i, entry) => {
                let archive = &mut self.archives[*i];
                let zip_path = archive.path.clone();
                let shown = Path::new(&format!("{}:{entry}", zip_path.display())).to_path_buf();
                let zip = archive
                    .opened
                    .get_or_insert_with(|| ZipArchive::open(&zip_path))
                    .as_ref()
                    .map_err(|e| LoadError::new(LoadErrorKind::ZipError, &zip_path, e))?;
                if !zip.contains(entry) {
                    return Err(LoadError::new(
                        LoadErrorKind::NotFound,
                        &shown,
                        "no such entry in the zip",
                    ));
                }
                let data = zip
                    .read(entry)
                    .map_err(|e| LoadError::new(LoadErrorKind::ZipError, &shown, e))?;
                resolve::open::open_bytes(data, &shown, breakpad_id)
            }
            Candidate::Vdso => {
                let shown = Path::new("[vdso]");
                let image = vdso::image().ok_or_else(|| {
                    LoadError::new(LoadErrorKind::NotFound, shown, "this system has no vDSO")
                })?;
                let none = |_: &Path, _: Companion<'_>| Vec::new();
                let ctx = LoadContext {
                    path: shown,
                    companions: &none,
                    verbose: self.opts.verbose,
                };
                resolve::open::open_image(image, breakpad_id, &ctx)
            }
            Candidate::DyldImage { cache, paths, name } => {
                let cache = self.dyld_cache(*cache)?;
                let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                // The cache is untrusted input: a parser panic is this candidate's error.
                resolve::open::contained(&cache.path, || {
                    let index = Self::dyld_image(&cache, &paths, name, breakpad_id)?;
                    let shown = PathBuf::from(format!(
                        "{}:{}",
                        cache.path.display(),
                        cache.image_path(index)
                    ));
                    cache
                        .load(index, &shown)
                        .map(|m| Module::Native(Box::new(m)))
                })
            }
        }
    }

    /// The dyld shared cache `i`, mapped and indexed on first use. A parser panic on a
    /// corrupt cache is that cache's error, remembered.
    fn dyld_cache(&mut self, i: usize) -> Result<Rc<DyldCache>, LoadError> {
        let source = &mut self.dyld_caches[i];
        let path = source.path.clone();
        let first = source.opened.is_none();
        let opened = source.opened.get_or_insert_with(|| {
            resolve::open::contained(&path, || {
                DyldCache::open(&path)
                    .map_err(|e| LoadError::new(LoadErrorKind::DyldCacheError, &path, e))
            })
            .map(Rc::new)
        });
        let opened = opened.clone();
        if let Ok(c) = &opened
            && first
        {
            self.log(|| {
                format!(
                    "  dyld shared cache {}: {} images, {} bytes mapped",
                    path.display(),
                    c.image_count(),
                    c.mapped_bytes()
                )
            });
        }
        opened
    }

    /// The image of `cache` at one of `paths` (else named `name`) whose debug ID is
    /// `want`; else why not (no such image, or one with another UUID).
    fn dyld_image(
        cache: &DyldCache,
        paths: &[&str],
        name: &str,
        want: &DebugId,
    ) -> Result<usize, LoadError> {
        let found = cache.find(paths, name);
        let mut mismatch = None;
        for &index in &found {
            match dyld::check_id(cache, index, want) {
                Ok(()) => return Ok(index),
                Err(e) => {
                    mismatch.get_or_insert(e);
                }
            }
        }
        Err(mismatch.unwrap_or_else(|| {
            let wanted = if paths.is_empty() {
                name.to_string()
            } else {
                format!("{} (nor one named {name})", paths.join(" or "))
            };
            LoadError::new(
                LoadErrorKind::NotFound,
                &cache.path,
                format!("this dyld shared cache has no image {wanted}"),
            )
        }))
    }

    /// The code of a module that is an image of a dyld shared cache, for `/asm/v1`; on
    /// failure, why each cache was passed over.
    pub fn dyld_code(
        &mut self,
        debug_name: &str,
        id: &DebugId,
        lib: Option<&Lib>,
    ) -> Result<codefile::CodeFile, Vec<String>> {
        let mut why = Vec::new();
        for c in self.candidates(debug_name, id, lib) {
            let Candidate::DyldImage { cache, paths, name } = c else {
                continue;
            };
            let found = self.dyld_cache(cache).and_then(|cache| {
                let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
                let find = || {
                    let index = Self::dyld_image(&cache, &paths, &name, id)?;
                    let shown = PathBuf::from(format!(
                        "{}:{}",
                        cache.path.display(),
                        cache.image_path(index)
                    ));
                    let code = cache
                        .code(index)
                        .map_err(|e| LoadError::new(LoadErrorKind::ParseError, &shown, e))?;
                    codefile::CodeFile::from_image(shown, code)
                        .map_err(|e| LoadError::new(LoadErrorKind::ParseError, &cache.path, e))
                };
                // The cache is untrusted input: a parser panic is this candidate's error.
                resolve::open::contained(&cache.path, find)
            });
            match found {
                Ok(f) => return Ok(f),
                Err(e) => why.push(e.message),
            }
        }
        Err(why)
    }

    /// The module from its prepared index for `path`, if a usable one is kept.
    fn indexed(&mut self, debug_name: &str, id: &DebugId, path: &Path) -> Option<Module> {
        let (dirs, stores) = (self.opts.symbol_dirs.clone(), self.symstores.clone());
        let verbose = self.opts.verbose;
        let (path_owned, id_owned) = (path.to_path_buf(), id.clone());
        self.index.open(debug_name, id, path, move || {
            Box::new(move || {
                let companions =
                    |binary: &Path, c: Companion<'_>| paths::companions(binary, c, &dirs, &stores);
                let ctx = LoadContext {
                    path: &path_owned,
                    companions: &companions,
                    verbose,
                };
                resolve::open::open(&id_owned, &ctx)
            })
        })
    }

    /// Whether prepared indexes are left to build (idle-time work). An index found
    /// damaged since is queued to be written again (once per run).
    pub fn has_index_work(&mut self) -> bool {
        for e in &self.cache {
            if let Module::Indexed(m) = &**e.module
                && m.is_broken()
                && let Some((path, stamp)) = &e.source
            {
                self.index
                    .offer(&e.debug_name, &e.breakpad_id, path, stamp, &e.module);
            }
        }
        self.index.has_work()
    }

    /// Builds prepared indexes until about `deadline`.
    pub fn index_step(&mut self, deadline: std::time::Instant) {
        self.index.step(deadline);
    }

    /// Opens one file through the formats' single entry (or takes it opened ahead).
    fn try_file(&mut self, path: &Path, breakpad_id: &DebugId) -> Result<Module, LoadError> {
        if let Some(opened) = self.take_prepared(path, breakpad_id) {
            return opened;
        }
        let companions = |binary: &Path, c: Companion<'_>| {
            paths::companions(binary, c, &self.opts.symbol_dirs, &self.symstores)
        };
        let ctx = LoadContext {
            path,
            companions: &companions,
            verbose: self.opts.verbose,
        };
        resolve::open::open(breakpad_id, &ctx)
    }

    /// Where the module for `(debug_name, breakpad_id)` stands: parsed (from the cache or
    /// from disk), pending on downloads this starts, or missing with one error per
    /// candidate tried. Never waits.
    pub fn module(&mut self, debug_name: &str, id: &DebugId, lib: Option<&Lib>) -> ModuleState {
        self.clock += 1;
        let clock = self.clock;
        if let Some(i) = self
            .cache
            .iter()
            .position(|e| e.debug_name == debug_name && e.breakpad_id == *id)
        {
            if self.cache[i].is_stale() {
                self.log(|| format!("{debug_name}/{id}: its file changed since it was read"));
                self.cache.swap_remove(i);
                return self.module(debug_name, id, lib);
            }
            let e = &mut self.cache[i];
            e.last_used = clock;
            if let Some(err) = e.module.failure() {
                return ModuleState::Missing(vec![err]);
            }
            return ModuleState::Ready(e.module.clone());
        }
        if let Some((_, _, e)) = self
            .poisoned
            .iter()
            .find(|(n, i, _)| n == debug_name && i == id)
        {
            return ModuleState::Missing(vec![e.clone()]);
        }
        if !id.is_valid() {
            return ModuleState::Missing(vec![LoadError::msg(
                LoadErrorKind::InvalidDebugId,
                format!("'{id}' is not a debug ID (33 hex digits expected)"),
            )]);
        }
        let steps = self.search_order(debug_name, id, lib);
        let mut errors = Vec::new();
        let mut poison = None;
        if !is_plain(debug_name) {
            errors.push(LoadError::msg(
                LoadErrorKind::InvalidDebugName,
                format!(
                    "debug name '{debug_name}' is not a plain file name on every platform (a separator, '..', ':', a device name like NUL, a trailing dot or space): no path is built from it"
                ),
            ));
        }
        for why in lib.iter().flat_map(|l| &l.refused) {
            errors.push(LoadError::msg(LoadErrorKind::PathRefused, why.clone()));
        }
        self.log(|| {
            let n = steps.iter().filter(|s| matches!(s, Step::Local(_))).count() as u64;
            format!(
                "{debug_name}/{id}: {}",
                crate::log::count(n, "candidate", "candidates")
            )
        });
        // A local file without debug info (stripped; a PE without its PDB) is only the
        // fallback: a later candidate (an unstripped copy in --symbol-dir), the sidecar
        // and the remote sources that fit the module may name more.
        let mut fallback: Option<(Module, bool, Option<Source>)> = None;
        let mut pending = false;
        for step in steps {
            let mut from_profile = false;
            // Stamped before it is read: a change while it is read shows as one later.
            let mut source = match &step {
                Step::Local(Candidate::File(path)) => {
                    crate::fs::FileStamp::of(path).map(|s| (path.clone(), s))
                }
                _ => None,
            };
            if let Step::Local(Candidate::File(path)) = &step
                && let Some(module) = self.indexed(debug_name, id, path)
            {
                self.log(|| format!("  {}: from its prepared index", path.display()));
                let beside = self.beside_profile(&Candidate::File(path.clone()), debug_name, lib);
                let module = Rc::new(LoadedModule::new(module, None, beside));
                self.insert(debug_name, id, module.clone(), source);
                return ModuleState::Ready(module);
            }
            let (module, origin) = match step {
                Step::Local(c) => match self.try_candidate(&c, id) {
                    Ok(module) if module.lacks_debug_info() => {
                        self.log(|| {
                            format!("  {}: no debug info; kept as the fallback", self.shown(&c))
                        });
                        let beside = self.beside_profile(&c, debug_name, lib);
                        fallback.get_or_insert((module, beside, source.take()));
                        continue;
                    }
                    Ok(module) => {
                        self.log(|| format!("  {}: using it", self.shown(&c)));
                        from_profile = self.beside_profile(&c, debug_name, lib);
                        (module, None)
                    }
                    Err(e) => {
                        self.log(|| format!("  {} ({})", e.message, e.kind));
                        if e.is_parser_panic() {
                            poison = Some(e.clone());
                        }
                        errors.push(e);
                        continue;
                    }
                },
                Step::Sidecar => match self.sidecar_module(debug_name, id) {
                    Some(Ok(module)) => (module, None),
                    Some(Err(e)) => {
                        errors.push(e);
                        continue;
                    }
                    None => continue,
                },
                Step::Remote => match self.ask_remote(debug_name, id, lib, &mut errors) {
                    RemoteFound::Module(module, server) => (module, Some(server)),
                    // Asked again when the download is done; the fallback waits until then.
                    RemoteFound::Pending if fallback.is_some() => {
                        return ModuleState::Pending(errors);
                    }
                    RemoteFound::Pending => {
                        pending = true;
                        continue;
                    }
                    RemoteFound::Absent => continue,
                },
                Step::Fallback => match fallback.take() {
                    Some((module, beside, stamp)) => {
                        from_profile = beside;
                        source = stamp;
                        (module, None)
                    }
                    None => continue,
                },
            };
            let module = Rc::new(LoadedModule::new(module, origin, from_profile));
            // A local file, stamped before it was read (a fallback without debug info
            // earns no index).
            if let Some((path, stamp)) = &source {
                self.index.offer(debug_name, id, path, stamp, &module);
            }
            self.insert(debug_name, id, module.clone(), source);
            return ModuleState::Ready(module);
        }
        if pending {
            return ModuleState::Pending(errors);
        }
        if let Some(e) = poison
            && self.poisoned.len() < MAX_POISONED
        {
            self.poisoned.push((debug_name.to_string(), id.clone(), e));
        }
        if errors.is_empty() {
            errors.push(no_candidates(debug_name));
        }
        ModuleState::Missing(errors)
    }

    fn insert(
        &mut self,
        debug_name: &str,
        breakpad_id: &DebugId,
        module: Rc<LoadedModule>,
        source: Option<Source>,
    ) {
        let cost = module.cost();
        // Answers remembered since a module was cached count too (they grow after insert).
        // Measured now, not at insert: remembered answers and objects a debug map parsed
        // since then count too.
        let total = |c: &[CacheEntry]| {
            c.iter()
                .map(|e| e.module.cost() + e.module.memo_cost())
                .sum::<u64>()
        };
        let names = module.names_cost();
        let names_total = |c: &[CacheEntry]| c.iter().map(|e| e.module.names_cost()).sum::<u64>();
        while !self.cache.is_empty()
            && (self.cache.len() >= self.max_modules
                || total(&self.cache) + cost > self.max_bytes
                || names_total(&self.cache) + names > MAX_NAMES_TOTAL)
        {
            let oldest = self
                .cache
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(i, _)| i)
                .unwrap_or(0);
            self.cache.swap_remove(oldest);
        }
        self.cache.push(CacheEntry {
            debug_name: debug_name.to_string(),
            breakpad_id: breakpad_id.clone(),
            module,
            last_used: self.clock,
            source,
        });
    }
}

/// Where a module stands: what the store answers. The store never waits: a module whose
/// downloads run is `Pending`, and the caller decides whether to wait (the server parks
/// the request, `query` and `symbolicate` wait with [`Remote::wait_any`] or
/// [`SymbolStore::fetch_all`]) or to answer without it.
pub enum ModuleState {
    Ready(Rc<LoadedModule>),
    /// Downloads it needs are running or queued; what was tried so far.
    Pending(Vec<LoadError>),
    /// Nowhere to be found, with each candidate's reason.
    Missing(Vec<LoadError>),
}

impl ModuleState {
    /// The module, or why there is none now: a pending module's errors end with one that
    /// says it is still downloading (the answer's `module_errors` show it).
    pub fn now(self, debug_name: &str, id: &DebugId) -> Result<Rc<LoadedModule>, Vec<LoadError>> {
        match self {
            ModuleState::Ready(m) => Ok(m),
            ModuleState::Missing(errors) => Err(errors),
            ModuleState::Pending(mut errors) => {
                errors.push(LoadError::msg(
                    LoadErrorKind::DownloadPending,
                    format!("{debug_name}/{id}: still downloading; ask again for the full answer"),
                ));
                Err(errors)
            }
        }
    }

    pub fn ready(&self) -> Option<&Rc<LoadedModule>> {
        match self {
            ModuleState::Ready(m) => Some(m),
            _ => None,
        }
    }
}

/// The error of a module with no place at all to look.
pub fn no_candidates(debug_name: &str) -> LoadError {
    LoadError::msg(
        LoadErrorKind::NoCandidates,
        format!(
            "no file to try for {debug_name}: it is not in the profile's libs and no symbol folder was given"
        ),
    )
}

#[cfg(test)]
mod tests;

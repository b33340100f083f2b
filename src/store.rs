//! The symbol store: finds the debug file for `(debugName, breakpadId)`, checks its ID,
//! hands it to the right format resolver, and keeps parsed modules in a bounded cache.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::cli::SymbolOptions;
use crate::debugid;
use crate::libs::Lib;
use crate::resolve::breakpad::SymFile;
use crate::resolve::bytes::FileBytes;
use crate::resolve::sidecar::{self, SidecarModule};
use crate::resolve::{LoadContext, LoadError, Module, Symbolized, elf, macho, pe};
use crate::zip::ZipArchive;

/// Cache bounds: parsed modules kept, and the debug bytes they may hold together.
pub const DEFAULT_MAX_MODULES: usize = 32;
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;

/// The magic of a PDB (MSF 7.0) file.
const PDB_MAGIC: &[u8] = b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";

/// A sidecar's modules by (debug name, upper-case debug ID).
type SidecarModules = std::collections::HashMap<(String, String), SidecarModule>;

/// Hashes module offsets: a multiply spreads them well, at a fraction of SipHash's cost
/// (a warm request of 100 000 addresses is mostly these lookups and the writing).
#[derive(Default, Clone, Copy)]
pub struct OffsetHasher(u64);

impl std::hash::Hasher for OffsetHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(29);
    }
}

/// A map keyed by module offset.
pub type OffsetMap<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<OffsetHasher>>;

/// A parsed module with the answers it has given: the front-end asks for the same
/// addresses again (every re-symbolication), and a repeat is then a hash lookup.
pub struct LoadedModule {
    module: Module,
    memo: std::cell::RefCell<OffsetMap<Option<Rc<Symbolized>>>>,
}

/// Answers kept per module before the memo starts over.
const MAX_MEMO: usize = 1 << 20;

impl std::ops::Deref for LoadedModule {
    type Target = Module;
    fn deref(&self) -> &Module {
        &self.module
    }
}

impl LoadedModule {
    fn new(module: Module) -> LoadedModule {
        LoadedModule {
            module,
            memo: Default::default(),
        }
    }

    /// Resolves ascending offsets: remembered answers, then one pass over the others.
    pub fn lookup_sorted(&self, offsets: &[u64]) -> Vec<Option<Rc<Symbolized>>> {
        let mut memo = self.memo.borrow_mut();
        let missing: Vec<u64> = offsets
            .iter()
            .copied()
            .filter(|o| !memo.contains_key(o))
            .collect();
        if !missing.is_empty() {
            if memo.len() + missing.len() > MAX_MEMO {
                memo.clear();
            }
            let found = self.module.lookup_sorted(&missing);
            memo.extend(
                missing
                    .into_iter()
                    .zip(found.into_iter().map(|s| s.map(Rc::new))),
            );
        }
        offsets
            .iter()
            .map(|o| memo.get(o).cloned().flatten())
            .collect()
    }
}

struct CacheEntry {
    debug_name: String,
    breakpad_id: String,
    module: Rc<LoadedModule>,
    cost: u64,
    last_used: u64,
}

/// One place a debug file may be.
#[derive(Debug, Clone, PartialEq)]
enum Candidate {
    /// A file on disk, of any format.
    File(PathBuf),
    /// A member of a `--symbols-zip` archive (index into the store's archives).
    ZipEntry(usize, String),
}

/// A `--symbols-zip` archive, its central directory read on first use.
struct Archive {
    path: PathBuf,
    opened: Option<Result<ZipArchive, String>>,
}

pub struct SymbolStore {
    opts: SymbolOptions,
    /// Local folders of `--windows-symbol-path` / `_NT_SYMBOL_PATH`.
    symstores: Vec<PathBuf>,
    /// Remote entries of that path: reported, never fetched.
    remote_symstores: Vec<String>,
    archives: Vec<Archive>,
    /// The profile's `.syms.json`, parsed on first need; its modules are taken out as
    /// they are used.
    sidecar: Option<(PathBuf, Option<Result<SidecarModules, LoadError>>)>,
    cache: Vec<CacheEntry>,
    max_modules: usize,
    max_bytes: u64,
    clock: u64,
}

/// A name that is safe to join to a folder: no separators, no parent references.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\\') && !name.contains("..")
}

/// Splits a `_NT_SYMBOL_PATH`-style value into local folders and remote servers.
/// `srv*C:\cache*https://server` gives the cache folder and the server; `cache*DIR` a folder.
pub fn parse_symbol_path(value: &str) -> (Vec<PathBuf>, Vec<String>) {
    let (mut local, mut remote) = (Vec::new(), Vec::new());
    for entry in value.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let parts: Vec<&str> = entry.split('*').collect();
        let parts = match parts[0].to_ascii_lowercase().as_str() {
            "srv" | "symsrv" | "cache" => &parts[1..],
            _ => &parts[..],
        };
        for p in parts.iter().filter(|p| !p.is_empty()) {
            if p.starts_with("http://") || p.starts_with("https://") {
                remote.push(p.to_string());
            } else if !p.ends_with(".dll") {
                local.push(PathBuf::from(p));
            }
        }
    }
    (local, remote)
}

/// `<path>.dSYM/Contents/Resources/DWARF/<file name of path>`.
fn dsym_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let mut bundle = path.as_os_str().to_owned();
    bundle.push(".dSYM");
    Some(
        PathBuf::from(bundle)
            .join("Contents/Resources/DWARF")
            .join(name),
    )
}

impl SymbolStore {
    pub fn new(opts: SymbolOptions, nt_symbol_path: Option<String>) -> SymbolStore {
        let mut symstores = Vec::new();
        let mut remote_symstores = Vec::new();
        for value in opts.windows_symbol_path.iter().chain(nt_symbol_path.iter()) {
            let (l, r) = parse_symbol_path(value);
            symstores.extend(l);
            remote_symstores.extend(r);
        }
        if !opts.quiet {
            for r in &remote_symstores {
                eprintln!("note: remote symbol server {r} skipped (only local files are read)");
            }
        }
        let archives = opts
            .symbols_zips
            .iter()
            .map(|p| Archive {
                path: p.clone(),
                opened: None,
            })
            .collect();
        SymbolStore {
            opts,
            symstores,
            remote_symstores,
            archives,
            sidecar: None,
            cache: Vec::new(),
            max_modules: DEFAULT_MAX_MODULES,
            max_bytes: DEFAULT_MAX_BYTES,
            clock: 0,
        }
    }

    /// The `--symbol-dir` folders (where `/asm/v1` also looks for binaries).
    pub fn symbol_dirs(&self) -> &[PathBuf] {
        &self.opts.symbol_dirs
    }

    /// The local symstore folders.
    pub fn symstores(&self) -> &[PathBuf] {
        &self.symstores
    }

    /// Answers from this sidecar for modules no local file has.
    pub fn set_sidecar(&mut self, path: PathBuf) {
        self.sidecar = Some((path, None));
    }

    /// The sidecar's entry for a module, if there is a sidecar and it has one.
    fn take_from_sidecar(
        &mut self,
        debug_name: &str,
        breakpad_id: &str,
    ) -> Option<Result<Module, LoadError>> {
        let (path, parsed) = self.sidecar.as_mut()?;
        let modules = match parsed.get_or_insert_with(|| sidecar::load(path)) {
            Ok(m) => m,
            Err(e) => return Some(Err(e.clone())),
        };
        let key = (debug_name.to_string(), breakpad_id.to_ascii_uppercase());
        Some(match modules.remove(&key) {
            Some(m) => Ok(Module::Sidecar(m)),
            None => Err(LoadError::new(
                "NotFound",
                path,
                "the sidecar has no entry for this module",
            )),
        })
    }

    /// The places to try for a module, in the order of SPEC section 6.
    fn candidates(&self, debug_name: &str, breakpad_id: &str, lib: Option<&Lib>) -> Vec<Candidate> {
        let mut files: Vec<PathBuf> = Vec::new();
        let plain = is_plain_name(debug_name);
        let name = lib
            .and_then(|l| l.name.as_deref())
            .filter(|n| is_plain_name(n));
        // 1. The profile's hints.
        if let Some(lib) = lib {
            if let Some(dp) = &lib.debug_path {
                files.extend(dsym_of(Path::new(dp)));
                files.push(PathBuf::from(dp));
            }
            if let Some(p) = &lib.path {
                files.extend(dsym_of(Path::new(p)));
                if plain && let Some(dir) = Path::new(p).parent() {
                    files.push(dir.join(debug_name));
                }
            }
        }
        let mut out: Vec<Candidate> = files.drain(..).map(Candidate::File).collect();
        // 3. Breakpad stores, zips, then symstores.
        if plain {
            let id = breakpad_id.to_ascii_uppercase();
            let stem = debug_name.strip_suffix(".pdb").unwrap_or(debug_name);
            let rel = format!("{debug_name}/{id}/{stem}.sym");
            for dir in &self.opts.breakpad_symbol_dirs {
                out.push(Candidate::File(dir.join(&rel)));
            }
            for i in 0..self.archives.len() {
                out.push(Candidate::ZipEntry(i, rel.clone()));
            }
            for dir in &self.symstores {
                out.push(Candidate::File(
                    dir.join(debug_name).join(&id).join(debug_name),
                ));
            }
        }
        // 4. --symbol-dir folders (a dSYM bundle there before the bare binary).
        for dir in &self.opts.symbol_dirs {
            for n in [plain.then_some(debug_name), name].into_iter().flatten() {
                let p = dir.join(n);
                files.extend(dsym_of(&p));
                files.push(p);
            }
        }
        // 5. The binary itself.
        if let Some(p) = lib.and_then(|l| l.path.as_ref()) {
            files.push(PathBuf::from(p));
        }
        out.extend(files.into_iter().map(Candidate::File));
        let mut unique: Vec<Candidate> = Vec::with_capacity(out.len());
        for c in out {
            if !unique.contains(&c) {
                unique.push(c);
            }
        }
        unique
    }

    fn log(&self, msg: impl FnOnce() -> String) {
        if self.opts.verbose {
            eprintln!("{}", msg());
        }
    }

    fn context<'a>(&'a self, path: &'a Path) -> LoadContext<'a> {
        LoadContext {
            path,
            extra_debug_dirs: &self.opts.symbol_dirs,
            symstores: &self.symstores,
            verbose: self.opts.verbose,
        }
    }

    fn try_candidate(&mut self, c: &Candidate, breakpad_id: &str) -> Result<Module, LoadError> {
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
                    .map_err(|e| LoadError::new("ZipError", &zip_path, e))?;
                if !zip.contains(entry) {
                    return Err(LoadError::new(
                        "NotFound",
                        &shown,
                        "no such entry in the zip",
                    ));
                }
                let data = zip
                    .read(entry)
                    .map_err(|e| LoadError::new("ZipError", &shown, e))?;
                let sym = SymFile::from_bytes(data, &shown)?;
                check_sym_id(&sym, breakpad_id, &shown)?;
                Ok(Module::Breakpad(sym))
            }
        }
    }

    /// Opens one file: finds its format, checks the ID, parses it.
    fn try_file(&self, path: &Path, breakpad_id: &str) -> Result<Module, LoadError> {
        let ctx = self.context(path);
        if path.extension().is_some_and(|e| e == "sym") {
            // Indexed from disk, never read whole.
            let sym = SymFile::open_file(path)?;
            check_sym_id(&sym, breakpad_id, path)?;
            return Ok(Module::Breakpad(sym));
        }
        let data = Rc::new(FileBytes::open(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                "NotFound"
            } else {
                "ReadError"
            };
            LoadError::new(kind, path, e)
        })?);
        if data.starts_with(PDB_MAGIC) {
            return pe::load_pdb(data.to_vec(), breakpad_id, &ctx).map(Module::Pdb);
        }
        if data.starts_with(b"MODULE ") {
            let sym = SymFile::from_bytes(data.to_vec(), path)?;
            check_sym_id(&sym, breakpad_id, path)?;
            return Ok(Module::Breakpad(sym));
        }
        let kind = object::FileKind::parse(&**data).map_err(|_| {
            LoadError::new(
                "UnknownFormat",
                path,
                "not an object file this tool can read",
            )
        })?;
        match kind {
            object::FileKind::Elf32 | object::FileKind::Elf64 => {
                let file = object::File::parse(&**data)
                    .map_err(|e| LoadError::new("ParseError", path, format!("invalid ELF: {e}")))?;
                let (found_id, _) = elf::identify(&file);
                if !debugid::same_id(&found_id, breakpad_id) {
                    return Err(unmatched(path, &found_id, breakpad_id));
                }
                drop(file);
                Ok(Module::Native(Box::new(elf::load(&data, &ctx)?)))
            }
            object::FileKind::MachO32
            | object::FileKind::MachO64
            | object::FileKind::MachOFat32
            | object::FileKind::MachOFat64 => {
                let member = macho::select(&data, breakpad_id, &ctx)?;
                Ok(Module::Native(Box::new(macho::load(member, &data, &ctx)?)))
            }
            object::FileKind::Pe32 | object::FileKind::Pe64 => {
                pe::load_pe(&data, breakpad_id, &ctx)
            }
            other => Err(LoadError::new(
                "UnsupportedFormat",
                path,
                format!("{other:?} files are not supported"),
            )),
        }
    }

    /// The parsed module for `(debug_name, breakpad_id)`, from the cache or from disk.
    /// On failure, one error per candidate tried.
    pub fn module(
        &mut self,
        debug_name: &str,
        breakpad_id: &str,
        lib: Option<&Lib>,
    ) -> Result<Rc<LoadedModule>, Vec<LoadError>> {
        self.clock += 1;
        let clock = self.clock;
        if let Some(e) = self
            .cache
            .iter_mut()
            .find(|e| e.debug_name == debug_name && debugid::same_id(&e.breakpad_id, breakpad_id))
        {
            e.last_used = clock;
            return Ok(e.module.clone());
        }
        if !debugid::is_valid(breakpad_id) {
            return Err(vec![LoadError {
                kind: "InvalidDebugId",
                message: format!("'{breakpad_id}' is not a debug ID (33 hex digits expected)"),
            }]);
        }
        let candidates = self.candidates(debug_name, breakpad_id, lib);
        let mut errors = Vec::new();
        if !is_plain_name(debug_name) {
            errors.push(LoadError {
                kind: "InvalidDebugName",
                message: format!(
                    "debug name '{debug_name}' contains a path separator or '..': no path is built from it"
                ),
            });
        }
        self.log(|| {
            format!(
                "{debug_name}/{breakpad_id}: {} candidate(s)",
                candidates.len()
            )
        });
        for c in candidates {
            match self.try_candidate(&c, breakpad_id) {
                Ok(module) => {
                    self.log(|| format!("  {c:?}: using it"));
                    let module = Rc::new(LoadedModule::new(module));
                    self.insert(debug_name, breakpad_id, module.clone());
                    return Ok(module);
                }
                Err(e) => {
                    self.log(|| format!("  {} ({})", e.message, e.kind));
                    errors.push(e);
                }
            }
        }
        // 6. The profile's sidecar.
        match self.take_from_sidecar(debug_name, breakpad_id) {
            Some(Ok(module)) => {
                let module = Rc::new(LoadedModule::new(module));
                self.insert(debug_name, breakpad_id, module.clone());
                return Ok(module);
            }
            Some(Err(e)) => errors.push(e),
            None => {}
        }
        for r in &self.remote_symstores {
            errors.push(LoadError {
                kind: "RemoteSkipped",
                message: format!("{r}: remote symbol servers are not fetched from"),
            });
        }
        if errors.is_empty() {
            errors.push(LoadError {
                kind: "NoCandidates",
                message: format!(
                    "no file to try for {debug_name}: it is not in the profile's libs and no symbol folder was given"
                ),
            });
        }
        Err(errors)
    }

    fn insert(&mut self, debug_name: &str, breakpad_id: &str, module: Rc<LoadedModule>) {
        let cost = module.cost();
        let total = |c: &[CacheEntry]| c.iter().map(|e| e.cost).sum::<u64>();
        while !self.cache.is_empty()
            && (self.cache.len() >= self.max_modules || total(&self.cache) + cost > self.max_bytes)
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
            breakpad_id: breakpad_id.to_ascii_uppercase(),
            module,
            cost,
            last_used: self.clock,
        });
    }
}

fn unmatched(path: &Path, found: &str, wanted: &str) -> LoadError {
    LoadError::new(
        "UnmatchedDebugId",
        path,
        format!("its debug ID is {found}, the request is for {wanted}"),
    )
}

fn check_sym_id(sym: &SymFile, wanted: &str, path: &Path) -> Result<(), LoadError> {
    if debugid::same_id(&sym.debug_id, wanted) {
        Ok(())
    } else {
        Err(unmatched(path, &sym.debug_id, wanted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus_elf() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/elf")
    }

    #[test]
    fn the_cache_is_bounded_by_count_and_by_bytes() {
        let a = ("shapes-gcc-O2-dwarf4", "024EE3EA65F54557DD557688F4EC4AF50");
        let b = ("tmpl-gcc-O2-dwarf4", "B029B7CB7BEDA64E212F93FE1934DA620");
        let opts = SymbolOptions {
            symbol_dirs: vec![corpus_elf()],
            ..Default::default()
        };
        // Kept while within bounds: the same parsed module comes back.
        let mut store = SymbolStore::new(opts.clone(), None);
        let first = store.module(a.0, a.1, None).unwrap();
        assert!(
            first.cost() > 0,
            "mapped DWARF counts towards the byte bound"
        );
        assert!(Rc::ptr_eq(&first, &store.module(a.0, a.1, None).unwrap()));
        // A byte bound below two modules: loading b evicts a.
        let mut store = SymbolStore::new(opts.clone(), None);
        let a1 = store.module(a.0, a.1, None).unwrap();
        store.max_bytes = a1.cost() + 1;
        store.module(b.0, b.1, None).unwrap();
        assert_eq!(store.cache.len(), 1);
        assert!(!Rc::ptr_eq(&a1, &store.module(a.0, a.1, None).unwrap()));
        // A count bound of one does the same.
        let mut store = SymbolStore::new(opts, None);
        store.max_modules = 1;
        let a1 = store.module(a.0, a.1, None).unwrap();
        store.module(b.0, b.1, None).unwrap();
        assert_eq!(store.cache.len(), 1);
        assert!(!Rc::ptr_eq(&a1, &store.module(a.0, a.1, None).unwrap()));
    }

    #[test]
    fn symbol_path_syntax() {
        let (l, r) = parse_symbol_path(
            r"srv*C:\cache*https://msdl.microsoft.com/download/symbols;D:\syms; cache*E:\c ;",
        );
        assert_eq!(
            l,
            [
                PathBuf::from(r"C:\cache"),
                PathBuf::from(r"D:\syms"),
                PathBuf::from(r"E:\c")
            ]
        );
        assert_eq!(r, ["https://msdl.microsoft.com/download/symbols"]);
    }
}

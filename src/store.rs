//! The symbol store: finds the debug file for `(debugName, breakpadId)`, checks its ID,
//! hands it to the right format resolver, and keeps parsed modules in a bounded cache.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::cli::SymbolOptions;
use crate::debugid;
use crate::libs::Lib;
use crate::resolve::elf::{self, ElfModule};
use crate::resolve::{LoadContext, LoadError, Module};

/// Cache bounds: parsed modules kept, and the debug bytes they may hold together.
pub const DEFAULT_MAX_MODULES: usize = 32;
pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;

struct CacheEntry {
    debug_name: String,
    breakpad_id: String,
    module: Rc<Module>,
    cost: u64,
    last_used: u64,
}

pub struct SymbolStore {
    opts: SymbolOptions,
    cache: Vec<CacheEntry>,
    max_modules: usize,
    max_bytes: u64,
    clock: u64,
}

/// A name that is safe to join to a folder: no separators, no parent references.
fn is_plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\\') && !name.contains("..")
}

impl SymbolStore {
    pub fn new(opts: SymbolOptions) -> SymbolStore {
        SymbolStore {
            opts,
            cache: Vec::new(),
            max_modules: DEFAULT_MAX_MODULES,
            max_bytes: DEFAULT_MAX_BYTES,
            clock: 0,
        }
    }

    /// The files to try for a module, in the order of SPEC section 6.
    fn candidates(&self, debug_name: &str, lib: Option<&Lib>) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        let plain = is_plain_name(debug_name);
        let name = lib
            .and_then(|l| l.name.as_deref())
            .filter(|n| is_plain_name(n));
        if let Some(lib) = lib {
            if let Some(dp) = &lib.debug_path {
                out.push(PathBuf::from(dp));
            }
            if let Some(p) = &lib.path
                && plain
                && let Some(dir) = Path::new(p).parent()
            {
                out.push(dir.join(debug_name));
            }
        }
        for dir in &self.opts.symbol_dirs {
            if plain {
                out.push(dir.join(debug_name));
            }
            if let Some(n) = name {
                out.push(dir.join(n));
            }
        }
        if let Some(p) = lib.and_then(|l| l.path.as_ref()) {
            out.push(PathBuf::from(p));
        }
        let mut seen = Vec::new();
        out.retain(|p| {
            if seen.contains(p) {
                false
            } else {
                seen.push(p.clone());
                true
            }
        });
        out
    }

    fn log(&self, msg: impl FnOnce() -> String) {
        if self.opts.verbose {
            eprintln!("{}", msg());
        }
    }

    /// Opens one candidate: reads it, checks the ID, parses it.
    fn try_load(&self, path: &Path, breakpad_id: &str) -> Result<Module, LoadError> {
        let data = std::fs::read(path).map_err(|e| {
            let kind = if e.kind() == std::io::ErrorKind::NotFound {
                "NotFound"
            } else {
                "ReadError"
            };
            LoadError::new(kind, path, e)
        })?;
        let kind = object::FileKind::parse(&*data).map_err(|_| {
            LoadError::new(
                "UnknownFormat",
                path,
                "not an object file this tool can read",
            )
        })?;
        match kind {
            object::FileKind::Elf32 | object::FileKind::Elf64 => {
                let file = object::File::parse(&*data)
                    .map_err(|e| LoadError::new("ParseError", path, format!("invalid ELF: {e}")))?;
                let (found_id, _) = elf::identify(&file);
                if !debugid::same_id(&found_id, breakpad_id) {
                    return Err(LoadError::new(
                        "UnmatchedDebugId",
                        path,
                        format!("its debug ID is {found_id}, the request is for {breakpad_id}"),
                    ));
                }
                drop(file);
                let ctx = LoadContext {
                    path,
                    extra_debug_dirs: &self.opts.symbol_dirs,
                    verbose: self.opts.verbose,
                };
                Ok(Module::Elf(ElfModule::load(&data, &ctx)?))
            }
            other => Err(LoadError::new(
                "UnsupportedFormat",
                path,
                format!("{other:?} files are not supported yet"),
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
    ) -> Result<Rc<Module>, Vec<LoadError>> {
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
        let candidates = self.candidates(debug_name, lib);
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
        for path in candidates {
            match self.try_load(&path, breakpad_id) {
                Ok(module) => {
                    self.log(|| format!("  {}: using it", path.display()));
                    let module = Rc::new(module);
                    self.insert(debug_name, breakpad_id, module.clone());
                    return Ok(module);
                }
                Err(e) => {
                    self.log(|| format!("  {} ({})", e.message, e.kind));
                    errors.push(e);
                }
            }
        }
        if errors.is_empty() {
            errors.push(LoadError {
                kind: "NoCandidates",
                message: format!(
                    "no file to try for {debug_name}: it is not in the profile's libs and no --symbol-dir was given"
                ),
            });
        }
        Err(errors)
    }

    fn insert(&mut self, debug_name: &str, breakpad_id: &str, module: Rc<Module>) {
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

//! Where the store looks: the whole search order for a module (SPEC section 6, steps 1 to
//! 8: local candidates, build-ID folders, the sidecar, remote sources, the stripped
//! fallback) as one list, and the places of the companion files a format names
//! (separate ELF debug files, PDBs).

use std::path::{Path, PathBuf};

use super::SymbolStore;
use crate::resolve::Companion;
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;
use crate::shared::pathname::is_plain;

/// One place a debug file may be.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Candidate {
    /// A file on disk, of any format.
    File(PathBuf),
    /// A member of a `--symbols-zip` archive (index into the store's archives).
    ZipEntry(usize, String),
    /// This process's vDSO: the kernel maps the same image into every process, so the
    /// profile's `[vdso]` is ours when the IDs match.
    Vdso,
    /// An image of a dyld shared cache (index into the store's caches), recorded at one
    /// of `paths` or else named `name`.
    DyldImage {
        cache: usize,
        paths: Vec<String>,
        name: String,
    },
}

/// One step of the search order, in order ([`SymbolStore::search_order`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    /// Steps 1 to 5: a local file (or image) that may hold the module.
    Local(Candidate),
    /// 6: the profile's sidecar.
    Sidecar,
    /// 7: the remote sources that fit the module.
    Remote,
    /// 8: the fallback, the first local candidate whose ID matched but that holds no
    /// debug info (a stripped binary, a PE without its PDB); names from its own tables.
    Fallback,
}

/// The system's dyld shared caches that exist, newest layout first: macOS 13+ keeps them
/// in the OS cryptex, macOS 11-12 in /System/Library/dyld. Every architecture's is
/// listed: an image is taken only where its path and UUID match.
pub(super) fn system_dyld_caches() -> Vec<PathBuf> {
    #[cfg(target_os = "macos")]
    {
        let dirs = [
            "/System/Volumes/Preboot/Cryptexes/OS/System/Library/dyld",
            "/System/Library/dyld",
        ];
        let arches = ["arm64e", "x86_64h", "x86_64"];
        dirs.iter()
            .flat_map(|d| {
                arches
                    .iter()
                    .map(move |a| Path::new(d).join(format!("dyld_shared_cache_{a}")))
            })
            .filter(|p| p.is_file())
            .collect()
    }
    #[cfg(not(target_os = "macos"))]
    Vec::new()
}

/// `<path>.dSYM/Contents/Resources/DWARF/<file name of path>`, for a path that may be a
/// Mach-O file: not a Windows or ELF library by its name, and, when it exists, a Mach-O by
/// its first bytes (a dSYM beside an ELF or a PDB is a candidate that only misleads).
pub(super) fn dsym_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let text = path.to_string_lossy().to_ascii_lowercase();
    if text.contains(".so.")
        || [".pdb", ".dll", ".exe", ".so", ".sym", ".debug"]
            .iter()
            .any(|e| text.ends_with(e))
    {
        return None;
    }
    let mac_place = [
        ".dylib",
        ".app/",
        ".framework/",
        "/system/",
        "/library/",
        "/users/",
        "/applications/",
        "/private/",
    ]
    .iter()
    .any(|p| text.contains(p));
    if path.symlink_metadata().is_err() && !mac_place {
        // Absent and nothing says macOS: its dSYM would only lengthen the list.
        return None;
    }
    if let Ok(mut f) = crate::fs::open_regular(path) {
        let mut magic = [0u8; 4];
        let macho = std::io::Read::read_exact(&mut f, &mut magic).is_ok()
            && matches!(
                u32::from_be_bytes(magic),
                0xfeed_face | 0xfeed_facf | 0xcefa_edfe | 0xcffa_edfe | 0xcafe_babe | 0xbeba_feca
            );
        if !macho {
            return None;
        }
    }
    let mut bundle = path.as_os_str().to_owned();
    bundle.push(".dSYM");
    Some(
        PathBuf::from(bundle)
            .join("Contents/Resources/DWARF")
            .join(name),
    )
}

/// `.build-id/xx/rest.debug`, the layout of a build-ID tree (`/usr/lib/debug`, a build's
/// own, a `--symbol-dir`) for the build ID `hex` (lower-case hex, 3 digits or more).
fn build_id_rel(hex: &str) -> PathBuf {
    PathBuf::from(".build-id")
        .join(&hex[..2])
        .join(format!("{}.debug", &hex[2..]))
}

/// The debuginfod client's cached `debuginfo` for a build ID, if there is one: what gdb,
/// samply or an earlier run downloaded is used without a server. Walked like any cache
/// path (no symlink followed); an empty file is a remembered miss, not a candidate.
fn debuginfod_cached(hex: &str) -> Option<PathBuf> {
    let root = crate::remote::cache::debuginfod_dir()?;
    let rel = Path::new(hex).join("debuginfo");
    match crate::remote::cache::lookup(&root, &rel) {
        Ok(Some(m)) if m.len() > 0 => Some(root.join(rel)),
        _ => None,
    }
}

/// The separate debug files for an ELF build ID, wherever they may be without the
/// binary: each `--symbol-dir`'s build-ID tree, the system's (`/usr/lib/debug`), then
/// the debuginfod client's cache.
pub(super) fn by_build_id(hex: &str, symbol_dirs: &[PathBuf]) -> Vec<PathBuf> {
    if hex.len() < 3 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Vec::new();
    }
    let rel = build_id_rel(hex);
    let mut out: Vec<PathBuf> = symbol_dirs.iter().map(|d| d.join(&rel)).collect();
    out.push(Path::new("/usr/lib/debug").join(&rel));
    out.extend(debuginfod_cached(hex));
    out
}

/// Where a companion file may be, in the order tried: ELF separate debug files by build ID
/// under `/usr/lib/debug/.build-id`, the binary's folder, each `--symbol-dir` and the
/// debuginfod client's cache; the
/// `.gnu_debuglink` target beside the binary, in its `.debug/` folder and under
/// `/usr/lib/debug/<folder>/`; a PDB beside its image, at its recorded path, then in the
/// symstores. A name with a path separator or `..` is never turned into a path.
pub(super) fn companions(
    binary: &Path,
    c: Companion<'_>,
    symbol_dirs: &[PathBuf],
    symstores: &[PathBuf],
) -> Vec<PathBuf> {
    let dir = binary.parent().unwrap_or(Path::new("."));
    let mut out = Vec::new();
    match c {
        Companion::BuildId(hex) => {
            if hex.len() < 3 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return out;
            }
            let rel = build_id_rel(hex);
            out.push(Path::new("/usr/lib/debug").join(&rel));
            out.push(dir.join(&rel));
            out.extend(symbol_dirs.iter().map(|d| d.join(&rel)));
            out.extend(debuginfod_cached(hex));
        }
        Companion::DebugLink(name) => {
            if !is_plain(name) {
                return out;
            }
            out.push(dir.join(name));
            out.push(dir.join(".debug").join(name));
            if let Ok(abs) = std::fs::canonicalize(dir) {
                let rel = abs.strip_prefix("/").unwrap_or(&abs);
                out.push(Path::new("/usr/lib/debug").join(rel).join(name));
            }
            out.retain(|p| p != binary);
        }
        Companion::Supplementary { path, build_id } => {
            // The debug file names it (not the request): relative paths may climb, as
            // Fedora's `../../.dwz/<pkg>` do; the format checks the build ID.
            let named = Path::new(path);
            if crate::shared::pathname::refused_from_outside(path).is_none() {
                out.push(dir.join(named));
            }
            if let Some(base) = named.file_name() {
                out.push(Path::new("/usr/lib/debug/.dwz").join(base));
                out.push(dir.join(base));
                out.extend(symbol_dirs.iter().map(|d| d.join(base)));
            }
            out.extend(companions(
                binary,
                Companion::BuildId(build_id),
                symbol_dirs,
                symstores,
            ));
        }
        Companion::OsoObject(recorded) => {
            // The binary's own debug map names it: at that path, then by its file name
            // beside the binary and in each --symbol-dir (build trees move).
            let named = Path::new(recorded);
            // Named by the file, not the user: never a UNC, device or /net path.
            if crate::shared::pathname::refused_from_outside(recorded).is_none() {
                out.push(named.to_path_buf());
            }
            if let Some(base) = named.file_name() {
                out.push(dir.join(base));
                out.extend(symbol_dirs.iter().map(|d| d.join(base)));
            }
        }
        Companion::Pdb { name, recorded, id } => {
            if !is_plain(name) {
                return out;
            }
            out.push(dir.join(name));
            // The PE names it: `\\attacker\share\x.pdb` would make Windows connect out.
            if crate::shared::pathname::refused_from_outside(recorded).is_none() {
                out.push(PathBuf::from(recorded));
            }
            let id = id.path_component();
            out.extend(symstores.iter().map(|s| s.join(name).join(&id).join(name)));
        }
    }
    out
}

/// The files step 1 and step 5 take from a lib's paths (its `debugPath`, its `path`, the
/// debug name beside `path`, their dSYM bundles).
fn lib_files(lib: &Lib, debug_name: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dp) = &lib.debug_path {
        files.extend(dsym_of(Path::new(dp)));
        files.push(PathBuf::from(dp));
    }
    if let Some(p) = &lib.path {
        files.extend(dsym_of(Path::new(p)));
        if is_plain(debug_name)
            && let Some(dir) = Path::new(p).parent()
        {
            files.push(dir.join(debug_name));
        }
        files.push(PathBuf::from(p));
    }
    files
}

impl SymbolStore {
    /// Whether `c` is a file the profile named by a relative path (one that came with the
    /// profile) and that no `--symbol-dir` holds: the user vouched for nothing there.
    pub(super) fn beside_profile(
        &self,
        c: &Candidate,
        debug_name: &str,
        lib: Option<&Lib>,
    ) -> bool {
        let (Candidate::File(path), Some(lib)) = (c, lib) else {
            return false;
        };
        lib.relative
            && lib_files(lib, debug_name).contains(path)
            && !self.opts.symbol_dirs.iter().any(|d| path.starts_with(d))
    }

    /// Every step of the search for a module, in the order of SPEC section 6.
    pub(super) fn search_order(
        &self,
        debug_name: &str,
        id: &DebugId,
        lib: Option<&Lib>,
    ) -> Vec<Step> {
        let mut steps: Vec<Step> = self
            .candidates(debug_name, id, lib)
            .into_iter()
            .map(Step::Local)
            .collect();
        steps.extend([Step::Sidecar, Step::Remote, Step::Fallback]);
        steps
    }

    /// The local places to try for a module (steps 1 to 5 of SPEC section 6).
    pub(super) fn candidates(
        &self,
        debug_name: &str,
        breakpad_id: &DebugId,
        lib: Option<&Lib>,
    ) -> Vec<Candidate> {
        let mut files: Vec<PathBuf> = Vec::new();
        let plain = is_plain(debug_name);
        let name = lib.and_then(|l| l.name.as_deref()).filter(|n| is_plain(n));
        // 1. The profile's hints (the binary itself comes last, step 5).
        if let Some(lib) = lib {
            files.extend(lib_files(lib, debug_name));
            if let Some(p) = &lib.path {
                files.retain(|f| f != Path::new(p));
            }
        }
        if debug_name == "[vdso]" {
            return vec![Candidate::Vdso];
        }
        let mut out: Vec<Candidate> = files.drain(..).map(Candidate::File).collect();
        // 2. Breakpad stores, zips, then symstores.
        if plain {
            let id = breakpad_id.path_component();
            let rel = crate::shared::pathname::breakpad_sym_path(debug_name, breakpad_id);
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
        // 3. samply's --simpleperf-binary-cache: binaries under their on-device path.
        if let Some(rel) = lib.and_then(Lib::device_path) {
            for dir in &self.opts.simpleperf_binary_caches {
                files.push(dir.join(rel));
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
        // 4b. Separate debug files by the lib's build ID (its ELF codeId): found without
        // the binary, as on a machine other than the one that recorded the profile.
        if let Some(hex) = lib.and_then(|l| l.elf_build_id(breakpad_id)) {
            files.extend(by_build_id(&hex, &self.opts.symbol_dirs));
        }
        // 5. The binary itself, then its image in the dyld shared caches.
        if let Some(p) = lib.and_then(|l| l.path.as_ref()) {
            files.push(PathBuf::from(p));
        }
        out.extend(files.into_iter().map(Candidate::File));
        // dyld shared caches: system libraries that are not files (macOS 11+).
        let paths: Vec<String> = lib
            .into_iter()
            .flat_map(|l| [l.path.clone(), l.debug_path.clone()])
            .flatten()
            .filter(|p| p.starts_with('/'))
            .collect();
        let image_name = name.or(plain.then_some(debug_name));
        if !paths.is_empty() || image_name.is_some() {
            for cache in 0..self.dyld_caches.len() {
                out.push(Candidate::DyldImage {
                    cache,
                    paths: paths.clone(),
                    name: image_name.unwrap_or_default().to_string(),
                });
            }
        }
        let mut unique: Vec<Candidate> = Vec::with_capacity(out.len());
        for c in out {
            if !unique.contains(&c) {
                unique.push(c);
            }
        }
        unique
    }
}

impl SymbolStore {
    /// Where the binary with a module's code may be, for `/asm/v1` (debug files have no
    /// code): the profile's paths for the library, then `<name>` and `<debugName>` in each
    /// `--symbol-dir`, then `<name>/<codeId>/<name>` in the local symstores (their layout
    /// for binaries), then `debug_file`, the module's own file. `name` is the request's,
    /// else the library's.
    pub fn code_candidates(
        &self,
        debug_name: &str,
        name: Option<&str>,
        code_id: Option<&str>,
        lib: Option<&Lib>,
        debug_file: Option<&Path>,
    ) -> Vec<PathBuf> {
        let mut out = Vec::new();
        if let Some(l) = lib {
            out.extend(l.path.iter().map(PathBuf::from));
            out.extend(l.debug_path.iter().map(PathBuf::from));
        }
        let name = name
            .or(lib.and_then(|l| l.name.as_deref()))
            .filter(|n| is_plain(n));
        let names: Vec<&str> = name
            .into_iter()
            .chain(Some(debug_name).filter(|n| is_plain(n)))
            .collect();
        for dir in &self.opts.symbol_dirs {
            out.extend(names.iter().map(|n| dir.join(n)));
        }
        if let (Some(n), Some(code_id)) = (name, code_id.filter(|c| is_plain(c))) {
            for dir in &self.symstores {
                out.push(dir.join(n).join(code_id).join(n));
            }
        }
        out.extend(debug_file.map(Path::to_path_buf));
        let mut unique: Vec<PathBuf> = Vec::with_capacity(out.len());
        for p in out {
            if !unique.contains(&p) {
                unique.push(p);
            }
        }
        unique
    }
}

//! The one entry into the formats: recognise a candidate file by its bytes, check its
//! debug ID the same way for every format, and parse it. The store only says where to
//! look (candidates, and companion files through [`LoadContext::companions`]).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::{Object, ObjectSection, SectionKind};

use super::breakpad::SymFile;
use super::bytes::FileBytes;
use super::id::{check_id, image_base};
use super::types::{Companion, LoadContext, LoadError, LoadErrorKind};
use super::{Module, elf, macho, pace, pe};
use crate::shared::debugid::DebugId;

/// The magic of a PDB (MSF 7.0) file.
const PDB_MAGIC: &[u8] = b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";

fn open_error(path: &Path, e: std::io::Error) -> LoadError {
    LoadError::new(LoadErrorKind::of_io(&e), path, e)
}

/// Opens the file at `ctx.path` whatever its format, if its debug ID is `want`. A panic
/// in a parser (the `pdb` crate has some on corrupt files) becomes this file's error.
pub fn open(want: &DebugId, ctx: &LoadContext<'_>) -> Result<Module, LoadError> {
    contained(ctx.path, || pace::finish(open_file(want, ctx)))
}

/// Where a file's companions may be, owned by a load that outlives the store's borrow.
pub type OwnedCompanionPaths = Box<dyn Fn(&Path, Companion<'_>) -> Vec<PathBuf>>;

/// [`open`] in slices ([`pace`]): the idle-time work's way to open a big file.
pub struct Opening {
    path: PathBuf,
    load: Option<pace::Resumable<Result<Module, LoadError>>>,
}

impl Opening {
    pub fn new(
        want: DebugId,
        path: PathBuf,
        companions: OwnedCompanionPaths,
        verbose: bool,
    ) -> Opening {
        let shown = path.clone();
        let load = pace::Resumable::new(async move {
            let ctx = LoadContext {
                path: &shown,
                companions: &*companions,
                verbose,
            };
            open_file(&want, &ctx).await
        });
        Opening {
            path,
            load: Some(load),
        }
    }

    /// Goes on until `deadline`: the result when the load is done. A panic in a parser
    /// becomes the result, as in [`open`].
    pub fn step(&mut self, deadline: std::time::Instant) -> Option<Result<Module, LoadError>> {
        let load = self.load.as_mut()?;
        match contained(&self.path, || Ok(load.step(deadline))) {
            Ok(None) => None,
            Ok(Some(done)) => {
                self.load = None;
                Some(done)
            }
            Err(panicked) => {
                self.load = None;
                Some(Err(panicked))
            }
        }
    }

    /// The rest of the load at once (a request needs the module now).
    pub fn finish(mut self) -> Result<Module, LoadError> {
        match self.load.take() {
            Some(load) => contained(&self.path, || load.finish()),
            None => Err(LoadError::new(
                LoadErrorKind::ParseError,
                &self.path,
                "the load was already done",
            )),
        }
    }
}

/// Runs a parser over untrusted input, a panic in it becoming the error of the file
/// shown as `path` (kind `ParserPanic`): the one place the formats contain panics.
pub fn contained<T>(
    path: &Path,
    load: impl FnOnce() -> Result<T, LoadError>,
) -> Result<T, LoadError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(load))
        .unwrap_or_else(|p| Err(LoadError::from_panic(&path.display().to_string(), &*p)))
}

/// An ELF image held in memory (this process's vDSO), shown as `ctx.path`.
pub fn open_image(
    image: Vec<u8>,
    want: &DebugId,
    ctx: &LoadContext<'_>,
) -> Result<Module, LoadError> {
    contained(ctx.path, || {
        pace::finish(open_data(Rc::new(FileBytes::from_vec(image)), want, ctx))
    })
}

async fn open_file(want: &DebugId, ctx: &LoadContext<'_>) -> Result<Module, LoadError> {
    let path = ctx.path;
    if path.extension().is_some_and(|e| e == "sym") {
        // Mapped and indexed in place, never read into memory whole.
        let sym = SymFile::open_file(path)?;
        check_id(path, &sym.debug_id, want)?;
        return Ok(Module::Breakpad(sym));
    }
    let data = Rc::new(FileBytes::open(path).map_err(|e| open_error(path, e))?);
    open_data(data, want, ctx).await
}

async fn open_data(
    data: Rc<FileBytes>,
    want: &DebugId,
    ctx: &LoadContext<'_>,
) -> Result<Module, LoadError> {
    let path = ctx.path;
    // Both parsed from the mapping: a copy would cost the file's size in heap (up to the
    // download limit for a symbol server's answer).
    if data.starts_with(PDB_MAGIC) {
        return pe::load_pdb_paced(data, want, ctx)
            .await
            .map(|m| Module::Pdb(Box::new(m)));
    }
    if data.starts_with(b"MODULE ") {
        let sym = SymFile::from_file_bytes(data, path)?;
        check_id(path, &sym.debug_id, want)?;
        return Ok(Module::Breakpad(sym));
    }
    let kind = object::FileKind::parse(&**data).map_err(|_| {
        LoadError::new(
            LoadErrorKind::UnknownFormat,
            path,
            "not an object file this tool can read",
        )
    })?;
    match kind {
        object::FileKind::Elf32 | object::FileKind::Elf64 => {
            let file = object::File::parse(&**data).map_err(|e| {
                LoadError::new(LoadErrorKind::ParseError, path, format!("invalid ELF: {e}"))
            })?;
            let (found, _) = elf::identify(&file);
            check_id(path, &found, want)?;
            drop(file);
            Ok(Module::Native(Box::new(elf::load(&data, ctx).await?)))
        }
        object::FileKind::MachO32
        | object::FileKind::MachO64
        | object::FileKind::MachOFat32
        | object::FileKind::MachOFat64 => {
            let member = macho::select(&data, want, ctx)?;
            Ok(Module::Native(Box::new(macho::load(member, &data, ctx)?)))
        }
        object::FileKind::Pe32 | object::FileKind::Pe64 => pe::load_pe(&data, want, ctx),
        other => Err(LoadError::new(
            LoadErrorKind::UnsupportedFormat,
            path,
            format!("{other:?} files are not supported"),
        )),
    }
}

/// A Breakpad file held in memory (a zip member, or a file without the `.sym` name).
pub fn open_bytes(data: Vec<u8>, shown: &Path, want: &DebugId) -> Result<Module, LoadError> {
    contained(shown, || {
        let sym = SymFile::from_bytes(data, shown)?;
        check_id(shown, &sym.debug_id, want)?;
        Ok(Module::Breakpad(sym))
    })
}

/// A binary's code, for `/asm/v1`: the file's bytes and each code section's (module
/// offset, length, offset in `data`).
pub struct Code {
    pub data: Rc<FileBytes>,
    pub arch: crate::disasm::Arch,
    pub sections: Vec<(u64, u64, usize)>,
    /// 32-bit ARM: where ARM code, Thumb code and data start (module offsets, sorted).
    pub arm_modes: Vec<(u64, crate::disasm::ArmMode)>,
}

/// Why a file holds no code of the module asked for (`/asm/v1` says it per candidate).
#[derive(Debug)]
pub enum CodeError {
    Read(std::io::Error),
    NotObject,
    /// A universal file without the member asked for.
    Member(String),
    Parse(object::Error),
    /// Another build of the module.
    OtherBuild {
        found: String,
        wanted: String,
    },
    /// An architecture the disassemblers do not decode.
    Arch(object::Architecture),
    /// A debug-only file (`.debug`, dSYM): the IDs match, the code is not there.
    NoCode,
}

impl std::fmt::Display for CodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CodeError::Read(e) => write!(f, "{e}"),
            CodeError::NotObject => f.write_str("not an object file"),
            CodeError::Member(m) => f.write_str(m),
            CodeError::Parse(e) => write!(f, "cannot parse: {e}"),
            CodeError::OtherBuild { found, wanted } => {
                write!(f, "its debug ID is {found}, the request is for {wanted}")
            }
            CodeError::Arch(a) => write!(f, "{a:?} code is not disassembled"),
            CodeError::NoCode => f.write_str("no code bytes in it (a debug-only file)"),
        }
    }
}

/// Opens the binary at `path` for its code if it is the module with debug ID `debug_id`
/// or code ID `code_id` (a debug-only file is refused: it has no code bytes). The same
/// recognition and IDs as [`open`], from the same parsers.
pub fn open_code(
    path: &Path,
    debug_id: Option<&str>,
    code_id: Option<&str>,
) -> Result<Code, CodeError> {
    let data = Rc::new(FileBytes::open(path).map_err(CodeError::Read)?);
    let kind = object::FileKind::parse(&**data).map_err(|_| CodeError::NotObject)?;
    let member: &[u8] = match kind {
        object::FileKind::MachOFat32 | object::FileKind::MachOFat64 => {
            // The member whose UUID is the debug ID (the code ID is the same UUID).
            let want = match (debug_id, code_id) {
                (Some(d), _) => d.to_string(),
                (None, Some(c)) => format!("{c}0"),
                (None, None) => String::new(),
            };
            let none = |_: &Path, _: Companion<'_>| Vec::new();
            let ctx = LoadContext {
                path,
                companions: &none,
                verbose: false,
            };
            macho::select(&data, &DebugId::new(&want), &ctx)
                .map_err(|e| CodeError::Member(e.message))?
        }
        _ => &data,
    };
    let file = object::File::parse(member).map_err(CodeError::Parse)?;
    let (found_debug, found_code) = match kind {
        object::FileKind::Elf32 | object::FileKind::Elf64 => elf::identify(&file),
        object::FileKind::Pe32 | object::FileKind::Pe64 => (
            pe::identify(&file).map(|(id, _)| id).unwrap_or_default(),
            None,
        ),
        _ => {
            let id = macho::debug_id(&file).unwrap_or_default();
            let code = id.path_component().get(..32).map(str::to_string);
            (id, code)
        }
    };
    // Debug IDs by value; code IDs (hex of any length) as text in either case.
    let same_debug = debug_id.is_some_and(|w| DebugId::new(w) == found_debug);
    let same_code =
        matches!((found_code.as_deref(), code_id), (Some(f), Some(w)) if f.eq_ignore_ascii_case(w));
    if !same_debug && !same_code {
        return Err(CodeError::OtherBuild {
            found: found_debug.to_string(),
            wanted: debug_id.or(code_id).unwrap_or("?").to_string(),
        });
    }
    let arch = crate::disasm::Arch::from_object(file.architecture())
        .ok_or(CodeError::Arch(file.architecture()))?;
    let base = image_base(&file);
    // Where `member` starts in the file (a fat Mach-O's member lies inside it).
    let member_at = member.as_ptr() as usize - data.as_ptr() as usize;
    let sections: Vec<(u64, u64, usize)> = file
        .sections()
        .filter(|s| s.kind() == SectionKind::Text)
        .filter_map(|s| {
            let (at, len) = s.file_range()?;
            let start = s.address().checked_sub(base)?;
            Some((
                start,
                len,
                member_at.checked_add(usize::try_from(at).ok()?)?,
            ))
        })
        .filter(|&(_, len, _)| len > 0)
        .collect();
    if sections.is_empty() {
        // A `.debug` file or a dSYM: the IDs match, but the code is not there.
        return Err(CodeError::NoCode);
    }
    let arm_modes = if arch == crate::disasm::Arch::Arm {
        arm_modes(&file, base)
    } else {
        Vec::new()
    };
    drop(file);
    Ok(Code {
        data,
        arch,
        sections,
        arm_modes,
    })
}

/// Which bytes of a 32-bit ARM ELF file are ARM code, Thumb code or data: its mapping
/// symbols (`$a`, `$t`, `$d`, optionally followed by `.` and anything) when it has them;
/// else (a stripped library: only `.dynsym` is left) its function symbols, Thumb when the
/// address has its low bit set. Module offsets, sorted.
fn arm_modes(file: &object::File<'_>, base: u64) -> Vec<(u64, crate::disasm::ArmMode)> {
    use crate::disasm::ArmMode;
    use object::{ObjectSymbol, SymbolKind};
    let mut mapping = Vec::new();
    for sym in file.symbols() {
        let Ok(name) = sym.name() else { continue };
        let kind = name.split_once('.').map_or(name, |(k, _)| k);
        let mode = match kind {
            "$a" => ArmMode::Arm,
            "$t" => ArmMode::Thumb,
            "$d" => ArmMode::Data,
            _ => continue,
        };
        if let Some(at) = sym.address().checked_sub(base) {
            mapping.push((at, mode));
        }
    }
    if mapping.is_empty() {
        for sym in file.symbols().chain(file.dynamic_symbols()) {
            if sym.kind() != SymbolKind::Text || sym.address() == 0 {
                continue;
            }
            let mode = if sym.address() & 1 == 1 {
                ArmMode::Thumb
            } else {
                ArmMode::Arm
            };
            if let Some(at) = (sym.address() & !1).checked_sub(base) {
                mapping.push((at, mode));
            }
        }
    }
    mapping.sort_by_key(|m| m.0);
    mapping.dedup_by_key(|m| m.0);
    mapping
}

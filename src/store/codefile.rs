//! The binary that holds a module's code, for `/asm/v1`: debug files (a `.debug` file, a
//! dSYM, a PDB) have no code bytes, so this looks for the binary itself and checks that it
//! is the requested module by debug ID or code ID.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::{Object, ObjectSection, ObjectSegment, SectionKind};

use crate::debugid;
use crate::disasm::Arch;
use crate::resolve::bytes::FileBytes;
use crate::resolve::{elf, macho, pe};

/// What identifies the module whose code is wanted.
pub struct CodeQuery<'a> {
    pub debug_id: Option<&'a str>,
    pub code_id: Option<&'a str>,
}

/// A binary's code sections, addressed by module offset.
pub struct CodeFile {
    pub path: PathBuf,
    pub arch: Arch,
    data: Rc<FileBytes>,
    /// (module offset, length, offset in `data`) of each section holding code.
    sections: Vec<(u64, u64, usize)>,
}

impl CodeFile {
    /// The bytes from module offset `start` to the end of its code section.
    pub fn code_at(&self, start: u64) -> Option<&[u8]> {
        let &(s, len, at) = self
            .sections
            .iter()
            .find(|&&(s, len, _)| s <= start && start - s < len)?;
        let from = at.checked_add(usize::try_from(start - s).ok()?)?;
        let to = at.checked_add(usize::try_from(len).ok()?)?;
        self.data.get(from..to)
    }
}

impl CodeFile {
    /// The code of an image of a dyld shared cache (its bytes lie in one of the cache's
    /// files), shown as `path`.
    pub fn from_image(
        path: PathBuf,
        code: crate::resolve::macho::dyld::ImageCode,
    ) -> Result<CodeFile, String> {
        let arch = Arch::from_object(code.arch)
            .ok_or_else(|| format!("{:?} code is not disassembled", code.arch))?;
        Ok(CodeFile {
            path,
            arch,
            data: code.data,
            sections: code.sections,
        })
    }
}

/// Tries each path in turn; the first binary of the requested module wins. On failure,
/// why each candidate was refused.
pub fn find(paths: &[PathBuf], query: &CodeQuery<'_>) -> Result<CodeFile, Vec<String>> {
    let mut why = Vec::new();
    for path in paths {
        match open(path, query) {
            Ok(f) => return Ok(f),
            Err(e) => why.push(format!("{}: {e}", path.display())),
        }
    }
    if why.is_empty() {
        why.push("no binary to try: the profile gives no path for this library and no --symbol-dir holds it".to_string());
    }
    Err(why)
}

fn same(found: Option<&str>, wanted: Option<&str>) -> bool {
    matches!((found, wanted), (Some(f), Some(w)) if debugid::same_id(f, w))
}

fn open(path: &Path, query: &CodeQuery<'_>) -> Result<CodeFile, String> {
    let data = Rc::new(FileBytes::open(path).map_err(|e| e.to_string())?);
    let kind = object::FileKind::parse(&**data).map_err(|_| "not an object file".to_string())?;
    let member: &[u8] = match kind {
        object::FileKind::MachOFat32 | object::FileKind::MachOFat64 => {
            // The member whose UUID is the debug ID (the code ID is the same UUID).
            let want = match (query.debug_id, query.code_id) {
                (Some(d), _) => d.to_string(),
                (None, Some(c)) => format!("{c}0"),
                (None, None) => String::new(),
            };
            let none = |_: &Path, _: crate::resolve::Companion<'_>| Vec::new();
            let ctx = crate::resolve::LoadContext {
                path,
                companions: &none,
                verbose: false,
            };
            macho::select(&data, &want.as_str().into(), &ctx).map_err(|e| e.message)?
        }
        _ => &data,
    };
    let file = object::File::parse(member).map_err(|e| format!("cannot parse: {e}"))?;
    let (debug_id, code_id) = match kind {
        object::FileKind::Elf32 | object::FileKind::Elf64 => elf::identify(&file),
        object::FileKind::Pe32 | object::FileKind::Pe64 => (
            pe::identify(&file).map(|(id, _)| id).unwrap_or_default(),
            None,
        ),
        _ => {
            let id = macho::debug_id(&file).unwrap_or_default();
            let code = id.get(..32).map(str::to_string);
            (id, code)
        }
    };
    if !same(Some(&debug_id), query.debug_id) && !same(code_id.as_deref(), query.code_id) {
        return Err(format!(
            "its debug ID is {debug_id}, the request is for {}",
            query.debug_id.or(query.code_id).unwrap_or("?")
        ));
    }
    let arch = Arch::from_object(file.architecture())
        .ok_or_else(|| format!("{:?} code is not disassembled", file.architecture()))?;
    let base = image_base(&file, kind);
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
        return Err("no code bytes in it (a debug-only file)".to_string());
    }
    drop(file);
    Ok(CodeFile {
        path: path.to_path_buf(),
        arch,
        data,
        sections,
    })
}

/// The address module offsets count from (SPEC section 5), as the resolvers use it.
fn image_base(file: &object::File<'_>, kind: object::FileKind) -> u64 {
    match kind {
        object::FileKind::Elf32 | object::FileKind::Elf64 => {
            file.segments().next().map_or(0, |s| s.address())
        }
        object::FileKind::Pe32 | object::FileKind::Pe64 => file.relative_address_base(),
        _ => file
            .segments()
            .find(|s| s.name().ok().flatten() == Some("__TEXT"))
            .map_or(0, |s| s.address()),
    }
}

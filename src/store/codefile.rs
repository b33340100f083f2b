//! The binary that holds a module's code, for `/asm/v1`: debug files (a `.debug` file, a
//! dSYM, a PDB) have no code bytes, so this looks for the binary itself and checks that it
//! is the requested module by debug ID or code ID (through the formats' one entry,
//! [`crate::resolve::open::open_code`]).

use crate::resolve::open::CodeError;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::disasm::Arch;
use crate::resolve::bytes::FileBytes;

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
    /// 32-bit ARM: where ARM code, Thumb code and data start (module offsets, sorted).
    pub arm_modes: Vec<(u64, crate::disasm::ArmMode)>,
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
    ) -> Result<CodeFile, CodeError> {
        let arch = Arch::from_object(code.arch).ok_or(CodeError::Arch(code.arch))?;
        Ok(CodeFile {
            path,
            arch,
            data: code.data,
            sections: code.sections,
            arm_modes: Vec::new(),
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

fn open(path: &Path, query: &CodeQuery<'_>) -> Result<CodeFile, CodeError> {
    let code = crate::resolve::open::open_code(path, query.debug_id, query.code_id)?;
    Ok(CodeFile {
        path: path.to_path_buf(),
        arch: code.arch,
        data: code.data,
        sections: code.sections,
        arm_modes: code.arm_modes,
    })
}

//! What every format checks the same way: a file's debug ID against the one asked for, and
//! the address module offsets count from. A leaf below the formats and `open.rs`.

use std::path::Path;

use object::{Object, ObjectSegment};

use super::types::{LoadError, LoadErrorKind};
use crate::shared::debugid::DebugId;

/// The error every format gives for a file with another debug ID.
pub fn check_id(path: &Path, found: &DebugId, want: &DebugId) -> Result<(), LoadError> {
    if want == found {
        Ok(())
    } else {
        // The commonest failure (a rebuild since the profile was recorded): the cause first.
        let mut e = LoadError::msg(
            LoadErrorKind::UnmatchedDebugId,
            format!(
                "the file at {} has debug ID {found}, the profile wants {} (rebuilt since the profile was recorded?)",
                path.display(),
                want
            ),
        );
        e.found_id = Some(found.clone());
        Err(e)
    }
}

/// The address module offsets count from (SPEC section 5): the first segment's of an ELF
/// file, `__TEXT`'s of a Mach-O, the image base of a PE.
pub fn image_base(file: &object::File<'_>) -> u64 {
    match file.format() {
        object::BinaryFormat::Elf => file.segments().next().map_or(0, |s| s.address()),
        object::BinaryFormat::Pe => file.relative_address_base(),
        _ => file
            .segments()
            .find(|s| s.name().ok().flatten() == Some("__TEXT"))
            .map_or(0, |s| s.address()),
    }
}

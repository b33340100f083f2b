//! The bottom of the format layer: a section's bytes out of a parsed object file
//! (decompressed when the file compresses it) and the file's byte order, for gimli.

use std::io::Read;
use std::rc::Rc;

use object::{Object, ObjectSection};

use super::bytes::{Bytes, FileBytes};

/// A section's bytes, decompressed (`SHF_COMPRESSED` or `.zdebug_*`); `None` if absent.
/// Uncompressed sections stay ranges of `bytes` (the mapped file `file` was parsed from).
pub fn section_data(
    file: &object::File<'_>,
    name: &str,
    bytes: &Rc<FileBytes>,
) -> Result<Option<Bytes>, String> {
    let Some(section) = file.section_by_name(name) else {
        return Ok(None);
    };
    let compressed = section
        .compressed_data()
        .map_err(|e| format!("section {name}: {e}"))?;
    match compressed.format {
        object::CompressionFormat::None => Ok(Some(Bytes::of(bytes, compressed.data))),
        object::CompressionFormat::Zlib => {
            let size = usize::try_from(compressed.uncompressed_size)
                .map_err(|_| format!("section {name}: too large"))?;
            let mut out = Vec::with_capacity(size.min(1 << 30));
            flate2::read::ZlibDecoder::new(compressed.data)
                .take(compressed.uncompressed_size)
                .read_to_end(&mut out)
                .map_err(|e| format!("section {name}: corrupt zlib data: {e}"))?;
            if out.len() != size {
                return Err(format!(
                    "section {name}: decompressed to {} bytes, expected {size}",
                    out.len()
                ));
            }
            Ok(Some(Bytes::Owned(out.into())))
        }
        other => Err(format!("section {name}: unsupported compression {other:?}")),
    }
}

pub fn endian_of(file: &object::File<'_>) -> gimli::RunTimeEndian {
    if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    }
}

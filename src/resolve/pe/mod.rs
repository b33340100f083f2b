//! PE resolver: the image's CodeView ID, its PDB (found through the store, read by
//! [`pdb_file`]), and without one the export table and `.pdata`.

pub mod pdb_file;
pub mod pdb_items;
pub mod pdb_names;

pub use pdb_file::{PdbModule, load_pdb, load_pdb_paced};

use object::Object;

use super::Module;
use super::native::NativeModule;
use super::types::{Companion, LoadContext, LoadError, LoadErrorKind};
use crate::shared::debugid;
use crate::shared::debugid::DebugId;

/// The PE's debug ID from its CodeView record, and the PDB path it names.
pub fn identify(file: &object::File<'_>) -> Option<(DebugId, String)> {
    let cv = file.pdb_info().ok().flatten()?;
    let id = DebugId::new(&format!(
        "{}{:X}",
        debugid::guid_string(cv.guid(), true),
        cv.age()
    ));
    Some((id, String::from_utf8_lossy(cv.path()).into_owned()))
}

/// A PE image: checks its CodeView ID, then looks for its PDB beside it, at the CodeView
/// path, and in the symstores; without one, its export table answers.
pub fn load_pe(data: &[u8], want: &DebugId, ctx: &LoadContext<'_>) -> Result<Module, LoadError> {
    let path = ctx.path;
    let file = object::File::parse(data)
        .map_err(|e| LoadError::new(LoadErrorKind::ParseError, path, format!("invalid PE: {e}")))?;
    let (id, pdb_path) = identify(&file).ok_or_else(|| {
        LoadError::new(
            LoadErrorKind::UnmatchedDebugId,
            path,
            "the image has no CodeView record (no debug ID)",
        )
    })?;
    super::id::check_id(path, &id, want)?;
    let pdb_name = pdb_path
        .rsplit(['\\', '/'])
        .next()
        .unwrap_or("")
        .to_string();
    let candidates = if pdb_name.is_empty() {
        Vec::new()
    } else {
        (ctx.companions)(
            path,
            Companion::Pdb {
                name: &pdb_name,
                recorded: &pdb_path,
                id: want,
            },
        )
    };
    for c in candidates {
        if let Ok(bytes) = super::bytes::FileBytes::open(&c) {
            let sub = LoadContext { path: &c, ..*ctx };
            match load_pdb(std::rc::Rc::new(bytes), want, &sub) {
                Ok(m) => return Ok(Module::Pdb(Box::new(m))),
                Err(e) if ctx.verbose => crate::log::elog!("  {} ({})", e.message, e.kind),
                Err(_) => {}
            }
        } else if ctx.verbose {
            crate::log::elog!("  {}: no PDB there", c.display());
        }
    }
    // No PDB: exports and unwind tables.
    let text = super::funcs::code_sections(&file);
    let base = super::id::image_base(&file);
    let mut names = super::symnames::Names::default();
    let exports = named_exports(&file, &mut names)
        .map_err(|e| LoadError::new(LoadErrorKind::ParseError, path, format!("PE exports: {e}")))?;
    names.check(path)?;
    let symbols = super::funcs::pe_table(&file, data, exports, &text);
    Ok(Module::Native(Box::new(NativeModule {
        debug_map: None,
        debug_file: path.to_path_buf(),
        base,
        code: text,
        dwarf: None,
        symbols,
        unsized_symbols: true,
        warnings: Vec::new(),
        symbol_names: Default::default(),
    })))
}

/// The named exports of a PE image: (address, 0, name); exports carry no size (`.pdata`
/// bounds them and finds the functions they omit). Many exports may point at one name:
/// each place in the file is read once and each name held once.
fn named_exports(
    file: &object::File<'_>,
    names: &mut super::symnames::Names,
) -> object::Result<Vec<super::symnames::Sym>> {
    use object::LittleEndian as LE;
    use object::read::pe::ExportTarget;
    let table = match file {
        object::File::Pe32(f) => f.export_table()?,
        object::File::Pe64(f) => f.export_table()?,
        _ => None,
    };
    let Some(table) = table else {
        return Ok(Vec::new());
    };
    let base = file.relative_address_base();
    let mut out = Vec::new();
    for (pointer, index) in table.name_pointers().iter().zip(table.name_ordinals()) {
        if names.full() {
            break;
        }
        let Ok(ExportTarget::Address(rva)) = table.target_by_index(index.get(LE)) else {
            continue;
        };
        let pointer = pointer.get(LE);
        let read = || table.name_from_pointer(pointer).ok();
        if let Some(name) = names.intern_bytes_at(Some(u64::from(pointer)), read) {
            out.push((base.wrapping_add(u64::from(rva)), 0, name));
        }
    }
    Ok(out)
}

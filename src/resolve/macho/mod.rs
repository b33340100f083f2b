//! Mach-O resolver: thin and fat files (member picked by UUID), dSYM companions, DWARF,
//! then the symbol table.

pub mod dyld;
pub mod oso;

use object::read::macho::{FatArch, MachOFatFile32, MachOFatFile64};
use object::{Object, ObjectSection, ObjectSymbol, SectionKind};

use std::rc::Rc;

use super::bytes::FileBytes;
use super::dwarf::DwarfResolver;
use super::funcs::FunctionTable;
use super::native::NativeModule;
use super::section::{Budget, endian_of, section_data};
use super::symnames::{Names, Sym, name_place};
use super::types::{LoadContext, LoadError, LoadErrorKind};

/// The debug ID of a thin Mach-O: its `LC_UUID` as is, age 0.
pub fn debug_id(file: &object::File<'_>) -> Option<crate::shared::debugid::DebugId> {
    let uuid = file.mach_uuid().ok().flatten()?;
    Some(crate::shared::debugid::DebugId::new(&format!(
        "{}0",
        crate::shared::debugid::hex_upper(&uuid)
    )))
}

/// The member of `data` (thin or fat) whose debug ID is `want`.
pub fn select<'d>(
    data: &'d [u8],
    want: &crate::shared::debugid::DebugId,
    ctx: &LoadContext<'_>,
) -> Result<&'d [u8], LoadError> {
    let path = ctx.path;
    let members: Vec<(String, &'d [u8])> = match object::FileKind::parse(data) {
        Ok(object::FileKind::MachOFat32) => fat_members(MachOFatFile32::parse(data), data, ctx)?,
        Ok(object::FileKind::MachOFat64) => fat_members(MachOFatFile64::parse(data), data, ctx)?,
        _ => vec![("thin".to_string(), data)],
    };
    let mut seen = Vec::new();
    let mut found_id = None;
    for (arch, member) in &members {
        let file = object::File::parse(*member).map_err(|e| {
            LoadError::new(
                LoadErrorKind::ParseError,
                path,
                format!("invalid Mach-O: {e}"),
            )
        })?;
        let id = debug_id(&file);
        if id.as_ref() == Some(want) {
            return Ok(member);
        }
        found_id = id.clone();
        let id = id.map_or_else(|| "(no LC_UUID)".to_string(), |i| i.to_string());
        seen.push(format!("{arch} {id}"));
    }
    let kind = if members.len() > 1 {
        LoadErrorKind::NoMatchMultiArch
    } else {
        LoadErrorKind::UnmatchedDebugId
    };
    let mut e = LoadError::msg(
        kind,
        format!(
            "the file at {} has {}, the profile wants {} (rebuilt since the profile was recorded?)",
            path.display(),
            seen.join(", "),
            want
        ),
    );
    // One ID only: which of several members was meant is not known.
    if members.len() == 1 {
        e.found_id = found_id;
    }
    Err(e)
}

fn fat_members<'d, F: FatArch>(
    fat: object::Result<object::read::macho::MachOFatFile<'d, F>>,
    data: &'d [u8],
    ctx: &LoadContext<'_>,
) -> Result<Vec<(String, &'d [u8])>, LoadError> {
    let fat = fat.map_err(|e| {
        LoadError::new(
            LoadErrorKind::ParseError,
            ctx.path,
            format!("invalid fat Mach-O: {e}"),
        )
    })?;
    fat.arches()
        .iter()
        .map(|a| {
            let member = a.data(data).map_err(|e| {
                LoadError::new(
                    LoadErrorKind::ParseError,
                    ctx.path,
                    format!("invalid fat member: {e}"),
                )
            })?;
            Ok((format!("{:?}", a.architecture()).to_lowercase(), member))
        })
        .collect()
}

/// Symbols carry no size in Mach-O: each reaches to the next function start (from
/// `LC_FUNCTION_STARTS`, or the next symbol) or the end of its section.
fn symbols(file: &object::File<'_>, names: &mut Names) -> Vec<Sym> {
    names.new_file();
    let mut out = Vec::new();
    for s in file.symbols() {
        if names.full() {
            break;
        }
        // In code, by its section: `kind()` would read the name of every symbol (for
        // LLVM's `ltmp<N>` section labels, left out below), many symbols may share one.
        let in_text = s
            .section_index()
            .and_then(|i| file.section_by_index(i).ok())
            .is_some_and(|sec| sec.kind() == SectionKind::Text);
        if in_text && s.is_definition() {
            let place = name_place(file, s.index(), false);
            // Mach-O prefixes C names with an underscore.
            let read = || s.name().ok().map(|n| n.strip_prefix('_').unwrap_or(n));
            if let Some(name) = names.intern_at(place, read) {
                let label = name
                    .strip_prefix("ltmp")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
                if !(label && s.is_local()) {
                    out.push((s.address(), 0, name));
                }
            }
        }
    }
    out
}

/// Parses a thin Mach-O (a binary or a dSYM's DWARF file).
/// `member` is `bytes` or a fat member inside it.
pub fn load(
    member: &[u8],
    bytes: &Rc<FileBytes>,
    ctx: &LoadContext<'_>,
) -> Result<NativeModule, LoadError> {
    let path = ctx.path;
    let file = object::File::parse(member).map_err(|e| {
        LoadError::new(
            LoadErrorKind::ParseError,
            path,
            format!("invalid Mach-O: {e}"),
        )
    })?;
    let base = super::id::image_base(&file);
    let code = super::funcs::code_sections(&file);
    let budget = Budget::for_file(&file);
    let dwarf = DwarfResolver::new(
        &mut |name| section_data(&file, name, bytes, &budget),
        endian_of(&file),
        path,
        budget.clone(),
    );
    let mut warnings = Vec::new();
    let dwarf = super::native::readable_dwarf(dwarf, path, &mut warnings);
    let debug_map = match dwarf {
        None => oso::load(member, path, ctx, &mut warnings),
        Some(_) => None,
    };
    let mut names = Names::default();
    let symbols = symbols(&file, &mut names);
    names.check(path)?;
    Ok(NativeModule {
        debug_file: path.to_path_buf(),
        base,
        code,
        dwarf,
        symbols: FunctionTable::new(
            base,
            symbols,
            Vec::new(),
            super::unwind::macho_function_starts(member, member, base),
            &super::funcs::code_sections(&file),
        ),
        unsized_symbols: true,
        debug_map,
        warnings,
        symbol_names: Default::default(),
    })
}

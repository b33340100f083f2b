//! ELF resolver: DWARF (in the file, or in a separate debug file it points to), then the
//! `.symtab`/`.dynsym` symbols.

pub mod dwz;
pub mod minidebuginfo;
pub mod plt;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};

use super::bytes::FileBytes;
use super::dwarf::DwarfResolver;
use super::native::NativeModule;
use super::section::{Budget, endian_of, section_data, section_data_paced};
use super::symnames::{Names, Sym, name_place};
use super::types::{Companion, LoadContext, LoadError, LoadErrorKind};
use crate::shared::debugid::{self, DebugId};

/// The debug ID and code ID of a parsed ELF file.
pub fn identify(file: &object::File<'_>) -> (DebugId, Option<String>) {
    let le = file.is_little_endian();
    match file.build_id() {
        Ok(Some(build_id)) if !build_id.is_empty() => (
            DebugId::new(&debugid::elf_from_build_id(build_id, le)),
            Some(debugid::hex_lower(build_id)),
        ),
        _ => {
            let text = file
                .section_by_name(".text")
                .and_then(|s| s.data().ok())
                .unwrap_or(&[]);
            (DebugId::new(&debugid::elf_from_text(text, le)), None)
        }
    }
}

fn has_debug_info(file: &object::File<'_>) -> bool {
    super::section::by_name(file, ".debug_info")
        .is_some_and(|s| s.size() > 0 && s.kind() != object::SectionKind::UninitializedData)
}

/// The function symbols of `.symtab` and `.dynsym`, and their untyped labels in code that
/// no sized function holds: assembly entry stubs (ld.so's `_start` and `_dl_start_user`)
/// are `STT_NOTYPE` size-0 labels, named by `nm` and llvm-symbolizer; a label inside a
/// sized function (nasm's `func.loop`) would only cut that function's name short. Names
/// are held once in `names`; the reading stops when a cap of `names` is passed.
pub fn text_symbols(file: &object::File<'_>, names: &mut Names) -> Vec<Sym> {
    super::pace::finish(text_symbols_paced(file, names))
}

/// Labels (untyped code symbols) looked up by a scan, not a sort of the functions.
const FEW_LABELS: usize = 16;

/// [`text_symbols`], pausing every few thousand symbols ([`super::pace`]).
pub async fn text_symbols_paced(file: &object::File<'_>, names: &mut Names) -> Vec<Sym> {
    names.new_file();
    // Every symbol may have a place of its own: counted from the tables' bytes in the
    // file (a header's size is not memory), at most 4 M at once.
    let entry = if file.is_64() { 24 } else { 16 };
    let count: u64 = [".symtab", ".dynsym"]
        .iter()
        .filter_map(|n| file.section_by_name(n)?.data().ok())
        .map(|d| d.len() as u64 / entry)
        .sum();
    names.reserve_places(count.min(1 << 22) as usize);
    // A 32-bit ARM function's symbol has its low bit set when it is Thumb code; the code
    // starts at the even address.
    let mask = if file.architecture() == object::Architecture::Arm {
        !1
    } else {
        !0
    };
    let mut out = Vec::new();
    let mut labels = Vec::new();
    let tables =
        (file.symbols().map(|s| (false, s))).chain(file.dynamic_symbols().map(|s| (true, s)));
    for (i, (dynamic, s)) in tables.enumerate() {
        if names.full() {
            break;
        }
        if i % 2048 == 2047 {
            super::pace::pause().await;
        }
        if s.address() == 0 || !s.is_definition() {
            continue;
        }
        let place = name_place(file, s.index(), dynamic);
        if s.kind() == SymbolKind::Text {
            if let Some(name) = names.intern_at(place, || s.name().ok()) {
                out.push((s.address() & mask, s.size(), name));
            }
        } else if s.kind() == SymbolKind::Unknown
            && in_code_section(file, s.section())
            && let Ok(name) = s.name()
            && is_code_label(name)
        {
            labels.push((s.address(), place, name));
        }
    }
    // Whether a label is inside a sized function: among the 8 sized functions that start
    // last before it (sorted by start, then end), one reaches past it (sized functions
    // may nest: aliases of different sizes). A few labels (a C++ library has a handful)
    // are looked up by a scan of the functions for those 8: sorting a libxul-sized
    // table's 250 000 functions for them was 10 ms of its first load.
    let mut inside = Vec::with_capacity(labels.len());
    if labels.len() <= FEW_LABELS {
        for &(a, _, _) in &labels {
            inside.push(inside_by_scan(&out, a));
            super::pace::pause().await;
        }
    } else {
        let mut sized: Vec<(u64, u64)> = out
            .iter()
            .filter(|s| s.1 > 0)
            .map(|s| (s.0, s.0.saturating_add(s.1)))
            .collect();
        super::pace::sort_unstable(&mut sized).await;
        inside.extend(labels.iter().map(|&(a, _, _)| inside_sorted(&sized, a)));
    }
    for ((address, place, name), inside) in labels.into_iter().zip(inside) {
        if names.full() {
            break;
        }
        if !inside && let Some(name) = names.intern_at(place, || Some(name)) {
            out.push((address, 0, name));
        }
    }
    out
}

/// Whether `a` is inside one of the 8 sized functions `(start, end)` of `sorted` (sorted)
/// that start last before it.
fn inside_sorted(sorted: &[(u64, u64)], a: u64) -> bool {
    let i = sorted.partition_point(|r| r.0 < a);
    sorted[..i].iter().rev().take(8).any(|r| a < r.1)
}

/// [`inside_sorted`] over the sized symbols of `symbols`, unsorted: one pass keeping the 8
/// greatest that start before `a`.
fn inside_by_scan(symbols: &[Sym], a: u64) -> bool {
    let mut last: Vec<(u64, u64)> = Vec::with_capacity(9);
    for s in symbols.iter().filter(|s| s.1 > 0 && s.0 < a) {
        let r = (s.0, s.0.saturating_add(s.1));
        if last.len() == 8 && r <= last[0] {
            continue;
        }
        let at = last.partition_point(|x| *x < r);
        last.insert(at, r);
        if last.len() > 8 {
            last.remove(0);
        }
    }
    last.iter().any(|r| a < r.1)
}

/// Whether a symbol's section holds code (by its flag: a separate debug file's sections
/// are `SHT_NOBITS`).
fn in_code_section(file: &object::File<'_>, section: object::SymbolSection) -> bool {
    let object::SymbolSection::Section(index) = section else {
        return false;
    };
    file.section_by_index(index).is_ok_and(|s| {
        matches!(s.flags(), object::SectionFlags::Elf { sh_flags, .. }
            if sh_flags & object::elf::SHF_EXECINSTR != object::elf::SectionFlags(0))
    })
}

/// An untyped code symbol that names code: not an ARM/AArch64 mapping symbol (`$x`,
/// `$d`), an assembler-local `.L` label, or a linker's section marker (`_etext`,
/// `__start_SECTION`).
fn is_code_label(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('$')
        && !name.starts_with(".L")
        && !matches!(name, "_etext" | "etext" | "__etext")
        && !name.starts_with("__start_")
        && !name.starts_with("__stop_")
}

/// A separate debug file for `file`: by build ID (its build ID checked), then by
/// `.gnu_debuglink` (CRC-checked), at the paths the store gives. Files found but rejected
/// are returned as warnings.
fn find_separate_debug(
    file: &object::File<'_>,
    binary: &Path,
    ctx: &LoadContext<'_>,
    warnings: &mut Vec<LoadError>,
) -> Option<(PathBuf, Rc<FileBytes>)> {
    let mut reject = |path: &Path, kind: LoadErrorKind, why: &str| {
        if ctx.verbose {
            crate::log::elog!("  {}: {why}, skipped", path.display());
        }
        warnings.push(LoadError::new(kind, path, why));
    };
    // -v lists every place looked at, found or not.
    let not_found = |path: &Path, how: &str| {
        if ctx.verbose {
            crate::log::elog!("  {}: no file ({how})", path.display());
        }
    };
    if let Ok(Some(build_id)) = file.build_id()
        && build_id.len() > 1
    {
        let hex = debugid::hex_lower(build_id);
        for path in (ctx.companions)(binary, Companion::BuildId(&hex)) {
            if let Ok(data) = FileBytes::open(&path) {
                let same = object::File::parse(&*data)
                    .ok()
                    .and_then(|f| f.build_id().ok().flatten().map(|b| b == build_id))
                    .unwrap_or(false);
                if same {
                    return Some((path, Rc::new(data)));
                }
                reject(
                    &path,
                    LoadErrorKind::UnmatchedDebugId,
                    "its build ID differs from the binary's",
                );
            } else {
                not_found(&path, "by build ID");
            }
        }
    }
    let (name, crc) = file.gnu_debuglink().ok().flatten()?;
    let name = std::str::from_utf8(name).ok()?;
    let candidates = (ctx.companions)(binary, Companion::DebugLink(name));
    for path in candidates {
        if path == binary {
            continue;
        }
        if let Ok(data) = FileBytes::open(&path) {
            let mut sum = flate2::Crc::new();
            sum.update(&data);
            if sum.sum() == crc {
                return Some((path, Rc::new(data)));
            }
            reject(
                &path,
                LoadErrorKind::DebugLinkCrcMismatch,
                &format!(
                    "CRC32 {:08x} differs from the .gnu_debuglink's {crc:08x}",
                    sum.sum()
                ),
            );
        } else {
            not_found(&path, "by .gnu_debuglink");
        }
    }
    None
}

/// Parses an ELF file (whose ID the store has checked) and its separate debug file.
pub async fn load(data: &Rc<FileBytes>, ctx: &LoadContext<'_>) -> Result<NativeModule, LoadError> {
    let path = ctx.path;
    let file = object::File::parse(&***data).map_err(|e| {
        LoadError::new(
            LoadErrorKind::ParseError,
            path,
            format!("not a valid ELF file: {e}"),
        )
    })?;
    let base = super::id::image_base(&file);
    let code = file
        .segments()
        .filter(|s| {
            matches!(s.flags(), object::SegmentFlags::Elf { p_flags, .. }
                if p_flags & object::elf::PF_X != object::elf::ProgramFlags(0))
        })
        .filter_map(|s| Some((s.address(), s.address().checked_add(s.size())?)))
        .collect();
    let mut names = Names::default();
    let mut symbols = text_symbols_paced(&file, &mut names).await;
    let mut warnings = Vec::new();
    let separate = if has_debug_info(&file) {
        None
    } else {
        find_separate_debug(&file, path, ctx, &mut warnings)
    };
    let dwarf = match &separate {
        Some((debug_path, debug_data)) => {
            let debug_file = object::File::parse(&***debug_data).map_err(|e| {
                LoadError::new(
                    LoadErrorKind::ParseError,
                    debug_path,
                    format!("not a valid ELF file: {e}"),
                )
            })?;
            if ctx.verbose {
                crate::log::elog!("  using separate debug file {}", debug_path.display());
            }
            symbols.extend(text_symbols_paced(&debug_file, &mut names).await);
            load_dwarf(
                &debug_file,
                debug_path,
                debug_data,
                path,
                ctx,
                &mut warnings,
            )
            .await?
        }
        None => load_dwarf(&file, path, data, path, ctx, &mut warnings).await?,
    };
    let debug_file = separate.map_or_else(|| path.to_path_buf(), |(p, _)| p);
    let symbols =
        super::funcs::elf_table(&file, base, symbols, &mut names, path, &mut warnings).await;
    names.check(path)?;
    Ok(NativeModule {
        debug_file,
        base,
        code,
        dwarf,
        symbols,
        unsized_symbols: false,
        debug_map: None,
        warnings,
        symbol_names: Default::default(),
    })
}

/// The sections `DwarfResolver` loads, in its order: `.debug_info` first, then gimli's.
const DWARF_ORDER: [gimli::SectionId; 16] = {
    use gimli::SectionId::*;
    [
        DebugInfo,
        DebugAbbrev,
        DebugAddr,
        DebugAranges,
        DebugLine,
        DebugLineStr,
        DebugMacinfo,
        DebugMacro,
        DebugNames,
        DebugStr,
        DebugStrOffsets,
        DebugTypes,
        DebugLoc,
        DebugLocLists,
        DebugRanges,
        DebugRngLists,
    ]
};

/// The DWARF of `debug` (the binary or its separate debug file), with its dwz
/// supplementary file and any `.dwp` sections merged into a separate debug file. DWARF
/// that cannot be read (sections past the module's budget, corrupt) is left out with a
/// warning: the symbol tables still answer.
async fn load_dwarf(
    debug: &object::File<'_>,
    debug_path: &Path,
    debug_data: &Rc<FileBytes>,
    binary: &Path,
    ctx: &LoadContext<'_>,
    warnings: &mut Vec<LoadError>,
) -> Result<Option<DwarfResolver>, LoadError> {
    // A stripped binary keeps `.gnu_debugaltlink`, but with no DWARF nothing refers to
    // the supplementary file: not worth looking for, nor a warning.
    let sup = if has_debug_info(debug) {
        dwz::find(debug, debug_path, ctx, warnings)
    } else {
        None
    };
    let sup_file = match &sup {
        Some((p, d)) => Some(object::File::parse(&***d).map_err(|e| {
            LoadError::new(
                LoadErrorKind::ParseError,
                p,
                format!("not a valid ELF file: {e}"),
            )
        })?),
        None => None,
    };
    super::pace::pause().await;
    let budget = Budget::for_file(debug);
    if let Some(f) = &sup_file {
        budget.add_file(f);
    }
    let mut sup_sections = |name: &str| match (&sup_file, &sup) {
        (Some(f), Some((_, d))) => section_data(f, name, d, &budget),
        _ => Ok(None),
    };
    let companions = super::dwarf::Companions {
        supplementary: sup.is_some().then_some(&mut sup_sections as _),
        package_in: (debug_path != binary).then_some(debug_path),
        budget: budget.clone(),
    };
    // Decompressed here, pausing (gimli's loader takes a closure, which cannot), in the
    // order the loader asks for them: a budget that runs out fails the same section, and
    // nothing after it is read.
    let mut ready = Vec::new();
    for id in DWARF_ORDER
        .into_iter()
        .filter(|&id| DwarfResolver::needed(id))
    {
        let data = section_data_paced(debug, id.name(), debug_data, &budget).await;
        let failed = data.is_err();
        ready.push((id.name(), data));
        if failed {
            break;
        }
    }
    let dwarf = DwarfResolver::with_companions_paced(
        &mut |name| match ready.iter().position(|(n, _)| *n == name) {
            Some(i) => ready.swap_remove(i).1,
            None => section_data(debug, name, debug_data, &budget),
        },
        endian_of(debug),
        binary,
        companions,
    )
    .await;
    Ok(super::native::readable_dwarf(dwarf, debug_path, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A label's test by a scan of the functions (few labels) answers as the one over
    /// the sorted functions (many labels), with nested, equal and overlapping sizes.
    #[test]
    fn labels_inside_functions_by_scan_as_by_sort() {
        let name = crate::resolve::types::Text::from("f");
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..50 {
            let n = 1 + next(60) as usize;
            let symbols: Vec<Sym> = (0..n)
                .map(|_| {
                    (
                        next(400),
                        if next(4) == 0 { 0 } else { next(120) },
                        name.clone(),
                    )
                })
                .collect();
            let mut sorted: Vec<(u64, u64)> = symbols
                .iter()
                .filter(|s| s.1 > 0)
                .map(|s| (s.0, s.0 + s.1))
                .collect();
            sorted.sort_unstable();
            for a in 0..520 {
                assert_eq!(
                    inside_by_scan(&symbols, a),
                    inside_sorted(&sorted, a),
                    "round {round}, label at {a}"
                );
            }
        }
    }
}

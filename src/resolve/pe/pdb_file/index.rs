//! What a PDB is opened with: its procedures' addresses and public symbols, read up
//! front in slices; a procedure's details are read when an address falls in it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use pdb::FallibleIterator;

use crate::resolve::bytes::FileBytes;
use crate::resolve::pace;
use crate::resolve::symtab::SymbolTable;

use super::super::pdb_items::ItemStore;
use super::{
    Cache, IPI_STREAM, Parts, PdbModule, ProcRef, S_END, S_INLINESITE, S_INLINESITE2,
    S_PROC_ID_END, S_PUB32, TPI_STREAM,
};

/// The procedures' addresses from every module's symbols (no names, lines or inline sites:
/// those are read per procedure when asked for), the public symbols, and the streams the
/// lookups read.
pub(super) async fn read_index<S: pdb::Source<'static> + 'static>(
    pdb: &mut pdb::PDB<'static, S>,
    data: &Rc<FileBytes>,
    cost: u64,
) -> pdb::Result<PdbModule> {
    let address_map = pdb.address_map()?;
    let strings = pdb.string_table().ok();
    let ipi = ItemStore::new(data.clone(), &pdb.stream_slices(IPI_STREAM)?)?;
    let tpi = ItemStore::new(data.clone(), &pdb.stream_slices(TPI_STREAM)?)?;
    // The first lookup reads both whole to find their records (tens of ms for a big
    // PDB's type stream): in idle work, done here in slices instead.
    if pace::pacing() {
        tpi.prepare_paced().await;
        ipi.prepare_paced().await;
    }
    let dbi = pdb.debug_information()?;
    let ptr_size = match dbi.machine_type() {
        Ok(pdb::MachineType::Amd64 | pdb::MachineType::Arm64 | pdb::MachineType::Ia64) => 8,
        _ => 4,
    };
    let mut modules = Vec::new();
    // By name as `module_key` spells it: MSVC writes a cross-module import's module name
    // in lower case and without `..` (`…\release\client_info.obj` for the module
    // `…\Release\client_info.obj`).
    let mut module_by_name: HashMap<String, usize> = HashMap::new();
    let mut list = dbi.modules()?;
    while let Some(module) = list.next()? {
        if modules.len() % 64 == 63 {
            pace::pause().await;
        }
        module_by_name.insert(module_key(&module.module_name()), modules.len());
        module_by_name
            .entry(module_key(&module.object_file_name()))
            .or_insert(modules.len());
        modules.push(pdb.module_info(&module)?);
    }
    let mut procs = Vec::new();
    for (m, info) in modules.iter().enumerate() {
        let Some(info) = info else { continue };
        // Each module's line program is parsed here, once, so that a module whose line
        // subsections are unreadable fails the PDB as a whole, as it did when everything was
        // read up front; the rows themselves are read per procedure.
        info.line_program()?;
        pace::pause().await;
        let mut symbols = info.symbols()?;
        let mut read = 0u32;
        while let Some(sym) = symbols.next()? {
            read += 1;
            if read.is_multiple_of(2048) {
                pace::pause().await;
            }
            // Only scope openers can be procedures; inline sites (most of the records
            // that open scopes) are skipped without parsing.
            let kind = sym.raw_kind();
            if !sym.starts_scope() || kind == S_INLINESITE || kind == S_INLINESITE2 {
                continue;
            }
            let Ok(pdb::SymbolData::Procedure(p)) = sym.parse() else {
                continue;
            };
            if let Some(rva) = p.offset.to_rva(&address_map) {
                procs.push(ProcRef {
                    start: rva.0,
                    size: p.len,
                    module: m as u32,
                    symbol: sym.index(),
                });
            }
            // The procedure's own records (locals, ranges, inline sites: most of the
            // stream) are skipped when its end record is where it says.
            if p.end > sym.index()
                && let Ok(mut after) = info.symbols_at(p.end)
                && let Ok(Some(end)) = after.next()
                && matches!(end.raw_kind(), S_END | S_PROC_ID_END)
            {
                symbols = after;
            }
        }
    }
    // Of procedures at one address (code the linker folded, funclets), the first read
    // (modules in DBI order, each module's records in order) answers, as dump_syms
    // chooses: the sort is stable and the others are dropped. (llvm-symbolizer names the
    // address after a public symbol there, which is mostly the same one.)
    pace::sort_by(&mut procs, |a, b| a.start.cmp(&b.start)).await;
    procs.dedup_by_key(|p| p.start);

    let mut publics = Vec::new();
    let globals = pdb.global_symbols()?;
    let mut it = globals.iter();
    let proc_starts: std::collections::HashSet<u32> = procs.iter().map(|p| p.start).collect();
    let mut starts: Vec<u64> = proc_starts.iter().map(|&s| u64::from(s)).collect();
    let mut read = 0u32;
    while let Some(sym) = it.next()? {
        read += 1;
        if read.is_multiple_of(2048) {
            pace::pause().await;
        }
        if sym.raw_kind() != S_PUB32 {
            continue;
        }
        if let Ok(pdb::SymbolData::Public(p)) = sym.parse()
            && p.function
            && let Some(rva) = p.offset.to_rva(&address_map)
        {
            starts.push(u64::from(rva.0));
            // A public at a procedure's start is that procedure, whose size is known: past
            // its end there is no function. Only publics without a procedure (asm, code
            // without debug info) answer, up to the next symbol.
            if !proc_starts.contains(&rva.0) {
                publics.push((u64::from(rva.0), p.name.to_string().into_owned()));
            }
        }
    }
    pace::sort_unstable(&mut starts).await;
    let sized = publics.into_iter().filter_map(|(addr, name)| {
        let next = starts[starts.partition_point(|&s| s <= addr)..]
            .first()
            .copied()?;
        Some((addr, next - addr, name))
    });
    let cache = Cache {
        details: (0..procs.len()).map(|_| None).collect(),
        ..Cache::default()
    };
    Ok(PdbModule {
        path: PathBuf::new(),
        procs,
        publics: SymbolTable::new(sized),
        parts: Parts {
            address_map,
            strings,
            tpi,
            ipi,
            modules,
            module_by_name,
            ptr_size,
            data: None,
        },
        cache: RefCell::new(cache),
        cost,
    })
}

/// A module's name as MSVC writes it in a cross-module import: ASCII lower case, `.` and
/// `..` components resolved (`d:\b\obj\release\x64\cpu.obj` for the module
/// `D:\b\src\..\obj\Release\x64\cpu.obj`), `\` between components.
pub(super) fn module_key(name: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split(['\\', '/']) {
        match part {
            "." => {}
            ".." if parts.last().is_some_and(|p| !p.is_empty() && *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("\\").to_ascii_lowercase()
}

//! PDB resolver: the PDB's procedures, line programs and inline sites (read once into
//! owned tables), public symbols as fallback.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use pdb::FallibleIterator;

use crate::debugid;
use crate::resolve::bytes::FileBytes;
use crate::resolve::symtab::SymbolTable;
use crate::resolve::{
    InlineFrame, LoadContext, LoadError, LoadErrorKind, Symbolized, Text, demangle,
};

use super::pdb_names::NameFormatter;

/// A line-table row: `len` bytes from `start` (RVAs) come from `file`:`line`.
#[derive(Debug, Clone, Copy)]
struct Row {
    start: u32,
    len: u32,
    file: u32,
    line: u32,
}

/// The procedure's line row covering `rva`; at an offset with two rows (the first empty,
/// `20 00000000 ! 22 00000000`) the first, as llvm-symbolizer answers.
fn row_at(rows: &[Row], rva: u32) -> Option<&Row> {
    rows.iter()
        .find(|r| r.start <= rva && rva - r.start < r.len.max(1))
}

/// An inline site's row covering `rva`. An empty range covers nothing: clang writes them
/// into inlinee annotations (`code 0x803, code end 0x803`), where llvm-symbolizer and samply
/// see no inlined frame.
fn site_row_at(rows: &[Row], rva: u32) -> Option<&Row> {
    rows.iter()
        .find(|r| r.start <= rva && rva - r.start < r.len)
}

/// A site whose inlinee has no readable name: left without one in the answer (the
/// front-end shows its own placeholder), never `??`.
const NO_NAME: u32 = u32::MAX;

#[derive(Debug)]
struct Site {
    parent: Option<usize>,
    name: u32,
    rows: Vec<Row>,
}

#[derive(Debug)]
struct Proc {
    start: u32,
    size: u32,
    name: Text,
    rows: Vec<Row>,
    sites: Vec<Site>,
}

pub struct PdbModule {
    pub path: PathBuf,
    procs: Vec<Proc>,
    /// Public symbols, each reaching to the next symbol (publics carry no size).
    publics: SymbolTable,
    files: Vec<Text>,
    names: Vec<Text>,
    cost: u64,
}

/// The debug ID from a PDB: GUID of the info stream, age of the DBI stream.
fn pdb_id<S: pdb::Source<'static> + 'static>(
    pdb: &mut pdb::PDB<'static, S>,
) -> pdb::Result<String> {
    let info = pdb.pdb_information()?;
    let age = pdb
        .debug_information()
        .ok()
        .and_then(|d| d.age())
        .unwrap_or(info.age);
    let guid = debugid::hex_upper(info.guid.as_bytes());
    Ok(format!("{guid}{age:X}"))
}

fn pdb_error(path: &Path, e: pdb::Error) -> LoadError {
    LoadError::new(LoadErrorKind::ParseError, path, format!("invalid PDB: {e}"))
}

struct Interner {
    map: HashMap<String, u32>,
    list: Vec<String>,
}

impl Interner {
    fn new() -> Interner {
        Interner {
            map: HashMap::new(),
            list: Vec::new(),
        }
    }
    fn get(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(s.to_string());
        self.map.insert(s.to_string(), i);
        i
    }
}

/// The PDB's bytes for the `pdb` crate, read in place from the mapped file: a PDB is never
/// copied whole (one from a symbol server may be gigabytes). A stream whose pages lie in
/// order is a range of the mapping; only one scattered over the file is gathered (as the
/// crate's own reader would copy every stream).
struct MappedSource(Rc<FileBytes>);

impl fmt::Debug for MappedSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MappedSource({} bytes)", self.0.len())
    }
}

/// A view of a [`MappedSource`]: a range of the file, or pages gathered into a buffer.
enum MappedView {
    Range(Rc<FileBytes>, std::ops::Range<usize>),
    Gathered(Vec<u8>),
}

impl fmt::Debug for MappedView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MappedView({} bytes)",
            pdb::SourceView::as_slice(self).len()
        )
    }
}

impl pdb::SourceView<'static> for MappedView {
    fn as_slice(&self) -> &[u8] {
        match self {
            MappedView::Range(file, r) => &file[r.clone()],
            MappedView::Gathered(v) => v,
        }
    }
}

impl pdb::Source<'static> for MappedSource {
    fn view(
        &mut self,
        slices: &[pdb::SourceSlice],
    ) -> Result<Box<dyn pdb::SourceView<'static>>, std::io::Error> {
        let eof = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        // Each slice's range in the file, checked before anything is allocated.
        let mut ranges = Vec::with_capacity(slices.len());
        for s in slices {
            let start = usize::try_from(s.offset).map_err(|_| eof())?;
            let end = start.checked_add(s.size).ok_or_else(eof)?;
            if end > self.0.len() {
                return Err(eof());
            }
            ranges.push(start..end);
        }
        let contiguous = ranges.windows(2).all(|w| w[0].end == w[1].start);
        let view = match (ranges.first(), ranges.last()) {
            (Some(first), Some(last)) if contiguous => {
                MappedView::Range(self.0.clone(), first.start..last.end)
            }
            _ => {
                let mut v = Vec::with_capacity(ranges.iter().map(|r| r.len()).sum());
                for r in ranges {
                    v.extend_from_slice(&self.0[r]);
                }
                MappedView::Gathered(v)
            }
        };
        Ok(Box::new(view))
    }
}

/// Reads a PDB (whose ID must be `want`) into owned tables.
pub fn load_pdb(
    data: Rc<FileBytes>,
    want: &crate::debugid::DebugId,
    ctx: &LoadContext<'_>,
) -> Result<PdbModule, LoadError> {
    let path = ctx.path;
    let cost = data.len() as u64;
    let mut pdb = pdb::PDB::open(MappedSource(data)).map_err(|e| pdb_error(path, e))?;
    let id = pdb_id(&mut pdb).map_err(|e| pdb_error(path, e))?;
    crate::resolve::open::check_id(path, &id, want)?;
    let mut m = read_tables(&mut pdb, cost).map_err(|e| pdb_error(path, e))?;
    m.path = path.to_path_buf();
    Ok(m)
}

fn read_tables<S: pdb::Source<'static> + 'static>(
    pdb: &mut pdb::PDB<'static, S>,
    cost: u64,
) -> pdb::Result<PdbModule> {
    let address_map = pdb.address_map()?;
    let strings = pdb.string_table().ok();
    let ipi = pdb.id_information()?;
    let mut id_finder = ipi.finder();
    let mut ids = ipi.iter();
    while ids.next()?.is_some() {
        id_finder.update(&ids);
    }
    let tpi = pdb.type_information()?;
    let mut type_finder = tpi.finder();
    let mut types = tpi.iter();
    while types.next()?.is_some() {
        type_finder.update(&types);
    }
    let mut files = Interner::new();
    let mut names = Interner::new();
    let mut inlinee_names: HashMap<pdb::IdIndex, u32> = HashMap::new();
    let mut procs = Vec::new();

    let dbi = pdb.debug_information()?;
    let ptr_size = match dbi.machine_type() {
        Ok(pdb::MachineType::Amd64 | pdb::MachineType::Arm64 | pdb::MachineType::Ia64) => 8,
        _ => 4,
    };
    let formatter = NameFormatter::new(&type_finder, &id_finder, &tpi, ptr_size);
    let mut infos = Vec::new();
    let mut module_by_name: HashMap<String, usize> = HashMap::new();
    let mut modules = dbi.modules()?;
    while let Some(module) = modules.next()? {
        module_by_name.insert(module.module_name().into_owned(), infos.len());
        module_by_name
            .entry(module.object_file_name().into_owned())
            .or_insert(infos.len());
        infos.push(pdb.module_info(&module)?);
    }
    let exports: Vec<Option<pdb::CrossModuleExports>> = infos
        .iter()
        .map(|i| i.as_ref().and_then(|i| i.exports().ok()))
        .collect();
    // An inlinee id with the cross-module bit names an item another module exports.
    let global_id = |info: &pdb::ModuleInfo<'_>, id: pdb::IdIndex| -> Option<pdb::IdIndex> {
        if !pdb::ItemIndex::is_cross_module(id) {
            return Some(id);
        }
        let pdb::CrossModuleRef(pdb::ModuleRef(name), local) =
            info.imports().ok()?.resolve_import(id).ok()?;
        let name = name.to_string_lossy(strings.as_ref()?).ok()?;
        let m = *module_by_name.get(name.as_ref())?;
        exports.get(m)?.as_ref()?.resolve_import(local).ok()?
    };

    for info in infos.iter().flatten() {
        let program = info.line_program()?;
        let inlinees: HashMap<pdb::IdIndex, pdb::Inlinee<'_>> =
            info.inlinees()?.map(|i| Ok((i.index(), i))).collect()?;
        let mut file_of = |index: pdb::FileIndex| -> u32 {
            let name = program
                .get_file_info(index)
                .ok()
                .and_then(|fi| {
                    Some(
                        fi.name
                            .to_string_lossy(strings.as_ref()?)
                            .ok()?
                            .into_owned(),
                    )
                })
                .unwrap_or_default();
            files.get(&name)
        };
        let to_rows = |lines: &mut dyn FnMut() -> pdb::Result<Option<pdb::LineInfo>>,
                       file_of: &mut dyn FnMut(pdb::FileIndex) -> u32|
         -> pdb::Result<Vec<Row>> {
            let mut rows = Vec::new();
            while let Some(l) = lines()? {
                let Some(rva) = l.offset.to_rva(&address_map) else {
                    continue;
                };
                rows.push(Row {
                    start: rva.0,
                    len: l.length.unwrap_or(1),
                    file: file_of(l.file_index),
                    line: l.line_start,
                });
            }
            rows.sort_by_key(|r| r.start);
            Ok(rows)
        };
        let mut symbols = info.symbols()?;
        let mut current: Option<(Proc, pdb::PdbInternalSectionOffset)> = None;
        // Symbol index of each inline site of the current procedure -> its position.
        let mut site_at: HashMap<pdb::SymbolIndex, usize> = HashMap::new();
        while let Some(sym) = symbols.next()? {
            match sym.parse() {
                Ok(pdb::SymbolData::Procedure(p)) => {
                    if let Some((done, _)) = current.take() {
                        procs.push(done);
                    }
                    site_at.clear();
                    let Some(rva) = p.offset.to_rva(&address_map) else {
                        continue;
                    };
                    let mut lines = program.lines_for_symbol(p.offset);
                    let rows = to_rows(&mut || lines.next(), &mut file_of)?;
                    current = Some((
                        Proc {
                            start: rva.0,
                            size: p.len,
                            name: proc_name(&formatter, &p).into(),
                            rows,
                            sites: Vec::new(),
                        },
                        p.offset,
                    ));
                }
                Ok(pdb::SymbolData::InlineSite(site)) => {
                    let Some((proc_, proc_offset)) = current.as_mut() else {
                        continue;
                    };
                    // The parent is the procedure or another site.
                    let parent = site.parent.and_then(|p| site_at.get(&p).copied());
                    let global = global_id(info, site.inlinee);
                    let name = match global {
                        Some(id) => *inlinee_names.entry(id).or_insert_with(|| {
                            let resolve = |i: pdb::IdIndex| global_id(info, i);
                            formatter
                                .id(id, &resolve)
                                .or_else(|| inlinee_name(&id_finder, &type_finder, id))
                                .map_or(NO_NAME, |n| names.get(&n))
                        }),
                        None => NO_NAME,
                    };
                    let rows = match inlinees.get(&site.inlinee) {
                        Some(inl) => {
                            let mut lines = inl.lines(*proc_offset, &site);
                            to_rows(&mut || lines.next(), &mut file_of)?
                        }
                        None => Vec::new(),
                    };
                    proc_.sites.push(Site { parent, name, rows });
                    site_at.insert(sym.index(), proc_.sites.len() - 1);
                }
                _ => {}
            }
        }
        if let Some((p, _)) = current.take() {
            procs.push(p);
        }
    }
    procs.sort_by_key(|p| p.start);

    let mut publics = Vec::new();
    let globals = pdb.global_symbols()?;
    let mut it = globals.iter();
    while let Some(sym) = it.next()? {
        if let Ok(pdb::SymbolData::Public(p)) = sym.parse()
            && p.function
            && let Some(rva) = p.offset.to_rva(&address_map)
        {
            publics.push((u64::from(rva.0), p.name.to_string().into_owned()));
        }
    }
    let mut starts: Vec<u64> = publics.iter().map(|p| p.0).collect();
    let proc_starts: std::collections::HashSet<u64> =
        procs.iter().map(|p| u64::from(p.start)).collect();
    starts.extend(proc_starts.iter().copied());
    starts.sort_unstable();
    // A public at a procedure's start is that procedure, whose size is known: past its
    // end there is no function. Only publics without a procedure (asm, code without
    // debug info) answer, up to the next symbol.
    publics.retain(|(addr, _)| !proc_starts.contains(addr));
    let sized = publics.into_iter().filter_map(|(addr, name)| {
        let next = starts[starts.partition_point(|&s| s <= addr)..]
            .first()
            .copied()?;
        Some((addr, next - addr, name))
    });
    Ok(PdbModule {
        path: PathBuf::new(),
        procs,
        publics: SymbolTable::new(sized),
        files: files.list.into_iter().map(Text::from).collect(),
        names: names.list.into_iter().map(Text::from).collect(),
        cost,
    })
}

/// A procedure's name as dump_syms writes it in FUNC records: with its arguments from its
/// type (`ns::f(int, char const*)`); an MSVC-decorated name (`?f@@YAXH@Z`) demangled.
fn proc_name(formatter: &NameFormatter<'_, '_, '_>, p: &pdb::ProcedureSymbol<'_>) -> String {
    let raw = p.name.to_string();
    if raw.starts_with('?') {
        return demangle(&raw);
    }
    formatter
        .function(&raw, p.type_index)
        .unwrap_or_else(|| raw.into_owned())
}

/// The name of an inlined function without its arguments, `Class::method` for member
/// functions: when its type cannot be formatted.
fn inlinee_name(
    ids: &pdb::ItemFinder<'_, pdb::IdIndex>,
    types: &pdb::ItemFinder<'_, pdb::TypeIndex>,
    index: pdb::IdIndex,
) -> Option<String> {
    match ids.find(index).and_then(|i| i.parse()) {
        Ok(pdb::IdData::Function(f)) => {
            // The scope is a string id naming the namespace, e.g. `std`.
            let scope = f
                .scope
                .and_then(|s| match ids.find(s).and_then(|i| i.parse()) {
                    Ok(pdb::IdData::String(s)) => Some(s.name.to_string().into_owned()),
                    _ => None,
                });
            Some(match scope {
                Some(scope) if !scope.is_empty() => format!("{scope}::{}", f.name.to_string()),
                _ => f.name.to_string().into_owned(),
            })
        }
        Ok(pdb::IdData::MemberFunction(m)) => {
            let class = types
                .find(m.parent)
                .and_then(|t| t.parse())
                .ok()
                .and_then(|t| match t {
                    pdb::TypeData::Class(c) => Some(c.name.to_string().into_owned()),
                    pdb::TypeData::Union(u) => Some(u.name.to_string().into_owned()),
                    _ => None,
                });
            Some(match class {
                Some(c) => format!("{c}::{}", m.name.to_string()),
                None => m.name.to_string().into_owned(),
            })
        }
        _ => None,
    }
}

impl PdbModule {
    pub fn cost(&self) -> u64 {
        self.cost
    }

    pub fn lookup(&self, offset: u64) -> Option<Symbolized> {
        let rva = u32::try_from(offset).ok()?;
        let i = self.procs.partition_point(|p| p.start <= rva);
        let Some(p) = i
            .checked_sub(1)
            .map(|j| &self.procs[j])
            .filter(|p| rva - p.start < p.size)
        else {
            return self.publics.lookup(offset).map(|mut s| {
                s.function_size = None; // a guess from the next symbol, not a size
                s
            });
        };
        let file = |r: Option<&Row>| {
            r.and_then(|r| self.files.get(r.file as usize))
                .filter(|f| !f.is_empty())
                .cloned()
        };
        let line = |r: Option<&Row>| r.map(|r| r.line).filter(|&l| l != 0);
        // The deepest site covering the address, then its parents.
        let deepest = p
            .sites
            .iter()
            .enumerate()
            .filter(|(_, s)| site_row_at(&s.rows, rva).is_some())
            .max_by_key(|(i, _)| depth(&p.sites, *i))
            .map(|(i, _)| i);
        let mut inlines = Vec::new();
        let mut at = deepest;
        while let Some(i) = at {
            let site = &p.sites[i];
            let r = site_row_at(&site.rows, rva);
            inlines.push(InlineFrame {
                function: self.names.get(site.name as usize).cloned(),
                file: file(r),
                line: line(r),
            });
            at = site.parent;
        }
        // Each site's rows give its own code's lines, where nested inline code counts as
        // its call site; the procedure's rows give the outer call site likewise.
        let outer = row_at(&p.rows, rva);
        Some(Symbolized {
            function: p.name.clone(),
            function_offset: u64::from(rva - p.start),
            function_size: Some(u64::from(p.size)),
            file: file(outer),
            line: line(outer),
            inlines,
        })
    }
}

fn depth(sites: &[Site], mut i: usize) -> usize {
    let mut d = 0;
    while let Some(p) = sites[i].parent {
        d += 1;
        i = p;
    }
    d
}

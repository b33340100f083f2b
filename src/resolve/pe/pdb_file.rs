//! PDB resolver: an index of the PDB's procedures read up front (their addresses only),
//! and each procedure's name, line rows and inline sites read from its module the first
//! time an address falls in it; public symbols as fallback.
//! The index, a procedure's frames and the inlinee line programs share the module's
//! stream readers, defined here; the parts that only read them are this file's children
//! (`pdb_file/`): the index read at open, the names' spelling, the mapped bytes.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use pdb::FallibleIterator;

use crate::resolve::bytes::FileBytes;
use crate::resolve::symtab::SymbolTable;
use crate::resolve::types::{InlineFrame, LoadContext, LoadError, LoadErrorKind, Symbolized, Text};
use crate::shared::debugid;

use super::pdb_items::ItemStore;
use super::pdb_names::NameFormatter;
use index::{module_key, read_index};
use names::{dump_syms_spelling, inlinee_name, proc_name};
use source::MappedSource;

mod index;
mod names;
mod source;

/// A line-table row: `len` bytes from `start` (RVAs) come from the file whose name is at
/// `file` in the PDB's string table ([`NO_FILE`]: unknown), line `line`.
#[derive(Debug, Clone, Copy)]
struct Row {
    start: u32,
    len: u32,
    file: u32,
    line: u32,
}

/// A row whose file could not be read: answered without a file.
const NO_FILE: u32 = u32::MAX;

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

#[derive(Debug)]
struct Site {
    parent: Option<u32>,
    /// Sites between it and the procedure.
    depth: u32,
    /// The inlinee's global id; `None` when it cannot be resolved (answered without a
    /// name, which the front-end shows its own way, never `??`).
    inlinee: Option<pdb::IdIndex>,
    /// Its rows in `Detail::rows`.
    rows: (u32, u32),
}

/// A procedure as the index knows it: where it is and where its record is.
#[derive(Debug, Clone, Copy)]
struct ProcRef {
    start: u32,
    size: u32,
    module: u32,
    symbol: pdb::SymbolIndex,
}

/// What a procedure's records say, read the first time an address falls in it.
#[derive(Debug)]
struct Detail {
    name: Text,
    /// The procedure's own rows (the first `own_rows`), then each site's, each run sorted
    /// by start.
    rows: Vec<Row>,
    own_rows: u32,
    sites: Vec<Site>,
    /// Lookups answered from it so far.
    lookups: u32,
    /// The sites' rows by start, built once a procedure with many sites is asked for
    /// often (a big function sampled many times).
    spans: Option<Spans>,
}

/// Lookups in a procedure before its sites' rows are indexed ([`Spans`]): fewer are
/// answered by going through the sites.
const INDEX_AFTER: u32 = 4;
/// Sites below which a procedure is never indexed.
const INDEX_SITES: usize = 16;

/// The sites' nonempty rows sorted by start, with the furthest end reached so far at
/// each, so that the rows covering an address are found without visiting every site.
#[derive(Debug)]
struct Spans {
    /// (start, length, site).
    spans: Vec<(u32, u32, u32)>,
    max_end: Vec<u64>,
}

impl Spans {
    fn new(detail: &Detail) -> Spans {
        let mut spans: Vec<(u32, u32, u32)> = Vec::new();
        for (i, site) in detail.sites.iter().enumerate() {
            for r in detail.site_rows(site) {
                if r.len > 0 {
                    spans.push((r.start, r.len, i as u32));
                }
            }
        }
        spans.sort_unstable();
        let mut end = 0u64;
        let max_end = spans
            .iter()
            .map(|&(start, len, _)| {
                end = end.max(u64::from(start) + u64::from(len));
                end
            })
            .collect();
        Spans { spans, max_end }
    }

    /// The deepest site with a row covering `rva`, the last of equal depth.
    fn deepest(&self, sites: &[Site], rva: u32) -> Option<usize> {
        let k = self.spans.partition_point(|s| s.0 <= rva);
        let mut best: Option<(u32, u32)> = None;
        for j in (0..k).rev() {
            if self.max_end[j] <= u64::from(rva) {
                break;
            }
            let (start, len, site) = self.spans[j];
            if rva - start < len {
                let depth = sites[site as usize].depth;
                if best.is_none_or(|(d, s)| depth > d || (depth == d && site > s)) {
                    best = Some((depth, site));
                }
            }
        }
        best.map(|(_, s)| s as usize)
    }
}

impl Detail {
    fn empty(name: Text) -> Detail {
        Detail {
            name,
            rows: Vec::new(),
            own_rows: 0,
            sites: Vec::new(),
            lookups: 0,
            spans: None,
        }
    }

    /// The deepest site covering `rva` (the last of equal depth).
    fn deepest(&mut self, rva: u32) -> Option<usize> {
        self.lookups += 1;
        if self.spans.is_none() && self.lookups > INDEX_AFTER && self.sites.len() >= INDEX_SITES {
            self.spans = Some(Spans::new(self));
        }
        if let Some(spans) = &self.spans {
            return spans.deepest(&self.sites, rva);
        }
        let mut deepest: Option<(usize, u32)> = None;
        for (i, s) in self.sites.iter().enumerate() {
            if deepest.is_none_or(|(_, d)| s.depth >= d)
                && site_row_at(self.site_rows(s), rva).is_some()
            {
                deepest = Some((i, s.depth));
            }
        }
        deepest.map(|(i, _)| i)
    }

    fn site_rows(&self, site: &Site) -> &[Row] {
        self.rows
            .get(site.rows.0 as usize..site.rows.1 as usize)
            .unwrap_or(&[])
    }
}

type FastMap<K, V> = HashMap<K, V, crate::resolve::fasthash::Fast>;

/// The parts of the PDB that lookups read from, held for the module's life.
struct Parts {
    address_map: pdb::AddressMap<'static>,
    strings: Option<pdb::StringTable<'static>>,
    /// The type and id streams, read in place (not through `pdb`, which would gather them).
    tpi: ItemStore<pdb::TypeIndex>,
    ipi: ItemStore<pdb::IdIndex>,
    modules: Vec<Option<pdb::ModuleInfo<'static>>>,
    module_by_name: HashMap<String, usize>,
    ptr_size: u64,
    /// The mapped file, whose pages are given back after reading (see [`RELEASE_EVERY`]).
    data: Option<Rc<FileBytes>>,
}

impl Parts {
    fn release(&self) {
        if let Some(d) = &self.data {
            d.release(d);
        }
    }
}

/// What lookups have read so far; each is read once per module.
#[derive(Default)]
struct Cache {
    /// By position in `PdbModule::procs`.
    details: Vec<Option<Box<Detail>>>,
    /// File names by string-table offset.
    files: FastMap<u32, Option<Text>>,
    /// Inlinee names by global id.
    inlinees: FastMap<pdb::IdIndex, Option<Text>>,
}

pub struct PdbModule {
    pub path: PathBuf,
    /// Sorted by start.
    procs: Vec<ProcRef>,
    /// Public symbols, each reaching to the next symbol (publics carry no size).
    publics: SymbolTable,
    parts: Parts,
    cache: RefCell<Cache>,
    cost: u64,
}

/// Procedures read between two givings-back of the mapped file's pages: the pages of the
/// streams read stay in memory only while in use (the type stream is read again for each
/// name); reading them again costs a fault from the page cache.
const RELEASE_EVERY: usize = 1024;

/// The debug ID from a PDB: GUID of the info stream, age of the DBI stream.
fn pdb_id<S: pdb::Source<'static> + 'static>(
    pdb: &mut pdb::PDB<'static, S>,
) -> pdb::Result<crate::shared::debugid::DebugId> {
    let info = pdb.pdb_information()?;
    let age = pdb
        .debug_information()
        .ok()
        .and_then(|d| d.age())
        .unwrap_or(info.age);
    let guid = debugid::hex_upper(info.guid.as_bytes());
    Ok(crate::shared::debugid::DebugId::new(&format!(
        "{guid}{age:X}"
    )))
}

fn pdb_error(path: &Path, e: pdb::Error) -> LoadError {
    LoadError::new(LoadErrorKind::ParseError, path, format!("invalid PDB: {e}"))
}

/// Opens a PDB (whose ID must be `want`) and indexes its procedures.
pub fn load_pdb(
    data: Rc<FileBytes>,
    want: &crate::shared::debugid::DebugId,
    ctx: &LoadContext<'_>,
) -> Result<PdbModule, LoadError> {
    crate::resolve::pace::finish(load_pdb_paced(data, want, ctx))
}

/// [`load_pdb`], pausing every few thousand records ([`crate::resolve::pace`]).
pub async fn load_pdb_paced(
    data: Rc<FileBytes>,
    want: &crate::shared::debugid::DebugId,
    ctx: &LoadContext<'_>,
) -> Result<PdbModule, LoadError> {
    let path = ctx.path;
    let cost = data.len() as u64;
    let mut pdb = pdb::PDB::open(MappedSource(data.clone())).map_err(|e| pdb_error(path, e))?;
    let id = pdb_id(&mut pdb).map_err(|e| pdb_error(path, e))?;
    crate::resolve::id::check_id(path, &id, want)?;
    let mut m = read_index(&mut pdb, &data, cost)
        .await
        .map_err(|e| pdb_error(path, e))?;
    m.path = path.to_path_buf();
    data.release(&data);
    m.parts.data = Some(data);
    Ok(m)
}

// The MSF streams of the type and id records (fixed numbers).
const TPI_STREAM: u32 = 2;
const IPI_STREAM: u32 = 4;

// Raw symbol kinds (CodeView `SYM_ENUM_e`), for filtering before parsing.
const S_END: u16 = 0x0006;
const S_PROC_ID_END: u16 = 0x114f;
const S_PUB32: u16 = 0x110e;
const S_INLINESITE: u16 = 0x114d;
const S_INLINESITE2: u16 = 0x115d;

/// A module's line program and inlinee lines, read once per lookup batch that needs them.
struct ModuleLines<'a> {
    program: pdb::LineProgram<'a>,
    inlinees: FastMap<pdb::IdIndex, pdb::Inlinee<'a>>,
}

/// What one batch of lookups reads from the PDB's streams: the type and id finders (one
/// pass over each stream, only when a name is formatted) and the modules' line programs.
/// They borrow the streams, so they live as long as the batch; what they produce is kept
/// in the module's [`Cache`].
struct Batch<'a> {
    parts: &'a Parts,
    formatter: OnceCell<NameFormatter<'a>>,
    lines: FastMap<u32, Option<Rc<ModuleLines<'a>>>>,
    /// Procedures read by this batch.
    details_read: usize,
    exports: RefCell<FastMap<usize, Option<pdb::CrossModuleExports>>>,
}

impl<'a> Batch<'a> {
    fn new(parts: &'a Parts) -> Batch<'a> {
        Batch {
            parts,
            formatter: OnceCell::new(),
            lines: FastMap::default(),
            details_read: 0,
            exports: RefCell::new(FastMap::default()),
        }
    }

    /// The name formatter, over the type and id streams (indexed on the module's first
    /// name, then kept).
    fn formatter(&self) -> &NameFormatter<'a> {
        self.formatter.get_or_init(|| {
            self.parts.tpi.prepare();
            self.parts.ipi.prepare();
            // The first scan read both streams whole; names read only a few of their pages.
            self.parts.release();
            NameFormatter::new(&self.parts.tpi, &self.parts.ipi, self.parts.ptr_size)
        })
    }

    /// An inlinee id with the cross-module bit names an item another module exports.
    fn global_id(&self, module: usize, id: pdb::IdIndex) -> Option<pdb::IdIndex> {
        if !pdb::ItemIndex::is_cross_module(id) {
            return Some(id);
        }
        let info = self.parts.modules.get(module)?.as_ref()?;
        let pdb::CrossModuleRef(pdb::ModuleRef(name), local) =
            info.imports().ok()?.resolve_import(id).ok()?;
        let name = name.to_string_lossy(self.parts.strings.as_ref()?).ok()?;
        let m = *self.parts.module_by_name.get(&module_key(&name))?;
        let mut exports = self.exports.borrow_mut();
        let e = exports.entry(m).or_insert_with(|| {
            self.parts
                .modules
                .get(m)
                .and_then(|i| i.as_ref())
                .and_then(|i| i.exports().ok())
        });
        e.as_ref()?.resolve_import(local).ok()?
    }

    /// A procedure's name, rows and inline sites from its module. A record that cannot be
    /// read ends what is read of the procedure (its name stays).
    fn detail(&mut self, p: &ProcRef) -> Detail {
        self.details_read += 1;
        let parts = self.parts;
        let Some(info) = parts
            .modules
            .get(p.module as usize)
            .and_then(|i| i.as_ref())
        else {
            return Detail::empty(Text::from(""));
        };
        let Ok(mut symbols) = info.symbols_at(p.symbol) else {
            return Detail::empty(Text::from(""));
        };
        let proc_ = match symbols.next().map(|s| s.map(|s| s.parse())) {
            Ok(Some(Ok(pdb::SymbolData::Procedure(proc_)))) => proc_,
            _ => return Detail::empty(Text::from("")),
        };
        let mut detail = Detail::empty(proc_name(self.formatter(), &proc_).into());
        let _ = self.read_lines(p.module, &proc_, &mut symbols, &mut detail);
        detail
    }

    fn read_lines(
        &mut self,
        module: u32,
        proc_: &pdb::ProcedureSymbol<'_>,
        symbols: &mut pdb::SymbolIter<'_>,
        detail: &mut Detail,
    ) -> pdb::Result<()> {
        let parts = self.parts;
        let lines = self.lines.entry(module).or_insert_with(|| {
            let info = parts.modules.get(module as usize)?.as_ref()?;
            let program = info.line_program().ok()?;
            let inlinees = info
                .inlinees()
                .ok()?
                .map(|i| Ok((i.index(), i)))
                .collect()
                .ok()?;
            Some(Rc::new(ModuleLines { program, inlinees }))
        });
        let Some(lines) = lines.clone() else {
            return Ok(());
        };
        let address_map = &parts.address_map;
        // Appends rows to `detail.rows`, sorted among themselves; returns their range.
        let to_rows = |rows: &mut Vec<Row>,
                       it: &mut dyn FnMut() -> pdb::Result<Option<pdb::LineInfo>>|
         -> pdb::Result<(u32, u32)> {
            let from = rows.len();
            // The file of consecutive rows is mostly the same: its name's place is looked
            // up once per change.
            let mut last: Option<(pdb::FileIndex, u32)> = None;
            while let Some(l) = it()? {
                let Some(rva) = l.offset.to_rva(address_map) else {
                    continue;
                };
                let file = match last {
                    Some((index, file)) if index == l.file_index => file,
                    _ => {
                        let file = lines
                            .program
                            .get_file_info(l.file_index)
                            .map_or(NO_FILE, |fi| fi.name.0);
                        last = Some((l.file_index, file));
                        file
                    }
                };
                rows.push(Row {
                    start: rva.0,
                    len: l.length.unwrap_or(1),
                    file,
                    line: l.line_start,
                });
            }
            rows[from..].sort_by_key(|r| r.start);
            Ok((from as u32, rows.len() as u32))
        };
        let mut it = lines.program.lines_for_symbol(proc_.offset);
        detail.own_rows = to_rows(&mut detail.rows, &mut || it.next())?.1;
        // Symbol index of each inline site of the procedure with its position, in the
        // order read (ascending).
        let mut site_at: Vec<(pdb::SymbolIndex, u32)> = Vec::new();
        // The procedure's sites are the records up to the next procedure (as when the
        // module was read whole).
        while let Some(sym) = symbols.next()? {
            let kind = sym.raw_kind();
            if kind != S_INLINESITE && kind != S_INLINESITE2 {
                if sym.starts_scope()
                    && let Ok(pdb::SymbolData::Procedure(_)) = sym.parse()
                {
                    break;
                }
                continue;
            }
            let Ok(pdb::SymbolData::InlineSite(site)) = sym.parse() else {
                continue;
            };
            // The parent is the procedure or another site.
            let parent = site.parent.and_then(|p| {
                site_at
                    .binary_search_by_key(&p, |s| s.0)
                    .ok()
                    .map(|i| site_at[i].1)
            });
            let depth = parent.map_or(0, |p| detail.sites[p as usize].depth + 1);
            let inlinee = self.global_id(module as usize, site.inlinee);
            let rows = match lines.inlinees.get(&site.inlinee) {
                Some(inl) => {
                    let mut it = inl.lines(proc_.offset, &site);
                    to_rows(&mut detail.rows, &mut || it.next())?
                }
                None => (0, 0),
            };
            detail.sites.push(Site {
                parent,
                depth,
                inlinee,
                rows,
            });
            site_at.push((sym.index(), detail.sites.len() as u32 - 1));
        }
        Ok(())
    }

    /// An inlinee's name with its scope and arguments, or without arguments when its type
    /// cannot be formatted.
    fn inlinee_name(&self, module: usize, id: pdb::IdIndex) -> Option<String> {
        let resolve = |i: pdb::IdIndex| self.global_id(module, i);
        let formatter = self.formatter();
        formatter
            .id(id, &resolve)
            .or_else(|| inlinee_name(formatter.ids(), formatter.types(), id))
    }
}

impl PdbModule {
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// Resolves module offsets (in any order; one batch reads each procedure once), each
    /// answer handed to `found` as soon as it is known (with the index of its offset), so
    /// that a big request's answers are never all held.
    pub fn lookup_each(&self, offsets: &[u64], found: &mut dyn FnMut(usize, Option<Symbolized>)) {
        let mut batch = Batch::new(&self.parts);
        let mut cache = self.cache.borrow_mut();
        let mut read = 0;
        for (i, &o) in offsets.iter().enumerate() {
            found(i, self.lookup_in(&mut batch, &mut cache, o));
            if batch.details_read > read + RELEASE_EVERY {
                read = batch.details_read;
                self.parts.release();
            }
        }
        if batch.details_read > 0 {
            self.parts.release();
        }
    }

    fn lookup_in(
        &self,
        batch: &mut Batch<'_>,
        cache: &mut Cache,
        offset: u64,
    ) -> Option<Symbolized> {
        let rva = u32::try_from(offset).ok()?;
        let i = self.procs.partition_point(|p| p.start <= rva);
        let Some((i, p)) = i
            .checked_sub(1)
            .map(|j| (j, &self.procs[j]))
            .filter(|(_, p)| rva - p.start < p.size)
        else {
            return self.publics.lookup(offset).map(|mut s| {
                s.function_size = None; // a guess from the next symbol, not a size
                if s.function.contains('`') {
                    s.function = dump_syms_spelling(s.function.to_string()).as_str().into();
                }
                s
            });
        };
        let Cache {
            details,
            files,
            inlinees,
        } = cache;
        let detail = details[i].get_or_insert_with(|| Box::new(batch.detail(p)));
        let strings = self.parts.strings.as_ref();
        let mut file = |r: Option<&Row>| -> Option<Text> {
            let r = r?;
            if r.file == NO_FILE {
                return None;
            }
            files
                .entry(r.file)
                .or_insert_with(|| {
                    let name = pdb::StringRef(r.file).to_string_lossy(strings?).ok()?;
                    (!name.is_empty()).then(|| Text::from(name.as_ref()))
                })
                .clone()
        };
        let line = |r: Option<&Row>| r.map(|r| r.line).filter(|&l| l != 0);
        // The deepest site covering the address (the last of equal depth), then its
        // parents.
        let mut at = detail.deepest(rva);
        let detail = &**detail;
        let sites = &detail.sites;
        let mut frames = Vec::new();
        while let Some(i) = at {
            let site = &sites[i];
            let r = site_row_at(detail.site_rows(site), rva);
            let function = site.inlinee.and_then(|id| {
                inlinees
                    .entry(id)
                    .or_insert_with(|| {
                        batch
                            .inlinee_name(p.module as usize, id)
                            .map(|n| Text::from(dump_syms_spelling(n).as_str()))
                    })
                    .clone()
            });
            frames.push(InlineFrame {
                function,
                file: file(r),
                line: line(r),
            });
            at = site.parent.map(|p| p as usize);
        }
        // Each site's rows give its own code's lines, where nested inline code counts as
        // its call site; the procedure's rows give the outer call site likewise.
        let outer = row_at(&detail.rows[..detail.own_rows as usize], rva);
        Some(Symbolized {
            function: detail.name.clone(),
            function_offset: u64::from(rva - p.start),
            function_size: Some(u64::from(p.size)),
            file: file(outer),
            line: line(outer),
            inlines: frames,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::module_key;

    /// interpret-core 0.7.8's libebm_win_x64.pdb (MSVC 19.38, LTCG): the module
    /// `…\compute\cpu_ebm\..\..\..\..\bld\…\Release\…\cpu_64.obj` is imported by
    /// interpretable_numerics.obj as `d:\…\bld\…\release\…\cpu_64.obj` (`llvm-pdbutil dump
    /// -xmi`, `-string-table`).
    #[test]
    fn module_key_is_the_import_spelling() {
        let module = r"D:\a\interpret\interpret\shared\libebm\compute\cpu_ebm\..\..\..\..\bld\tmp\vs\obj\Release\win\x64\cpu_ebm\cpu_64.obj";
        let import = r"d:\a\interpret\interpret\bld\tmp\vs\obj\release\win\x64\cpu_ebm\cpu_64.obj";
        assert_eq!(module_key(module), import);
        assert_eq!(module_key(import), import);
        assert_eq!(module_key(r"C:\b\.\Release\x.obj"), r"c:\b\release\x.obj");
        assert_eq!(module_key(r"..\x\..\y.obj"), r"..\y.obj");
        assert_eq!(module_key("Import:KERNEL32.dll"), "import:kernel32.dll");
    }
}

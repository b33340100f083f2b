//! DWARF lookups. Addresses go through the batch path (`batch/`, with `skip/` and
//! `lines.rs` reading DIEs and line programs), one alone too: `addr2line`'s `Context`
//! parses every unit of the file before its first answer. An address the batch path
//! leaves goes through that `Context`. Either way the function's entry and size come from
//! the subprogram DIE's ranges.

mod batch;
pub mod edges;
mod lines;
pub mod names;
mod reader;
mod skip;
mod split;

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use addr2line::{LookupContinuation, LookupResult, SplitDwarfLoad};
use gimli::{Reader, RunTimeEndian, SectionId};

use super::bytes::Bytes;
use super::fasthash::Fast;
use super::section::{Budget, DebugDataError};
use super::types::{InlineFrame, Symbolized, Text};
use split::{SplitDwarf, SplitUnit, load_dwp, load_split_sections};

pub use reader::R;

/// Reads one section of an object file, decompressed; `None` when absent.
pub type SectionFn<'a> = dyn FnMut(&str) -> Result<Option<Bytes>, DebugDataError> + 'a;

/// A section's reader for gimli's loader.
type LoadSection<'a> = dyn FnMut(SectionId) -> Result<R, DebugDataError> + 'a;

/// The sections behind a resolver's readers (mapped file ranges, decompressed sections,
/// split-DWARF files loaded later): what the cache bound counts, and whose pages a batch
/// gives back. (Each reader keeps its own bytes alive.)
#[derive(Default)]
struct Backing {
    held: RefCell<Vec<Bytes>>,
    /// Section bytes behind the readers, mapped or decompressed: what the cache bounds.
    bytes: std::cell::Cell<u64>,
}

impl Backing {
    /// Releases the mapped pages of `part` (see [`Bytes::release`]).
    fn release(&self, part: &[u8]) {
        self.holding(part, |b| b.release(part));
    }

    /// Maps the pages of `part` ahead of reading it (see [`Bytes::populate`]).
    fn populate(&self, part: &[u8]) {
        self.holding(part, |b| b.populate(part));
    }

    /// `f` on the section bytes that hold `part`, if any do.
    fn holding(&self, part: &[u8], f: impl FnOnce(&Bytes)) {
        let at = part.as_ptr() as usize;
        for b in self.held.borrow().iter() {
            let base = b.as_ptr() as usize;
            if at >= base && at + part.len() <= base + b.len() {
                f(b);
                return;
            }
        }
    }

    fn reader(&self, data: Option<Bytes>, endian: RunTimeEndian) -> R {
        let Some(data) = data else {
            return R::empty_of(endian);
        };
        self.bytes.set(self.bytes.get() + data.len() as u64);
        self.held.borrow_mut().push(data.clone());
        R::new(data, endian)
    }
}

/// Files that complete a unit's DWARF, found by the format.
#[derive(Default)]
pub struct Companions<'a, 'f> {
    /// The dwz supplementary file's sections (`.gnu_debugaltlink`).
    pub supplementary: Option<&'a mut SectionFn<'f>>,
    /// A file that may hold `.debug_*.dwo` sections and a `.debug_cu_index`: a separate
    /// debug file into which a `.dwp` was merged.
    pub package_in: Option<&'a Path>,
    /// The module's budget of decompressed bytes (the one `section` reads within), for the
    /// `.dwp` and `.dwo` files.
    pub budget: Rc<Budget>,
}

pub struct DwarfResolver {
    /// addr2line over the same sections, made when `/source/v1` asks for a unit's
    /// directory, for symbols without sizes (Mach-O), or when the batch path leaves an
    /// address (its tables, every unit parsed, cost time and memory a batch does not need).
    ctx: OnceCell<Option<addr2line::Context<R>>>,
    dwarf: Arc<gimli::Dwarf<R>>,
    /// The units and their ranges, as addr2line lists them, for [`Self::lookup_batch`].
    units: batch::Units,
    split: SplitDwarf,
    /// Demangled names by raw name, and file paths: demangling each frame of each
    /// address again was a fifth of the time of a cold request.
    names: RefCell<HashMap<Box<[u8]>, Text>>,
    /// The same by where the raw name is in the file: most frames' names are asked many
    /// times, and hashing a long mangled name each time showed in profiles.
    names_at: RefCell<HashMap<(usize, usize), Text, Fast>>,
    files: RefCell<HashMap<Box<str>, Text>>,
    /// Qualified names rebuilt for subprograms without a linkage name.
    qualified: names::Names,
    /// Split units' DWARF by their skeleton's index in `units`, for the batch path:
    /// loaded once, kept for later batches (`None`: not found).
    split_units: RefCell<HashMap<usize, Option<Rc<SplitUnit>>>>,
    backing: Backing,
}

/// What gimli's `populate_abbreviations_cache(Duplicates)` does (a table several units
/// share is parsed once, here; the others with their unit), pausing ([`super::pace`]): at
/// libxul's size it is 9 ms of reading every unit header and the shared tables. A table
/// that fails to parse is left out, and fails again where a unit asks for it.
async fn cache_shared_abbreviations(dwarf: &mut gimli::Dwarf<R>) {
    let mut offsets = Vec::new();
    let mut headers = dwarf.debug_info.units();
    while let Ok(Some(unit)) = headers.next() {
        offsets.push(unit.debug_abbrev_offset().0);
        // Headers lie far apart: each read is a page touched.
        if offsets.len() % 256 == 0 {
            super::pace::pause().await;
        }
    }
    super::pace::sort_unstable(&mut offsets).await;
    let shared: Vec<usize> = offsets
        .chunk_by(|a, b| a == b)
        .filter(|run| run.len() > 1)
        .map(|run| run[0])
        .collect();
    for (i, &offset) in shared.iter().enumerate() {
        if i % 16 == 15 {
            super::pace::pause().await;
        }
        let offset = gimli::DebugAbbrevOffset(offset);
        if let Ok(table) = dwarf.debug_abbrev.abbreviations(offset) {
            dwarf
                .abbreviations_cache
                .set::<R>(offset, std::sync::Arc::new(table));
        }
    }
}

impl DwarfResolver {
    /// Builds a resolver from the sections `section` reads. `binary` is the file the DWARF
    /// came from (its folder is searched for `.dwo` files, `<binary>.dwp` is loaded if
    /// present). Returns `Ok(None)` when there is no `.debug_info`.
    /// `budget` is the one `section` decompresses within.
    pub fn new(
        section: &mut SectionFn<'_>,
        endian: RunTimeEndian,
        binary: &Path,
        budget: Rc<Budget>,
    ) -> Result<Option<DwarfResolver>, DebugDataError> {
        let companions = Companions {
            budget,
            ..Companions::default()
        };
        Self::with_companions(section, endian, binary, companions)
    }

    /// As [`Self::new`], with a dwz supplementary file and another file that may hold a
    /// package's sections.
    pub fn with_companions(
        section: &mut SectionFn<'_>,
        endian: RunTimeEndian,
        binary: &Path,
        companions: Companions<'_, '_>,
    ) -> Result<Option<DwarfResolver>, DebugDataError> {
        super::pace::finish(Self::with_companions_paced(
            section, endian, binary, companions,
        ))
    }

    /// As [`Self::with_companions`], pausing in the unit list ([`super::pace`]).
    /// Whether a symbolication reads section `id`: never locations, macros or the name index,
    /// not even decompressed (gcc's `.debug_loclists`: a fifth of a C++ library's DWARF).
    pub fn needed(id: SectionId) -> bool {
        !matches!(
            id,
            SectionId::DebugLoc
                | SectionId::DebugLocLists
                | SectionId::DebugMacinfo
                | SectionId::DebugMacro
                | SectionId::DebugNames
        )
    }

    pub async fn with_companions_paced(
        section: &mut SectionFn<'_>,
        endian: RunTimeEndian,
        binary: &Path,
        companions: Companions<'_, '_>,
    ) -> Result<Option<DwarfResolver>, DebugDataError> {
        let info = section(SectionId::DebugInfo.name())?;
        if info.as_ref().is_none_or(|d| d.is_empty()) {
            return Ok(None);
        }
        let backing = Backing::default();
        let mut info = Some(info);
        // Both loads through `dyn`: gimli's loader is 10 KB per closure type.
        let mut main = |id: SectionId| -> Result<R, DebugDataError> {
            // `.debug_info` as read above (taken only for it: gimli asks for other
            // sections first, and a compressed `.debug_info` was decompressed twice).
            let data = match id {
                SectionId::DebugInfo if info.is_some() => info.take().flatten(),
                id if !Self::needed(id) => None,
                _ => section(id.name())?,
            };
            Ok(backing.reader(data, endian))
        };
        let mut dwarf = gimli::Dwarf::load(&mut main as &mut LoadSection<'_>)?;
        super::pace::pause().await;
        if let Some(sup) = companions.supplementary {
            let mut sup = |id: SectionId| -> Result<R, DebugDataError> {
                Ok(backing.reader(sup(id.name())?, endian))
            };
            dwarf.load_sup(&mut sup as &mut LoadSection<'_>)?;
        }
        // A table several units share is parsed once (addr2line's choice); the others are
        // parsed with their unit when it is asked for, and not kept with every unit.
        cache_shared_abbreviations(&mut dwarf).await;
        #[allow(clippy::arc_with_non_send_sync)]
        let dwarf = Arc::new(dwarf);
        // The unit list fails where addr2line's would: a broken file is refused here.
        let units = batch::Units::parse(&dwarf)
            .await
            .map_err(DebugDataError::InvalidDwarf)?;
        let ctx = OnceCell::new();
        if dwarf.sup.is_some() {
            // addr2line also lists the supplementary file's units: check them now too.
            let c = addr2line::Context::from_arc_dwarf(dwarf.clone())
                .map_err(DebugDataError::InvalidDwarf)?;
            let _ = ctx.set(Some(c));
        }
        let budget = companions.budget;
        let package = load_dwp(binary, endian, &backing, &budget).or_else(|| {
            // A package's sections inside the debug file itself (`.debug_info.dwo`...).
            let file = companions.package_in?;
            let sections = load_split_sections(file, endian, &backing, &budget, false)?;
            gimli::DwarfPackage::load(sections, backing.reader(None, endian)).ok()
        });
        Ok(Some(DwarfResolver {
            ctx,
            dwarf,
            units,
            split: SplitDwarf {
                package,
                binary_dir: binary.parent().map(Path::to_path_buf).unwrap_or_default(),
                endian,
                budget,
            },
            names: Default::default(),
            names_at: Default::default(),
            files: Default::default(),
            qualified: Default::default(),
            split_units: Default::default(),
            backing,
        }))
    }

    fn ctx(&self) -> Option<&addr2line::Context<R>> {
        self.ctx
            .get_or_init(|| addr2line::Context::from_arc_dwarf(self.dwarf.clone()).ok())
            .as_ref()
    }

    pub fn cost(&self) -> u64 {
        self.backing.bytes.get()
    }

    fn finish<L: LookupContinuation<Buf = R>>(&self, mut r: LookupResult<L>) -> L::Output {
        loop {
            match r {
                LookupResult::Output(out) => return out,
                LookupResult::Load { load, continuation } => {
                    r = continuation.resume(self.split.load(&load, &self.backing));
                }
            }
        }
    }

    /// The compilation directory of the unit holding `addr`. Where one unit's ranges alone
    /// hold it and that unit is not a skeleton, from that unit: the source view asks this
    /// for an address it has a file for, and addr2line's context (every unit parsed:
    /// 150 MB and 0.1 s on a libxul-sized file) is not built for it.
    pub fn comp_dir(&self, addr: u64) -> Option<String> {
        let dir = |d: &R| d.to_string_lossy().into_owned();
        if let Some(i) = self.unit_of(addr)
            && self.units.units.get(i).is_some_and(|u| !u.split)
            && let Some(unit) = self.units.unit(&self.dwarf, i)
        {
            return unit.comp_dir.as_ref().map(dir);
        }
        let unit = self.finish(self.ctx()?.find_dwarf_and_unit(addr))?;
        unit.comp_dir.as_ref().map(dir)
    }

    /// Whether a compilation unit's ranges hold `addr` (padding between its functions
    /// included).
    pub fn covers(&self, addr: u64) -> bool {
        self.ctx()
            .is_some_and(|c| self.finish(c.find_dwarf_and_unit(addr)).is_some())
    }

    /// Resolves an address of the file's own address space. `None` when no DWARF
    /// subprogram covers it (line-table rows alone do not make a function).
    pub fn lookup(&self, addr: u64) -> Option<Symbolized> {
        match self.lookup_named(addr, &|_| None)? {
            Found::Function(s) => Some(s),
            Found::Line { .. } => None,
        }
    }

    /// As [`Self::lookup`]; `symbol_at(entry)` is the symbol table's name at a function's
    /// entry: it names a function whose DWARF has no linkage name (as llvm-symbolizer
    /// answers) or no name at all (dwz without its supplementary file).
    pub fn lookup_named(
        &self,
        addr: u64,
        symbol_at: &dyn Fn(u64) -> Option<Text>,
    ) -> Option<Found> {
        let mut iter = match self.finish(self.ctx()?.find_frames(addr)) {
            Ok(iter) => iter,
            Err(_) => return self.lookup_unreadable(addr, symbol_at),
        };
        let mut frames = Vec::new();
        // The unit's language, the same on every frame.
        let mut language = None;
        while let Ok(Some(frame)) = iter.next() {
            if let Some(f) = &frame.function {
                language = f.language;
            }
            let loc = frame.location.as_ref();
            frames.push(Frame {
                die: frame.dw_die_offset,
                name: frame.function.map(|f| f.name),
                file: loc.and_then(|l| l.file).map(|p| self.file(p)),
                line: loc.and_then(|l| l.line),
            });
        }
        let unit = self.finish(self.ctx()?.find_dwarf_and_unit(addr))?;
        // A function without a row where the line table has one: addr2line's reading of a
        // sequence a tombstone cut short (see `batch::own_row`).
        if let Some(inner) = frames.first_mut()
            && inner.die.is_some()
            && inner.file.is_none()
            && inner.line.is_none()
            && let Some((file, line)) = batch::own_row(&unit, addr)
        {
            inner.file = file.map(|p| self.file(&p));
            inner.line = line;
        }
        // A split unit's skeleton carries no DW_AT_language (DWARF 5 puts it in the
        // .dwo's unit): read from the unit the frames came from, so that a C++ function
        // without a linkage name is named from the symbol table as in a non-split build.
        let language = language.or_else(|| unit_language(&unit));
        self.symbolized(&unit, language, addr, &frames, symbol_at)
    }

    /// An address whose function addr2line cannot read: one bad reference anywhere in
    /// it (an inlined call's origin out of its unit, say) fails the whole function. The
    /// batch path reads only the DIEs the address needs, as llvm-symbolizer does, so its
    /// answer stands where it has one; else the line table says where the address is and
    /// the symbol table names the function (llvm-symbolizer's answer too). A fuzzed file
    /// found the two paths apart here (`fixtures/fuzz/batch-unreadable-origin.elf`).
    fn lookup_unreadable(
        &self,
        addr: u64,
        symbol_at: &dyn Fn(u64) -> Option<Text>,
    ) -> Option<Found> {
        let mut answer = None;
        let left = self.lookup_batch(&[addr], symbol_at, &mut |_, found| answer = Some(found));
        if left.is_empty() {
            return answer.flatten();
        }
        let at = self.ctx()?.find_location(addr).ok()??;
        Some(Found::Line {
            file: self.file(at.file?),
            line: at.line,
        })
    }

    /// The unit the batch path reads for `addr`, if one alone holds it.
    pub fn unit_of(&self, addr: u64) -> Option<usize> {
        match self.units.cover(addr) {
            batch::Cover::Unit(u) => Some(u),
            batch::Cover::Nowhere | batch::Cover::Several => None,
        }
    }

    /// As [`Self::lookup_named`] for many sorted addresses, reading each unit they fall in
    /// once. Each answer goes to `found` with its address's index as its unit is done; the
    /// indices returned are those [`Self::lookup_named`] must answer.
    pub fn lookup_batch(
        &self,
        addrs: &[u64],
        symbol_at: &dyn Fn(u64) -> Option<Text>,
        found: &mut dyn FnMut(usize, Option<Found>),
    ) -> Vec<usize> {
        let units = &self.units;
        let mut left = Vec::new();
        let mut by_unit = Vec::new();
        for (k, &a) in addrs.iter().enumerate() {
            match units.cover(a) {
                batch::Cover::Nowhere => found(k, None),
                batch::Cover::Unit(u) => by_unit.push((u, k)),
                batch::Cover::Several => left.push(k),
            }
        }
        by_unit.sort_by_key(|&(u, _)| u);
        let mut asks = Vec::new();
        let mut scratch = batch::Scratch::default();
        for group in by_unit.chunk_by(|a, b| a.0 == b.0) {
            let entry = &units.units[group[0].0];
            let Some(parsed) = units.unit(&self.dwarf, group[0].0) else {
                left.extend(group.iter().map(|&(_, k)| k));
                continue;
            };
            let split = match entry.split {
                true => match self.split_unit(group[0].0, &parsed) {
                    Some(s) => Some(s),
                    None => {
                        left.extend(group.iter().map(|&(_, k)| k));
                        continue;
                    }
                },
                false => None,
            };
            // Read whole next, given back after.
            for part in batch::unit_bytes(&self.dwarf, &parsed) {
                self.backing.populate(part);
            }
            asks.clear();
            asks.extend(group.iter().map(|&(_, k)| addrs[k]));
            let skeleton = gimli::UnitRef::new(&self.dwarf, &parsed);
            let (unit, refs) = match &split {
                Some(s) => (gimli::UnitRef::new(&s.dwarf, &s.unit), None),
                None => (skeleton, Some(units)),
            };
            let answers = batch::unit_frames(
                &unit,
                &skeleton,
                refs,
                &asks,
                &|p| self.file(&p),
                &mut scratch,
            );
            // As `lookup_named`: a DWARF 5 skeleton has no DW_AT_language, its split unit
            // does.
            let lang = match &split {
                Some(_) => entry.lang.or_else(|| unit_language(&unit)),
                None => entry.lang,
            };
            for (&(_, k), answer) in group.iter().zip(answers) {
                let Ok(frames) = answer else {
                    left.push(k);
                    continue;
                };
                found(
                    k,
                    self.symbolized(&unit, lang, addrs[k], &frames, symbol_at),
                );
            }
            // Done with this unit's DIEs and rows: on a big file, keeping every page read
            // resident doubled the peak memory of a big request.
            for part in batch::unit_bytes(&self.dwarf, &parsed) {
                self.backing.release(part);
            }
        }
        left
    }

    /// The split unit of the skeleton `skeleton` (the `index`th of `units`), as addr2line
    /// finds and prepares it (`ResUnit::dwarf_and_unit`); `None` when not found.
    fn split_unit(&self, index: usize, skeleton: &gimli::Unit<R>) -> Option<Rc<SplitUnit>> {
        if let Some(known) = self.split_units.borrow().get(&index) {
            return known.clone();
        }
        let found = (|| {
            let path = match skeleton.dwo_name().ok()? {
                Some(v) => Some(self.dwarf.attr_string(skeleton, v).ok()?),
                None => None,
            };
            let load = SplitDwarfLoad {
                dwo_id: skeleton.dwo_id?,
                comp_dir: skeleton.comp_dir.clone(),
                path,
                parent: self.dwarf.clone(),
            };
            let dwarf = self.split.load(&load, &self.backing)?;
            let header = dwarf.units().next().ok()??;
            let mut unit = dwarf.unit(header).ok()?;
            unit.copy_relocated_attributes(skeleton);
            Some(Rc::new(SplitUnit { dwarf, unit }))
        })();
        self.split_units.borrow_mut().insert(index, found.clone());
        found
    }

    /// The answer from an address's frames, innermost first, as addr2line gives them.
    fn symbolized(
        &self,
        unit: &gimli::UnitRef<'_, R>,
        language: Option<gimli::DwLang>,
        addr: u64,
        frames: &[Frame],
        symbol_at: &dyn Fn(u64) -> Option<Text>,
    ) -> Option<Found> {
        // Borrowed, not cloned: a frame's name is read once or twice per address.
        fn named(f: &Frame, language: Option<gimli::DwLang>) -> Option<Named<'_>> {
            f.name.as_ref().map(|name| Named { name, language })
        }
        let outer = frames.last()?;
        // No subprogram, a line row (addr2line's frame without a function).
        let Some(die) = outer.die else {
            return Some(Found::Line {
                file: outer.file.clone()?,
                line: outer.line,
            });
        };
        let (entry, size, part_start) = function_extent(unit, die, addr)?;
        let function = match named(outer, language) {
            // A C++ function's symbol is mangled unless it is `extern "C"`: either way
            // the symbol is the name (llvm-symbolizer's answer too).
            Some(n) if self.unqualified(&n) => symbol_at(entry)
                .or_else(|| {
                    self.qualified
                        .qualified(unit, die)
                        .filter(|q| !q.is_empty())
                })
                .or_else(|| self.name(&n))?,
            Some(n) => self.name(&n).or_else(|| symbol_at(entry))?,
            None => symbol_at(entry)?,
        };
        let function_offset = if addr >= entry {
            addr - entry
        } else {
            addr - part_start
        };
        let inlines = frames[..frames.len() - 1]
            .iter()
            .map(|f| InlineFrame {
                // Inlined functions keep their DWARF name, qualified or not: with
                // abstract linkage names their origins still carry one, and
                // llvm-symbolizer gives the short name where none is.
                function: named(f, language).and_then(|n| self.name(&n)),
                file: f.file.clone(),
                line: f.line,
            })
            .collect();
        Some(Found::Function(Symbolized {
            function,
            function_offset,
            function_size: Some(size),
            file: outer.file.clone(),
            line: outer.line,
            inlines,
        }))
    }
}

/// What DWARF says of an address.
pub enum Found {
    /// A subprogram holds it: the function, its inline chain, file and line.
    Function(Symbolized),
    /// No subprogram does, a line row does: code the compiler described by lines alone
    /// (an assembly file's functions, code folded into one whose DIE is elsewhere). The
    /// function is the symbol table's, the file and line these (llvm-symbolizer's answer).
    Line { file: Text, line: Option<u32> },
}

impl Found {
    /// `function` (the symbol table's answer) with this file and line if it has none.
    pub fn or_lines_of(self, function: Option<Symbolized>) -> Option<Symbolized> {
        match self {
            Found::Function(s) => Some(s),
            Found::Line { file, line } => function.map(|f| Symbolized {
                file: f.file.or(Some(file)),
                line: f.line.or(line),
                ..f
            }),
        }
    }
}

/// A frame's raw name and its unit's language (addr2line's `FunctionName`, borrowed).
struct Named<'a> {
    name: &'a R,
    language: Option<gimli::DwLang>,
}

/// One frame of an address, innermost first: the subprogram's or inlined call's DIE, its
/// raw name, and where the address (innermost) or the inner call (outer frames) is.
struct Frame {
    die: Option<gimli::UnitOffset<usize>>,
    name: Option<R>,
    file: Option<Text>,
    line: Option<u32>,
}

impl DwarfResolver {
    /// The demangled name; by the unit's language, else by the name's shape (Objective-C++
    /// units, for one, carry Itanium names that the language alone does not announce).
    fn name(&self, name: &Named<'_>) -> Option<Text> {
        let raw = name.name.slice();
        // An empty name (a zeroed `.debug_str`) is none: the symbol table's is used.
        if raw.is_empty() {
            return None;
        }
        let at = (raw.as_ptr() as usize, raw.len());
        if let Some(t) = self.names_at.borrow().get(&at) {
            return Some(t.clone());
        }
        if let Some(t) = self.names.borrow().get(raw) {
            self.names_at.borrow_mut().insert(at, t.clone());
            return Some(t.clone());
        }
        let text = String::from_utf8_lossy(raw);
        let demangled: Text = name
            .language
            .and_then(|lang| addr2line::demangle(&text, lang))
            .unwrap_or_else(|| super::demangle::demangle(&text))
            .into();
        self.names
            .borrow_mut()
            .insert(raw.into(), demangled.clone());
        self.names_at.borrow_mut().insert(at, demangled.clone());
        Some(demangled)
    }

    /// A C++ name that is not a linkage name: the DWARF had none anywhere on the
    /// subprogram's chain (abstract linkage names), so it lacks its scopes.
    fn unqualified(&self, name: &Named<'_>) -> bool {
        names::is_cplusplus(name.language)
            && name
                .name
                .to_slice()
                .is_ok_and(|raw| !names::is_mangled(&raw))
    }

    fn file(&self, path: &str) -> Text {
        if let Some(t) = self.files.borrow().get(path) {
            return t.clone();
        }
        let t: Text = path.into();
        self.files.borrow_mut().insert(path.into(), t.clone());
        t
    }
}

/// The `DW_AT_language` of a unit's root DIE.
fn unit_language(unit: &gimli::UnitRef<'_, R>) -> Option<gimli::DwLang> {
    let mut entries = unit.entries();
    let root = entries.next_dfs().ok()??;
    match root.attr_value(gimli::DW_AT_language)? {
        gimli::AttributeValue::Language(l) => Some(l),
        _ => None,
    }
}

/// The entry address, total size, and start of the range holding `addr`, of the
/// subprogram DIE at `die`.
fn function_extent(
    unit: &gimli::UnitRef<'_, R>,
    die: gimli::UnitOffset<usize>,
    addr: u64,
) -> Option<(u64, u64, u64)> {
    let entry = unit.entry(die).ok()?;
    let mut ranges = unit.die_ranges(&entry).ok()?;
    let mut first = None;
    let mut size = 0u64;
    let mut holding = None;
    while let Ok(Some(r)) = ranges.next() {
        if r.end <= r.begin {
            continue;
        }
        first.get_or_insert(r.begin);
        size += r.end - r.begin;
        if r.begin <= addr && addr < r.end {
            holding = Some(r.begin);
        }
    }
    let low_pc = entry
        .attr_value(gimli::DW_AT_low_pc)
        .and_then(|v| unit.attr_address(v).ok().flatten());
    let entry_pc = low_pc.or(first)?;
    Some((entry_pc, size, holding.unwrap_or(entry_pc)))
}

#[cfg(test)]
use testing::{READER_FIXTURES, fixture_dwarf};
#[cfg(test)]
mod testing;

//! What ELF, Mach-O and PE files have in common once parsed: an image base, the ranges
//! that hold code, DWARF (ELF, Mach-O), and a table of functions (symbols, unwind tables;
//! a PE without its PDB: exports bounded by `.pdata`).

use std::sync::atomic::{AtomicU8, Ordering};

use super::dwarf::edges::NoEdges;
use super::dwarf::{DwarfResolver, Found};
use super::fasthash::Fast;
use super::funcs::FunctionTable;
use super::types::{LoadError, LoadErrorKind, Symbolized, Text};

/// Test and fuzz hook, not an option: every DWARF address through addr2line alone, never
/// the batch path (`src/resolve/dwarf/batch/`), which `tests/batch.rs` checks against it
/// (same answers, slower on big requests). Set by `PROFILER_SYMBOL_SERVER_ONE_BY_ONE` in
/// the environment, read once per process, and said on stderr when set (the test checks
/// that it took effect). The `batch` fuzz target compares the two paths in one process
/// through [`set_one_by_one`].
fn one_by_one() -> bool {
    match ONE_BY_ONE.load(Ordering::Relaxed) {
        UNREAD => {
            let set = std::env::var_os("PROFILER_SYMBOL_SERVER_ONE_BY_ONE").is_some();
            if set {
                crate::log::elog!(
                    "PROFILER_SYMBOL_SERVER_ONE_BY_ONE: every DWARF address through addr2line \
                     alone (a test hook)"
                );
            }
            ONE_BY_ONE.store(if set { ON } else { OFF }, Ordering::Relaxed);
            set
        }
        state => state == ON,
    }
}

const UNREAD: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
static ONE_BY_ONE: AtomicU8 = AtomicU8::new(UNREAD);

/// For the fuzzer: [`one_by_one`] from now on, in this process.
pub fn set_one_by_one(on: bool) {
    ONE_BY_ONE.store(if on { ON } else { OFF }, Ordering::Relaxed);
}

/// What the DWARF says of an address, for [`NativeModule::lookup_at`].
enum DwarfAnswer {
    /// The batch path's answer (`None`: nothing in the DWARF there).
    Batch(Option<Found>),
    /// Not known yet: addr2line is asked.
    Ask,
}

pub struct NativeModule {
    /// The file the debug information came from (a separate debug file, a dSYM's DWARF
    /// file, or the binary itself).
    pub debug_file: std::path::PathBuf,
    /// Module offsets are relative to this address (first `PT_LOAD`, `__TEXT` vmaddr, PE
    /// image base).
    pub base: u64,
    /// Where code lives: no function is answered outside, whatever stale DWARF of
    /// discarded code (placed at address 0 by the linker) may claim.
    pub code: Vec<(u64, u64)>,
    pub dwarf: Option<DwarfResolver>,
    /// Functions from symbols and unwind tables: the fallback where DWARF has nothing.
    pub symbols: FunctionTable,
    /// A Mach-O linked without dsymutil: the objects its debug map names.
    pub debug_map: Option<super::macho::oso::DebugMap>,
    /// The symbols carry no size (Mach-O, PE exports): each reaches to the next function start,
    /// over any padding. Where DWARF describes the code, its units say where none is.
    pub unsized_symbols: bool,
    /// Companion files found but rejected (e.g. a `.gnu_debuglink` target whose CRC
    /// differs): reported in `module_errors` although the module itself was found.
    pub warnings: Vec<LoadError>,
    /// The symbol table's demangled names by function entry, as DWARF lookups ask them.
    pub symbol_names: SymbolNames,
}

/// [`NativeModule::symbol_at`]'s answers. A C++ function whose DWARF has no linkage name
/// is named by its symbol, and a big request asks that for most of its addresses, a
/// function's addresses each again: demangled per call, it was a fifth of the
/// instructions of a cold 100 000-address request at libxul's size.
#[derive(Default)]
pub struct SymbolNames {
    by_entry: std::cell::RefCell<std::collections::HashMap<u64, Option<Text>, Fast>>,
    /// The texts' bytes, counted in the module's cost (the cache's bound).
    bytes: std::cell::Cell<u64>,
}

impl SymbolNames {
    /// Bytes held, for the module's cost and its names' total (the store's bounds).
    pub fn cost(&self) -> u64 {
        self.bytes.get()
    }

    /// The name at `entry`: `name()` the first time, kept for the next.
    fn get_or_insert(&self, entry: u64, name: impl FnOnce() -> Option<Text>) -> Option<Text> {
        if let Some(known) = self.by_entry.borrow().get(&entry) {
            return known.clone();
        }
        let name = name();
        // The key and the map's slot besides the text.
        let size = 32 + name.as_ref().map_or(0, |n| n.len() as u64);
        self.bytes.set(self.bytes.get() + size);
        self.by_entry.borrow_mut().insert(entry, name.clone());
        name
    }
}

/// The DWARF if it could be read. If not (sections past the module's decompression
/// `budget`, corrupt compressed data or DWARF), a warning in `warnings` says why and the
/// module answers from its symbol and unwind tables: a module is not lost for its debug
/// sections.
pub fn readable_dwarf(
    dwarf: Result<Option<DwarfResolver>, super::section::DebugDataError>,
    debug_file: &std::path::Path,
    warnings: &mut Vec<LoadError>,
) -> Option<DwarfResolver> {
    let e = match dwarf {
        Ok(d) => return d,
        Err(e) => e,
    };
    warnings.push(LoadError::new(e.kind(), debug_file, e));
    None
}

impl NativeModule {
    /// Why the module's debug info could not be read (it answers from its symbol tables):
    /// the warning [`readable_dwarf`] left.
    pub fn unreadable_dwarf(&self) -> Option<&LoadError> {
        self.warnings.iter().find(|w| {
            matches!(
                w.kind,
                LoadErrorKind::DecompressionLimit | LoadErrorKind::ParseError
            )
        })
    }

    pub fn cost(&self) -> u64 {
        self.dwarf.as_ref().map_or(0, |d| d.cost())
            + self.debug_map.as_ref().map_or(0, |m| m.cost())
            + self.symbols.cost()
            + self.symbol_names.cost()
    }

    pub fn comp_dir(&self, offset: u64) -> Option<String> {
        let addr = self.base.checked_add(offset)?;
        if let Some(m) = &self.debug_map {
            return m.comp_dir(addr);
        }
        self.dwarf.as_ref()?.comp_dir(addr)
    }

    /// The demangled name of the symbol starting at `entry` (for a function whose DWARF
    /// has no linkage name, or no name).
    fn symbol_at(&self, entry: u64) -> Option<Text> {
        self.symbol_names.get_or_insert(entry, || {
            let (name, start, _, _) = self.symbols.find(entry)?;
            let name = name?;
            (start == entry).then(|| super::demangle::demangle(name).into())
        })
    }

    pub fn lookup(&self, offset: u64) -> Option<Symbolized> {
        let addr = self.base.checked_add(offset)?;
        if !self.in_code(addr) {
            return None;
        }
        self.lookup_at(addr, DwarfAnswer::Ask)
    }

    /// As [`Self::lookup`] for sorted offsets (DWARF is read once for all of them), each
    /// answer handed to `found` with its offset's index as soon as it is known.
    pub fn lookup_each(&self, offsets: &[u64], found: &mut dyn FnMut(usize, Option<Symbolized>)) {
        let addrs: Vec<(usize, u64)> = offsets
            .iter()
            .enumerate()
            .filter_map(|(i, &o)| Some((i, self.base.checked_add(o).filter(|&a| self.in_code(a))?)))
            .collect();
        let batch = !one_by_one();
        let mut left: Vec<usize> = (0..addrs.len()).collect();
        if let Some(d) = self.dwarf.as_ref().filter(|_| batch) {
            let wanted: Vec<u64> = addrs.iter().map(|a| a.1).collect();
            left = d.lookup_batch(&wanted, &|entry| self.symbol_at(entry), &mut |k, known| {
                found(
                    addrs[k].0,
                    self.lookup_at(addrs[k].1, DwarfAnswer::Batch(known)),
                )
            });
        }
        for k in left {
            found(addrs[k].0, self.lookup_at(addrs[k].1, DwarfAnswer::Ask));
        }
        let mut asked = addrs.iter().map(|a| a.0).peekable();
        for i in 0..offsets.len() {
            if asked.peek() == Some(&i) {
                asked.next();
            } else {
                found(i, None);
            }
        }
    }

    /// Steps of [`Self::edges_step`], or `None` for a module the prepared index does not
    /// keep: one without DWARF (its symbol tables load in milliseconds), with symbols
    /// that have no size or a debug map (Mach-O: answers there also depend on the
    /// objects' files).
    pub fn edge_steps(&self) -> Option<usize> {
        let d = self.dwarf.as_ref()?;
        (!self.unsized_symbols && self.debug_map.is_none()).then(|| 1 + d.unit_count())
    }

    /// Pushes the module offsets where an answer may change, for step `k`: the code
    /// ranges, symbols and unit ranges first, then one DWARF unit per step.
    pub fn edges_step(&self, k: usize, out: &mut Vec<u64>) -> Result<(), NoEdges> {
        let Some(d) = &self.dwarf else {
            return Err(NoEdges::Unreadable);
        };
        let mut addrs = Vec::new();
        if k == 0 {
            for &(s, e) in &self.code {
                addrs.push(s);
                addrs.push(e);
            }
            self.symbols.edges(&mut addrs);
            d.unit_range_edges(&mut addrs);
        } else {
            d.unit_edges(k - 1, &mut addrs)?;
        }
        // Only what a lookup can reach: at or past the base, in code.
        out.extend(
            addrs
                .into_iter()
                .filter(|&a| {
                    self.code.is_empty() || self.code.iter().any(|&(s, e)| s <= a && a <= e)
                })
                .filter_map(|a| a.checked_sub(self.base)),
        );
        Ok(())
    }

    /// See [`super::Module::part_of`].
    pub fn part_of(&self, offset: u64) -> Option<usize> {
        self.dwarf.as_ref()?.unit_of(self.base.checked_add(offset)?)
    }

    fn in_code(&self, addr: u64) -> bool {
        self.code.is_empty() || self.code.iter().any(|&(s, e)| s <= addr && addr < e)
    }

    /// `dwarf`: the DWARF answer when the batch path gave it. An empty file name (a
    /// zeroed string section) is no file: answered as none, never as `""`.
    fn lookup_at(&self, addr: u64, dwarf: DwarfAnswer) -> Option<Symbolized> {
        let mut s = self.lookup_any(addr, dwarf)?;
        if s.function.is_empty() {
            return None;
        }
        s.file = s.file.filter(|f| !f.is_empty());
        for i in &mut s.inlines {
            i.file = i.file.take().filter(|f| !f.is_empty());
            i.function = i.function.take().filter(|f| !f.is_empty());
        }
        Some(s)
    }

    fn lookup_any(&self, addr: u64, dwarf: DwarfAnswer) -> Option<Symbolized> {
        let mut lines = None;
        if let Some(d) = &self.dwarf {
            let found = match dwarf {
                DwarfAnswer::Batch(known) => known,
                DwarfAnswer::Ask => d.lookup_named(addr, &|entry| self.symbol_at(entry)),
            };
            match found {
                Some(Found::Function(s)) => return Some(s),
                // Line rows without a subprogram: for the symbol table's function. Not
                // where symbols have no size: they reach over the padding after a
                // function, which its last row may cover.
                Some(rows @ Found::Line { .. }) if !self.unsized_symbols => lines = Some(rows),
                _ => {}
            }
            if self.unsized_symbols && d.covers(addr) {
                return None;
            }
            // A symbol whose function DWARF describes ends where DWARF says, not at the
            // next symbol.
            if self.unsized_symbols
                && let Some((_, start, _, _)) = self.symbols.find(addr)
                && let Some(f) = d.lookup(start)
                && let Some(size) = f.function_size
                && addr >= (start - f.function_offset).saturating_add(size)
            {
                return None;
            }
        }
        if let Some(s) = self.debug_map.as_ref().and_then(|m| m.lookup(addr)) {
            return Some(s);
        }
        let symbol = self.symbols.lookup(addr);
        match lines {
            Some(rows) => rows.or_lines_of(symbol),
            None => symbol,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each entry's name is made once (the demangling it stands for was a fifth of a big
    /// request), a missing one too, and what is kept counts in the module's bounds.
    #[test]
    fn a_symbol_name_is_made_once_per_entry_and_counted() {
        let names = SymbolNames::default();
        let made = std::cell::Cell::new(0);
        let make = |text: Option<&str>| {
            made.set(made.get() + 1);
            text.map(Text::from)
        };
        for _ in 0..3 {
            let got = names.get_or_insert(0x10, || make(Some("js::gc::Cell::isTenured()")));
            assert_eq!(got.as_deref(), Some("js::gc::Cell::isTenured()"));
            assert_eq!(names.get_or_insert(0x20, || make(None)), None);
        }
        assert_eq!(made.get(), 2);
        let cost = names.cost();
        assert!(cost >= "js::gc::Cell::isTenured()".len() as u64, "{cost}");
        names.get_or_insert(0x10, || make(Some("other")));
        assert_eq!(names.cost(), cost);
    }
}

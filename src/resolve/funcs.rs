//! Function boundaries without debug info: the symbols of a binary merged with the
//! function ranges of its unwind tables (ELF `.eh_frame`/`.debug_frame`, PE `.pdata`) and
//! function-start lists (Mach-O `LC_FUNCTION_STARTS`). An address inside such a function
//! gets its symbol's name, or `fun_<module offset of the start>` when no symbol starts
//! there; an address no function covers (padding, data) gets nothing.

pub use super::range::Range;
use object::{Object, ObjectSection, SectionKind};

use super::demangle::demangle;
use super::pace;
use super::symnames::{Names, Sym};
use super::types::{LoadError, LoadErrorKind, Symbolized, Text};

/// `[start, end)` of each code section. A separate debug file (`objcopy
/// --only-keep-debug`, debuginfod's `debuginfo`) keeps the section headers with no bytes
/// (`SHT_NOBITS`): its code sections are found by their executable flag, so that a
/// size-0 symbol like `_init` still ends with its section. Every format's code ranges come
/// from here; a section whose end overflows the address space is not code.
pub fn code_sections(file: &object::File<'_>) -> Vec<(u64, u64)> {
    file.sections()
        .filter(|s| {
            s.kind() == SectionKind::Text
                || matches!(s.flags(), object::SectionFlags::Elf { sh_flags, .. }
                    if sh_flags & object::elf::SHF_EXECINSTR != object::elf::SectionFlags(0))
        })
        .filter(|s| s.address() != 0 || s.size() != 0)
        .filter_map(|s| Some((s.address(), s.address().checked_add(s.size())?)))
        .collect()
}

/// The functions of an ELF file: `symbols` (its `.symtab`/`.dynsym`, a separate debug
/// file's), the MiniDebugInfo's symbols, PLT stubs, and `.eh_frame`/`.debug_frame` ranges.
pub async fn elf_table(
    file: &object::File<'_>,
    base: u64,
    mut symbols: Vec<Sym>,
    names: &mut Names,
    path: &std::path::Path,
    warnings: &mut Vec<LoadError>,
) -> FunctionTable {
    match super::elf::minidebuginfo::symbols(file, names) {
        Ok(more) => symbols.extend(more),
        Err(e) => warnings.push(LoadError::new(LoadErrorKind::MiniDebugInfo, path, e)),
    }
    super::pace::pause().await;
    symbols.extend(super::elf::plt::stubs(file, names));
    // `DT_INIT`/`DT_FINI` name their functions even where `.symtab` is stripped and no
    // FDE covers them (crti's `_init` has none).
    for (addr, name) in init_fini(file) {
        if !symbols.iter().any(|s| s.0 == addr) {
            symbols.push((addr, 0, names.intern(name)));
        }
    }
    super::pace::pause().await;
    let ranges = super::unwind::elf_ranges(file).await;
    // The entry point is a function even where nothing else says so (the dynamic
    // loader's assembly `_start` has neither symbol nor unwind entry once stripped).
    let entry = Some(file.entry()).filter(|&e| e != 0).into_iter().collect();
    FunctionTable::new_paced(base, symbols, ranges, entry, &code_sections(file)).await
}

/// The `DT_INIT` and `DT_FINI` addresses of `.dynamic`.
fn init_fini(file: &object::File<'_>) -> Vec<(u64, &'static str)> {
    let Some(data) = file.section_by_name(".dynamic").and_then(|s| s.data().ok()) else {
        return Vec::new();
    };
    let word = if file.is_64() { 8 } else { 4 };
    let read = |b: &[u8]| -> u64 {
        let mut v = [0u8; 8];
        if file.is_little_endian() {
            v[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(v)
        } else {
            v[8 - b.len()..].copy_from_slice(b);
            u64::from_be_bytes(v)
        }
    };
    let mut out = Vec::new();
    for entry in data.chunks_exact(2 * word) {
        let (tag, value) = (read(&entry[..word]), read(&entry[word..]));
        match tag {
            0 => break, // DT_NULL
            12 if value != 0 => out.push((value, "_init")),
            13 if value != 0 => out.push((value, "_fini")),
            _ => {}
        }
    }
    out
}

/// The functions of a PE image without its PDB: exports (unsized), `.pdata` ranges, and
/// for code `.pdata` does not list (leaf functions), ranges found by the padding between
/// functions, a NOP-padded start counting only where something refers to it.
pub fn pe_table(
    file: &object::File<'_>,
    data: &[u8],
    exports: Vec<Sym>,
    code: &[(u64, u64)],
) -> FunctionTable {
    let mut ranges = super::unwind::pe_ranges(data);
    let mut listed: Vec<(u64, u64)> = ranges.iter().map(|r| (r.start, r.end)).collect();
    listed.sort_unstable();
    let inside_listed = |a: u64| {
        let i = listed.partition_point(|r| r.0 <= a);
        i > 0 && a < listed[i - 1].1
    };
    let mut known: Vec<u64> = exports.iter().map(|e| e.0).collect();
    known.extend(listed.iter().map(|r| r.0));
    known.push(file.entry());
    // Sections of a corrupt image may all claim the same bytes: what is read in all is
    // bounded by twice the file (a real image's sections do not overlap).
    let mut budget = data.len().saturating_mul(2);
    data_pointers(file, code, &mut budget, &mut known);
    known.sort_unstable();
    known.dedup();
    let mut listed_ends: Vec<u64> = listed.iter().map(|r| r.1).collect();
    listed_ends.sort_unstable();
    let mut scan = super::codescan::Scan::default();
    let mut sections = Vec::new();
    let bitness = if file.is_64() { 64 } else { 32 };
    let mut budget = data.len().saturating_mul(2);
    for section in file.sections().filter(|s| s.kind() == SectionKind::Text) {
        if let Ok(bytes) = section.data()
            && let Some(left) = budget.checked_sub(bytes.len())
            && let Some(end) = section.address().checked_add(bytes.len() as u64)
        {
            budget = left;
            scan.add_section(bytes, section.address(), bitness);
            sections.push((section.address(), end));
        }
    }
    let found = scan.ranges(&sections, &known, &listed_ends);
    ranges.extend(found.into_iter().filter(|r| !inside_listed(r.start)));
    FunctionTable::new(
        file.relative_address_base(),
        exports,
        ranges,
        Vec::new(),
        code,
    )
}

/// Code addresses stored in the image's data (vtables, callback tables): function starts.
fn data_pointers(
    file: &object::File<'_>,
    code: &[(u64, u64)],
    budget: &mut usize,
    into: &mut Vec<u64>,
) {
    let mut code = code.to_vec();
    code.sort_unstable();
    let in_code = |a: u64| {
        let i = code.partition_point(|r| r.0 <= a);
        i > 0 && a < code[i - 1].1
    };
    let wide = file.is_64();
    for section in file.sections().filter(|s| s.kind() != SectionKind::Text) {
        let Ok(bytes) = section.data() else { continue };
        let Some(left) = budget.checked_sub(bytes.len()) else {
            return;
        };
        *budget = left;
        let size = if wide { 8 } else { 4 };
        for w in bytes.chunks_exact(size) {
            let v = if wide {
                u64::from_le_bytes(w.try_into().unwrap_or([0; 8]))
            } else {
                u64::from(u32::from_le_bytes(w.try_into().unwrap_or([0; 4])))
            };
            if in_code(v) {
                into.push(v);
            }
        }
    }
}

/// A function before merging: start, end if known, and the primary of a part.
type Candidate = (u64, Option<u64>, Option<(u64, u64)>);

/// One symbol per address, by address: the sized symbol first, then the shorter name (a
/// real symbol over an alias like `foo@@V1`), then the first in byte order, then the
/// first given. Names are held once per module: one name is one pointer, compared
/// without reading it.
async fn one_per_start(syms: Vec<Sym>) -> Vec<Sym> {
    let keys: Vec<u64> = syms.iter().map(|s| s.0).collect();
    let order = pace::order_by_key(&keys).await;
    let better = |a: &Sym, b: &Sym| {
        b.1.cmp(&a.1)
            .then(a.2.len().cmp(&b.2.len()))
            .then_with(|| {
                if Text::ptr_eq(&a.2, &b.2) {
                    std::cmp::Ordering::Equal
                } else {
                    a.2.cmp(&b.2)
                }
            })
            .is_lt()
    };
    let mut best = Vec::with_capacity(order.len());
    for (n, run) in order.chunk_by(|&a, &b| keys[a] == keys[b]).enumerate() {
        if n % 16384 == 16383 {
            pace::pause().await;
        }
        let mut pick = run[0];
        for &i in &run[1..] {
            if better(&syms[i], &syms[pick]) {
                pick = i;
            }
        }
        best.push(pick);
    }
    let mut slots: Vec<Option<Sym>> = syms.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(best.len());
    for (n, &i) in best.iter().enumerate() {
        if n % 16384 == 16383 {
            pace::pause().await;
        }
        out.extend(slots[i].take());
    }
    out
}

#[derive(Debug, Clone)]
struct Entry {
    start: u64,
    end: u64,
    name: Option<Text>,
    /// For a part of a function: the function's start and size.
    primary: Option<(u64, u64)>,
}

/// Functions sorted by start, never overlapping. Built once per module (it is part of
/// the cached module).
#[derive(Debug, Default)]
pub struct FunctionTable {
    /// Module offsets are addresses minus this (for `fun_<offset>` names).
    base: u64,
    entries: Vec<Entry>,
    /// Bytes of the names the entries hold (each name once).
    name_bytes: u64,
}

impl FunctionTable {
    /// `symbols`: (address, size, raw name), size 0 when unknown (Mach-O symbols, PE
    /// exports, zero-size ELF symbols). `ranges`: from unwind tables. `starts`: function
    /// starts without ends (each reaches to the next start). `code`: the `[start, end)` of
    /// each code section; nothing reaches past the end of its section.
    pub fn new(
        base: u64,
        symbols: Vec<Sym>,
        ranges: Vec<Range>,
        starts: Vec<u64>,
        code: &[(u64, u64)],
    ) -> FunctionTable {
        pace::finish(Self::new_paced(base, symbols, ranges, starts, code))
    }

    /// [`Self::new`], pausing in its sorts and every few thousand entries
    /// ([`super::pace`]).
    pub async fn new_paced(
        base: u64,
        symbols: Vec<Sym>,
        ranges: Vec<Range>,
        starts: Vec<u64>,
        code: &[(u64, u64)],
    ) -> FunctionTable {
        let syms = one_per_start(symbols.into_iter().filter(|s| !s.2.is_empty()).collect()).await;
        // The symbol at an address. Both callers below ask in nearly ascending order:
        // looked for just after the last answer first, over the addresses alone (a
        // binary search of every symbol per start was most of this function's time on a
        // library of 500 000 symbols).
        let addrs: Vec<u64> = syms.iter().map(|s| s.0).collect();
        let last = std::cell::Cell::new(0usize);
        let name_at = |addr: u64| -> Option<&Sym> {
            let from = last.get();
            let near = addrs.get(from).is_some_and(|&a| a <= addr)
                && addrs.get(from + 16).is_none_or(|&a| a >= addr);
            let i = if near {
                let to = (from + 17).min(addrs.len());
                from + addrs[from..to].partition_point(|&a| a < addr)
            } else {
                addrs.partition_point(|&a| a < addr)
            };
            last.set(i.min(addrs.len().saturating_sub(1)));
            (addrs.get(i) == Some(&addr)).then(|| &syms[i])
        };

        // (start, end if known, primary); sorted and merged below.
        let mut cand: Vec<Candidate> = Vec::new();
        for (i, r) in ranges.iter().enumerate() {
            if i % 16384 == 16383 {
                pace::pause().await;
            }
            if r.end > r.start {
                let sized = name_at(r.start).map(|s| s.1).filter(|&n| n > 0);
                // An ELF symbol's size is the assembler's word; the unwind range only
                // bounds symbols that have none.
                let end = match (r.primary, sized) {
                    (None, Some(size)) => r.start.saturating_add(size),
                    _ => r.end,
                };
                cand.push((r.start, Some(end), r.primary));
            }
        }
        for s in &syms {
            let end = (s.1 > 0).then(|| s.0.saturating_add(s.1));
            cand.push((s.0, end, None));
        }
        cand.extend(starts.iter().map(|&s| (s, None, None)));
        // At one start: a known end first, a whole function over a part.
        pace::sort_by(&mut cand, |a, b| {
            a.0.cmp(&b.0)
                .then(b.1.is_some().cmp(&a.1.is_some()))
                .then(a.2.is_some().cmp(&b.2.is_some()))
        })
        .await;
        cand.dedup_by(|b, a| a.0 == b.0);

        let mut entries = Vec::with_capacity(cand.len());
        for (i, &(start, end, primary)) in cand.iter().enumerate() {
            if i % 16384 == 16383 {
                pace::pause().await;
            }
            let section_end = if code.is_empty() {
                u64::MAX
            } else {
                match code.iter().find(|&&(s, e)| s <= start && start < e) {
                    Some(&(_, e)) => e,
                    None => continue, // not code: no function
                }
            };
            let next = cand.get(i + 1).map_or(u64::MAX, |c| c.0);
            // Never reach over a later function start or out of the section.
            let end = end.unwrap_or(u64::MAX).min(next).min(section_end);
            if end <= start {
                continue;
            }
            let named_at = primary.map_or(start, |p| p.0);
            entries.push(Entry {
                start,
                end,
                name: name_at(named_at).map(|s| s.2.clone()),
                primary: primary.map(|(s, e)| (s, e.saturating_sub(s))),
            });
        }
        // Each name counted once (entries share their names): by address, sorted.
        let mut names: Vec<(*const u8, usize)> = entries
            .iter()
            .filter_map(|e| e.name.as_ref())
            .map(|n| (n.as_ptr(), n.len()))
            .collect();
        pace::sort_unstable(&mut names).await;
        names.dedup();
        let name_bytes = names.iter().map(|&(_, len)| len as u64).sum();
        FunctionTable {
            base,
            entries,
            name_bytes,
        }
    }

    /// Bytes of memory the table holds, for the store's cache bound.
    pub fn cost(&self) -> u64 {
        48 * self.entries.len() as u64 + self.name_bytes
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many functions have a name from a symbol.
    pub fn named(&self) -> usize {
        self.entries.iter().filter(|e| e.name.is_some()).count()
    }

    /// Pushes every address where [`Self::find`]'s answer may change: each entry's start
    /// and end, and its function's entry where that lies inside it.
    pub fn edges(&self, out: &mut Vec<u64>) {
        for e in &self.entries {
            out.push(e.start);
            out.push(e.end);
            if let Some((start, size)) = e.primary {
                out.push(start);
                out.push(start.saturating_add(size));
            }
        }
    }

    /// The function holding `addr`: name (raw), start and size.
    pub fn find(&self, addr: u64) -> Option<(Option<&Text>, u64, u64, u64)> {
        let i = self.entries.partition_point(|e| e.start <= addr);
        let e = &self.entries[i.checked_sub(1)?];
        if addr >= e.end {
            return None;
        }
        let (start, size) = e.primary.unwrap_or((e.start, e.end - e.start));
        // A part before its function's entry counts from its own start.
        let from = if addr >= start { start } else { e.start };
        Some((e.name.as_ref(), start, size, addr - from))
    }

    /// Resolves `addr` (an address in the file's own address space).
    pub fn lookup(&self, addr: u64) -> Option<Symbolized> {
        let (name, start, size, offset) = self.find(addr)?;
        let function: Text = match name {
            Some(n) => demangle(n).into(),
            None => format!("fun_{:x}", start.wrapping_sub(self.base)).into(),
        };
        Some(Symbolized {
            function,
            function_offset: offset,
            function_size: Some(size),
            file: None,
            line: None,
            inlines: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator: the same cases every run.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn one_per_start_keeps_what_a_stable_sort_then_dedup_keeps() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let names: Vec<Text> = ["f", "g", "f@@V1", "h", "ab", "b"].map(Text::from).into();
        for n in [0usize, 1, 2, 50, 3000] {
            let syms: Vec<Sym> = (0..n)
                .map(|_| {
                    let r = next(&mut state);
                    (
                        0x1000 + r % 64,
                        (r >> 8) % 3 * 8,
                        names[(r >> 16) as usize % names.len()].clone(),
                    )
                })
                .collect();
            let mut want = syms.clone();
            want.sort_by(|a, b| {
                a.0.cmp(&b.0)
                    .then(b.1.cmp(&a.1))
                    .then(a.2.len().cmp(&b.2.len()))
                    .then(a.2.cmp(&b.2))
            });
            want.dedup_by(|b, a| a.0 == b.0);
            assert_eq!(pace::finish(one_per_start(syms)), want, "{n}");
        }
    }

    fn at(t: &FunctionTable, addr: u64) -> Option<(String, u64, u64)> {
        t.lookup(addr).map(|s| {
            (
                s.function.to_string(),
                s.function_offset,
                s.function_size.unwrap(),
            )
        })
    }

    #[test]
    fn ranges_bound_unsized_symbols_and_name_the_rest() {
        let t = FunctionTable::new(
            0x1000,
            vec![(0x1100, 0, "exp".into()), (0x1300, 0, "zero".into())],
            vec![Range::new(0x1100, 0x1150), Range::new(0x1160, 0x11a0)],
            vec![],
            &[(0x1000, 0x1400)],
        );
        assert_eq!(at(&t, 0x1120), Some(("exp".into(), 0x20, 0x50)));
        assert_eq!(at(&t, 0x1155), None); // padding
        assert_eq!(at(&t, 0x1170), Some(("fun_160".into(), 0x10, 0x40)));
        assert_eq!(at(&t, 0x1300), Some(("zero".into(), 0, 0x100)));
        assert_eq!(at(&t, 0x1400), None);
    }

    #[test]
    fn size_zero_labels_inside_an_unwind_range_end_at_the_next_symbol() {
        // ld.so's stub: one unwind range (or the entry point) over `_start` and
        // `_dl_start_user`, both size-0 labels.
        let t = FunctionTable::new(
            0,
            vec![
                (0x100, 0, "_start".into()),
                (0x108, 0, "_dl_start_user".into()),
                (0x140, 0x10, "next".into()),
            ],
            vec![Range::new(0x100, 0x140)],
            vec![0x100],
            &[(0, 0x200)],
        );
        assert_eq!(at(&t, 0x104), Some(("_start".into(), 4, 8)));
        assert_eq!(at(&t, 0x13f), Some(("_dl_start_user".into(), 0x37, 0x38)));
        assert_eq!(at(&t, 0x140), Some(("next".into(), 0, 0x10)));
    }

    #[test]
    fn a_symbol_never_reaches_over_a_later_start() {
        let t = FunctionTable::new(
            0,
            vec![(0x10, 0x100, "big".into())],
            vec![Range::new(0x40, 0x60)],
            vec![0x80],
            &[(0, 0x110)],
        );
        assert_eq!(at(&t, 0x3f), Some(("big".into(), 0x2f, 0x30)));
        assert_eq!(at(&t, 0x40), Some(("fun_40".into(), 0, 0x20)));
        assert_eq!(at(&t, 0x70), None);
        assert_eq!(at(&t, 0x90), Some(("fun_80".into(), 0x10, 0x90)));
    }

    #[test]
    fn chained_parts_resolve_to_their_function() {
        let p = Some((0x100, 0x140));
        let t = FunctionTable::new(
            0,
            vec![(0x100, 0, "f".into())],
            vec![
                Range::new(0x100, 0x140),
                Range {
                    start: 0x200,
                    end: 0x220,
                    primary: p,
                },
            ],
            vec![],
            &[],
        );
        assert_eq!(at(&t, 0x210), Some(("f".into(), 0x110, 0x40)));
    }
}

//! Many addresses at once. addr2line answers one address at a time from per-unit tables of
//! every function, every inlined call of each function asked, every line row and every
//! file path, built on first use: on a big binary, most of a cold request's time and
//! memory. Here each unit holding asked addresses is read once, its DIEs and its line
//! program, keeping only what those addresses need.
//!
//! The answers are addr2line's: the same unit, function, inline chain and row, found by the
//! same binary searches over the same sorted ranges. Where its choice would depend on the
//! order of equal keys (duplicate ranges), on a split-DWARF or supplementary file, or where
//! its tables would fail to build, the address is left to addr2line (`None`).

use std::num::NonZeroU64;

use gimli::AttributeValue;

use super::lines;
use super::skip::{Cursor, Plans};
use super::{Fast, Frame, R};
use crate::resolve::Text;

type URef<'a> = gimli::UnitRef<'a, R>;
type Off = gimli::UnitOffset<usize>;

/// One compilation unit as addr2line lists it.
pub(super) struct UnitEntry {
    offset: usize,
    pub(super) unit: gimli::Unit<R>,
    pub(super) lang: Option<gimli::DwLang>,
}

/// The units of a file and their address ranges (addr2line's `ResUnits`).
pub(super) struct Units {
    pub(super) units: Vec<UnitEntry>,
    /// `(begin, end, unit)`, sorted by begin.
    ranges: Vec<(u64, u64, usize)>,
    /// The largest end among `ranges[..i]`: whether an earlier range also holds an address.
    ends_before: Vec<u64>,
}

/// Where an address is.
pub(super) enum Cover {
    Nowhere,
    Unit(usize),
    /// Several units' ranges hold it: addr2line tries them in turn.
    Several,
}

#[derive(Default)]
struct RangeAttrs {
    low: Option<u64>,
    high: Option<u64>,
    size: Option<u64>,
    list: Option<gimli::RangeListsOffset<usize>>,
}

impl RangeAttrs {
    #[inline]
    fn take(
        &mut self,
        unit: &URef<'_>,
        name: gimli::DwAt,
        value: AttributeValue<R>,
    ) -> gimli::Result<()> {
        match name {
            gimli::DW_AT_low_pc => match value {
                AttributeValue::Addr(v) => self.low = Some(v),
                AttributeValue::DebugAddrIndex(i) => self.low = Some(unit.address(i)?),
                _ => {}
            },
            gimli::DW_AT_high_pc => match value {
                AttributeValue::Addr(v) => self.high = Some(v),
                AttributeValue::DebugAddrIndex(i) => self.high = Some(unit.address(i)?),
                AttributeValue::Udata(v) => self.size = Some(v),
                _ => {}
            },
            gimli::DW_AT_ranges => self.list = unit.attr_ranges_offset(value)?,
            _ => {}
        }
        Ok(())
    }

    /// Calls `f` with each non-empty range; whether there was one.
    fn each(&self, unit: &URef<'_>, mut f: impl FnMut(u64, u64)) -> gimli::Result<bool> {
        let mut any = false;
        let mut add = |b: u64, e: u64| {
            if b < e {
                f(b, e);
                any = true;
            }
        };
        if let Some(list) = self.list {
            let mut it = unit.ranges(list)?;
            while let Some(r) = it.next()? {
                add(r.begin, r.end);
            }
        } else if let (Some(b), Some(e)) = (self.low, self.high) {
            add(b, e);
        } else if let (Some(b), Some(s)) = (self.low, self.size) {
            add(b, b.wrapping_add(s));
        }
        Ok(any)
    }
}

impl Units {
    /// The same units and ranges as addr2line's context: `DW_AT_ranges`, else
    /// `.debug_aranges`, else low/high pc, else the line program's sequences.
    pub(super) fn parse(dwarf: &gimli::Dwarf<R>) -> gimli::Result<Units> {
        let mut aranges = Vec::new();
        let mut headers = dwarf.debug_aranges.headers();
        while let Some(h) = headers.next()? {
            aranges.push((h.debug_info_offset().0, h.offset()));
        }
        aranges.sort_unstable_by_key(|a| a.0);
        let mut units = Vec::new();
        let mut ranges = Vec::new();
        let mut headers = dwarf.units();
        while let Some(header) = headers.next()? {
            let id = units.len();
            let Some(offset) = header.debug_info_offset() else {
                continue;
            };
            let mut need_range = match header.type_() {
                gimli::UnitType::Type { .. } | gimli::UnitType::SplitType { .. } => continue,
                gimli::UnitType::Partial => false,
                _ => true,
            };
            let Ok(unit) = dwarf.unit(header) else {
                continue;
            };
            let uref = URef::new(dwarf, &unit);
            let mut lang = None;
            if need_range {
                let mut entries = uref.entries_raw(None)?;
                let Some(abbrev) = entries.read_abbreviation()? else {
                    continue;
                };
                let mut attrs = RangeAttrs::default();
                for spec in abbrev.attributes() {
                    let attr = entries.read_attribute(*spec)?;
                    if attr.name() == gimli::DW_AT_language {
                        if let AttributeValue::Language(v) = attr.value() {
                            lang = Some(v);
                        }
                    } else {
                        attrs.take(&uref, attr.name(), attr.value())?;
                    }
                }
                let found = match attrs.list {
                    Some(_) => None,
                    None => aranges.binary_search_by_key(&offset.0, |a| a.0).ok(),
                };
                if let Some(mut i) = found {
                    while i > 0 && aranges[i - 1].0 == offset.0 {
                        i -= 1;
                    }
                    for (_, at) in aranges[i..].iter().take_while(|a| a.0 == offset.0) {
                        let mut entries = dwarf.debug_aranges.header(*at)?.entries();
                        while let Some(e) = entries.next().transpose() {
                            let Ok(e) = e else { continue };
                            if e.length() != 0 {
                                let r = e.range();
                                ranges.push((r.begin, r.end, id));
                                need_range = false;
                            }
                        }
                    }
                }
                if need_range {
                    need_range = !attrs.each(&uref, |b, e| ranges.push((b, e, id)))?;
                }
            }
            if need_range && let Ok(Some(scan)) = scan_lines(&uref, &[], &mut Vec::new()) {
                ranges.extend(scan.sequences.iter().map(|&(b, e)| (b, e, id)));
            }
            units.push(UnitEntry {
                offset: offset.0,
                unit,
                lang,
            });
        }
        ranges.sort_unstable_by_key(|r| r.0);
        let mut ends_before = Vec::with_capacity(ranges.len());
        let mut max = 0;
        for r in &ranges {
            ends_before.push(max);
            max = max.max(r.1);
        }
        Ok(Units {
            units,
            ranges,
            ends_before,
        })
    }

    pub(super) fn cover(&self, addr: u64) -> Cover {
        let i = self.ranges.partition_point(|r| r.0 <= addr);
        if i == 0 || self.ranges[i - 1].1 <= addr {
            // No range starting at or before `addr` holds it unless an earlier, longer one.
            return if self
                .ends_before
                .get(i.wrapping_sub(1))
                .is_some_and(|&e| e > addr)
            {
                Cover::Several
            } else {
                Cover::Nowhere
            };
        }
        if self.ends_before[i - 1] > addr {
            return Cover::Several;
        }
        Cover::Unit(self.ranges[i - 1].2)
    }

    /// The unit holding a `.debug_info` offset (addr2line's `find_offset`).
    fn holding(&self, offset: usize) -> Option<&UnitEntry> {
        match self.units.binary_search_by_key(&offset, |u| u.offset) {
            Ok(_) | Err(0) => None,
            Err(i) => Some(&self.units[i - 1]),
        }
    }
}

/// A line table row: file index and line (0: none).
type Row = (u64, u32);

/// Buffers reused from unit to unit of a batch (growing them for each of thousands of
/// units showed in profiles).
#[derive(Default)]
pub(super) struct Scratch {
    rows: Vec<(u64, u64, u32)>,
    subs: Vec<(u64, u64, usize)>,
    funcs: Vec<Option<usize>>,
    open: Vec<(isize, Option<usize>, usize)>,
    plans: Plans,
    /// Room for `sort_by_depth_and_begin`.
    spare: Vec<(usize, u64, u64, Off)>,
}

/// What a unit's line program says about some addresses.
struct LineScan {
    /// Every sequence's `[start, end)` in program order.
    sequences: Vec<(u64, u64)>,
    /// Per address asked: `(sequence, row)` where its sequence holds it, the row being
    /// `None` when the address precedes the sequence's first row.
    found: Vec<Option<(usize, Option<Row>)>>,
    /// Per address asked: more than one sequence holds it.
    several: Vec<bool>,
}

/// Takes a line program's rows as addr2line's `Lines::parse` does.
struct RowSink<'a> {
    asks: &'a [u64],
    /// The rows of the current sequence: `(address, file, line)`.
    seq: &'a mut Vec<(u64, u64, u32)>,
    scan: LineScan,
    /// Addresses visited over all sequences: once each unless sequences overlap; a file
    /// whose sequences overlap over and over is left to addr2line (sorted lookups).
    visits: usize,
}

impl<'a> RowSink<'a> {
    fn new(asks: &'a [u64], seq: &'a mut Vec<(u64, u64, u32)>) -> RowSink<'a> {
        seq.clear();
        RowSink {
            asks,
            seq,
            scan: LineScan {
                sequences: Vec::new(),
                found: vec![None; asks.len()],
                several: vec![false; asks.len()],
            },
            visits: 0,
        }
    }

    #[inline(always)]
    fn row(&mut self, address: u64, file: u64, line: u64, end: bool) -> gimli::Result<()> {
        let (asks, seq, scan) = (self.asks, &mut *self.seq, &mut self.scan);
        if !end {
            let line = line as u32;
            match seq.last_mut() {
                Some(last) if last.0 == address => (last.1, last.2) = (file, line),
                _ => seq.push((address, file, line)),
            }
            return Ok(());
        }
        let Some(&(start, _, _)) = seq.first() else {
            return Ok(());
        };
        if start < address {
            let id = scan.sequences.len();
            scan.sequences.push((start, address));
            let lo = asks.partition_point(|&a| a < start);
            for (k, &a) in asks.iter().enumerate().skip(lo) {
                if a >= address {
                    break;
                }
                self.visits += 1;
                if self.visits > 8 * asks.len() + 4096 {
                    return Err(gimli::Error::NoEntryAtGivenOffset(0));
                }
                let at = match seq.binary_search_by(|r| r.0.cmp(&a)) {
                    Ok(x) => Some(x),
                    Err(0) => None,
                    Err(x) => Some(x - 1),
                };
                let row = at.map(|x| (seq[x].1, seq[x].2));
                if scan.found[k].is_some() {
                    scan.several[k] = true;
                }
                scan.found[k] = Some((id, row));
            }
        }
        seq.clear();
        Ok(())
    }
}

/// Runs the line program once, as addr2line's `Lines::parse` reads it (rows at one
/// address merged, the last one kept; empty sequences dropped) but keeping only the rows
/// the sorted `asks` fall on. `Ok(None)` when the unit has no line program; `Err` where
/// addr2line's table would fail (bad program or file entry).
fn scan_lines(
    unit: &URef<'_>,
    asks: &[u64],
    seq: &mut Vec<(u64, u64, u32)>,
) -> gimli::Result<Option<LineScan>> {
    let Some(program) = unit.line_program.clone() else {
        return Ok(None);
    };
    let mut sink = RowSink::new(asks, seq);
    match lines::run(program.header(), |a, f, l, e| sink.row(a, f, l, e)) {
        Ok(()) => {
            check_files(unit, program.header())?;
            Ok(Some(sink.scan))
        }
        Err(lines::Stop::Row(e)) => Err(e),
        Err(lines::Stop::Gimli) => {
            // Again from the start, by gimli's rows.
            sink = RowSink::new(asks, sink.seq);
            let mut rows = program.rows();
            while let Some((_, row)) = rows.next_row()? {
                let line = row.line().map_or(0, NonZeroU64::get);
                sink.row(row.address(), row.file_index(), line, row.end_sequence())?;
            }
            // With the files its program defined.
            check_files(unit, rows.header())?;
            Ok(Some(sink.scan))
        }
    }
}

/// addr2line renders every file path of the table and fails the unit if one fails.
fn check_files(unit: &URef<'_>, header: &gimli::LineProgramHeader<R>) -> gimli::Result<()> {
    let mut index = if header.file(0).is_some() { 0 } else { 1 };
    while let Some(file) = header.file(index) {
        if file.directory_index() != 0
            && let Some(dir) = file.directory(header)
        {
            unit.attr_string(dir)?;
        }
        unit.attr_string(file.path_name())?;
        index += 1;
    }
    Ok(())
}

/// addr2line's path for a file index of the unit's line table (`Lines::file`).
fn file_path(unit: &URef<'_>, index: u64) -> Option<String> {
    let header = unit.line_program.as_ref()?.header();
    let Some(file) = header.file(index) else {
        return (index == 0).then(String::new);
    };
    let mut path = match &unit.comp_dir {
        Some(dir) => dir.to_string_lossy().into_owned(),
        None => String::new(),
    };
    if file.directory_index() != 0
        && let Some(dir) = file.directory(header)
    {
        path_push(&mut path, &unit.attr_string(dir).ok()?.to_string_lossy());
    }
    path_push(
        &mut path,
        &unit.attr_string(file.path_name()).ok()?.to_string_lossy(),
    );
    Some(path)
}

fn path_push(path: &mut String, p: &str) {
    let forward = |p: &str| p.starts_with('/') || p.get(1..3) == Some(":/");
    let backward = |p: &str| p.starts_with('\\') || p.get(1..3) == Some(":\\");
    if forward(p) || backward(p) {
        *path = p.to_string();
    } else {
        let sep = if backward(path) { '\\' } else { '/' };
        if !path.is_empty() && !path.ends_with(sep) {
            path.push(sep);
        }
        path.push_str(p);
    }
}

/// A subprogram holding an address asked, and its inlined calls' ranges:
/// `(inline depth, begin, end, DIE)`.
struct Candidate {
    die: Off,
    inlines: Vec<(usize, u64, u64, Off)>,
    /// The `inlines` that share their depth and begin with another (their order is the
    /// sort's choice).
    ambiguous: Ambiguous,
}

/// Ranges whose order among equal keys is the sort's choice, for asking in O(log n)
/// whether an address is in one of them (linkers leave many at a tombstone address such
/// as 0, and a crafted file can have any number).
#[derive(Default)]
struct Ambiguous {
    /// Begins, ascending.
    begins: Vec<u64>,
    /// The largest end among the ranges up to each.
    ends: Vec<u64>,
}

impl Ambiguous {
    /// The ranges `(begin, end)` of `sorted` at `dup`'s indices.
    fn new<T>(sorted: &[T], dup: &[usize], range: impl Fn(&T) -> (u64, u64)) -> Ambiguous {
        let mut r: Vec<(u64, u64)> = dup.iter().map(|&i| range(&sorted[i])).collect();
        r.sort_unstable();
        let mut max = 0;
        let ends = r
            .iter()
            .map(|x| {
                max = max.max(x.1);
                max
            })
            .collect();
        Ambiguous {
            begins: r.iter().map(|x| x.0).collect(),
            ends,
        }
    }

    fn holds(&self, probe: u64) -> bool {
        let k = self.begins.partition_point(|&b| b <= probe);
        k > 0 && self.ends[k - 1] > probe
    }
}

/// An address's answer from its unit: `Some(frames)` (empty: no function), `None`:
/// addr2line decides.
pub(super) type Answer = Option<Vec<Frame>>;

/// The frames of the sorted `asks`, all in `unit` (the only unit holding each).
pub(super) fn unit_frames(
    dwarf: &gimli::Dwarf<R>,
    units: &Units,
    entry: &UnitEntry,
    asks: &[u64],
    intern: &dyn Fn(String) -> Text,
    scratch: &mut Scratch,
) -> Vec<Answer> {
    let unknown = || (0..asks.len()).map(|_| None).collect();
    if entry.unit.dwo_id.is_some() {
        return unknown();
    }
    let unit = URef::new(dwarf, &entry.unit);
    let Ok(cands) = walk(&unit, asks, scratch) else {
        return unknown();
    };
    let Ok(lines) = scan_lines(&unit, asks, &mut scratch.rows) else {
        return unknown();
    };
    let (subs, funcs) = (&scratch.subs, &scratch.funcs);
    // The sequences as addr2line sorts them; equal starts make its order arbitrary.
    let mut sorted: Vec<(u64, u64, usize)> = lines.as_ref().map_or(Vec::new(), |l| {
        l.sequences
            .iter()
            .enumerate()
            .map(|(i, &(b, e))| (b, e, i))
            .collect()
    });
    sorted.sort_unstable_by_key(|s| s.0);
    let seq_dup = Ambiguous::new(&sorted, &duplicated(&sorted, |s| s.0), |s| (s.0, s.1));
    let sub_dup = Ambiguous::new(subs, &duplicated(subs, |s| s.0), |s| (s.0, s.1));
    let mut files: Vec<(u64, Option<Text>)> = Vec::new();
    let mut file_of = |index: u64| -> Option<Text> {
        if let Some((_, f)) = files.iter().find(|f| f.0 == index) {
            return f.clone();
        }
        let f = file_path(&unit, index).map(intern);
        files.push((index, f.clone()));
        f
    };
    // Each DIE read once per unit: many addresses share a function and its inlines.
    let mut dies: std::collections::HashMap<usize, DieInfo, Fast> = Default::default();
    let mut info = |die: Off| -> Option<DieInfo> {
        if let Some(d) = dies.get(&die.0) {
            return Some(*d);
        }
        let d = die_info(units, dwarf, &unit, die).ok()?;
        dies.insert(die.0, d);
        Some(d)
    };
    asks.iter()
        .enumerate()
        .map(|(k, &a)| {
            let f = find(subs, a);
            if sub_dup.holds(a) {
                return None;
            }
            // The line table's row, as `Lines::find_location` finds it.
            let location = match &lines {
                None => None,
                Some(l) => {
                    if l.several[k] || seq_dup.holds(a) {
                        return None;
                    }
                    match find(&sorted, a) {
                        None => None,
                        Some(seq) => match l.found[k] {
                            Some((id, row)) if id == seq => row,
                            _ => return None,
                        },
                    }
                }
            };
            let Some(f) = f else {
                return Some(Vec::new());
            };
            let cand = &cands[funcs[f]?];
            let chain = inline_chain(cand, a)?;
            let mut frames = Vec::with_capacity(chain.len() + 1);
            let mut loc = location.map(|(idx, line)| (file_of(idx), (line != 0).then_some(line)));
            // Innermost first: each frame's place is where the frame inside it was called.
            for &die in chain.iter().rev().chain([&cand.die]) {
                let d = info(die)?;
                let (file, line) = loc.take().unwrap_or((None, None));
                frames.push(Frame {
                    die: Some(die),
                    name: d.name,
                    file,
                    line,
                });
                let call_file = d
                    .call_file
                    .and_then(|i| lines.as_ref().and_then(|_| file_of(i)));
                loc = Some((call_file, (d.call_line != 0).then_some(d.call_line)));
            }
            Some(frames)
        })
        .collect()
}

/// What the range holding `probe` carries, by addr2line's binary search over ranges
/// sorted by begin (which may miss one where ranges overlap, as addr2line does).
fn find<T: Copy>(ranges: &[(u64, u64, T)], probe: u64) -> Option<T> {
    ranges
        .binary_search_by(|r| {
            if probe < r.0 {
                std::cmp::Ordering::Greater
            } else if probe >= r.1 {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .ok()
        .map(|i| ranges[i].2)
}

/// Sorts inlined calls `(depth, begin, end, DIE)` by depth, then begin. They come in DIE
/// order, depths interleaved, and a big Rust function has thousands: a comparison sort
/// of them all was 7 % of a cold 10 000-address request. Grouped by depth first (counting),
/// each depth's calls are already nearly in address order.
fn sort_by_depth_and_begin(
    v: &mut Vec<(usize, u64, u64, Off)>,
    spare: &mut Vec<(usize, u64, u64, Off)>,
) {
    let Some(deepest) = v.iter().map(|r| r.0).max() else {
        return;
    };
    if deepest == 0 || deepest >= v.len() {
        v.sort_unstable_by_key(|r| (r.0, r.1));
        return;
    }
    let mut start = vec![0usize; deepest + 2];
    for r in v.iter() {
        start[r.0 + 1] += 1;
    }
    for d in 1..start.len() {
        start[d] += start[d - 1];
    }
    let bounds = start.clone();
    spare.clear();
    spare.resize(v.len(), v[0]);
    for r in v.iter() {
        spare[start[r.0]] = *r;
        start[r.0] += 1;
    }
    std::mem::swap(v, spare);
    for d in bounds.windows(2) {
        v[d[0]..d[1]].sort_unstable_by_key(|r| r.1);
    }
}

/// Per sorted range: whether another has the same key (their order is the sort's choice).
fn duplicated<T, K: PartialEq>(sorted: &[T], key: impl Fn(&T) -> K) -> Vec<usize> {
    (0..sorted.len())
        .filter(|&i| {
            (i > 0 && key(&sorted[i - 1]) == key(&sorted[i]))
                || (i + 1 < sorted.len() && key(&sorted[i + 1]) == key(&sorted[i]))
        })
        .collect()
}

/// addr2line's `find_inlined_functions`: outermost first. `None` when equal keys make its
/// answer the sort's choice.
fn inline_chain(cand: &Candidate, probe: u64) -> Option<Vec<Off>> {
    let inlines = &cand.inlines;
    if cand.ambiguous.holds(probe) {
        return None;
    }
    let mut chain = Vec::new();
    let mut rest = &inlines[..];
    loop {
        let depth = chain.len();
        let at = rest.binary_search_by(|r| {
            use std::cmp::Ordering::*;
            if r.0 > depth {
                Greater
            } else if r.0 < depth {
                Less
            } else if r.1 > probe {
                Greater
            } else if r.2 <= probe {
                Less
            } else {
                Equal
            }
        });
        match at {
            Ok(i) => {
                chain.push(rest[i].3);
                rest = &rest[i + 1..];
            }
            Err(_) => return Some(chain),
        }
    }
}

/// One pass over the unit's DIEs: every subprogram's ranges (addr2line's `Functions`),
/// and the inlined calls inside those that hold an address asked (its `Function`).
/// Leaves in `scratch` the subprogram ranges `(begin, end, function)` sorted by begin and
/// per function the candidate it is, if it holds an address asked; returns the candidates.
fn walk(unit: &URef<'_>, asks: &[u64], scratch: &mut Scratch) -> gimli::Result<Vec<Candidate>> {
    let holds_ask = |b: u64, e: u64| {
        let i = asks.partition_point(|&a| a < b);
        i < asks.len() && asks[i] < e
    };
    let Scratch {
        subs,
        funcs,
        open,
        plans,
        spare,
        ..
    } = scratch;
    subs.clear();
    funcs.clear();
    let mut cands: Vec<Candidate> = Vec::new();
    // Open subprograms and inlined calls: (depth, the candidate and inline depth of
    // what is below it).
    open.clear();
    let mut context: (Option<usize>, usize) = (None, 0);
    plans.build(&unit.header, &unit.abbreviations);
    let mut cursor = Cursor::new(unit)?;
    // Filled only for the DIEs `wanted` picks, emptied after each.
    let mut attrs = RangeAttrs::default();
    while !cursor.is_empty() {
        let depth = cursor.depth();
        while open.last().is_some_and(|o| o.0 >= depth) {
            open.pop();
            context = open.last().map_or((None, 0), |o| (o.1, o.2));
        }
        let offset = cursor.offset();
        // Inlined calls matter only inside a subprogram holding an address asked.
        let wanted = |tag| {
            tag == gimli::DW_TAG_subprogram
                || (tag == gimli::DW_TAG_inlined_subroutine && context.0.is_some())
        };
        let tag = cursor.next(plans, wanted, &mut |n, v| attrs.take(unit, n, v))?;
        match (tag, context) {
            (Some(gimli::DW_TAG_subprogram), _) => {
                let index = funcs.len();
                let mut asked = false;
                let has = attrs.each(unit, |b, e| {
                    subs.push((b, e, index));
                    asked |= holds_ask(b, e);
                })?;
                let mut cand = None;
                if has {
                    if asked {
                        cand = Some(cands.len());
                        cands.push(Candidate {
                            die: offset,
                            inlines: Vec::new(),
                            ambiguous: Ambiguous::default(),
                        });
                    }
                    funcs.push(cand);
                }
                context = (cand, 0);
                open.push((depth, context.0, context.1));
                attrs = RangeAttrs::default();
            }
            (Some(gimli::DW_TAG_inlined_subroutine), (Some(c), inline_depth)) => {
                let list = &mut cands[c].inlines;
                attrs.each(unit, |b, e| list.push((inline_depth, b, e, offset)))?;
                context = (Some(c), inline_depth + 1);
                open.push((depth, context.0, context.1));
                attrs = RangeAttrs::default();
            }
            _ => {}
        }
    }
    subs.sort_unstable_by_key(|s| s.0);
    for c in &mut cands {
        sort_by_depth_and_begin(&mut c.inlines, spare);
        let dup = duplicated(&c.inlines, |r| (r.0, r.1));
        c.ambiguous = Ambiguous::new(&c.inlines, &dup, |r| (r.1, r.2));
    }
    Ok(cands)
}

#[derive(Clone, Copy)]
struct DieInfo {
    name: Option<R>,
    call_file: Option<u64>,
    call_line: u32,
}

/// A subprogram's or inlined call's name, call file and line, as addr2line reads them.
fn die_info(
    units: &Units,
    dwarf: &gimli::Dwarf<R>,
    unit: &URef<'_>,
    die: Off,
) -> gimli::Result<DieInfo> {
    let mut entries = unit.entries_raw(Some(die))?;
    let abbrev = entries
        .read_abbreviation()?
        .ok_or(gimli::Error::NoEntryAtGivenOffset(die.0 as u64))?;
    let mut info = DieInfo {
        name: None,
        call_file: None,
        call_line: 0,
    };
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        match attr.name() {
            gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                if let Ok(v) = unit.attr_string(attr.value()) {
                    info.name = Some(v);
                }
            }
            gimli::DW_AT_name if info.name.is_none() => {
                info.name = unit.attr_string(attr.value()).ok();
            }
            gimli::DW_AT_abstract_origin | gimli::DW_AT_specification if info.name.is_none() => {
                info.name = name_attr(units, dwarf, unit, attr.value(), 16)?;
            }
            gimli::DW_AT_call_file => {
                // DWARF 5 numbers files from 0; before, 0 meant none.
                if let AttributeValue::FileIndex(fi) = attr.value()
                    && (fi > 0 || unit.header.version() >= 5)
                {
                    info.call_file = Some(fi);
                }
            }
            gimli::DW_AT_call_line => info.call_line = attr.udata_value().unwrap_or(0) as u32,
            _ => {}
        }
    }
    Ok(info)
}

fn name_attr(
    units: &Units,
    dwarf: &gimli::Dwarf<R>,
    unit: &URef<'_>,
    value: AttributeValue<R>,
    limit: usize,
) -> gimli::Result<Option<R>> {
    if limit == 0 {
        return Ok(None);
    }
    match value {
        AttributeValue::UnitRef(offset) => name_entry(units, dwarf, unit, offset, limit),
        AttributeValue::DebugInfoRef(dr) => {
            let missing = gimli::Error::NoEntryAtGivenOffset(dr.0 as u64);
            let other = units.holding(dr.0).ok_or(missing)?;
            let offset = dr.to_unit_offset(&other.unit.header).ok_or(missing)?;
            name_entry(units, dwarf, &URef::new(dwarf, &other.unit), offset, limit)
        }
        // In the supplementary file: left to addr2line.
        AttributeValue::DebugInfoRefSup(_) if dwarf.sup.is_some() => {
            Err(gimli::Error::NoEntryAtGivenOffset(0))
        }
        _ => Ok(None),
    }
}

fn name_entry(
    units: &Units,
    dwarf: &gimli::Dwarf<R>,
    unit: &URef<'_>,
    offset: Off,
    limit: usize,
) -> gimli::Result<Option<R>> {
    let mut entries = unit.entries_raw(Some(offset))?;
    let abbrev = entries
        .read_abbreviation()?
        .ok_or(gimli::Error::NoEntryAtGivenOffset(offset.0 as u64))?;
    let mut name = None;
    let mut next = None;
    for spec in abbrev.attributes() {
        let attr = entries.read_attribute(*spec)?;
        match attr.name() {
            gimli::DW_AT_linkage_name | gimli::DW_AT_MIPS_linkage_name => {
                if let Ok(v) = unit.attr_string(attr.value()) {
                    return Ok(Some(v));
                }
            }
            gimli::DW_AT_name => {
                if let Ok(v) = unit.attr_string(attr.value()) {
                    name = Some(v);
                }
            }
            gimli::DW_AT_abstract_origin | gimli::DW_AT_specification => {
                next = Some(attr.value());
            }
            _ => {}
        }
    }
    if name.is_some() {
        return Ok(name);
    }
    match next {
        Some(next) => name_attr(units, dwarf, unit, next, limit - 1),
        None => Ok(None),
    }
}

/// The bytes of a unit's DIEs and of its line program.
pub(super) fn unit_bytes<'a>(dwarf: &'a gimli::Dwarf<R>, unit: &gimli::Unit<R>) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let part =
        |section: &'a [u8], start: usize, len: usize| section.get(start..start.checked_add(len)?);
    if let Some(at) = unit.header.debug_info_offset() {
        let len = unit.header.length_including_self();
        out.extend(part(
            gimli::Section::reader(&dwarf.debug_info).slice(),
            at.0,
            len,
        ));
    }
    if let Some(program) = &unit.line_program {
        let header = program.header();
        let len = header.unit_length() + header.encoding().format.initial_length_size() as usize;
        out.extend(part(
            gimli::Section::reader(&dwarf.debug_line).slice(),
            header.offset().0,
            len,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimli::UnitOffset as O;

    fn cand(inlines: Vec<(usize, u64, u64, Off)>) -> Candidate {
        let dup = duplicated(&inlines, |r| (r.0, r.1));
        Candidate {
            die: O(0),
            ambiguous: Ambiguous::new(&inlines, &dup, |r| (r.1, r.2)),
            inlines,
        }
    }

    #[test]
    fn inline_chain_goes_down_the_depths_and_stops_at_the_first_missing_one() {
        // Sorted by (depth, begin), as `walk` leaves them.
        let c = cand(vec![
            (0, 0x10, 0x40, O(1)),
            (0, 0x50, 0x60, O(2)),
            (1, 0x20, 0x30, O(3)),
            (2, 0x24, 0x28, O(4)),
        ]);
        assert_eq!(inline_chain(&c, 0x25), Some(vec![O(1), O(3), O(4)]));
        assert_eq!(inline_chain(&c, 0x2c), Some(vec![O(1), O(3)]));
        assert_eq!(inline_chain(&c, 0x55), Some(vec![O(2)]));
        assert_eq!(inline_chain(&c, 0x48), Some(vec![]));
    }

    #[test]
    fn equal_keys_leave_the_address_to_addr2line() {
        let c = cand(vec![(0, 0x10, 0x40, O(1)), (0, 0x10, 0x20, O(2))]);
        assert_eq!(inline_chain(&c, 0x18), None);
        // Outside both: their order cannot matter.
        assert_eq!(inline_chain(&c, 0x48), Some(vec![]));
        // Many ranges at one (tombstone) address: only addresses inside them are affected.
        let mut many: Vec<_> = (0..1000u64)
            .map(|i| (0, 0, 0x10 + i, O(i as usize)))
            .collect();
        many.push((0, 0x5000, 0x5010, O(9999)));
        let c = cand(many);
        assert_eq!(inline_chain(&c, 0x20), None);
        assert_eq!(inline_chain(&c, 0x5008), Some(vec![O(9999)]));
        assert_eq!(inline_chain(&c, 0x4000), Some(vec![]));
    }

    #[test]
    fn inlined_calls_sort_by_depth_then_begin() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for (n, depths) in [(0, 1), (1, 3), (50, 1), (1000, 7), (5000, 40), (30, 100)] {
            let v: Vec<(usize, u64, u64, Off)> = (0..n)
                .map(|i| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    let begin = 0x1000 + (state >> 40) % 0x800;
                    ((state % depths) as usize, begin, begin + 8, O(i))
                })
                .collect();
            let mut want = v.clone();
            want.sort_unstable_by_key(|r| (r.0, r.1));
            let mut got = v;
            sort_by_depth_and_begin(&mut got, &mut Vec::new());
            let keys =
                |x: &[(usize, u64, u64, Off)]| x.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>();
            assert_eq!(keys(&got), keys(&want), "{n}");
            let mut ids: Vec<_> = got.iter().map(|r| r.3).collect();
            ids.sort();
            assert_eq!(ids, (0..n).map(O).collect::<Vec<_>>());
        }
    }

    #[test]
    fn find_is_a_binary_search_like_addr2lines() {
        let r = [(0x10, 0x20, 'a'), (0x20, 0x30, 'b'), (0x40, 0x50, 'c')];
        assert_eq!(find(&r, 0x10), Some('a'));
        assert_eq!(find(&r, 0x2f), Some('b'));
        assert_eq!(find(&r, 0x30), None);
        assert_eq!(find(&r, 0x50), None);
        // Overlaps can hide a range from the search: so they do in addr2line.
        let o = [(0x0, 0x100, 'x'), (0x10, 0x20, 'y'), (0x30, 0x40, 'z')];
        assert_eq!(find(&o, 0x50), None);
    }

    #[test]
    fn paths_join_as_addr2line_joins_them() {
        let mut p = String::from("/build");
        path_push(&mut p, "src");
        path_push(&mut p, "a.c");
        assert_eq!(p, "/build/src/a.c");
        path_push(&mut p, "/abs/b.c");
        assert_eq!(p, "/abs/b.c");
        let mut w = String::from("C:\\build");
        path_push(&mut w, "a.c");
        assert_eq!(w, "C:\\build\\a.c");
    }
}

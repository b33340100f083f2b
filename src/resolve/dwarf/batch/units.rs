//! The batch path's unit table: every compilation unit and its address ranges, as
//! addr2line's `ResUnits` lists them, and the bytes each unit's DIEs and lines occupy.

use std::cell::RefCell;
use std::rc::Rc;

use gimli::AttributeValue;

use super::URef;
use super::rows::scan_lines;
use crate::resolve::dwarf::R;

/// One compilation unit as addr2line lists it: its header only. The parsed unit (its
/// abbreviations, its line program's header with every file name) is made again when
/// asked for: kept for every unit of a libxul-sized file, those were 150 MB of a 10 000
/// address request's 250 MB of heap, while making one costs microseconds (MEASUREMENTS).
pub(in crate::resolve::dwarf) struct UnitEntry {
    offset: usize,
    header: gimli::UnitHeader<R>,
    pub(in crate::resolve::dwarf) lang: Option<gimli::DwLang>,
    /// A skeleton unit: its DIEs are in a `.dwo` or `.dwp`.
    pub(in crate::resolve::dwarf) split: bool,
}

/// Parsed units kept at once: the batch path goes unit by unit, idle-time work a unit's
/// slices in a row, and a reference into another unit comes back to the same few.
const RECENT_UNITS: usize = 4;

/// The units of a file and their address ranges (addr2line's `ResUnits`).
pub(in crate::resolve::dwarf) struct Units {
    pub(in crate::resolve::dwarf) units: Vec<UnitEntry>,
    /// `(begin, end, unit)`, sorted by begin.
    ranges: Vec<(u64, u64, usize)>,
    /// The largest end among `ranges[..i]`: whether an earlier range also holds an address.
    ends_before: Vec<u64>,
    /// The last units parsed, most recent last: `(index in units, unit)`.
    recent: RefCell<Vec<(usize, Rc<gimli::Unit<R>>)>>,
}

/// Where an address is.
pub(in crate::resolve::dwarf) enum Cover {
    Nowhere,
    Unit(usize),
    /// Several units' ranges hold it: addr2line tries them in turn.
    Several,
}

#[derive(Default)]
pub(super) struct RangeAttrs {
    low: Option<u64>,
    high: Option<u64>,
    size: Option<u64>,
    list: Option<gimli::RangeListsOffset<usize>>,
}

impl RangeAttrs {
    #[inline]
    pub(super) fn take(
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
    pub(super) fn each(&self, unit: &URef<'_>, mut f: impl FnMut(u64, u64)) -> gimli::Result<bool> {
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
    /// Pauses every few hundred units ([`pace`](crate::resolve::pace): 45 ms for a
    /// libxul-sized file's 20 000 units).
    pub(in crate::resolve::dwarf) async fn parse(dwarf: &gimli::Dwarf<R>) -> gimli::Result<Units> {
        let mut aranges = Vec::new();
        let mut headers = dwarf.debug_aranges.headers();
        while let Some(h) = headers.next()? {
            aranges.push((h.debug_info_offset().0, h.offset()));
        }
        aranges.sort_unstable_by_key(|a| a.0);
        crate::resolve::pace::pause().await;
        let mut units = Vec::new();
        let mut ranges = Vec::new();
        let mut budget = 2 * gimli::Section::reader(&dwarf.debug_abbrev).slice().len();
        let mut headers = dwarf.units();
        while let Some(header) = headers.next()? {
            let id = units.len();
            if id % 64 == 63 {
                crate::resolve::pace::pause().await;
            }
            let Some(offset) = header.debug_info_offset() else {
                continue;
            };
            let mut need_range = match header.type_() {
                gimli::UnitType::Type { .. } | gimli::UnitType::SplitType { .. } => continue,
                gimli::UnitType::Partial => false,
                _ => true,
            };
            let root = root_only(dwarf, &header, &mut budget);
            let Some(unit) = root.or_else(|| dwarf.unit(header).ok()) else {
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
            if need_range
                && let Ok(full) = dwarf.unit(unit.header.clone())
                && let Ok(Some(scan)) = scan_lines(&URef::new(dwarf, &full), &[], &mut Vec::new())
            {
                ranges.extend(scan.sequences.iter().map(|&(b, e)| (b, e, id)));
            }
            units.push(UnitEntry {
                offset: offset.0,
                header: unit.header.clone(),
                lang,
                split: unit.dwo_id.is_some(),
            });
        }
        // By start, then the rest: a whole order, so that the order is the same whether
        // the sort went in slices or not.
        crate::resolve::pace::sort_unstable(&mut ranges).await;
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
            recent: RefCell::default(),
        })
    }

    /// The `index`th unit, parsed (or one of the last few parsed); `None` if it no
    /// longer parses, which [`Self::parse`] ruled out for the units it listed.
    pub(in crate::resolve::dwarf) fn unit(
        &self,
        dwarf: &gimli::Dwarf<R>,
        index: usize,
    ) -> Option<Rc<gimli::Unit<R>>> {
        let mut recent = self.recent.borrow_mut();
        if let Some(at) = recent.iter().position(|r| r.0 == index) {
            let hit = recent.remove(at);
            let unit = hit.1.clone();
            recent.push(hit);
            return Some(unit);
        }
        let unit = Rc::new(dwarf.unit(self.units.get(index)?.header.clone()).ok()?);
        if recent.len() == RECENT_UNITS {
            recent.remove(0);
        }
        recent.push((index, unit.clone()));
        Some(unit)
    }

    pub(in crate::resolve::dwarf) fn cover(&self, addr: u64) -> Cover {
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

    /// Pushes the begin and end of every unit range.
    pub(in crate::resolve::dwarf) fn range_edges(&self, out: &mut Vec<u64>) {
        for &(b, e, _) in &self.ranges {
            out.push(b);
            out.push(e);
        }
    }

    /// The unit holding a `.debug_info` offset (addr2line's `find_offset`).
    pub(super) fn holding(&self, offset: usize) -> Option<usize> {
        match self.units.binary_search_by_key(&offset, |u| u.offset) {
            Ok(_) | Err(0) => None,
            Err(i) => Some(i - 1),
        }
    }
}

/// `header`'s unit with only its root DIE's abbreviation parsed (clang writes it first in
/// the table, gcc among the others): enough to read the root's attributes. A big C++
/// unit's table has hundreds of abbreviations, and building it for every unit at load was
/// the largest part of listing a libxul-sized library's units; a unit's whole table is
/// parsed when it is asked about (`Units::unit`). `None`: parse it all. `budget`: bytes
/// of abbreviations this may still read, for all units together (several units can share
/// one table, which gimli then parses once for all: read again for each, a hostile file's
/// long one would cost its size times its units).
fn root_only(
    dwarf: &gimli::Dwarf<R>,
    header: &gimli::UnitHeader<R>,
    budget: &mut usize,
) -> Option<gimli::Unit<R>> {
    use gimli::leb128::read::{signed, unsigned};
    let table = gimli::Section::reader(&dwarf.debug_abbrev);
    let endian = gimli::Reader::endian(table);
    let bytes = table.slice().get(header.debug_abbrev_offset().0..)?;
    let root = header.range_from(header.root_offset()..).ok()?;
    let code = unsigned(&mut gimli::EndianSlice::new(root.slice(), endian)).ok()?;
    if code == 0 {
        return None;
    }
    let mut entry = gimli::EndianSlice::new(bytes, endian);
    let at = |entry: &gimli::EndianSlice<'_, _>| bytes.len() - entry.len();
    // Entries in turn until the root's (a 0 code ends the table: `None`).
    let (start, stmt_list) = loop {
        let start = at(&entry);
        let this = unsigned(&mut entry).ok().filter(|&c| c != 0)?;
        unsigned(&mut entry).ok()?; // tag
        gimli::Reader::read_u8(&mut entry).ok()?; // children
        // Where its `DW_AT_stmt_list` is: read as a `DW_AT_sibling` (both one-byte
        // numbers), which nothing here reads on a root DIE, gimli leaves the line
        // program's header (every file name, the other large part of that load) unread.
        // A unit whose ranges come from its line program is read in full for them.
        let mut stmt_list = None;
        loop {
            let name_at = at(&entry);
            let (name, form) = (unsigned(&mut entry).ok()?, unsigned(&mut entry).ok()?);
            if name == 0 && form == 0 {
                break;
            }
            if form == u64::from(gimli::DW_FORM_implicit_const.0) {
                signed(&mut entry).ok()?;
            }
            if name == u64::from(gimli::DW_AT_stmt_list.0) {
                stmt_list = Some(name_at - start);
            }
        }
        if this == code {
            break (start, stmt_list);
        }
        if at(&entry) > *budget {
            return None;
        }
    };
    *budget = budget.checked_sub(at(&entry))?;
    // The entry and the 0 that ends a table.
    let mut one = bytes.get(start..at(&entry))?.to_vec();
    one.push(0);
    if let Some(at) = stmt_list {
        // The byte 0x10 itself: a canonical LEB128 of 0x10 is that one byte.
        *one.get_mut(at).filter(|b| **b == 0x10)? = gimli::DW_AT_sibling.0 as u8;
    }
    let abbrevs = gimli::DebugAbbrev::new(&one, endian)
        .abbreviations(gimli::DebugAbbrevOffset(0))
        .ok()?;
    gimli::Unit::new_with_abbreviations(dwarf, header.clone(), std::sync::Arc::new(abbrevs)).ok()
}

/// The bytes of a unit's DIEs and of its line program.
pub(in crate::resolve::dwarf) fn unit_bytes<'a>(
    dwarf: &'a gimli::Dwarf<R>,
    unit: &gimli::Unit<R>,
) -> Vec<&'a [u8]> {
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
    use crate::resolve::dwarf::{READER_FIXTURES, fixture_dwarf};

    /// Every fixture unit is listed from its root alone (not by the whole parse it falls
    /// back to), with the root's attributes as gimli reads them from the whole table, and
    /// its line program's header left unread.
    #[test]
    fn units_are_listed_from_their_root_alone() {
        for path in READER_FIXTURES {
            let dwarf = fixture_dwarf(path);
            let mut headers = dwarf.units();
            while let Some(header) = headers.next().unwrap() {
                let full = dwarf.unit(header.clone()).unwrap();
                // Past the bytes it may read, the whole table is parsed instead.
                assert!(root_only(&dwarf, &header, &mut 0).is_none(), "{path}");
                let mut budget = usize::MAX;
                let root = root_only(&dwarf, &header, &mut budget).expect(path);
                let codes = |u: &gimli::Unit<R>| {
                    (1..1000)
                        .filter(|&c| u.abbreviations.get(c).is_some())
                        .count()
                };
                assert_eq!(codes(&root), 1, "{path}");
                assert!(codes(&full) > 1, "{path}");
                let text = |s: &Option<R>| s.as_ref().map(|s| s.to_string_lossy().into_owned());
                assert_eq!(text(&root.name), text(&full.name), "{path}");
                assert_eq!(text(&root.comp_dir), text(&full.comp_dir), "{path}");
                assert_eq!(root.low_pc, full.low_pc, "{path}");
                assert_eq!(root.addr_base, full.addr_base, "{path}");
                assert_eq!(root.rnglists_base, full.rnglists_base, "{path}");
                assert_eq!(root.str_offsets_base, full.str_offsets_base, "{path}");
                assert_eq!(root.dwo_id, full.dwo_id, "{path}");
                assert!(full.line_program.is_some(), "{path}");
                assert!(root.line_program.is_none(), "{path}");
            }
        }
    }
}

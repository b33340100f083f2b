//! The skip loop and the cursor against gimli's own reading of the same DIEs.

use super::super::{READER_FIXTURES, fixture_dwarf};
use super::*;

/// Every DIE of `path`'s units as gimli reads them and as the cursor steps over them:
/// offset, depth, tag and, for subprograms and inlined calls, the range attributes.
fn same_dies_as_gimli(path: &str) -> usize {
    let dwarf = fixture_dwarf(path);
    let ranged = |t| t == gimli::DW_TAG_subprogram || t == gimli::DW_TAG_inlined_subroutine;
    let is_range = |n| {
        matches!(
            n,
            gimli::DW_AT_low_pc | gimli::DW_AT_high_pc | gimli::DW_AT_ranges
        )
    };
    let mut plans = Plans::default();
    let mut headers = dwarf.units();
    let mut dies = 0;
    while let Some(header) = headers.next().unwrap() {
        let unit = dwarf.unit(header).unwrap();
        let unit = gimli::UnitRef::new(&dwarf, &unit);
        plans.build(&unit.header, &unit.abbreviations);
        let mut cursor = Cursor::new(&unit).unwrap();
        let mut entries = unit.entries_raw(None).unwrap();
        while !entries.is_empty() {
            assert_eq!(cursor.offset(), entries.next_offset(), "{path}");
            assert_eq!(cursor.depth(), entries.next_depth(), "{path}");
            // Without a plan every attribute is handed over: only range ones count.
            let mut got = Vec::new();
            let tag = cursor
                .next(&plans, ranged, &mut |n, v| {
                    if is_range(n) {
                        got.push(format!("{n} {v:?}"));
                    }
                    Ok(())
                })
                .unwrap();
            let abbrev = entries.read_abbreviation().unwrap();
            assert_eq!(tag, abbrev.map(|a| a.tag()), "{path}");
            let mut want = Vec::new();
            for spec in abbrev.map_or(&[][..], |a| a.attributes()) {
                let attr = entries.read_attribute(*spec).unwrap();
                if tag.is_some_and(ranged) && is_range(attr.name()) {
                    want.push(format!("{} {:?}", attr.name(), attr.value()));
                }
            }
            assert_eq!(got, want, "{path} at {:?}", cursor.offset());
            dies += 1;
        }
        assert!(cursor.is_empty());
    }
    dies
}

#[test]
fn cursor_steps_over_dies_as_gimli_reads_them() {
    for path in READER_FIXTURES {
        assert!(same_dies_as_gimli(path) > 10, "{path}");
    }
}

/// `skip_others` stops at each subprogram and inlined call gimli lists, at its depth,
/// and at nothing else: in units with more than 127 abbreviations too (two-byte codes).
#[test]
fn skip_others_stops_at_each_subprogram_and_inlined_call() {
    let (mut two_byte_codes, mut stepped_over) = (false, false);
    for path in READER_FIXTURES {
        let dwarf = fixture_dwarf(path);
        let mut plans = Plans::default();
        let mut headers = dwarf.units();
        while let Some(header) = headers.next().unwrap() {
            let unit = dwarf.unit(header).unwrap();
            let unit = gimli::UnitRef::new(&dwarf, &unit);
            plans.build(&unit.header, &unit.abbreviations);
            two_byte_codes |= plans.plans.len() > 0x80;
            let mut want = Vec::new();
            let mut entries = unit.entries_raw(None).unwrap();
            while !entries.is_empty() {
                let (at, depth) = (entries.next_offset(), entries.next_depth());
                let abbrev = entries.read_abbreviation().unwrap();
                if let Some(a) = abbrev {
                    entries.skip_attributes(a.attributes()).unwrap();
                    if matches!(
                        a.tag(),
                        gimli::DW_TAG_subprogram | gimli::DW_TAG_inlined_subroutine
                    ) {
                        want.push((at, depth));
                    }
                }
            }
            // Where the loop stops: the subprograms and inlined calls read there.
            let stops = |inlines_too: bool| {
                let mut got = Vec::new();
                let mut cursor = Cursor::new(&unit).unwrap();
                loop {
                    cursor.skip_others(&plans, isize::MIN, inlines_too);
                    if cursor.is_empty() {
                        return got;
                    }
                    let (at, depth) = (cursor.offset(), cursor.depth());
                    let tag = cursor.next(&plans, |_| false, &mut |_, _| Ok(())).unwrap();
                    if matches!(
                        tag,
                        Some(gimli::DW_TAG_subprogram | gimli::DW_TAG_inlined_subroutine)
                    ) {
                        got.push((at, depth));
                    }
                }
            };
            assert_eq!(stops(true), want, "{path}");
            // Outside a subprogram being read: subprograms without ranges are
            // stepped over, the others still stop the loop.
            let ranged: Vec<_> = want
                .iter()
                .filter(|&&(at, _)| {
                    let mut e = unit.entries_at_offset(at).unwrap();
                    let die = e.next_dfs().unwrap().unwrap();
                    die.tag() == gimli::DW_TAG_subprogram
                        && [
                            gimli::DW_AT_low_pc,
                            gimli::DW_AT_high_pc,
                            gimli::DW_AT_ranges,
                        ]
                        .iter()
                        .any(|&n| die.attr(n).is_some())
                })
                .copied()
                .collect();
            let is_subprogram = |&(at, _): &(gimli::UnitOffset<usize>, isize)| {
                let mut e = unit.entries_at_offset(at).unwrap();
                e.next_dfs().unwrap().unwrap().tag() == gimli::DW_TAG_subprogram
            };
            let got: Vec<_> = stops(false).into_iter().filter(is_subprogram).collect();
            let subprograms = want.iter().filter(|&w| is_subprogram(w)).count();
            stepped_over |= ranged.len() < subprograms;
            assert_eq!(got, ranged, "{path}");
        }
    }
    assert!(
        two_byte_codes,
        "no fixture unit has more than 127 abbreviations"
    );
    assert!(stepped_over, "no fixture has a subprogram without ranges");
}

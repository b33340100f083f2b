//! The batch path's row sink: one run of a unit's line program keeping only the rows the
//! asked addresses fall on, and addr2line's file paths for them.

use std::num::NonZeroU64;

use super::{Fallback, URef};
use crate::resolve::dwarf::{R, lines};

/// A line table row: file index and line (0: none).
pub(super) type Row = (u64, u32);

/// What a unit's line program says about some addresses.
pub(super) struct LineScan {
    /// Every sequence's `[start, end)` in program order.
    pub(super) sequences: Vec<(u64, u64)>,
    /// Per address asked: `(sequence, row)` where its sequence holds it, the row being
    /// `None` when the address precedes the sequence's first row.
    pub(super) found: Vec<Option<(usize, Option<Row>)>>,
    /// Per address asked: more than one sequence holds it.
    pub(super) several: Vec<bool>,
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
                    // Only stops the program: the caller says why ([`Fallback::Overlaps`]).
                    // (An error of gimli's type, not a `Fallback`: the line runner's
                    // code is 6 % shorter with `Stop` that size.)
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
/// the sorted `asks` fall on. `Ok(None)` when the unit has no line program; a [`Fallback`]
/// where addr2line's table would fail (bad program or file entry) or its lookups are faster.
pub(super) fn scan_lines(
    unit: &URef<'_>,
    asks: &[u64],
    seq: &mut Vec<(u64, u64, u32)>,
) -> Result<Option<LineScan>, Fallback> {
    // Borrowed: a clone copies the header's file table, a reference count per entry.
    let Some(program) = unit.line_program.as_ref() else {
        return Ok(None);
    };
    let mut sink = RowSink::new(asks, seq);
    match lines::run(program.header(), |a, f, l, e| sink.row(a, f, l, e)) {
        Ok(()) => {
            check_files(unit, program.header())?;
            Ok(Some(sink.scan))
        }
        // `row` stops a program only where its sequences overlap over and over.
        Err(lines::Stop::Row(e)) => {
            debug_assert!(matches!(e, gimli::Error::NoEntryAtGivenOffset(0)));
            Err(Fallback::Overlaps)
        }
        Err(lines::Stop::Gimli) => {
            // Again from the start, by gimli's rows.
            sink = RowSink::new(asks, sink.seq);
            let mut rows = program.clone().rows();
            while let Some((_, row)) = rows.next_row()? {
                let line = row.line().map_or(0, NonZeroU64::get);
                if sink
                    .row(row.address(), row.file_index(), line, row.end_sequence())
                    .is_err()
                {
                    return Err(Fallback::Overlaps);
                }
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
pub(super) fn file_path(unit: &URef<'_>, index: u64) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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

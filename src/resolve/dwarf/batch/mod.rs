//! Many addresses at once. addr2line answers one address at a time from per-unit tables of
//! every function, every inlined call of each function asked, every line row and every
//! file path, built on first use: on a big binary, most of a cold request's time and
//! memory. Here each unit holding asked addresses is read once, its DIEs and its line
//! program, keeping only what those addresses need.
//!
//! The answers are addr2line's: the same unit, function, inline chain and row, found by the
//! same binary searches over the same sorted ranges. A split unit is read from its `.dwo`
//! (or `.dwp` part), its rows and call files from its skeleton's line program, as
//! addr2line reads them. Where its choice would depend on the order of equal keys
//! (duplicate ranges), on a supplementary file, on a reference out of a split unit, or
//! where its tables would fail to build, the address is left to addr2line (a
//! [`Fallback`]); so are the addresses of a split unit whose `.dwo` is not found.
//!
//! Files: `units.rs` (the unit table), `rows.rs` (the line program's row sink),
//! `walk.rs` (the DIE walk and inline chains), `names.rs` (names and call sites).

mod names;
mod rows;
mod units;
mod walk;

use super::skip::Plans;
use super::{Frame, R};
use crate::resolve::fasthash::Fast;
use crate::resolve::types::Text;

use names::{DieInfo, die_info};
use rows::{file_path, scan_lines};
use walk::{Ambiguous, duplicated, find, inline_chain, walk};

pub(super) use units::{Cover, Units, unit_bytes};

type URef<'a> = gimli::UnitRef<'a, R>;
type Off = gimli::UnitOffset<usize>;

/// Why the batch path leaves a unit or an address to addr2line (whose answer is then the
/// answer): each is a case where the batch path cannot be sure to answer as it would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fallback {
    /// A read failed (a DIE, an attribute, the line program): addr2line's tables would
    /// fail too, or build differently.
    Unreadable,
    /// A name in the supplementary (dwz) file.
    Supplementary,
    /// Line sequences that overlap over and over: addr2line's sorted lookups are faster.
    Overlaps,
    /// Ranges or sequences with equal keys hold the address: which one addr2line takes is
    /// its sort's choice.
    EqualKeys,
    /// More than one line sequence holds the address, or another than addr2line's binary
    /// search finds.
    OtherSequence,
}

impl From<gimli::Error> for Fallback {
    fn from(_: gimli::Error) -> Fallback {
        Fallback::Unreadable
    }
}

/// Buffers reused from unit to unit of a batch (growing them for each of thousands of
/// units showed in profiles).
#[derive(Default)]
pub(in crate::resolve::dwarf) struct Scratch {
    rows: Vec<(u64, u64, u32)>,
    subs: Vec<(u64, u64, usize)>,
    funcs: Vec<Option<usize>>,
    open: Vec<(isize, Option<usize>, usize)>,
    plans: Plans,
    /// Room for `sort_by_depth_and_begin`.
    spare: Vec<(usize, u64, u64, Off)>,
}

/// An address's answer from its unit: its frames (none: no function), or why addr2line
/// decides.
pub(super) type Answer = Result<Vec<Frame>, Fallback>;

/// The frames of the sorted `asks`, all in one unit (the only unit holding each): its DIEs
/// in `unit`, its line program in `lines_of` (the same unit, or the skeleton of the split
/// unit `unit`: addr2line reads rows and call files from the skeleton's line table).
/// `units`: where references into other units lead (none from a split unit).
/// The line table row of `unit` holding `addr`, by this crate's own run of its program:
/// its file and line (`None` for line 0). addr2line's table of a unit whose program holds
/// a tombstone address cut short a sequence (gcc's discarded COMDAT copies at 0) joins the
/// next sequence to it, and then finds no row for addresses it holds.
pub(super) fn own_row(unit: &URef<'_>, addr: u64) -> Option<(Option<String>, Option<u32>)> {
    let scan = scan_lines(unit, &[addr], &mut Vec::new()).ok()??;
    if scan.several.first().copied().unwrap_or(true) {
        return None;
    }
    let (_, row) = (*scan.found.first()?)?;
    let (file, line) = row?;
    Some((file_path(unit, file), (line != 0).then_some(line)))
}

pub(super) fn unit_frames(
    unit: &URef<'_>,
    lines_of: &URef<'_>,
    units: Option<&Units>,
    asks: &[u64],
    intern: &dyn Fn(String) -> Text,
    scratch: &mut Scratch,
) -> Vec<Answer> {
    let unknown = |why: Fallback| (0..asks.len()).map(|_| Err(why)).collect();
    let unit = *unit;
    let cands = match walk(&unit, asks, scratch) {
        Ok(c) => c,
        Err(why) => return unknown(why),
    };
    let lines = match scan_lines(lines_of, asks, &mut scratch.rows) {
        Ok(l) => l,
        Err(why) => return unknown(why),
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
        let f = file_path(lines_of, index).map(intern);
        files.push((index, f.clone()));
        f
    };
    // Each DIE read once per unit: many addresses share a function and its inlines.
    let mut dies: std::collections::HashMap<usize, DieInfo, Fast> = Default::default();
    let mut info = |die: Off| -> Result<DieInfo, Fallback> {
        if let Some(d) = dies.get(&die.0) {
            return Ok(d.clone());
        }
        let d = die_info(units, &unit, die)?;
        dies.insert(die.0, d.clone());
        Ok(d)
    };
    asks.iter()
        .enumerate()
        .map(|(k, &a)| {
            let f = find(subs, a);
            if sub_dup.holds(a) {
                return Err(Fallback::EqualKeys);
            }
            // The line table's row, as `Lines::find_location` finds it.
            let location = match &lines {
                None => None,
                Some(l) => {
                    if l.several[k] {
                        return Err(Fallback::OtherSequence);
                    }
                    if seq_dup.holds(a) {
                        return Err(Fallback::EqualKeys);
                    }
                    match find(&sorted, a) {
                        None => None,
                        Some(seq) => match l.found[k] {
                            Some((id, row)) if id == seq => row,
                            _ => return Err(Fallback::OtherSequence),
                        },
                    }
                }
            };
            let Some(f) = f else {
                // No function: the row alone, as addr2line's frame without a function.
                let frames = location.map(|(idx, line)| Frame {
                    die: None,
                    name: None,
                    file: file_of(idx),
                    line: (line != 0).then_some(line),
                });
                return Ok(frames.into_iter().collect());
            };
            // Every function holding an address asked is a candidate.
            let cand = &cands[funcs[f].ok_or(Fallback::Unreadable)?];
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
            Ok(frames)
        })
        .collect()
}

//! The batch path's DIE walk: one pass over a unit's DIEs for every subprogram's ranges and
//! the inlined calls of those holding an address asked, and addr2line's inline chains.

use super::units::RangeAttrs;
use super::{Fallback, Off, Scratch, URef};
use crate::resolve::dwarf::skip::Cursor;

/// A subprogram holding an address asked, and its inlined calls' ranges:
/// `(inline depth, begin, end, DIE)`.
pub(super) struct Candidate {
    pub(super) die: Off,
    inlines: Vec<(usize, u64, u64, Off)>,
    /// The `inlines` that share their depth and begin with another (their order is the
    /// sort's choice).
    ambiguous: Ambiguous,
}

/// Ranges whose order among equal keys is the sort's choice, for asking in O(log n)
/// whether an address is in one of them (linkers leave many at a tombstone address such
/// as 0, and a crafted file can have any number).
#[derive(Default)]
pub(super) struct Ambiguous {
    /// Begins, ascending.
    begins: Vec<u64>,
    /// The largest end among the ranges up to each.
    ends: Vec<u64>,
}

impl Ambiguous {
    /// The ranges `(begin, end)` of `sorted` at `dup`'s indices.
    pub(super) fn new<T>(
        sorted: &[T],
        dup: &[usize],
        range: impl Fn(&T) -> (u64, u64),
    ) -> Ambiguous {
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

    pub(super) fn holds(&self, probe: u64) -> bool {
        let k = self.begins.partition_point(|&b| b <= probe);
        k > 0 && self.ends[k - 1] > probe
    }
}

/// What the range holding `probe` carries, by addr2line's binary search over ranges
/// sorted by begin (which may miss one where ranges overlap, as addr2line does).
pub(super) fn find<T: Copy>(ranges: &[(u64, u64, T)], probe: u64) -> Option<T> {
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
pub(super) fn duplicated<T, K: PartialEq>(sorted: &[T], key: impl Fn(&T) -> K) -> Vec<usize> {
    (0..sorted.len())
        .filter(|&i| {
            (i > 0 && key(&sorted[i - 1]) == key(&sorted[i]))
                || (i + 1 < sorted.len() && key(&sorted[i + 1]) == key(&sorted[i]))
        })
        .collect()
}

/// addr2line's `find_inlined_functions`: outermost first. [`Fallback::EqualKeys`] when equal keys
/// make its answer the sort's choice.
pub(super) fn inline_chain(cand: &Candidate, probe: u64) -> Result<Vec<Off>, Fallback> {
    let inlines = &cand.inlines;
    if cand.ambiguous.holds(probe) {
        return Err(Fallback::EqualKeys);
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
            Err(_) => return Ok(chain),
        }
    }
}

/// One pass over the unit's DIEs: every subprogram's ranges (addr2line's `Functions`),
/// and the inlined calls inside those that hold an address asked (its `Function`).
/// Leaves in `scratch` the subprogram ranges `(begin, end, function)` sorted by begin and
/// per function the candidate it is, if it holds an address asked; returns the candidates.
pub(super) fn walk(
    unit: &URef<'_>,
    asks: &[u64],
    scratch: &mut Scratch,
) -> Result<Vec<Candidate>, Fallback> {
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
        let floor = open.last().map_or(isize::MIN, |o| o.0);
        cursor.skip_others(plans, floor, context.0.is_some());
        if cursor.is_empty() {
            break;
        }
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
        assert_eq!(inline_chain(&c, 0x25), Ok(vec![O(1), O(3), O(4)]));
        assert_eq!(inline_chain(&c, 0x2c), Ok(vec![O(1), O(3)]));
        assert_eq!(inline_chain(&c, 0x55), Ok(vec![O(2)]));
        assert_eq!(inline_chain(&c, 0x48), Ok(vec![]));
    }

    #[test]
    fn equal_keys_leave_the_address_to_addr2line() {
        let c = cand(vec![(0, 0x10, 0x40, O(1)), (0, 0x10, 0x20, O(2))]);
        assert_eq!(inline_chain(&c, 0x18), Err(Fallback::EqualKeys));
        // Outside both: their order cannot matter.
        assert_eq!(inline_chain(&c, 0x48), Ok(vec![]));
        // Many ranges at one (tombstone) address: only addresses inside them are affected.
        let mut many: Vec<_> = (0..1000u64)
            .map(|i| (0, 0, 0x10 + i, O(i as usize)))
            .collect();
        many.push((0, 0x5000, 0x5010, O(9999)));
        let c = cand(many);
        assert_eq!(inline_chain(&c, 0x20), Err(Fallback::EqualKeys));
        assert_eq!(inline_chain(&c, 0x5008), Ok(vec![O(9999)]));
        assert_eq!(inline_chain(&c, 0x4000), Ok(vec![]));
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
}

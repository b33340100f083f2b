//! Where an answer may change in a `.sym`, for the prepared index
//! ([`crate::resolve::prepared`]): every PUBLIC address, the start and end of every FUNC,
//! line record and INLINE range. One step reads the PUBLIC and FUNC records' addresses,
//! each next one the blocks of [`FUNCS_PER_STEP`] FUNCs.

use super::block::Fields;
use super::*;

/// FUNC blocks read per step: a few milliseconds of parsing on Firefox's `.sym` files.
const FUNCS_PER_STEP: usize = 512;

impl SymFile {
    /// How many steps [`Self::edges_step`] takes.
    pub fn edge_steps(&self) -> usize {
        1 + self.funcs.len().div_ceil(FUNCS_PER_STEP)
    }

    /// Pushes the module offsets of step `k` (any order, repeats allowed).
    pub fn edges_step(&self, k: usize, out: &mut Vec<u64>) {
        if k == 0 {
            out.extend(self.publics.iter().map(|p| p.0));
            for f in &self.funcs {
                out.push(f.addr);
                out.push(f.addr.saturating_add(f.size));
            }
            return;
        }
        let data: &[u8] = &self.data;
        let from = (k - 1) * FUNCS_PER_STEP;
        for f in self.funcs.iter().skip(from).take(FUNCS_PER_STEP) {
            let (Ok(s), Ok(len)) = (usize::try_from(f.start), usize::try_from(f.len)) else {
                continue;
            };
            let Some(text) = s.checked_add(len).and_then(|end| data.get(s..end)) else {
                continue;
            };
            block_edges(&lossy(text), out);
        }
        give_back(&self.data, data);
    }
}

/// The edges of one block's line and INLINE records (its FUNC line is skipped: it is
/// not a line record, and its range comes from the index).
fn block_edges(text: &str, out: &mut Vec<u64>) {
    for l in text.lines().skip(1) {
        let mut f = match l.strip_prefix("INLINE ") {
            Some(rest) => {
                let mut f = Fields(Some(rest));
                for _ in 0..4 {
                    f.next();
                }
                f
            }
            None => Fields(Some(l)),
        };
        let inline = l.starts_with("INLINE ");
        let mut pending = None;
        while let Some(n) = f.next_hex() {
            let Some(n) = n else {
                if inline {
                    continue;
                }
                break;
            };
            match pending.take() {
                None => pending = Some(n),
                Some(a) => {
                    out.push(a);
                    out.push(a.saturating_add(n));
                    if !inline {
                        break;
                    }
                }
            }
        }
    }
}

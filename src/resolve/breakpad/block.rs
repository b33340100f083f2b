//! One FUNC block of a `.sym`: its record and the INLINE and line records after it,
//! parsed only where they hold an asked offset.

use super::*;

pub(super) struct Line {
    pub(super) addr: u64,
    pub(super) size: u64,
    pub(super) line: u32,
    pub(super) file: u32,
}

pub(super) struct Inline {
    pub(super) depth: u32,
    pub(super) call_line: u32,
    pub(super) call_file: u32,
    pub(super) origin: u32,
}

/// One FUNC record with its INLINE and line records.
pub(super) struct Block {
    pub(super) name: Text,
    pub(super) lines: Vec<Line>,
    pub(super) inlines: Vec<Inline>,
    pub(super) ranges: Vec<(u64, u64)>,
    /// The index in `inlines` of each range's record.
    pub(super) owners: Vec<u32>,
}

/// The fields of a record split at each space, as `str::split(' ')` does (empty fields
/// included), without a searcher per field: most fields are a few bytes.
pub(super) struct Fields<'a>(pub(super) Option<&'a str>);

impl<'a> Iterator for Fields<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let rest = self.0?;
        match rest.bytes().position(|b| b == b' ') {
            Some(i) => {
                self.0 = Some(&rest[i + 1..]);
                Some(&rest[..i])
            }
            None => {
                self.0 = None;
                Some(rest)
            }
        }
    }
}

/// Each byte's value as a hex digit, 16 for bytes that are none.
static HEX_DIGIT: [u8; 256] = {
    let mut t = [16u8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

impl Fields<'_> {
    /// Moves past the field that ends at byte `end` of what is left (a space or the end).
    pub(super) fn skip_to(&mut self, end: usize) {
        self.0 = self.0.and_then(|rest| rest.get(end + 1..));
    }

    /// The next field read as [`hex`] reads it, in the same pass that finds its end: None
    /// after the last field, `Some(None)` for a field that is no number.
    pub(super) fn next_hex(&mut self) -> Option<Option<u64>> {
        let b = self.0?.as_bytes();
        let from = usize::from(b.first() == Some(&b'+'));
        let (mut v, mut ok, mut i) = (0u64, true, from);
        while let Some(&c) = b.get(i).filter(|&&c| c != b' ') {
            let d = HEX_DIGIT[usize::from(c)];
            // A digit pushed out of the top (v >= 2^60 before the shift) is an overflow.
            ok &= d < 16 && v >> 60 == 0;
            v = v << 4 | u64::from(d & 15);
            i += 1;
        }
        self.skip_to(i);
        Some((ok && i > from).then_some(v))
    }

    /// Likewise for [`dec`].
    pub(super) fn next_dec(&mut self) -> Option<Option<u32>> {
        let b = self.0?.as_bytes();
        let from = usize::from(b.first() == Some(&b'+'));
        let (mut v, mut ok, mut i) = (0u32, true, from);
        while let Some(&c) = b.get(i).filter(|&&c| c != b' ') {
            let d = c.wrapping_sub(b'0');
            match v.checked_mul(10).and_then(|v| v.checked_add(u32::from(d))) {
                Some(n) if d < 10 => v = n,
                _ => ok = false,
            }
            i += 1;
        }
        self.skip_to(i);
        Some((ok && i > from).then_some(v))
    }
}

/// Whether one of `targets` (sorted) is in `[start, start + size)`.
pub(super) fn holds_one(targets: &[u64], start: u64, size: u64) -> bool {
    let i = targets.partition_point(|&t| t < start);
    targets
        .get(i)
        .is_some_and(|&t| t < start.saturating_add(size))
}

impl Block {
    /// The block's records that hold one of `targets` (sorted): the others cannot be in
    /// an answer for them, and only their addresses are read. A line record whose range
    /// holds none of them, or an `INLINE` none of whose ranges does, is passed over after
    /// its addresses (the numbers before them are most of what there is to read).
    pub(super) fn parse(text: &str, targets: &[u64], reuse: Option<Block>) -> Option<Block> {
        // The lines as `str::lines` gives them: split after each `\n`, a `\r` before it
        // dropped, no empty line after a final `\n`.
        let bytes = text.as_bytes();
        let mut at = 0usize;
        let mut ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
        let mut it = std::iter::from_fn(|| {
            let end = ends.next()?;
            if at >= bytes.len() {
                return None;
            }
            let line = &text[at..end];
            at = end + 1;
            Some(if end < bytes.len() {
                line.strip_suffix('\r').unwrap_or(line)
            } else {
                line
            })
        });
        let first = it.next()?.strip_prefix("FUNC ")?;
        let first = first.strip_prefix("m ").unwrap_or(first);
        let name: Text = demangled(first.splitn(4, ' ').nth(3).unwrap_or("").to_string()).into();
        let mut block = match reuse {
            Some(mut b) => {
                b.name = name;
                b.lines.clear();
                b.inlines.clear();
                b.ranges.clear();
                b.owners.clear();
                b
            }
            None => Block {
                name,
                lines: Vec::new(),
                inlines: Vec::new(),
                ranges: Vec::new(),
                owners: Vec::new(),
            },
        };
        for l in it {
            if l.as_bytes().first() == Some(&b'I')
                && let Some(rest) = l.strip_prefix("INLINE ")
            {
                let mut f = Fields(Some(rest));
                for _ in 0..4 {
                    f.next();
                }
                // Past the four numbers, every field that is hex counts, in pairs.
                // More records than a u32 counts cannot fit a mapped file's lines.
                let owner = block.inlines.len() as u32;
                let held = block.ranges.len();
                let mut pending = None;
                while let Some(n) = f.next_hex() {
                    let Some(n) = n else { continue };
                    match pending.take() {
                        None => pending = Some(n),
                        Some(a) if holds_one(targets, a, n) => {
                            block.ranges.push((a, n));
                            block.owners.push(owner);
                        }
                        Some(_) => {}
                    }
                }
                if block.ranges.len() == held {
                    continue;
                }
                let mut f = Fields(Some(rest));
                let mut num = || f.next_dec().flatten();
                let (Some(depth), Some(call_line), Some(call_file), Some(origin)) =
                    (num(), num(), num(), num())
                else {
                    block.ranges.truncate(held);
                    block.owners.truncate(held);
                    continue;
                };
                block.inlines.push(Inline {
                    depth,
                    call_line,
                    call_file,
                    origin,
                });
            } else {
                let mut f = Fields(Some(l));
                let (Some(a), Some(s)) = (f.next_hex().flatten(), f.next_hex().flatten()) else {
                    continue;
                };
                if !holds_one(targets, a, s) {
                    continue;
                }
                if let (Some(line), Some(file)) = (
                    f.next_dec().flatten(),
                    f.next().and_then(|s| dec(s.trim_end())),
                ) {
                    block.lines.push(Line {
                        addr: a,
                        size: s,
                        line,
                        file,
                    });
                }
            }
        }
        // Sorted once, searched per address: a FUNC with 200 000 line records must not
        // cost a scan of them all for each address in it.
        block.lines.sort_by_key(|l| l.addr);
        Some(block)
    }

    /// The line record covering `addr`.
    pub(super) fn line_at(&self, addr: u64) -> Option<&Line> {
        let i = self.lines.partition_point(|l| l.addr <= addr);
        self.lines[..i]
            .iter()
            .rev()
            .take(4)
            .find(|l| addr < l.addr.saturating_add(l.size))
    }
}

//! A line program run for its rows' address, file and line only. A batch runs the line
//! program of every unit it asks about (millions of rows on a big binary); gimli's
//! `LineRows` builds each instruction and the whole row state. This runs the same state
//! machine on the bytes, for the programs compilers write. Anything else (a `define_file`,
//! VLIW operation indices, a malformed or oversized operand) stops it with
//! [`Stop::Gimli`]: the caller runs gimli's `LineRows` instead, so rows seen here are
//! always gimli's rows.

use gimli::LineProgramHeader;

use super::R;

pub(super) enum Stop {
    /// Not a program this runner reads exactly as gimli does: run gimli's.
    Gimli,
    /// The row callback's error.
    Row(gimli::Error),
}

struct Bytes<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    #[inline(always)]
    fn u8(&mut self) -> Result<u8, Stop> {
        let v = *self.b.get(self.pos).ok_or(Stop::Gimli)?;
        self.pos += 1;
        Ok(v)
    }

    /// At most 9 bytes (63 bits): gimli reads those to the same value; longer ones are
    /// left to it.
    #[inline(always)]
    fn uleb(&mut self) -> Result<u64, Stop> {
        let mut v = 0u64;
        for shift in (0..63).step_by(7) {
            let b = self.u8()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Stop::Gimli)
    }

    #[inline(always)]
    fn sleb(&mut self) -> Result<i64, Stop> {
        let mut v = 0i64;
        for shift in (0..63).step_by(7) {
            let b = self.u8()?;
            v |= i64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                if shift + 7 < 64 && b & 0x40 != 0 {
                    v |= !0 << (shift + 7);
                }
                return Ok(v);
            }
        }
        Err(Stop::Gimli)
    }

    #[inline(always)]
    fn uint(&mut self, n: usize, big_endian: bool) -> Result<u64, Stop> {
        let b = self.b.get(self.pos..self.pos + n).ok_or(Stop::Gimli)?;
        self.pos += n;
        Ok(super::skip::uint(b, big_endian))
    }
}

/// Runs `header`'s program, handing each row gimli's `LineRows::next_row` would give to
/// `on_row`: address, file index, line (0: none), whether it ends a sequence; and the end
/// of a sequence that a tombstone address cut short, which gimli drops.
pub(super) fn run(
    header: &LineProgramHeader<R>,
    mut on_row: impl FnMut(u64, u64, u64, bool) -> gimli::Result<()>,
) -> Result<(), Stop> {
    let size = header.address_size();
    let (base, range) = (header.opcode_base(), header.line_range());
    if header.maximum_operations_per_instruction() != 1
        || range == 0
        || !matches!(size, 1 | 2 | 4 | 8)
    {
        return Err(Stop::Gimli);
    }
    let mask = !0u64 >> (64 - u32::from(size) * 8);
    let min_tombstone = mask.wrapping_sub(1) & mask;
    let min_len = u64::from(header.minimum_instruction_length());
    let line_base = i64::from(header.line_base());
    let lengths = header.standard_opcode_lengths().slice();
    let program = header.raw_program_buf();
    let big_endian = gimli::Endianity::is_big_endian(gimli::Reader::endian(&program));
    let mut input = Bytes {
        b: program.slice(),
        pos: 0,
    };
    // gimli's row registers that matter here.
    let (mut address, mut file, mut line, mut tombstone) = (0u64, 1u64, 1u64, false);
    // Whether this sequence has given a row yet.
    let mut rows_in_sequence = false;
    let advance = |address: &mut u64, tombstone: bool, by: u64| -> Result<(), Stop> {
        if !tombstone {
            let a = address.checked_add(by).ok_or(Stop::Gimli)?;
            if a & !mask != 0 {
                return Err(Stop::Gimli);
            }
            *address = a;
        }
        Ok(())
    };
    let line_advance = |line: &mut u64, by: i64| {
        if by < 0 {
            *line = line.saturating_sub(by.unsigned_abs());
        } else {
            *line = line.wrapping_add(by as u64);
        }
    };
    // Each special opcode's line and address advance, worked out once per program: a
    // division per row was a sixth of this runner's time on a big C++ library.
    let mut special = [(0i64, 0u64); 256];
    for (opcode, advances) in special.iter_mut().enumerate().skip(usize::from(base)) {
        let adjusted = (opcode - usize::from(base)) as u8;
        *advances = (
            line_base + i64::from(adjusted % range),
            min_len.wrapping_mul(u64::from(adjusted / range)),
        );
    }
    while input.pos < input.b.len() {
        let opcode = input.u8()?;
        let mut end = false;
        if opcode >= base {
            let (by_line, by_address) = special[usize::from(opcode)];
            line_advance(&mut line, by_line);
            advance(&mut address, tombstone, by_address)?;
        } else if opcode == 0 {
            let len = usize::try_from(input.uleb()?).map_err(|_| Stop::Gimli)?;
            let start = input.pos;
            let stop = start.checked_add(len).filter(|&e| e <= input.b.len());
            let stop = stop.ok_or(Stop::Gimli)?;
            let mut rest = Bytes {
                b: &input.b[..stop],
                pos: start,
            };
            match rest.u8()? {
                1 => end = true,
                2 => {
                    let a = rest.uint(usize::from(size), big_endian)?;
                    tombstone = a < address || a >= min_tombstone;
                    if !tombstone {
                        address = a;
                    }
                }
                3 if header.version() <= 4 => return Err(Stop::Gimli),
                4 => {
                    rest.uleb()?;
                }
                _ => {}
            }
            input.pos = stop;
            if !end {
                continue;
            }
        } else {
            match opcode {
                1 => {}
                2 => {
                    let by = input.uleb()?;
                    advance(&mut address, tombstone, min_len.wrapping_mul(by))?;
                    continue;
                }
                3 => {
                    let by = input.sleb()?;
                    line_advance(&mut line, by);
                    continue;
                }
                4 => {
                    file = input.uleb()?;
                    continue;
                }
                5 | 12 => {
                    input.uleb()?;
                    continue;
                }
                6 | 7 | 10 | 11 => continue,
                8 => {
                    let by = min_len.wrapping_mul(u64::from((255 - base) / range));
                    advance(&mut address, tombstone, by)?;
                    continue;
                }
                9 => {
                    let by = input.uint(2, big_endian)?;
                    advance(&mut address, tombstone, by)?;
                    continue;
                }
                _ => {
                    let n = *lengths.get(usize::from(opcode) - 1).ok_or(Stop::Gimli)?;
                    for _ in 0..n {
                        input.uleb()?;
                    }
                    continue;
                }
            }
        }
        // A row (special opcode, copy, end of sequence); rows after a tombstone address
        // are dropped. Not the end of their sequence when rows came before the tombstone
        // (gimli drops it too): the next sequence's rows would join those, and a linker
        // that puts discarded functions at 0 (gcc's COMDAT copies, a `.cold` part's
        // neighbours) would make one sequence of [0, end of the next): no row found in
        // it, or the wrong one. It ends where its last row was, as in llvm-symbolizer.
        if !tombstone {
            on_row(address, file, line, end).map_err(Stop::Row)?;
            rows_in_sequence = !end;
        } else if end && rows_in_sequence {
            on_row(address, file, line, end).map_err(Stop::Row)?;
        }
        if end {
            (address, file, line, tombstone) = (0, 1, 1, false);
            rows_in_sequence = false;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{READER_FIXTURES, fixture_dwarf};
    use super::*;

    type Rows = Vec<(u64, u64, u64, bool)>;

    /// The program's rows by this runner (or where it stopped) and by gimli.
    fn both(program: &gimli::IncompleteLineProgram<R>) -> (Result<Rows, Stop>, Rows) {
        let mut ours = Vec::new();
        let ran = run(program.header(), |a, f, l, e| {
            ours.push((a, f, l, e));
            Ok(())
        });
        let mut theirs = Vec::new();
        let mut rows = program.clone().rows();
        while let Some((_, r)) = rows.next_row().unwrap() {
            let line = r.line().map_or(0, std::num::NonZeroU64::get);
            theirs.push((r.address(), r.file_index(), line, r.end_sequence()));
        }
        (ran.map(|()| ours), theirs)
    }

    /// Every row of every line program of `path`, by this runner and by gimli.
    fn same_rows_as_gimli(path: &str) -> usize {
        let dwarf = fixture_dwarf(path);
        let mut headers = dwarf.units();
        let mut total = 0;
        while let Some(header) = headers.next().unwrap() {
            let unit = dwarf.unit(header).unwrap();
            let Some(program) = unit.line_program.as_ref() else {
                continue;
            };
            let (Ok(ours), theirs) = both(program) else {
                panic!("{path}: the runner gave up on a compiler's program");
            };
            assert_eq!(ours, theirs, "{path}");
            total += ours.len();
        }
        total
    }

    #[test]
    fn rows_are_gimlis_rows() {
        for path in READER_FIXTURES {
            assert!(same_rows_as_gimli(path) > 10, "{path}");
        }
    }

    /// A DWARF 4 line program: `maximum_operations_per_instruction`, then `body` (two files,
    /// opcode 13 declared with 2 operands).
    fn program(max_ops: u8, body: &[u8]) -> gimli::IncompleteLineProgram<R> {
        let mut header: Vec<u8> = vec![1, max_ops, 1, (-5i8) as u8, 14, 14];
        header.extend([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2]);
        header.extend(b"dir\0\0");
        header.extend(b"a.c\0\x01\0\0b.c\0\x01\0\0\0");
        let mut unit: Vec<u8> = 4u16.to_le_bytes().to_vec();
        unit.extend((header.len() as u32).to_le_bytes());
        unit.extend(header);
        unit.extend(body);
        let mut bytes = (unit.len() as u32).to_le_bytes().to_vec();
        bytes.extend(unit);
        let section = gimli::DebugLine::from(R::new(
            crate::resolve::bytes::Bytes::owned(bytes),
            gimli::RunTimeEndian::Little,
        ));
        section
            .program(gimli::DebugLineOffset(0), 8, None, None)
            .unwrap()
    }

    fn set_address(p: &mut Vec<u8>, a: u64) {
        p.extend([0, 9, 2]);
        p.extend(a.to_le_bytes());
    }

    /// A hand-written program with every opcode kind, tombstones and an opcode the header
    /// declares: the runner's rows against gimli's.
    #[test]
    fn every_opcode_gives_gimlis_rows() {
        let mut body: Vec<u8> = Vec::new();
        set_address(&mut body, 0x1000);
        body.extend([0x20, 0x31]); // special opcodes
        body.extend([2, 0x90, 0x01]); // advance_pc 144
        body.extend([3, 0x7d]); // advance_line -3
        body.extend([4, 2, 1]); // set_file 2, copy
        body.extend([5, 7, 6, 7, 10, 11, 12, 1]); // column, stmt, block, prologue, epilogue, isa
        body.extend([8, 1]); // const_add_pc, copy
        body.extend([9, 0x34, 0x12, 1]); // fixed_advance_pc 0x1234, copy
        body.extend([13, 0x81, 0x01, 5, 1]); // opcode 13 declared with 2 operands
        body.extend([0, 2, 4, 3]); // set_discriminator 3
        body.extend([0, 3, 0x80, 1, 2]); // an unknown extended opcode
        body.extend([0x45, 3, 0x64]); // special, advance_line -28 (below line 1)
        body.extend([0, 1, 1]); // end_sequence
        set_address(&mut body, 0x4000);
        body.extend([0x20]);
        set_address(&mut body, 0x3000); // lower than the row before: a tombstone
        body.extend([0x20, 1, 0, 1, 1]); // rows dropped; the sequence ends at its last row
        set_address(&mut body, 0x5000);
        body.extend([0x21, 2, 0x10, 1]);
        body.extend([0, 1, 1]);
        set_address(&mut body, u64::MAX); // the DWARF 5 tombstone
        body.extend([0x20, 0, 1, 1]);
        set_address(&mut body, 0x6000);
        body.extend([0x20]); // a sequence without end: its rows still come

        let (Ok(ours), theirs) = both(&program(1, &body)) else {
            panic!("the runner gave up");
        };
        // gimli's rows, and the end of the sequence the tombstone cut short, which gimli
        // drops (its rows would join the next sequence's).
        let cut = theirs.iter().position(|r| r.0 >= 0x4000).unwrap();
        let mut expected = theirs.clone();
        expected.insert(cut + 1, (theirs[cut].0, theirs[cut].1, theirs[cut].2, true));
        assert_eq!(ours, expected);
        assert!(!theirs[cut + 1].3 && theirs[cut + 1].0 > 0x5000, "{theirs:x?}");
        assert!(ours.len() > 10, "{ours:x?}");
        assert!(ours.iter().all(|r| !(0x3000..0x4000).contains(&r.0)));
    }

    /// What it does not read as gimli does goes back to gimli: a `define_file` (it adds to
    /// the file table) and VLIW operation indices.
    #[test]
    fn programs_it_does_not_read_go_back_to_gimli() {
        let mut body: Vec<u8> = Vec::new();
        set_address(&mut body, 0x1000);
        body.extend([0x20]);
        body.extend([0, 8, 3, b'c', b'.', b'c', 0, 1, 0, 0]); // define_file c.c
        body.extend([4, 3, 0x21, 0, 1, 1]);
        assert!(matches!(both(&program(1, &body)).0, Err(Stop::Gimli)));
        let mut body: Vec<u8> = Vec::new();
        set_address(&mut body, 0x1000);
        body.extend([0x20, 0x31, 0, 1, 1]);
        let (ran, theirs) = both(&program(4, &body));
        assert!(matches!(ran, Err(Stop::Gimli)));
        assert!(!theirs.is_empty());
    }
}

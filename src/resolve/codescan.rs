//! Function starts in x86 code that no table lists (leaf functions of x64 PE images, which
//! `.pdata` omits; every function of a 32-bit image), found by decoding the code in one
//! linear pass: compilers put no data in x86 `.text`, and the decoder resynchronises
//! after the rare byte it cannot decode.
//!
//! Code after an instruction that never falls through (`ret`, `jmp`, `ud2`, `int3`), past
//! any padding (`int3`, NOPs), is reached only by a jump, a call or a pointer. It is a
//! function's start when something calls or points at it, when `int3` padding precedes it
//! (lld's filler between object files), or when no jump in the code reaches it and it is
//! 16-byte aligned (a loop head after a `jmp` is aligned the same way, but is jumped to).

use iced_x86::{Decoder, DecoderOptions, Mnemonic};

use super::range::Range;

/// What one pass over the code sections found.
#[derive(Default)]
pub struct Scan {
    /// (start, where the padding before it begins) of code after a terminator.
    candidates: Vec<(u64, u64)>,
    /// Targets of calls and RIP-relative addresses (`lea`): function starts.
    called: Vec<u64>,
    /// Targets of jumps.
    jumped: Vec<u64>,
    /// Candidates that follow `int3` padding.
    after_int3: Vec<u64>,
    /// Where each section's trailing padding begins.
    tails: Vec<u64>,
}

impl Scan {
    /// Decodes `code`, mapped at `addr`, as `bitness`-bit x86.
    pub fn add_section(&mut self, code: &[u8], addr: u64, bitness: u32) {
        let mut decoder = Decoder::with_ip(bitness, code, addr, DecoderOptions::NONE);
        // The padding so far after a terminator: (where it began, any int3 in it).
        let mut padding: Option<(u64, bool)> = None;
        while decoder.can_decode() {
            let ins = decoder.decode();
            let m = ins.mnemonic();
            if matches!(m, Mnemonic::Call) && ins.near_branch_target() != 0 {
                self.called.push(ins.near_branch_target());
            } else if ins.near_branch_target() != 0 {
                self.jumped.push(ins.near_branch_target());
            }
            if ins.is_ip_rel_memory_operand() && m == Mnemonic::Lea {
                self.called.push(ins.ip_rel_memory_address());
            }
            let pad = matches!(m, Mnemonic::Nop | Mnemonic::Int3);
            match padding {
                Some((from, int3)) if pad => padding = Some((from, int3 || m == Mnemonic::Int3)),
                Some((from, int3)) => {
                    self.candidates.push((ins.ip(), from));
                    if int3 {
                        self.after_int3.push(ins.ip());
                    }
                    padding = None;
                }
                None => {}
            }
            if padding.is_none()
                && matches!(
                    m,
                    Mnemonic::Ret | Mnemonic::Ud2 | Mnemonic::Int3 | Mnemonic::Jmp
                )
            {
                padding = Some((ins.next_ip(), m == Mnemonic::Int3));
            }
        }
        if let Some((from, _)) = padding {
            self.tails.push(from);
        }
    }

    /// The functions of `[start, end)` code ranges: each range split at the starts found
    /// (besides `known` starts: exports, unwind-table entries, the entry point, pointers in
    /// data; and code after padding that begins at a `known_end`, the end of an unwind
    /// table's function), each function ending where the padding before the next begins.
    pub fn ranges(
        mut self,
        sections: &[(u64, u64)],
        known: &[u64],
        known_ends: &[u64],
    ) -> Vec<Range> {
        for v in [
            &mut self.called,
            &mut self.jumped,
            &mut self.after_int3,
            &mut self.tails,
        ] {
            v.sort_unstable();
            v.dedup();
        }
        self.candidates.sort_unstable();
        let has = |v: &[u64], a: u64| v.binary_search(&a).is_ok();
        let mut out = Vec::new();
        for &(s, e) in sections {
            let mut start = s;
            let from = self.candidates.partition_point(|c| c.0 <= s);
            let to = self.candidates.partition_point(|c| c.0 < e);
            for &(c, pad) in &self.candidates[from..to.max(from)] {
                let split = has(&self.called, c)
                    || has(known, c)
                    || has(known_ends, pad)
                    || has(&self.after_int3, c)
                    || (c % 16 == 0 && !has(&self.jumped, c));
                if split {
                    if pad > start {
                        out.push(Range::new(start, pad));
                    }
                    start = c;
                }
            }
            // The last function ends before the section's trailing padding.
            let i = self.tails.partition_point(|&t| t <= start);
            let tail = self.tails.get(i).copied().filter(|&t| t <= e).unwrap_or(e);
            if tail > start {
                out.push(Range::new(start, tail));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(code: &[u8], known: &[u64]) -> Vec<(u64, u64)> {
        let mut s = Scan::default();
        s.add_section(code, 0x1000, 64);
        s.ranges(&[(0x1000, 0x1000 + code.len() as u64)], known, &[])
            .into_iter()
            .map(|r| (r.start, r.end))
            .collect()
    }

    #[test]
    fn splits_at_padding_after_a_terminator() {
        let mut code = vec![0u8; 0x40];
        // f: xor eax,eax; ret; int3 padding.
        code[..3].copy_from_slice(&[0x31, 0xc0, 0xc3]);
        code[3..0x10].fill(0xcc);
        // g at 0x10: jmp +0x0c (to 0x20), NOPs, loop head at 0x20 (jumped to): not a start.
        code[0x10..0x12].copy_from_slice(&[0xeb, 0x0e]);
        code[0x12..0x20].copy_from_slice(&[
            0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x0f, 0x1f, 0x00,
        ]);
        code[0x20..0x23].copy_from_slice(&[0x31, 0xc0, 0xc3]);
        // NOPs, then h at 0x30, reached by no jump: a start.
        code[0x23..0x30].copy_from_slice(&[
            0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x0f, 0x1f, 0x00,
        ]);
        code[0x30..0x33].copy_from_slice(&[0x31, 0xc0, 0xc3]);
        code[0x33..].fill(0xcc);
        assert_eq!(
            ranges(&code, &[]),
            [(0x1000, 0x1003), (0x1010, 0x1023), (0x1030, 0x1033)]
        );
    }
}

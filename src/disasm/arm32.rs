//! 32-bit ARM (ARM and Thumb-2) with yaxpeax-arm, plus the VFP instructions it does not
//! decode (hard-float code is full of them). Which bytes are ARM code, Thumb code or data
//! (literal pools, jump tables) comes from the ELF mapping symbols (`$a`, `$t`, `$d`) or,
//! in a stripped library, from the low bit of its function symbols: see [`Mode`]. Data is
//! shown as llvm-objdump shows it: `.word`, then `.short`/`.byte` for a shorter tail.
//!
//! Branch targets are worked out from the encodings here (yaxpeax's offsets do not all
//! count from the same place) and written as module offsets, as llvm-objdump writes them;
//! registers are spelled as LLVM spells them (`r9`..`r12`, not `sb`, `fp`, `ip`).

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv7::{ConditionCode, InstDecoder, Instruction, Opcode};

use super::Decoded;

/// What the bytes from a module offset on are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Arm,
    Thumb,
    Data,
}

const CONDS: [&str; 16] = [
    "eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "", "",
];

fn condition_code(c: u8) -> ConditionCode {
    use ConditionCode::*;
    [
        EQ, NE, HS, LO, MI, PL, VS, VC, HI, LS, GE, LT, GT, LE, AL, AL,
    ][usize::from(c & 15)]
}

/// `modes`: (module offset, mode) sorted by offset; the bytes before the first entry (or
/// all of them, when there is none) are taken as Thumb, what Android and Debian build.
pub fn disassemble(code: &[u8], start: u64, len: u64, modes: &[(u64, Mode)]) -> Vec<Decoded> {
    let arm = InstDecoder::armv7();
    let thumb = InstDecoder::armv7_thumb();
    let mut out = Vec::new();
    let mut pos = 0usize;
    // The conditions of the instructions left in the current IT block, next first.
    let mut it: Vec<u8> = Vec::new();
    while (pos as u64) < len && pos < code.len() {
        let pc = start.wrapping_add(pos as u64);
        let i = modes.partition_point(|m| m.0 <= pc);
        let mode = if i == 0 { Mode::Thumb } else { modes[i - 1].1 };
        // Where this mode ends, as a position in `code`.
        let end = modes
            .get(i)
            .and_then(|m| usize::try_from(m.0.checked_sub(start)?).ok())
            .map_or(code.len(), |e| e.min(code.len()));
        let rest = &code[pos..end.max(pos + 1).min(code.len())];
        let (size, text, target) = match mode {
            Mode::Data => {
                it.clear();
                data(rest)
            }
            Mode::Arm => {
                it.clear();
                arm_one(&arm, rest, pc)
            }
            Mode::Thumb => thumb_one(&thumb, rest, pc, &mut it),
        };
        out.push(Decoded {
            offset: pos as u64,
            text,
            target,
        });
        pos += size;
    }
    out
}

fn data(rest: &[u8]) -> (usize, String, Option<u64>) {
    match *rest {
        [a, b, c, d, ..] => (
            4,
            format!(".word {:#010x}", u32::from_le_bytes([a, b, c, d])),
            None,
        ),
        [a, b, ..] => (
            2,
            format!(".short {:#06x}", u16::from_le_bytes([a, b])),
            None,
        ),
        [a, ..] => (1, format!(".byte {a:#04x}"), None),
        [] => (1, ".byte 0x00".into(), None),
    }
}

fn bytes_entry(b: &[u8]) -> String {
    let list: Vec<String> = b.iter().map(|x| format!("{x:#04x}")).collect();
    format!(".byte {}", list.join(", "))
}

fn sign_extend(v: u32, bits: u32) -> i64 {
    (((v << (32 - bits)) as i32) >> (32 - bits)) as i64
}

fn arm_one(dec: &InstDecoder, rest: &[u8], pc: u64) -> (usize, String, Option<u64>) {
    let Some(b) = rest.get(..4) else {
        return (rest.len(), bytes_entry(rest), None);
    };
    let word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    // B, BL (cond 101L) and BLX (1111 101H): PC reads as the instruction's address + 8.
    let target = if (word >> 25) & 7 == 0b101 {
        let mut off = sign_extend(word & 0xff_ffff, 24) << 2;
        if word >> 28 == 0xf {
            off |= i64::from((word >> 24) & 1) << 1;
        }
        Some(pc.wrapping_add(8).wrapping_add(off as u64) & 0xffff_ffff)
    } else {
        None
    };
    let cond = CONDS[(word >> 28) as usize];
    let text = match dec.decode(&mut U8Reader::new(b)) {
        // yaxpeax writes MOVW (cond 0011 0000) as `mov`.
        Ok(inst) if inst.opcode != Opcode::Invalid && (word >> 20) & 0xff == 0x30 => {
            format_inst(&inst, target).replacen("mov", "movw", 1)
        }
        Ok(inst) if inst.opcode != Opcode::Invalid => {
            llvm_aliases(format_inst(&inst, target), (word >> 25) & 7 == 0b010)
        }
        // The hints yaxpeax leaves undecoded (`nop` is padding between ARM functions).
        _ if word & 0x0fff_ff00 == 0x0320_f000 && word & 0xff < 5 => {
            let hint = ["nop", "yield", "wfe", "wfi", "sev"][(word & 0xff) as usize];
            format!("{hint}{cond}")
        }
        _ => match vfp(word, cond) {
            Some(t) => t,
            None => bytes_entry(b),
        },
    };
    (4, text, target)
}

fn thumb_one(
    dec: &InstDecoder,
    rest: &[u8],
    pc: u64,
    it: &mut Vec<u8>,
) -> (usize, String, Option<u64>) {
    let Some(h) = rest.get(..2) else {
        return (rest.len(), bytes_entry(rest), None);
    };
    let hw1 = u16::from_le_bytes([h[0], h[1]]);
    let wide = matches!(hw1 >> 11, 0b11101..=0b11111);
    let size = if wide { 4 } else { 2 };
    let Some(b) = rest.get(..size) else {
        it.clear();
        return (rest.len(), bytes_entry(rest), None);
    };
    let cond = if it.is_empty() {
        None
    } else {
        Some(it.remove(0))
    };
    let hw2 = if wide {
        u16::from_le_bytes([b[2], b[3]])
    } else {
        0
    };
    let target = thumb_target(hw1, hw2, wide, pc);
    let text = match dec.decode(&mut U8Reader::new(b)) {
        Ok(mut inst) => {
            if inst.opcode == Opcode::IT {
                *it = it_conditions(hw1);
            } else if let Some(c) = cond {
                // Inside an IT block: the block's condition, and 16-bit instructions that
                // set flags outside one do not inside.
                inst.condition = condition_code(c);
                if !wide {
                    inst.s = false;
                }
            }
            let mut text = llvm_aliases(format_inst(&inst, target), wide);
            // BL has only a 32-bit encoding: LLVM writes no `.w`.
            if let Some(rest) = text.strip_prefix("bl.w ") {
                text = format!("bl {rest}");
            }
            // yaxpeax writes MOVW (T3: 11110 i 10 0 1 0 0 imm4) as `mov`.
            if wide && hw1 & 0xfbf0 == 0xf240 {
                text.replacen("mov", "movw", 1)
            } else {
                text
            }
        }
        Err(_) => {
            let word = (u32::from(hw1) << 16) | u32::from(hw2);
            // Thumb VFP encodings are the ARM ones with 1110 where the condition goes.
            match (wide && hw1 >> 12 == 0xe)
                .then(|| vfp(word, cond.map_or("", |c| CONDS[usize::from(c)])))
                .flatten()
            {
                Some(t) => t,
                None => bytes_entry(b),
            }
        }
    };
    (size, text, target)
}

/// The conditions of the instructions an `IT` (hw1 = 1011 1111 cond mask) makes conditional.
fn it_conditions(hw1: u16) -> Vec<u8> {
    let first = ((hw1 >> 4) & 15) as u8;
    let mask = (hw1 & 15) as u8;
    if mask == 0 {
        return Vec::new();
    }
    let count = 4 - mask.trailing_zeros() as u8;
    let mut out = vec![first];
    for k in 1..count {
        let bit = (mask >> (4 - k)) & 1;
        out.push((first & !1) | bit);
    }
    out
}

/// The target of a Thumb B, BL, BLX, CBZ or CBNZ: PC reads as the address + 4.
fn thumb_target(hw1: u16, hw2: u16, wide: bool, pc: u64) -> Option<u64> {
    let base = pc.wrapping_add(4);
    let off: i64 = if !wide {
        let h = u32::from(hw1);
        if h >> 12 == 0b1101 && (h >> 8) & 15 < 14 {
            sign_extend(h & 0xff, 8) << 1
        } else if h >> 11 == 0b11100 {
            sign_extend(h & 0x7ff, 11) << 1
        } else if h & 0xf500 == 0xb100 {
            // CBZ/CBNZ: i:imm5:0, forward only.
            i64::from((((h >> 9) & 1) << 6) | (((h >> 3) & 0x1f) << 1))
        } else {
            return None;
        }
    } else {
        let (h1, h2) = (u32::from(hw1), u32::from(hw2));
        if h1 >> 11 != 0b11110 || h2 >> 15 != 1 {
            return None;
        }
        let s = (h1 >> 10) & 1;
        let j1 = (h2 >> 13) & 1;
        let j2 = (h2 >> 11) & 1;
        let imm11 = h2 & 0x7ff;
        match (h2 >> 14) & 1 == 1 || (h2 >> 12) & 1 == 1 {
            // B T3 (conditional): S:J2:J1:imm6:imm11:0; condition 111x is not a branch.
            false => {
                if (h1 >> 6) & 15 >= 14 {
                    return None;
                }
                let v = (s << 20) | (j2 << 19) | (j1 << 18) | ((h1 & 0x3f) << 12) | (imm11 << 1);
                sign_extend(v, 21)
            }
            // B T4, BL, BLX: S:I1:I2:imm10:imm11:0, I = NOT(J XOR S).
            true => {
                let i1 = 1 ^ (j1 ^ s);
                let i2 = 1 ^ (j2 ^ s);
                let v = (s << 24) | (i1 << 23) | (i2 << 22) | ((h1 & 0x3ff) << 12) | (imm11 << 1);
                let off = sign_extend(v, 25);
                if (h2 >> 12) & 1 == 0 && (h2 >> 14) & 1 == 1 {
                    // BLX to ARM code: from Align(PC, 4).
                    return Some((base & !3).wrapping_add(off as u64) & 0xffff_ffff);
                }
                off
            }
        }
    };
    Some(base.wrapping_add(off as u64) & 0xffff_ffff)
}

/// yaxpeax's text, with the branch target as a module offset and LLVM's register names.
fn format_inst(inst: &Instruction, target: Option<u64>) -> String {
    let text = inst.to_string();
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    // `$+0x10` / `$-0x10`: replaced by the target worked out from the encoding.
    if let (Some(t), Some(at)) = (target, rest.find('$')) {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let n = tail
            .char_indices()
            .skip(1)
            .find(|&(_, c)| !c.is_ascii_alphanumeric())
            .map_or(tail.len(), |(i, _)| i);
        out.push_str(&format!("{t:#x}"));
        rest = &tail[n..];
    }
    out.push_str(rest);
    rename_registers(&out)
}

/// Two spellings of LLVM's that yaxpeax does not use: a MOV of a shifted register is the
/// shift (`lsl r0, r0, #4`), and a push or pop of one register that is encoded as a
/// single STR/LDR (`single_transfer`: ARM's load/store word, any 32-bit Thumb one) is that
/// STR/LDR.
fn llvm_aliases(text: String, single_transfer: bool) -> String {
    let Some((mnemonic, operands)) = text.split_once(' ') else {
        return text;
    };
    if let Some(suffix) = mnemonic.strip_prefix("mov") {
        let parts: Vec<&str> = operands.split(", ").collect();
        if let [rd, rm, shift] = parts[..]
            && let Some((kind, amount)) = shift.split_once(' ')
            && matches!(kind, "lsl" | "lsr" | "asr" | "ror")
        {
            let amount = if amount.starts_with(|c: char| c.is_ascii_digit()) {
                format!("#{amount}")
            } else {
                amount.to_string()
            };
            return format!("{kind}{suffix} {rd}, {rm}, {amount}");
        }
    }
    if single_transfer
        && let Some(reg) = operands
            .strip_prefix('{')
            .and_then(|o| o.strip_suffix('}'))
            .filter(|r| !r.contains(','))
    {
        let base = mnemonic.trim_end_matches(".w");
        if let Some(cond) = base.strip_prefix("push") {
            return format!("str{cond} {reg}, [sp, #-0x4]!");
        }
        if let Some(cond) = base.strip_prefix("pop") {
            return format!("ldr{cond} {reg}, [sp], #4");
        }
    }
    text
}

fn rename_registers(text: &str) -> String {
    let Some((mnemonic, operands)) = text.split_once(' ') else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() + 4);
    out.push_str(mnemonic);
    out.push(' ');
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        out.push_str(match word.as_str() {
            "sb" => "r9",
            "sl" => "r10",
            "fp" => "r11",
            "ip" => "r12",
            w => w,
        });
        word.clear();
    };
    for c in operands.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// VFP (coprocessors 10 and 11) instructions in LLVM's spelling, from the 28 bits after
/// the condition; `cond` is the condition suffix. `None` for anything else (Advanced SIMD
/// is left undecoded).
fn vfp(w: u32, cond: &str) -> Option<String> {
    let bit = |n: u32| (w >> n) & 1;
    let field = |lo: u32, n: u32| (w >> lo) & ((1 << n) - 1);
    if field(9, 3) != 0b101 {
        // MRC/MCR to another coprocessor (p15: the thread pointer, the cycle counter).
        if field(24, 4) == 0b1110 && bit(4) == 1 {
            let m = if bit(20) == 1 { "mrc" } else { "mcr" };
            return Some(format!(
                "{m}{cond} p{}, #{}, {}, c{}, c{}, #{}",
                field(8, 4),
                field(21, 3),
                gpr(field(12, 4)),
                field(16, 4),
                field(0, 4),
                field(5, 3)
            ));
        }
        return None;
    }
    let double = bit(8) == 1;
    let reg = |v: u32, extra: u32, dbl: bool| {
        if dbl {
            format!("d{}", (extra << 4) | v)
        } else {
            format!("s{}", (v << 1) | extra)
        }
    };
    let vd = reg(field(12, 4), bit(22), double);
    let vn = reg(field(16, 4), bit(7), double);
    let vm = reg(field(0, 4), bit(5), double);
    let ty = if double { ".f64" } else { ".f32" };
    let rt = |n: u32| gpr(field(n, 4));
    match field(24, 4) {
        0b1110 if bit(4) == 0 => {
            let opc1 = (bit(23) << 2) | field(20, 2);
            let op = bit(6);
            let three = |m: &str| Some(format!("{m}{cond}{ty} {vd}, {vn}, {vm}"));
            match (opc1, op) {
                (0b000, 0) => three("vmla"),
                (0b000, 1) => three("vmls"),
                (0b001, 0) => three("vnmls"),
                (0b001, 1) => three("vnmla"),
                (0b010, 0) => three("vmul"),
                (0b010, 1) => three("vnmul"),
                (0b011, 0) => three("vadd"),
                (0b011, 1) => three("vsub"),
                (0b100, 0) => three("vdiv"),
                (0b101, 0) => three("vfnms"),
                (0b101, 1) => three("vfnma"),
                (0b110, 0) => three("vfma"),
                (0b110, 1) => three("vfms"),
                (0b111, 0) => {
                    let imm8 = (field(16, 4) << 4) | field(0, 4);
                    Some(format!(
                        "vmov{cond}{ty} {vd}, #{}",
                        llvm_float(vfp_expand(imm8))
                    ))
                }
                (0b111, 1) => other_vfp(w, cond, ty, &vd, &vm),
                _ => None,
            }
        }
        0b1110 => {
            // Transfers between core and VFP registers.
            let single = reg(field(16, 4), bit(7), false);
            match (bit(8), field(21, 3), bit(20)) {
                (0, 0b000, 0) => Some(format!("vmov{cond} {single}, {}", rt(12))),
                (0, 0b000, 1) => Some(format!("vmov{cond} {}, {single}", rt(12))),
                (0, 0b111, 1) if field(12, 4) == 15 => {
                    Some(format!("vmrs{cond} APSR_nzcv, {}", sysreg(field(16, 4))))
                }
                (0, 0b111, 1) => Some(format!("vmrs{cond} {}, {}", rt(12), sysreg(field(16, 4)))),
                (0, 0b111, 0) => Some(format!("vmsr{cond} {}, {}", sysreg(field(16, 4)), rt(12))),
                (1, _, 0) if bit(23) == 1 => Some(format!("vdup{cond} {vn}, {}", rt(12))),
                (1, _, _) => Some(format!("vmov{cond} {}", rt(12))),
                _ => None,
            }
        }
        0b1100 | 0b1101 => {
            let (p, u, wb, l) = (bit(24), bit(23), bit(21), bit(20));
            let rn = field(16, 4);
            let imm8 = field(0, 8);
            if p == 0 && u == 0 {
                // 64-bit transfers between two core registers and VFP registers.
                if wb != 0 || field(6, 2) != 0 || bit(4) != 1 {
                    return None;
                }
                let (r1, r2) = (rt(12), rt(16));
                let v = if double {
                    vm.clone()
                } else {
                    let m = (field(0, 4) << 1) | bit(5);
                    format!("s{m}, s{}", m + 1)
                };
                return Some(if l == 1 {
                    format!("vmov{cond} {r1}, {r2}, {v}")
                } else {
                    format!("vmov{cond} {v}, {r1}, {r2}")
                });
            }
            if p == 1 && wb == 0 {
                let m = if l == 1 { "vldr" } else { "vstr" };
                let base = gpr(rn);
                let off = imm8 * 4;
                let addr = match (off, u) {
                    (0, 1) => format!("[{base}]"),
                    (_, 1) => format!("[{base}, #{off}]"),
                    _ => format!("[{base}, #-{off}]"),
                };
                return Some(format!("{m}{cond} {vd}, {addr}"));
            }
            // Multiple registers: VLDM/VSTM increment after, or decrement before.
            let count = if double { imm8 / 2 } else { imm8 };
            let first = if double {
                (bit(22) << 4) | field(12, 4)
            } else {
                (field(12, 4) << 1) | bit(22)
            };
            let list: Vec<String> = (first..first + count.max(1))
                .map(|r| format!("{}{r}", if double { 'd' } else { 's' }))
                .collect();
            let list = format!("{{{}}}", list.join(", "));
            let m = match (p, u, l) {
                (0, 1, 1) if wb == 1 && rn == 13 => return Some(format!("vpop{cond} {list}")),
                (1, 0, 0) if wb == 1 && rn == 13 => return Some(format!("vpush{cond} {list}")),
                (0, 1, 1) => "vldmia",
                (0, 1, 0) => "vstmia",
                (1, 0, 1) if wb == 1 => "vldmdb",
                (1, 0, 0) if wb == 1 => "vstmdb",
                _ => return None,
            };
            let wbs = if wb == 1 { "!" } else { "" };
            Some(format!("{m}{cond} {}{wbs}, {list}", gpr(rn)))
        }
        _ => None,
    }
}

/// The VFP data-processing instructions of opc1 = 1x11, opc3 = x1.
fn other_vfp(w: u32, cond: &str, ty: &str, vd: &str, vm: &str) -> Option<String> {
    let opc2 = (w >> 16) & 15;
    let op7 = (w >> 7) & 1;
    let double = (w >> 8) & 1 == 1;
    let d = (w >> 22) & 1;
    let vd_bits = (w >> 12) & 15;
    let m = w & 15;
    let mb = (w >> 5) & 1;
    let single = |v: u32, x: u32| format!("s{}", (v << 1) | x);
    let dreg = |v: u32, x: u32| format!("d{}", (x << 4) | v);
    match (opc2, op7) {
        (0b0000, 0) => Some(format!("vmov{cond}{ty} {vd}, {vm}")),
        (0b0000, 1) => Some(format!("vabs{cond}{ty} {vd}, {vm}")),
        (0b0001, 0) => Some(format!("vneg{cond}{ty} {vd}, {vm}")),
        (0b0001, 1) => Some(format!("vsqrt{cond}{ty} {vd}, {vm}")),
        (0b0010 | 0b0011, _) => {
            let t = if op7 == 1 { "vcvtt" } else { "vcvtb" };
            Some(format!("{t}{cond} {vd}, {vm}"))
        }
        (0b0100, _) | (0b0101, _) => {
            let e = if op7 == 1 { "vcmpe" } else { "vcmp" };
            if opc2 == 0b0101 {
                Some(format!("{e}{cond}{ty} {vd}, #0"))
            } else {
                Some(format!("{e}{cond}{ty} {vd}, {vm}"))
            }
        }
        (0b0111, 1) => {
            // Between single and double precision.
            if double {
                Some(format!("vcvt{cond}.f32.f64 {}, {vm}", single(vd_bits, d)))
            } else {
                Some(format!("vcvt{cond}.f64.f32 {}, {vm}", dreg(vd_bits, d)))
            }
        }
        (0b1000, _) => {
            // Integer (in a single register) to floating point.
            let from = if op7 == 1 { "s32" } else { "u32" };
            Some(format!("vcvt{cond}{ty}.{from} {vd}, {}", single(m, mb)))
        }
        (0b1100 | 0b1101, _) => {
            // Floating point to integer: round towards zero (`vcvt`) or as FPSCR says.
            let name = if op7 == 1 { "vcvt" } else { "vcvtr" };
            let to = if opc2 & 1 == 1 { "s32" } else { "u32" };
            Some(format!(
                "{name}{cond}.{to}{ty} {}, {vm}",
                single(vd_bits, d)
            ))
        }
        (0b1010 | 0b1011 | 0b1110 | 0b1111, _) => Some(format!("vcvt{cond}{ty} {vd}, {vd}")),
        _ => None,
    }
}

fn gpr(n: u32) -> String {
    match n {
        13 => "sp".into(),
        14 => "lr".into(),
        15 => "pc".into(),
        n => format!("r{n}"),
    }
}

fn sysreg(n: u32) -> &'static str {
    match n {
        0 => "fpsid",
        1 => "fpscr",
        6 => "mvfr1",
        7 => "mvfr0",
        8 => "fpexc",
        _ => "fpinst",
    }
}

/// VFPExpandImm: the value of the 8-bit immediate of VMOV (immediate).
fn vfp_expand(imm8: u32) -> f64 {
    let sign = if imm8 & 0x80 != 0 { -1.0 } else { 1.0 };
    // (-1)^sign * 2^exp * (16 + frac) / 16: the exponent's top bit is NOT(imm8<6>), so
    // it is bits 5:4 + 1 when imm8<6> is clear and bits 5:4 - 3 when it is set.
    let cd = ((imm8 >> 4) & 3) as i32;
    let exp = if (imm8 >> 6) & 1 == 1 { cd - 3 } else { cd + 1 };
    let frac = f64::from(imm8 & 15);
    sign * (16.0 + frac) / 16.0 * 2f64.powi(exp)
}

/// `2.000000e+00`, as LLVM prints a floating-point immediate.
fn llvm_float(v: f64) -> String {
    let s = format!("{v:.6e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vfp_immediates() {
        // imm8 0x00 = 2.0, 0x70 = 1.0, 0x60 = 0.5, 0x0c = 3.5
        assert_eq!(llvm_float(vfp_expand(0x00)), "2.000000e+00");
        assert_eq!(llvm_float(vfp_expand(0x70)), "1.000000e+00");
        assert_eq!(llvm_float(vfp_expand(0x60)), "5.000000e-01");
        assert_eq!(llvm_float(vfp_expand(0x0c)), "3.500000e+00");
    }

    #[test]
    fn modes_targets_and_data() {
        // Thumb `bl` to itself, `bx lr`; ARM `bl` to itself; a literal pool word and a
        // 2-byte tail of data.
        let code = [
            0xff, 0xf7, 0xfe, 0xff, 0x70, 0x47, 0, 0, 0xfe, 0xff, 0xff, 0xeb, 0x78, 0x56, 0x34,
            0x12, 0xaa, 0xbb,
        ];
        let modes = [
            (0x1000, Mode::Thumb),
            (0x1008, Mode::Arm),
            (0x100c, Mode::Data),
        ];
        let got: Vec<(u64, String, Option<u64>)> =
            disassemble(&code, 0x1000, code.len() as u64, &modes)
                .into_iter()
                .map(|d| (d.offset, d.text, d.target))
                .collect();
        assert_eq!(got[0], (0, "bl 0x1000".into(), Some(0x1000)));
        assert_eq!(got[1].0, 4);
        assert_eq!(got[1].1, "bx lr");
        assert_eq!(got[3], (8, "bl 0x1008".into(), Some(0x1008)));
        assert_eq!(got[4], (12, ".word 0x12345678".into(), None));
        assert_eq!(got[5], (16, ".short 0xbbaa".into(), None));
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn any_bytes_decode_without_panic_and_in_order() {
        // Pseudo-random bytes in every mode: offsets strictly increase and stay in range.
        let mut x: u32 = 0x1234_5678;
        let code: Vec<u8> = (0..4096)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            })
            .collect();
        for modes in [
            vec![(0, Mode::Thumb)],
            vec![(0, Mode::Arm)],
            vec![
                (0, Mode::Thumb),
                (1001, Mode::Arm),
                (2003, Mode::Data),
                (3001, Mode::Thumb),
            ],
        ] {
            let got = disassemble(&code, 0, code.len() as u64, &modes);
            assert!(got.windows(2).all(|w| w[0].offset < w[1].offset));
            assert!(got.iter().all(|d| d.offset < code.len() as u64));
        }
    }

    #[test]
    fn it_blocks() {
        // itt eq; ite ne
        assert_eq!(it_conditions(0xbf04), vec![0, 0]);
        assert_eq!(it_conditions(0xbf14), vec![1, 0]);
    }
}

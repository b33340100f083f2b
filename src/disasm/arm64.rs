//! aarch64 with yaxpeax-arm. Its text writes PC-relative operands as `$+0x10`; they are
//! rewritten as the absolute module offset, as llvm-objdump shows them.

use yaxpeax_arch::{Decoder, U8Reader};
use yaxpeax_arm::armv8::a64::{InstDecoder, Opcode, Operand};

use super::{Decoded, byte};

pub fn disassemble(code: &[u8], start: u64, len: u64) -> Vec<Decoded> {
    let decoder = InstDecoder::default();
    let mut out = Vec::new();
    let mut pos = 0usize;
    while (pos as u64) < len && pos < code.len() {
        let Some(word) = code.get(pos..pos + 4) else {
            // A tail shorter than an instruction.
            out.extend(
                code[pos..]
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| byte((pos + i) as u64, b)),
            );
            break;
        };
        let pc = start.wrapping_add(pos as u64);
        match decoder.decode(&mut U8Reader::new(word)) {
            Ok(inst) => {
                let mut text = inst.to_string();
                let mut target = None;
                for op in &inst.operands {
                    if let Operand::PCOffset(off) = *op {
                        // ADRP counts in 4 KiB pages from the page of the instruction.
                        let from = if inst.opcode == Opcode::ADRP {
                            pc & !0xfff
                        } else {
                            pc
                        };
                        let to = from.wrapping_add(off as u64);
                        let shown = if off < 0 {
                            format!("$-{:#x}", off.wrapping_neg())
                        } else {
                            format!("$+{off:#x}")
                        };
                        text = text.replacen(&shown, &format!("{to:#x}"), 1);
                        target = Some(to);
                    }
                }
                out.push(Decoded {
                    offset: pos as u64,
                    text,
                    target,
                });
            }
            // An undefined word: one `.byte` entry for its four bytes, and on at the next
            // word, as llvm-objdump does (aarch64 instructions are aligned 4-byte words:
            // going on at the next byte would misread everything after).
            Err(_) => out.push(Decoded {
                offset: pos as u64,
                text: format!(
                    ".byte {:#04x}, {:#04x}, {:#04x}, {:#04x}",
                    word[0], word[1], word[2], word[3]
                ),
                target: None,
            }),
        }
        pos += 4;
    }
    out
}

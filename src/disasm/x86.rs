//! x86 and x86_64 with iced-x86, in Intel syntax close to `llvm-objdump -M intel`.

use iced_x86::{
    Decoder, DecoderOptions, Formatter, Instruction, IntelFormatter, MemorySizeOptions, OpKind,
};

use super::{Decoded, byte};

pub fn disassemble(bitness: u32, code: &[u8], start: u64, len: u64) -> Vec<Decoded> {
    let mut formatter = IntelFormatter::new();
    let o = formatter.options_mut();
    o.set_hex_prefix("0x");
    o.set_hex_suffix("");
    o.set_uppercase_hex(false);
    o.set_small_hex_numbers_in_decimal(false);
    o.set_space_after_operand_separator(true);
    o.set_space_between_memory_add_operators(true);
    o.set_show_branch_size(false);
    o.set_branch_leading_zeros(false);
    // `qword ptr [rsi + 0x8]` as llvm-objdump writes it, not `[rsi + 0x8]`.
    o.set_memory_size_options(MemorySizeOptions::Always);
    // `[0x4010]` rather than `[rip + 0x2ed6]`: the module offset is what one looks up.
    o.set_rip_relative_addresses(false);
    let mut out = Vec::new();
    let mut inst = Instruction::default();
    let mut pos = 0usize;
    while (pos as u64) < len && pos < code.len() {
        let ip = start.wrapping_add(pos as u64);
        let mut decoder = Decoder::with_ip(bitness, &code[pos..], ip, DecoderOptions::NONE);
        decoder.decode_out(&mut inst);
        if inst.is_invalid() {
            out.push(byte(pos as u64, code[pos]));
            pos += 1;
            continue;
        }
        let mut text = String::new();
        formatter.format(&inst, &mut text);
        let branch = inst.op_kinds().any(|k| {
            matches!(
                k,
                OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
            )
        });
        let target = if branch {
            Some(inst.near_branch_target())
        } else if inst.is_ip_rel_memory_operand() {
            Some(inst.ip_rel_memory_address())
        } else {
            None
        };
        out.push(Decoded {
            offset: pos as u64,
            text,
            target,
        });
        pos += inst.len();
    }
    out
}

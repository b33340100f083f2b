//! Disassembly for `/asm/v1`: code bytes in, one text line per instruction out. Addresses
//! are module offsets throughout (the decoders are told the module offset of the first
//! byte), so branch targets and PC-relative operands come out as module offsets too.

mod arm32;
mod arm64;
mod x86;

pub use arm32::Mode as ArmMode;

/// The architectures `/asm/v1` decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    I686,
    Aarch64,
    /// 32-bit ARM: ARM and Thumb-2 code.
    Arm,
}

impl Arch {
    /// The name the front-end and samply use.
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::I686 => "i686",
            Arch::Aarch64 => "aarch64",
            Arch::Arm => "arm",
        }
    }

    pub fn syntax(self) -> &'static str {
        match self {
            Arch::X86_64 | Arch::I686 => "Intel",
            Arch::Aarch64 | Arch::Arm => "ARM",
        }
    }

    pub fn from_object(arch: object::Architecture) -> Option<Arch> {
        match arch {
            object::Architecture::X86_64 => Some(Arch::X86_64),
            object::Architecture::I386 => Some(Arch::I686),
            object::Architecture::Aarch64 => Some(Arch::Aarch64),
            object::Architecture::Arm => Some(Arch::Arm),
            _ => None,
        }
    }
}

/// One decoded instruction (or one undecodable byte).
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// Bytes from the start of the disassembled range.
    pub offset: u64,
    pub text: String,
    /// The module offset a direct branch or call goes to, or that a PC-relative operand
    /// names: the caller may name the function there.
    pub target: Option<u64>,
}

/// Decodes the instructions that start in the first `len` bytes of `code`, whose first
/// byte is at module offset `start`. `code` may run on past `len` so that the last
/// instruction is decoded whole. `arm_modes` says which bytes of 32-bit ARM code are ARM,
/// Thumb or data (sorted by module offset; other architectures ignore it).
pub fn disassemble(
    arch: Arch,
    code: &[u8],
    start: u64,
    len: u64,
    arm_modes: &[(u64, ArmMode)],
) -> Vec<Decoded> {
    match arch {
        Arch::Arm => arm32::disassemble(code, start, len, arm_modes),
        Arch::X86_64 => x86::disassemble(64, code, start, len),
        Arch::I686 => x86::disassemble(32, code, start, len),
        Arch::Aarch64 => arm64::disassemble(code, start, len),
    }
}

/// The entry for a byte no instruction starts with: decoding goes on at the next byte.
fn byte(offset: u64, b: u8) -> Decoded {
    Decoded {
        offset,
        text: format!(".byte {b:#04x}"),
        target: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(arch: Arch, code: &[u8], start: u64) -> Vec<(u64, String, Option<u64>)> {
        disassemble(arch, code, start, code.len() as u64, &[])
            .into_iter()
            .map(|d| (d.offset, d.text, d.target))
            .collect()
    }

    #[test]
    fn x86_64_branches_are_module_offsets() {
        // push rbp; call +5 (rel32); jmp -2 (to itself); then a lone 0x0f (undecodable).
        let code = [0x55, 0xe8, 0x05, 0, 0, 0, 0xeb, 0xfe, 0x0f];
        let got = texts(Arch::X86_64, &code, 0x1000);
        assert_eq!(got[0], (0, "push rbp".into(), None));
        assert_eq!(got[1], (1, "call 0x100b".into(), Some(0x100b)));
        assert_eq!(got[2], (6, "jmp 0x1006".into(), Some(0x1006)));
        assert_eq!(got[3], (8, ".byte 0x0f".into(), None));
    }

    #[test]
    fn i686_decodes_32_bit_code() {
        // push ebp; mov ebp, esp; ret
        let got = texts(Arch::I686, &[0x55, 0x89, 0xe5, 0xc3], 0);
        let t: Vec<&str> = got.iter().map(|g| g.1.as_str()).collect();
        assert_eq!(t, ["push ebp", "mov ebp, esp", "ret"]);
    }

    #[test]
    fn aarch64_branches_and_bad_words() {
        // bl +8; ret; a word with no encoding; a trailing half word.
        let code = [
            0x02, 0x00, 0x00, 0x94, 0xc0, 0x03, 0x5f, 0xd6, 0xff, 0xff, 0xff, 0xff, 0x1f, 0x20,
        ];
        let got = texts(Arch::Aarch64, &code, 0x2000);
        assert_eq!(got[0], (0, "bl 0x2008".into(), Some(0x2008)));
        assert_eq!(got[1], (4, "ret".into(), None));
        assert!(got[2].1.starts_with(".byte"), "{:?}", got[2]);
        assert_eq!(got.last().map(|g| g.1.as_str()), Some(".byte 0x20"));
    }

    #[test]
    fn instructions_past_the_range_are_not_decoded() {
        let got = disassemble(Arch::X86_64, &[0x55, 0x48, 0x89, 0xe5, 0xc3], 0, 2, &[]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].text, "mov rbp, rsp");
    }
}

//! Names of x86-64 PLT stubs, as objdump spells them: `<name>@plt` for each stub and
//! `<PLT header>` for the first entry of `.plt`. A stub's name comes from the relocation of
//! the GOT slot it jumps through (`jmp *slot(%rip)`), or for the lazy stubs of `.plt`
//! beside a `.plt.sec` from its index in `.rela.plt`.

use std::collections::HashMap;

use object::{Object, ObjectSection, ObjectSymbol, ObjectSymbolTable};

use crate::resolve::symnames::{Names, Sym};
use crate::resolve::types::Text;

const R_X86_64_GLOB_DAT: u32 = 6;
const R_X86_64_JUMP_SLOT: u32 = 7;
const R_X86_64_IRELATIVE: u32 = 37;

/// (slot address, name) of each entry of a `.rela.*` section, in order; the names held
/// once in `names` (many relocations may name one symbol).
fn relocs(file: &object::File<'_>, section: &str, names: &mut Names) -> Vec<(u64, Option<Text>)> {
    let Some(data) = file.section_by_name(section).and_then(|s| s.data().ok()) else {
        return Vec::new();
    };
    let dynsym = file.dynamic_symbol_table();
    let mut out = Vec::new();
    for r in data.chunks_exact(24) {
        if names.full() {
            break;
        }
        let word = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().unwrap_or([0; 8]));
        let (offset, info, addend) = (word(0), word(8), word(16));
        let (sym, kind) = ((info >> 32) as usize, info as u32);
        let name = match kind {
            R_X86_64_JUMP_SLOT | R_X86_64_GLOB_DAT => dynsym
                .as_ref()
                .and_then(|t| t.symbol_by_index(object::SymbolIndex(sym)).ok())
                .and_then(|s| s.name().ok().map(|n| names.intern(n)))
                .filter(|n| !n.is_empty()),
            R_X86_64_IRELATIVE => Some(names.intern(&format!("*ABS*+{addend:#x}"))),
            _ => None,
        };
        out.push((offset, name));
    }
    out
}

/// The GOT slot a stub jumps through: the target of its first `jmp *disp32(%rip)`.
fn jump_slot(entry: &[u8], entry_addr: u64) -> Option<u64> {
    let at = entry.windows(2).position(|w| w == [0xff, 0x25])?;
    let disp = i32::from_le_bytes(entry.get(at + 2..at + 6)?.try_into().ok()?);
    Some(
        entry_addr
            .wrapping_add(at as u64 + 6)
            .wrapping_add(disp as i64 as u64),
    )
}

/// PLT stubs as sized symbols (address, size, name).
pub fn stubs(file: &object::File<'_>, names: &mut Names) -> Vec<Sym> {
    if file.architecture() != object::Architecture::X86_64 || !file.is_little_endian() {
        return Vec::new();
    }
    let rela_plt = relocs(file, ".rela.plt", names);
    let mut by_slot: HashMap<u64, Text> = HashMap::new();
    for (slot, name) in relocs(file, ".rela.dyn", names)
        .into_iter()
        .chain(rela_plt.clone())
    {
        if let Some(name) = name {
            by_slot.insert(slot, name);
        }
    }
    let has_sec = file.section_by_name(".plt.sec").is_some();
    let mut out = Vec::new();
    for name in [".plt", ".plt.sec", ".plt.got"] {
        let Some(section) = file.section_by_name(name) else {
            continue;
        };
        let Ok(data) = section.data() else { continue };
        // `.plt.got` stubs are 8 bytes, or 16 when they start with `endbr64` (IBT).
        let entsize = if name == ".plt.got" && !data.starts_with(&[0xf3, 0x0f, 0x1e, 0xfa]) {
            8
        } else {
            16
        };
        for (i, entry) in data.chunks(entsize).enumerate() {
            if names.full() {
                break;
            }
            let addr = section.address() + (i * entsize) as u64;
            let stub = if name == ".plt" && i == 0 {
                Some(names.intern("<PLT header>"))
            } else if name == ".plt" && has_sec {
                // Lazy-binding stubs: entry i serves the (i-1)th `.rela.plt` relocation.
                rela_plt
                    .get(i - 1)
                    .and_then(|r| r.1.clone())
                    .map(|n| names.intern(&format!("{n}@plt")))
            } else {
                jump_slot(entry, addr)
                    .and_then(|slot| by_slot.get(&slot))
                    .map(|n| names.intern(&format!("{n}@plt")))
            };
            if let Some(stub) = stub {
                out.push((addr, entry.len() as u64, stub));
            }
        }
    }
    out
}

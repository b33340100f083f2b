//! Function ranges and starts from the unwind and function-start tables that binaries keep
//! when stripped: ELF `.eh_frame` and `.debug_frame`, PE x64 `.pdata`, Mach-O
//! `LC_FUNCTION_STARTS`. Malformed tables give what could be read before the fault.

use gimli::{BaseAddresses, CieOrFde, UnwindSection};
use object::{Object, ObjectSection};

use super::funcs::Range;

/// Every FDE of an unwind section as a range of addresses.
fn fde_ranges<'a, S>(section: &S, bases: &BaseAddresses, out: &mut Vec<Range>)
where
    S: UnwindSection<gimli::EndianSlice<'a, gimli::RunTimeEndian>>,
{
    let mut entries = section.entries(bases);
    // A bound on entries so a corrupt table cannot loop long.
    for _ in 0..10_000_000 {
        match entries.next() {
            Ok(Some(CieOrFde::Fde(partial))) => {
                if let Ok(fde) = partial.parse(|s, b, o| s.cie_from_offset(b, o)) {
                    let start = fde.initial_address();
                    if let Some(end) = start.checked_add(fde.len())
                        && fde.len() > 0
                    {
                        out.push(Range::new(start, end));
                    }
                }
            }
            Ok(Some(CieOrFde::Cie(_))) => {}
            Ok(None) | Err(_) => break,
        }
    }
}

/// Function ranges of an ELF file from `.eh_frame` and `.debug_frame`.
pub fn elf_ranges(file: &object::File<'_>) -> Vec<Range> {
    let endian = super::elf::endian_of(file);
    let address_size = if file.is_64() { 8 } else { 4 };
    let section_addr = |name: &str| file.section_by_name(name).map_or(0, |s| s.address());
    let mut out = Vec::new();
    if let Some(s) = file.section_by_name(".eh_frame")
        && let Ok(data) = s.uncompressed_data()
    {
        let bases = BaseAddresses::default()
            .set_eh_frame(s.address())
            .set_eh_frame_hdr(section_addr(".eh_frame_hdr"))
            .set_text(section_addr(".text"))
            .set_got(section_addr(".got"));
        let mut eh = gimli::EhFrame::new(&data, endian);
        eh.set_address_size(address_size);
        fde_ranges(&eh, &bases, &mut out);
    }
    if let Some(s) = file.section_by_name(".debug_frame")
        && let Ok(data) = s.uncompressed_data()
    {
        let mut df = gimli::DebugFrame::new(&data, endian);
        df.set_address_size(address_size);
        fde_ranges(&df, &BaseAddresses::default(), &mut out);
    }
    out
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// Function ranges of a PE x64 image from its exception directory (`.pdata`), as
/// addresses (image base + RVA). A chained entry (a part of a function, e.g. its cold
/// code) points at its primary function.
pub fn pe_ranges(data: &[u8]) -> Vec<Range> {
    use object::read::pe::PeFile64;
    let Ok(pe) = PeFile64::parse(data) else {
        return Vec::new(); // 32-bit images have no .pdata
    };
    if pe.architecture() != object::Architecture::X86_64 {
        return Vec::new(); // ARM64 .pdata has another layout
    }
    let base = pe.relative_address_base();
    let sections = pe.section_table();
    let Some(dir) = pe
        .data_directories()
        .get(object::pe::IMAGE_DIRECTORY_ENTRY_EXCEPTION)
    else {
        return Vec::new();
    };
    let Ok(table) = dir.data(data, &sections) else {
        return Vec::new();
    };
    // The runtime function an unwind info chains to, if it does.
    let chained = |unwind_rva: u32| -> Option<(u32, u32, u32)> {
        let info = sections.pe_data_at(data, unwind_rva)?;
        let flags = info.first()? >> 3;
        if flags & 0x4 == 0 {
            return None; // not UNW_FLAG_CHAININFO
        }
        let codes = usize::from(*info.get(2)?);
        let at = 4 + 2 * ((codes + 1) & !1);
        Some((
            u32_at(info, at)?,
            u32_at(info, at + 4)?,
            u32_at(info, at + 8)?,
        ))
    };
    let mut out = Vec::with_capacity(table.len() / 12);
    for entry in table.chunks_exact(12) {
        let (Some(begin), Some(end), Some(unwind)) =
            (u32_at(entry, 0), u32_at(entry, 4), u32_at(entry, 8))
        else {
            continue;
        };
        if end <= begin {
            continue;
        }
        let mut primary = None;
        let mut next = unwind;
        // Chains are short; the bound stops a cycle in a corrupt file.
        for _ in 0..32 {
            match chained(next) {
                Some((b, e, u)) if e > b => {
                    primary = Some((base + u64::from(b), base + u64::from(e)));
                    next = u;
                }
                _ => break,
            }
        }
        out.push(Range {
            start: base + u64::from(begin),
            end: base + u64::from(end),
            primary,
        });
    }
    out
}

/// Function starts of a thin little-endian Mach-O from `LC_FUNCTION_STARTS` (ULEB128
/// deltas from the `__TEXT` segment's address).
pub fn macho_function_starts(member: &[u8], text_vmaddr: u64) -> Vec<u64> {
    const LC_FUNCTION_STARTS: u32 = 0x26;
    let header = match u32_at(member, 0) {
        Some(0xfeed_facf) => 32,
        Some(0xfeed_face) => 28,
        _ => return Vec::new(),
    };
    let ncmds = u32_at(member, 16).unwrap_or(0);
    let mut at = header;
    let mut out = Vec::new();
    for _ in 0..ncmds.min(65_536) {
        let (Some(cmd), Some(size)) = (u32_at(member, at), u32_at(member, at + 4)) else {
            break;
        };
        if cmd == LC_FUNCTION_STARTS
            && let (Some(off), Some(len)) = (u32_at(member, at + 8), u32_at(member, at + 12))
            && let Some(bytes) =
                member.get(off as usize..(off as usize).saturating_add(len as usize))
        {
            let mut addr = text_vmaddr;
            let (mut value, mut shift) = (0u64, 0u32);
            for &b in bytes {
                if shift < 64 {
                    value |= u64::from(b & 0x7f) << shift;
                }
                shift += 7;
                if b & 0x80 == 0 {
                    if value == 0 {
                        break; // the list ends with a zero delta (padding)
                    }
                    addr = addr.wrapping_add(value);
                    out.push(addr);
                    (value, shift) = (0, 0);
                }
            }
        }
        if size < 8 {
            break;
        }
        at += size as usize;
    }
    out
}

/// Functions of a PE code section found by their padding, for code that `.pdata` does not
/// list (leaf functions, 32-bit images): MSVC and lld fill the gap before each 16-byte
/// aligned function with `int3` (0xCC). A start is a 16-aligned byte after a run of 0xCC
/// that is at least 2 long or follows a `ret` (a lone 0xCC byte may be an operand); the
/// function ends where the run begins. The section's start is a start too.
pub fn pe_padding_ranges(code: &[u8], addr: u64) -> Vec<Range> {
    let mut starts = vec![0usize];
    let mut ends = Vec::new();
    let mut p = 16 - (addr % 16) as usize % 16;
    while p < code.len() {
        if code[p - 1] == 0xcc && code[p] != 0xcc {
            let mut run = p - 1;
            while run > 0 && code[run - 1] == 0xcc {
                run -= 1;
            }
            let len = p - run;
            if len >= 2 || (run > 0 && code[run - 1] == 0xc3) {
                ends.push(run);
                starts.push(p);
            }
        }
        p += 16;
    }
    // The last function ends before the section's trailing padding.
    let mut tail = code.len();
    while tail > 0 && code[tail - 1] == 0xcc {
        tail -= 1;
    }
    ends.push(tail.max(*starts.last().unwrap_or(&0)));
    starts
        .into_iter()
        .zip(ends)
        .filter(|(s, e)| e > s)
        .map(|(s, e)| Range::new(addr + s as u64, addr + e as u64))
        .collect()
}

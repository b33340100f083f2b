//! Function ranges and starts from the unwind and function-start tables that binaries keep
//! when stripped: ELF `.eh_frame` and `.debug_frame`, PE x64 `.pdata`, Mach-O
//! `LC_FUNCTION_STARTS`. Malformed tables give what could be read before the fault.

use gimli::{BaseAddresses, CieOrFde, UnwindSection};
use object::{Object, ObjectSection};

use super::range::Range;

/// Every FDE of an unwind section as a range of addresses.
async fn fde_ranges<'a, S>(section: &S, bases: &BaseAddresses, out: &mut Vec<Range>)
where
    S: UnwindSection<gimli::EndianSlice<'a, gimli::RunTimeEndian>>,
{
    let mut entries = section.entries(bases);
    // The CIE last read: a compiler writes one per object file and its FDEs after it, so
    // it is read once per object, not once per function (reading the same CIEs again was
    // 4 % of a libxul-sized library's first answer).
    let mut last: Option<(S::Offset, gimli::CommonInformationEntry<_>)> = None;
    // A bound on entries so a corrupt table cannot loop long.
    for i in 0..10_000_000 {
        if i % 2048 == 2047 {
            super::pace::pause().await;
        }
        match entries.next() {
            Ok(Some(CieOrFde::Fde(partial))) => {
                let parsed = partial.parse(|s, b, o| match &last {
                    Some((at, cie)) if *at == o => Ok(cie.clone()),
                    _ => {
                        let cie = s.cie_from_offset(b, o)?;
                        last = Some((o, cie.clone()));
                        Ok(cie)
                    }
                });
                if let Ok(fde) = parsed {
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

/// Function ranges of an ELF file from `.eh_frame` and `.debug_frame`, pausing every few
/// thousand entries ([`super::pace`]).
pub async fn elf_ranges(file: &object::File<'_>) -> Vec<Range> {
    let endian = super::section::endian_of(file);
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
        fde_ranges(&eh, &bases, &mut out).await;
    }
    if let Some(s) = file.section_by_name(".debug_frame")
        && let Ok(data) = s.uncompressed_data()
    {
        let mut df = gimli::DebugFrame::new(&data, endian);
        df.set_address_size(address_size);
        fde_ranges(&df, &BaseAddresses::default(), &mut out).await;
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
/// deltas from the `__TEXT` segment's address). `member` starts with the Mach-O header;
/// the command's data offset is into `linkedit` (`member` itself, except for an image of
/// a dyld shared cache, whose `__LINKEDIT` is shared and may be in another file).
pub fn macho_function_starts(member: &[u8], linkedit: &[u8], text_vmaddr: u64) -> Vec<u64> {
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
                linkedit.get(off as usize..(off as usize).saturating_add(len as usize))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn put(b: &mut [u8], at: usize, v: &[u8]) {
        b[at..at + v.len()].copy_from_slice(v);
    }

    /// A minimal PE32+ image: one section holding code, `.pdata` and unwind infos, with
    /// one function and a chained part of it (as MSVC emits for shrink-wrapped code).
    fn image() -> Vec<u8> {
        let mut b = vec![0u8; 0x400];
        put(&mut b, 0, b"MZ");
        put(&mut b, 0x3c, &0x40u32.to_le_bytes());
        put(&mut b, 0x40, b"PE\0\0");
        put(&mut b, 0x44, &0x8664u16.to_le_bytes()); // AMD64
        put(&mut b, 0x46, &1u16.to_le_bytes()); // one section
        put(&mut b, 0x54, &240u16.to_le_bytes()); // optional header size
        put(&mut b, 0x56, &0x2022u16.to_le_bytes());
        let opt = 0x58;
        put(&mut b, opt, &0x20bu16.to_le_bytes()); // PE32+
        put(&mut b, opt + 24, &0x1_8000_0000u64.to_le_bytes());
        put(&mut b, opt + 32, &0x1000u32.to_le_bytes());
        put(&mut b, opt + 36, &0x200u32.to_le_bytes());
        put(&mut b, opt + 56, &0x2000u32.to_le_bytes());
        put(&mut b, opt + 60, &0x200u32.to_le_bytes());
        put(&mut b, opt + 108, &16u32.to_le_bytes());
        put(&mut b, opt + 112 + 3 * 8, &0x1100u32.to_le_bytes()); // exception dir
        put(&mut b, opt + 112 + 3 * 8 + 4, &24u32.to_le_bytes());
        let sh = opt + 240;
        put(&mut b, sh, b".text\0\0\0");
        put(&mut b, sh + 8, &0x200u32.to_le_bytes());
        put(&mut b, sh + 12, &0x1000u32.to_le_bytes());
        put(&mut b, sh + 16, &0x200u32.to_le_bytes());
        put(&mut b, sh + 20, &0x200u32.to_le_bytes());
        put(&mut b, sh + 36, &0x6000_0020u32.to_le_bytes());
        let rva = |r: usize| 0x200 + r - 0x1000;
        for (i, (begin, end, info)) in [(0x1000u32, 0x1040u32, 0x1180u32), (0x1080, 0x10a0, 0x1190)]
            .into_iter()
            .enumerate()
        {
            let at = rva(0x1100) + 12 * i;
            put(&mut b, at, &begin.to_le_bytes());
            put(&mut b, at + 4, &end.to_le_bytes());
            put(&mut b, at + 8, &info.to_le_bytes());
        }
        put(&mut b, rva(0x1180), &[0x01, 0, 0, 0]);
        // UNW_FLAG_CHAININFO, no codes, then the primary's RUNTIME_FUNCTION.
        put(&mut b, rva(0x1190), &[0x01 | (4 << 3), 0, 0, 0]);
        put(&mut b, rva(0x1194), &0x1000u32.to_le_bytes());
        put(&mut b, rva(0x1198), &0x1040u32.to_le_bytes());
        put(&mut b, rva(0x119c), &0x1180u32.to_le_bytes());
        b
    }

    #[test]
    fn chained_pdata_entries_point_at_their_primary() {
        let base = 0x1_8000_0000;
        assert_eq!(
            pe_ranges(&image()),
            [
                Range::new(base + 0x1000, base + 0x1040),
                Range {
                    start: base + 0x1080,
                    end: base + 0x10a0,
                    primary: Some((base + 0x1000, base + 0x1040)),
                }
            ]
        );
    }

    #[test]
    fn corrupt_tables_give_no_panic() {
        let mut b = image();
        // The exception directory runs past the section, a chain points nowhere.
        put(
            &mut b,
            0x58 + 112 + 3 * 8 + 4,
            &0xffff_fff0u32.to_le_bytes(),
        );
        let _ = pe_ranges(&b);
        for cut in [0, 10, 0x60, 0x150, 0x300] {
            let _ = pe_ranges(&b[..cut]);
            let _ = macho_function_starts(&b[..cut], &b[..cut], 0);
        }
        let mut m = vec![0u8; 64];
        put(&mut m, 0, &0xfeed_facfu32.to_le_bytes());
        put(&mut m, 16, &3u32.to_le_bytes());
        put(&mut m, 32, &0x26u32.to_le_bytes());
        put(&mut m, 36, &16u32.to_le_bytes());
        put(&mut m, 40, &0xffff_0000u32.to_le_bytes());
        assert!(macho_function_starts(&m, &m, 0).is_empty());
    }
}

//! This process's vDSO image. Profiles list `[vdso]` as a library without a file; every
//! process of a machine has the same one (its ID is checked like any file's), and ours is
//! readable in memory.

/// A copy of the vDSO's ELF image, or `None` where there is none (not Linux).
pub fn image() -> Option<Vec<u8>> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getauxval only reads the auxiliary vector.
        let at = unsafe { libc::getauxval(libc::AT_SYSINFO_EHDR) } as usize;
        if at == 0 {
            return None;
        }
        // SAFETY: the kernel maps the whole vDSO image at `at`, readable, for the life of
        // the process; its ELF header says how far the image reaches (the section headers
        // come last), and no more than that is read.
        let header = unsafe { std::slice::from_raw_parts(at as *const u8, 64) };
        if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
            return None; // only 64-bit little-endian images are read here
        }
        let u16_at = |o: usize| usize::from(u16::from_le_bytes([header[o], header[o + 1]]));
        let shoff = u64::from_le_bytes(header[40..48].try_into().ok()?) as usize;
        let len = shoff.checked_add(u16_at(58) * u16_at(60))?;
        if !(64..=1 << 20).contains(&len) {
            return None;
        }
        // SAFETY: as above, `len` bytes of the mapped image.
        Some(unsafe { std::slice::from_raw_parts(at as *const u8, len) }.to_vec())
    }
    #[cfg(not(target_os = "linux"))]
    None
}

//! Debug IDs ("breakpad IDs") and code IDs, computed as SPEC section 5 says.

use std::fmt::Write;

fn hex_upper(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02X}");
    }
    s
}

pub fn hex_lower(bytes: &[u8]) -> String {
    hex_upper(bytes).to_ascii_lowercase()
}

/// The 16 bytes of a GUID-like identifier, printed with its first three fields swapped
/// when the file is little-endian (the identifier is read as a little-endian GUID): the
/// one byte swap of ELF build IDs, `.text` hashes and PE CodeView GUIDs.
pub fn guid_string(mut id: [u8; 16], little_endian: bool) -> String {
    if little_endian {
        id[0..4].reverse();
        id[4..6].reverse();
        id[6..8].reverse();
    }
    hex_upper(&id)
}

/// ELF: the debug ID from the GNU build ID (first 16 bytes, zero-padded), age 0.
pub fn elf_from_build_id(build_id: &[u8], little_endian: bool) -> String {
    let mut id = [0u8; 16];
    let n = build_id.len().min(16);
    id[..n].copy_from_slice(&build_id[..n]);
    format!("{}0", guid_string(id, little_endian))
}

/// ELF without a build ID: the first 4096 bytes of `.text` XORed into 16 bytes.
pub fn elf_from_text(text: &[u8], little_endian: bool) -> String {
    let mut id = [0u8; 16];
    for (i, b) in text.iter().take(4096).enumerate() {
        id[i % 16] ^= b;
    }
    format!("{}0", guid_string(id, little_endian))
}

/// IDs compare case-insensitively.
pub fn same_id(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// A well-formed debug ID: 33 or more hex digits (GUID + age).
pub fn is_valid(id: &str) -> bool {
    id.len() >= 33 && id.len() <= 40 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_example() {
        let build_id: Vec<u8> = (0..20)
            .map(|i| {
                u8::from_str_radix(
                    &"8d9b4a0f1e2c3d4e5f60718293a4b5c6d7e8f901"[i * 2..i * 2 + 2],
                    16,
                )
                .unwrap()
            })
            .collect();
        assert_eq!(
            elf_from_build_id(&build_id, true),
            "0F4A9B8D2C1E4E3D5F60718293A4B5C60"
        );
        assert_eq!(
            hex_lower(&build_id),
            "8d9b4a0f1e2c3d4e5f60718293a4b5c6d7e8f901"
        );
    }

    #[test]
    fn short_build_id_is_padded() {
        assert_eq!(
            elf_from_build_id(&[1, 2, 3, 4, 5, 6, 7, 8], true),
            "04030201060508070000000000000000".to_string() + "0"
        );
        assert!(is_valid("0F4A9B8D2C1E4E3D5F60718293A4B5C60"));
        assert!(!is_valid("xyz"));
    }
}

//! Debug IDs ("breakpad IDs") and code IDs, computed as SPEC section 5 says.

use std::cmp::Ordering;
use std::fmt::{self, Write};
use std::hash::{Hash, Hasher};

/// A debug ID ("breakpad ID") as a request or the profile gives it, made once where it
/// comes in. Compared, hashed and ordered by value: case-insensitively, as hex digits
/// are; shown (`Display`) upper-case. The text as given stays ([`Self::as_given`]): the
/// answer's `found_modules` keys and error messages repeat what the request said.
/// Anything is accepted: a malformed ID is that module's error ([`Self::is_valid`]), not
/// the request's.
#[derive(Clone, Default)]
pub struct DebugId(Box<str>);

impl DebugId {
    pub fn new(given: &str) -> DebugId {
        DebugId(given.into())
    }

    /// The ID as it was given.
    pub fn as_given(&self) -> &str {
        &self.0
    }

    /// Upper-case, as symbol server paths and caches spell it.
    pub fn upper(&self) -> String {
        self.0.to_ascii_uppercase()
    }

    /// Whether `other`, an ID computed from a file, is this one.
    pub fn is(&self, other: &str) -> bool {
        self.0.eq_ignore_ascii_case(other)
    }

    /// A well-formed debug ID: 33 to 40 hex digits (GUID + age).
    pub fn is_valid(&self) -> bool {
        is_valid(&self.0)
    }

    fn key(&self) -> impl Iterator<Item = u8> + '_ {
        self.0.bytes().map(|b| b.to_ascii_uppercase())
    }
}

impl From<&str> for DebugId {
    fn from(given: &str) -> DebugId {
        DebugId::new(given)
    }
}

impl From<String> for DebugId {
    fn from(given: String) -> DebugId {
        DebugId(given.into_boxed_str())
    }
}

impl PartialEq for DebugId {
    fn eq(&self, other: &DebugId) -> bool {
        // The same text (the usual case) needs no case folding.
        self.0 == other.0 || self.is(&other.0)
    }
}

impl Eq for DebugId {}

impl Hash for DebugId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // In one write where it fits (every well-formed ID does): the profile's libs are
        // indexed by ID, 100 000 of them in a big profile.
        let mut upper = [0u8; 48];
        match upper.get_mut(..self.0.len()) {
            Some(buf) => {
                buf.copy_from_slice(self.0.as_bytes());
                buf.make_ascii_uppercase();
                state.write(buf);
            }
            None => self.key().for_each(|b| state.write_u8(b)),
        }
        state.write_u8(0xff);
    }
}

impl Ord for DebugId {
    fn cmp(&self, other: &DebugId) -> Ordering {
        if self.0 == other.0 {
            return Ordering::Equal;
        }
        self.key().cmp(other.key())
    }
}

impl PartialOrd for DebugId {
    fn partial_cmp(&self, other: &DebugId) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for DebugId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.key() {
            f.write_char(b as char)?;
        }
        Ok(())
    }
}

impl fmt::Debug for DebugId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DebugId({:?})", self.0)
    }
}

pub fn hex_upper(bytes: &[u8]) -> String {
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
    fn debug_ids_compare_by_value() {
        use std::collections::HashMap;
        let lower = DebugId::new("0f4a9b8d2c1e4e3d5f60718293a4b5c60");
        let upper = DebugId::new("0F4A9B8D2C1E4E3D5F60718293A4B5C60");
        assert_eq!(lower, upper);
        assert_eq!(lower.cmp(&upper), Ordering::Equal);
        let mut map = HashMap::new();
        map.insert(lower.clone(), 1);
        assert_eq!(map.get(&upper), Some(&1));
        // Past the one-write buffer too.
        let long = "ab".repeat(40);
        map.insert(DebugId::new(&long), 2);
        assert_eq!(map.get(&DebugId::new(&long.to_uppercase())), Some(&2));
        assert_eq!(lower.to_string(), upper.as_given());
        assert_eq!(lower.as_given(), "0f4a9b8d2c1e4e3d5f60718293a4b5c60");
        assert!(lower.is("0F4A9B8D2C1E4E3D5F60718293A4B5C60"));
        assert_ne!(lower, DebugId::new("0F4A9B8D2C1E4E3D5F60718293A4B5C61"));
        assert!(lower.is_valid());
        assert!(!DebugId::new("xyz").is_valid());
    }

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

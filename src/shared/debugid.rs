//! Debug IDs ("breakpad IDs") and code IDs, computed as SPEC section 5 says.

use std::cmp::Ordering;
use std::fmt::{self, Write};
use std::hash::{Hash, Hasher};

/// A debug ID ("breakpad ID") as a request or the profile gives it, parsed once where it
/// comes in into its value: the GUID (or build ID prefix) and the age. Compared, hashed
/// and ordered by that value (`…A` and `…0A` are one ID; hex digits in any case); shown
/// (`Display`) in one canonical text. The answer's `found_modules` keys repeat what the
/// request said: the request keeps that text (`api/jobs.rs`), not this. A malformed ID
/// is kept as text, compared as text, and is that module's error ([`Self::is_valid`]), not
/// the whole request's.
#[derive(Clone, Default)]
pub struct DebugId {
    value: Option<IdValue>,
    given: Box<str>,
}

/// The value of a well-formed debug ID: 16 bytes of GUID and the age.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct IdValue {
    guid: [u8; 16],
    age: u32,
}

impl IdValue {
    /// 32 hex digits of GUID, then 1 to 8 of age.
    fn parse(text: &str) -> Option<IdValue> {
        if !is_valid(text) {
            return None;
        }
        let hex = text.as_bytes();
        let nibble = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
        let mut guid = [0u8; 16];
        for (i, g) in guid.iter_mut().enumerate() {
            *g = (nibble(hex[2 * i])? << 4) | nibble(hex[2 * i + 1])?;
        }
        let age = u32::from_str_radix(&text[32..], 16).ok()?;
        Some(IdValue { guid, age })
    }
}

/// What IDs are compared by: the value, else the text upper-cased.
#[derive(PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key<'a> {
    Value(IdValue),
    Text(std::borrow::Cow<'a, str>),
}

impl DebugId {
    pub fn new(given: &str) -> DebugId {
        DebugId {
            value: IdValue::parse(given),
            given: given.into(),
        }
    }

    /// The ID as a path component: `<debugName>/<ID>/…` in symbol stores, symbol servers
    /// and caches, upper-case. The one place a path is given an ID.
    pub fn path_component(&self) -> String {
        self.to_string()
    }

    /// Whether `other`, an ID computed from a file, is this one (by value).
    pub fn is(&self, other: &str) -> bool {
        match (self.value, IdValue::parse(other)) {
            (Some(a), Some(b)) => a == b,
            _ => self.given.eq_ignore_ascii_case(other),
        }
    }

    /// A well-formed debug ID: 33 to 40 hex digits (GUID + age).
    pub fn is_valid(&self) -> bool {
        self.value.is_some()
    }

    fn key(&self) -> Key<'_> {
        match self.value {
            Some(v) => Key::Value(v),
            None if self.given.bytes().any(|b| b.is_ascii_lowercase()) => {
                Key::Text(self.given.to_ascii_uppercase().into())
            }
            None => Key::Text((&*self.given).into()),
        }
    }
}

impl From<&str> for DebugId {
    fn from(given: &str) -> DebugId {
        DebugId::new(given)
    }
}

impl From<String> for DebugId {
    fn from(given: String) -> DebugId {
        DebugId::new(&given)
    }
}

impl PartialEq for DebugId {
    fn eq(&self, other: &DebugId) -> bool {
        match (self.value, other.value) {
            (Some(a), Some(b)) => a == b,
            (None, None) => self.given.eq_ignore_ascii_case(&other.given),
            _ => false,
        }
    }
}

impl Eq for DebugId {}

impl Hash for DebugId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl Ord for DebugId {
    fn cmp(&self, other: &DebugId) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for DebugId {
    fn partial_cmp(&self, other: &DebugId) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One text for one value: the GUID's 32 hex digits, then the age without leading zeros,
/// upper-case (`…0a` and `…A` are one ID, written `…A`); a malformed ID as given,
/// upper-case. Messages, sidecars and paths all write this.
impl fmt::Display for DebugId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.value {
            Some(IdValue { guid, age }) => {
                for b in guid {
                    write!(f, "{b:02X}")?;
                }
                write!(f, "{age:X}")
            }
            None => {
                for b in self.given.bytes() {
                    f.write_char(b.to_ascii_uppercase() as char)?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Debug for DebugId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DebugId({:?})", self.given)
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
        assert_eq!(lower.to_string(), upper.path_component());
        assert_eq!(lower.path_component(), "0F4A9B8D2C1E4E3D5F60718293A4B5C60");
        assert!(lower.is("0F4A9B8D2C1E4E3D5F60718293A4B5C60"));
        assert_ne!(lower, DebugId::new("0F4A9B8D2C1E4E3D5F60718293A4B5C61"));
        assert!(lower.is_valid());
        assert!(!DebugId::new("xyz").is_valid());
        // The age is a number: leading zeros do not make another ID.
        let short = DebugId::new("0F4A9B8D2C1E4E3D5F60718293A4B5C6A");
        let padded = DebugId::new("0F4A9B8D2C1E4E3D5F60718293A4B5C600a");
        assert_eq!(short, padded);
        // One value, one text, whichever way it was given.
        assert_eq!(padded.to_string(), "0F4A9B8D2C1E4E3D5F60718293A4B5C6A");
        assert_eq!(padded.path_component(), short.to_string());
        assert!(short.is("0f4a9b8d2c1e4e3d5f60718293a4b5c60000000A"));
        map.insert(short, 3);
        assert_eq!(map.get(&padded), Some(&3));
        // Malformed IDs are compared as text, never equal to a well-formed one.
        assert_eq!(DebugId::new("xyz"), DebugId::new("XYZ"));
        assert_ne!(DebugId::new("xyz"), lower);
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

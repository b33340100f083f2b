//! Symbol names of one module, each held once: symbol tables can point many symbols at one
//! name (N symbols sharing an L-byte name must not cost N×L), and caps on what a module's
//! names may take, past which the module is an error naming the cap instead of the
//! memory (or the time) of the whole server.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::types::{LoadError, LoadErrorKind, Text};

/// The names a module may hold, distinct bytes. The biggest tables measured here (README,
/// Security) hold 21 MB (libLLVM, 297 000 symbols) and 23 MB (librustc_driver); libxul's
/// are in the tens of MB. Real string tables hold each name about once, so their names
/// take about the table's size; past this a file's names multiply (symbols naming
/// different suffixes of one long string).
pub const MAX_NAME_BYTES: usize = 128 << 20;
/// The bytes of names read for a module's symbols: each name at a new place in a string
/// table is read and hashed (one place named by many symbols is read once), so this
/// bounds the time (libLLVM: 21 MB).
pub const MAX_NAME_READS: usize = 1 << 30;

/// A symbol before merging: address, size (0 when unknown), raw name.
pub type Sym = (u64, u64, Text);

/// Hashes a place (a string-table offset) with one multiply folded to 64 bits, keyed per
/// module: a tenth of SipHash's cost on the hundreds of thousands of symbols of a big
/// library, and no offsets a crafted file could choose to collide without the key.
#[derive(Clone, Copy)]
struct PlaceHasher {
    key: u64,
    hash: u64,
}

impl std::hash::Hasher for PlaceHasher {
    fn finish(&self) -> u64 {
        self.hash
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        let p = u128::from(v ^ self.hash ^ self.key) * u128::from(0x9E37_79B9_7F4A_7C15_u64 | 1);
        self.hash = (p as u64) ^ ((p >> 64) as u64);
    }
}

#[derive(Clone, Copy)]
struct PlaceKey(u64);

impl Default for PlaceKey {
    fn default() -> PlaceKey {
        use std::hash::BuildHasher;
        // std's per-process random keys, drawn once per module.
        PlaceKey(std::collections::hash_map::RandomState::new().hash_one(0u64))
    }
}

impl std::hash::BuildHasher for PlaceKey {
    type Hasher = PlaceHasher;
    fn build_hasher(&self) -> PlaceHasher {
        PlaceHasher {
            key: self.0,
            hash: 0,
        }
    }
}

/// The names of one module, interned.
pub struct Names {
    set: HashSet<Text>,
    /// Names by their place in the current file's string table ([`name_place`]).
    places: HashMap<u64, Text, PlaceKey>,
    caps: (usize, usize),
    held: usize,
    read: usize,
    /// Which cap was passed, once one was: every name after it is empty.
    over: Option<&'static str>,
    empty: Text,
}

impl Default for Names {
    fn default() -> Names {
        Names::with_caps(MAX_NAME_BYTES, MAX_NAME_READS)
    }
}

impl Names {
    /// Other caps than the module's (the sidecar's, the tests).
    pub fn with_caps(held: usize, read: usize) -> Names {
        Names {
            set: HashSet::new(),
            places: HashMap::default(),
            caps: (held, read),
            held: 0,
            read: 0,
            over: None,
            empty: Text::from(""),
        }
    }

    /// The module's one copy of `name`; empty once a cap is passed (a symbol with an empty
    /// name is no symbol, and [`Self::check`] then fails the module).
    pub fn intern(&mut self, name: &str) -> Text {
        if self.over.is_some() {
            return self.empty.clone();
        }
        self.read = self.read.saturating_add(name.len());
        if self.read > self.caps.1 {
            self.over = Some("read");
            return self.empty.clone();
        }
        if let Some(t) = self.set.get(name) {
            return t.clone();
        }
        self.held = self.held.saturating_add(name.len());
        if self.held > self.caps.0 {
            self.over = Some("held");
            return self.empty.clone();
        }
        let t = Text::from(name);
        self.set.insert(t.clone());
        t
    }

    /// Starts on another file (or string table): places mean other names there.
    pub fn new_file(&mut self) {
        self.places.clear();
    }

    /// Room for `n` more places at once: a libxul-sized table grown as it fills is
    /// rehashed whole several times, the last one a pause of milliseconds in a load that
    /// goes in slices ([`super::pace`]).
    pub fn reserve_places(&mut self, n: usize) {
        self.places.reserve(n);
    }

    /// A new copy of `name`, counted against the caps but not looked up among the names
    /// held: for a name at a place of a string table seen for the first time. Symbols that
    /// share a name share its place (one copy through `places`); equal names at different
    /// places take as many bytes in the file as here, so hashing every name to find them
    /// (a tenth of a cold request's time) buys nothing.
    fn hold(&mut self, name: &str) -> Text {
        if self.over.is_some() {
            return self.empty.clone();
        }
        self.read = self.read.saturating_add(name.len());
        self.held = self.held.saturating_add(name.len());
        if self.read > self.caps.1 {
            self.over = Some("read");
            return self.empty.clone();
        }
        if self.held > self.caps.0 {
            self.over = Some("held");
            return self.empty.clone();
        }
        Text::from(name)
    }

    /// The name at `place` of the current file's string table ([`name_place`]), read with
    /// `read` only the first time; `None` when `read` has none.
    pub fn intern_at<'n>(
        &mut self,
        place: Option<u64>,
        read: impl FnOnce() -> Option<&'n str>,
    ) -> Option<Text> {
        let Some(p) = place else {
            return Some(self.intern(read()?));
        };
        if let Some(t) = self.places.get(&p) {
            return Some(t.clone());
        }
        let t = self.hold(read()?);
        self.places.insert(p, t.clone());
        Some(t)
    }

    /// As [`Self::intern_at`], for names in bytes (not UTF-8: replaced).
    pub fn intern_bytes_at<'n>(
        &mut self,
        place: Option<u64>,
        read: impl FnOnce() -> Option<&'n [u8]>,
    ) -> Option<Text> {
        let Some(p) = place else {
            return Some(self.intern_bytes(read()?));
        };
        if let Some(t) = self.places.get(&p) {
            return Some(t.clone());
        }
        let t = match String::from_utf8_lossy(read()?) {
            std::borrow::Cow::Borrowed(s) => self.hold(s),
            std::borrow::Cow::Owned(s) => self.hold(&s),
        };
        self.places.insert(p, t.clone());
        Some(t)
    }

    /// As [`Self::intern`], for bytes (not UTF-8: replaced, as everywhere).
    pub fn intern_bytes(&mut self, name: &[u8]) -> Text {
        match std::str::from_utf8(name) {
            Ok(s) => self.intern(s),
            Err(_) => self.intern(&String::from_utf8_lossy(name)),
        }
    }

    /// Whether a cap was passed: loops over symbols stop reading names.
    pub fn full(&self) -> bool {
        self.over.is_some()
    }

    /// The module's error when a cap was passed.
    pub fn check(&self, path: &Path) -> Result<(), LoadError> {
        let why = match self.over {
            None => return Ok(()),
            Some("held") => format!(
                "its symbol names take over {}, the cap for one module",
                size(self.caps.0)
            ),
            Some(_) => format!(
                "its symbols name over {} of names (repeats included), the cap for one module",
                size(self.caps.1)
            ),
        };
        Err(LoadError::new(LoadErrorKind::NameLimit, path, why))
    }
}

/// Where the name of symbol `index` is in its string table, for the formats that say
/// (ELF `st_name`, Mach-O `n_strx`): one key per place in the file's tables (`dynamic`:
/// ELF `.dynsym`, whose strings are another table).
pub fn name_place(
    file: &object::File<'_>,
    index: object::SymbolIndex,
    dynamic: bool,
) -> Option<u64> {
    use object::read::elf::Sym as _;
    use object::read::macho::Nlist as _;
    let at = match file {
        object::File::Elf32(f) => {
            let t = if dynamic {
                f.elf_dynamic_symbol_table()
            } else {
                f.elf_symbol_table()
            };
            t.symbol(index).ok()?.st_name(f.endian())
        }
        object::File::Elf64(f) => {
            let t = if dynamic {
                f.elf_dynamic_symbol_table()
            } else {
                f.elf_symbol_table()
            };
            t.symbol(index).ok()?.st_name(f.endian())
        }
        object::File::MachO32(f) => f
            .macho_symbol_table()
            .symbol(index)
            .ok()?
            .n_strx(f.endian()),
        object::File::MachO64(f) => f
            .macho_symbol_table()
            .symbol(index)
            .ok()?
            .n_strx(f.endian()),
        _ => return None,
    };
    Some(u64::from(at) | (u64::from(dynamic) << 32))
}

fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_copy_per_name_and_caps() {
        let mut n = Names::with_caps(10, 40);
        let a = n.intern("abc");
        let b = n.intern(&String::from("abc"));
        assert!(Text::ptr_eq(&a, &b));
        assert_eq!(n.held, 3);
        assert!(n.check(Path::new("m")).is_ok());
        assert_eq!(&*n.intern("12345678"), "");
        assert!(n.full());
        assert_eq!(&*n.intern("abc"), "");
        let e = n.check(Path::new("m")).unwrap_err();
        assert_eq!(e.kind, LoadErrorKind::NameLimit);
        assert!(e.message.contains("over 10 bytes"), "{}", e.message);
        // Repeats cost no memory, but reading them is bounded too.
        let mut n = Names::with_caps(10, 40);
        for _ in 0..13 {
            assert_eq!(&*n.intern("abc"), "abc");
        }
        assert_eq!(&*n.intern("abc"), "");
        assert!(
            n.check(Path::new("m"))
                .unwrap_err()
                .message
                .contains("repeats")
        );
    }
}

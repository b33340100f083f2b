//! Breakpad `.sym` resolver. The file is mapped and indexed in one pass over its bytes
//! (FUNC and PUBLIC addresses with the byte offsets of their records, the offsets of the
//! FILE and INLINE_ORIGIN records); a FUNC block is parsed only when an address falls in
//! it, and names are read from the mapping: a 500 MB `xul.sym` costs an index, not a
//! copy, and a lookup no system call.

use std::borrow::Cow;
use std::path::Path;
use std::rc::Rc;

mod block;
mod edges;
mod lookup;

use crate::resolve::bytes::FileBytes;
use crate::resolve::demangle::demangle;
use crate::resolve::types::{InlineFrame, LoadError, LoadErrorKind, Symbolized, Text};

/// Mapped pages read while indexing, or by the FUNC blocks of a request, are given back
/// to the kernel every this many bytes: the file stays in the page cache, not in this
/// process's resident memory (a page read again faults back in without a read).
const RELEASE_EVERY: usize = 16 << 20;

/// A file up to this size keeps its pages instead (at most this much memory): the index
/// pass reads every page, a request of thousands of addresses most of them again, and
/// faulting them back in cost a cold 10 000-address request on a 44 MB file 9 % of its
/// time.
const KEEP_PAGES: usize = 64 << 20;

/// Gives the pages of `part` back to the kernel, unless the file is small enough to keep.
fn give_back(data: &FileBytes, part: &[u8]) {
    if data.len() > KEEP_PAGES {
        data.release(part);
    }
}

/// Inlined frames answered for one address, the outermost kept.
const MAX_INLINE_FRAMES: usize = 256;

struct Func {
    addr: u64,
    size: u64,
    /// Byte range of the FUNC line and the records that follow it.
    start: u64,
    len: u64,
}

pub struct SymFile {
    /// The mapping of the file, or the bytes of a zip entry.
    data: Rc<FileBytes>,
    pub debug_id: crate::shared::debugid::DebugId,
    pub code_id: Option<String>,
    /// Byte offset of each `FILE n` / `INLINE_ORIGIN n` line as (n, offset), sorted by n:
    /// memory follows the records, however sparse their numbers.
    files: Vec<(u32, u64)>,
    origins: Vec<(u32, u64)>,
    funcs: Vec<Func>,
    /// (address, byte offset of the PUBLIC line)
    publics: Vec<(u64, u64)>,
}

/// `u64::from_str_radix(s, 16)` (an optional `+`, then hex digits of either case), without
/// its generic per-digit checks: parsing FUNC blocks is most of a cold request.
fn hex(s: &str) -> Option<u64> {
    let digits = unsigned_digits(s)?;
    let mut v = 0u64;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v.checked_mul(16)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

/// The digits of a number as `from_str_radix` takes it: an optional `+`, then at least one
/// character (checked as a digit by the caller).
#[inline(always)]
fn unsigned_digits(s: &str) -> Option<&[u8]> {
    match s.as_bytes() {
        [b'+', rest @ ..] if !rest.is_empty() => Some(rest),
        [] => None,
        b => Some(b),
    }
}

/// `s.parse::<u32>()`, likewise.
fn dec(s: &str) -> Option<u32> {
    let digits = unsigned_digits(s)?;
    let mut v = 0u32;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u32::from(c - b'0'))?;
    }
    Some(v)
}

/// `String::from_utf8_lossy`, with the faster check first (the text is nearly always
/// valid).
fn lossy(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// A field of a record as text (a field that is not UTF-8 is no number either).
fn hex_field(b: &[u8]) -> Option<u64> {
    std::str::from_utf8(b).ok().and_then(hex)
}

fn dec_field(b: &[u8]) -> Option<u32> {
    std::str::from_utf8(b).ok().and_then(dec)
}

/// The offset recorded for number `n`.
fn offset_of(table: &[(u32, u64)], n: u32) -> Option<u64> {
    table
        .binary_search_by_key(&n, |e| e.0)
        .ok()
        .map(|i| table[i].1)
}

/// Fields of a record after its keyword, skipping the optional `m` flag.
fn fields(rest: &[u8]) -> impl Iterator<Item = &[u8]> {
    let rest = rest.strip_prefix(b"m ").unwrap_or(rest);
    rest.split(|&b| b == b' ')
}

/// `line` without its trailing line-end characters.
fn trim_line_end(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b'\n' | b'\r'] = line {
        line = rest;
    }
    line
}

/// The line starting at byte `start` of `data`, without its line end.
fn line_at(data: &[u8], start: u64) -> Option<Cow<'_, str>> {
    let rest = data.get(usize::try_from(start).ok()?..)?;
    Some(match memchr::memchr(b'\n', rest) {
        Some(nl) => match lossy(&rest[..nl]) {
            Cow::Borrowed(s) => Cow::Borrowed(s.trim_end_matches('\r')),
            Cow::Owned(s) => Cow::Owned(s.trim_end_matches('\r').to_string()),
        },
        None => lossy(rest),
    })
}

impl SymFile {
    /// A `.sym` file, mapped (never read into memory whole).
    pub fn open_file(path: &Path) -> Result<SymFile, LoadError> {
        let data =
            FileBytes::open(path).map_err(|e| LoadError::new(LoadErrorKind::of_io(&e), path, e))?;
        Self::from_file_bytes(Rc::new(data), path)
    }

    /// Bytes in memory (a zip entry): kept as they are, not copied.
    pub fn from_bytes(data: Vec<u8>, origin: &Path) -> Result<SymFile, LoadError> {
        Self::from_file_bytes(Rc::new(FileBytes::from_vec(data)), origin)
    }

    /// A mapped file (or bytes in memory), indexed and read in place.
    pub fn from_file_bytes(data: Rc<FileBytes>, origin: &Path) -> Result<SymFile, LoadError> {
        let bad = |msg: String| LoadError::new(LoadErrorKind::ParseError, origin, msg);
        let mut sym = SymFile {
            data: data.clone(),
            debug_id: Default::default(),
            code_id: None,
            files: Vec::new(),
            origins: Vec::new(),
            funcs: Vec::new(),
            publics: Vec::new(),
        };
        let bytes: &[u8] = &data;
        let mut number = 0usize;
        let mut open_func: Option<usize> = None;
        let mut released = 0usize;
        // One iterator over the whole file: a search per line (30 bytes on average) would
        // cost more in setup than in scanning.
        let ends = memchr::memchr_iter(b'\n', bytes)
            .map(|i| i + 1)
            .chain(std::iter::once(bytes.len()));
        let mut pos = 0usize;
        for end in ends {
            if end <= pos {
                break; // the file ends with a line end
            }
            let start = pos;
            pos = end;
            number += 1;
            let raw = &bytes[start..pos];
            if number == 1 {
                let line = String::from_utf8_lossy(raw);
                let mut f = line.trim_end_matches(['\n', '\r']).split(' ');
                match (f.next(), f.next(), f.next(), f.next()) {
                    (Some("MODULE"), Some(_os), Some(_arch), Some(id)) => {
                        sym.debug_id = crate::shared::debugid::DebugId::new(id)
                    }
                    _ => return Err(bad("not a Breakpad .sym file (no MODULE line)".into())),
                }
                continue;
            }
            // Line and INLINE records (most of a big file) belong to the open FUNC's
            // block, parsed only when looked up.
            if matches!(raw[0], b'0'..=b'9' | b'a'..=b'f') || raw.starts_with(b"INLINE ") {
                continue;
            }
            if start - released >= RELEASE_EVERY {
                give_back(&data, &bytes[released..start]);
                released = start;
            }
            let text = trim_line_end(raw);
            let kw = text.split(|&b| b == b' ').next().unwrap_or(b"");
            if kw.iter().all(u8::is_ascii_hexdigit) {
                continue; // a line record of the open FUNC
            }
            if kw != b"INLINE"
                && let Some(i) = open_func.take()
            {
                sym.funcs[i].len = (start as u64) - sym.funcs[i].start;
            }
            let rest = text.get(kw.len() + 1..).unwrap_or(b"");
            let mut f = fields(rest);
            match kw {
                b"FILE" | b"INLINE_ORIGIN" => {
                    let id = f.next().and_then(dec_field).ok_or_else(|| {
                        bad(format!(
                            "line {number}: bad {} record",
                            String::from_utf8_lossy(kw)
                        ))
                    })?;
                    let v = if kw == b"FILE" {
                        &mut sym.files
                    } else {
                        &mut sym.origins
                    };
                    v.push((id, start as u64));
                }
                b"FUNC" => {
                    let (addr, size) =
                        match (f.next().and_then(hex_field), f.next().and_then(hex_field)) {
                            (Some(a), Some(s)) => (a, s),
                            _ => return Err(bad(format!("line {number}: bad FUNC record"))),
                        };
                    sym.funcs.push(Func {
                        addr,
                        size,
                        start: start as u64,
                        len: 0,
                    });
                    open_func = Some(sym.funcs.len() - 1);
                }
                b"PUBLIC" => {
                    let addr = f
                        .next()
                        .and_then(hex_field)
                        .ok_or_else(|| bad(format!("line {number}: bad PUBLIC record")))?;
                    sym.publics.push((addr, start as u64));
                }
                b"INFO" => {
                    if let Some(code) = rest.strip_prefix(b"CODE_ID ") {
                        sym.code_id = code
                            .split(|&b| b == b' ')
                            .next()
                            .map(|c| String::from_utf8_lossy(c).into_owned());
                    }
                }
                _ => {} // STACK CFI/WIN and records we do not need
            }
        }
        give_back(&data, bytes);
        if let Some(i) = open_func {
            sym.funcs[i].len = bytes.len() as u64 - sym.funcs[i].start;
        }
        if number == 0 {
            return Err(bad("the file is empty".into()));
        }
        sym.funcs.sort_by_key(|f| f.addr);
        sym.publics.sort_by_key(|p| p.0);
        for t in [&mut sym.files, &mut sym.origins] {
            // Stable: of repeated numbers the first record wins, as before.
            t.sort_by_key(|e| e.0);
            t.dedup_by_key(|e| e.0);
        }
        Ok(sym)
    }

    pub fn cost(&self) -> u64 {
        // A big mapping holds at most RELEASE_EVERY bytes of pages between releases, a
        // small one all of them; bytes in memory (a zip entry) are held whole.
        let pages = if self.data.len() > KEEP_PAGES {
            0
        } else {
            self.data.len()
        };
        self.data.owned_len().max(pages) as u64
            + 32 * self.funcs.len() as u64
            + 16 * self.publics.len() as u64
            + 16 * (self.files.len() + self.origins.len()) as u64
    }
}

/// A name left mangled in a `.sym` (Itanium C++ or Rust: dump_syms keeps what it could not
/// demangle, other tools write raw names) demangled as every other source's; anything else,
/// MSVC names included (dump_syms demangles those itself), as the file has it.
pub(super) fn demangled_text(name: Text) -> Text {
    if left_mangled(&name) {
        demangle(&name).into()
    } else {
        name
    }
}

/// As [`demangled_text`], for an owned name.
pub(super) fn demangled(name: String) -> String {
    if left_mangled(&name) {
        demangle(&name)
    } else {
        name
    }
}

fn left_mangled(name: &str) -> bool {
    name.starts_with("_Z") || name.starts_with("_R")
}

#[cfg(test)]
mod tests {
    use super::block::*;
    use super::lookup::*;
    use super::*;

    const SYM: &str = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 t\n\
INFO CODE_ID 89ABCDEF\n\
FILE 0 /src/a.c\n\
FILE 1 /src/inl.h\n\
INLINE_ORIGIN 0 helper\n\
INLINE_ORIGIN 1 inner helper\n\
FUNC 1000 40 0 outer(int)\n\
INLINE 0 12 0 0 1010 10\n\
INLINE 1 30 1 1 1014 4\n\
1000 10 10 0\n\
1010 4 20 1\n\
1014 4 40 1\n\
1018 28 14 0\n\
PUBLIC 1100 0 pub_fn\n\
FUNC m 1200 10 0 other\n\
1200 10 5 0\n\
STACK CFI INIT 1000 40 .cfa: $rsp 8 +\n";

    fn sym() -> SymFile {
        SymFile::from_bytes(SYM.as_bytes().to_vec(), Path::new("t.sym")).unwrap()
    }

    /// A block is parsed for the offsets asked in it: in any order, repeated, or
    /// coming back to a block after another, each answer is the one it gets alone.
    #[test]
    fn offsets_in_any_order_answer_as_each_alone() {
        let asked = [
            0x1015, 0x1004, 0x1205, 0x1015, 0x1011, 0x1100, 0x1016, 0x1000, 0x103f, 0x1200, 0x1012,
        ];
        let together = crate::resolve::Module::Breakpad(sym()).lookup_sorted(&asked);
        for (o, got) in asked.iter().zip(&together) {
            let alone = crate::resolve::Module::Breakpad(sym()).lookup_sorted(&[*o]);
            assert_eq!(got, &alone[0], "{o:#x}");
        }
        assert_eq!(together[0].as_ref().unwrap().inlines.len(), 2);
        assert_eq!(together[4].as_ref().unwrap().inlines.len(), 1);
    }

    #[test]
    fn funcs_inlines_publics() {
        let s = sym();
        assert_eq!(s.debug_id.to_string(), "0123456789ABCDEF0123456789ABCDEF0");
        assert_eq!(s.code_id.as_deref(), Some("89ABCDEF"));
        let r = crate::resolve::Module::Breakpad(s).lookup_sorted(&[
            0x1004, 0x1015, 0x103f, 0x1040, 0x1100, 0x11ff, 0x1205, 0x1210,
        ]);
        let a = r[0].as_ref().unwrap();
        assert_eq!(
            (&*a.function, a.function_offset, a.line),
            ("outer(int)", 4, Some(10))
        );
        let b = r[1].as_ref().unwrap();
        let chain: Vec<_> = b
            .inlines
            .iter()
            .map(|i| {
                (
                    i.function.as_deref().unwrap().to_string(),
                    i.file.as_deref().unwrap().to_string(),
                    i.line.unwrap(),
                )
            })
            .collect();
        assert_eq!(
            chain,
            [
                ("inner helper".to_string(), "/src/inl.h".to_string(), 40),
                ("helper".to_string(), "/src/inl.h".to_string(), 30)
            ]
        );
        assert_eq!((b.file.as_deref(), b.line), (Some("/src/a.c"), Some(12)));
        assert!(r[2].is_some());
        assert!(r[3].is_none(), "past the FUNC's end");
        assert_eq!(&*r[4].as_ref().unwrap().function, "pub_fn");
        assert_eq!(r[5].as_ref().unwrap().function_offset, 0xff);
        assert_eq!(&*r[6].as_ref().unwrap().function, "other");
        assert!(r[7].is_none(), "past the last FUNC, after no PUBLIC");
    }

    #[test]
    fn number_fields_parse_as_the_standard_library_does() {
        for s in [
            "",
            "+",
            "-",
            "+0",
            "-0",
            "0",
            "00",
            "ff",
            "FF",
            "fF",
            "g",
            "1 ",
            " 1",
            "+f",
            "++1",
            "ffffffffffffffff",
            "10000000000000000",
            "0000000000000000000001",
            "4294967295",
            "4294967296",
            "99",
            "1a",
            "\u{e9}",
            "1\r",
        ] {
            assert_eq!(hex(s), u64::from_str_radix(s, 16).ok(), "{s:?}");
            assert_eq!(dec(s), s.parse::<u32>().ok(), "{s:?}");
            // The one-pass readers: the same value, and the fields after it.
            for tail in ["", " 7", " x y", " "] {
                let line = format!("{s}{tail}");
                let first = line.split(' ').next().unwrap();
                let rest: Vec<&str> = line.split(' ').skip(1).collect();
                let mut f = Fields(Some(&line));
                assert_eq!(f.next_hex(), Some(hex(first)), "{line:?}");
                assert_eq!(f.collect::<Vec<_>>(), rest, "{line:?}");
                let mut f = Fields(Some(&line));
                assert_eq!(f.next_dec(), Some(dec(first)), "{line:?}");
                assert_eq!(f.collect::<Vec<_>>(), rest, "{line:?}");
            }
        }
        assert_eq!(Fields(Some("")).next_hex(), Some(None));
        assert_eq!(Fields(None).next_hex(), None);
    }

    #[test]
    fn crlf_lines_blocks_ended_by_any_record_and_a_last_line_without_end() {
        let text = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 t\r\n\
FILE 0 /src/a.c\r\n\
INLINE_ORIGIN 0 helper\r\n\
FUNC 1000 20 0 f\r\n\
INLINE 0 7 0 0 1008 8\r\n\
1000 10 3 0\r\n\
1010 10 4 0\r\n\
STACK CFI INIT 1000 20 .cfa: $rsp 8 +\r\n\
1018 8 99 0\r\n\
PUBLIC 2000 0 p";
        let s = SymFile::from_bytes(text.as_bytes().to_vec(), Path::new("t.sym")).unwrap();
        assert_eq!(s.debug_id.to_string(), "0123456789ABCDEF0123456789ABCDEF0");
        let r = crate::resolve::Module::Breakpad(s).lookup_sorted(&[0x1009, 0x1018, 0x2004]);
        let a = r[0].as_ref().unwrap();
        assert_eq!(
            (&*a.function, a.file.as_deref(), a.line),
            ("f", Some("/src/a.c"), Some(7))
        );
        let i = &a.inlines[0];
        assert_eq!(
            (i.function.as_deref(), i.file.as_deref(), i.line),
            (Some("helper"), Some("/src/a.c"), Some(3))
        );
        // The line record after the STACK record is no longer f's.
        assert_eq!(r[1].as_ref().unwrap().line, Some(4));
        assert_eq!(&*r[2].as_ref().unwrap().function, "p");
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(SymFile::from_bytes(b"hello\n".to_vec(), Path::new("x.sym")).is_err());
        assert!(SymFile::from_bytes(Vec::new(), Path::new("x.sym")).is_err());
        let truncated = &SYM.as_bytes()[..SYM.find("FUNC 1000").unwrap() + 7];
        let s = SymFile::from_bytes(truncated.to_vec(), Path::new("x.sym"));
        assert!(s.is_err(), "a FUNC record cut short");
    }

    #[test]
    fn names_left_mangled_are_demangled() {
        // llvm-cxxfilt-19's answer; MSVC and plain names stay as the file has them.
        assert_eq!(
            demangled("_Z1fIJiiEEiDpOT_".into()),
            "int f<int, int>(int&&, int&&)"
        );
        assert_eq!(demangled("?f@@YAXXZ".into()), "?f@@YAXXZ");
        assert_eq!(demangled("main".into()), "main");
    }

    #[test]
    fn only_dump_syms_placeholders_are_not_names() {
        for p in [
            "<.plt ELF section in libxul.so>",
            "<.plt.got ELF section in a b.so>",
            "<unknown in mathlib-O0.pdb>",
            "<name omitted>",
        ] {
            assert!(is_placeholder(p), "{p}");
        }
        for n in [
            "<alloc::raw_vec::RawVec<T,A> as core::ops::drop::Drop>::drop",
            "<&str as core::fmt::Debug>::fmt",
            "<[u8]>::to_vec",
            "<impl core::fmt::Display for a section in b>",
            "operator<",
        ] {
            assert!(!is_placeholder(n), "{n}");
        }
        let sym = "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 t\n\
PUBLIC 1000 0 <.text ELF section in t>\n\
PUBLIC 1100 0 <alloc::vec::Vec<T> as core::ops::Drop>::drop\n\
PUBLIC 1200 0 <unknown in t>\n";
        let f = SymFile::from_bytes(sym.as_bytes().to_vec(), Path::new("t.sym")).unwrap();
        let r = crate::resolve::Module::Breakpad(f).lookup_sorted(&[0x1010, 0x1110, 0x1210]);
        assert!(r[0].is_none() && r[2].is_none());
        assert_eq!(
            &*r[1].as_ref().unwrap().function,
            "<alloc::vec::Vec<T> as core::ops::Drop>::drop"
        );
    }
}

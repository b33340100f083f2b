//! Breakpad `.sym` resolver. The file is indexed once (FUNC and PUBLIC addresses with the
//! byte offsets of their records); a FUNC block is parsed only when an address falls in it,
//! so a 500 MB `xul.sym` costs an index, not a copy.
//! (Over 600 lines with its tests; the code is 520.)

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::bytes::FileBytes;
use super::{InlineFrame, LoadError, LoadErrorKind, Symbolized, Text};

/// Where the text is: a local file (read on demand), or bytes: the mapping of a file
/// without the `.sym` name, or an entry taken out of a zip.
enum Source {
    File(PathBuf),
    Memory(Rc<FileBytes>),
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
    source: Source,
    pub debug_id: String,
    pub code_id: Option<String>,
    /// Byte offset of each `FILE n` / `INLINE_ORIGIN n` line as (n, offset), sorted by n:
    /// memory follows the records, however sparse their numbers.
    files: Vec<(u32, u64)>,
    origins: Vec<(u32, u64)>,
    funcs: Vec<Func>,
    /// (address, byte offset of the PUBLIC line)
    publics: Vec<(u64, u64)>,
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s, 16).ok()
}

/// The offset recorded for number `n`.
fn offset_of(table: &[(u32, u64)], n: u32) -> Option<u64> {
    table
        .binary_search_by_key(&n, |e| e.0)
        .ok()
        .map(|i| table[i].1)
}

/// Fields of a record after its keyword, skipping the optional `m` flag.
fn fields(rest: &str) -> impl Iterator<Item = &str> {
    let rest = rest.strip_prefix("m ").unwrap_or(rest);
    rest.split(' ')
}

/// Reads the next line into `raw`, unless it is a line or INLINE record (of a FUNC block,
/// parsed only when looked up): most lines of a `.sym` are, and those are passed over in
/// the reader's buffer without a copy. Returns the line's length (0 at the end) and whether it was kept.
fn next_line<R: BufRead>(
    r: &mut R,
    raw: &mut Vec<u8>,
    first: bool,
) -> std::io::Result<(usize, bool)> {
    raw.clear();
    let mut total = 0;
    let mut keep = None;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok((total, keep.unwrap_or(false)));
        }
        // INLINE records, a third of a big file, belong to the open FUNC's block too.
        let k = *keep.get_or_insert_with(|| {
            first || !(matches!(buf[0], b'0'..=b'9' | b'a'..=b'f') || buf.starts_with(b"INLINE "))
        });
        let (n, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if k {
            raw.extend_from_slice(&buf[..n]);
        }
        total += n;
        r.consume(n);
        if done {
            return Ok((total, k));
        }
    }
}

/// A record's keyword, if the line is not a line record (whose first field is an
/// address in hex; keywords like FUNC or FILE have letters past F).
fn keyword(line: &str) -> Option<&str> {
    let first = line.split(' ').next().unwrap_or("");
    if first.bytes().all(|b| b.is_ascii_hexdigit()) {
        None
    } else {
        Some(first)
    }
}

impl SymFile {
    pub fn open_file(path: &Path) -> Result<SymFile, LoadError> {
        let f = crate::fs::open_regular(path)
            .map_err(|e| LoadError::new(LoadErrorKind::of_io(&e), path, e))?;
        Self::index(
            BufReader::with_capacity(1 << 16, f),
            Source::File(path.to_path_buf()),
            path,
        )
    }

    /// Bytes in memory (a zip entry): kept as they are, not copied.
    pub fn from_bytes(data: Vec<u8>, origin: &Path) -> Result<SymFile, LoadError> {
        Self::from_file_bytes(Rc::new(FileBytes::from_vec(data)), origin)
    }

    /// A mapped file (or bytes in memory), indexed and read in place.
    pub fn from_file_bytes(data: Rc<FileBytes>, origin: &Path) -> Result<SymFile, LoadError> {
        Self::index(&data.clone()[..], Source::Memory(data), origin)
    }

    fn index<R: BufRead>(mut r: R, source: Source, origin: &Path) -> Result<SymFile, LoadError> {
        let bad = |msg: String| LoadError::new(LoadErrorKind::ParseError, origin, msg);
        let mut sym = SymFile {
            source,
            debug_id: String::new(),
            code_id: None,
            files: Vec::new(),
            origins: Vec::new(),
            funcs: Vec::new(),
            publics: Vec::new(),
        };
        let mut raw: Vec<u8> = Vec::new();
        let mut offset = 0u64;
        let mut number = 0usize;
        let mut open_func: Option<usize> = None;
        loop {
            let (n, kept) = next_line(&mut r, &mut raw, number == 0)
                .map_err(|e| bad(format!("line {}: {e}", number + 1)))?;
            if n == 0 {
                break;
            }
            number += 1;
            let start = offset;
            offset += n as u64;
            if !kept {
                continue; // a line record of the open FUNC
            }
            let line = String::from_utf8_lossy(&raw);
            let text = line.trim_end_matches(['\n', '\r']);
            if number == 1 {
                let mut f = text.split(' ');
                match (f.next(), f.next(), f.next(), f.next()) {
                    (Some("MODULE"), Some(_os), Some(_arch), Some(id)) => {
                        sym.debug_id = id.to_string()
                    }
                    _ => return Err(bad("not a Breakpad .sym file (no MODULE line)".into())),
                }
                continue;
            }
            let Some(kw) = keyword(text) else {
                continue; // a line record of the open FUNC
            };
            if kw != "INLINE"
                && let Some(i) = open_func.take()
            {
                sym.funcs[i].len = start - sym.funcs[i].start;
            }
            let rest = text.get(kw.len() + 1..).unwrap_or("");
            let mut f = fields(rest);
            match kw {
                "FILE" | "INLINE_ORIGIN" => {
                    let id: u32 = f
                        .next()
                        .and_then(|s| s.parse().ok())
                        .ok_or_else(|| bad(format!("line {number}: bad {kw} record")))?;
                    let v = if kw == "FILE" {
                        &mut sym.files
                    } else {
                        &mut sym.origins
                    };
                    v.push((id, start));
                }
                "FUNC" => {
                    let (addr, size) = match (f.next().and_then(hex), f.next().and_then(hex)) {
                        (Some(a), Some(s)) => (a, s),
                        _ => return Err(bad(format!("line {number}: bad FUNC record"))),
                    };
                    sym.funcs.push(Func {
                        addr,
                        size,
                        start,
                        len: 0,
                    });
                    open_func = Some(sym.funcs.len() - 1);
                }
                "PUBLIC" => {
                    let addr = f
                        .next()
                        .and_then(hex)
                        .ok_or_else(|| bad(format!("line {number}: bad PUBLIC record")))?;
                    sym.publics.push((addr, start));
                }
                "INFO" => {
                    if let Some(code) = rest.strip_prefix("CODE_ID ") {
                        sym.code_id = code.split(' ').next().map(str::to_string);
                    }
                }
                _ => {} // STACK CFI/WIN and records we do not need
            }
        }
        if let Some(i) = open_func {
            sym.funcs[i].len = offset - sym.funcs[i].start;
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
        let source = match &self.source {
            // Mapped or owned, counted whole: as the mapped sections of other formats.
            Source::Memory(m) => m.len() as u64,
            Source::File(_) => 0,
        };
        source
            + 32 * self.funcs.len() as u64
            + 16 * self.publics.len() as u64
            + 16 * (self.files.len() + self.origins.len()) as u64
    }

    /// Resolves module offsets (ascending) with one open of the file.
    pub fn lookup_sorted(&self, offsets: &[u64]) -> Vec<Option<Symbolized>> {
        let mut reader = match Reader::open(&self.source) {
            Ok(r) => r,
            Err(_) => return offsets.iter().map(|_| None).collect(),
        };
        let mut cache: Option<(usize, Block)> = None;
        offsets
            .iter()
            .map(|&addr| self.lookup(&mut reader, &mut cache, addr))
            .collect()
    }

    fn lookup(
        &self,
        reader: &mut Reader<'_>,
        cache: &mut Option<(usize, Block)>,
        addr: u64,
    ) -> Option<Symbolized> {
        let i = self.funcs.partition_point(|f| f.addr <= addr);
        let func_index = i.checked_sub(1).filter(|&j| {
            let f = &self.funcs[j];
            addr < f.addr.saturating_add(f.size)
        });
        let Some(j) = func_index else {
            return self.public_for(reader, addr);
        };
        if cache.as_ref().is_none_or(|(k, _)| *k != j) {
            let f = &self.funcs[j];
            let text = reader.read(f.start, f.len).ok()?;
            *cache = Some((j, Block::parse(&text)?));
        }
        let (_, block) = cache.as_ref()?;
        let f = &self.funcs[j];
        // "FILE n name" / "INLINE_ORIGIN n name": the name may contain spaces. Each is
        // read once per address, however many frames name it.
        let mut seen: HashMap<(bool, u32), Text> = HashMap::new();
        let mut named = |reader: &mut Reader<'_>, table: &[(u32, u64)], n: Option<u32>| {
            let key = (std::ptr::eq(table, &*self.files), n?);
            if let Some(t) = seen.get(&key) {
                return Some(t.clone());
            }
            let off = offset_of(table, key.1)?;
            let line = reader.line_at(off)?;
            let t = Text::from(line.splitn(3, ' ').nth(2)?);
            seen.insert(key, t.clone());
            Some(t)
        };
        let (line_file, line_no) = block
            .line_at(addr)
            .map_or((None, None), |l| (Some(l.file), Some(l.line)));
        let mut inlines: Vec<&Inline> = block
            .inlines
            .iter()
            .filter(|inl| {
                inl.ranges
                    .iter()
                    .any(|&(a, s)| a <= addr && addr < a.saturating_add(s))
            })
            .collect();
        inlines.sort_by_key(|inl| std::cmp::Reverse(inl.depth));
        // No real chain comes near this; a crafted one must not make an answer of GBs.
        inlines.drain(..inlines.len().saturating_sub(MAX_INLINE_FRAMES));
        // Innermost first: each frame's location is where the next-inner one was called
        // from, the innermost's is the line record.
        let mut frames = Vec::with_capacity(inlines.len());
        let (mut loc_file, mut loc_line) = (line_file, line_no);
        for inl in &inlines {
            frames.push(InlineFrame {
                function: named(reader, &self.origins, Some(inl.origin)).map(demangled_text),
                file: named(reader, &self.files, loc_file),
                line: loc_line.filter(|&l| l != 0),
            });
            loc_file = Some(inl.call_file);
            loc_line = Some(inl.call_line);
        }
        Some(Symbolized {
            function: block.name.clone(),
            function_offset: addr - f.addr,
            function_size: Some(f.size),
            file: named(reader, &self.files, loc_file),
            line: loc_line.filter(|&l| l != 0),
            inlines: frames,
        })
    }

    /// A PUBLIC covers from its address up to the next symbol (PUBLIC or FUNC).
    fn public_for(&self, reader: &mut Reader<'_>, addr: u64) -> Option<Symbolized> {
        let p = self
            .publics
            .partition_point(|p| p.0 <= addr)
            .checked_sub(1)?;
        let (paddr, off) = self.publics[p];
        let func_before = self.funcs.partition_point(|f| f.addr <= addr);
        if func_before > 0 && self.funcs[func_before - 1].addr > paddr {
            return None; // a FUNC starts after that PUBLIC and has ended before addr
        }
        let line = reader.line_at(off)?;
        let rest = line.strip_prefix("PUBLIC ")?;
        let rest = rest.strip_prefix("m ").unwrap_or(rest);
        let name = rest.splitn(3, ' ').nth(2)?.to_string();
        // dump_syms' placeholders and Mach-O's header symbol bound the symbol before them
        // but name no code.
        if is_placeholder(&name) || name == "_mh_execute_header" || name == "__mh_execute_header" {
            return None;
        }
        Some(Symbolized {
            function: demangled(name).into(),
            function_offset: addr - paddr,
            function_size: None,
            file: None,
            line: None,
            inlines: Vec::new(),
        })
    }
}

/// A name left mangled in a `.sym` (Itanium C++ or Rust: dump_syms keeps what it could not
/// demangle, other tools write raw names) demangled as every other source's; anything else,
/// MSVC names included (dump_syms demangles those itself), as the file has it.
fn demangled_text(name: Text) -> Text {
    if name.starts_with("_Z") || name.starts_with("_R") {
        super::demangle(&name).into()
    } else {
        name
    }
}

/// As [`demangled_text`], for an owned name.
fn demangled(name: String) -> String {
    if name.starts_with("_Z") || name.starts_with("_R") {
        super::demangle(&name)
    } else {
        name
    }
}

/// dump_syms' own names for code it has no name for: `<.plt ELF section in libx.so>`
/// (section starts), `<unknown in libx.so>`, and Breakpad's `<name omitted>`. Anything else
/// that starts with `<` is a real name (Rust's `<T as Trait>::f`).
fn is_placeholder(name: &str) -> bool {
    let Some(inner) = name.strip_prefix('<').and_then(|n| n.strip_suffix('>')) else {
        return false;
    };
    inner == "name omitted"
        || inner.starts_with("unknown in ")
        || inner
            .split_once(" section in ")
            .is_some_and(|(section, _)| !section.contains(['<', '>', ':']))
}

struct Line {
    addr: u64,
    size: u64,
    line: u32,
    file: u32,
}

struct Inline {
    depth: u32,
    call_line: u32,
    call_file: u32,
    origin: u32,
    ranges: Vec<(u64, u64)>,
}

/// One FUNC record with its INLINE and line records.
struct Block {
    name: Text,
    lines: Vec<Line>,
    inlines: Vec<Inline>,
}

impl Block {
    fn parse(text: &str) -> Option<Block> {
        let mut it = text.lines();
        let first = it.next()?.strip_prefix("FUNC ")?;
        let first = first.strip_prefix("m ").unwrap_or(first);
        let name: Text = demangled(first.splitn(4, ' ').nth(3).unwrap_or("").to_string()).into();
        let mut block = Block {
            name,
            lines: Vec::new(),
            inlines: Vec::new(),
        };
        for l in it {
            if let Some(rest) = l.strip_prefix("INLINE ") {
                let mut f = rest.split(' ');
                let mut num = || f.next().and_then(|s| s.parse::<u32>().ok());
                let (Some(depth), Some(call_line), Some(call_file), Some(origin)) =
                    (num(), num(), num(), num())
                else {
                    continue;
                };
                let nums: Vec<u64> = rest.split(' ').skip(4).filter_map(hex).collect();
                let ranges = nums.chunks_exact(2).map(|c| (c[0], c[1])).collect();
                block.inlines.push(Inline {
                    depth,
                    call_line,
                    call_file,
                    origin,
                    ranges,
                });
            } else {
                let mut f = l.split(' ');
                if let (Some(a), Some(s), Some(line), Some(file)) = (
                    f.next().and_then(hex),
                    f.next().and_then(hex),
                    f.next().and_then(|s| s.parse().ok()),
                    f.next().and_then(|s| s.trim_end().parse().ok()),
                ) {
                    block.lines.push(Line {
                        addr: a,
                        size: s,
                        line,
                        file,
                    });
                }
            }
        }
        // Sorted once, searched per address: a FUNC with 200 000 line records must not
        // cost a scan of them all for each address in it.
        block.lines.sort_by_key(|l| l.addr);
        Some(block)
    }

    /// The line record covering `addr`.
    fn line_at(&self, addr: u64) -> Option<&Line> {
        let i = self.lines.partition_point(|l| l.addr <= addr);
        self.lines[..i]
            .iter()
            .rev()
            .take(4)
            .find(|l| addr < l.addr.saturating_add(l.size))
    }
}

/// Random access to the text of a `.sym`.
enum Reader<'a> {
    File(File),
    Memory(&'a [u8]),
}

impl<'a> Reader<'a> {
    fn open(source: &'a Source) -> std::io::Result<Reader<'a>> {
        Ok(match source {
            Source::File(p) => Reader::File(crate::fs::open_regular(p)?),
            Source::Memory(m) => Reader::Memory(m),
        })
    }

    fn read(&mut self, start: u64, len: u64) -> std::io::Result<String> {
        let len = usize::try_from(len).map_err(|_| std::io::ErrorKind::InvalidData)?;
        let bytes = match self {
            Reader::File(f) => {
                f.seek(SeekFrom::Start(start))?;
                let mut buf = vec![0; len];
                f.read_exact(&mut buf)?;
                buf
            }
            Reader::Memory(m) => {
                let s = usize::try_from(start).map_err(|_| std::io::ErrorKind::InvalidData)?;
                m.get(s..s + len)
                    .ok_or(std::io::ErrorKind::UnexpectedEof)?
                    .to_vec()
            }
        };
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The line starting at `start`, without its line end.
    fn line_at(&mut self, start: u64) -> Option<String> {
        let mut out = String::new();
        let mut chunk = 256u64;
        loop {
            let text = match self {
                Reader::File(f) => {
                    f.seek(SeekFrom::Start(start)).ok()?;
                    let mut buf = Vec::new();
                    f.by_ref().take(chunk).read_to_end(&mut buf).ok()?;
                    String::from_utf8_lossy(&buf).into_owned()
                }
                Reader::Memory(m) => {
                    let s = usize::try_from(start).ok()?;
                    let e = (s + chunk as usize).min(m.len());
                    String::from_utf8_lossy(m.get(s..e)?).into_owned()
                }
            };
            if let Some(nl) = text.find('\n') {
                out.push_str(text[..nl].trim_end_matches('\r'));
                return Some(out);
            }
            if (text.len() as u64) < chunk {
                out.push_str(&text);
                return Some(out);
            }
            chunk *= 4;
        }
    }
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn funcs_inlines_publics() {
        let s = sym();
        assert_eq!(s.debug_id, "0123456789ABCDEF0123456789ABCDEF0");
        assert_eq!(s.code_id.as_deref(), Some("89ABCDEF"));
        let r = s.lookup_sorted(&[
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
        let r = f.lookup_sorted(&[0x1010, 0x1110, 0x1210]);
        assert!(r[0].is_none() && r[2].is_none());
        assert_eq!(
            &*r[1].as_ref().unwrap().function,
            "<alloc::vec::Vec<T> as core::ops::Drop>::drop"
        );
    }
}

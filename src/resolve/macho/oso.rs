//! Mach-O debug maps: a binary linked without dsymutil keeps its DWARF in the object
//! files (and `archive.a(member.o)` members) that its `N_OSO` stabs name; its `N_FUN`
//! stabs give each function's address and size in the binary. An address is mapped to
//! its object by the function's symbol and answered from the object's DWARF.
//!
//! Objects are located and their modification time checked when the binary is loaded
//! (a mismatch is a module error, and that object is never used); an object is parsed
//! only when an address falls in it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::macho::{MachHeader32, MachHeader64, N_FUN, N_OSO, N_SO};
use object::read::macho::{MachHeader, MachOFile, Nlist};
use object::{Object, ObjectSymbol};

use crate::resolve::bytes::FileBytes;
use crate::resolve::demangle::demangle;
use crate::resolve::dwarf::{DwarfResolver, Found};
use crate::resolve::section::{Budget, DebugDataError, endian_of, section_data};
use crate::resolve::types::{Companion, LoadContext, LoadError, LoadErrorKind, Symbolized};

/// A function of the binary, from its `N_FUN` pair.
struct Func {
    start: u64,
    size: u64,
    /// The raw symbol name (with Mach-O's leading underscore), as the object has it.
    name: String,
    object: usize,
}

/// Where an object's bytes are: a file, or a member of an archive.
struct Located {
    path: PathBuf,
    member: Option<String>,
}

/// A parsed object: its DWARF and where its symbols are in its own address space.
struct Parsed {
    dwarf: DwarfResolver,
    symbols: HashMap<String, u64>,
}

struct ObjectFile {
    /// The usable file, or why there is none (not found, modified).
    located: Option<Located>,
    parsed: RefCell<Option<Option<Rc<Parsed>>>>,
}

pub struct DebugMap {
    funcs: Vec<Func>,
    objects: Vec<ObjectFile>,
}

/// The debug map of a thin Mach-O without DWARF of its own, if its stabs name objects.
/// Objects missing or modified are reported in `warnings`.
pub fn load(
    member: &[u8],
    binary: &Path,
    ctx: &LoadContext<'_>,
    warnings: &mut Vec<LoadError>,
) -> Option<DebugMap> {
    let (objects, funcs) = match object::FileKind::parse(member).ok()? {
        object::FileKind::MachO64 => stabs::<MachHeader64<object::Endianness>>(member)?,
        object::FileKind::MachO32 => stabs::<MachHeader32<object::Endianness>>(member)?,
        _ => return None,
    };
    if objects.is_empty() {
        return None;
    }
    let objects = objects
        .into_iter()
        .map(|(recorded, mtime)| ObjectFile {
            located: locate(&recorded, mtime, binary, ctx, warnings),
            parsed: RefCell::new(None),
        })
        .collect();
    let mut funcs = funcs;
    funcs.sort_by_key(|f| f.start);
    Some(DebugMap { funcs, objects })
}

/// The `N_OSO` objects (path, modification time) and `N_FUN` functions of the binary.
type Stabs = (Vec<(String, u64)>, Vec<Func>);

fn stabs<Mach: MachHeader<Endian = object::Endianness>>(data: &[u8]) -> Option<Stabs> {
    let file = MachOFile::<Mach>::parse(data).ok()?;
    let endian = file.endian();
    let table = file.macho_symbol_table();
    let strings = table.strings();
    let mut objects: Vec<(String, u64)> = Vec::new();
    let mut funcs = Vec::new();
    // An N_FUN with a name opens a function (its address); the next N_FUN without a name
    // gives its size.
    let mut open: Option<(String, u64)> = None;
    for n in table.iter() {
        let Some(stab) = n.stab() else { continue };
        let name = n.name(endian, strings).unwrap_or(&[]);
        let value: u64 = n.n_value(endian).into();
        match stab {
            N_OSO => {
                objects.push((String::from_utf8_lossy(name).into_owned(), value));
                open = None;
            }
            N_SO if name.is_empty() => open = None,
            N_FUN if !name.is_empty() => {
                open = Some((String::from_utf8_lossy(name).into_owned(), value))
            }
            N_FUN => {
                if let Some((fname, start)) = open.take()
                    && !objects.is_empty()
                    && value > 0
                {
                    funcs.push(Func {
                        start,
                        size: value,
                        name: fname,
                        object: objects.len() - 1,
                    });
                }
            }
            _ => {}
        }
    }
    Some((objects, funcs))
}

/// Splits `lib.a(member.o)` into the archive and the member.
fn split_member(recorded: &str) -> (&str, Option<&str>) {
    if let Some(stripped) = recorded.strip_suffix(')')
        && let Some(i) = stripped.rfind('(')
        && i > 0
    {
        return (&stripped[..i], Some(&stripped[i + 1..]));
    }
    (recorded, None)
}

/// Finds the object a stab names (at its path, beside the binary, in `--symbol-dir`) and
/// checks its modification time.
fn locate(
    recorded: &str,
    mtime: u64,
    binary: &Path,
    ctx: &LoadContext<'_>,
    warnings: &mut Vec<LoadError>,
) -> Option<Located> {
    let (file, member) = split_member(recorded);
    for path in (ctx.companions)(binary, Companion::OsoObject(file)) {
        let found = match member {
            None => std::fs::metadata(&path)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| {
                    m.modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_secs())
                }),
            Some(m) => member_date(&path, m),
        };
        let Some(found_mtime) = found else { continue };
        // A time of 0 in the stab means the linker recorded none.
        if mtime != 0 && found_mtime != Some(mtime) {
            let shown = match member {
                Some(m) => PathBuf::from(format!("{}({m})", path.display())),
                None => path.clone(),
            };
            if ctx.verbose {
                crate::log::elog!("  {}: modified since the link, skipped", shown.display());
            }
            warnings.push(LoadError::new(
                LoadErrorKind::ObjectModified,
                &shown,
                format!(
                    "modification time {} differs from the debug map's {mtime}: the object changed since the link",
                    found_mtime.map_or("unknown".to_string(), |t| t.to_string())
                ),
            ));
            return None;
        }
        if ctx.verbose {
            crate::log::elog!("  debug map object {recorded}: {}", path.display());
        }
        return Some(Located {
            path,
            member: member.map(str::to_string),
        });
    }
    warnings.push(LoadError::new(
        LoadErrorKind::ObjectNotFound,
        Path::new(recorded),
        format!("object file of {}'s debug map not found", binary.display()),
    ));
    None
}

/// `Some(date)` when the archive at `path` holds `member`.
fn member_date(path: &Path, member: &str) -> Option<Option<u64>> {
    // A debug map may name anything: only regular files are read.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    let data = FileBytes::open(path).ok()?;
    ar_member(&data, member).map(|(date, _)| Some(date))
}

/// The date and bytes of `member` in a Unix `ar` archive (GNU or BSD names). A small
/// reader of our own: object's archive reader is behind a feature this binary leaves out.
fn ar_member<'d>(data: &'d [u8], member: &str) -> Option<(u64, &'d [u8])> {
    let mut at = data.strip_prefix(b"!<arch>\n".as_slice()).map(|_| 8)?;
    let mut long_names: &[u8] = &[];
    while at + 60 <= data.len() {
        let h = &data[at..at + 60];
        let field = |r: std::ops::Range<usize>| std::str::from_utf8(&h[r]).ok().map(str::trim);
        let size: usize = field(48..58)?.parse().ok()?;
        let date: u64 = field(16..28)?.parse().unwrap_or(0);
        let body_start = at + 60;
        let body = data.get(body_start..body_start.checked_add(size)?)?;
        let raw = field(0..16)?;
        let (name, content): (&[u8], &[u8]) = if let Some(n) = raw.strip_prefix("#1/") {
            // BSD: the name leads the member's data.
            let n: usize = n.parse().ok()?;
            let name = body.get(..n)?;
            let name = name.split(|&b| b == 0).next().unwrap_or(name);
            (name, body.get(n..)?)
        } else if raw == "//" {
            long_names = body;
            (b"//".as_slice(), body)
        } else if let Some(off) = raw.strip_prefix('/').and_then(|o| o.parse::<usize>().ok()) {
            // GNU: an offset into the `//` member, the name ending in "/\n".
            let rest = long_names.get(off..)?;
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            (rest[..end].strip_suffix(b"/").unwrap_or(&rest[..end]), body)
        } else {
            (raw.strip_suffix('/').unwrap_or(raw).as_bytes(), body)
        };
        if name == member.as_bytes() {
            return Some((date, content));
        }
        at = body_start + size + (size & 1);
    }
    None
}

impl DebugMap {
    /// Whether any object it names was found (else it knows nothing the symbols do not).
    pub fn has_objects(&self) -> bool {
        self.objects.iter().any(|o| o.located.is_some())
    }

    pub fn cost(&self) -> u64 {
        self.objects
            .iter()
            .filter_map(|o| o.parsed.borrow().clone().flatten())
            .map(|p| p.dwarf.cost())
            .sum()
    }

    /// Resolves an address of the binary from the object holding its function.
    pub fn lookup(&self, addr: u64) -> Option<Symbolized> {
        let i = self.funcs.partition_point(|f| f.start <= addr);
        let f = self.funcs[..i].last()?;
        if addr - f.start >= f.size {
            return None;
        }
        let parsed = self.parsed(f.object)?;
        let start = *parsed.symbols.get(&f.name)?;
        // The stab's symbol names a function whose DWARF has no linkage name.
        let name = f.name.strip_prefix('_').unwrap_or(&f.name);
        let symbol_at = |entry: u64| (entry == start).then(|| demangle(name).into());
        let found = parsed
            .dwarf
            .lookup_named(start.checked_add(addr - f.start)?, &symbol_at)?;
        match found {
            Found::Function(s) => Some(s),
            // Rows without a subprogram: the debug map's function (sized) gets them.
            rows => rows.or_lines_of(Some(Symbolized {
                function: demangle(name).into(),
                function_offset: addr - f.start,
                function_size: Some(f.size),
                file: None,
                line: None,
                inlines: Vec::new(),
            })),
        }
    }

    /// The compilation directory of the object's unit holding `addr`.
    pub fn comp_dir(&self, addr: u64) -> Option<String> {
        let i = self.funcs.partition_point(|f| f.start <= addr);
        let f = self.funcs[..i].last()?;
        let parsed = self.parsed(f.object)?;
        let start = *parsed.symbols.get(&f.name)?;
        parsed.dwarf.comp_dir(start.checked_add(addr - f.start)?)
    }

    fn parsed(&self, i: usize) -> Option<Rc<Parsed>> {
        let object = self.objects.get(i)?;
        if let Some(p) = &*object.parsed.borrow() {
            return p.clone();
        }
        let p = object.located.as_ref().and_then(|l| match parse(l) {
            Ok(p) => Some(Rc::new(p)),
            Err(e) => {
                crate::log::elog!("{}: {e}", l.path.display());
                None
            }
        });
        *object.parsed.borrow_mut() = Some(p.clone());
        p
    }
}

/// Why a debug map's object file cannot be read (its functions stay unnamed by it).
#[derive(Debug)]
enum ObjectError {
    Read(std::io::Error),
    NoMember(String),
    Invalid(object::Error),
    Dwarf(DebugDataError),
    NoDwarf,
}

impl std::fmt::Display for ObjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectError::Read(e) => write!(f, "{e}"),
            ObjectError::NoMember(name) => write!(f, "no member {name} in the archive"),
            ObjectError::Invalid(e) => write!(f, "invalid object file: {e}"),
            ObjectError::Dwarf(e) => write!(f, "{e}"),
            ObjectError::NoDwarf => f.write_str("no DWARF in the object file"),
        }
    }
}

fn parse(l: &Located) -> Result<Parsed, ObjectError> {
    let data = Rc::new(FileBytes::open(&l.path).map_err(ObjectError::Read)?);
    let bytes: &[u8] = match &l.member {
        None => &data,
        Some(name) => {
            ar_member(&data, name)
                .ok_or_else(|| ObjectError::NoMember(name.clone()))?
                .1
        }
    };
    let file = object::File::parse(bytes).map_err(ObjectError::Invalid)?;
    let symbols = file
        .symbols()
        .filter(|s| s.is_definition())
        .filter_map(|s| Some((s.name().ok()?.to_string(), s.address())))
        .collect();
    // Each object file its own budget: they are read one at a time, as addresses need them.
    let budget = Budget::for_file(&file);
    let dwarf = DwarfResolver::new(
        &mut |name| section_data(&file, name, &data, &budget),
        endian_of(&file),
        &l.path,
        budget.clone(),
    )
    .map_err(ObjectError::Dwarf)?
    .ok_or(ObjectError::NoDwarf)?;
    Ok(Parsed { dwarf, symbols })
}

//! Images of a dyld shared cache: macOS 11+ system libraries exist only there. The main
//! cache file, its subcaches and its `.symbols` file are mapped once and indexed by image
//! path; an image is then read like a stripped Mach-O (exported symbols from its share of
//! the cache's `__LINKEDIT`, local symbols from the `.symbols` file, `LC_FUNCTION_STARTS`).

use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::read::macho::DyldCache as ObjectCache;
use object::{Object, ObjectSection, ObjectSegment, SectionKind};

use super::super::bytes::FileBytes;
use super::super::funcs::FunctionTable;
use super::super::native::NativeModule;
use super::super::symnames::{Names, Sym};
use super::super::types::{LoadError, LoadErrorKind};
use super::super::unwind;
use crate::shared::debugid::DebugId;

/// A dyld shared cache, its files mapped (address space, not memory: pages are read as
/// images are used).
pub struct DyldCache {
    pub path: PathBuf,
    /// The main file, then the subcaches in the header's order, then `.symbols` (the
    /// order `object` expects).
    files: Vec<Rc<FileBytes>>,
    has_symbols_file: bool,
    /// (image path, image index), sorted by path.
    images: Vec<(String, usize)>,
}

/// What an image's code is, for `/asm/v1`: the file holding it and where each code
/// section lies in it, as (module offset, length, file offset).
pub struct ImageCode {
    pub arch: object::Architecture,
    pub data: Rc<FileBytes>,
    pub sections: Vec<(u64, u64, usize)>,
}

fn u32_at(d: &[u8], at: u64) -> Option<u32> {
    let at = usize::try_from(at).ok()?;
    Some(u32::from_le_bytes(
        d.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(d: &[u8], at: u64) -> Option<u64> {
    let at = usize::try_from(at).ok()?;
    Some(u64::from_le_bytes(
        d.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Image paths are compared as recorded; a file name is its last component.
fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Why a dyld shared cache, or one of its images, cannot be read.
#[derive(Debug)]
pub enum DyldError {
    /// The main file cannot be read.
    Read(std::io::Error),
    /// The main file is no dyld shared cache.
    NotACache(object::Error),
    /// The header names a subcache file outside the cache's folder.
    BadSuffix(String),
    /// A subcache file beside the main one is missing or unreadable.
    Subcache {
        path: PathBuf,
        err: std::io::Error,
    },
    /// The cache's structures are invalid.
    Invalid(object::Error),
    NoImage(usize),
    /// An image is not valid Mach-O.
    InvalidImage {
        index: usize,
        err: object::Error,
    },
    NoUuid,
    NoCode,
}

impl std::fmt::Display for DyldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DyldError::Read(e) => write!(f, "{e}"),
            DyldError::NotACache(e) => write!(f, "not a dyld shared cache: {e}"),
            DyldError::BadSuffix(s) => write!(f, "its header names a subcache suffix {s:?}"),
            DyldError::Subcache { path, err } => write!(
                f,
                "its subcache {} cannot be read ({err}); a cache copied from a Mac needs every file beside it",
                path.display()
            ),
            DyldError::Invalid(e) => write!(f, "invalid dyld cache: {e}"),
            DyldError::NoImage(i) => write!(f, "no image {i}"),
            DyldError::InvalidImage { index, err } => {
                write!(f, "image {index}: invalid Mach-O in the cache: {err}")
            }
            DyldError::NoUuid => f.write_str("the image has no LC_UUID"),
            DyldError::NoCode => f.write_str("the image has no code bytes in the cache"),
        }
    }
}

impl DyldCache {
    /// Maps the main file at `path` and the subcache files its header names beside it
    /// (`PATH.01`…, or `.1`… before macOS 13, and `PATH.symbols`), and indexes its images.
    pub fn open(path: &Path) -> Result<DyldCache, DyldError> {
        let main = Rc::new(FileBytes::open(path).map_err(DyldError::Read)?);
        let suffixes = ObjectCache::<object::Endianness>::subcache_suffixes(&**main)
            .map_err(DyldError::NotACache)?;
        let mut files = vec![main];
        let mut has_symbols_file = false;
        for suffix in &suffixes {
            // Suffixes come from the file: one with a separator could point elsewhere.
            if suffix.contains('/') || suffix.contains('\\') || suffix.contains("..") {
                return Err(DyldError::BadSuffix(suffix.clone()));
            }
            let mut sub = path.as_os_str().to_owned();
            sub.push(suffix);
            let sub = PathBuf::from(sub);
            let data = FileBytes::open(&sub).map_err(|err| DyldError::Subcache {
                path: sub.clone(),
                err,
            })?;
            files.push(Rc::new(data));
            has_symbols_file = suffix == ".symbols";
        }
        let mut cache = DyldCache {
            path: path.to_path_buf(),
            files,
            has_symbols_file,
            images: Vec::new(),
        };
        let parsed = cache.parse()?;
        let mut images: Vec<(String, usize)> = parsed
            .images()
            .enumerate()
            .filter_map(|(i, image)| Some((image.path().ok()?.to_string(), i)))
            .collect();
        drop(parsed);
        crate::coldsort::sort_by(&mut images, Ord::cmp);
        cache.images = images;
        Ok(cache)
    }

    fn parse(&self) -> Result<ObjectCache<'_>, DyldError> {
        let subs: Vec<&[u8]> = self.files[1..].iter().map(|f| &***f).collect();
        ObjectCache::parse(&**self.files[0], &subs).map_err(DyldError::Invalid)
    }

    /// How many images the cache lists.
    pub fn image_count(&self) -> usize {
        self.images.len()
    }

    /// Bytes of the mapped files (address space).
    pub fn mapped_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.len() as u64).sum()
    }

    /// The images recorded at one of `paths`, else those whose file name is `name`.
    pub fn find(&self, paths: &[&str], name: &str) -> Vec<usize> {
        let at_path: Vec<usize> = self
            .images
            .iter()
            .filter(|(p, _)| paths.contains(&p.as_str()))
            .map(|&(_, i)| i)
            .collect();
        if !at_path.is_empty() {
            return at_path;
        }
        self.images
            .iter()
            .filter(|(p, _)| file_name(p) == name)
            .map(|&(_, i)| i)
            .collect()
    }

    /// The recorded path of image `index`.
    pub fn image_path(&self, index: usize) -> &str {
        self.images
            .iter()
            .find(|(_, i)| *i == index)
            .map_or("?", |(p, _)| p.as_str())
    }

    /// The debug ID of image `index` (its `LC_UUID` + `0`).
    pub fn image_id(&self, index: usize) -> Result<DebugId, DyldError> {
        let cache = self.parse()?;
        let file = parse_image(&cache, index)?;
        super::debug_id(&file).ok_or(DyldError::NoUuid)
    }

    /// Reads image `index` like a stripped Mach-O, shown as `shown`.
    pub fn load(&self, index: usize, shown: &Path) -> Result<NativeModule, LoadError> {
        let err = |e: DyldError| LoadError::new(LoadErrorKind::ParseError, shown, e);
        let cache = self.parse().map_err(err)?;
        let file = parse_image(&cache, index).map_err(err)?;
        let base = text_vmaddr(&file);
        let code = super::super::funcs::code_sections(&file);
        let mut names = Names::default();
        let mut symbols = super::symbols(&file, &mut names);
        symbols.extend(self.local_symbols(&cache, index, &mut names));
        names.check(shown)?;
        // LC_FUNCTION_STARTS: the load command is in the image's header, its data in the
        // file that holds the cache's shared __LINKEDIT (offsets are that file's).
        let starts = match (header_bytes(&cache, index), linkedit_file(&cache, &file)) {
            (Some(header), Some(linkedit)) => unwind::macho_function_starts(header, linkedit, base),
            _ => Vec::new(),
        };
        let table = FunctionTable::new(base, symbols, Vec::new(), starts, &code);
        Ok(NativeModule {
            debug_file: shown.to_path_buf(),
            base,
            code: code.clone(),
            dwarf: None,
            symbols: table,
            unsized_symbols: true,
            debug_map: None,
            warnings: Vec::new(),
            symbol_names: Default::default(),
        })
    }

    /// The code sections of image `index`, for disassembly.
    pub fn code(&self, index: usize) -> Result<ImageCode, DyldError> {
        let cache = self.parse()?;
        let file = parse_image(&cache, index)?;
        let base = text_vmaddr(&file);
        let mut data: Option<Rc<FileBytes>> = None;
        let mut sections = Vec::new();
        for s in file.sections().filter(|s| s.kind() == SectionKind::Text) {
            let Ok(bytes) = s.data() else { continue };
            let Some((holder, at)) = self.locate(bytes) else {
                continue;
            };
            // The text sections of one image lie in one file (its __TEXT segment).
            if data.as_ref().is_some_and(|d| !Rc::ptr_eq(d, holder)) {
                continue;
            }
            data.get_or_insert_with(|| holder.clone());
            if let Some(start) = s.address().checked_sub(base) {
                sections.push((start, bytes.len() as u64, at));
            }
        }
        let data = data.ok_or(DyldError::NoCode)?;
        Ok(ImageCode {
            arch: file.architecture(),
            data,
            sections,
        })
    }

    /// The file of this cache that `part` lies in, and where.
    fn locate(&self, part: &[u8]) -> Option<(&Rc<FileBytes>, usize)> {
        let at = part.as_ptr() as usize;
        self.files.iter().find_map(|f| {
            let base = f.as_ptr() as usize;
            (at >= base && at + part.len() <= base + f.len()).then(|| (f, at - base))
        })
    }

    /// The local symbols of image `index`: the cache builder moved them out of the
    /// image's symbol table into the local-symbols area of the `.symbols` file (or, before
    /// macOS 12, of the main file). That area is `dyld_cache_local_symbols_info`: an
    /// `nlist` table, its strings, and per image (keyed by the image's offset in the
    /// cache) the run of entries that are its locals.
    fn local_symbols(&self, cache: &ObjectCache<'_>, index: usize, names: &mut Names) -> Vec<Sym> {
        if !cache.is_little_endian() {
            return Vec::new();
        }
        let holder: &[u8] = if self.has_symbols_file {
            self.files.last().map_or(&[][..], |f| &***f)
        } else {
            &self.files[0]
        };
        let Some(image) = cache.images().nth(index) else {
            return Vec::new();
        };
        let address = image.info().address.get(object::Endianness::Little);
        let Some(first) = cache.mappings().next() else {
            return Vec::new();
        };
        let wide = cache.architecture().address_size() == Some(object::AddressSize::U64);
        local_symbols_of(holder, address.wrapping_sub(first.address()), wide, names)
            .unwrap_or_default()
    }
}

/// Parses `holder`'s local-symbols area for the image at `vm_offset` from the cache's
/// base. `None` where the area is missing or malformed.
fn local_symbols_of(
    holder: &[u8],
    vm_offset: u64,
    wide: bool,
    names: &mut Names,
) -> Option<Vec<Sym>> {
    let mapping_offset = u32_at(holder, 16)?;
    let info = u64_at(holder, 72)?;
    let info_size = u64_at(holder, 80)?;
    if info == 0 || info_size < 24 {
        return None;
    }
    let area = holder.get(usize::try_from(info).ok()?..)?;
    let area = area.get(..usize::try_from(info_size).ok()?.min(area.len()))?;
    let [
        nlist_off,
        nlist_count,
        strings_off,
        strings_size,
        entries_off,
        entries_count,
    ] = [0u64, 4, 8, 12, 16, 20].map(|o| u32_at(area, o).map(u64::from));
    let (nlist_off, nlist_count) = (nlist_off?, nlist_count?);
    let (strings_off, strings_size) = (strings_off?, strings_size?);
    let (entries_off, entries_count) = (entries_off?, entries_count?);
    // Since the header has `symbolFileUUID` (macOS 12), entries are 64-bit VM offsets
    // from the cache's base; before, 32-bit file offsets (equal for a Mach-O header).
    let new_entries = mapping_offset >= 0x190;
    let entry_size = if new_entries { 16 } else { 12 };
    let (mut start, mut count) = (None, 0u64);
    for k in 0..entries_count.min(area.len() as u64 / entry_size) {
        let at = entries_off.checked_add(k * entry_size)?;
        let (dylib, rest) = if new_entries {
            (u64_at(area, at)?, at + 8)
        } else {
            (u64::from(u32_at(area, at)?), at + 4)
        };
        if dylib == vm_offset {
            start = Some(u64::from(u32_at(area, rest)?));
            count = u64::from(u32_at(area, rest + 4)?);
            break;
        }
    }
    let start = start?;
    let strings = area.get(
        usize::try_from(strings_off).ok()?
            ..usize::try_from(strings_off.checked_add(strings_size)?).ok()?,
    )?;
    let nlist_size: u64 = if wide { 16 } else { 12 };
    let end = start.checked_add(count)?.min(nlist_count);
    names.new_file();
    let mut out = Vec::new();
    for k in start..end {
        if names.full() {
            break;
        }
        let at = nlist_off.checked_add(k.checked_mul(nlist_size)?)?;
        let strx = u32_at(area, at)?;
        let n_type = *area.get(usize::try_from(at + 4).ok()?)?;
        let value = if wide {
            u64_at(area, at + 8)?
        } else {
            u64::from(u32_at(area, at + 8)?)
        };
        // Defined in a section (N_SECT), not a debugging (stab) entry.
        if n_type & 0xe0 != 0 || n_type & 0x0e != 0x0e {
            continue;
        }
        // Read once per place in the string table, however many entries name it.
        let read = || {
            let s = strings.get(strx as usize..)?;
            let len = s.iter().position(|&b| b == 0)?;
            let name = std::str::from_utf8(&s[..len]).ok()?;
            // Mach-O prefixes C names with an underscore.
            Some(name.strip_prefix('_').unwrap_or(name))
        };
        let Some(name) = names.intern_at(Some(u64::from(strx)), read) else {
            continue;
        };
        // Shipped caches hide many local names: such a function is known by its start
        // (fun_<hex>), which tells functions apart where one shared name would not.
        if &*name == "<redacted>" {
            continue;
        }
        out.push((value, 0, name));
    }
    Some(out)
}

fn parse_image<'d>(cache: &ObjectCache<'d>, index: usize) -> Result<object::File<'d>, DyldError> {
    let image = cache.images().nth(index).ok_or(DyldError::NoImage(index))?;
    image
        .parse_object()
        .map_err(|err| DyldError::InvalidImage { index, err })
}

fn text_vmaddr(file: &object::File<'_>) -> u64 {
    file.segments()
        .find(|s| s.name().ok().flatten() == Some("__TEXT"))
        .map_or(0, |s| s.address())
}

/// The image's Mach-O header and load commands, to the end of the file holding them.
fn header_bytes<'d>(cache: &ObjectCache<'d>, index: usize) -> Option<&'d [u8]> {
    let (data, offset) = cache.images().nth(index)?.image_data_and_offset().ok()?;
    data.get(usize::try_from(offset).ok()?..)
}

/// The whole (sub)cache file that holds the image's `__LINKEDIT`.
fn linkedit_file<'d>(cache: &ObjectCache<'d>, file: &object::File<'d>) -> Option<&'d [u8]> {
    let linkedit = file
        .segments()
        .find(|s| s.name().ok().flatten() == Some("__LINKEDIT"))?;
    cache
        .data_and_offset_for_address(linkedit.address())
        .map(|(d, _)| d)
}

/// The images of `cache` whose ID is `want`, or why none is: the message says which
/// image has which UUID (a macOS update replaces the cache and every UUID in it).
pub fn check_id(cache: &DyldCache, index: usize, want: &DebugId) -> Result<(), LoadError> {
    let found = cache
        .image_id(index)
        .map_err(|e| LoadError::new(LoadErrorKind::ParseError, &cache.path, e))?;
    if *want == found {
        return Ok(());
    }
    Err(LoadError::msg(
        LoadErrorKind::UnmatchedDebugId,
        format!(
            "the dyld shared cache {} has {} with UUID {}, the profile wants {} (macOS updated since the profile was recorded?)",
            cache.path.display(),
            cache.image_path(index),
            uuid_of(&found.path_component()),
            uuid_of(&want.path_component()),
        ),
    ))
}

/// A Mach-O debug ID as the UUID it is (`8-4-4-4-12`, upper case), or as given.
fn uuid_of(id: &str) -> String {
    let h = id.get(..32).unwrap_or(id).to_ascii_uppercase();
    if h.len() == 32 && h.is_char_boundary(8) {
        format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        )
    } else {
        id.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corrupt_local_symbol_areas_give_nothing() {
        let mut d = vec![0u8; 0x300];
        d[16..20].copy_from_slice(&0x200u32.to_le_bytes());
        d[72..80].copy_from_slice(&0x200u64.to_le_bytes());
        d[80..88].copy_from_slice(&0x100u64.to_le_bytes());
        // One entry for the image at 0x4000 with a huge count, strings past the end.
        let area = 0x200;
        let put =
            |d: &mut Vec<u8>, at: usize, v: u32| d[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put(&mut d, area, 0x40);
        put(&mut d, area + 4, u32::MAX);
        put(&mut d, area + 8, 0xf0);
        put(&mut d, area + 12, 0xffff);
        put(&mut d, area + 16, 0x18);
        put(&mut d, area + 20, u32::MAX);
        d[area + 0x18..area + 0x20].copy_from_slice(&0x4000u64.to_le_bytes());
        put(&mut d, area + 0x20, 0);
        put(&mut d, area + 0x24, u32::MAX);
        assert!(local_symbols_of(&d, 0x4000, true, &mut Names::default()).is_none());
        for cut in [0, 17, 80, 0x210, 0x2ff] {
            assert!(local_symbols_of(&d[..cut], 0x4000, true, &mut Names::default()).is_none());
        }
        assert_eq!(
            uuid_of("0123456789ABCDEF0123456789ABCDEF0"),
            "01234567-89AB-CDEF-0123-456789ABCDEF"
        );
    }
}

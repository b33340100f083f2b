//! Bytes of debug files: mapped from disk (so a parsed module shares the page cache instead
//! of holding a copy of its DWARF), or owned when they had to be decompressed.

use std::fmt;
use std::ops::Deref;
use std::path::Path;
use std::rc::Rc;

/// A whole file, read-only.
pub struct FileBytes {
    inner: Inner,
}

enum Inner {
    /// On every platform (`mmap`, `CreateFileMapping`): a 1 GB `xul.pdb` or libxul costs
    /// address space, not memory.
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// Largest debug file read into memory where it cannot be mapped (the cache bound
/// counts it; a mapped file costs address space, not memory).
pub const MAX_OWNED_FILE: u64 = 4 << 30;

impl FileBytes {
    /// Bytes already in memory (the vDSO image).
    pub fn from_vec(v: Vec<u8>) -> FileBytes {
        FileBytes {
            inner: Inner::Owned(v),
        }
    }

    /// Maps `path` (reads it when mapping fails, or for an empty file).
    pub fn open(path: &Path) -> std::io::Result<FileBytes> {
        let file = crate::fs::open_regular(path)?;
        let meta = file.metadata()?;
        if meta.len() > 0 && crate::fs::safe_to_map(&meta) {
            // SAFETY: a private read-only mapping of a regular file we opened, which only
            // this user or root can change (`safe_to_map`): the user's own tools, not
            // another user, could truncate it under the mapping (on Windows the mapping
            // keeps the file from being truncated).
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                return Ok(FileBytes {
                    inner: Inner::Mapped(map),
                });
            }
        }
        Ok(FileBytes {
            inner: Inner::Owned(crate::fs::read_file(file, MAX_OWNED_FILE)?),
        })
    }
}

impl FileBytes {
    /// An unnamed temporary file of this process's own (a decompressed section written out
    /// of the heap), mapped: its pages are the page cache's, given back after each read
    /// as a debug file's are ([`Self::release`]).
    pub fn spilled(file: &std::fs::File) -> std::io::Result<FileBytes> {
        // SAFETY: a private read-only mapping of a file no other process can open or
        // truncate (`O_TMPFILE | O_EXCL`: never linked into a folder) and that this
        // process no longer writes.
        let map = unsafe { memmap2::Mmap::map(file) }?;
        Ok(FileBytes {
            inner: Inner::Mapped(map),
        })
    }

    /// Bytes held in this process's memory whatever the kernel does: those of a copy, none
    /// of a mapping (whose pages are the page cache's).
    pub fn owned_len(&self) -> usize {
        match &self.inner {
            Inner::Mapped(_) => 0,
            Inner::Owned(v) => v.len(),
        }
    }

    /// Maps the pages of `part` (a range of this file) in one call, ahead of a read of
    /// all of it (a DWARF unit and its line program): one system call instead of a page
    /// fault every 16 pages, 2-3 % of a cold request at libxul's size (MEASUREMENTS).
    /// A kernel before 5.14 refuses the advice; the reads then fault as before.
    pub fn populate(&self, part: &[u8]) {
        #[cfg(target_os = "linux")]
        if let Some((map, at, end)) = self.mapped(part) {
            let start = at / page_size() * page_size();
            let _ = map.advise_range(memmap2::Advice::PopulateRead, start, end - start);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = part;
    }

    /// Gives back to the kernel the whole pages of `part` (a range of this file) when
    /// mapped: a module read once per request keeps only what it reads again in memory.
    /// The pages stay mapped; reading them again faults the file's bytes back in. (Unix:
    /// Windows trims a mapping's pages from the working set by itself.)
    pub fn release(&self, part: &[u8]) {
        #[cfg(unix)]
        if let Some((map, at, end)) = self.mapped(part) {
            let page = page_size();
            let start = at.div_ceil(page) * page;
            let stop = end / page * page;
            if stop > start {
                // SAFETY: whole pages inside our private, read-only file mapping: dropping
                // them loses nothing (they were never written), later reads refault them.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        start,
                        stop - start,
                    )
                };
            }
        }
        #[cfg(not(unix))]
        let _ = part;
    }

    /// The mapping and where `part` is in it (offsets of its start and end), when `part`
    /// is a range of this mapped file.
    #[cfg(unix)]
    fn mapped(&self, part: &[u8]) -> Option<(&memmap2::Mmap, usize, usize)> {
        let Inner::Mapped(map) = &self.inner else {
            return None;
        };
        let base = map.as_ptr() as usize;
        let (at, end) = (part.as_ptr() as usize, part.as_ptr() as usize + part.len());
        (at >= base && end <= base + map.len()).then_some((map, at - base, end - base))
    }
}

/// The system's page size (4 KiB, or 16 KiB on Apple silicon).
#[cfg(unix)]
fn page_size() -> usize {
    // SAFETY: sysconf only reads a system constant.
    4096usize.max(unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize)
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.inner {
            Inner::Mapped(map) => map,
            Inner::Owned(v) => v,
        }
    }
}

/// A section's bytes for gimli: a range of a shared file, mapped or owned (decompressed
/// sections are a file of their own, held in memory).
#[derive(Clone)]
pub struct Bytes {
    file: Rc<FileBytes>,
    start: usize,
    len: usize,
}

impl Bytes {
    /// `part` as a range of `file` when it lies in it, else a copy.
    pub fn of(file: &Rc<FileBytes>, part: &[u8]) -> Bytes {
        let base = file.as_ptr() as usize;
        let at = part.as_ptr() as usize;
        if at >= base && at + part.len() <= base + file.len() {
            Bytes {
                file: file.clone(),
                start: at - base,
                len: part.len(),
            }
        } else {
            Bytes::owned(part.to_vec())
        }
    }

    /// The whole of `file`.
    pub fn whole(file: Rc<FileBytes>) -> Bytes {
        let len = file.len();
        Bytes {
            file,
            start: 0,
            len,
        }
    }

    /// Bytes made in memory (a decompressed section): kept as they are, not copied.
    pub fn owned(v: Vec<u8>) -> Bytes {
        let len = v.len();
        Bytes {
            file: Rc::new(FileBytes::from_vec(v)),
            start: 0,
            len,
        }
    }

    /// The file these bytes are a range of, and where in it they lie.
    pub fn parts(self) -> (Rc<FileBytes>, usize, usize) {
        (self.file, self.start, self.len)
    }

    /// See [`FileBytes::release`]; nothing for owned bytes.
    pub fn release(&self, part: &[u8]) {
        self.file.release(part);
    }

    /// See [`FileBytes::populate`].
    pub fn populate(&self, part: &[u8]) {
        self.file.populate(part);
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.file[self.start..self.start + self.len]
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bytes({} bytes)", self.len())
    }
}

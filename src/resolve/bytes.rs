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
    #[cfg(unix)]
    Mapped {
        ptr: *const u8,
        len: usize,
    },
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

    /// Maps `path` (reads it on platforms without mmap, or when mapping fails).
    pub fn open(path: &Path) -> std::io::Result<FileBytes> {
        let file = crate::fs::open_regular(path)?;
        let len = file.metadata()?.len();
        #[cfg(unix)]
        if len > 0
            && let Ok(len) = usize::try_from(len)
        {
            use std::os::fd::AsRawFd;
            // SAFETY: a private read-only mapping of a file we opened; the fd may be closed
            // afterwards. (If another process truncates the file meanwhile, reading the lost
            // pages faults: the same risk every mmap-based symbolizer takes.)
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE,
                    file.as_raw_fd(),
                    0,
                )
            };
            if ptr != libc::MAP_FAILED && !ptr.is_null() {
                return Ok(FileBytes {
                    inner: Inner::Mapped {
                        ptr: ptr as *const u8,
                        len,
                    },
                });
            }
        }
        let _ = len;
        Ok(FileBytes {
            inner: Inner::Owned(crate::fs::read_regular(path, MAX_OWNED_FILE)?),
        })
    }
}

impl FileBytes {
    /// Bytes held in this process's memory whatever the kernel does: those of a copy, none
    /// of a mapping (whose pages are the page cache's).
    pub fn owned_len(&self) -> usize {
        match &self.inner {
            #[cfg(unix)]
            Inner::Mapped { .. } => 0,
            Inner::Owned(v) => v.len(),
        }
    }

    /// Gives back to the kernel the whole pages of `part` (a range of this file) when
    /// mapped: a module read once per request keeps only what it reads again in memory.
    /// The pages stay mapped; reading them again faults the file's bytes back in.
    pub fn release(&self, part: &[u8]) {
        #[cfg(unix)]
        if let Inner::Mapped { ptr, len } = self.inner {
            let base = ptr as usize;
            let (at, end) = (part.as_ptr() as usize, part.as_ptr() as usize + part.len());
            if at < base || end > base + len {
                return;
            }
            let page = 4096usize.max(unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize);
            let start = at.div_ceil(page) * page;
            let stop = end / page * page;
            if stop > start {
                // SAFETY: whole pages inside our private, read-only file mapping: dropping
                // them loses nothing (they were never written), later reads refault them.
                unsafe {
                    libc::madvise(
                        start as *mut libc::c_void,
                        stop - start,
                        libc::MADV_DONTNEED,
                    );
                }
            }
        }
        #[cfg(not(unix))]
        let _ = part;
    }
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.inner {
            // SAFETY: the mapping lives as long as self and is never written.
            #[cfg(unix)]
            Inner::Mapped { ptr, len } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
            Inner::Owned(v) => v,
        }
    }
}

impl Drop for FileBytes {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Inner::Mapped { ptr, len } = self.inner {
            // SAFETY: unmapping what open() mapped, once.
            unsafe {
                libc::munmap(ptr as *mut libc::c_void, len);
            }
        }
    }
}

/// A section's bytes for gimli: a range of a shared file, or owned bytes.
#[derive(Clone)]
pub enum Bytes {
    InFile {
        file: Rc<FileBytes>,
        start: usize,
        len: usize,
    },
    /// A `Vec` behind an `Rc` rather than an `Rc<[u8]>`: making the latter from a
    /// decompressed section would copy it, twice its size at the peak.
    Owned(Rc<Vec<u8>>),
}

impl Bytes {
    /// `part` as a range of `file` when it lies in it, else a copy.
    pub fn of(file: &Rc<FileBytes>, part: &[u8]) -> Bytes {
        let base = file.as_ptr() as usize;
        let at = part.as_ptr() as usize;
        if at >= base && at + part.len() <= base + file.len() {
            Bytes::InFile {
                file: file.clone(),
                start: at - base,
                len: part.len(),
            }
        } else {
            Bytes::Owned(Rc::new(part.to_vec()))
        }
    }
}

impl Bytes {
    /// See [`FileBytes::release`]; nothing for owned bytes.
    pub fn release(&self, part: &[u8]) {
        if let Bytes::InFile { file, .. } = self {
            file.release(part);
        }
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::InFile { file, start, len } => &file[*start..*start + *len],
            Bytes::Owned(b) => b,
        }
    }
}

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Bytes({} bytes)", self.len())
    }
}

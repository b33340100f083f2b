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

#[cfg(unix)]
mod sys {
    unsafe extern "C" {
        pub fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64)
        -> *mut u8;
        pub fn munmap(addr: *mut u8, len: usize) -> i32;
    }
    pub const PROT_READ: i32 = 1;
    pub const MAP_PRIVATE: i32 = 2;
}

impl FileBytes {
    /// Maps `path` (reads it on platforms without mmap, or when mapping fails).
    pub fn open(path: &Path) -> std::io::Result<FileBytes> {
        let file = std::fs::File::open(path)?;
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
                sys::mmap(
                    std::ptr::null_mut(),
                    len,
                    sys::PROT_READ,
                    sys::MAP_PRIVATE,
                    file.as_raw_fd(),
                    0,
                )
            };
            if ptr as isize != -1 && !ptr.is_null() {
                return Ok(FileBytes {
                    inner: Inner::Mapped { ptr, len },
                });
            }
        }
        let _ = len;
        Ok(FileBytes {
            inner: Inner::Owned(std::fs::read(path)?),
        })
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
                sys::munmap(ptr as *mut u8, len);
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
    Owned(Rc<[u8]>),
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
            Bytes::Owned(part.into())
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

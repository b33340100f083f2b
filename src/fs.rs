//! Opening files named from outside (profiles, debug files, sources, zips, downloads,
//! request bodies): only regular files, so a FIFO, device or folder cannot block or be read
//! forever, nor a pseudo-file (`/proc`, `/sys`) that says one size and reads as another.
//! Every module opens such files through here.

use std::path::Path;

/// Opens `path` for reading only if it is a regular file: a FIFO, device or folder named
/// as a debug file, source or zip must neither block the server nor be read forever, nor
/// be opened at all (opening a serial port raises DTR, which resets an Arduino on USB).
/// So the type is checked first, without opening (`stat`), and again on what was opened
/// (a file swapped in between); on Unix the open itself cannot block (`O_NONBLOCK`,
/// which regular files ignore) nor make a terminal ours (`O_NOCTTY`).
///
/// Files of the kernel's pseudo-filesystems are refused too, though they say they are
/// regular: `/proc/self/pagemap` has size 0 and reads as 8 bytes per page of the reader's
/// own address space (gigabytes), `/sys` files say 4096 and read as anything. They are
/// known by the filesystem the opened file is on (`fstatfs`), so a symlink to one is
/// caught too, and by their folder everywhere else.
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let not_regular =
        || std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    if let Some(fs) = pseudo_folder(path) {
        return Err(pseudo_file(fs));
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = opts.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    #[cfg(target_os = "linux")]
    if let Some(fs) = pseudo_filesystem(&file) {
        return Err(pseudo_file(fs));
    }
    Ok(file)
}

fn pseudo_file(fs: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("a pseudo-file of the {fs} filesystem, not a file of bytes on disk"),
    )
}

/// The pseudo-filesystem an absolute path names by its first folder, on every platform
/// (`/proc`, `/sys`, `/dev`), before anything is opened.
fn pseudo_folder(path: &Path) -> Option<&'static str> {
    let mut parts = path.components();
    if parts.next() != Some(std::path::Component::RootDir) {
        return None;
    }
    match parts.next()?.as_os_str().to_str()? {
        "proc" => Some("proc"),
        "sys" => Some("sysfs"),
        "dev" => Some("dev"),
        _ => None,
    }
}

/// The pseudo-filesystem (kernel-made contents) `file` is on, by `fstatfs`'s `f_type`.
#[cfg(target_os = "linux")]
fn pseudo_filesystem(file: &std::fs::File) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    // The magic numbers of linux/magic.h.
    const PSEUDO: &[(i64, &str)] = &[
        (0x9fa0, "proc"),
        (0x6265_6572, "sysfs"),
        (0x6462_6720, "debugfs"),
        (0x7472_6163, "tracefs"),
        (0x7363_6673, "securityfs"),
        (0x0027_e0eb, "cgroup"),
        (0x6367_7270, "cgroup2"),
        (0x1cd1, "devpts"),
        (0xcafe_4a11, "bpf"),
        (0x6265_6570, "configfs"),
        (0x6165_676c, "pstore"),
        (0xde5e_81e4, "efivarfs"),
        (0x6573_5543, "fusectl"),
        (0x4249_4e4d, "binfmt_misc"),
        (0x6e73_6673, "nsfs"),
        (0x5346_4f43, "sockfs"),
        (0x5049_5045, "pipefs"),
        (0x0904_1934, "anon_inode"),
        (0x1980_0202, "mqueue"),
    ];
    // SAFETY: `statfs` is a plain C struct of integers, for which all zeroes is valid.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatfs writes one `statfs` into memory we own, for a descriptor we hold.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)]
    let kind = st.f_type as i64;
    PSEUDO.iter().find(|(m, _)| *m == kind).map(|(_, n)| *n)
}

/// Reads a whole regular file of at most `max` bytes.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    read_file(open_regular(path)?, max)
}

/// Reads a whole file opened by [`open_regular`], of at most `max` bytes, and never past
/// the size it had when opened: a file that grows meanwhile (or lies about its size)
/// cannot make the read longer than what was checked.
pub fn read_file(file: std::fs::File, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let len = file.metadata()?.len();
    if len > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{len} bytes, over the limit of {max}"),
        ));
    }
    let mut out = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut out)?;
    Ok(out)
}

/// What tells one version of a file from another without reading it: a file replaced,
/// truncated or rewritten since it was opened has another stamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64),
}

impl FileStamp {
    /// The stamp of the file at `path` now (following symlinks, as opening does).
    pub fn of(path: &Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(FileStamp::from_metadata(&m))
    }

    pub fn from_metadata(m: &std::fs::Metadata) -> FileStamp {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            len: m.len(),
            modified: m.modified().ok(),
            #[cfg(unix)]
            inode: (m.dev(), m.ino()),
        }
    }

    /// Its length, modification time, and device and inode (0 where the platform has
    /// none), for a record kept on disk (the prepared index's sources).
    pub fn parts(&self) -> (u64, Option<std::time::SystemTime>, (u64, u64)) {
        #[cfg(unix)]
        let inode = self.inode;
        #[cfg(not(unix))]
        let inode = (0, 0);
        (self.len, self.modified, inode)
    }
}

/// Whether a file may be mapped rather than read into memory: only if nobody but this
/// user (or root) can change it. Reading a page of a mapped file that another process
/// truncated raises SIGBUS, which kills the whole server; a file owned by another user,
/// or writable by others, may be truncated at any time (a bundle in `/tmp`, a shared
/// symbol folder), so it is read instead.
pub fn safe_to_map(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid only reads this process's effective user ID.
        let me = unsafe { libc::geteuid() };
        (m.uid() == me || m.uid() == 0) && m.mode() & 0o022 == 0
    }
    // Windows keeps a mapped file from being truncated.
    #[cfg(not(unix))]
    {
        let _ = m;
        true
    }
}

//! Opening files named from outside (profiles, debug files, sources, zips, downloads,
//! request bodies): only regular files, so a FIFO, device or folder cannot block or be read
//! forever. Every module opens such files through here.

use std::path::Path;

/// Opens `path` for reading only if it is a regular file: a FIFO, device or folder named
/// as a debug file, source or zip must neither block the server nor be read forever, nor
/// be opened at all (opening a serial port raises DTR, which resets an Arduino on USB).
/// So the type is checked first, without opening (`stat`), and again on what was opened
/// (a file swapped in between); on Unix the open itself cannot block (`O_NONBLOCK`,
/// which regular files ignore) nor make a terminal ours (`O_NOCTTY`).
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    let not_regular =
        || std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file");
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
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
    Ok(file)
}

/// Reads a whole regular file of at most `max` bytes.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{len} bytes, over the limit of {max}"),
        ));
    }
    let mut out = Vec::with_capacity(len as usize);
    file.take(max).read_to_end(&mut out)?;
    Ok(out)
}

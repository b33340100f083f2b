//! Reads entries of a zip archive in place (for `--symbols-zip`): the central directory
//! once, then one entry at a time. Stored and deflated entries, zip64 where needed.

use std::collections::HashMap;
use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Why an archive or one of its entries cannot be read.
#[derive(Debug)]
pub enum ZipError {
    /// Reading the archive failed.
    Io(std::io::Error),
    /// No end of central directory: not a zip archive.
    NotZip,
    /// A structure is not what the format says (which one).
    Corrupt(&'static str),
    NoEntry,
    /// An entry bigger than is ever inflated into memory.
    TooLarge(u64),
    /// An entry that expands far more than real symbol files do.
    Bomb {
        compressed: u64,
        uncompressed: u64,
    },
    UnsupportedMethod(u16),
    /// The compressed data is corrupt.
    Data(std::io::Error),
}

impl fmt::Display for ZipError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ZipError::Io(e) => write!(f, "{e}"),
            ZipError::NotZip => f.write_str("not a zip archive (no end of central directory)"),
            ZipError::Corrupt(what) => write!(f, "corrupt {what}"),
            ZipError::NoEntry => f.write_str("no such entry"),
            ZipError::TooLarge(n) => write!(f, "entry of {n} bytes is too large"),
            ZipError::Bomb {
                compressed,
                uncompressed,
            } => write!(
                f,
                "entry expands {} times ({compressed} to {uncompressed} bytes): refused as a zip bomb",
                uncompressed / compressed.max(&1)
            ),
            ZipError::UnsupportedMethod(m) => write!(f, "unsupported compression method {m}"),
            ZipError::Data(e) => write!(f, "corrupt entry data: {e}"),
        }
    }
}

struct Entry {
    method: u16,
    crc: u32,
    compressed: u64,
    uncompressed: u64,
    local_header: u64,
}

pub struct ZipArchive {
    pub path: PathBuf,
    entries: HashMap<String, Entry>,
}

fn u16_at(b: &[u8], i: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// Largest entry we inflate into memory.
const MAX_ENTRY: u64 = 4 << 30;
/// Most an entry may expand (uncompressed / compressed) once over `RATIO_FREE` bytes:
/// real `.sym` files deflate about 5 to 10 times; a zip bomb a thousand times.
const MAX_RATIO: u64 = 50;
const RATIO_FREE: u64 = 1 << 20;

impl ZipArchive {
    pub fn open(path: &Path) -> Result<ZipArchive, ZipError> {
        let mut f = crate::fs::open_regular(path).map_err(ZipError::Io)?;
        let len = f.metadata().map_err(ZipError::Io)?.len();
        // The end-of-central-directory record is in the last 64 KiB + 22 bytes.
        let tail_len = len.min(65_557);
        let mut tail = vec![0; tail_len as usize];
        f.seek(SeekFrom::Start(len - tail_len))
            .and_then(|_| f.read_exact(&mut tail))
            .map_err(ZipError::Io)?;
        let eocd = (0..tail.len().saturating_sub(21))
            .rev()
            .find(|&i| tail[i..i + 4] == [0x50, 0x4b, 0x05, 0x06])
            .ok_or(ZipError::NotZip)?;
        let bad = || ZipError::Corrupt("zip central directory");
        let mut count = u64::from(u16_at(&tail, eocd + 10).ok_or_else(bad)?);
        let mut cd_size = u64::from(u32_at(&tail, eocd + 12).ok_or_else(bad)?);
        let mut cd_offset = u64::from(u32_at(&tail, eocd + 16).ok_or_else(bad)?);
        // Zip64: a locator just before the EOCD points at the zip64 EOCD record.
        if eocd >= 20 && tail[eocd - 20..eocd - 16] == [0x50, 0x4b, 0x06, 0x07] {
            let rec = u64_at(&tail, eocd - 12).ok_or_else(bad)?;
            let mut r = [0u8; 56];
            f.seek(SeekFrom::Start(rec))
                .and_then(|_| f.read_exact(&mut r))
                .map_err(ZipError::Io)?;
            if r[..4] != [0x50, 0x4b, 0x06, 0x06] {
                return Err(ZipError::Corrupt("zip64 end of central directory"));
            }
            count = u64_at(&r, 32).ok_or_else(bad)?;
            cd_size = u64_at(&r, 40).ok_or_else(bad)?;
            cd_offset = u64_at(&r, 48).ok_or_else(bad)?;
        }
        if cd_offset.checked_add(cd_size).is_none_or(|end| end > len) || cd_size > 1 << 32 {
            return Err(bad());
        }
        let mut cd = vec![0; cd_size as usize];
        f.seek(SeekFrom::Start(cd_offset))
            .and_then(|_| f.read_exact(&mut cd))
            .map_err(ZipError::Io)?;
        let mut entries = HashMap::new();
        let mut i = 0usize;
        for _ in 0..count {
            if cd.get(i..i + 4) != Some(&[0x50, 0x4b, 0x01, 0x02][..]) {
                return Err(bad());
            }
            let method = u16_at(&cd, i + 10).ok_or_else(bad)?;
            let crc = u32_at(&cd, i + 16).ok_or_else(bad)?;
            let mut compressed = u64::from(u32_at(&cd, i + 20).ok_or_else(bad)?);
            let mut uncompressed = u64::from(u32_at(&cd, i + 24).ok_or_else(bad)?);
            let name_len = usize::from(u16_at(&cd, i + 28).ok_or_else(bad)?);
            let extra_len = usize::from(u16_at(&cd, i + 30).ok_or_else(bad)?);
            let comment_len = usize::from(u16_at(&cd, i + 32).ok_or_else(bad)?);
            let mut local_header = u64::from(u32_at(&cd, i + 42).ok_or_else(bad)?);
            let name = cd.get(i + 46..i + 46 + name_len).ok_or_else(bad)?;
            let name = String::from_utf8_lossy(name).into_owned();
            let extra = cd
                .get(i + 46 + name_len..i + 46 + name_len + extra_len)
                .ok_or_else(bad)?;
            // Zip64 extended information: the fields that overflowed, in order.
            let mut j = 0;
            while j + 4 <= extra.len() {
                let id = u16_at(extra, j).ok_or_else(bad)?;
                let size = usize::from(u16_at(extra, j + 2).ok_or_else(bad)?);
                if id == 1 {
                    let mut k = j + 4;
                    for field in [&mut uncompressed, &mut compressed, &mut local_header] {
                        if *field == 0xFFFF_FFFF {
                            *field = u64_at(extra, k).ok_or_else(bad)?;
                            k += 8;
                        }
                    }
                }
                j += 4 + size;
            }
            entries.insert(
                name,
                Entry {
                    method,
                    crc,
                    compressed,
                    uncompressed,
                    local_header,
                },
            );
            i += 46 + name_len + extra_len + comment_len;
        }
        Ok(ZipArchive {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The entries' names (fuzzing and diagnostics).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The bytes of one entry, CRC-checked.
    pub fn read(&self, name: &str) -> Result<Vec<u8>, ZipError> {
        let e = self.entries.get(name).ok_or(ZipError::NoEntry)?;
        if e.uncompressed > MAX_ENTRY {
            return Err(ZipError::TooLarge(e.uncompressed));
        }
        if e.uncompressed > RATIO_FREE && e.uncompressed / e.compressed.max(1) > MAX_RATIO {
            return Err(ZipError::Bomb {
                compressed: e.compressed,
                uncompressed: e.uncompressed,
            });
        }
        let mut f = crate::fs::open_regular(&self.path).map_err(ZipError::Io)?;
        let mut local = [0u8; 30];
        f.seek(SeekFrom::Start(e.local_header))
            .and_then(|_| f.read_exact(&mut local))
            .map_err(ZipError::Io)?;
        if local[..4] != [0x50, 0x4b, 0x03, 0x04] {
            return Err(ZipError::Corrupt("entry (bad local header)"));
        }
        let skip =
            u64::from(u16_at(&local, 26).unwrap_or(0)) + u64::from(u16_at(&local, 28).unwrap_or(0));
        f.seek(SeekFrom::Current(skip as i64))
            .map_err(ZipError::Io)?;
        let raw = f.take(e.compressed);
        // Reserved up to the compressed size only: the recorded size is the archive's word,
        // and the buffer grows as bytes really come (at most `uncompressed` + 1 of them).
        let mut out = Vec::with_capacity(e.uncompressed.min(e.compressed).min(1 << 28) as usize);
        match e.method {
            0 => raw.take(e.uncompressed).read_to_end(&mut out),
            8 => flate2::read::DeflateDecoder::new(raw)
                .take(e.uncompressed + 1)
                .read_to_end(&mut out),
            m => return Err(ZipError::UnsupportedMethod(m)),
        }
        .map_err(ZipError::Data)?;
        let mut crc = flate2::Crc::new();
        crc.update(&out);
        if out.len() as u64 != e.uncompressed || crc.sum() != e.crc {
            return Err(ZipError::Corrupt("entry (size or CRC does not match)"));
        }
        Ok(out)
    }
}

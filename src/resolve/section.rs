//! The bottom of the format layer: a section's bytes out of a parsed object file
//! (decompressed when the file compresses it) and the file's byte order, for gimli.
//!
//! Debug files come from symbol servers and are untrusted: a compressed section's header
//! says how big it inflates, and a few MB of zlib or zstd can claim (and hold) gigabytes.
//! Every module therefore has one [`Budget`] of decompressed bytes for all its sections.

use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

use object::{Object, ObjectSection};

use super::bytes::{Bytes, FileBytes};

/// Decompressed bytes a module may always hold, whatever its compressed size: small files
/// have the highest ratios (libc6-dbg's `crti.o`-sized files reach 25x over the module,
/// 83x for one `.debug_abbrev`).
pub const BUDGET_FREE: u64 = 64 << 20;
/// Most a module's compressed sections may inflate, over [`BUDGET_FREE`]. Measured with
/// `objcopy --compress-debug-sections=zlib` where not shipped so: real DWARF inflates 2 to
/// 4 times (the 273 files of Debian's libc6-dbg 2.6x overall, the highest 25x on a 72 KB
/// module; node 3.1x, cargo 3.9x, libpython3.13 2.2x of 25 MB, this crate's debug build
/// 3.5x of 40 MB), zeros 1000 times. At 50x a 6 MB bomb inflates 300 MB at most, refused
/// before any inflating when a header claims more.
pub const BUDGET_RATIO: u64 = 50;
/// The budget's ceiling, whatever the file's size: the bound of the symbol cache, which
/// a module holding more could not stay in anyway (`store::DEFAULT_MAX_BYTES` is this).
pub const BUDGET_MAX: u64 = 4 << 30;

/// Why a module's debug sections cannot be used: a section that cannot be read or
/// decompressed, or DWARF that is invalid once read. Its `Display` is the message of the
/// module's warning; [`Self::kind`] its kind.
#[derive(Debug)]
pub enum DebugDataError {
    /// The section's header cannot be read.
    Header { section: String, problem: String },
    /// A compression other than zlib and zstd.
    UnsupportedCompression { section: String, format: String },
    /// The section decompresses past what is left of the module's budget.
    OverBudget {
        section: String,
        claimed: u64,
        limit: u64,
        left: u64,
    },
    /// A size that does not fit in memory at all.
    TooLarge { section: String },
    /// The compressed stream is corrupt.
    Corrupt {
        section: String,
        codec: &'static str,
        problem: String,
    },
    /// The stream holds fewer bytes than its header claims.
    Short {
        section: String,
        got: usize,
        expected: usize,
    },
    /// The sections were read; the DWARF in them is invalid.
    InvalidDwarf(gimli::Error),
}

impl DebugDataError {
    /// `DecompressionLimit` for a section past the budget, `ParseError` otherwise.
    pub fn kind(&self) -> super::LoadErrorKind {
        match self {
            DebugDataError::OverBudget { .. } => super::LoadErrorKind::DecompressionLimit,
            _ => super::LoadErrorKind::ParseError,
        }
    }
}

impl std::fmt::Display for DebugDataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DebugDataError::Header { section, problem } => {
                write!(f, "section {section}: {problem}")
            }
            DebugDataError::UnsupportedCompression { section, format } => write!(
                f,
                "section {section}: unsupported compression {format} (zlib and zstd are read)"
            ),
            DebugDataError::OverBudget {
                section,
                claimed,
                limit,
                left,
            } => write!(
                f,
                "section {section}: decompresses to {claimed} bytes, over the limit of {limit} bytes \
                 of decompressed debug data for this module ({left} left; the limit is {BUDGET_RATIO} \
                 times its compressed sections, at least {BUDGET_FREE}, at most {BUDGET_MAX})"
            ),
            DebugDataError::TooLarge { section } => write!(f, "section {section}: too large"),
            DebugDataError::Corrupt {
                section,
                codec,
                problem,
            } => write!(f, "section {section}: corrupt {codec} data: {problem}"),
            DebugDataError::Short {
                section,
                got,
                expected,
            } => write!(
                f,
                "section {section}: decompressed to {got} bytes, expected {expected}"
            ),
            DebugDataError::InvalidDwarf(e) => write!(f, "invalid DWARF: {e}"),
        }
    }
}

/// One module's allowance of decompressed bytes, shared by all its compressed sections
/// (binary, separate debug file, dwz file, `.dwp` and `.dwo` files): `BUDGET_RATIO` times
/// their compressed bytes, at least `BUDGET_FREE`, at most `BUDGET_MAX`.
#[derive(Default, Debug)]
pub struct Budget {
    compressed: Cell<u64>,
    used: Cell<u64>,
}

impl Budget {
    /// A budget counting the compressed sections of `file`.
    pub fn for_file(file: &object::File<'_>) -> Rc<Budget> {
        let b = Rc::new(Budget::default());
        b.add_file(file);
        b
    }

    /// Counts the compressed sections of another file of the module (once per file).
    pub fn add_file(&self, file: &object::File<'_>) {
        let packed: u64 = file
            .sections()
            .filter_map(|s| s.compressed_file_range().ok())
            .filter(|r| r.format != object::CompressionFormat::None)
            .map(|r| r.compressed_size)
            .fold(0, u64::saturating_add);
        self.compressed
            .set(self.compressed.get().saturating_add(packed));
    }

    /// The module's limit in bytes.
    pub fn limit(&self) -> u64 {
        self.compressed
            .get()
            .saturating_mul(BUDGET_RATIO)
            .clamp(BUDGET_FREE, BUDGET_MAX)
    }

    fn left(&self) -> u64 {
        self.limit().saturating_sub(self.used.get())
    }
}

/// A section's bytes, decompressed (`SHF_COMPRESSED` with zlib or zstd, or `.zdebug_*`)
/// within the module's
/// `budget`; `None` if absent. Uncompressed sections stay ranges of `bytes` (the mapped
/// file `file` was parsed from).
pub fn section_data(
    file: &object::File<'_>,
    name: &str,
    bytes: &Rc<FileBytes>,
    budget: &Budget,
) -> Result<Option<Bytes>, DebugDataError> {
    super::pace::finish(section_data_paced(file, name, bytes, budget))
}

/// [`section_data`], pausing every 256 KiB it decompresses ([`super::pace`]: a
/// libxul-sized file's zstd `.debug_info` takes seconds).
pub async fn section_data_paced(
    file: &object::File<'_>,
    name: &str,
    bytes: &Rc<FileBytes>,
    budget: &Budget,
) -> Result<Option<Bytes>, DebugDataError> {
    let Some(section) = by_name(file, name) else {
        return Ok(None);
    };
    // Errors name the section as the file does (`.zdebug_info`, not `.debug_info`).
    let name = section.name().unwrap_or(name);
    let compressed = section
        .compressed_data()
        .map_err(|e| DebugDataError::Header {
            section: name.to_string(),
            problem: e.to_string(),
        })?;
    match compressed.format {
        object::CompressionFormat::None => Ok(Some(Bytes::of(bytes, compressed.data))),
        format @ (object::CompressionFormat::Zlib | object::CompressionFormat::Zstandard) => {
            let codec = if format == object::CompressionFormat::Zlib {
                Codec::Zlib
            } else {
                Codec::Zstd
            };
            let inflated = inflate_section(
                name,
                codec,
                compressed.data,
                compressed.uncompressed_size,
                budget,
            )
            .await;
            // The compressed bytes are read once: their pages leave this process's memory
            // (a third of a distribution debug file's DWARF, once inflated).
            bytes.release(compressed.data);
            inflated.map(Some)
        }
        other => Err(DebugDataError::UnsupportedCompression {
            section: name.to_string(),
            format: format!("{other:?}"),
        }),
    }
}

/// The section `name` (`.debug_*`), or its GNU-compressed `.zdebug_*` form: `object` finds
/// the latter for ELF only with its `compression` feature, which this crate decompresses
/// itself instead.
pub fn by_name<'d, 'f>(file: &'f object::File<'d>, name: &str) -> Option<object::Section<'d, 'f>> {
    file.section_by_name(name).or_else(|| {
        let rest = name.strip_prefix(".debug_")?;
        file.section_by_name(&format!(".zdebug_{rest}"))
    })
}

/// The compressions of `SHF_COMPRESSED` sections (`ELFCOMPRESS_ZLIB`, `ELFCOMPRESS_ZSTD`;
/// `.zdebug_*` is zlib).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Codec {
    Zlib,
    Zstd,
}

/// Inflated sections of at least this size are written to an unnamed temporary file and
/// mapped rather than kept in the heap: their pages are then the page cache's, read in as
/// a request walks them and given back after each unit as a mapped debug file's are, so a
/// module's memory follows its answers, not its inflated DWARF (600 MB for a
/// distribution's big C++ library, kept for the module's life).
#[cfg(all(target_os = "linux", not(test)))]
const SPILL_MIN: u64 = 16 << 20;
/// Small enough for the unit tests' debug build to inflate quickly.
#[cfg(all(target_os = "linux", test))]
const SPILL_MIN: u64 = 1 << 20;

/// Output decoded between two pauses (and two writes to a spill file): about 1 ms of work.
const CHUNK: usize = 256 << 10;

/// A section's bytes decompressed as [`inflate`] does; a big one into a spill file where
/// the system gives one ([`SPILL_MIN`]), else (no temporary folder, a full disk, an error
/// in the stream) in memory, where every error is reported.
async fn inflate_section(
    name: &str,
    codec: Codec,
    data: &[u8],
    claimed: u64,
    budget: &Budget,
) -> Result<Bytes, DebugDataError> {
    #[cfg(target_os = "linux")]
    if claimed >= SPILL_MIN
        && claimed <= budget.left()
        && let Some(bytes) = spill(codec, data, claimed).await
    {
        budget.used.set(budget.used.get().saturating_add(claimed));
        return Ok(bytes);
    }
    inflate(name, codec, data, claimed, budget)
        .await
        .map(Bytes::owned)
}

/// An unnamed file in the temporary folder, readable and writable by this process only
/// (`O_TMPFILE | O_EXCL`: never linked into the folder, gone with its last descriptor or
/// mapping, whatever way the process ends).
#[cfg(target_os = "linux")]
fn spill_file() -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE | libc::O_EXCL)
        .open(std::env::temp_dir())
        .ok()
}

/// Decodes the stream into a spill file, exactly `claimed` bytes, and maps it. `None` when
/// anything goes wrong, the stream included: [`inflate`] then does it again in memory and
/// says why.
#[cfg(target_os = "linux")]
async fn spill(codec: Codec, data: &[u8], claimed: u64) -> Option<Bytes> {
    use std::io::Write;
    let mut file = spill_file()?;
    let mut failed = false;
    let written = decode(codec, data, claimed, &mut |chunk| {
        failed = file.write_all(chunk).is_err();
        !failed
    })
    .await
    .ok()?;
    if failed || written != claimed {
        return None;
    }
    let bytes = FileBytes::spilled(&file).ok()?;
    (bytes.len() as u64 == claimed).then(|| Bytes::whole(std::rc::Rc::new(bytes)))
}

/// Decodes the stream, handing `sink` its bytes a chunk at a time up to `claimed` of them
/// and no further, while `sink` says it wants more. How many bytes `sink` was given.
async fn decode(
    codec: Codec,
    data: &[u8],
    claimed: u64,
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> std::io::Result<u64> {
    let mut given = 0u64;
    let mut up_to_claim = |chunk: &[u8]| {
        let room = usize::try_from(claimed - given).unwrap_or(usize::MAX);
        let chunk = &chunk[..chunk.len().min(room)];
        given += chunk.len() as u64;
        sink(chunk) && given < claimed
    };
    match codec {
        Codec::Zlib => unzlib_chunks(data, &mut up_to_claim).await?,
        Codec::Zstd => unzstd_chunks(data, claimed, &mut up_to_claim).await?,
    }
    Ok(given)
}

/// Inflates one zlib stream [`CHUNK`] bytes at a time into `sink`, which says whether it
/// wants more; a pause after each chunk when paced ([`super::pace`]). The wrapper is read
/// here and its Adler-32 left unchecked (a twentieth of the inflate time): corrupt DWARF is
/// refused or answers garbage names either way, and the deflate stream's own structure
/// still fails on most damage.
async fn unzlib_chunks(data: &[u8], sink: &mut dyn FnMut(&[u8]) -> bool) -> std::io::Result<()> {
    let data = zlib_body(data)?;
    let mut z = flate2::Decompress::new(false);
    let mut buf = Vec::with_capacity(CHUNK);
    loop {
        buf.clear();
        let at = usize::try_from(z.total_in())
            .unwrap_or(data.len())
            .min(data.len());
        let (was_in, was_out) = (z.total_in(), z.total_out());
        let status = z
            .decompress_vec(&data[at..], &mut buf, flate2::FlushDecompress::None)
            .map_err(std::io::Error::other)?;
        let more = sink(&buf);
        let moved = z.total_in() != was_in || z.total_out() != was_out;
        if status == flate2::Status::StreamEnd || !more || !moved {
            return Ok(());
        }
        if super::pace::pacing() {
            super::pace::pause().await;
        }
    }
}

/// Decodes zstd frames (a section may hold several, and skippable frames) [`CHUNK`]
/// bytes at a time into `sink`, which says whether it wants more. A frame's window may
/// reach the section's size and no further (past the 8 MiB every decoder must accept): a
/// small section packed in one call has a window of its whole content, and a bigger
/// window could only be a lie to make the decoder allocate.
async fn unzstd_chunks(
    mut data: &[u8],
    claimed: u64,
    sink: &mut dyn FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
    let window = claimed.max(8 << 20);
    let mut buf = vec![0u8; CHUNK];
    while !data.is_empty() {
        let mut frame =
            match ruzstd::decoding::StreamingDecoder::new_with_max_window_size(&mut data, window) {
                Ok(frame) => frame,
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    data = usize::try_from(length)
                        .ok()
                        .and_then(|n| data.get(n..))
                        .ok_or_else(|| std::io::Error::other("truncated skippable frame"))?;
                    continue;
                }
                Err(e) => return Err(std::io::Error::other(e)),
            };
        loop {
            let n = frame.read(&mut buf)?;
            if n == 0 {
                break;
            }
            if !sink(&buf[..n]) {
                return Ok(());
            }
            if super::pace::pacing() {
                super::pace::pause().await;
            }
        }
    }
    Ok(())
}

/// The deflate stream inside a zlib wrapper: CM 8 (deflate), a window of at most 32 KiB,
/// no preset dictionary, FCHECK right.
fn zlib_body(data: &[u8]) -> std::io::Result<&[u8]> {
    match data {
        [cmf, flg, rest @ ..]
            if cmf & 0x0f == 8
                && cmf >> 4 <= 7
                && flg & 0x20 == 0
                && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0 =>
        {
            Ok(rest)
        }
        _ => Err(std::io::Error::other("invalid zlib header")),
    }
}

/// Decompresses a stream whose header says it holds `claimed` bytes. A claim over what
/// the budget has left is refused before any work (true or not, the section cannot be
/// used); otherwise at most `claimed` bytes are written, straight into a buffer of that
/// capacity: no growing and copying. A lying header costs address space, not memory (the
/// pages never written are never touched), and the budget bounds the claim.
async fn inflate(
    name: &str,
    codec: Codec,
    data: &[u8],
    claimed: u64,
    budget: &Budget,
) -> Result<Vec<u8>, DebugDataError> {
    let section = || name.to_string();
    let left = budget.left();
    if claimed > left {
        return Err(DebugDataError::OverBudget {
            section: section(),
            claimed,
            limit: budget.limit(),
            left,
        });
    }
    let size =
        usize::try_from(claimed).map_err(|_| DebugDataError::TooLarge { section: section() })?;
    let mut out = Vec::new();
    out.try_reserve_exact(size)
        .map_err(|_| DebugDataError::TooLarge { section: section() })?;
    let read = decode(codec, data, claimed, &mut |chunk| {
        out.extend_from_slice(chunk);
        true
    })
    .await;
    let codec = match codec {
        Codec::Zlib => "zlib",
        Codec::Zstd => "zstd",
    };
    read.map_err(|e| DebugDataError::Corrupt {
        section: section(),
        codec,
        problem: e.to_string(),
    })?;
    budget
        .used
        .set(budget.used.get().saturating_add(out.len() as u64));
    if out.len() != size {
        return Err(DebugDataError::Short {
            section: section(),
            got: out.len(),
            expected: size,
        });
    }
    Ok(out)
}

pub fn endian_of(file: &object::File<'_>) -> gimli::RunTimeEndian {
    if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    }
}

#[cfg(test)]
mod tests;

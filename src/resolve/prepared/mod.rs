//! A module's prepared index: every answer a debug file gives, laid out so that a later
//! process answers from it in place, without opening the debug file (the store keeps it
//! between runs, `store::index`).
//!
//! Between two addresses where anything may change (the format's *edges*: line rows,
//! function and inlined-call ranges, symbols) every address has the same answer, its
//! function offset growing with the address. The builder ([`build::Builder`]) asks the
//! module itself for the answer at each edge and at the last address before the next
//! one, and gives up if the two disagree: the index holds the module's own answers, never
//! a reading of its own.
//!
//! The file, all numbers little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 0..8 | magic `PSSINDEX` |
//! | 8..16 | hash of bytes 16 up to the first big section |
//! | 16..20 | format version ([`VERSION`]) |
//! | 20..24 | section count (10) |
//! | 24..32 | file length |
//! | 32..192 | (offset, length) of each section, in this order: |
//!
//! - `META`: JSON: debug name and ID, the files read and their stamps, warnings, counts;
//! - `HASHES`: a hash of each 64 KiB chunk of the big sections (from `ROWS` to the end);
//! - `SPARSE`: (first start u32, byte offset in `ROWS` u32) of each block of
//!   [`ROWS_PER_BLOCK`] rows;
//! - `ROWS`: (start, chain, line) sorted by start, varints (`build::encode_rows`): from
//!   `start` to the next row, the answer is the frames of node `chain` with `line` as its
//!   innermost frame's line;
//! - `NODE_BLOCKS`: the byte offset in `NODES` of each block of [`NODES_PER_BLOCK`] nodes
//!   (u32); `NODES`: per node, varints of (its number minus its parent's, or 0 for none;
//!   name + 1; file + 1; line + 1): a frame. The outer frame has no parent and names a
//!   function of `FUNCS`, an inlined one names a string; the innermost frame of a chain
//!   has no line of its own (the row has it);
//! - `FUNCS`: (base u64, size u64, name u32, 0 u32): the function offset is the address
//!   minus `base`;
//! - `STRINGS`: (text block u32, place in it u32); `TEXT_BLOCKS`: (offset in `TEXTS`
//!   u64, compressed length u32, length u32) of each block; `TEXTS`: the UTF-8 texts in
//!   sorted order, front-coded in blocks of [`TEXTS_PER_BLOCK`], each block
//!   zlib-compressed (`build.rs`, `encode_texts`): C++ names share long prefixes and
//!   repeat their template arguments.
//!
//! [`NONE`] stands for no value. The first three sections are checked whole when the file
//! is opened; a chunk of the others when an answer first reads it: a request reads a
//! small part of a big index, and a damaged chunk is found before any of it is used.

pub mod build;
mod read;

pub use read::{Memo, Prepared, Rejected};

pub const MAGIC: &[u8; 8] = b"PSSINDEX";
/// Bumped with any change of layout or meaning; an index of another version is rebuilt.
pub const VERSION: u32 = 1;

const HEADER: usize = 32 + SECTIONS * 16;
const SECTIONS: usize = 10;
const META: usize = 0;
const HASHES: usize = 1;
const SPARSE: usize = 2;
const ROWS: usize = 3;
const NODE_BLOCKS: usize = 4;
const NODES: usize = 5;
const FUNCS: usize = 6;
const STRINGS: usize = 7;
const TEXT_BLOCKS: usize = 8;
const TEXTS: usize = 9;

const CHUNK: usize = 1 << 16;
/// Rows per block of `SPARSE`: a search decodes half a block on average (a fraction
/// of a microsecond), and the table costs a fraction of a byte per row.
pub const ROWS_PER_BLOCK: usize = 64;
/// A `SPARSE` entry: (first start u32, byte offset of the block in `ROWS` u32).
const SPARSE_ENTRY: usize = 8;
/// Nodes per block of `NODE_BLOCKS`.
const NODES_PER_BLOCK: usize = 16;
const FUNC: usize = 24;
const STRING: usize = 8;
const TEXT_BLOCK_ENTRY: usize = 16;
/// Texts per front-coded block: a text is read after at most this many others' bytes.
const TEXTS_PER_BLOCK: usize = 16;

/// Offsets the index answers are below this (rows hold u32 starts); the module's files
/// answer the others, which no real module has.
pub const INDEXED_END: u64 = 1 << 32;

/// No value (no parent, no name, no file, no line, no answer).
pub const NONE: u32 = u32::MAX;

/// Inlined frames followed at most from one answer: deeper than any real chain; a
/// parent always has a lower number than its child, so a chain ends anyway.
const MAX_DEPTH: usize = 4096;

/// A hash of `bytes` for finding damage (not an attacker: the index folder is the
/// user's own). Four lanes of a multiply and rotate per 8 bytes, so that a change of
/// any one bit always changes the result, at several GB/s.
pub fn hash(bytes: &[u8]) -> u64 {
    const M: u64 = 0x9E37_79B9_7F4A_7C15;
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(M).rotate_left(29);
    let mut lanes = [M, M.rotate_left(16), M.rotate_left(32), M.rotate_left(48)];
    let mut blocks = bytes.chunks_exact(32);
    for b in &mut blocks {
        for (i, lane) in lanes.iter_mut().enumerate() {
            *lane = mix(*lane, le64(&b[i * 8..]));
        }
    }
    let mut tail = [0u8; 32];
    let rest = blocks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    for (i, lane) in lanes.iter_mut().enumerate() {
        *lane = mix(*lane, le64(&tail[i * 8..]));
    }
    lanes.iter().fold(bytes.len() as u64, |h, &l| mix(h, l))
}

/// The u64 at the start of `b` (zero-filled when shorter).
fn le64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(w)
}

fn le32(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    let n = b.len().min(4);
    w[..n].copy_from_slice(&b[..n]);
    u32::from_le_bytes(w)
}

/// What the index says of the files it was built from, beside its tables.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub debug_name: String,
    pub debug_id: String,
    /// The files read, each with its stamp then (size, modification time in ns since
    /// 1970, device, inode): all must be unchanged for the index to be used.
    pub sources: Vec<Source>,
    /// The debug file (for `/source/v1`, which reads it).
    pub debug_file: String,
    /// The module's warnings: (kind name, message).
    pub warnings: Vec<(String, String)>,
    pub rows: u64,
    pub nodes: u64,
    pub funcs: u64,
    pub strings: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: String,
    pub len: u64,
    pub modified_ns: Option<i128>,
    pub dev: u64,
    pub ino: u64,
}

impl Meta {
    pub fn to_json(&self) -> Vec<u8> {
        use serde_json::json;
        let sources: Vec<_> = self
            .sources
            .iter()
            .map(|s| {
                json!({"path": s.path, "len": s.len,
                    "modified_ns": s.modified_ns.map(|n| n.to_string()),
                    "dev": s.dev, "ino": s.ino})
            })
            .collect();
        json!({
            "debug_name": self.debug_name, "debug_id": self.debug_id,
            "sources": sources, "debug_file": self.debug_file,
            "warnings": self.warnings, "rows": self.rows, "nodes": self.nodes,
            "funcs": self.funcs, "strings": self.strings,
        })
        .to_string()
        .into_bytes()
    }

    /// `None` for anything but what [`Self::to_json`] writes.
    pub fn from_json(bytes: &[u8]) -> Option<Meta> {
        let v: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let text = |v: &serde_json::Value, k: &str| v.get(k)?.as_str().map(str::to_string);
        let num = |v: &serde_json::Value, k: &str| v.get(k)?.as_u64();
        let mut sources = Vec::new();
        for s in v.get("sources")?.as_array()? {
            let modified_ns = match s.get("modified_ns")? {
                serde_json::Value::Null => None,
                n => Some(n.as_str()?.parse().ok()?),
            };
            sources.push(Source {
                path: text(s, "path")?,
                len: num(s, "len")?,
                modified_ns,
                dev: num(s, "dev")?,
                ino: num(s, "ino")?,
            });
        }
        let mut warnings = Vec::new();
        for w in v.get("warnings")?.as_array()? {
            let pair = w.as_array().filter(|p| p.len() == 2)?;
            warnings.push((pair[0].as_str()?.to_string(), pair[1].as_str()?.to_string()));
        }
        Some(Meta {
            debug_name: text(&v, "debug_name")?,
            debug_id: text(&v, "debug_id")?,
            sources,
            debug_file: text(&v, "debug_file")?,
            warnings,
            rows: num(&v, "rows")?,
            nodes: num(&v, "nodes")?,
            funcs: num(&v, "funcs")?,
            strings: num(&v, "strings")?,
        })
    }
}

impl Source {
    /// The file at `path` as it is now; `None` when it cannot be read or its path is not
    /// UTF-8 (then no index is kept for it).
    pub fn of(path: &std::path::Path) -> Option<Source> {
        Source::from_stamp(path, &crate::fs::FileStamp::of(path)?)
    }

    /// The file at `path` as `stamp` saw it (taken before the file was read).
    pub fn from_stamp(path: &std::path::Path, stamp: &crate::fs::FileStamp) -> Option<Source> {
        let (len, modified, (dev, ino)) = stamp.parts();
        let modified_ns = modified
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as i128);
        Some(Source {
            path: path.to_str()?.to_string(),
            len,
            modified_ns,
            dev,
            ino,
        })
    }

    /// Whether the file is still the one the index was built from.
    pub fn unchanged(&self) -> bool {
        Source::of(std::path::Path::new(&self.path)).as_ref() == Some(self)
    }
}

#[cfg(test)]
mod tests;

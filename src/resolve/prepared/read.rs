//! Answering from a prepared index in place: the file is mapped, its small sections
//! checked when opened, each chunk of the big ones when an answer first reads it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::resolve::bytes::FileBytes;
use crate::resolve::fasthash::Fast;
use crate::resolve::types::{InlineFrame, Symbolized, Text};

/// Why an index file is not used (said on one stderr line; the index is built again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejected {
    Unreadable(String),
    NotAnIndex,
    OtherVersion(u32),
    Damaged(&'static str),
    /// Built for another module.
    Foreign,
    /// A file it was built from has changed (or is gone).
    Stale(String),
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejected::Unreadable(e) => write!(f, "not readable ({e})"),
            Rejected::NotAnIndex => f.write_str("not an index file"),
            Rejected::OtherVersion(v) => {
                write!(f, "format version {v}, this program writes {VERSION}")
            }
            Rejected::Damaged(what) => write!(f, "damaged ({what})"),
            Rejected::Foreign => f.write_str("built for another module"),
            Rejected::Stale(p) => write!(f, "{p} changed since it was built"),
        }
    }
}

/// A chunk of a big section whose bytes do not match their hash (found by an answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

pub struct Prepared {
    data: FileBytes,
    pub path: PathBuf,
    pub meta: Meta,
    dir: [(usize, usize); SECTIONS],
    hashes: Vec<u64>,
    /// (first start, byte offset in `ROWS`) of each block of rows.
    sparse: Vec<(u32, u32)>,
    /// One bit per chunk of the big sections: checked already.
    checked: RefCell<Vec<u64>>,
}

fn section_ok(dir: &[(usize, usize); SECTIONS], len: usize) -> bool {
    let mut end = HEADER;
    dir.iter().all(|&(o, l)| {
        let ok = o == end && o.checked_add(l).is_some_and(|e| e <= len);
        end = o.saturating_add(l);
        ok
    }) && end == len
}

impl Prepared {
    /// Opens and checks `path` for the module `(debug_name, debug_id)`: its header,
    /// directory and small sections against their hash, the counts against the sizes,
    /// and every file it was built from against its stamp.
    pub fn open(path: &Path, debug_name: &str, debug_id: &str) -> Result<Prepared, Rejected> {
        let data = FileBytes::open(path).map_err(|e| Rejected::Unreadable(e.to_string()))?;
        let b: &[u8] = &data;
        if b.len() < HEADER || &b[..8] != MAGIC {
            return Err(Rejected::NotAnIndex);
        }
        let version = le32(&b[16..]);
        if version != VERSION {
            return Err(Rejected::OtherVersion(version));
        }
        if le32(&b[20..]) as usize != SECTIONS || le64(&b[24..]) != b.len() as u64 {
            return Err(Rejected::Damaged("its length"));
        }
        let mut dir = [(0usize, 0usize); SECTIONS];
        for (k, d) in dir.iter_mut().enumerate() {
            let at = 32 + k * 16;
            let o = usize::try_from(le64(&b[at..])).map_err(|_| Rejected::Damaged("directory"))?;
            let l =
                usize::try_from(le64(&b[at + 8..])).map_err(|_| Rejected::Damaged("directory"))?;
            *d = (o, l);
        }
        if !section_ok(&dir, b.len()) {
            return Err(Rejected::Damaged("directory"));
        }
        let small_end = dir[ROWS].0;
        if hash(&b[16..small_end]) != le64(&b[8..]) {
            return Err(Rejected::Damaged("header hash"));
        }
        let part = |k: usize| &b[dir[k].0..dir[k].0 + dir[k].1];
        let meta = Meta::from_json(part(META)).ok_or(Rejected::Damaged("metadata"))?;
        if meta.debug_name != debug_name || meta.debug_id != debug_id {
            return Err(Rejected::Foreign);
        }
        let count = |n: u64, size: usize| usize::try_from(n).ok().and_then(|n| n.checked_mul(size));
        let data_len = b.len() - small_end;
        let ok = count(meta.nodes.div_ceil(NODES_PER_BLOCK as u64), 4) == Some(dir[NODE_BLOCKS].1)
            && count(meta.funcs, FUNC) == Some(dir[FUNCS].1)
            && count(meta.strings, STRING) == Some(dir[STRINGS].1)
            && dir[TEXT_BLOCKS].1 % TEXT_BLOCK_ENTRY == 0
            && dir[HASHES].1 == data_len.div_ceil(CHUNK) * 8
            && count(meta.rows.div_ceil(ROWS_PER_BLOCK as u64), SPARSE_ENTRY)
                == Some(dir[SPARSE].1);
        if !ok {
            return Err(Rejected::Damaged("table sizes"));
        }
        if let Some(s) = meta.sources.iter().find(|s| !s.unchanged()) {
            return Err(Rejected::Stale(s.path.clone()));
        }
        let hashes = part(HASHES).chunks_exact(8).map(le64).collect();
        let sparse: Vec<(u32, u32)> = part(SPARSE)
            .chunks_exact(SPARSE_ENTRY)
            .map(|e| (le32(e), le32(&e[4..])))
            .collect();
        let rows_len = dir[ROWS].1 as u64;
        if !sparse.is_sorted() || sparse.last().is_some_and(|b| u64::from(b.1) >= rows_len) {
            return Err(Rejected::Damaged("block table"));
        }
        let chunks = data_len.div_ceil(CHUNK);
        Ok(Prepared {
            checked: RefCell::new(vec![0; chunks.div_ceil(64)]),
            data,
            path: path.to_path_buf(),
            meta,
            dir,
            hashes,
            sparse,
        })
    }

    /// Bytes of memory held (the mapping's pages are the page cache's).
    pub fn cost(&self) -> u64 {
        (self.data.owned_len() + self.hashes.len() * 8 + self.sparse.len() * SPARSE_ENTRY) as u64
    }

    /// `len` bytes at `at` of big section `k`, each chunk they touch checked first.
    fn bytes(&self, k: usize, at: usize, len: usize) -> Result<&[u8], Corrupt> {
        let (o, l) = self.dir[k];
        let end = at.checked_add(len).filter(|&e| e <= l).ok_or(Corrupt)?;
        let (from, to) = (o + at, o + end);
        let base = self.dir[ROWS].0;
        if len > 0 {
            let mut checked = self.checked.borrow_mut();
            for c in (from - base) / CHUNK..=(to - 1 - base) / CHUNK {
                if checked[c / 64] >> (c % 64) & 1 == 1 {
                    continue;
                }
                let s = base + c * CHUNK;
                let e = (s + CHUNK).min(self.data.len());
                if hash(&self.data[s..e]) != self.hashes[c] {
                    return Err(Corrupt);
                }
                checked[c / 64] |= 1 << (c % 64);
            }
        }
        Ok(&self.data[from..to])
    }

    /// The (chain, line) of the row holding `offset` (below [`INDEXED_END`]).
    fn row(&self, offset: u64) -> Result<(u32, u32), Corrupt> {
        let Ok(offset) = u32::try_from(offset) else {
            return Ok((NONE, NONE));
        };
        let block = self.sparse.partition_point(|s| s.0 <= offset);
        let Some(block) = block.checked_sub(1) else {
            return Ok((NONE, NONE));
        };
        let from = self.sparse[block].1 as usize;
        let to = self
            .sparse
            .get(block + 1)
            .map_or(self.dir[ROWS].1, |b| b.1 as usize);
        let n = (self.meta.rows - (block * ROWS_PER_BLOCK) as u64).min(ROWS_PER_BLOCK as u64);
        let mut b = self.bytes(ROWS, from, to.checked_sub(from).ok_or(Corrupt)?)?;
        let mut start = self.sparse[block].0;
        let mut chain = varint(&mut b)?;
        let mut line = varint(&mut b)?;
        for _ in 1..n {
            let s = start
                .checked_add(u32::try_from(varint(&mut b)?).map_err(|_| Corrupt)?)
                .ok_or(Corrupt)?;
            if s > offset {
                break;
            }
            start = s;
            chain = unzigzag(chain, varint(&mut b)?)?;
            line = unzigzag(line, varint(&mut b)?)?;
        }
        let back = |v: u64| {
            u32::try_from(v)
                .map(|v| v.wrapping_sub(1))
                .map_err(|_| Corrupt)
        };
        Ok((back(chain)?, back(line)?))
    }

    fn text(&self, id: u32, memo: &mut Memo) -> Result<Text, Corrupt> {
        if let Some(t) = memo.texts.get(&id) {
            return Ok(t.clone());
        }
        let e = self.bytes(STRINGS, id as usize * STRING, STRING)?;
        let (block, place) = (le32(e) as usize, le32(&e[4..]) as usize);
        if place >= TEXTS_PER_BLOCK {
            return Err(Corrupt);
        }
        let raw = self.text_block(block as u32, memo)?;
        let mut b: &[u8] = &raw;
        let mut text: Vec<u8> = Vec::new();
        for _ in 0..=place {
            let shared = usize::try_from(varint(&mut b)?).map_err(|_| Corrupt)?;
            let rest = usize::try_from(varint(&mut b)?).map_err(|_| Corrupt)?;
            if shared > text.len() || rest > b.len() {
                return Err(Corrupt);
            }
            text.truncate(shared);
            text.extend_from_slice(&b[..rest]);
            b = &b[rest..];
        }
        let t: Text = std::str::from_utf8(&text).map_err(|_| Corrupt)?.into();
        memo.texts.insert(id, t.clone());
        Ok(t)
    }

    /// Text block `k`, inflated (once per request).
    fn text_block(&self, k: u32, memo: &mut Memo) -> Result<std::rc::Rc<[u8]>, Corrupt> {
        if let Some(b) = memo.blocks.get(&k) {
            return Ok(b.clone());
        }
        let e = self.bytes(TEXT_BLOCKS, k as usize * TEXT_BLOCK_ENTRY, TEXT_BLOCK_ENTRY)?;
        let at = usize::try_from(le64(e)).map_err(|_| Corrupt)?;
        let (packed, len) = (le32(&e[8..]) as usize, le32(&e[12..]) as usize);
        let input = self.bytes(TEXTS, at, packed)?;
        // No more than its compressed bytes could give (zlib's best is about 1032:1): the
        // length is checked data, but a cap costs nothing.
        if len > packed.saturating_mul(1032) {
            return Err(Corrupt);
        }
        let mut out = Vec::with_capacity(len);
        let z = memo
            .inflater
            .get_or_insert_with(|| flate2::Decompress::new(true));
        z.reset(true);
        let status = z
            .decompress_vec(input, &mut out, flate2::FlushDecompress::Finish)
            .map_err(|_| Corrupt)?;
        if status != flate2::Status::StreamEnd || out.len() != len {
            return Err(Corrupt);
        }
        let block: std::rc::Rc<[u8]> = out.into();
        memo.blocks.insert(k, block.clone());
        Ok(block)
    }

    fn opt_text(&self, id: u32, memo: &mut Memo) -> Result<Option<Text>, Corrupt> {
        (id != NONE).then(|| self.text(id, memo)).transpose()
    }

    /// Node `n`: (parent, name, file, line), [`NONE`] for none.
    fn node(&self, n: u32) -> Result<[u32; 4], Corrupt> {
        let block = n as usize / NODES_PER_BLOCK;
        let entry = self.bytes(NODE_BLOCKS, block * 4, 4)?;
        let from = le32(entry) as usize;
        let to = if (block + 1) * 4 < self.dir[NODE_BLOCKS].1 {
            le32(self.bytes(NODE_BLOCKS, (block + 1) * 4, 4)?) as usize
        } else {
            self.dir[NODES].1
        };
        let mut b = self.bytes(NODES, from, to.checked_sub(from).ok_or(Corrupt)?)?;
        let mut out = [NONE; 4];
        for i in 0..=n as usize % NODES_PER_BLOCK {
            let up = varint(&mut b)?;
            let this = (block * NODES_PER_BLOCK + i) as u64;
            out[0] = if up == 0 {
                NONE
            } else {
                u32::try_from(this.checked_sub(up).ok_or(Corrupt)?).map_err(|_| Corrupt)?
            };
            for v in &mut out[1..] {
                *v = u32::try_from(varint(&mut b)?)
                    .map_err(|_| Corrupt)?
                    .wrapping_sub(1);
            }
        }
        Ok(out)
    }

    /// The answer of node `node`, its function's base where the function offset goes (the
    /// caller takes it from the address).
    fn answer(&self, node: u32, memo: &mut Memo) -> Result<Symbolized, Corrupt> {
        let mut inlines = Vec::new();
        let mut n = node;
        for _ in 0..MAX_DEPTH {
            let [parent, name, file, line] = self.node(n)?;
            let file = self.opt_text(file, memo)?;
            let line = (line != NONE).then_some(line);
            if parent == NONE {
                let f = self.bytes(FUNCS, name as usize * FUNC, FUNC)?;
                let (base, size, fname) = (le64(f), le64(&f[8..]), le32(&f[16..]));
                return Ok(Symbolized {
                    function: self.text(fname, memo)?,
                    // The base, to be taken from the address.
                    function_offset: base,
                    function_size: (size != u64::MAX).then_some(size),
                    file,
                    line,
                    inlines,
                });
            }
            if parent >= n {
                return Err(Corrupt);
            }
            inlines.push(InlineFrame {
                function: self.opt_text(name, memo)?,
                file,
                line,
            });
            n = parent;
        }
        Err(Corrupt)
    }

    /// The answer at `offset`.
    pub fn lookup(&self, offset: u64, memo: &mut Memo) -> Result<Option<Symbolized>, Corrupt> {
        let (node, line) = self.row(offset)?;
        if node == NONE {
            return Ok(None);
        }
        let mut s = match memo.answers.get(&node) {
            Some(s) => s.clone(),
            None => {
                let s = self.answer(node, memo)?;
                memo.answers.insert(node, s.clone());
                s
            }
        };
        s.function_offset = offset.wrapping_sub(s.function_offset);
        let line = (line != NONE).then_some(line);
        match s.inlines.first_mut() {
            Some(innermost) => innermost.line = line,
            None => s.line = line,
        }
        Ok(Some(s))
    }
}

/// What one request's lookups share: texts and answers already read.
#[derive(Default)]
pub struct Memo {
    texts: HashMap<u32, Text, Fast>,
    /// Text blocks inflated (a request's names come from few of them, many times).
    blocks: HashMap<u32, std::rc::Rc<[u8]>, Fast>,
    /// One inflater for them all (a new one allocates and clears its window).
    inflater: Option<flate2::Decompress>,
    answers: HashMap<u32, Symbolized, Fast>,
}

/// A LEB128 number taken from the front of `b`. Not gimli's reader, which the DWARF path
/// uses: through an `EndianSlice` per number, a 100 000-address request from an index
/// took 10 % longer (measured: 288-304 → 322-332 ms task-clock, three alternating pairs
/// of `perf stat -r 7 … query` of samply's `.sym` index, 100 000 addresses).
fn varint(b: &mut &[u8]) -> Result<u64, Corrupt> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = b.split_first().ok_or(Corrupt)?;
        *b = rest;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
    }
    Err(Corrupt)
}

/// `before` plus the zigzag difference `z`.
fn unzigzag(before: u64, z: u64) -> Result<u64, Corrupt> {
    let d = (z >> 1) as i64 ^ -((z & 1) as i64);
    let sum = i64::try_from(before)
        .map_err(|_| Corrupt)?
        .checked_add(d)
        .ok_or(Corrupt)?;
    u64::try_from(sum).map_err(|_| Corrupt)
}

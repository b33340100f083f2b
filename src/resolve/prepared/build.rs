//! Laying out a prepared index from a module's answers (the module's doc gives the
//! layout): each answer becomes a chain of shared frames, each text is kept once.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::io::{Seek, SeekFrom, Write};

use super::*;
use crate::resolve::fasthash::Fast;
use crate::resolve::types::Symbolized;

/// Why a module's answers do not fit an index (it is then answered from its files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unfit {
    /// An offset at or past 4 GiB, or tables past what u32 numbers count.
    TooBig,
    /// A line number that is [`NONE`] itself.
    Unrepresentable,
    /// The answer at the end of a run differs from the one at its start: an edge the
    /// format did not name lies between (`at` is the run's start).
    Disagrees { at: u64 },
}

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unfit::TooBig => f.write_str("offsets or tables too big for the index format"),
            Unfit::Unrepresentable => f.write_str("a line number the format cannot hold"),
            Unfit::Disagrees { at } => write!(
                f,
                "answers change between two edges after offset {at:#x}; not indexed"
            ),
        }
    }
}

#[derive(Default)]
pub struct Builder {
    /// (start, chain, line of the innermost frame).
    rows: Vec<(u32, u32, u32)>,
    nodes: Vec<[u32; 4]>,
    node_ids: HashMap<[u32; 4], u32, Fast>,
    funcs: Vec<(u64, u64, u32)>,
    func_ids: HashMap<(u32, u64, u64), u32, Fast>,
    /// (offset, length) in `blob`.
    strings: Vec<(u32, u32)>,
    /// A hash of each text to its number (a collision keeps a second copy, never a wrong
    /// text: the bytes are compared).
    string_ids: HashMap<u64, u32, Fast>,
    blob: Vec<u8>,
}

fn number(n: usize) -> Result<u32, Unfit> {
    u32::try_from(n)
        .ok()
        .filter(|&n| n != NONE)
        .ok_or(Unfit::TooBig)
}

impl Builder {
    /// The answer from module offset `start` up to the next row's start.
    pub fn add(&mut self, start: u64, answer: Option<&Symbolized>) -> Result<(), Unfit> {
        let start = u32::try_from(start).map_err(|_| Unfit::TooBig)?;
        let (chain, line) = match answer {
            None => (NONE, NONE),
            Some(s) => self.answer(start, s)?,
        };
        self.rows.push((start, chain, line));
        Ok(())
    }

    /// The answer's chain of frames, the innermost without its line, and that line: rows
    /// of one function and inline chain then share their chain.
    fn answer(&mut self, start: u32, s: &Symbolized) -> Result<(u32, u32), Unfit> {
        let base = u64::from(start).wrapping_sub(s.function_offset);
        let name = self.text(&s.function)?;
        let size = s.function_size.unwrap_or(u64::MAX);
        let next = self.funcs.len();
        let func = *self
            .func_ids
            .entry((name, base, size))
            .or_insert(next as u32);
        if func as usize == next {
            number(next)?;
            self.funcs.push((base, size, name));
        }
        let file = self.opt_text(s.file.as_deref())?;
        let innermost = s.inlines.len();
        let mut own_line = line(s.line)?;
        let outer_line = if innermost == 0 { NONE } else { own_line };
        let mut node = self.node([NONE, func, file, outer_line])?;
        for (k, inl) in s.inlines.iter().enumerate().rev() {
            let name = self.opt_text(inl.function.as_deref())?;
            let file = self.opt_text(inl.file.as_deref())?;
            let l = line(inl.line)?;
            let kept = if k == 0 {
                own_line = l;
                NONE
            } else {
                l
            };
            node = self.node([node, name, file, kept])?;
        }
        Ok((node, own_line))
    }

    fn node(&mut self, n: [u32; 4]) -> Result<u32, Unfit> {
        let next = self.nodes.len();
        let id = *self.node_ids.entry(n).or_insert(next as u32);
        if id as usize == next {
            number(next)?;
            self.nodes.push(n);
        }
        Ok(id)
    }

    fn opt_text(&mut self, t: Option<&str>) -> Result<u32, Unfit> {
        t.map_or(Ok(NONE), |t| self.text(t))
    }

    fn text(&mut self, t: &str) -> Result<u32, Unfit> {
        let key = Fast::default().hash_one(t);
        if let Some(&id) = self.string_ids.get(&key) {
            let (at, len) = self.strings[id as usize];
            if &self.blob[at as usize..(at + len) as usize] == t.as_bytes() {
                return Ok(id);
            }
        }
        let id = number(self.strings.len())?;
        let at = u32::try_from(self.blob.len()).map_err(|_| Unfit::TooBig)?;
        let len = u32::try_from(t.len()).map_err(|_| Unfit::TooBig)?;
        at.checked_add(len).ok_or(Unfit::TooBig)?;
        self.blob.extend_from_slice(t.as_bytes());
        self.strings.push((at, len));
        self.string_ids.entry(key).or_insert(id);
        Ok(id)
    }

    /// Writes the index to `out` (an empty file): rows sorted, a row that repeats the
    /// answer before it dropped. Returns the bytes written.
    pub fn write(mut self, mut meta: Meta, out: &mut std::fs::File) -> std::io::Result<u64> {
        // By start (each start once): sorted as u64 keys with their positions, the sort
        // the edges already use (one copy of it in the binary).
        let mut keys: Vec<u64> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| u64::from(r.0) << 32 | i as u64)
            .collect();
        keys.sort_unstable();
        self.rows = keys
            .iter()
            .map(|&k| self.rows[(k & 0xffff_ffff) as usize])
            .collect();
        self.rows
            .dedup_by(|later, earlier| (later.1, later.2) == (earlier.1, earlier.2));
        meta.rows = self.rows.len() as u64;
        meta.nodes = self.nodes.len() as u64;
        meta.funcs = self.funcs.len() as u64;
        meta.strings = self.strings.len() as u64;
        let meta = meta.to_json();
        let (rows, sparse) = encode_rows(&self.rows);
        let (node_blocks, nodes) = encode_nodes(&self.nodes);
        let (strings, text_blocks, texts) = self.encode_texts()?;
        let too_big = |n: usize| u32::try_from(n).is_err();
        if too_big(rows.len()) || too_big(nodes.len()) {
            return Err(std::io::Error::other(Unfit::TooBig.to_string()));
        }
        let lens = [
            rows.len(),
            node_blocks.len() * 4,
            nodes.len(),
            self.funcs.len() * FUNC,
            strings.len() * STRING,
            text_blocks.len() * TEXT_BLOCK_ENTRY,
            texts.len(),
        ];
        let data_len: usize = lens.iter().sum();
        let hashes_len = data_len.div_ceil(CHUNK) * 8;
        let mut dir = [(0usize, 0usize); SECTIONS];
        dir[META] = (HEADER, meta.len());
        dir[HASHES] = (dir[META].0 + dir[META].1, hashes_len);
        dir[SPARSE] = (dir[HASHES].0 + hashes_len, sparse.len() * SPARSE_ENTRY);
        let mut at = dir[SPARSE].0 + dir[SPARSE].1;
        for (k, &len) in lens.iter().enumerate() {
            dir[ROWS + k] = (at, len);
            at += len;
        }
        let file_len = at;

        // The big sections first, hashed per chunk as they go.
        out.seek(SeekFrom::Start(dir[ROWS].0 as u64))?;
        let mut w = Chunked {
            out: std::io::BufWriter::with_capacity(1 << 20, &mut *out),
            buf: Vec::with_capacity(CHUNK),
            hashes: Vec::with_capacity(hashes_len / 8),
        };
        w.put(&rows)?;
        for b in &node_blocks {
            w.put(&b.to_le_bytes())?;
        }
        w.put(&nodes)?;
        for &(base, size, name) in &self.funcs {
            w.put(&base.to_le_bytes())?;
            w.put(&size.to_le_bytes())?;
            w.put(&name.to_le_bytes())?;
            w.put(&0u32.to_le_bytes())?;
        }
        for e in &strings {
            for v in e {
                w.put(&v.to_le_bytes())?;
            }
        }
        for &(at, packed, len) in &text_blocks {
            w.put(&at.to_le_bytes())?;
            w.put(&packed.to_le_bytes())?;
            w.put(&len.to_le_bytes())?;
        }
        w.put(&texts)?;
        let hashes = w.finish()?;

        let mut head = Vec::with_capacity(dir[ROWS].0);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&[0; 8]);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&(SECTIONS as u32).to_le_bytes());
        head.extend_from_slice(&(file_len as u64).to_le_bytes());
        for &(o, l) in &dir {
            head.extend_from_slice(&(o as u64).to_le_bytes());
            head.extend_from_slice(&(l as u64).to_le_bytes());
        }
        head.extend_from_slice(&meta);
        for h in &hashes {
            head.extend_from_slice(&h.to_le_bytes());
        }
        for &(start, at) in &sparse {
            head.extend_from_slice(&start.to_le_bytes());
            head.extend_from_slice(&at.to_le_bytes());
        }
        let h = hash(&head[16..]);
        head[8..16].copy_from_slice(&h.to_le_bytes());
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&head)?;
        Ok(file_len as u64)
    }
}

/// The nodes in blocks of [`NODES_PER_BLOCK`]: each block's byte offset, and the bytes.
fn encode_nodes(nodes: &[[u32; 4]]) -> (Vec<u32>, Vec<u8>) {
    let mut out = Vec::with_capacity(nodes.len() * 8);
    let mut blocks = Vec::with_capacity(nodes.len().div_ceil(NODES_PER_BLOCK));
    for (n, &[parent, name, file, line]) in nodes.iter().enumerate() {
        if n % NODES_PER_BLOCK == 0 {
            blocks.push(out.len() as u32);
        }
        let up = if parent == NONE {
            0
        } else {
            n as u64 - u64::from(parent)
        };
        varint(&mut out, up);
        for v in [name, file, line] {
            varint(&mut out, u64::from(v.wrapping_add(1)));
        }
    }
    (blocks, out)
}

impl Builder {
    /// The texts front-coded in sorted order: each text's (block, place in it), each
    /// block's (offset, compressed length, length), and the blocks. A block is
    /// [`TEXTS_PER_BLOCK`] texts, each as (bytes shared with the one before, length of the
    /// rest, the rest), zlib-compressed. Sorted C++ names share long prefixes (namespaces,
    /// templates), and repeat their template arguments inside.
    #[allow(clippy::type_complexity)]
    fn encode_texts(&self) -> std::io::Result<(Vec<[u32; 2]>, Vec<(u64, u32, u32)>, Vec<u8>)> {
        let text = |id: usize| {
            let (at, len) = self.strings[id];
            &self.blob[at as usize..(at + len) as usize]
        };
        let mut order: Vec<usize> = (0..self.strings.len()).collect();
        crate::coldsort::sort_by(&mut order, |&a, &b| text(a).cmp(text(b)));
        let mut strings = vec![[0u32; 2]; self.strings.len()];
        let mut blocks = Vec::with_capacity(order.len().div_ceil(TEXTS_PER_BLOCK));
        let mut out = Vec::with_capacity(self.blob.len() / 3);
        let mut raw = Vec::new();
        let mut z = flate2::Compress::new(flate2::Compression::default(), true);
        for (k, chunk) in order.chunks(TEXTS_PER_BLOCK).enumerate() {
            raw.clear();
            let mut before: &[u8] = &[];
            for (i, &id) in chunk.iter().enumerate() {
                let t = text(id);
                let shared = if i == 0 {
                    0
                } else {
                    t.iter().zip(before).take_while(|(a, b)| a == b).count()
                };
                // Not inside a UTF-8 sequence: each text stays whole characters.
                let shared = (0..=shared)
                    .rev()
                    .find(|&n| n == 0 || n == t.len() || (t[n] as i8) >= -0x40)
                    .unwrap_or(0);
                varint(&mut raw, shared as u64);
                varint(&mut raw, (t.len() - shared) as u64);
                raw.extend_from_slice(&t[shared..]);
                strings[id] = [k as u32, i as u32];
                before = t;
            }
            let at = out.len();
            z.reset();
            out.reserve(raw.len() + raw.len() / 8 + 64);
            let status = z
                .compress_vec(&raw, &mut out, flate2::FlushCompress::Finish)
                .map_err(std::io::Error::other)?;
            if status != flate2::Status::StreamEnd {
                return Err(std::io::Error::other(
                    "a text block did not compress in one call",
                ));
            }
            let packed = u32::try_from(out.len() - at).map_err(std::io::Error::other)?;
            let len = u32::try_from(raw.len()).map_err(std::io::Error::other)?;
            blocks.push((at as u64, packed, len));
        }
        if u32::try_from(blocks.len()).is_err() {
            return Err(std::io::Error::other(Unfit::TooBig.to_string()));
        }
        Ok((strings, blocks, out))
    }
}

/// The rows in blocks of [`ROWS_PER_BLOCK`], and each block's (first start, byte offset).
/// A block's first row is (chain, line + 1) as varints (its start is the block's); each
/// next one (start - previous start, then chain and line + 1 as zigzag differences from
/// the previous row's): some 3 to 4 bytes a row.
fn encode_rows(rows: &[(u32, u32, u32)]) -> (Vec<u8>, Vec<(u32, u32)>) {
    let mut out = Vec::with_capacity(rows.len() * 4);
    let mut sparse = Vec::with_capacity(rows.len().div_ceil(ROWS_PER_BLOCK));
    for block in rows.chunks(ROWS_PER_BLOCK) {
        sparse.push((block[0].0, out.len() as u32));
        let (mut start, mut chain, mut line) = (block[0].0, 0u32, 0u32);
        for (k, &(s, c, l)) in block.iter().enumerate() {
            let l1 = l.wrapping_add(1);
            if k == 0 {
                varint(&mut out, u64::from(c.wrapping_add(1)));
                varint(&mut out, u64::from(l1));
            } else {
                varint(&mut out, u64::from(s - start));
                varint(&mut out, zigzag(c.wrapping_add(1), chain));
                varint(&mut out, zigzag(l1, line));
            }
            (start, chain, line) = (s, c.wrapping_add(1), l1);
        }
    }
    (out, sparse)
}

/// `now - before` as a zigzag number (small either way).
fn zigzag(now: u32, before: u32) -> u64 {
    let d = i64::from(now) - i64::from(before);
    ((d << 1) ^ (d >> 63)) as u64
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn line(l: Option<u32>) -> Result<u32, Unfit> {
    match l {
        Some(NONE) => Err(Unfit::Unrepresentable),
        Some(l) => Ok(l),
        None => Ok(NONE),
    }
}

/// Writes bytes on, keeping a hash of each [`CHUNK`].
struct Chunked<W: Write> {
    out: W,
    buf: Vec<u8>,
    hashes: Vec<u64>,
}

impl<W: Write> Chunked<W> {
    fn put(&mut self, mut b: &[u8]) -> std::io::Result<()> {
        while !b.is_empty() {
            let n = (CHUNK - self.buf.len()).min(b.len());
            self.buf.extend_from_slice(&b[..n]);
            b = &b[n..];
            if self.buf.len() == CHUNK {
                self.flush_chunk()?;
            }
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> std::io::Result<()> {
        self.hashes.push(hash(&self.buf));
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }

    fn finish(mut self) -> std::io::Result<Vec<u64>> {
        if !self.buf.is_empty() {
            self.flush_chunk()?;
        }
        self.out.flush()?;
        Ok(self.hashes)
    }
}

//! The type (TPI) and id (IPI) streams of a PDB, read in place from the mapped file a
//! record at a time.
//!
//! The `pdb` crate reads a stream through one contiguous slice, so a stream whose pages
//! are not consecutive in the file is gathered into memory whole. A stream longer than the
//! MSF's free-page-map interval (4 096 pages: 16 MiB with 4 KiB pages) never is, and the
//! type stream is most of a big PDB (86.7 MB of a 220 MB clang PDB, whose process then held
//! 0.8 of the file's size in private memory). Here a record is a slice of the mapping; only
//! one cut by a break in the stream's pages (at most one per run of consecutive pages:
//! 6 runs in that type stream) is copied.

use std::cell::OnceCell;
use std::marker::PhantomData;
use std::rc::Rc;

use pdb::{Item, ItemIndex};

use crate::resolve::bytes::FileBytes;

/// What `pdb` answers for an index below the stream's first (a primitive type): a record
/// of the reserved kind 0xffff, which `Type::parse` reads from the index alone.
const PRIMITIVE: &[u8] = b"\xff\xff";

/// Size of the stream header as `pdb` reads it (`tpi::header::Header`); its `header_size`
/// may say more, up to [`MAX_HEADER`].
const HEADER: u32 = 56;
const MAX_HEADER: u32 = 1024;

/// The items of one stream, found by index.
pub struct ItemStore<I> {
    file: Rc<FileBytes>,
    /// The stream's runs of consecutive pages: (offset in the stream, offset in the file),
    /// by offset; a run ends where the next starts, the last at `size`.
    runs: Vec<(u32, usize)>,
    size: u32,
    header_size: u32,
    minimum: u32,
    maximum: u32,
    /// Built on first use: a module whose names are never asked for never reads its types.
    index: OnceCell<Index>,
    _kind: PhantomData<I>,
}

/// Where each record is, from one pass over the stream.
struct Index {
    /// Stream offset of each record (its 16-bit length), by item index from `minimum`:
    /// 4 bytes per record (5.5 MB for the 1.37 million types of the 220 MB PDB, whose
    /// stream is 86.7 MB). `pdb`'s finder keeps one offset per 8 records and reads 3.5
    /// records per lookup; this one reads none.
    at: Vec<u32>,
    /// Records whose bytes cross from one run to the next, by stream offset: where their
    /// copy (length included) starts in `copies`.
    cut: Vec<(u32, usize)>,
    copies: Vec<u8>,
}

fn eof() -> pdb::Error {
    pdb::Error::IoError(std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
}

impl<I: ItemIndex> ItemStore<I> {
    /// The stream whose bytes lie at `slices` of `file` (from `PDB::stream_slices`). Fails
    /// as `pdb`'s `type_information`/`id_information` would: a slice outside the file, a
    /// header too short, too long, or with impossible indices.
    pub fn new(file: Rc<FileBytes>, slices: &[pdb::SourceSlice]) -> pdb::Result<Self> {
        let mut runs = Vec::with_capacity(slices.len());
        let mut size: u32 = 0;
        for s in slices {
            let start = usize::try_from(s.offset).map_err(|_| eof())?;
            let end = start.checked_add(s.size).ok_or_else(eof)?;
            if end > file.len() {
                return Err(eof());
            }
            if s.size == 0 {
                continue;
            }
            runs.push((size, start));
            // The directory gives a stream's size as a u32, so its slices add up to one.
            size = u32::try_from(s.size)
                .ok()
                .and_then(|n| size.checked_add(n))
                .ok_or_else(eof)?;
        }
        let mut store = ItemStore {
            file,
            runs,
            size,
            header_size: 0,
            minimum: 0,
            maximum: 0,
            index: OnceCell::new(),
            _kind: PhantomData,
        };
        // An empty stream is a missing one: no items, as in `pdb`.
        if size == 0 {
            return Ok(store);
        }
        if size < HEADER {
            return Err(pdb::Error::UnexpectedEof);
        }
        let mut head = [0u8; 16];
        store.read(0, &mut head).ok_or(pdb::Error::UnexpectedEof)?;
        let word = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let (header_size, minimum, maximum) = (word(4), word(8), word(12));
        if header_size < HEADER {
            return Err(pdb::Error::InvalidTypeInformationHeader(
                "header size is impossibly small",
            ));
        } else if header_size > MAX_HEADER {
            return Err(pdb::Error::InvalidTypeInformationHeader(
                "header size is unreasonably large",
            ));
        }
        if header_size > size {
            return Err(pdb::Error::UnexpectedEof);
        }
        if minimum < 4096 {
            return Err(pdb::Error::InvalidTypeInformationHeader(
                "minimum type index is < 4096",
            ));
        }
        if maximum < minimum {
            return Err(pdb::Error::InvalidTypeInformationHeader(
                "maximum type index is < minimum type index",
            ));
        }
        store.header_size = header_size;
        store.minimum = minimum;
        store.maximum = maximum;
        Ok(store)
    }

    /// The run holding stream offset `at`, and where it ends; `None` past the stream.
    fn run(&self, at: u32) -> Option<(usize, u32)> {
        if at >= self.size {
            return None;
        }
        let k = self.runs.partition_point(|r| r.0 <= at).checked_sub(1)?;
        let end = self.runs.get(k + 1).map_or(self.size, |r| r.0);
        Some((k, end))
    }

    /// The bytes after the length of the record at stream offset `at` when the whole
    /// record lies in one run: a slice of the file.
    fn in_one_run(&self, at: u32) -> Option<&[u8]> {
        let (k, end) = self.run(at)?;
        let (start, file_start) = self.runs[k];
        let from = file_start + (at - start) as usize;
        let room = (end - at) as usize;
        if room < 2 {
            return None;
        }
        let head = self.file.get(from..from + 2)?;
        let len = usize::from(u16::from_le_bytes([head[0], head[1]]));
        if 2 + len > room {
            return None;
        }
        self.file.get(from + 2..from + 2 + len)
    }

    /// Copies bytes `at..at + out.len()` of the stream into `out`, across runs; `None`
    /// past the stream's end.
    fn read(&self, mut at: u32, mut out: &mut [u8]) -> Option<()> {
        while !out.is_empty() {
            let (k, end) = self.run(at)?;
            let n = ((end - at) as usize).min(out.len());
            let (start, file_start) = self.runs[k];
            let from = file_start + (at - start) as usize;
            let (now, rest) = out.split_at_mut(n);
            now.copy_from_slice(self.file.get(from..from + n)?);
            out = rest;
            at += n as u32;
        }
        Some(())
    }

    /// The record at stream offset `at` as the pass over the stream left it: its bytes after
    /// the length, in place or copied.
    fn record<'s>(&'s self, index: &'s Index, at: u32) -> Option<&'s [u8]> {
        if let Some(data) = self.in_one_run(at) {
            return Some(data);
        }
        let i = index.cut.binary_search_by_key(&at, |c| c.0).ok()?;
        let from = index.cut[i].1;
        let head = index.copies.get(from..from + 2)?;
        let len = usize::from(u16::from_le_bytes([head[0], head[1]]));
        index.copies.get(from + 2..from + 2 + len)
    }

    /// One pass over the stream, as `pdb`'s `ItemIter`: each record is a 16-bit length (2
    /// or more) and that many bytes; a broken record ends the index (the items after it
    /// are not found, and the names that need them are answered bare).
    fn index(&self) -> &Index {
        self.index
            .get_or_init(|| crate::resolve::pace::finish(self.build_index()))
    }

    /// The pass of [`Self::index`], pausing every few thousand records
    /// ([`crate::resolve::pace`]).
    async fn build_index(&self) -> Index {
        // A record is at least 4 bytes: the count is bounded by the stream's size
        // whatever the header says.
        let count = (self.maximum - self.minimum) as usize + 1;
        let mut index = Index {
            at: Vec::with_capacity(count.min(self.size as usize / 4)),
            cut: Vec::new(),
            copies: Vec::new(),
        };
        let mut at = self.header_size;
        // Items are numbered in u32 from `minimum`, and there are no more than the header
        // declares: records past them are never looked up, so never indexed.
        let most = ((u32::MAX - self.minimum) as usize).min(count);
        while at < self.size && index.at.len() <= most {
            if index.at.len() % 8192 == 8191 {
                crate::resolve::pace::pause().await;
            }
            let placed = self.in_one_run(at);
            let len = match placed {
                Some(data) => data.len() as u32,
                None => {
                    let mut head = [0u8; 2];
                    if self.read(at, &mut head).is_none() {
                        break;
                    }
                    u32::from(u16::from_le_bytes(head))
                }
            };
            if len < 2 {
                break;
            }
            if placed.is_none() {
                let from = index.copies.len();
                index.copies.resize(from + 2 + len as usize, 0);
                if self.read(at, &mut index.copies[from..]).is_none() {
                    index.copies.truncate(from);
                    break;
                }
                index.cut.push((at, from));
            }
            index.at.push(at);
            // In the stream: the record was read whole.
            at += 2 + len;
        }
        index
    }

    /// Reads the whole stream once to find its records, if not done yet.
    pub fn prepare(&self) {
        self.index();
    }

    /// [`Self::prepare`], pausing ([`crate::resolve::pace`]).
    pub async fn prepare_paced(&self) {
        if self.index.get().is_none() {
            let index = self.build_index().await;
            let _ = self.index.set(index);
        }
    }

    /// The item at `index`, as `pdb`'s `ItemFinder::find`: below the stream's first index,
    /// a primitive type's record; past its last or where the stream broke, an error.
    pub fn find(&self, index: I) -> pdb::Result<Item<'_, I>> {
        let raw: u32 = index.into();
        if raw < self.minimum {
            return Ok(Item::new(index, PRIMITIVE));
        }
        if raw > self.maximum {
            return Err(pdb::Error::TypeNotFound(raw));
        }
        let found = self.index();
        match found.at.get((raw - self.minimum) as usize) {
            Some(&at) => self
                .record(found, at)
                .map(|data| Item::new(index, data))
                .ok_or(pdb::Error::UnexpectedEof),
            None => Err(pdb::Error::TypeNotIndexed(
                raw,
                self.minimum.saturating_add(found.at.len() as u32),
            )),
        }
    }

    /// Every item in stream order, as `pdb`'s `ItemIter` (up to a broken record).
    pub fn iter(&self) -> impl Iterator<Item = Item<'_, I>> + '_ {
        let found = self.index();
        found.at.iter().enumerate().filter_map(move |(i, &at)| {
            let data = self.record(found, at)?;
            Some(Item::new(I::from(self.minimum + i as u32), data))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdb::{IdIndex, TypeIndex};

    /// A type stream: the header (items from 0x1000, `header_size` bytes) and `records`,
    /// each given its 16-bit length.
    fn stream(header_size: u32, records: &[&[u8]]) -> Vec<u8> {
        let mut s = vec![0u8; header_size as usize];
        let count = records.len() as u32;
        for (at, v) in [(4, header_size), (8, 0x1000), (12, 0x1000 + count)] {
            s[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        for r in records {
            s.extend_from_slice(&(r.len() as u16).to_le_bytes());
            s.extend_from_slice(r);
        }
        s
    }

    /// The stream cut into pieces of `piece` bytes laid out in the file last to first.
    fn scattered<I: ItemIndex>(stream: &[u8], piece: usize) -> ItemStore<I> {
        let pieces: Vec<&[u8]> = stream.chunks(piece).collect();
        let mut file = Vec::new();
        let mut slices = vec![pdb::SourceSlice { offset: 0, size: 0 }; pieces.len()];
        for (i, p) in pieces.iter().enumerate().rev() {
            slices[i] = pdb::SourceSlice {
                offset: file.len() as u64,
                size: p.len(),
            };
            file.extend_from_slice(p);
        }
        let file = Rc::new(FileBytes::from_vec(file));
        ItemStore::new(file, &slices).unwrap()
    }

    /// An `LF_STRING_ID` record naming `name`.
    fn string_id(name: &str) -> Vec<u8> {
        let mut r = vec![0x05, 0x16, 0, 0, 0, 0];
        r.extend_from_slice(name.as_bytes());
        r.push(0);
        r
    }

    #[test]
    fn records_across_pieces_read_whole() {
        let names: Vec<String> = (0..40).map(|i| format!("name{}", "x".repeat(i))).collect();
        let records: Vec<Vec<u8>> = names.iter().map(|n| string_id(n)).collect();
        let refs: Vec<&[u8]> = records.iter().map(|r| r.as_slice()).collect();
        let s = stream(56, &refs);
        for piece in [7, 64, 100, s.len()] {
            let store = scattered::<IdIndex>(&s, piece);
            assert_eq!(store.iter().count(), names.len(), "piece {piece}");
            for (i, name) in names.iter().enumerate() {
                let item = store.find(IdIndex(0x1000 + i as u32)).unwrap();
                match item.parse() {
                    Ok(pdb::IdData::String(s)) => assert_eq!(s.name.to_string(), *name),
                    other => panic!("piece {piece}, item {i}: {other:?}"),
                }
            }
            // Past the last index.
            assert!(store.find(IdIndex(0x1000 + 41)).is_err());
        }
    }

    #[test]
    fn a_record_past_the_stream_ends_the_index() {
        let mut s = stream(56, &[b"abcd", b"efgh"]);
        // The second record says 200 bytes, where 4 are left.
        let at = 56 + 6;
        s[at..at + 2].copy_from_slice(&200u16.to_le_bytes());
        for piece in [5, 60, s.len()] {
            let store = scattered::<TypeIndex>(&s, piece);
            assert_eq!(store.iter().count(), 1, "piece {piece}");
            assert!(store.find(TypeIndex(0x1000)).is_ok());
            assert!(store.find(TypeIndex(0x1001)).is_err());
            // Below the first index: a primitive type, from the index alone.
            let int = store.find(TypeIndex(0x74)).and_then(|t| t.parse());
            assert!(matches!(int, Ok(pdb::TypeData::Primitive(_))), "{int:?}");
        }
    }

    #[test]
    fn bad_headers_fail_as_in_pdb() {
        let file = |s: Vec<u8>| {
            let slices = [pdb::SourceSlice {
                offset: 0,
                size: s.len(),
            }];
            ItemStore::<TypeIndex>::new(Rc::new(FileBytes::from_vec(s)), &slices)
        };
        let short = file(stream(56, &[])[..40].to_vec());
        assert!(matches!(short, Err(pdb::Error::UnexpectedEof)));
        let small = file(
            stream(56, &[])
                .iter()
                .enumerate()
                .map(|(i, &b)| if i == 4 { 40 } else { b })
                .collect(),
        );
        assert!(matches!(
            small,
            Err(pdb::Error::InvalidTypeInformationHeader(_))
        ));
        let mut low = stream(56, &[]);
        low[8..12].copy_from_slice(&10u32.to_le_bytes());
        assert!(matches!(
            file(low),
            Err(pdb::Error::InvalidTypeInformationHeader(_))
        ));
        // A slice past the file's end.
        let s = stream(56, &[b"abcd"]);
        let slices = [pdb::SourceSlice {
            offset: 8,
            size: s.len(),
        }];
        let past = ItemStore::<TypeIndex>::new(Rc::new(FileBytes::from_vec(s)), &slices);
        assert!(matches!(past, Err(pdb::Error::IoError(_))));
    }
}

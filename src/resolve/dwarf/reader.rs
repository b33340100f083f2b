//! The reader gimli and addr2line read DWARF through: a range of a mapped or decompressed
//! file that it keeps alive itself (an `Rc`), so a resolver owns its sections without
//! borrowing from itself and nothing needs a `'static` it does not have.
//!
//! Cloning costs a reference count (gimli clones readers for every unit, DIE attribute and
//! line program). The batch path reads DIEs and line programs from [`R::slice`], the bytes
//! themselves, so its hot loops see no difference (MEASUREMENTS, "Figures behind code choices").

use std::borrow::Cow;
use std::fmt;
use std::rc::Rc;

use gimli::{Error, ReaderOffsetId, Result, RunTimeEndian};

use crate::resolve::bytes::{Bytes, FileBytes};

/// A DWARF section, or a part of one, with its byte order.
#[derive(Clone)]
pub struct R {
    file: Rc<FileBytes>,
    /// The range of `file` still to read.
    start: usize,
    end: usize,
    endian: RunTimeEndian,
}

impl R {
    pub fn new(bytes: Bytes, endian: RunTimeEndian) -> R {
        let (file, start, len) = bytes.parts();
        R {
            file,
            start,
            end: start + len,
            endian,
        }
    }

    /// A reader of nothing: an absent section.
    pub fn empty_of(endian: RunTimeEndian) -> R {
        R::new(Bytes::owned(Vec::new()), endian)
    }

    /// The bytes still to read.
    #[inline]
    pub fn slice(&self) -> &[u8] {
        &self.file[self.start..self.end]
    }

    /// The bytes still to read as text, invalid UTF-8 replaced (as gimli's slice reader's
    /// own method of that name).
    pub fn to_string_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.slice())
    }

    /// Where the bytes still to read are in memory: what gimli's offset ids are made of.
    #[inline]
    fn address(&self) -> usize {
        self.file.as_ptr() as usize + self.start
    }

    #[inline]
    fn eof(&self) -> Error {
        Error::UnexpectedEof(ReaderOffsetId(self.address() as u64))
    }
}

impl fmt::Debug for R {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "R({} bytes)", self.end - self.start)
    }
}

impl gimli::Reader for R {
    type Endian = RunTimeEndian;
    type Offset = usize;

    #[inline]
    fn endian(&self) -> RunTimeEndian {
        self.endian
    }

    #[inline]
    fn len(&self) -> usize {
        self.end - self.start
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.end == self.start
    }

    // Not needed, but gimli reads every LEB128 byte by byte through this.
    #[inline]
    fn read_u8(&mut self) -> Result<u8> {
        match self.slice().first() {
            Some(&b) => {
                self.start += 1;
                Ok(b)
            }
            None => Err(self.eof()),
        }
    }

    #[inline]
    fn empty(&mut self) {
        self.start = self.end;
    }

    #[inline]
    fn truncate(&mut self, len: usize) -> Result<()> {
        if self.len() < len {
            return Err(self.eof());
        }
        self.end = self.start + len;
        Ok(())
    }

    #[inline]
    fn offset_from(&self, base: &Self) -> usize {
        self.address().wrapping_sub(base.address())
    }

    #[inline]
    fn offset_id(&self) -> ReaderOffsetId {
        ReaderOffsetId(self.address() as u64)
    }

    #[inline]
    fn lookup_offset_id(&self, id: ReaderOffsetId) -> Option<usize> {
        let here = self.address() as u64;
        (id.0 >= here && id.0 <= here + self.len() as u64).then(|| (id.0 - here) as usize)
    }

    // Names end with a NUL that gimli looks for here: memchr, not a byte loop.
    #[inline]
    fn find(&self, byte: u8) -> Result<usize> {
        memchr::memchr(byte, self.slice()).ok_or_else(|| self.eof())
    }

    // The LEB128 readers decode from the bytes at once (gimli's defaults call `read_u8`
    // per byte, each a bounds check of the whole range); same values and errors.
    #[inline]
    fn skip_leb128(&mut self) -> Result<()> {
        let s = self.slice();
        match s.iter().position(|&b| b & 0x80 == 0) {
            Some(i) => {
                self.start += i + 1;
                Ok(())
            }
            None => {
                self.start = self.end;
                Err(self.eof())
            }
        }
    }

    #[inline]
    fn read_uleb128(&mut self) -> Result<u64> {
        let s = self.slice();
        let mut value = 0u64;
        let mut shift = 0u32;
        for (i, &b) in s.iter().enumerate() {
            if shift == 63 && b != 0x00 && b != 0x01 {
                self.start += i + 1;
                return Err(Error::BadUnsignedLeb128);
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                self.start += i + 1;
                return Ok(value);
            }
            shift += 7;
        }
        self.start = self.end;
        Err(self.eof())
    }

    #[inline]
    fn skip(&mut self, len: usize) -> Result<()> {
        if self.len() < len {
            return Err(self.eof());
        }
        self.start += len;
        Ok(())
    }

    #[inline]
    fn split(&mut self, len: usize) -> Result<Self> {
        if self.len() < len {
            return Err(self.eof());
        }
        let head = R {
            file: self.file.clone(),
            start: self.start,
            end: self.start + len,
            endian: self.endian,
        };
        self.start += len;
        Ok(head)
    }

    #[inline]
    fn to_slice(&self) -> Result<Cow<'_, [u8]>> {
        Ok(Cow::Borrowed(self.slice()))
    }

    #[inline]
    fn to_string(&self) -> Result<Cow<'_, str>> {
        std::str::from_utf8(self.slice())
            .map(Cow::Borrowed)
            .map_err(|_| Error::BadUtf8)
    }

    #[inline]
    fn to_string_lossy(&self) -> Result<Cow<'_, str>> {
        Ok(R::to_string_lossy(self))
    }

    #[inline]
    fn read_slice(&mut self, buf: &mut [u8]) -> Result<()> {
        let Some(src) = self.slice().get(..buf.len()) else {
            return Err(self.eof());
        };
        buf.copy_from_slice(src);
        self.start += buf.len();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimli::Reader;

    fn reader(b: &[u8]) -> R {
        R::new(Bytes::owned(b.to_vec()), RunTimeEndian::Little)
    }

    #[test]
    fn reads_as_gimlis_slice_reader_does() {
        let bytes = [0x81, 0x01, 0x7f, 1, 2, 3, 4, b'a', 0, 9];
        let mut ours = reader(&bytes);
        let mut theirs = gimli::EndianSlice::new(&bytes, RunTimeEndian::Little);
        assert_eq!(ours.read_uleb128().ok(), theirs.read_uleb128().ok());
        assert_eq!(ours.read_sleb128().ok(), theirs.read_sleb128().ok());
        assert_eq!(ours.read_u32().ok(), theirs.read_u32().ok());
        let (a, b) = (ours.clone(), theirs);
        let s = ours.read_null_terminated_slice().unwrap();
        let t = theirs.read_null_terminated_slice().unwrap();
        assert_eq!(s.slice(), t.slice());
        assert_eq!(ours.offset_from(&a), theirs.offset_from(b));
        assert_eq!(ours.read_u8().ok(), theirs.read_u8().ok());
        assert!(ours.read_u8().is_err() && theirs.read_u8().is_err());
        let id = a.offset_id();
        assert_eq!(ours.lookup_offset_id(id), None);
        assert_eq!(a.lookup_offset_id(ours.offset_id()), Some(3));
        // LEB128 edge cases: the longest valid value, a bad 10th byte, a cut-off number.
        let cases: [&[u8]; 5] = [
            &[
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 7,
            ],
            &[
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 7,
            ],
            &[0x80, 0x80],
            &[0x05, 0x80, 0x01],
            &[],
        ];
        for c in cases {
            let (mut o, mut t) = (reader(c), gimli::EndianSlice::new(c, RunTimeEndian::Little));
            assert_eq!(o.read_uleb128().ok(), t.read_uleb128().ok(), "{c:?}");
            assert_eq!(o.len(), t.len(), "{c:?}");
            let (mut o, mut t) = (reader(c), gimli::EndianSlice::new(c, RunTimeEndian::Little));
            assert_eq!(o.skip_leb128().is_ok(), t.skip_leb128().is_ok(), "{c:?}");
            assert_eq!(o.len(), t.len(), "{c:?}");
            assert_eq!(o.find(0x80).ok(), Reader::find(&t, 0x80).ok(), "{c:?}");
        }
        let mut t = a.clone();
        assert!(t.truncate(11).is_err());
        t.truncate(2).unwrap();
        assert_eq!(t.slice(), &bytes[7..9]);
    }
}

//! The PDB's bytes as the `pdb` crate reads them: ranges of the mapped file.

use std::fmt;
use std::rc::Rc;

use crate::resolve::bytes::FileBytes;

/// The PDB's bytes for the `pdb` crate, read in place from the mapped file: a PDB is never
/// copied whole (one from a symbol server may be gigabytes). A stream whose pages lie in
/// order is a range of the mapping; only one scattered over the file is gathered (as the
/// crate's own reader would copy every stream). The type and id streams, a big PDB's
/// biggest and never in order past 16 MiB, are not read through it ([`ItemStore`]).
pub(super) struct MappedSource(pub(super) Rc<FileBytes>);

impl fmt::Debug for MappedSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MappedSource({} bytes)", self.0.len())
    }
}

/// A view of a [`MappedSource`]: a range of the file, or pages gathered into a buffer.
enum MappedView {
    Range(Rc<FileBytes>, std::ops::Range<usize>),
    Gathered(Vec<u8>),
}

impl fmt::Debug for MappedView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MappedView({} bytes)",
            pdb::SourceView::as_slice(self).len()
        )
    }
}

impl pdb::SourceView<'static> for MappedView {
    fn as_slice(&self) -> &[u8] {
        match self {
            MappedView::Range(file, r) => &file[r.clone()],
            MappedView::Gathered(v) => v,
        }
    }
}

impl pdb::Source<'static> for MappedSource {
    fn view(
        &mut self,
        slices: &[pdb::SourceSlice],
    ) -> Result<Box<dyn pdb::SourceView<'static>>, std::io::Error> {
        let eof = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
        // Each slice's range in the file, checked before anything is allocated.
        let mut ranges = Vec::with_capacity(slices.len());
        for s in slices {
            let start = usize::try_from(s.offset).map_err(|_| eof())?;
            let end = start.checked_add(s.size).ok_or_else(eof)?;
            if end > self.0.len() {
                return Err(eof());
            }
            ranges.push(start..end);
        }
        let contiguous = ranges.windows(2).all(|w| w[0].end == w[1].start);
        let view = match (ranges.first(), ranges.last()) {
            (Some(first), Some(last)) if contiguous => {
                MappedView::Range(self.0.clone(), first.start..last.end)
            }
            _ => {
                let mut v = Vec::with_capacity(ranges.iter().map(|r| r.len()).sum());
                for r in ranges {
                    v.extend_from_slice(&self.0[r]);
                }
                MappedView::Gathered(v)
            }
        };
        Ok(Box::new(view))
    }
}

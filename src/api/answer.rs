//! An answer's text with shared pieces spliced in where they go. A big symbolication
//! answer is mostly frame texts the memo remembers: they are sent from there, not first
//! copied into one buffer (for 100 000 frames that buffer was 80 MB of fresh memory, and
//! filling it most of a warm request's time).

use std::io::Read;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct Answer {
    text: Vec<u8>,
    /// Texts shared with their owners (the modules' remembered answers).
    shared: Vec<Arc<Vec<u8>>>,
    /// Pieces in the order they are inserted into `text`.
    pieces: Vec<Piece>,
    /// Where in `text` the last piece is inserted.
    last_at: usize,
    len: usize,
    /// Where it goes once sent whole.
    keep: Option<Arc<Keeper>>,
    /// An answer sent before, sent again as it is (then the rest is empty).
    again: Option<Arc<Answer>>,
}

/// Where an answer goes once it has been sent whole, for an identical request to be
/// answered with: the same text and pieces, read again.
#[derive(Default)]
pub struct Keeper(Mutex<Option<Arc<Answer>>>);

impl Keeper {
    /// The answer, once it has been sent whole.
    pub fn answer(&self) -> Option<Arc<Answer>> {
        self.0.lock().ok()?.clone()
    }
}

/// `shared[slot][start..start + len]`, inserted `gap` bytes of text after the piece
/// before it (or the text's start). 16 bytes: an answer of 100 000 frames has 300 000.
struct Piece {
    gap: u32,
    slot: u32,
    start: u32,
    len: u32,
}

impl Piece {
    fn bytes<'a>(&self, shared: &'a [Arc<Vec<u8>>]) -> &'a [u8] {
        let start = self.start as usize;
        &shared[self.slot as usize][start..start + self.len as usize]
    }
}

impl Answer {
    /// An answer of about `text` bytes of its own and `pieces` pieces (sized once: a
    /// list doubling as it grows is copied, and for a moment held twice).
    pub fn with_capacity(text: usize, pieces: usize) -> Answer {
        Answer {
            text: Vec::with_capacity(text),
            pieces: Vec::with_capacity(pieces),
            ..Answer::default()
        }
    }

    /// The text written so far (pieces go between its bytes).
    pub fn text(&mut self) -> &mut Vec<u8> {
        &mut self.text
    }

    /// Holds `texts` for pieces to point into; returns the slot of the first of them.
    pub fn share(&mut self, texts: Vec<Arc<Vec<u8>>>) -> u32 {
        let first = self.shared.len();
        self.shared.extend(texts);
        first as u32
    }

    /// Inserts `texts[start..start + len]` of the shared texts at `slot` after the text
    /// written so far. A range outside them is a bug of the caller: it panics here, in
    /// the request's handling, not later in the writer.
    pub fn splice(&mut self, slot: u32, start: u32, len: u32) {
        let at = self.text.len();
        let mut piece = Piece {
            gap: 0,
            slot,
            start,
            len,
        };
        let bytes = piece.bytes(&self.shared);
        let Ok(gap) = u32::try_from(at - self.last_at) else {
            // Over 4 GiB of text since the last piece: the bytes are copied instead.
            self.text.extend_from_slice(bytes);
            return;
        };
        piece.gap = gap;
        self.len += len as usize;
        self.last_at = at;
        self.pieces.push(piece);
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        match &self.again {
            Some(a) => a.len(),
            None => self.text.len() + self.len,
        }
    }

    /// Bytes it holds of its own (the texts it shares are the memo's).
    pub fn own_size(&self) -> usize {
        self.text.capacity()
            + self.pieces.capacity() * std::mem::size_of::<Piece>()
            + self.shared.capacity() * std::mem::size_of::<Arc<Vec<u8>>>()
    }

    /// An answer sent before, to be sent again.
    pub fn again(answer: Arc<Answer>) -> Answer {
        Answer {
            again: Some(answer),
            ..Answer::default()
        }
    }

    /// Whether it is an answer sent before.
    pub fn is_again(&self) -> bool {
        self.again.is_some()
    }

    /// Has the answer put into `keeper` once it has been read to its end.
    pub fn keep_in(&mut self, keeper: Arc<Keeper>) {
        self.keep = Some(keeper);
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole answer as one buffer.
    pub fn into_vec(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        let _ = self.into_reader().read_to_end(&mut out);
        out
    }

    pub fn into_reader(mut self) -> AnswerReader {
        if let Some(a) = self.again.take() {
            return a.reader(None);
        }
        let keeper = self.keep.take();
        Arc::new(self).reader(keeper)
    }

    /// Reads the answer from its start; when read to its end, it goes into `keeper`.
    fn reader(self: Arc<Self>, keeper: Option<Arc<Keeper>>) -> AnswerReader {
        let until = self
            .pieces
            .first()
            .map_or(self.text.len(), |p| p.gap as usize);
        AnswerReader {
            answer: self,
            keeper,
            next_piece: 0,
            in_piece: 0,
            at: 0,
            until,
        }
    }
}

impl From<Vec<u8>> for Answer {
    fn from(text: Vec<u8>) -> Answer {
        Answer {
            text,
            ..Answer::default()
        }
    }
}

/// Reads an [`Answer`] in order: text up to the next piece's position, the piece, ...
pub struct AnswerReader {
    answer: Arc<Answer>,
    keeper: Option<Arc<Keeper>>,
    next_piece: usize,
    /// Bytes of the next piece already read.
    in_piece: usize,
    /// Bytes of the text already read.
    at: usize,
    /// Where in the text the next piece goes (the text's end after the last).
    until: usize,
}

impl Read for AnswerReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            let a = &self.answer;
            let piece = a.pieces.get(self.next_piece);
            let until = self.until;
            let from: &[u8] = if self.at < until {
                &a.text[self.at..until]
            } else if let Some(p) = piece {
                &p.bytes(&a.shared)[self.in_piece..]
            } else {
                if n == 0
                    && let Some(keeper) = self.keeper.take()
                    && let Ok(mut kept) = keeper.0.lock()
                {
                    *kept = Some(self.answer.clone());
                }
                break;
            };
            let k = from.len().min(buf.len() - n);
            buf[n..n + k].copy_from_slice(&from[..k]);
            n += k;
            if self.at < until {
                self.at += k;
            } else {
                self.in_piece += k;
                if self.in_piece == piece.map_or(0, |p| p.len as usize) {
                    self.next_piece += 1;
                    self.in_piece = 0;
                    self.until = a
                        .pieces
                        .get(self.next_piece)
                        .map_or(a.text.len(), |p| until + p.gap as usize);
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Answer {
        let mut a = Answer::default();
        a.text().extend_from_slice(b"[1,");
        let slot = a.share(vec![Arc::new(b"x22,333".to_vec())]);
        a.splice(slot, 1, 2);
        a.splice(slot, 0, 0);
        a.splice(slot, 3, 4);
        a.text().extend_from_slice(b",4]");
        a
    }

    #[test]
    fn pieces_read_in_place_whatever_the_buffer_size() {
        assert_eq!(sample().len(), 12);
        for size in 1..14 {
            let mut r = sample().into_reader();
            let mut out = Vec::new();
            let mut buf = vec![0; size];
            loop {
                let n = r.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
            assert_eq!(out, b"[1,22,333,4]", "buffer of {size}");
        }
        assert_eq!(sample().into_vec(), b"[1,22,333,4]");
    }
}

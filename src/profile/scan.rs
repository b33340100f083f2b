//! A byte-level JSON reader for profiles: walks the structure without building it, so
//! passing over hundreds of MB of samples costs a scan, not a parse. Shared by the lib
//! extraction of `load` and the rewriter of `symbolicate`.

use std::fmt;
use std::io::Read;

/// Why a profile cannot be read (or rewritten): the profile layer's one error type. Its
/// `Display` is the problem as a user reads it after the profile's path.
#[derive(Debug)]
pub enum JsonError {
    /// Reading the file (or its gzip stream) failed.
    Read(std::io::Error),
    /// Writing the rewritten profile failed.
    Write(std::io::Error),
    /// The text ends inside a value.
    EarlyEnd { at: u64 },
    /// Not JSON here.
    Expected { at: u64, what: &'static str },
    /// A value over its memory limit.
    TooBig {
        what: &'static str,
        at: u64,
        max: usize,
    },
    /// JSON, but not what a profile holds there (the message says what).
    Invalid(String),
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonError::Read(e) => write!(f, "reading the profile: {e}"),
            JsonError::Write(e) => write!(f, "writing the output: {e}"),
            JsonError::EarlyEnd { at } => write!(f, "the profile ends early (at byte {at})"),
            JsonError::Expected { at, what } => {
                write!(f, "invalid JSON at byte {at}: expected {what}")
            }
            JsonError::TooBig { what, at, max } => write!(
                f,
                "{what} at byte {at} is over the limit of {} MiB (no real profile comes near it)",
                max >> 20
            ),
            JsonError::Invalid(m) => f.write_str(m),
        }
    }
}

impl From<String> for JsonError {
    fn from(m: String) -> JsonError {
        JsonError::Invalid(m)
    }
}

impl From<&str> for JsonError {
    fn from(m: &str) -> JsonError {
        JsonError::Invalid(m.to_string())
    }
}

/// The most bytes one value of a profile (a string, a `libs` array) may take in memory:
/// a 1 MB gzipped profile can hold a 500 MB string, and nothing real comes near this.
pub const MAX_VALUE: usize = 64 << 20;

pub struct Input<R: Read> {
    inner: R,
    pub buf: Vec<u8>,
    pub pos: usize,
    pub len: usize,
    consumed: u64,
}

impl<R: Read> Input<R> {
    pub fn new(inner: R) -> Input<R> {
        Input {
            inner,
            buf: vec![0; 1 << 16],
            pos: 0,
            len: 0,
            consumed: 0,
        }
    }

    /// Whether the next value (after whitespace) is an object; nothing is consumed but
    /// the whitespace.
    pub fn peek_object(&mut self) -> Result<bool, JsonError> {
        self.whitespace(|_| {})?;
        Ok(self.peek()? == Some(b'{'))
    }

    pub fn peek(&mut self) -> Result<Option<u8>, JsonError> {
        if self.pos == self.len {
            self.consumed += self.len as u64;
            self.pos = 0;
            self.len = loop {
                match self.inner.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(JsonError::Read(e)),
                }
            };
            if self.len == 0 {
                return Ok(None);
            }
        }
        Ok(Some(self.buf[self.pos]))
    }

    pub fn offset(&self) -> u64 {
        self.consumed + self.pos as u64
    }

    pub fn early_end(&self) -> JsonError {
        JsonError::EarlyEnd { at: self.offset() }
    }

    pub fn unexpected(&self, what: &'static str) -> JsonError {
        JsonError::Expected {
            at: self.offset(),
            what,
        }
    }

    pub fn next_byte(&mut self) -> Result<u8, JsonError> {
        match self.peek()? {
            Some(b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.early_end()),
        }
    }

    /// Skips whitespace, handing each skipped byte to `keep`.
    pub fn whitespace(&mut self, mut keep: impl FnMut(u8)) -> Result<(), JsonError> {
        while let Some(b) = self.peek()? {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            self.pos += 1;
            keep(b);
        }
        Ok(())
    }

    /// After an opening quote: the string's raw bytes (escapes as written), the closing
    /// quote consumed.
    /// Strings over [`MAX_VALUE`] are an error.
    pub fn read_string(&mut self) -> Result<Vec<u8>, JsonError> {
        let start = self.offset();
        let mut raw = Vec::new();
        self.try_string_bytes(|chunk| {
            if raw.len() + chunk.len() > MAX_VALUE {
                return Err(JsonError::TooBig {
                    what: "a string",
                    at: start,
                    max: MAX_VALUE,
                });
            }
            raw.extend_from_slice(chunk);
            Ok(())
        })?;
        Ok(raw)
    }

    /// After an opening quote: hands the string's raw bytes to `keep` in chunks, the
    /// closing quote consumed (not handed over).
    pub fn string_bytes(&mut self, mut keep: impl FnMut(&[u8])) -> Result<(), JsonError> {
        self.try_string_bytes(|chunk| {
            keep(chunk);
            Ok(())
        })
    }

    /// [`Self::string_bytes`] whose `keep` may stop the walk with an error.
    fn try_string_bytes(
        &mut self,
        mut keep: impl FnMut(&[u8]) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        loop {
            if self.peek()?.is_none() {
                return Err(self.early_end());
            }
            let start = self.pos;
            let end = self.buf[start..self.len]
                .iter()
                .position(|&b| b == b'"' || b == b'\\')
                .map_or(self.len, |i| start + i);
            if end > start {
                keep(&self.buf[start..end])?;
                self.pos = end;
            }
            if self.pos == self.len {
                continue;
            }
            match self.next_byte()? {
                b'"' => return Ok(()),
                _ => {
                    let e = self.next_byte()?;
                    keep(&[b'\\', e])?;
                }
            }
        }
    }

    /// Skips one value (whitespace before it included); the fast path for the samples and
    /// markers that make up most of a profile.
    pub fn skip_value(&mut self) -> Result<(), JsonError> {
        self.whitespace(|_| {})?;
        match self.peek()? {
            Some(b'{' | b'[') => {}
            Some(_) => return self.value_bytes(|_| {}),
            None => return Err(self.early_end()),
        }
        let mut depth = 0usize;
        'refill: loop {
            if self.peek()?.is_none() {
                return Err(self.early_end());
            }
            let mut i = self.pos;
            while i < self.len {
                match self.buf[i] {
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            self.pos = i + 1;
                            return Ok(());
                        }
                    }
                    b'"' => {
                        self.pos = i + 1;
                        self.string_bytes(|_| {})?;
                        continue 'refill;
                    }
                    _ => {}
                }
                i += 1;
            }
            self.pos = self.len;
        }
    }

    /// Skips one value (whitespace before it included), handing its bytes to `keep`.
    pub fn value_bytes(&mut self, mut keep: impl FnMut(&[u8])) -> Result<(), JsonError> {
        self.try_value_bytes(|b| {
            keep(b);
            Ok(())
        })
    }

    /// The bytes of one value (whitespace before it skipped), at most `max` of them: a
    /// longer value is an error as soon as the limit is passed, before it is all read.
    pub fn bounded_value(&mut self, max: usize, what: &'static str) -> Result<Vec<u8>, JsonError> {
        self.whitespace(|_| {})?;
        let start = self.offset();
        let mut bytes = Vec::new();
        self.try_value_bytes(|b| {
            if bytes.len() + b.len() > max {
                return Err(JsonError::TooBig {
                    what,
                    at: start,
                    max,
                });
            }
            bytes.extend_from_slice(b);
            Ok(())
        })?;
        Ok(bytes)
    }

    fn try_value_bytes(
        &mut self,
        mut keep: impl FnMut(&[u8]) -> Result<(), JsonError>,
    ) -> Result<(), JsonError> {
        self.whitespace(|_| {})?;
        let mut depth = 0usize;
        loop {
            let Some(b) = self.peek()? else {
                return if depth == 0 {
                    Ok(())
                } else {
                    Err(self.early_end())
                };
            };
            match b {
                b'"' => {
                    self.pos += 1;
                    keep(b"\"")?;
                    self.try_string_bytes(&mut keep)?;
                    keep(b"\"")?;
                }
                b'{' | b'[' => {
                    self.pos += 1;
                    keep(&[b])?;
                    depth += 1;
                    continue;
                }
                b'}' | b']' if depth > 0 => {
                    self.pos += 1;
                    keep(&[b])?;
                    depth -= 1;
                }
                b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t' if depth == 0 => return Ok(()),
                _ => {
                    // A run of scalar bytes and structure within this buffer.
                    let start = self.pos;
                    let end = self.buf[start..self.len]
                        .iter()
                        .position(|&c| matches!(c, b'"' | b'{' | b'[' | b'}' | b']' | b','))
                        .map_or(self.len, |i| start + i);
                    let end = if depth == 0 {
                        // Top-level scalar: stop at whitespace too.
                        self.buf[start..end]
                            .iter()
                            .position(|c| c.is_ascii_whitespace())
                            .map_or(end, |i| start + i)
                    } else {
                        end.max(start + 1)
                    };
                    keep(&self.buf[start..end])?;
                    self.pos = end;
                    // A top-level scalar ends at its delimiter, which may be in the next
                    // buffer.
                    if depth == 0 && end < self.len {
                        return Ok(());
                    }
                    continue;
                }
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_skipped_exactly() {
        for (text, value) in [
            (
                r#" {"a": [1, "x\"]", {"b": []}]} ,rest"#,
                r#"{"a": [1, "x\"]", {"b": []}]}"#,
            ),
            ("12.5e3]", "12.5e3"),
            (r#""s\\" ,"#, r#""s\\""#),
            ("[[],[]] ", "[[],[]]"),
        ] {
            let mut inp = Input::new(text.as_bytes());
            inp.buf = vec![0; 3]; // tiny buffer: values cross buffer ends
            let mut got = Vec::new();
            inp.value_bytes(|b| got.extend_from_slice(b)).unwrap();
            assert_eq!(String::from_utf8(got).unwrap(), value, "{text}");
        }
        let mut inp = Input::new(&b"[1, 2"[..]);
        assert!(inp.value_bytes(|_| {}).is_err());
        let mut inp = Input::new(&b"[1, 2"[..]);
        assert!(inp.skip_value().is_err());
        let text = r#" [{"a": "]}\"[", "b": [[1], {}]}, 2] ,x"#;
        let mut inp = Input::new(text.as_bytes());
        inp.buf = vec![0; 5];
        inp.skip_value().unwrap();
        assert_eq!(inp.next_byte().unwrap(), b' ');
        assert_eq!(inp.next_byte().unwrap(), b',');
    }
}

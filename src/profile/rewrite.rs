//! Second pass of `symbolicate`: copies a Gecko profile's JSON text byte for byte,
//! replacing only the thread string-table entries it is given and, when every address got
//! a name, setting `meta.presymbolicated`. Key order, numbers and spacing stay exactly as they were, and the
//! text streams through: nothing of the profile is held in memory.

use std::collections::HashMap;
use std::io::{Read, Write};

use crate::profile::scan::{Input, JsonError};

/// For each process (by its path of `processes` indices), address -> new location text.
pub type Replacements = HashMap<Vec<usize>, HashMap<u64, String>>;

#[derive(Debug, Default, PartialEq)]
pub struct Stats {
    pub replaced: u64,
}

const MAX_DEPTH: usize = 512;

/// Where a value sits, as far as rewriting cares.
#[derive(Clone, Copy)]
enum Where<'p> {
    /// A process object (the root, or an element of `processes`).
    Process(&'p [usize]),
    Processes(&'p [usize]),
    Threads(&'p [usize]),
    Thread(&'p [usize]),
    StringTable(&'p [usize]),
    /// The root's `meta`.
    Meta,
    Other,
}

struct Rewriter<'a, R: Read, W: Write> {
    input: Input<R>,
    out: W,
    repl: &'a Replacements,
    /// Set `meta.presymbolicated` (the profiler then never symbolicates the profile):
    /// only when nothing was left unresolved.
    presymbolicated: bool,
    stats: Stats,
}

fn write_err(e: std::io::Error) -> JsonError {
    JsonError::Write(e)
}

impl<R: Read, W: Write> Rewriter<'_, R, W> {
    fn emit(&mut self, bytes: &[u8]) -> Result<(), JsonError> {
        self.out.write_all(bytes).map_err(write_err)
    }

    fn unexpected(&mut self, what: &'static str) -> JsonError {
        self.input.unexpected(what)
    }

    fn whitespace(&mut self) -> Result<(), JsonError> {
        // Passed on in pieces: a run of whitespace may be most of a (hostile) file.
        let Rewriter { input, out, .. } = self;
        let mut ws = Vec::new();
        let mut failed = None;
        input.whitespace(|b| {
            ws.push(b);
            if ws.len() >= 1 << 16 {
                if failed.is_none()
                    && let Err(e) = out.write_all(&ws)
                {
                    failed = Some(e);
                }
                ws.clear();
            }
        })?;
        if let Some(e) = failed {
            return Err(write_err(e));
        }
        self.emit(&ws)
    }

    fn read_string(&mut self) -> Result<Vec<u8>, JsonError> {
        self.input.read_string()
    }

    /// Copies a string (after its opening quote) through, closing quote included.
    fn copy_string(&mut self) -> Result<(), JsonError> {
        let Rewriter { input, out, .. } = self;
        let mut failed = None;
        input.string_bytes(|chunk| {
            if failed.is_none()
                && let Err(e) = out.write_all(chunk)
            {
                failed = Some(e);
            }
        })?;
        if let Some(e) = failed {
            return Err(write_err(e));
        }
        self.emit(b"\"")
    }

    fn scalar(&mut self) -> Result<(), JsonError> {
        let mut any = false;
        while let Some(b) = self.input.peek()? {
            if matches!(b, b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            if !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')) {
                return Err(self.unexpected("a value"));
            }
            self.input.pos += 1;
            self.emit(&[b])?;
            any = true;
        }
        if any {
            Ok(())
        } else {
            Err(self.unexpected("a value"))
        }
    }

    fn value(&mut self, at: Where<'_>, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err("the profile is nested too deeply".into());
        }
        self.whitespace()?;
        match self.input.peek()? {
            Some(b'{') => {
                self.input.pos += 1;
                self.emit(b"{")?;
                self.object(at, depth)
            }
            Some(b'[') => {
                self.input.pos += 1;
                self.emit(b"[")?;
                self.array(at, depth)
            }
            Some(b'"') => {
                self.input.pos += 1;
                if let Where::StringTable(process) = at {
                    let raw = self.read_string()?;
                    let new =
                        super::hex_address(&raw).and_then(|a| self.repl.get(process)?.get(&a));
                    match new {
                        Some(text) => {
                            let quoted = serde_json::to_string(text).map_err(|e| e.to_string())?;
                            self.stats.replaced += 1;
                            self.emit(quoted.as_bytes())
                        }
                        None => {
                            self.emit(b"\"")?;
                            self.emit(&raw)?;
                            self.emit(b"\"")
                        }
                    }
                } else {
                    self.emit(b"\"")?;
                    self.copy_string()
                }
            }
            Some(_) => self.scalar(),
            None => Err(self.input.early_end()),
        }
    }

    fn object(&mut self, at: Where<'_>, depth: usize) -> Result<(), JsonError> {
        let mut members = 0usize;
        let mut saw_presymbolicated = false;
        loop {
            self.whitespace()?;
            match self.input.next_byte()? {
                b'}' => {
                    if matches!(at, Where::Meta) && self.presymbolicated && !saw_presymbolicated {
                        let sep = if members > 0 { "," } else { "" };
                        self.emit(format!("{sep}\"presymbolicated\":true").as_bytes())?;
                    }
                    return self.emit(b"}");
                }
                b',' if members > 0 => {
                    self.emit(b",")?;
                    self.whitespace()?;
                    if self.input.next_byte()? != b'"' {
                        return Err(self.unexpected("a key"));
                    }
                }
                b'"' if members == 0 => {}
                _ => return Err(self.unexpected("a key or '}'")),
            }
            let key = self.read_string()?;
            self.emit(b"\"")?;
            self.emit(&key)?;
            self.emit(b"\"")?;
            self.whitespace()?;
            if self.input.next_byte()? != b':' {
                return Err(self.unexpected("':'"));
            }
            self.emit(b":")?;
            members += 1;
            let child = match (at, key.as_slice()) {
                (Where::Process(p), b"processes") => Where::Processes(p),
                (Where::Process(p), b"threads") => Where::Threads(p),
                (Where::Process([]), b"meta") => Where::Meta,
                (Where::Thread(p), b"stringTable") => Where::StringTable(p),
                (Where::Meta, b"presymbolicated") if self.presymbolicated => {
                    // Replace whatever value it had.
                    saw_presymbolicated = true;
                    self.whitespace()?;
                    self.skip_value()?;
                    self.emit(b"true")?;
                    continue;
                }
                _ => Where::Other,
            };
            self.value(child, depth + 1)?;
        }
    }

    /// Reads a value without writing it.
    fn skip_value(&mut self) -> Result<(), JsonError> {
        self.input.skip_value()
    }

    fn array(&mut self, at: Where<'_>, depth: usize) -> Result<(), JsonError> {
        let mut index = 0usize;
        loop {
            self.whitespace()?;
            if self.input.peek()? == Some(b']') {
                self.input.pos += 1;
                return self.emit(b"]");
            }
            if index > 0 {
                if self.input.next_byte()? != b',' {
                    return Err(self.unexpected("',' or ']'"));
                }
                self.emit(b",")?;
            }
            match at {
                Where::Processes(p) => {
                    let mut path = p.to_vec();
                    path.push(index);
                    self.value(Where::Process(&path), depth + 1)?;
                }
                Where::Threads(p) => self.value(Where::Thread(p), depth + 1)?,
                Where::StringTable(p) => self.value(Where::StringTable(p), depth + 1)?,
                _ => self.value(Where::Other, depth + 1)?,
            }
            index += 1;
        }
    }
}

/// Copies `input` to `output` with `repl`'s strings; `presymbolicated`: also set
/// `meta.presymbolicated` to `true` (else an existing value is copied as it is).
pub fn rewrite(
    input: impl Read,
    output: impl Write,
    repl: &Replacements,
    presymbolicated: bool,
) -> Result<Stats, JsonError> {
    let mut rw = Rewriter {
        input: Input::new(input),
        out: output,
        repl,
        presymbolicated,
        stats: Stats::default(),
    };
    rw.value(Where::Process(&[]), 0)?;
    rw.whitespace()?;
    if rw.input.peek()?.is_some() {
        return Err(rw.unexpected("the end of the profile"));
    }
    rw.out.flush().map_err(write_err)?;
    Ok(rw.stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, repl: &Replacements) -> Result<(String, u64), JsonError> {
        let mut out = Vec::new();
        let stats = rewrite(text.as_bytes(), &mut out, repl, true)?;
        Ok((String::from_utf8(out).unwrap(), stats.replaced))
    }

    #[test]
    fn replaces_only_string_table_addresses() {
        let mut repl = Replacements::new();
        repl.insert(vec![], HashMap::from([(0x10, "f (in a)".to_string())]));
        repl.insert(
            vec![1],
            HashMap::from([(0x20, "g \"q\" (in b)".to_string())]),
        );
        let text = r#"{ "meta" : {"version": 1.50, "x": [1e3, -0.0]},
  "threads": [{"stringTable": ["0x10", "0x11", "0x10", "a\"b"], "other": ["0x10"]}],
  "processes": [{"threads": [{"stringTable": ["0x20"]}]},
                {"meta": {}, "threads": [{"stringTable": ["0x20", "0x10"]}]}] }"#;
        let (out, n) = run(text, &repl).unwrap();
        let want = text
            .replacen(
                r#""x": [1e3, -0.0]}"#,
                r#""x": [1e3, -0.0],"presymbolicated":true}"#,
                1,
            )
            .replacen(
                r#"["0x10", "0x11", "0x10""#,
                r#"["f (in a)", "0x11", "f (in a)""#,
                1,
            )
            .replacen(r#"["0x20", "0x10"]"#, r#"["g \"q\" (in b)", "0x10"]"#, 1);
        assert_eq!(out, want);
        assert_eq!(n, 3);
        // Idempotent, and an existing flag is set rather than added twice.
        let (again, n) = run(&out, &repl).unwrap();
        assert_eq!((again.as_str(), n), (out.as_str(), 0));
        let (out, _) = run(r#"{"meta":{"presymbolicated":false}}"#, &repl).unwrap();
        assert_eq!(out, r#"{"meta":{"presymbolicated":true}}"#);
        let (out, _) = run(r#"{"meta":{}}"#, &repl).unwrap();
        assert_eq!(out, r#"{"meta":{"presymbolicated":true}}"#);
        // Not every address named: no flag added, an existing one copied as it was.
        for text in [r#"{"meta":{}}"#, r#"{"meta":{"presymbolicated":false}}"#] {
            let mut out = Vec::new();
            rewrite(text.as_bytes(), &mut out, &repl, false).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), text);
        }
    }

    #[test]
    fn long_whitespace_is_copied_exactly() {
        // Longer than the piece the rewriter passes on at a time.
        let text = format!(
            "{{\"a\":{}1,\n{}\"b\":2}}",
            " ".repeat(200_000),
            "\t".repeat(70_000)
        );
        let (out, _) = run(&text, &Replacements::new()).unwrap();
        assert_eq!(out, text);
    }

    #[test]
    fn bad_input_is_an_error() {
        let repl = Replacements::new();
        for text in [
            r#"{"meta": {"a": 1}, "threads": [{"stringTable": ["0x1""#,
            "{",
            r#"{"a" 1}"#,
            "[1,]x",
            "{} {}",
        ] {
            assert!(run(text, &repl).is_err(), "{text}");
        }
    }
}

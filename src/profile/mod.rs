//! The profile file: opened once at start (cheap: only its first bytes are read), its
//! library list parsed later, on the first request that needs it.

pub mod libs;
pub mod rewrite;
pub mod scan;

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use scan::Input;

use libs::Lib;

#[derive(Debug)]
pub struct ProfileError {
    pub path: PathBuf,
    pub problem: String,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "profile {}: {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for ProfileError {}

#[derive(Debug, Clone)]
pub struct ProfileFile {
    pub path: PathBuf,
    pub gzipped: bool,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl ProfileFile {
    /// Checks the file can be read and whether it is gzipped (by its magic bytes).
    pub fn open(path: &Path) -> Result<ProfileFile, ProfileError> {
        let err = |problem: String| ProfileError {
            path: path.to_path_buf(),
            problem,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if !meta.is_file() {
            return Err(err("not a regular file".to_string()));
        }
        let mut f = File::open(path).map_err(|e| err(e.to_string()))?;
        let mut magic = [0u8; 2];
        let mut n = 0;
        while n < 2 {
            match f.read(&mut magic[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(err(e.to_string())),
            }
        }
        if n == 0 {
            return Err(err("the file is empty".to_string()));
        }
        Ok(ProfileFile {
            path: path.to_path_buf(),
            gzipped: n == 2 && magic == GZIP_MAGIC,
        })
    }

    fn error(&self, problem: impl Into<String>) -> ProfileError {
        ProfileError {
            path: self.path.clone(),
            problem: problem.into(),
        }
    }

    /// A reader of the decompressed JSON text.
    pub fn reader(&self) -> Result<Box<dyn Read>, ProfileError> {
        let f = File::open(&self.path).map_err(|e| self.error(e.to_string()))?;
        let f = io::BufReader::with_capacity(1 << 16, f);
        Ok(if self.gzipped {
            Box::new(io::BufReader::with_capacity(
                1 << 16,
                flate2::read::MultiGzDecoder::new(f),
            ))
        } else {
            Box::new(f)
        })
    }

    /// Every `libs` entry of the profile: the root's, each `processes[]` entry's
    /// (recursively) and, for older processed profiles, each thread's. A byte-level scan:
    /// samples and markers are passed over, not parsed.
    /// The root's `libs` only: the scan stops there (near the start of the file).
    pub fn read_root_libs(&self) -> Result<Vec<Lib>, ProfileError> {
        let mut inp = Input::new(self.reader()?);
        let mut raw = Vec::new();
        scan_object(&mut inp, &mut raw, 0, true)
            .map_err(|e| self.error(format!("not a valid profile: {e}")))?;
        Ok(raw.iter().filter_map(Lib::from_json).collect())
    }

    pub fn read_libs(&self) -> Result<Vec<Lib>, ProfileError> {
        let mut inp = Input::new(self.reader()?);
        let mut raw = Vec::new();
        scan_object(&mut inp, &mut raw, 0, false)
            .map_err(|e| self.error(format!("not a valid profile: {e}")))?;
        inp.whitespace(|_| {}).map_err(|e| self.error(e))?;
        if inp.peek().map_err(|e| self.error(e))?.is_some() {
            return Err(self.error(format!(
                "not a valid profile: {}",
                inp.unexpected("the end")
            )));
        }
        Ok(raw.iter().filter_map(Lib::from_json).collect())
    }
}

const MAX_NESTING: usize = 64;

/// A profile-like object (the root, a subprocess, a thread): its `libs` are collected,
/// its `processes` and `threads` entered, everything else skipped.
/// With `root_only`, stops right after the root's `libs`.
fn scan_object<R: Read>(
    inp: &mut Input<R>,
    out: &mut Vec<Value>,
    depth: usize,
    root_only: bool,
) -> Result<(), String> {
    if depth > MAX_NESTING {
        return Err("processes nested too deeply".into());
    }
    inp.whitespace(|_| {})?;
    match inp.peek()? {
        Some(b'{') => {
            inp.next_byte()?;
        }
        Some(b'"') if depth > 0 => {
            // A subprocess kept as a JSON string (old profiles).
            let mut bytes = Vec::new();
            inp.value_bytes(|b| bytes.extend_from_slice(b))?;
            if let Ok(text) = serde_json::from_slice::<String>(&bytes) {
                let mut inner = Input::new(text.as_bytes());
                // A string that is no profile has nothing to give.
                let _ = scan_object(&mut inner, out, depth + 1, false);
            }
            return Ok(());
        }
        Some(_) if depth > 0 => return inp.skip_value(),
        _ => return Err(inp.unexpected("an object")),
    }
    let mut first = true;
    loop {
        inp.whitespace(|_| {})?;
        match inp.next_byte()? {
            b'}' => return Ok(()),
            b',' if !first => {
                inp.whitespace(|_| {})?;
                if inp.next_byte()? != b'"' {
                    return Err(inp.unexpected("a key"));
                }
            }
            b'"' if first => {}
            _ => return Err(inp.unexpected("a key or '}'")),
        }
        first = false;
        let key = inp.read_string()?;
        inp.whitespace(|_| {})?;
        if inp.next_byte()? != b':' {
            return Err(inp.unexpected("':'"));
        }
        match key.as_slice() {
            b"libs" => {
                let mut bytes = Vec::new();
                inp.value_bytes(|b| bytes.extend_from_slice(b))?;
                let mut de = serde_json::Deserializer::from_slice(&bytes);
                LibsSeed { out: &mut *out }
                    .deserialize(&mut de)
                    .map_err(|e| format!("libs: {e}"))?;
                if root_only {
                    return Ok(());
                }
            }
            b"processes" | b"threads" if root_only => inp.skip_value()?,
            b"processes" | b"threads" => scan_array(inp, out, depth + 1)?,
            _ => inp.skip_value()?,
        }
    }
}

fn scan_array<R: Read>(
    inp: &mut Input<R>,
    out: &mut Vec<Value>,
    depth: usize,
) -> Result<(), String> {
    inp.whitespace(|_| {})?;
    if inp.peek()? != Some(b'[') {
        return inp.skip_value();
    }
    inp.next_byte()?;
    let mut first = true;
    loop {
        inp.whitespace(|_| {})?;
        match inp.peek()? {
            Some(b']') => {
                inp.next_byte()?;
                return Ok(());
            }
            Some(b',') if !first => {
                inp.next_byte()?;
            }
            None => return Err(inp.early_end()),
            _ if first => {}
            _ => return Err(inp.unexpected("',' or ']'")),
        }
        first = false;
        scan_object(inp, out, depth, false)?;
    }
}

/// A `libs` value: an array of lib objects, or (old Gecko profiles) a JSON string holding
/// that array.
struct LibsSeed<'a> {
    out: &'a mut Vec<Value>,
}

impl<'de> DeserializeSeed<'de> for LibsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for LibsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a libs array or a JSON string of one")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            self.out.push(v);
        }
        Ok(())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<(), E> {
        let v: Value =
            serde_json::from_str(s).map_err(|e| E::custom(format!("libs string: {e}")))?;
        match v {
            Value::Array(items) => {
                self.out.extend(items);
                Ok(())
            }
            _ => Err(E::custom("libs string does not hold an array")),
        }
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libs_of(json: &str) -> Vec<String> {
        let mut raw = Vec::new();
        scan_object(&mut Input::new(json.as_bytes()), &mut raw, 0, false).unwrap();
        raw.iter()
            .filter_map(Lib::from_json)
            .map(|l| l.debug_name)
            .collect()
    }

    #[test]
    fn nested_and_stringified_libs() {
        let lib = |n: &str| format!(r#"{{"debugName":"{n}","breakpadId":"AB0"}}"#);
        let json = format!(
            r#"{{"meta":{{"x":[1,2]}},"libs":[{}],"threads":[{{"libs":[{}],"samples":[1]}},"str"],
               "processes":[{{"libs":{},"processes":[{{"libs":[{}]}}]}}, "{{}}"]}}"#,
            lib("a"),
            lib("t"),
            serde_json::to_string(&format!("[{}]", lib("s"))).unwrap(),
            lib("deep")
        );
        assert_eq!(libs_of(&json), ["a", "t", "s", "deep"]);
    }
}

/// One process of a Gecko profile (the root is `path == []`, `processes[2]` is `[2]`):
/// its libs and every `0x…` location string of its threads' string tables.
#[derive(Debug, Default)]
pub struct ProcessInfo {
    pub path: Vec<usize>,
    pub libs: Vec<Lib>,
    pub addresses: std::collections::BTreeSet<u64>,
}

/// A `0x…` location string's address.
pub fn hex_address(s: &str) -> Option<u64> {
    let hex = s.strip_prefix("0x")?;
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

impl ProfileFile {
    /// Every process with its libs and addresses (first pass of `symbolicate`).
    pub fn read_processes(&self) -> Result<Vec<ProcessInfo>, ProfileError> {
        let reader = self.reader()?;
        let mut out = Vec::new();
        let mut de = serde_json::Deserializer::from_reader(reader);
        ProcessSeed {
            path: Vec::new(),
            out: &mut out,
        }
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| self.error(format!("not a valid profile: {e}")))?;
        if out.is_empty() {
            return Err(self.error("not a Gecko profile (the top level is not an object)"));
        }
        Ok(out)
    }
}

struct ProcessSeed<'a> {
    path: Vec<usize>,
    out: &'a mut Vec<ProcessInfo>,
}

impl<'de> DeserializeSeed<'de> for ProcessSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ProcessSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a profile object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let index = self.out.len();
        self.out.push(ProcessInfo {
            path: self.path.clone(),
            ..Default::default()
        });
        let mut raw_libs = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "libs" => map.next_value_seed(LibsSeed { out: &mut raw_libs })?,
                "threads" => map.next_value_seed(ThreadsSeed {
                    out: &mut self.out[index].addresses,
                })?,
                "processes" => map.next_value_seed(SubprocessesSeed {
                    path: self.path.clone(),
                    out: &mut *self.out,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        self.out[index].libs = raw_libs.iter().filter_map(Lib::from_json).collect();
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(()) // a subprocess kept as a string (very old profiles): left as it is
    }
}

struct SubprocessesSeed<'a> {
    path: Vec<usize>,
    out: &'a mut Vec<ProcessInfo>,
}

impl<'de> DeserializeSeed<'de> for SubprocessesSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for SubprocessesSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of processes")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            let mut path = self.path.clone();
            path.push(i);
            let seed = ProcessSeed {
                path,
                out: &mut *self.out,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
}

/// `threads`: each thread's `stringTable` strings that are addresses.
struct ThreadsSeed<'a> {
    out: &'a mut std::collections::BTreeSet<u64>,
}

impl<'de> DeserializeSeed<'de> for ThreadsSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ThreadsSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of threads")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(ThreadSeed {
                out: &mut *self.out,
            })?
            .is_some()
        {}
        Ok(())
    }
}

struct ThreadSeed<'a> {
    out: &'a mut std::collections::BTreeSet<u64>,
}

impl<'de> DeserializeSeed<'de> for ThreadSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ThreadSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a thread object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "stringTable" {
                let strings: Vec<IgnoredOrString> = map.next_value()?;
                self.out.extend(
                    strings
                        .iter()
                        .filter_map(|s| s.0.as_deref().and_then(hex_address)),
                );
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

/// A string table element: kept when it is a string.
struct IgnoredOrString(Option<String>);

impl<'de> serde::Deserialize<'de> for IgnoredOrString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IgnoredOrString;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<IgnoredOrString, E> {
                Ok(IgnoredOrString(s.starts_with("0x").then(|| s.to_string())))
            }
            fn visit_unit<E: de::Error>(self) -> Result<IgnoredOrString, E> {
                Ok(IgnoredOrString(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<IgnoredOrString, E> {
                Ok(IgnoredOrString(None))
            }
        }
        d.deserialize_any(V)
    }
}

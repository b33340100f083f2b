//! The one profile reader: a byte-level walk over a Gecko or processed profile that
//! collects each process's `libs` (and, for `symbolicate`, the `0x…` strings of its
//! threads' string tables). Samples and markers are passed over, not parsed.

use std::io::Read;

use serde_json::Value;

use super::scan::{Input, JsonError, MAX_VALUE};
use crate::shared::library::Lib;

/// Processes nest (`processes[]` inside processes); deeper than this is no real profile.
const MAX_NESTING: usize = 64;

/// Lib entries kept from one profile, all processes together: a Firefox run with many
/// processes has some thousands; each costs a few hundred bytes in memory.
pub const MAX_LIBS: usize = 200_000;

/// What a profile's `libs` may still take: bytes of JSON text (all `libs` values
/// together, [`MAX_VALUE`]) and entries ([`MAX_LIBS`]). A bomb ends in an error naming
/// the limit instead of taking the memory.
struct Budget {
    bytes: usize,
    libs: usize,
}

/// One process of a profile (the root is `path == []`, `processes[2]` is `[2]`):
/// its libs and, when asked for, every `0x…` location string of its threads.
#[derive(Debug, Default)]
pub struct ProcessInfo {
    pub path: Vec<usize>,
    pub libs: Vec<Lib>,
    pub addresses: std::collections::BTreeSet<u64>,
    /// The object has a `meta` object (every Gecko and processed profile has one).
    pub has_meta: bool,
    /// A processed profile (`meta.preprocessedProfileVersion`, or a thread whose
    /// `frameTable` has an `address` column): its frames are in tables, not strings.
    pub processed: bool,
    /// For each of `libs`, its index in the object's own `libs` array (entries without a
    /// debug name or ID are dropped, so the two differ); `usize::MAX` for a thread's libs.
    pub lib_positions: Vec<usize>,
    /// A processed profile's native frames: (index in the `libs` array, module offset),
    /// from `frameTable.address` → `func` → `funcTable.resource` → `resourceTable.lib`.
    pub lib_frames: std::collections::BTreeSet<(usize, u64)>,
}

impl ProcessInfo {
    /// The lib at index `i` of the object's own `libs` array, if it has a name and ID.
    pub fn lib_at(&self, i: usize) -> Option<&Lib> {
        let k = self.lib_positions.iter().position(|&p| p == i)?;
        self.libs.get(k)
    }
}

/// What to read.
#[derive(Clone, Copy, PartialEq)]
pub enum Want {
    /// The root's `libs` only: the walk stops there (near the start of the file).
    RootLibs,
    /// Every process's libs.
    Libs,
    /// Every process's libs and its threads' address strings.
    LibsAndAddresses,
}

/// A `0x…` location string's address.
pub fn hex_address(s: &[u8]) -> Option<u64> {
    let hex = s.strip_prefix(b"0x")?;
    if hex.is_empty() || hex.len() > 16 {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

/// Walks a whole profile. With [`Want::RootLibs`] the rest of the file is not read;
/// otherwise the text must end after the root object.
pub fn read<R: Read>(inp: &mut Input<R>, want: Want) -> Result<Vec<ProcessInfo>, JsonError> {
    let mut out = Vec::new();
    let mut budget = Budget {
        bytes: MAX_VALUE,
        libs: MAX_LIBS,
    };
    let stopped = process(inp, &mut out, Vec::new(), want, &mut budget)?;
    if stopped {
        return Ok(out);
    }
    inp.whitespace(|_| {})?;
    if inp.peek()?.is_some() {
        return Err(inp.unexpected("the end"));
    }
    if out.is_empty() {
        return Err("not a Gecko profile (the top level is not an object)".into());
    }
    Ok(out)
}

/// A JSON text held in a string (a profile's `libs` or a subprocess kept as a string),
/// read as the profile file is: through a `Box<dyn Read>`, so that the readers below
/// exist once in the binary, not once more for `&[u8]` (27 KB).
fn as_reader(text: &str) -> Box<dyn Read + '_> {
    Box::new(text.as_bytes())
}

/// Reads `"key":` after a `{` or `,`; `None` at the closing `}`.
fn next_key<R: Read>(inp: &mut Input<R>, first: bool) -> Result<Option<Vec<u8>>, JsonError> {
    inp.whitespace(|_| {})?;
    match inp.next_byte()? {
        b'}' => return Ok(None),
        b',' if !first => {
            inp.whitespace(|_| {})?;
            if inp.next_byte()? != b'"' {
                return Err(inp.unexpected("a key"));
            }
        }
        b'"' if first => {}
        _ => return Err(inp.unexpected("a key or '}'")),
    }
    let key = inp.read_string()?;
    inp.whitespace(|_| {})?;
    if inp.next_byte()? != b':' {
        return Err(inp.unexpected("':'"));
    }
    Ok(Some(key))
}

/// Calls `each` for every element of an array (a value that is no array is skipped).
fn array<R: Read>(
    inp: &mut Input<R>,
    mut each: impl FnMut(&mut Input<R>, usize) -> Result<(), JsonError>,
) -> Result<(), JsonError> {
    inp.whitespace(|_| {})?;
    if inp.peek()? != Some(b'[') {
        return inp.skip_value();
    }
    inp.next_byte()?;
    let mut i = 0;
    loop {
        inp.whitespace(|_| {})?;
        match inp.peek()? {
            Some(b']') => {
                inp.next_byte()?;
                return Ok(());
            }
            Some(b',') if i > 0 => {
                inp.next_byte()?;
            }
            None => return Err(inp.early_end()),
            _ if i == 0 => {}
            _ => return Err(inp.unexpected("',' or ']'")),
        }
        each(inp, i)?;
        i += 1;
    }
}

/// A `libs` value: an array of lib objects, or (old Gecko profiles) a JSON string holding
/// that array. Read one entry at a time, never as a whole tree (a `Value` per entry of a
/// 64 MiB array would take ten times that).
fn libs<R: Read>(
    inp: &mut Input<R>,
    out: &mut Vec<Lib>,
    positions: &mut Vec<usize>,
    own: bool,
    budget: &mut Budget,
) -> Result<(), JsonError> {
    inp.whitespace(|_| {})?;
    match inp.peek()? {
        Some(b'[') => lib_entries(inp, out, positions, own, budget),
        Some(b'"') => {
            // Its entries are counted as they are read, not the string itself.
            let raw = inp.bounded_value(budget.bytes, "the libs string")?;
            let text: String =
                serde_json::from_slice(&raw).map_err(|e| format!("libs string: {e}"))?;
            drop(raw);
            let mut inner = Input::new(as_reader(&text));
            inner.whitespace(|_| {})?;
            if inner.peek()? != Some(b'[') {
                return Err("libs string: not an array".into());
            }
            lib_entries(&mut inner, out, positions, own, budget)
        }
        // An object has no entries to give (passed over, not buffered).
        Some(b'{') => inp.skip_value(),
        _ => match serde_json::from_slice(&inp.bounded_value(1 << 10, "libs")?) {
            Ok(Value::Null) => Ok(()),
            Ok(_) => Err("libs is not an array".into()),
            Err(e) => Err(format!("libs: {e}").into()),
        },
    }
}

/// The entries of a `libs` array, within the budget.
fn lib_entries<R: Read>(
    inp: &mut Input<R>,
    out: &mut Vec<Lib>,
    positions: &mut Vec<usize>,
    own: bool,
    budget: &mut Budget,
) -> Result<(), JsonError> {
    array(inp, |inp, i| {
        let bytes = inp.bounded_value(budget.bytes, "the profile's libs (all processes)")?;
        budget.bytes -= bytes.len();
        let v: Value = serde_json::from_slice(&bytes).map_err(|e| format!("libs: {e}"))?;
        if let Some(lib) = Lib::from_json(&v) {
            if budget.libs == 0 {
                return Err(format!(
                    "more than {MAX_LIBS} libs (all processes); no real profile has that many"
                )
                .into());
            }
            budget.libs -= 1;
            out.push(lib);
            positions.push(if own { i } else { usize::MAX });
        }
        Ok(())
    })
}

/// A profile-like object (the root or a subprocess). Returns true when the walk stopped
/// early ([`Want::RootLibs`]).
fn process<R: Read>(
    inp: &mut Input<R>,
    out: &mut Vec<ProcessInfo>,
    path: Vec<usize>,
    want: Want,
    budget: &mut Budget,
) -> Result<bool, JsonError> {
    if path.len() > MAX_NESTING {
        return Err("processes nested too deeply".into());
    }
    inp.whitespace(|_| {})?;
    match inp.peek()? {
        Some(b'{') => {
            inp.next_byte()?;
        }
        Some(b'"') if !path.is_empty() => {
            // A subprocess kept as a JSON string (old profiles).
            let bytes = inp.bounded_value(MAX_VALUE, "a subprocess string")?;
            if let Ok(text) = serde_json::from_slice::<String>(&bytes) {
                drop(bytes);
                // A string that is no profile has nothing to give.
                let _ = process(&mut Input::new(as_reader(&text)), out, path, want, budget);
            }
            return Ok(false);
        }
        Some(_) if !path.is_empty() => return inp.skip_value().map(|()| false),
        _ => return Err(inp.unexpected("an object")),
    }
    let index = out.len();
    out.push(ProcessInfo {
        path: path.clone(),
        ..Default::default()
    });
    let mut first = true;
    // Whether the root looks like a profile at all (`meta`, `libs`, `threads`).
    let (mut meta, mut libs_or_threads) = (false, false);
    while let Some(key) = next_key(inp, first)? {
        first = false;
        meta |= key == b"meta";
        libs_or_threads |= key == b"libs" || key == b"threads";
        match key.as_slice() {
            b"libs" => {
                let p = &mut out[index];
                libs(inp, &mut p.libs, &mut p.lib_positions, true, budget)?;
                if want == Want::RootLibs {
                    return Ok(true);
                }
            }
            b"meta" => {
                out[index].has_meta = inp.peek_object()?;
                if want == Want::LibsAndAddresses {
                    out[index].processed |= meta_is_processed(inp)?;
                } else {
                    inp.skip_value()?;
                }
            }
            b"processes" if want != Want::RootLibs => array(inp, |inp, i| {
                let mut sub = path.clone();
                sub.push(i);
                process(inp, out, sub, want, budget).map(|_| ())
            })?,
            // Processed profiles since version 60 keep one frame, func and resource table
            // for all threads here; read like a thread's.
            b"shared" if want == Want::LibsAndAddresses => {
                thread(inp, &mut out[index], want, budget)?
            }
            b"threads" if want != Want::RootLibs => {
                let p = &mut out[index];
                array(inp, |inp, _| thread(inp, p, want, budget))?
            }
            _ => inp.skip_value()?,
        }
    }
    if path.is_empty() && !meta && !libs_or_threads {
        return Err("the top level has neither `meta` nor `libs`/`threads`".into());
    }
    Ok(false)
}

/// A thread: its `libs` (older processed profiles keep them there) and, when wanted, the
/// address strings of its `stringTable`.
fn thread<R: Read>(
    inp: &mut Input<R>,
    p: &mut ProcessInfo,
    want: Want,
    budget: &mut Budget,
) -> Result<(), JsonError> {
    inp.whitespace(|_| {})?;
    if inp.peek()? != Some(b'{') {
        return inp.skip_value();
    }
    inp.next_byte()?;
    let mut first = true;
    let mut tables = Tables::default();
    let addresses = want == Want::LibsAndAddresses;
    while let Some(key) = next_key(inp, first)? {
        first = false;
        match key.as_slice() {
            b"libs" => libs(inp, &mut p.libs, &mut p.lib_positions, false, budget)?,
            b"frameTable" if addresses => {
                let [address, func] = columns(inp, [b"address", b"func"])?;
                if address.is_some() {
                    p.processed = true;
                }
                tables.address = address.unwrap_or_default();
                tables.func = func.unwrap_or_default();
            }
            b"funcTable" if addresses => {
                let [resource] = columns(inp, [b"resource"])?;
                tables.resource = resource.unwrap_or_default();
            }
            b"resourceTable" if addresses => {
                let [lib] = columns(inp, [b"lib"])?;
                tables.lib = lib.unwrap_or_default();
            }
            b"stringTable" if want == Want::LibsAndAddresses => array(inp, |inp, _| {
                inp.whitespace(|_| {})?;
                if inp.peek()? == Some(b'"') {
                    inp.next_byte()?;
                    let s = inp.read_string()?;
                    p.addresses.extend(hex_address(&s));
                    Ok(())
                } else {
                    inp.skip_value()
                }
            })?,
            _ => inp.skip_value()?,
        }
    }
    tables.frames_into(&mut p.lib_frames);
    Ok(())
}

/// A processed thread's columns that lead from a frame to its lib (-1: none).
#[derive(Default)]
struct Tables {
    address: Vec<i64>,
    func: Vec<i64>,
    resource: Vec<i64>,
    lib: Vec<i64>,
}

impl Tables {
    /// (lib index, module offset) of every frame with an address inside a lib. Indexes out
    /// of range (a broken table) lead nowhere rather than fail.
    fn frames_into(&self, out: &mut std::collections::BTreeSet<(usize, u64)>) {
        let at = |v: &[i64], i: i64| usize::try_from(i).ok().and_then(|i| v.get(i).copied());
        for (i, &address) in self.address.iter().enumerate() {
            let Ok(offset) = u64::try_from(address) else {
                continue;
            };
            let lib = self
                .func
                .get(i)
                .and_then(|&f| at(&self.resource, f))
                .and_then(|r| at(&self.lib, r))
                .and_then(|l| usize::try_from(l).ok());
            if let Some(lib) = lib {
                out.insert((lib, offset));
            }
        }
    }
}

/// Whether a `meta` object says the profile is processed (`preprocessedProfileVersion`).
fn meta_is_processed<R: Read>(inp: &mut Input<R>) -> Result<bool, JsonError> {
    if !inp.peek_object()? {
        return inp.skip_value().map(|()| false);
    }
    inp.next_byte()?;
    let mut found = false;
    let mut first = true;
    while let Some(key) = next_key(inp, first)? {
        first = false;
        found |= key == b"preprocessedProfileVersion";
        inp.skip_value()?;
    }
    Ok(found)
}

/// The named columns of a table object (`{"address": [..], "length": n, ..}`), each an
/// array of integers (null and anything else: -1); `None` for a column not there.
fn columns<R: Read, const N: usize>(
    inp: &mut Input<R>,
    names: [&[u8]; N],
) -> Result<[Option<Vec<i64>>; N], JsonError> {
    let mut out: [Option<Vec<i64>>; N] = std::array::from_fn(|_| None);
    if !inp.peek_object()? {
        inp.skip_value()?;
        return Ok(out);
    }
    inp.next_byte()?;
    let mut first = true;
    while let Some(key) = next_key(inp, first)? {
        first = false;
        let Some(k) = names.iter().position(|n| *n == key.as_slice()) else {
            inp.skip_value()?;
            continue;
        };
        let mut column = Vec::new();
        array(inp, |inp, _| {
            inp.whitespace(|_| {})?;
            let raw = inp.bounded_value(64, "a table entry")?;
            let n = std::str::from_utf8(&raw)
                .ok()
                .and_then(|t| t.parse::<i64>().ok());
            column.push(n.unwrap_or(-1));
            Ok(())
        })?;
        out[k] = Some(column);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn libs_of(json: &str) -> Vec<String> {
        read(&mut Input::new(json.as_bytes()), Want::Libs)
            .unwrap()
            .iter()
            .flat_map(|p| p.libs.iter().map(|l| l.debug_name.clone()))
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

    #[test]
    fn values_over_the_limit_are_errors_before_they_are_read_whole() {
        // A libs string, a key and a subprocess string, each just over the limit: the
        // reader stops there (the rest of the input is never read).
        let over = (MAX_VALUE + 1) as u64;
        for (head, want) in [
            (r#"{"libs":""#, "libs string"),
            (r#"{""#, "a string"),
            (r#"{"processes":[""#, "subprocess string"),
        ] {
            let body = std::io::Read::take(std::io::repeat(b'a'), over);
            let text = std::io::Read::chain(head.as_bytes(), body);
            let e = read(&mut Input::new(text), Want::Libs).unwrap_err();
            assert!(matches!(e, JsonError::TooBig { max: MAX_VALUE, .. }), "{e}");
            let e = e.to_string();
            assert!(e.contains(want) && e.contains("64 MiB"), "{e}");
        }
        // libs as an object or null give nothing, as before.
        assert!(libs_of(r#"{"libs":{"a":[1,2]},"threads":[{"libs":null}]}"#).is_empty());
    }

    #[test]
    fn addresses_per_process() {
        let json = r#"{"threads":[{"stringTable":["0x10","main",null,"0x1g","0x20"]}],
            "processes":[{"threads":[{"stringTable":["0xff"]}]}]}"#;
        let ps = read(&mut Input::new(json.as_bytes()), Want::LibsAndAddresses).unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(
            ps[0].addresses.iter().copied().collect::<Vec<_>>(),
            [0x10, 0x20]
        );
        assert_eq!(ps[1].path, [0]);
        assert_eq!(ps[1].addresses.iter().copied().collect::<Vec<_>>(), [0xff]);
        assert!(read(&mut Input::new(&b"{} x"[..]), Want::Libs).is_err());
        assert!(read(&mut Input::new(&b"[1]"[..]), Want::Libs).is_err());
    }
}

//! samply's presymbolication sidecar (`<profile>.syms.json`): written by `symbolicate
//! --sidecar`, read by `load` to answer for modules whose files are not on this machine.
//!
//! `{"string_table": [...], "data": [{"debug_name", "debug_id", "code_id", "symbol_table":
//! [{"rva", "size"?, "symbol", "frames"?: [{"function"?, "file"?, "line"?}]}],
//! "known_addresses": [[rva, index]...]}]}`; frames innermost first, strings are indices
//! into `string_table`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use super::types::{InlineFrame, LoadError, LoadErrorKind, Symbolized, Text};
use crate::jsonwrite::string;
use crate::shared::debugid::DebugId;

/// One module's entries: each symbol-table entry is a function with the frames of the
/// addresses that share them.
pub struct SidecarModule {
    entries: Vec<Entry>,
    /// address -> index into `entries`, sorted by address.
    known: Vec<(u64, usize)>,
}

struct Entry {
    rva: u64,
    size: Option<u64>,
    symbol: Text,
    /// Innermost first; the last is the outer function.
    frames: Vec<InlineFrame>,
}

fn bad(path: &Path, what: &str) -> LoadError {
    LoadError::new(
        LoadErrorKind::SidecarError,
        path,
        format!("not a valid .syms.json: {what}"),
    )
}

/// The most bytes a sidecar may have, as for one value of a profile (`profile::scan`):
/// nothing real comes near it. It is read as a stream into its entries (no tree of
/// JSON values, which takes some 20 times the text).
pub const MAX_BYTES: u64 = 64 << 20;
/// The most entries (strings, symbol-table entries, frames, known addresses, all modules
/// together): a few times what a real profile's sidecar holds.
pub const MAX_ENTRIES: usize = 4_000_000;
/// The longest string (a function name or path; the longest C++ names are some KB).
pub const MAX_STRING: usize = 1 << 20;

/// Every module of a sidecar file, by (debug name, upper-case debug ID). Each string of
/// the string table is held once, however many entries name it.
pub fn load(path: &Path) -> Result<HashMap<(String, DebugId), SidecarModule>, LoadError> {
    let capped = |what: String| {
        LoadError::new(
            LoadErrorKind::SidecarError,
            path,
            format!("{what}, the cap for a sidecar; not read"),
        )
    };
    let text = crate::fs::read_regular(path, MAX_BYTES).map_err(|e| {
        if e.to_string().contains("over the limit") {
            capped(format!("larger than {} MiB", MAX_BYTES >> 20))
        } else {
            LoadError::new(LoadErrorKind::ReadError, path, e)
        }
    })?;
    let mut de = serde_json::Deserializer::from_slice(&text);
    let left = std::cell::Cell::new(MAX_ENTRIES);
    let over = std::cell::Cell::new(None);
    let raw = serde::de::DeserializeSeed::deserialize(
        read::Top {
            left: &left,
            over: &over,
        },
        &mut de,
    )
    .and_then(|raw| de.end().map(|()| raw));
    let raw = match (raw, over.take()) {
        (_, Some(what)) => return Err(capped(what)),
        (Err(e), None) => return Err(bad(path, &e.to_string())),
        (Ok(raw), None) => raw,
    };
    let (Some(strings), Some(data)) = (raw.strings, raw.modules) else {
        return Err(bad(path, "no string_table or no data"));
    };
    let string = |i: Option<u64>| strings.get(usize::try_from(i?).ok()?).cloned();
    let mut out = HashMap::new();
    for m in data {
        let (Some(name), Some(id)) = (m.name, m.id) else {
            return Err(bad(path, "a module without debug_name/debug_id"));
        };
        let mut entries = Vec::with_capacity(m.entries.len());
        for e in m.entries {
            entries.push(Entry {
                rva: e.rva.ok_or_else(|| bad(path, "an entry without rva"))?,
                size: e.size,
                symbol: string(e.symbol).ok_or_else(|| bad(path, "an entry without symbol"))?,
                frames: e
                    .frames
                    .into_iter()
                    .map(|f| InlineFrame {
                        function: string(f.function),
                        file: string(f.file),
                        line: f.line.map(|l| l as u32),
                    })
                    .collect(),
            });
        }
        let mut known: Vec<(u64, usize)> = m
            .known
            .into_iter()
            .filter_map(|(a, i)| {
                let i = usize::try_from(i?).ok()?;
                (i < entries.len()).then_some((a?, i))
            })
            .collect();
        known.sort_unstable();
        out.insert((name, DebugId::new(&id)), SidecarModule { entries, known });
    }
    Ok(out)
}

/// The sidecar's JSON read as a stream, leniently as before (a value of another type
/// than expected counts as absent), within the caps.
mod read {
    use std::cell::Cell;
    use std::fmt;

    use serde::de::{
        DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, SeqAccess, Visitor,
    };

    use super::{MAX_ENTRIES, MAX_STRING, Text};

    pub struct Raw {
        pub strings: Option<Vec<Text>>,
        pub modules: Option<Vec<Module>>,
    }

    #[derive(Default)]
    pub struct Module {
        pub name: Option<String>,
        pub id: Option<String>,
        pub entries: Vec<Entry>,
        pub known: Vec<(Option<u64>, Option<u64>)>,
    }

    #[derive(Default)]
    pub struct Entry {
        pub rva: Option<u64>,
        pub size: Option<u64>,
        pub symbol: Option<u64>,
        pub frames: Vec<Frame>,
    }

    #[derive(Default)]
    pub struct Frame {
        pub function: Option<u64>,
        pub file: Option<u64>,
        pub line: Option<u64>,
    }

    /// What every part shares: entries left, and which cap was passed.
    #[derive(Clone, Copy)]
    pub struct Top<'a> {
        pub left: &'a Cell<usize>,
        pub over: &'a Cell<Option<String>>,
    }

    impl Top<'_> {
        fn take<E: Error>(&self) -> Result<(), E> {
            match self.left.get().checked_sub(1) {
                Some(n) => {
                    self.left.set(n);
                    Ok(())
                }
                None => Err(self.stop(format!("more than {MAX_ENTRIES} entries"))),
            }
        }

        fn stop<E: Error>(&self, what: String) -> E {
            self.over.set(Some(what.clone()));
            E::custom(what)
        }
    }

    /// The kinds of value read: each visitor answers for one.
    #[derive(Clone, Copy)]
    enum Kind {
        Top,
        Strings,
        Str,
        Modules,
        Module,
        Entries,
        Entry,
        Frames,
        Frame,
        Known,
        Pair,
        Num,
    }

    enum Out {
        Top(Raw),
        Strings(Vec<Text>),
        Str(Option<Text>),
        Modules(Vec<Module>),
        Module(Module),
        Entries(Vec<Entry>),
        Entry(Entry),
        Frames(Vec<Frame>),
        Frame(Frame),
        Known(Vec<(Option<u64>, Option<u64>)>),
        Pair((Option<u64>, Option<u64>)),
        Num(Option<u64>),
        /// A value of another type than expected.
        Other,
    }

    struct Seed<'a>(Top<'a>, Kind);

    impl<'de> DeserializeSeed<'de> for Top<'_> {
        type Value = Raw;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Raw, D::Error> {
            match Seed(self, Kind::Top).deserialize(d)? {
                Out::Top(raw) => Ok(raw),
                _ => Err(D::Error::custom("not a JSON object")),
            }
        }
    }

    impl<'de> DeserializeSeed<'de> for Seed<'_> {
        type Value = Out;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Out, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl Seed<'_> {
        fn next<'de, A: MapAccess<'de>>(&self, map: &mut A, kind: Kind) -> Result<Out, A::Error> {
            map.next_value_seed(Seed(self.0, kind))
        }
    }

    /// The items of an array, each counted against the entries left.
    fn collect<'de, A: SeqAccess<'de>, T>(
        seq: &mut A,
        top: Top<'_>,
        item: Kind,
        each: fn(Out) -> T,
    ) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::new();
        while let Some(o) = seq.next_element_seed(Seed(top, item))? {
            top.take()?;
            out.push(each(o));
        }
        Ok(out)
    }

    fn num(o: Out) -> Option<u64> {
        match o {
            Out::Num(n) => n,
            _ => None,
        }
    }

    fn text(o: Out) -> Option<String> {
        match o {
            Out::Str(s) => s.map(|s| s.to_string()),
            _ => None,
        }
    }

    impl<'de> Visitor<'de> for Seed<'_> {
        type Value = Out;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a .syms.json value")
        }

        fn visit_u64<E: Error>(self, v: u64) -> Result<Out, E> {
            Ok(match self.1 {
                Kind::Num => Out::Num(Some(v)),
                _ => Out::Other,
            })
        }
        fn visit_i64<E: Error>(self, _: i64) -> Result<Out, E> {
            Ok(Out::Other)
        }
        fn visit_f64<E: Error>(self, _: f64) -> Result<Out, E> {
            Ok(Out::Other)
        }
        fn visit_bool<E: Error>(self, _: bool) -> Result<Out, E> {
            Ok(Out::Other)
        }
        fn visit_unit<E: Error>(self) -> Result<Out, E> {
            Ok(Out::Other)
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<Out, E> {
            Ok(match self.1 {
                Kind::Str if v.len() > MAX_STRING => {
                    return Err(self.0.stop(format!(
                        "a string of {} bytes, over the cap of {} MiB for one",
                        v.len(),
                        MAX_STRING >> 20
                    )));
                }
                Kind::Str => Out::Str(Some(Text::from(v))),
                _ => Out::Other,
            })
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Out, A::Error> {
            let item = match self.1 {
                Kind::Strings => Kind::Str,
                Kind::Modules => Kind::Module,
                Kind::Entries => Kind::Entry,
                Kind::Frames => Kind::Frame,
                Kind::Known => Kind::Pair,
                Kind::Pair => {
                    let a = seq
                        .next_element_seed(Seed(self.0, Kind::Num))?
                        .and_then(num);
                    let b = seq
                        .next_element_seed(Seed(self.0, Kind::Num))?
                        .and_then(num);
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(Out::Pair((a, b)));
                }
                _ => {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(Out::Other);
                }
            };
            let top = self.0;
            Ok(match self.1 {
                Kind::Strings => Out::Strings(collect(&mut seq, top, item, |o| match o {
                    Out::Str(Some(s)) => s,
                    _ => Text::from(""),
                })?),
                Kind::Modules => Out::Modules(collect(&mut seq, top, item, |o| match o {
                    Out::Module(m) => m,
                    _ => Module::default(),
                })?),
                Kind::Entries => Out::Entries(collect(&mut seq, top, item, |o| match o {
                    Out::Entry(e) => e,
                    _ => Entry::default(),
                })?),
                Kind::Frames => Out::Frames(collect(&mut seq, top, item, |o| match o {
                    Out::Frame(f) => f,
                    _ => Frame::default(),
                })?),
                _ => Out::Known(collect(&mut seq, top, item, |o| match o {
                    Out::Pair(p) => p,
                    _ => (None, None),
                })?),
            })
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Out, A::Error> {
            let (mut raw, mut module, mut entry, mut frame) = (
                Raw {
                    strings: None,
                    modules: None,
                },
                Module::default(),
                Entry::default(),
                Frame::default(),
            );
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match (self.1, &*key) {
                    (Kind::Top, "string_table") => {
                        if let Out::Strings(s) = self.next(&mut map, Kind::Strings)? {
                            raw.strings = Some(s);
                        }
                    }
                    (Kind::Top, "data") => {
                        if let Out::Modules(m) = self.next(&mut map, Kind::Modules)? {
                            raw.modules = Some(m);
                        }
                    }
                    (Kind::Module, "debug_name") => {
                        module.name = text(self.next(&mut map, Kind::Str)?)
                    }
                    (Kind::Module, "debug_id") => module.id = text(self.next(&mut map, Kind::Str)?),
                    (Kind::Module, "symbol_table") => {
                        if let Out::Entries(e) = self.next(&mut map, Kind::Entries)? {
                            module.entries = e;
                        }
                    }
                    (Kind::Module, "known_addresses") => {
                        if let Out::Known(k) = self.next(&mut map, Kind::Known)? {
                            module.known = k;
                        }
                    }
                    (Kind::Entry, "rva") => entry.rva = num(self.next(&mut map, Kind::Num)?),
                    (Kind::Entry, "size") => entry.size = num(self.next(&mut map, Kind::Num)?),
                    (Kind::Entry, "symbol") => entry.symbol = num(self.next(&mut map, Kind::Num)?),
                    (Kind::Entry, "frames") => {
                        if let Out::Frames(f) = self.next(&mut map, Kind::Frames)? {
                            entry.frames = f;
                        }
                    }
                    (Kind::Frame, "function") => {
                        frame.function = num(self.next(&mut map, Kind::Num)?)
                    }
                    (Kind::Frame, "file") => frame.file = num(self.next(&mut map, Kind::Num)?),
                    (Kind::Frame, "line") => frame.line = num(self.next(&mut map, Kind::Num)?),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(match self.1 {
                Kind::Top => Out::Top(raw),
                Kind::Module => Out::Module(module),
                Kind::Entry => Out::Entry(entry),
                Kind::Frame => Out::Frame(frame),
                _ => Out::Other,
            })
        }
    }
}

impl SidecarModule {
    pub fn cost(&self) -> u64 {
        (self.entries.len() * 96 + self.known.len() * 16) as u64
    }

    pub fn lookup(&self, offset: u64) -> Option<Symbolized> {
        let i = self.known.binary_search_by_key(&offset, |k| k.0).ok()?;
        let e = &self.entries[self.known[i].1];
        let (outer, inlines) = match e.frames.split_last() {
            Some((outer, inner)) => (Some(outer), inner.to_vec()),
            None => (None, Vec::new()),
        };
        Some(Symbolized {
            function: e.symbol.clone(),
            function_offset: offset.checked_sub(e.rva)?,
            function_size: e.size,
            file: outer.and_then(|o| o.file.clone()),
            line: outer.and_then(|o| o.line),
            inlines,
        })
    }
}

/// What one module contributes to a sidecar.
pub struct ModuleSymbols<'a> {
    pub debug_name: &'a str,
    pub debug_id: String,
    pub code_id: Option<&'a str>,
    /// (module offset, what it resolved to), offsets ascending.
    pub addresses: Vec<(u64, &'a Symbolized)>,
}

/// Writes the sidecar for `modules`, streaming: entries are written as they are made (the
/// string table, which they index, comes last).
pub fn write(modules: &[ModuleSymbols<'_>], out: impl Write) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut strings: Vec<Text> = Vec::new();
    let mut index: HashMap<Text, usize> = HashMap::new();
    let mut intern = |s: &Text| -> usize {
        *index.entry(s.clone()).or_insert_with(|| {
            strings.push(s.clone());
            strings.len() - 1
        })
    };
    out.write_all(b"{\"data\":[")?;
    for (k, m) in modules.iter().enumerate() {
        if k > 0 {
            out.write_all(b",")?;
        }
        let mut head = Vec::new();
        head.extend_from_slice(b"{\"debug_name\":");
        string(&mut head, m.debug_name);
        head.extend_from_slice(b",\"debug_id\":");
        string(&mut head, &m.debug_id);
        head.extend_from_slice(b",\"code_id\":");
        match m.code_id {
            Some(c) => string(&mut head, c),
            None => head.extend_from_slice(b"null"),
        }
        head.extend_from_slice(b",\"symbol_table\":[");
        out.write_all(&head)?;
        // Addresses that share a function and frames share one entry.
        let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut known: Vec<(u64, usize)> = Vec::with_capacity(m.addresses.len());
        for (offset, s) in &m.addresses {
            let mut e = Vec::with_capacity(128);
            let _ = write!(e, "{{\"rva\":{}", offset - s.function_offset);
            if let Some(size) = s.function_size {
                let _ = write!(e, ",\"size\":{size}");
            }
            let _ = write!(e, ",\"symbol\":{}", intern(&s.function));
            if s.file.is_some() || s.line.is_some() || !s.inlines.is_empty() {
                e.extend_from_slice(b",\"frames\":[");
                let outer = InlineFrame {
                    function: Some(s.function.clone()),
                    file: s.file.clone(),
                    line: s.line,
                };
                for (i, f) in s.inlines.iter().chain([&outer]).enumerate() {
                    if i > 0 {
                        e.push(b',');
                    }
                    e.push(b'{');
                    let mut sep = "";
                    if let Some(n) = &f.function {
                        let _ = write!(e, "\"function\":{}", intern(n));
                        sep = ",";
                    }
                    if let Some(file) = &f.file {
                        let _ = write!(e, "{sep}\"file\":{}", intern(file));
                        sep = ",";
                    }
                    if let Some(l) = f.line {
                        let _ = write!(e, "{sep}\"line\":{l}");
                    }
                    e.push(b'}');
                }
                e.push(b']');
            }
            e.push(b'}');
            let next = seen.len();
            let i = match seen.get(&e) {
                Some(&i) => i,
                None => {
                    if next > 0 {
                        out.write_all(b",")?;
                    }
                    out.write_all(&e)?;
                    seen.insert(e, next);
                    next
                }
            };
            known.push((*offset, i));
        }
        out.write_all(b"],\"known_addresses\":[")?;
        for (i, (offset, entry)) in known.iter().enumerate() {
            write!(out, "{}[{offset},{entry}]", if i > 0 { "," } else { "" })?;
        }
        out.write_all(b"]}")?;
    }
    out.write_all(b"],\"string_table\":[")?;
    let mut buf = Vec::new();
    for (i, s) in strings.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        string(&mut buf, s);
        if buf.len() > 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.write_all(b"]}")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let s = Symbolized {
            function: "outer".into(),
            function_offset: 4,
            function_size: Some(0x20),
            file: Some("a.c".into()),
            line: Some(7),
            inlines: vec![InlineFrame {
                function: Some("inner".into()),
                file: Some("b.h".into()),
                line: Some(3),
            }],
        };
        let bare = Symbolized {
            function: "asm".into(),
            function_offset: 0,
            function_size: None,
            file: None,
            line: None,
            inlines: vec![],
        };
        let mut buf = Vec::new();
        write(
            &[ModuleSymbols {
                debug_name: "m",
                debug_id: "ab0".to_string(),
                code_id: None,
                addresses: vec![(0x104, &s), (0x200, &bare)],
            }],
            &mut buf,
        )
        .unwrap();
        let dir = std::env::temp_dir().join(format!("sidecar-test-{}", std::process::id()));
        std::fs::write(&dir, &buf).unwrap();
        let modules = load(&dir).unwrap();
        std::fs::remove_file(&dir).unwrap();
        let m = &modules[&("m".to_string(), "AB0".into())];
        assert_eq!(m.lookup(0x104), Some(s));
        assert_eq!(m.lookup(0x200), Some(bare));
        assert_eq!(m.lookup(0x105), None);
    }
}

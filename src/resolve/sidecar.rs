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

use serde_json::Value;

use super::{InlineFrame, LoadError, LoadErrorKind, Symbolized, Text};
use crate::debugid::DebugId;
use crate::jsonwrite::string;

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

/// Every module of a sidecar file, by (debug name, upper-case debug ID).
pub fn load(path: &Path) -> Result<HashMap<(String, DebugId), SidecarModule>, LoadError> {
    let text = crate::fs::read_regular(path, super::bytes::MAX_OWNED_FILE)
        .map_err(|e| LoadError::new(LoadErrorKind::ReadError, path, e))?;
    let v: Value = serde_json::from_slice(&text).map_err(|e| bad(path, &e.to_string()))?;
    let strings: Vec<&str> = v["string_table"]
        .as_array()
        .ok_or_else(|| bad(path, "no string_table"))?
        .iter()
        .map(|s| s.as_str().unwrap_or(""))
        .collect();
    let string = |v: &Value| {
        v.as_u64()
            .and_then(|i| strings.get(i as usize))
            .map(|s| s.to_string())
    };
    let mut out = HashMap::new();
    for m in v["data"].as_array().ok_or_else(|| bad(path, "no data"))? {
        let (Some(name), Some(id)) = (m["debug_name"].as_str(), m["debug_id"].as_str()) else {
            return Err(bad(path, "a module without debug_name/debug_id"));
        };
        let mut entries = Vec::new();
        for e in m["symbol_table"].as_array().into_iter().flatten() {
            let frames = e["frames"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| InlineFrame {
                    function: string(&f["function"]).map(Text::from),
                    file: string(&f["file"]).map(Text::from),
                    line: f["line"].as_u64().map(|l| l as u32),
                })
                .collect();
            entries.push(Entry {
                rva: e["rva"]
                    .as_u64()
                    .ok_or_else(|| bad(path, "an entry without rva"))?,
                size: e["size"].as_u64(),
                symbol: string(&e["symbol"])
                    .ok_or_else(|| bad(path, "an entry without symbol"))?
                    .into(),
                frames,
            });
        }
        let mut known: Vec<(u64, usize)> = m["known_addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| {
                let i = p[1].as_u64()? as usize;
                (i < entries.len()).then_some((p[0].as_u64()?, i))
            })
            .collect();
        known.sort_unstable();
        out.insert(
            (name.to_string(), DebugId::new(id)),
            SidecarModule { entries, known },
        );
    }
    Ok(out)
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
    pub debug_id: &'a str,
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
        string(&mut head, m.debug_id);
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
                debug_id: "ab0",
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

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

use serde_json::{Map, Value, json};

use super::{InlineFrame, LoadError, Symbolized, Text};

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
        "SidecarError",
        path,
        format!("not a valid .syms.json: {what}"),
    )
}

/// Every module of a sidecar file, by (debug name, upper-case debug ID).
pub fn load(path: &Path) -> Result<HashMap<(String, String), SidecarModule>, LoadError> {
    let text = std::fs::read(path).map_err(|e| LoadError::new("ReadError", path, e))?;
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
            (name.to_string(), id.to_ascii_uppercase()),
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

/// Writes the sidecar for `modules`.
pub fn write(modules: &[ModuleSymbols<'_>], out: impl Write) -> std::io::Result<()> {
    let mut strings: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut intern = |s: &str| -> usize {
        if let Some(&i) = index.get(s) {
            return i;
        }
        strings.push(s.to_string());
        index.insert(s.to_string(), strings.len() - 1);
        strings.len() - 1
    };
    let mut data = Vec::new();
    for m in modules {
        let mut table: Vec<Value> = Vec::new();
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut known = Vec::new();
        for (offset, s) in &m.addresses {
            let rva = offset - s.function_offset;
            let mut entry = Map::new();
            entry.insert("rva".into(), rva.into());
            if let Some(size) = s.function_size {
                entry.insert("size".into(), size.into());
            }
            entry.insert("symbol".into(), intern(&s.function).into());
            let outer = InlineFrame {
                function: Some(s.function.clone()),
                file: s.file.clone(),
                line: s.line,
            };
            let all: Vec<&InlineFrame> = s.inlines.iter().chain([&outer]).collect();
            if s.file.is_some() || s.line.is_some() || !s.inlines.is_empty() {
                let frames: Vec<Value> = all
                    .iter()
                    .map(|f| {
                        let mut o = Map::new();
                        if let Some(n) = &f.function {
                            o.insert("function".into(), intern(n).into());
                        }
                        if let Some(file) = &f.file {
                            o.insert("file".into(), intern(file).into());
                        }
                        if let Some(l) = f.line {
                            o.insert("line".into(), l.into());
                        }
                        Value::Object(o)
                    })
                    .collect();
                entry.insert("frames".into(), frames.into());
            }
            let entry = Value::Object(entry);
            let key = entry.to_string();
            let i = *seen.entry(key).or_insert_with(|| {
                table.push(entry);
                table.len() - 1
            });
            known.push(json!([offset, i]));
        }
        data.push(json!({
            "debug_name": m.debug_name,
            "debug_id": m.debug_id,
            "code_id": m.code_id,
            "symbol_table": table,
            "known_addresses": known,
        }));
    }
    let doc = json!({ "string_table": strings, "data": data });
    let mut out = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut out, &doc)?;
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
        let m = &modules[&("m".to_string(), "AB0".to_string())];
        assert_eq!(m.lookup(0x104), Some(s));
        assert_eq!(m.lookup(0x200), Some(bare));
        assert_eq!(m.lookup(0x105), None);
    }
}

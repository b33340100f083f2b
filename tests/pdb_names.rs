//! PDB answers against Mozilla dump_syms and llvm-symbolizer:
//! - names: for every PDB of the corpus and of `fixtures/pdb-names` beside the `.sym`
//!   dump_syms --inlines wrote for it, the address of each FUNC record is answered with
//!   the FUNC's name (arguments from the type stream: `ns::f(int, char const*)`), and the
//!   first address of each INLINE record has, at the record's depth, the INLINE_ORIGIN's
//!   name; `fold.pdb` has code lld-link /opt:icf folded (three S_GPROC32 at one address,
//!   the first with an inline site, two at another): the first record answers, as
//!   dump_syms chooses (scripts/compare-pdb measures it on MSVC's PDBs); `anon.pdb`
//!   has functions of anonymous namespaces, which dump_syms spells `(anonymous namespace)`
//!   where MSVC and its demangler write `` `anonymous namespace' ``;
//! - empty inline ranges: clang writes zero-length ranges into inlinee annotations
//!   (`code 0xBE, code end 0xBE`); at every offset of the iostream program's functions
//!   (`fixtures/pdb-names/io.pdb`) the inline chain is llvm-symbolizer's, frame by frame
//!   (names reduced, lines equal);
//! - scattered pages: `fixtures/pdb-names/scattered/` holds io.pdb and sig.pdb rewritten
//!   with 512-byte pages in scattered order (scripts/make-scattered-pdb), so the type and
//!   id streams are read through their page lists and records cross pages, as in a big
//!   PDB, whose type stream is never contiguous: their names are dump_syms' too, and every
//!   offset of their code is answered exactly as from the original files.
//!
//! Expected values come from the tools (scripts/make-pdb-name-fixtures,
//! scripts/make-fixtures), never from our own output.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

/// Answers `offsets` of module `pdb` (found in `dir`) through the query mode.
fn frames(dir: &Path, pdb: &str, id: &str, offsets: &[u64]) -> Vec<Value> {
    if offsets.is_empty() {
        return Vec::new();
    }
    let request = json!({
        "memoryMap": [[pdb, id]],
        "stacks": [offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()],
    });
    let dir = dir.display().to_string();
    let v = query_stdin(&["--symbol-dir", &dir, "/symbolicate/v5"], &[], &request);
    let key = format!("{pdb}/{id}");
    assert_eq!(v["results"][0]["found_modules"][&key], json!(true), "{v}");
    v["results"][0]["stacks"][0].as_array().unwrap().clone()
}

struct Sym {
    id: String,
    /// (rva, name) of each FUNC record.
    funcs: Vec<(u64, String)>,
    /// (first rva, depth, origin name) of each INLINE record.
    inlines: Vec<(u64, usize, String)>,
}

fn parse_sym(path: &Path) -> Sym {
    let text = std::fs::read_to_string(path).unwrap();
    let mut id = String::new();
    let mut origins = HashMap::new();
    let mut funcs = Vec::new();
    let mut raw_inlines = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(2, ' ').collect();
        let rest = f.get(1).copied().unwrap_or("");
        match f[0] {
            "MODULE" => id = rest.split(' ').nth(2).unwrap().to_string(),
            "INLINE_ORIGIN" => {
                let (n, name) = rest.split_once(' ').unwrap();
                origins.insert(n.to_string(), name.to_string());
            }
            "FUNC" => {
                let rest = rest.strip_prefix("m ").unwrap_or(rest);
                let p: Vec<&str> = rest.splitn(4, ' ').collect();
                funcs.push((parse_hex(p[0]), p[3].to_string()));
            }
            "INLINE" => {
                // INLINE depth call_line call_file origin rva size [rva size]...
                let p: Vec<&str> = rest.split(' ').collect();
                raw_inlines.push((parse_hex(p[4]), p[0].parse().unwrap(), p[3].to_string()));
            }
            _ => {}
        }
    }
    let inlines = raw_inlines
        .into_iter()
        .map(|(rva, depth, o)| (rva, depth, origins[&o].clone()))
        .collect();
    Sym { id, funcs, inlines }
}

/// The PDBs with their dump_syms output: (folder of the PDB, PDB name, .sym).
fn pdbs_with_sym(corpus: &Path) -> Vec<(PathBuf, String, PathBuf)> {
    let mut out = Vec::new();
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pdb-names");
    for name in ["sig.pdb", "fold.pdb", "anon.pdb", "io.pdb"] {
        let sym = own.join(name.replace(".pdb", ".sym"));
        out.push((own.clone(), name.to_string(), sym));
    }
    for name in ["sig.pdb", "io.pdb"] {
        let sym = own.join(name.replace(".pdb", ".sym"));
        out.push((own.join("scattered"), name.to_string(), sym));
    }
    let Ok(dirs) = std::fs::read_dir(corpus.join("breakpad")) else {
        return out;
    };
    for d in dirs.flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        let pdb = corpus.join("pe").join(&name);
        if !name.ends_with(".pdb") || !pdb.is_file() {
            continue;
        }
        for id in std::fs::read_dir(d.path()).unwrap().flatten() {
            for sym in std::fs::read_dir(id.path()).unwrap().flatten() {
                out.push((corpus.join("pe"), name.clone(), sym.path()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn names_as_dump_syms_writes_them() {
    let mut differ = Vec::new();
    let (mut funcs, mut inlines) = (0, 0);
    for (dir, pdb, sym) in pdbs_with_sym(&corpus()) {
        let s = parse_sym(&sym);
        let offsets: Vec<u64> = s.funcs.iter().map(|f| f.0).collect();
        for ((rva, want), got) in s.funcs.iter().zip(frames(&dir, &pdb, &s.id, &offsets)) {
            funcs += 1;
            if got["function"] != json!(want) {
                differ.push(format!(
                    "{pdb} FUNC {rva:#x}: {} for {want}",
                    got["function"]
                ));
            }
        }
        let offsets: Vec<u64> = s.inlines.iter().map(|i| i.0).collect();
        for ((rva, depth, want), got) in s.inlines.iter().zip(frames(&dir, &pdb, &s.id, &offsets)) {
            inlines += 1;
            let chain = got["inlines"].as_array().cloned().unwrap_or_default();
            let frame = chain.len().checked_sub(depth + 1).map(|i| &chain[i]);
            if frame.map(|f| &f["function"]) != Some(&json!(want)) {
                differ.push(format!(
                    "{pdb} INLINE depth {depth} at {rva:#x}: {} for {want}",
                    frame.map_or(Value::Null, |f| f["function"].clone())
                ));
            }
        }
    }
    eprintln!(
        "{} of {funcs} FUNC and {inlines} INLINE names differ from dump_syms'",
        differ.len()
    );
    assert!(funcs > 0 && inlines > 0);
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

#[test]
fn pdb_names_as_dump_syms_writes_them() {
    names_as_dump_syms_writes_them();
}

#[test]
fn pdb_names_as_dump_syms_writes_them_shared_corpus() {
    with_shared_corpus(names_as_dump_syms_writes_them);
}

#[test]
fn empty_inline_ranges_cover_nothing() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pdb-names");
    let s = parse_sym(&dir.join("io.sym"));
    let want: Value =
        serde_json::from_slice(&std::fs::read(dir.join("io.llvm-symbolizer.json")).unwrap())
            .unwrap();
    // Runs of offsets with one chain: every offset of each run is asked.
    let want: Vec<(u64, &Value)> = want
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|run| {
            let first = parse_hex(run["first"].as_str().unwrap());
            let last = parse_hex(run["last"].as_str().unwrap());
            (first..=last).map(move |o| (o, &run["frames"]))
        })
        .collect();
    let offsets: Vec<u64> = want.iter().map(|w| w.0).collect();
    let got = frames(&dir, "io.pdb", &s.id, &offsets);
    let mut differ = Vec::new();
    for ((offset, w), g) in want.iter().zip(&got) {
        // Ours: inlines innermost first, then the function; llvm-symbolizer likewise.
        let mut ours: Vec<(String, u64)> = g["inlines"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| {
                (
                    f["function"].as_str().unwrap_or("").to_string(),
                    f["line"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        ours.push((
            g["function"].as_str().unwrap_or("").to_string(),
            g["line"].as_u64().unwrap_or(0),
        ));
        let theirs: Vec<(String, u64)> = w
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f[0].as_str().unwrap().to_string(), f[1].as_u64().unwrap()))
            .collect();
        let same = ours.len() == theirs.len()
            && ours
                .iter()
                .zip(&theirs)
                .all(|(o, t)| o.1 == t.1 && name_matches(&o.0, &[t.0.as_str()]));
        if !same {
            differ.push(format!(
                "{offset:#x}: ours {ours:?}, llvm-symbolizer {theirs:?}"
            ));
        }
    }
    eprintln!(
        "{} of {} offsets differ from llvm-symbolizer",
        differ.len(),
        offsets.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// A cross-module inlinee (an id with the top bit set, resolved through the importing
/// module's imports and the exporting module's exports) is named: MSVC writes the
/// exporting module's name in lower case in the imports (`…\release\client_info.obj` for
/// the module `…\Release\client_info.obj`, `llvm-pdbutil dump -xmi`), and it was looked
/// up as written, so 1 033 of the 2 704 sampled addresses of crash.pdb with inline frames
/// had frames without a name. Every inline frame at every offset of its code has one now;
/// at 0x12ee the two are pdb-addr2line 0.12.1's names.
#[test]
fn cross_module_inlinees_are_named_shared_corpus() {
    with_shared_corpus(|| {
        let dir = corpus().join("fixtures/symbolic/windows");
        let id = parse_sym(&dir.join("crash.sym")).id;
        let offsets: Vec<u64> = (0x1000..0x3800).collect();
        let got = frames(&dir, "crash.pdb", &id, &offsets);
        let mut inline_frames = 0;
        for (f, o) in got.iter().zip(&offsets) {
            for i in f["inlines"].as_array().into_iter().flatten() {
                inline_frames += 1;
                assert!(
                    i["function"].is_string(),
                    "{o:#x}: an unnamed inline frame: {f}"
                );
            }
        }
        assert!(inline_frames > 1000, "only {inline_frames} inline frames");
        let at = &got[0x12ee - 0x1000]["inlines"];
        let names: Vec<&str> = at
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["function"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "std::_String_val<std::_Simple_types<wchar_t> >::_Large_string_engaged() const",
                "std::basic_string<wchar_t,std::char_traits<wchar_t>,std::allocator<wchar_t> >::_Tidy_deallocate()",
            ]
        );
    });
}

/// Breaks in the page list of MSF stream `stream` of `pdb` (pages not following each other
/// in the file).
fn page_breaks(pdb: &Path, stream: usize) -> usize {
    let data = std::fs::read(pdb).unwrap();
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    let (page, dir_size, dir_map) = (u32_at(32), u32_at(44), u32_at(52));
    let dir: Vec<u8> = (0..dir_size.div_ceil(page))
        .flat_map(|i| {
            let p = u32_at(dir_map * page + 4 * i);
            data[p * page..(p + 1) * page].to_vec()
        })
        .collect();
    let d32 = |at: usize| u32::from_le_bytes(dir[at..at + 4].try_into().unwrap()) as usize;
    let pages = |size: usize| {
        if size == u32::MAX as usize {
            0
        } else {
            size.div_ceil(page)
        }
    };
    let skip: usize = (0..stream).map(|i| pages(d32(4 + 4 * i))).sum();
    let at = 4 + 4 * d32(0) + 4 * skip;
    let list: Vec<usize> = (0..pages(d32(4 + 4 * stream)))
        .map(|i| d32(at + 4 * i))
        .collect();
    list.windows(2).filter(|w| w[1] != w[0] + 1).count()
}

#[test]
fn scattered_pages_answer_as_the_original_files() {
    let own = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pdb-names");
    for name in ["io.pdb", "sig.pdb"] {
        let scattered = own.join("scattered");
        // The type (2) and id (4) streams are in pieces.
        assert!(page_breaks(&scattered.join(name), 2) >= 2, "{name}");
        assert!(page_breaks(&scattered.join(name), 4) >= 2, "{name}");
        let s = parse_sym(&own.join(name.replace(".pdb", ".sym")));
        let first = s.funcs.iter().map(|f| f.0).min().unwrap();
        let last = s.funcs.iter().map(|f| f.0).max().unwrap();
        let offsets: Vec<u64> = (first..last + 0x400).collect();
        let want = frames(&own, name, &s.id, &offsets);
        let got = frames(&scattered, name, &s.id, &offsets);
        assert!(want.iter().any(|f| f["function"].is_string()), "{name}");
        assert!(
            want == got,
            "{name}: answers differ from the original file's"
        );
    }
}

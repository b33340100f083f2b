//! PE images without their PDB and Mach-O dylibs with local symbols stripped, from
//! `fixtures/nodebug/` (made by `scripts/make-nodebug-fixtures`), checked against what
//! `llvm-readobj`, `llvm-undname`, `llvm-nm` and `llvm-objdump` said about them (the
//! `*.txt` files beside them, made by the same script).

mod common;

use std::path::{Path, PathBuf};

use common::{Server, frames_of, job, parse_hex, scratch};
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/nodebug")
}

fn text(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).unwrap()
}

/// The value after `key: ` on each line that has it.
fn values<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix(key)?.strip_prefix(": "))
        .collect()
}

fn paren_hex(s: &str) -> u64 {
    parse_hex(s.trim_matches(|c| c == '(' || c == ')'))
}

/// Serves a profile whose one lib is `file`, and answers `offsets` of it.
fn ask(file: &str, debug_name: &str, id: &str, offsets: &[u64]) -> Vec<Value> {
    let dir = scratch(&format!("nodebug-fixture-{file}"));
    let profile = dir.join("profile.json");
    let lib = json!({"debugName": debug_name, "breakpadId": id, "name": file,
        "path": fixtures().join(file), "start": 0, "end": 1u64 << 40, "offset": 0});
    let doc = json!({"meta": {"version": 27}, "libs": [lib], "threads": []});
    std::fs::write(&profile, serde_json::to_vec(&doc).unwrap()).unwrap();
    let server = Server::start(&["-q", profile.to_str().unwrap()]);
    let r = server
        .post_json("/symbolicate/v5", &job(debug_name, id, offsets))
        .json();
    frames_of(&r["results"][0])
}

/// What `llvm-undname` prints, as the profiler shows names: without the return type and
/// calling convention (`double __cdecl ns::f(double)` -> `ns::f(double)`).
fn undecorated(mangled: &str) -> Option<String> {
    let undname = text("nodebug.dll.undname.txt");
    let mut lines = undname.lines();
    while let Some(l) = lines.next() {
        if l == mangled {
            let full = lines.next()?;
            return Some(full.split_once("__cdecl ")?.1.to_string());
        }
    }
    None
}

/// Every `.pdata` function of a PE without its PDB: start, middle and last byte get the
/// function `llvm-readobj --unwind` gives, named by the export there (demangled as
/// llvm-undname does) or `fun_<RVA>`, with its size; the byte after it, padding, gets none.
fn check_pe(file: &str, debug_name: &str) {
    let readobj = text(&format!("{file}.readobj.txt"));
    let base = parse_hex(values(&readobj, "ImageBase")[0]);
    let guid = values(&readobj, "PDBGUID")[0].replace(['{', '}', '-'], "");
    let age: u32 = values(&readobj, "PDBAge")[0].parse().unwrap();
    let id = format!("{guid}{age:X}");
    let starts: Vec<u64> = values(&readobj, "StartAddress")
        .iter()
        .map(|s| paren_hex(s) - base)
        .collect();
    let ends: Vec<u64> = values(&readobj, "EndAddress")
        .iter()
        .map(|s| paren_hex(s) - base)
        .collect();
    assert!(starts.len() >= 5, "{file}: .pdata lists the functions");
    let names = values(&readobj, "Name");
    let rvas = values(&readobj, "RVA");
    let exports: Vec<(u64, String)> = names
        .iter()
        .zip(&rvas)
        .map(|(n, r)| {
            let name = if n.starts_with('?') {
                undecorated(n).unwrap()
            } else {
                n.to_string()
            };
            (parse_hex(r), name)
        })
        .collect();
    // (module offset, expected name, start and size; None: no function)
    type Case = (u64, Option<(String, u64, u64)>);
    let mut cases: Vec<Case> = Vec::new();
    for (&s, &e) in starts.iter().zip(&ends) {
        let name = exports
            .iter()
            .find(|x| x.0 == s)
            .map_or_else(|| format!("fun_{s:x}"), |x| x.1.clone());
        for a in [s, s + (e - s) / 2, e - 1] {
            cases.push((a, Some((name.clone(), s, e - s))));
        }
        if !starts.contains(&e) {
            cases.push((e, None));
        }
    }
    let frames = ask(
        file,
        debug_name,
        &id,
        &cases.iter().map(|c| c.0).collect::<Vec<_>>(),
    );
    assert_eq!(frames.len(), cases.len());
    for ((a, want), f) in cases.iter().zip(&frames) {
        let got = f["function"].as_str().map(|n| {
            let off = parse_hex(f["function_offset"].as_str().unwrap());
            let size = parse_hex(f["function_size"].as_str().unwrap());
            (n.to_string(), a - off, size)
        });
        assert_eq!(&got, want, "{file} at {a:#x}: {f}");
    }
}

#[test]
fn pe_dll_without_pdb_names_from_pdata_and_exports() {
    check_pe("nodebug.dll", "nodebug.pdb");
    assert_eq!(
        undecorated("?profiler_get_profile@baseprofiler@mozilla@@YANN_N0@Z").as_deref(),
        Some("mozilla::baseprofiler::profiler_get_profile(double, bool, bool)")
    );
}

#[test]
fn pe_exe_without_pdb_names_from_pdata() {
    check_pe("nodebug.exe", "nodebug-exe.pdb");
}

/// A Mach-O dylib with local symbols stripped: each function start of
/// `llvm-objdump --function-starts` gets the exported name `llvm-nm` still shows there
/// (demangled) or `fun_<offset>`; each reaches to the next start.
fn check_macho(file: &str) {
    let starts: Vec<u64> = text(&format!("{file}.function-starts.txt"))
        .lines()
        .filter_map(|l| u64::from_str_radix(l.trim(), 16).ok())
        .collect();
    assert!(starts.len() >= 6, "{file}: function starts listed");
    let nm: Vec<(u64, String)> = text(&format!("{file}.nm.txt"))
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[1] == "T").then(|| (parse_hex(f[0]), f[2][1..].to_string()))
        })
        .collect();
    let uuid = text(&format!("{file}.uuid.txt"));
    let id = uuid.split_whitespace().nth(1).unwrap().replace('-', "") + "0";
    let offsets: Vec<u64> = starts.iter().flat_map(|&s| [s, s + 2]).collect();
    let frames = ask(file, file, &id, &offsets);
    assert_eq!(frames.len(), offsets.len());
    for (i, f) in frames.iter().enumerate() {
        let s = starts[i / 2];
        let want = match nm.iter().find(|n| n.0 == s) {
            Some((_, n)) if n.starts_with("_Z") => {
                assert_eq!(n, "_ZN7mozilla12baseprofiler20profiler_get_profileEdbb");
                "mozilla::baseprofiler::profiler_get_profile(double, bool, bool)".to_string()
            }
            Some((_, n)) => n.clone(),
            None => format!("fun_{s:x}"),
        };
        assert_eq!(f["function"], json!(want), "{file}: {f}");
        let off = parse_hex(f["function_offset"].as_str().unwrap());
        assert_eq!(offsets[i] - off, s, "{file}: {f}");
        if let Some(&next) = starts.get(i / 2 + 1) {
            assert_eq!(f["function_size"], json!(format!("{:#x}", next - s)));
        }
    }
}

#[test]
fn macho_with_local_symbols_stripped() {
    check_macho("nodebug-arm64.dylib");
    check_macho("nodebug-x86_64.dylib");
}

/// The corpus's PE images alone, without their PDB: leaf functions, which `.pdata` does
/// not list, are found by decoding the code. Starts compared with the PDB's procedures
/// (the truth, from llvm-pdbutil).
#[test]
fn pe_leaf_functions_without_pdb_get_their_true_start() {
    let files = common::truth_files("pe");
    assert!(!files.is_empty());
    let (mut inside, mut right, mut outside, mut none) = (0, 0, 0, 0);
    let mut misses = Vec::new();
    for file in files {
        let t = common::Truth::load(&file);
        let image = t.image();
        let name = image.file_name().unwrap().to_str().unwrap().to_string();
        let dir = scratch(&format!("pe-alone-{name}"));
        let copy = dir.join(&name);
        std::fs::copy(&image, &copy).unwrap();
        let debug_name = t.header["module"]["pdb_path_in_image"]
            .as_str()
            .unwrap()
            .rsplit('\\')
            .next()
            .unwrap()
            .to_string();
        let id = t.breakpad_id();
        let lib = json!({"debugName": debug_name, "breakpadId": id, "name": name,
            "path": copy, "debugPath": copy, "start": 0, "end": 1u64 << 40, "offset": 0});
        let doc = json!({"meta": {"version": 27}, "libs": [lib], "threads": []});
        let profile = dir.join("profile.json");
        std::fs::write(&profile, serde_json::to_vec(&doc).unwrap()).unwrap();
        let server = Server::start(&["-q", profile.to_str().unwrap()]);
        let offsets = t.offsets();
        let r = server
            .post_json("/symbolicate/v5", &job(&debug_name, &id, &offsets))
            .json();
        let frames = frames_of(&r["results"][0]);
        for ((a, f), off) in t.addresses.iter().zip(&frames).zip(&offsets) {
            let e = &a["expect"];
            let got = f["function_offset"].as_str().map(|o| off - parse_hex(o));
            if e["found"].as_bool() == Some(true) {
                inside += 1;
                let want = parse_hex(e["function_start"].as_str().unwrap());
                if got == Some(want) {
                    right += 1;
                } else {
                    misses.push(format!("{name} {off:#x}: want {want:#x}, got {got:x?}"));
                }
            } else {
                outside += 1;
                none += usize::from(got.is_none());
            }
        }
    }
    eprintln!("inside {right}/{inside} right start, outside {none}/{outside} none");
    assert!(right * 100 >= inside * 99, "{misses:#?}");
    assert!(none * 100 >= outside * 95);
}

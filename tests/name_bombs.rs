//! Symbol names that multiply: small files whose symbols all name one long string (N
//! symbols x L bytes once copied per symbol: 3.9 GB for a 2.4 MB ELF) or each a different
//! suffix of it (distinct names past the module's cap). Crafted at test time by
//! `scripts/make-name-bombs` into a scratch folder; the server answers each (names, or a
//! module error naming the cap) at under 512 MiB peak RSS and stays up.
#![cfg(target_os = "linux")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{Value, json};

/// The peak the server may reach on any of these files.
const MAX_PEAK_KB: u64 = 512 << 10;

struct Bomb {
    dir: PathBuf,
    /// The profile naming the module (a `.syms.json` sidecar sits beside it for `sidecar`).
    profile: PathBuf,
    debug_name: String,
    debug_id: String,
    offsets: Vec<u64>,
}

/// `scripts/make-name-bombs KIND OUT ARGS`: what it prints (the module and offsets).
fn make_name_bomb(kind: &str, out: &Path, args: &[&str]) -> Value {
    let made = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/make-name-bombs"
        ))
        .arg(kind)
        .arg(out)
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .expect("python3");
    assert!(made.status.success(), "make-name-bombs {kind} {args:?}");
    serde_json::from_slice(&made.stdout).unwrap()
}

/// `scripts/make-name-bombs KIND` with `args`, and a profile whose one lib is that file.
fn make(test: &str, kind: &str, file_name: &str, args: &[&str]) -> Bomb {
    let dir = scratch(test);
    let out = if kind == "sidecar" {
        dir.join("profile.syms.json")
    } else {
        dir.join(file_name)
    };
    let info = make_name_bomb(kind, &out, args);
    let debug_name = info["debug_name"].as_str().unwrap().to_string();
    let debug_id = info["debug_id"].as_str().unwrap().to_string();
    let path = dir.join(file_name);
    let lib = json!({"name": file_name, "debugName": debug_name, "breakpadId": debug_id,
                     "path": path, "debugPath": path, "arch": "x86_64",
                     "start": 0x1000_0000u64, "end": 0x2000_0000u64, "offset": 0});
    let profile = dir.join("profile.json");
    let doc = json!({
        "meta": {"version": 27, "interval": 1, "startTime": 0, "processType": 0,
                 "product": "Firefox", "stackwalk": 1},
        "libs": [lib], "threads": [], "processes": [], "pausedRanges": [],
    });
    std::fs::write(&profile, serde_json::to_vec(&doc).unwrap()).unwrap();
    Bomb {
        dir,
        profile,
        debug_name,
        debug_id,
        offsets: info["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_u64().unwrap())
            .collect(),
    }
}

/// The server's peak resident size over its whole life, in KiB.
fn peak_kb(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Asks for the bomb's offsets; the answer's frames and module errors, and the peak.
/// Asks `b`'s offsets; every frame must be named the one 20 000-byte name, within the
/// memory bound.
fn every_frame_is_the_long_name(b: &Bomb) {
    let (frames, errors, peak) = ask(b);
    let want = long_name(20_000);
    for f in &frames {
        assert!(
            f["function"].as_str() == Some(&*want),
            "{} {errors}",
            f["frame"]
        );
    }
    assert!(peak < MAX_PEAK_KB, "peak RSS {} MiB", peak >> 10);
}

fn ask(b: &Bomb) -> (Vec<Value>, String, u64) {
    let server = Server::start_in(
        Path::new(&b.dir),
        &[
            b.profile.to_str().unwrap(),
            "--symbol-dir",
            b.dir.to_str().unwrap(),
        ],
    );
    let request = json!({
        "memoryMap": [[b.debug_name, b.debug_id]],
        "stacks": [b.offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()],
    });
    let r = server.post_json("/symbolicate/v5", &request);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let a = r.json();
    server.assert_alive();
    let peak = peak_kb(&server);
    eprintln!("{}: peak RSS {} MiB", b.dir.display(), peak >> 10);
    let frames = a["results"][0]["stacks"][0].as_array().unwrap().clone();
    let errors = a["results"][0]["module_errors"].to_string();
    (frames, errors, peak)
}

/// The name every symbol of a bomb of `len` bytes has (`make-name-bombs`).
fn long_name(len: usize) -> String {
    "A".repeat(len - 1) + "B"
}

/// A name bomb: 100 000 symbols naming one 20 000-byte name (3.9 GB and 18 s if each
/// symbol's name were made anew).
#[test]
fn one_name_for_every_symbol_costs_it_once_elf() {
    let b = make("names-elf", "elf", "bomb.so", &[]);
    every_frame_is_the_long_name(&b);
}

/// Distinct names (each symbol a suffix of a 24 000-byte string: 288 MB of names from a
/// 2.8 MB file): past the cap, a module error naming it.
#[test]
fn names_past_the_cap_are_a_module_error_elf() {
    let b = make(
        "names-elf-distinct",
        "elf",
        "bomb.so",
        &["--suffixes", "--name-len", "24000"],
    );
    let (frames, errors, peak) = ask(&b);
    assert!(frames.iter().all(|f| f.get("function").is_none()));
    assert!(errors.contains("NameLimit"), "{errors}");
    assert!(errors.contains("over 128 MiB"), "{errors}");
    assert!(peak < MAX_PEAK_KB, "peak RSS {} MiB", peak >> 10);
}

#[test]
fn one_name_for_every_symbol_costs_it_once_macho() {
    let b = make("names-macho", "macho", "bomb.dylib", &[]);
    every_frame_is_the_long_name(&b);
}

/// A DLL (no PDB) with 100 000 exported names that are one string.
#[test]
fn one_name_for_every_export_costs_it_once_pe() {
    let b = make("names-pe", "pe", "bomb.dll", &[]);
    every_frame_is_the_long_name(&b);
}

/// The fixture dyld cache whose `.symbols` file gives libfoo 100 000 more local symbols
/// naming one 20 000-byte name (1.6 MB; 2.0 GB and 22 s before). The image's functions
/// are named as LLVM's tools name them (fixtures/dyld/expected.json).
#[test]
fn dyld_local_symbols_naming_one_name_cost_it_once() {
    let dir = scratch("names-dyld");
    let info = make_name_bomb("dyld", &dir, &[]);
    let server = Server::start(&["--dyld-shared-cache", info["cache"].as_str().unwrap()]);
    let offsets = info["offsets"].as_array().unwrap();
    let request = json!({
        "memoryMap": [[info["debug_name"], info["debug_id"]]],
        "stacks": [offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()],
    });
    let r = server.post_json("/symbolicate/v5", &request);
    assert_eq!(r.status, 200);
    let a = r.json();
    server.assert_alive();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/dyld/expected.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let image = expected["caches"]["x86_64"]["images"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["debugName"] == info["debug_name"])
        .unwrap();
    let frames = a["results"][0]["stacks"][0].as_array().unwrap();
    for (f, want) in frames.iter().zip(image["addresses"].as_array().unwrap()) {
        assert_eq!(f["function"], want["function"], "{f}");
    }
    assert_eq!(frames.len(), offsets.len());
    let peak = peak_kb(&server);
    eprintln!("dyld: peak RSS {} MiB", peak >> 10);
    assert!(peak < MAX_PEAK_KB, "peak RSS {} MiB", peak >> 10);
}

/// A Breakpad FUNC with 100 000 inlined frames at one address, each naming one 20 000-byte
/// origin and file (2.8 MB; 11.7 GB, 121 s and a 4 GB answer before): the names are read
/// once, and an address answers at most 256 inlined frames.
#[test]
fn breakpad_inlined_frames_naming_one_name_cost_it_once() {
    let dir = scratch("names-breakpad");
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let folder = dir.join("store/bomb.so").join(id);
    std::fs::create_dir_all(&folder).unwrap();
    make_name_bomb("sym", &folder.join("bomb.so.sym"), &[]);
    let store = dir.join("store");
    let server = Server::start(&["--breakpad-symbol-dir", store.to_str().unwrap()]);
    let request = json!({"memoryMap": [["bomb.so", id]], "stacks": [[[0, 0x1001]]]});
    let r = server.post_json("/symbolicate/v5", &request);
    assert_eq!(r.status, 200);
    let a = r.json();
    server.assert_alive();
    let frame = &a["results"][0]["stacks"][0][0];
    assert_eq!(frame["function"], "outer");
    let inlines = frame["inlines"].as_array().unwrap();
    assert_eq!(inlines.len(), 256);
    let want = long_name(20_000);
    assert!(
        inlines
            .iter()
            .all(|i| i["function"].as_str() == Some(&*want))
    );
    let peak = peak_kb(&server);
    eprintln!("breakpad: peak RSS {} MiB", peak >> 10);
    assert!(peak < MAX_PEAK_KB, "peak RSS {} MiB", peak >> 10);
}

/// A sidecar of 8 MB: 100 000 entries whose symbol, frame function and file are one
/// string of 20 000 bytes (6.1 GB and 23 s before, copied per use).
#[test]
fn a_sidecar_holds_each_string_once() {
    let b = make("names-sidecar", "sidecar", "bomb.so", &[]);
    every_frame_is_the_long_name(&b);
}

/// The sidecar's caps: a string over 1 MiB is an error of the sidecar, not memory.
#[test]
fn a_sidecar_past_its_caps_is_an_error() {
    let b = make(
        "names-sidecar-long",
        "sidecar",
        "bomb.so",
        &["--symbols", "1", "--name-len", "2000000"],
    );
    let (frames, errors, _) = ask(&b);
    assert!(frames.iter().all(|f| f.get("function").is_none()));
    assert!(errors.contains("SidecarError"), "{errors}");
    assert!(errors.contains("over the cap of 1 MiB for one"), "{errors}");
}

/// Twenty different files in one request, each just under the cap of one module (about
/// 115 MB of distinct names from 190 KB of file; 2.3 GB held at once before): the cached
/// modules' names have a total that evicts the oldest, and an answer keeps only its texts,
/// so the server stays under 1 GiB and answers every module.
#[test]
fn twenty_name_bombs_in_one_request_stay_under_1_gib() {
    let dir = scratch("names-twenty");
    let mut libs = Vec::new();
    let mut map = Vec::new();
    let mut stack = Vec::new();
    for i in 0..20usize {
        let file = format!("bomb{i}.so");
        let n = (7000 + i).to_string();
        let info = make_name_bomb(
            "elf",
            &dir.join(&file),
            &["--suffixes", "--name-len", "20000", "--symbols", &n],
        );
        let path = dir.join(&file);
        libs.push(json!({"name": file, "debugName": info["debug_name"],
            "breakpadId": info["debug_id"], "path": path, "debugPath": path,
            "arch": "x86_64", "start": 0x1000_0000u64 * (i as u64 + 1),
            "end": 0x1000_0000u64 * (i as u64 + 2), "offset": 0}));
        map.push(json!([info["debug_name"], info["debug_id"]]));
        let offsets = info["offsets"].as_array().unwrap();
        stack.extend(offsets.iter().take(4).map(|o| json!([i, o])));
    }
    let profile = dir.join("profile.json");
    let doc = json!({"meta": {"version": 27, "interval": 1, "startTime": 0,
        "processType": 0, "product": "Firefox", "stackwalk": 1},
        "libs": libs, "threads": [], "processes": [], "pausedRanges": []});
    std::fs::write(&profile, serde_json::to_vec(&doc).unwrap()).unwrap();
    let server = Server::start_in(&dir, &[profile.to_str().unwrap()]);
    let r = server.post_json(
        "/symbolicate/v5",
        &json!({"memoryMap": map, "stacks": [stack]}),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let a = r.json();
    server.assert_alive();
    let errors = a["results"][0]["module_errors"].to_string();
    let frames = a["results"][0]["stacks"][0].as_array().unwrap();
    assert_eq!(frames.len(), 80);
    for f in frames {
        let name = f["function"].as_str().unwrap_or_default();
        assert!(
            name.len() > 10_000 && name.ends_with('B'),
            "{} {errors}",
            f["frame"]
        );
    }
    let peak = peak_kb(&server);
    eprintln!("twenty bombs: peak RSS {} MiB", peak >> 10);
    assert!(peak < 1 << 20, "peak RSS {} MiB", peak >> 10);
}

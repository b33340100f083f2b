//! Debug files found by build ID without the binary (a profile from another machine: the
//! libs' paths do not exist here), and the names a separate debug file's symbol table
//! gives where DWARF has no function (ld.so's `_start` and `_dl_start_user`). Programs
//! are compiled here; expected names and lines come from addr2line, llvm-symbolizer and
//! nm run on the same files.

mod common;

use std::path::{Path, PathBuf};

use common::{
    Server, elf_debug_id, elf_image_base, frames_of, job, parse_hex, scratch, skip, tool,
};
use serde_json::{Value, json};

const SOURCE: &str = r#"
#include <stdio.h>
__attribute__((noinline)) int triple(int x) { return x * 3 + 1; }
__attribute__((noinline)) int mix(int x) {
    int s = 0;
    for (int i = 0; i < x; i++) s += triple(i) ^ i;
    return s;
}
int main(int argc, char **argv) { (void)argv; printf("%d\n", mix(argc * 40)); return 0; }
"#;

/// The GNU build ID `readelf -n` prints, lower-case hex.
fn build_id(path: &Path) -> String {
    let notes = tool("readelf", &["-n", path.to_str().unwrap()], Path::new(".")).unwrap();
    notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build ID")
        .trim()
        .to_string()
}

/// `<root>/.build-id/xx/rest.debug` for `build_id`.
fn build_id_path(root: &Path, build_id: &str) -> PathBuf {
    root.join(".build-id")
        .join(&build_id[..2])
        .join(format!("{}.debug", &build_id[2..]))
}

/// A Gecko profile with one lib (start 0, so addresses are module offsets) and a thread
/// whose frames are at `offsets`.
fn write_profile(
    path: &Path,
    name: &str,
    lib_path: &str,
    id: &str,
    code_id: &str,
    offsets: &[u64],
) {
    let strings: Vec<String> = offsets.iter().map(|o| format!("{o:#x}")).collect();
    let frames: Vec<Value> = (0..offsets.len())
        .map(|i| json!([i, false, 0, null, null, null, 0, 0]))
        .collect();
    let thread = json!({
        "name": "GeckoMain", "processType": "default", "tid": 1, "pid": 1,
        "registerTime": 0, "unregisterTime": null, "markers": {"schema": {}, "data": []},
        "samples": {"schema": {"stack": 0, "time": 1}, "data": [[0, 0.0]]},
        "stackTable": {"schema": {"prefix": 0, "frame": 1}, "data": [[null, 0]]},
        "frameTable": {"schema": {"location": 0, "relevantForJS": 1, "innerWindowID": 2,
                       "implementation": 3, "line": 4, "column": 5, "category": 6,
                       "subcategory": 7}, "data": frames},
        "stringTable": strings,
    });
    let profile = json!({
        "meta": {"version": 27, "interval": 1, "startTime": 0, "processType": 0,
                 "product": "Firefox", "stackwalk": 1},
        "libs": [{"name": name, "debugName": name, "breakpadId": id, "codeId": code_id,
                  "path": lib_path, "debugPath": lib_path, "arch": "x86_64",
                  "start": 0, "end": 0x1000_0000u64, "offset": 0}],
        "threads": [thread], "processes": [], "pausedRanges": [],
    });
    std::fs::write(path, serde_json::to_vec(&profile).unwrap()).unwrap();
}

/// The frames `load` answers for `offsets` of the profile's lib, and its stderr.
fn answer(dir: &Path, args: &[&str], name: &str, id: &str, offsets: &[u64]) -> Vec<Value> {
    let server = Server::start_in(dir, args);
    let r = server.post_json("/symbolicate/v5", &job(name, id, offsets));
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(
        v["results"][0]["found_modules"][format!("{name}/{id}")],
        json!(true),
        "{v}\n{}",
        server.stderr()
    );
    frames_of(&v["results"][0])
}

/// addr2line's outermost function and line for each address of `file` (`-i`: the last
/// pair printed is the function the address is in).
fn addr2line(file: &Path, addrs: &[u64]) -> Vec<(String, u64)> {
    let mut args = vec!["-f", "-i", "-e", file.to_str().unwrap()];
    let hex: Vec<String> = addrs.iter().map(|a| format!("{a:#x}")).collect();
    args.extend(hex.iter().map(String::as_str));
    let out = tool("addr2line", &args, Path::new(".")).unwrap();
    let mut lines = out.lines();
    let mut per = Vec::new();
    for _ in addrs {
        // One pair per address: these functions are not inlined (checked below).
        let f = lines.next().unwrap().to_string();
        let loc = lines.next().unwrap();
        let line = loc
            .rsplit(':')
            .next()
            .and_then(|l| l.split_whitespace().next())
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        per.push((f, line));
    }
    assert!(lines.next().is_none(), "inlined frames in {out}");
    per
}

/// `nm -S` sized text symbols of `file`: (address, size, name).
fn sized_functions(file: &Path) -> Vec<(u64, u64, String)> {
    let out = tool(
        "nm",
        &["-S", "--defined-only", file.to_str().unwrap()],
        Path::new("."),
    )
    .unwrap();
    out.lines()
        .filter_map(
            |l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
                [a, s, "t" | "T", n] => Some((parse_hex(a), parse_hex(s), n.to_string())),
                _ => None,
            },
        )
        .filter(|s| s.1 > 0)
        .collect()
}

/// Each frame has addr2line's function and line for its address.
fn check_against_addr2line(frames: &[Value], debug_file: &Path, base: u64, offsets: &[u64]) {
    let addrs: Vec<u64> = offsets.iter().map(|o| o + base).collect();
    let want = addr2line(debug_file, &addrs);
    for ((f, w), o) in frames.iter().zip(&want).zip(offsets) {
        assert_eq!(f["function"].as_str(), Some(w.0.as_str()), "{o:#x}: {f}");
        if w.1 > 0 {
            assert_eq!(f["line"].as_u64(), Some(w.1), "{o:#x}: {f}");
        }
    }
}

/// A local build's profile opened elsewhere: its lib path does not exist, `--symbol-dir D`
/// holds only `D/.build-id/xx/rest.debug`; named and lined exactly as with the binary.
#[test]
fn a_symbol_dir_holding_only_a_build_id_tree_names_a_profile_from_another_machine() {
    let dir = scratch("build-ids-symbol-dir");
    std::fs::write(dir.join("t.c"), SOURCE).unwrap();
    if tool("gcc", &["-O1", "-g", "-o", "prog", "t.c"], &dir).is_none() {
        return;
    }
    let binary = dir.join("prog");
    let (hex, id, base) = (
        build_id(&binary),
        elf_debug_id(&binary),
        elf_image_base(&binary),
    );
    let syms = dir.join("D");
    let debug = build_id_path(&syms, &hex);
    std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
    tool(
        "objcopy",
        &[
            "--only-keep-debug",
            binary.to_str().unwrap(),
            debug.to_str().unwrap(),
        ],
        &dir,
    )
    .unwrap();
    let mut offsets = Vec::new();
    for (a, s, n) in sized_functions(&binary) {
        if ["triple", "mix", "main"].contains(&n.as_str()) {
            offsets.extend([a - base, a + s / 2 - base, a + s - 1 - base]);
        }
    }
    assert_eq!(offsets.len(), 9);

    let here = dir.join("here.json");
    write_profile(&here, "prog", binary.to_str().unwrap(), &id, &hex, &offsets);
    let with_binary = answer(&dir, &[here.to_str().unwrap()], "prog", &id, &offsets);

    let elsewhere = dir.join("elsewhere.json");
    write_profile(
        &elsewhere,
        "prog",
        "/home/otherdev/build/prog",
        &id,
        &hex,
        &offsets,
    );
    let profile = elsewhere.to_str().unwrap();
    let by_id = answer(
        &dir,
        &[profile, "--symbol-dir", syms.to_str().unwrap()],
        "prog",
        &id,
        &offsets,
    );
    assert_eq!(by_id, with_binary);
    check_against_addr2line(&by_id, &debug, base, &offsets);

    // The debuginfod client's cache, without a server: `symbolicate` names every frame.
    let cache = dir.join("debuginfod-cache");
    std::fs::create_dir_all(cache.join(&hex)).unwrap();
    std::fs::copy(&debug, cache.join(&hex).join("debuginfo")).unwrap();
    let out = dir.join("out.json");
    let run = std::process::Command::new(common::BIN)
        .args(["symbolicate", profile, "-o", out.to_str().unwrap()])
        .env("DEBUGINFOD_CACHE_PATH", &cache)
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("debuginfo"), "{stderr}");
    let got: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let want: Vec<String> = by_id
        .iter()
        .map(|f| format!("{} (in prog)", f["function"].as_str().unwrap()))
        .collect();
    assert_eq!(got["threads"][0]["stringTable"], json!(want));
    assert_eq!(got["meta"]["presymbolicated"], json!(true));
}

/// libc of a profile recorded elsewhere (its path does not exist here) is named from
/// `/usr/lib/debug/.build-id` (libc6-dbg) by the lib's codeId, as from the real libc.
#[test]
fn libc_is_named_from_the_system_build_id_tree_without_the_binary() {
    let Some(libc) = ["/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6"]
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
    else {
        skip("no x86_64 libc.so.6 here", false);
        return;
    };
    let libc = libc.canonicalize().unwrap();
    let hex = build_id(&libc);
    let debug = build_id_path(Path::new("/usr/lib/debug"), &hex);
    if !debug.is_file() {
        skip(
            &format!("{} is not there (libc6-dbg)", debug.display()),
            cfg!(target_arch = "x86_64") && Path::new("/etc/debian_version").is_file(),
        );
        return;
    }
    let (id, base) = (elf_debug_id(&libc), elf_image_base(&libc));
    // The middle of 40 sized functions spread over the library.
    let funcs = sized_functions(&debug);
    let step = (funcs.len() / 40).max(1);
    let offsets: Vec<u64> = funcs
        .iter()
        .step_by(step)
        .map(|(a, s, _)| a + s / 2 - base)
        .collect();
    let dir = scratch("build-ids-libc");
    let here = dir.join("here.json");
    write_profile(
        &here,
        "libc.so.6",
        libc.to_str().unwrap(),
        &id,
        &hex,
        &offsets,
    );
    let with_binary = answer(&dir, &[here.to_str().unwrap()], "libc.so.6", &id, &offsets);
    let elsewhere = dir.join("elsewhere.json");
    write_profile(
        &elsewhere,
        "libc.so.6",
        "/home/otherdev/lib/libc.so.6",
        &id,
        &hex,
        &offsets,
    );
    let by_id = answer(
        &dir,
        &[elsewhere.to_str().unwrap()],
        "libc.so.6",
        &id,
        &offsets,
    );
    assert_eq!(by_id, with_binary);
    let named = by_id
        .iter()
        .filter(|f| {
            f["function"]
                .as_str()
                .is_some_and(|n| !n.starts_with("fun_"))
        })
        .count();
    assert_eq!(named, offsets.len(), "{by_id:?}");
}

/// ld.so's entry stub, as glibc writes it: `_start` then `_dl_start_user`, untyped size-0
/// labels in assembly that no DWARF describes (assembled without -g), beside C code with
/// DWARF.
const STUB: &str = "
    .text
    .p2align 4
_start:
    movq %rsp, %rdi
    call helper_start@PLT
_dl_start_user:
    movq %rax, %r12
    nop
    nop
    jmp *%r12
";

const STUB_C: &str = r#"
__attribute__((noinline)) long helper_start(long sp) { return sp * 3 + 1; }
__attribute__((noinline)) long other(long x) { return helper_start(x) ^ x; }
"#;

/// `nm -n` text symbols of `file`: (address, name), by address.
fn nm_text(file: &Path) -> Vec<(u64, String)> {
    let out = tool(
        "nm",
        &["-n", "--defined-only", file.to_str().unwrap()],
        Path::new("."),
    )
    .unwrap();
    out.lines()
        .filter_map(
            |l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
                [a, "t" | "T", n] => Some((parse_hex(a), n.to_string())),
                _ => None,
            },
        )
        .collect()
}

/// llvm-symbolizer's function name for each address of `file`.
fn llvm_symbolizer(file: &Path, addrs: &[u64]) -> Option<Vec<String>> {
    let obj = format!("--obj={}", file.display());
    let mut args = vec![obj.as_str(), "--no-inlines"];
    let hex: Vec<String> = addrs.iter().map(|a| format!("{a:#x}")).collect();
    args.extend(hex.iter().map(String::as_str));
    let out = tool("llvm-symbolizer", &args, Path::new("."))?;
    // Two lines per address (function, location), then a blank line.
    Some(
        out.split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .map(|b| b.lines().next().unwrap().to_string())
            .collect(),
    )
}

/// Answers for `offsets` of the module `name`, found by file name in `dir`.
fn query(dir: &Path, name: &str, id: &str, offsets: &[u64]) -> Vec<Value> {
    let answer = common::query_stdin(
        &[
            "-q",
            "--symbol-dir",
            dir.to_str().unwrap(),
            "/symbolicate/v5",
        ],
        &[],
        &json!({ "jobs": [job(name, id, offsets)] }),
    );
    frames_of(&answer["results"][0])
}

/// The stub's labels in the separate debug file name their code: each from its address
/// to the next symbol of its section, as nm orders them and llvm-symbolizer names them;
/// not `fun_<offset>` from the unwind tables or the entry point.
fn check_entry_stub(debug: &Path, frames: &[Value], addrs: &[u64]) {
    let syms = nm_text(debug);
    let want = llvm_symbolizer(debug, addrs);
    for (k, (f, &a)) in frames.iter().zip(addrs).enumerate() {
        let i = syms.partition_point(|s| s.0 <= a) - 1;
        let (start, name) = &syms[i];
        assert!(
            ["_start", "_dl_start_user"].contains(&name.as_str()),
            "{a:#x}: {name}"
        );
        assert_eq!(f["function"].as_str(), Some(name.as_str()), "{a:#x}: {f}");
        if let Some(w) = &want {
            assert_eq!(&w[k], name, "llvm-symbolizer at {a:#x}");
        }
        assert_eq!(
            f["function_offset"],
            json!(format!("{:#x}", a - start)),
            "{f}"
        );
        if let Some((next, _)) = syms.get(i + 1) {
            assert_eq!(
                f["function_size"],
                json!(format!("{:#x}", next - start)),
                "{f}"
            );
        }
    }
}

/// A library built like ld.so (entry stub in assembly, C with DWARF), stripped, with its
/// separate debug file in a build-ID tree.
#[test]
fn an_entry_stub_is_named_from_the_separate_debug_files_symbol_table() {
    let dir = scratch("build-ids-stub");
    std::fs::write(dir.join("stub.S"), STUB).unwrap();
    std::fs::write(dir.join("c.c"), STUB_C).unwrap();
    let built = tool("gcc", &["-c", "-fPIC", "-o", "stub.o", "stub.S"], &dir).and_then(|_| {
        tool(
            "gcc",
            &[
                "-g",
                "-O1",
                "-fPIC",
                "-shared",
                "-nostdlib",
                "-Wl,--build-id",
                "-o",
                "libstub.so",
                "stub.o",
                "c.c",
            ],
            &dir,
        )
    });
    if built.is_none() {
        return;
    }
    let full = dir.join("libstub.so");
    let (hex, id, base) = (build_id(&full), elf_debug_id(&full), elf_image_base(&full));
    let syms = dir.join("D");
    let debug = build_id_path(&syms, &hex);
    std::fs::create_dir_all(debug.parent().unwrap()).unwrap();
    let (f, d, s) = (
        full.to_str().unwrap(),
        debug.to_str().unwrap(),
        syms.join("libstub.so"),
    );
    tool("objcopy", &["--only-keep-debug", f, d], &dir).unwrap();
    tool(
        "objcopy",
        &["--strip-unneeded", f, s.to_str().unwrap()],
        &dir,
    )
    .unwrap();
    let labels = nm_text(&debug);
    let at = |n: &str| labels.iter().find(|s| s.1 == n).unwrap().0;
    let addrs = [
        at("_start"),
        at("_start") + 3,
        at("_dl_start_user"),
        at("_dl_start_user") + 4,
    ];
    let offsets: Vec<u64> = addrs.iter().map(|a| a - base).collect();
    let frames = query(&syms, "libstub.so", &id, &offsets);
    check_entry_stub(&debug, &frames, &addrs);
}

/// The real ld.so with libc6-dbg's debug file: `_start` and `_dl_start_user` named.
#[test]
fn ld_so_entry_stub_is_named_with_its_debug_package() {
    let Some(ld) = ["/lib64/ld-linux-x86-64.so.2"]
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
    else {
        skip("no x86_64 ld.so here", false);
        return;
    };
    let ld = ld.canonicalize().unwrap();
    let debug = build_id_path(Path::new("/usr/lib/debug"), &build_id(&ld));
    if !debug.is_file() {
        skip(
            &format!("{} is not there (libc6-dbg)", debug.display()),
            Path::new("/etc/debian_version").is_file(),
        );
        return;
    }
    let (id, base) = (elf_debug_id(&ld), elf_image_base(&ld));
    let labels = nm_text(&debug);
    let at = |n: &str| labels.iter().find(|s| s.1 == n).map(|s| s.0);
    let (Some(start), Some(user)) = (at("_start"), at("_dl_start_user")) else {
        skip(
            "this ld.so's debug file has no _start/_dl_start_user",
            false,
        );
        return;
    };
    let addrs = [start, start + 3, user, user + 4];
    let offsets: Vec<u64> = addrs.iter().map(|a| a - base).collect();
    let name = ld.file_name().unwrap().to_str().unwrap();
    let frames = query(ld.parent().unwrap(), name, &id, &offsets);
    check_entry_stub(&debug, &frames, &addrs);
}

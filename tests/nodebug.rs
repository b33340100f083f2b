//! Code without debug info: ELF programs compiled here with gcc, then stripped
//! (`strip --strip-all`) or given MiniDebugInfo the way Fedora does; the answers are
//! compared with `nm`, `objdump` and `readelf` run on the same files.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{elf_debug_id, elf_image_base, frames_of, job, parse_hex, query_stdin, scratch, tool};
use serde_json::{Value, json};

const SOURCE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int f(int x) { return x * 3 + 1; }
static __attribute__((noinline)) int helper(int x) { if (x > 100) puts("big"); return f(x) ^ x; }
static __attribute__((noinline)) int helper2(int x) { if (x > 7) puts("seven"); return helper(x) + x; }
__attribute__((noinline, cold)) void rare(int x) { printf("rare %d\n", x); exit(1); }
int work(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) { s += helper2(i); if (s == -12345) rare(s); }
    return s;
}
__asm__(".text\n.globl asmfn\n.type asmfn,@function\nasmfn:\n\tnop\n\tnop\n\tret\n");
int asmfn(void);
int main(int argc, char **argv) { (void)argv; printf("%d\n", work(argc * 50)); return asmfn(); }
"#;

/// Builds the test program with `gcc_args` (`-o NAME` is added) in `dir`.
fn build(dir: &Path, name: &str, gcc_args: &[&str]) -> Option<PathBuf> {
    std::fs::write(dir.join("t.c"), SOURCE).unwrap();
    let mut args = vec!["-O2", "-o", name, "t.c"];
    args.extend_from_slice(gcc_args);
    tool("gcc", &args, dir)?;
    Some(dir.join(name))
}

/// `nm -S --defined-only` text symbols: (address, size if given, name).
fn nm(path: &Path, dynamic: bool) -> Vec<(u64, Option<u64>, String)> {
    let mut args = vec!["-S", "--defined-only"];
    if dynamic {
        args.push("-D");
    }
    args.push(path.to_str().unwrap());
    let out = tool("nm", &args, Path::new(".")).unwrap();
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [a, s, t, n] if matches!(*t, "t" | "T") => {
                    Some((parse_hex(a), Some(parse_hex(s)), n.to_string()))
                }
                [a, t, n] if matches!(*t, "t" | "T") => Some((parse_hex(a), None, n.to_string())),
                _ => None,
            }
        })
        .collect()
}

/// Answers for `offsets` of the module `path` (found in its folder by file name).
fn ask(path: &Path, offsets: &[u64]) -> Vec<Value> {
    let name = path.file_name().unwrap().to_str().unwrap();
    let dir = path.parent().unwrap().to_str().unwrap();
    let answer = query_stdin(
        &["-q", "--symbol-dir", dir, "/symbolicate/v5"],
        &[],
        &json!({ "jobs": [job(name, &elf_debug_id(path), offsets)] }),
    );
    frames_of(&answer["results"][0])
}

fn start_of(frame: &Value) -> Option<u64> {
    let offset = parse_hex(frame["module_offset"].as_str()?);
    Some(offset - parse_hex(frame["function_offset"].as_str()?))
}

/// Checks a stripped copy of `full` against `nm` on `full`: every sized function's
/// start, middle and last byte get a function starting where nm says, named as `.dynsym`
/// names it or `fun_<offset>`; the first byte after each (padding before the next
/// symbol) gets none.
fn check_stripped(full: &Path) {
    let dir = full.parent().unwrap();
    let name = full.file_name().unwrap().to_str().unwrap();
    let stripped = dir.join("stripped").join(name);
    std::fs::create_dir_all(stripped.parent().unwrap()).unwrap();
    std::fs::copy(full, &stripped).unwrap();
    tool(
        "strip",
        &["--strip-all", stripped.to_str().unwrap()],
        Path::new("."),
    )
    .unwrap();
    let base = elf_image_base(full);
    let exported: Vec<(u64, String)> = nm(&stripped, true)
        .into_iter()
        .map(|(a, _, n)| (a, n))
        .collect();
    let syms = nm(full, false);
    let mut starts: Vec<u64> = syms.iter().map(|s| s.0).collect();
    starts.sort_unstable();
    // (module offset, expected start, expected name; None = no function)
    let mut cases: Vec<(u64, Option<(u64, String)>)> = Vec::new();
    for (addr, size, sym) in &syms {
        let Some(size) = size.filter(|&s| s > 0) else {
            continue;
        };
        let want = exported
            .iter()
            .find(|e| e.0 == *addr)
            .map_or_else(|| format!("fun_{:x}", addr - base), |e| e.1.clone());
        for a in [*addr, addr + size / 2, addr + size - 1] {
            cases.push((a - base, Some((addr - base, want.clone()))));
        }
        let end = addr + size;
        if starts.iter().any(|&s| s > end) && !starts.contains(&end) {
            cases.push((end - base, None));
        }
        let _ = sym;
    }
    let offsets: Vec<u64> = cases.iter().map(|c| c.0).collect();
    let frames = ask(&stripped, &offsets);
    assert_eq!(frames.len(), offsets.len());
    let mut bad = Vec::new();
    for ((offset, want), frame) in cases.iter().zip(&frames) {
        let got = frame["function"]
            .as_str()
            .map(|f| (start_of(frame).unwrap(), f.to_string()));
        if got != *want {
            bad.push(format!("{offset:#x}: expected {want:?}, got {got:?}"));
        }
    }
    assert!(bad.is_empty(), "{name}:\n{}", bad.join("\n"));
    println!("{name}: {} addresses as nm says", cases.len());
}

#[test]
fn stripped_pie_non_pie_and_shared_library() {
    let dir = scratch("nodebug-stripped");
    for (name, args) in [
        ("pie", &["-fPIE", "-pie"][..]),
        ("nopie", &["-fno-PIE", "-no-pie"][..]),
        ("lib.so", &["-fPIC", "-shared"][..]),
    ] {
        let Some(full) = build(&dir, name, args) else {
            return;
        };
        check_stripped(&full);
    }
}

/// Without debug info but with its symbol table: a plain C name stays as it is, a
/// zero-size assembly symbol is named at its start, PLT stubs as objdump names them.
#[test]
fn symbol_names_plt_stubs_and_zero_size_symbols() {
    let dir = scratch("nodebug-names");
    let Some(bin) = build(&dir, "names", &[]) else {
        return;
    };
    let syms = nm(&bin, false);
    let at = |n: &str| syms.iter().find(|s| s.2 == n).unwrap().0;
    // objdump's labels in the PLT sections, e.g. `0000000000001030 <puts@plt>:`.
    let dump = tool(
        "objdump",
        &[
            "-d",
            "-j",
            ".plt",
            "-j",
            ".plt.sec",
            "-j",
            ".plt.got",
            bin.to_str().unwrap(),
        ],
        Path::new("."),
    )
    .unwrap();
    let mut plt: Vec<(u64, String)> = dump
        .lines()
        .filter_map(|l| {
            let (addr, rest) = l.split_once(" <")?;
            let label = rest.strip_suffix(">:")?;
            (label.ends_with("@plt")).then(|| (parse_hex(addr), label.to_string()))
        })
        .collect();
    assert!(plt.len() >= 3, "objdump shows PLT stubs: {plt:?}");
    let sections = tool("readelf", &["-SW", bin.to_str().unwrap()], Path::new(".")).unwrap();
    let plt_start = sections
        .lines()
        .find_map(|l| {
            let l = l.split_once(']')?.1;
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.first() == Some(&".plt")).then(|| parse_hex(f[2]))
        })
        .unwrap();
    plt.push((plt_start, "<PLT header>".into()));
    let mut cases: Vec<(u64, u64, String)> = vec![
        (at("f"), at("f"), "f".into()),
        (at("asmfn"), at("asmfn"), "asmfn".into()),
        (at("asmfn") + 2, at("asmfn"), "asmfn".into()),
        (at("helper") + 3, at("helper"), "helper".into()),
    ];
    for (addr, label) in plt {
        cases.push((addr, addr, label.clone()));
        cases.push((addr + 6, addr, label));
    }
    let frames = ask(&bin, &cases.iter().map(|c| c.0).collect::<Vec<_>>());
    assert_eq!(frames.len(), cases.len());
    for ((addr, start, name), frame) in cases.iter().zip(&frames) {
        assert_eq!(frame["function"], json!(name), "at {addr:#x}: {frame}");
        assert_eq!(start_of(frame), Some(*start), "at {addr:#x}: {frame}");
    }
}

/// MiniDebugInfo made as Fedora does (gdb manual, "MiniDebugInfo"): the local function
/// symbols, xz-compressed in `.gnu_debugdata` of the stripped binary.
#[test]
fn minidebuginfo_names_local_functions() {
    let dir = scratch("nodebug-minidebuginfo");
    let Some(full) = build(&dir, "full", &["-g"]) else {
        return;
    };
    if tool("xz", &["--version"], &dir).is_none() {
        return;
    }
    let script = r#"
set -e
cp full mini
nm -D mini --format=posix --defined-only | awk '{ print $1 }' | sort > dynsyms
nm mini --format=posix --defined-only | awk '{ if ($2 == "T" || $2 == "t" || $2 == "D") print $1 }' | sort > funcsyms
comm -13 dynsyms funcsyms > keep_symbols
objcopy --only-keep-debug mini mini.debug
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep_symbols mini.debug mini_debuginfo
strip --strip-all -R .comment mini
xz -f mini_debuginfo
objcopy --add-section .gnu_debugdata=mini_debuginfo.xz mini
rm mini.debug
"#;
    tool("sh", &["-c", script], &dir).unwrap();
    let mini = dir.join("mini");
    // The oracle: nm on the unstripped program; the local functions are what matters.
    let locals: Vec<(u64, u64, String)> = nm(&full, false)
        .into_iter()
        .filter_map(|(a, s, n)| Some((a, s.filter(|&s| s > 0)?, n)))
        .collect();
    let mut offsets = Vec::new();
    for (a, s, _) in &locals {
        offsets.extend([*a, a + s / 2, a + s - 1]);
    }
    let frames = ask(&mini, &offsets);
    assert_eq!(frames.len(), offsets.len());
    for (i, frame) in frames.iter().enumerate() {
        let (a, _, n) = &locals[i / 3];
        assert_eq!(frame["function"], json!(n), "{frame}");
        assert_eq!(start_of(frame), Some(*a), "{frame}");
    }
    assert!(locals.iter().any(|l| l.2 == "helper2"));
}

/// One short stderr line per module says where its symbols came from, one grouped line
/// how to get better ones; `-v` lists the build-ID paths looked at and the module's own
/// advice; `-q` silences all.
#[test]
fn stderr_says_where_symbols_came_from() {
    use std::io::Write;
    let dir = scratch("nodebug-hint");
    let Some(bin) = build(&dir, "hinted", &[]) else {
        return;
    };
    tool("strip", &["--strip-all", bin.to_str().unwrap()], &dir).unwrap();
    let request = json!({ "jobs": [job("hinted", &elf_debug_id(&bin), &[0x1000, 0x1010])] });
    let stderr = |flags: &[&str]| {
        let mut child = Command::new(common::BIN)
            .arg("query")
            .args(flags)
            .args(["--symbol-dir", dir.to_str().unwrap(), "/symbolicate/v5"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(request.to_string().as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stderr).unwrap()
    };
    let normal = stderr(&[]);
    let line = normal
        .lines()
        .find(|l| l.starts_with("hinted: "))
        .unwrap_or_else(|| panic!("no line for the module in {normal:?}"));
    assert!(
        line.contains("no debug info in") && line.contains("names from its symbol table"),
        "{line}"
    );
    // What to do is said once, for all such modules, on a line of its own; -v gives the
    // module's own commands.
    assert!(!line.contains("dbgsym"), "{line}");
    let grouped = normal
        .lines()
        .find(|l| l.contains("no debug info here (hinted)"))
        .unwrap_or_else(|| panic!("no grouped advice in {normal:?}"));
    assert!(grouped.contains("--symbol-dir"), "{grouped}");
    for l in normal.lines() {
        assert!(l.chars().count() <= 160, "over 160 characters: {l}");
    }
    let verbose = stderr(&["-v"]);
    assert!(
        verbose.contains("/usr/lib/debug/.build-id/") && verbose.contains("no file (by build ID)"),
        "{verbose}"
    );
    assert!(
        verbose.contains("build it with debug info (-g)"),
        "{verbose}"
    );
    assert_eq!(stderr(&["-q"]), "");
}

/// A stripped program whose entry point is assembly without unwind information (as the
/// dynamic loader's `_start` is): the entry `readelf -h` gives is a function start.
#[test]
fn stripped_entry_point_without_unwind_entry_is_a_function() {
    let dir = scratch("nodebug-entry");
    let src = "__asm__(\".text\\n.globl _start\\n_start:\\n\\txor %edi,%edi\\n\\tmov $60,%eax\\n\\tsyscall\\n\\thlt\\n\");\n";
    std::fs::write(dir.join("e.c"), src).unwrap();
    let args = [
        "-nostdlib",
        "-static",
        "-fno-asynchronous-unwind-tables",
        "-Wl,--build-id",
        "-o",
        "entry",
        "e.c",
    ];
    if tool("gcc", &args, &dir).is_none()
        || tool("strip", &["--strip-all", "entry"], &dir).is_none()
    {
        return;
    }
    let exe = dir.join("entry");
    let header = tool("readelf", &["-hl", exe.to_str().unwrap()], &dir).unwrap();
    let entry = header
        .lines()
        .find_map(|l| l.trim().strip_prefix("Entry point address:"))
        .map(|v| parse_hex(v.trim()))
        .unwrap();
    assert_eq!(
        tool("readelf", &["--debug-dump=frames", "entry"], &dir).map(|f| f.contains("FDE")),
        Some(false),
        "the test program must have no unwind entry"
    );
    let base = elf_image_base(&exe);
    let frames = ask(&exe, &[entry - base, entry - base + 2]);
    for f in &frames {
        assert_eq!(start_of(f), Some(entry - base), "{f}");
    }
}

/// A profile's `[vdso]` has no file: it is answered from the server's own vDSO (the same
/// image in every process of the machine). Expected values from `readelf -n` and `nm -D`
/// on a copy of this test process's vDSO, read through /proc/self/mem.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
#[test]
fn vdso_frames_are_named_from_the_servers_own_vdso() {
    use std::io::{Read, Seek, SeekFrom};
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let Some(line) = maps.lines().find(|l| l.ends_with("[vdso]")) else {
        common::skip("this system has no vDSO", false);
        return;
    };
    let range = line.split_whitespace().next().unwrap();
    let (a, b) = range.split_once('-').unwrap();
    let (a, b) = (parse_hex(a), parse_hex(b));
    let mut image = vec![0u8; (b - a) as usize];
    let mut mem = std::fs::File::open("/proc/self/mem").unwrap();
    mem.seek(SeekFrom::Start(a)).unwrap();
    mem.read_exact(&mut image).unwrap();
    let dir = scratch("nodebug-vdso");
    let copy = dir.join("vdso.so");
    std::fs::write(&copy, &image).unwrap();
    let id = elf_debug_id(&copy);
    let Some(nm) = tool("nm", &["-D", "--defined-only", "vdso.so"], &dir) else {
        return;
    };
    let (addr, name) = nm
        .lines()
        .filter_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            (p.len() == 3 && p[1] == "T").then(|| (parse_hex(p[0]), p[2].to_string()))
        })
        .find(|(_, n)| n.contains("clock_gettime"))
        .expect("nm lists a clock_gettime");
    let base = elf_image_base(&copy);
    let answer = query_stdin(
        &["-q", "/symbolicate/v5"],
        &[],
        &json!({ "jobs": [job("[vdso]", &id, &[addr - base])] }),
    );
    let frame = &frames_of(&answer["results"][0])[0];
    assert_eq!(start_of(frame), Some(addr - base), "{frame}");
    assert!(
        frame["function"]
            .as_str()
            .unwrap()
            .contains("clock_gettime"),
        "{frame} (nm: {name})"
    );
}

/// A stripped shared library: `DT_INIT` (from `readelf -d`) is named `_init`, although
/// neither a symbol nor an FDE covers it.
#[test]
fn stripped_library_names_dt_init() {
    let dir = scratch("nodebug-init");
    let Some(lib) = build(&dir, "libinit.so", &["-fPIC", "-shared"]) else {
        return;
    };
    if tool("strip", &["--strip-all", "libinit.so"], &dir).is_none() {
        return;
    }
    let dynamic = tool("readelf", &["-d", "libinit.so"], &dir).unwrap();
    let init = dynamic
        .lines()
        .find(|l| l.contains("(INIT)"))
        .and_then(|l| l.split_whitespace().last())
        .map(parse_hex)
        .unwrap();
    let base = elf_image_base(&lib);
    let frame = &ask(&lib, &[init - base])[0];
    assert_eq!(frame["function"], "_init", "{frame}");
    assert_eq!(start_of(frame), Some(init - base));
}

/// This machine's own stripped libraries (as a profile recorded here without debug
/// packages lists them): one short line per module, the advice grouped, no dwz warning.
#[test]
fn system_libraries_without_debug_packages_get_one_short_line_each() {
    let dir = scratch("nodebug-system");
    let Ok(entries) = std::fs::read_dir("/usr/lib/x86_64-linux-gnu") else {
        common::skip("no /usr/lib/x86_64-linux-gnu", false);
        return;
    };
    let mut libs = Vec::new();
    let mut names: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".so.") && p.is_file())
        .collect();
    names.sort();
    for path in names {
        if libs.len() == 25 {
            break;
        }
        // Skip libraries with debug files installed: the case is "no debug packages".
        let Some(notes) = tool("readelf", &["-n", path.to_str().unwrap()], &dir) else {
            continue;
        };
        let Some(hex) = notes
            .lines()
            .find_map(|l| l.trim().strip_prefix("Build ID: "))
        else {
            continue;
        };
        let hex = hex.trim();
        let installed = Path::new("/usr/lib/debug/.build-id")
            .join(&hex[..2])
            .join(format!("{}.debug", &hex[2..]));
        if installed.exists() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        libs.push(
            json!({"name": name, "debugName": name, "path": path, "debugPath": path,
            "breakpadId": elf_debug_id(&path), "start": 0x1000_0000u64 * (libs.len() as u64 + 1),
            "end": 0x1000_0000u64 * (libs.len() as u64 + 1) + 0x100_0000, "offset": 0}),
        );
    }
    if libs.len() < 5 {
        common::skip("fewer than 5 stripped system libraries", false);
        return;
    }
    // One frame per lib, a little into its code.
    let strings: Vec<String> = (0..libs.len())
        .map(|i| format!("0x{:x}", 0x1000_0000u64 * (i as u64 + 1) + 0x2000))
        .collect();
    let profile = dir.join("profile.json");
    let doc = json!({"meta": {"version": 27, "interval": 1}, "libs": libs,
        "threads": [{"stringTable": strings}], "processes": []});
    std::fs::write(&profile, doc.to_string()).unwrap();
    let out = Command::new(common::BIN)
        .args(["symbolicate", profile.to_str().unwrap(), "-o"])
        .arg(dir.join("out.json"))
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .unwrap();
    // 3: none of the frames named (0x2000 into a library may be no function's code).
    assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    // The summary, one line per module, the grouped advice, the output written, what
    // stayed unresolved.
    assert!(
        lines.len() <= libs.len() + 4,
        "{} lines:\n{stderr}",
        lines.len()
    );
    for l in &lines {
        assert!(l.chars().count() <= 200, "long line: {l}");
        assert!(!l.contains("dwz"), "{l}");
    }
    let grouped: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains("no debug info here"))
        .collect();
    assert_eq!(grouped.len(), 1, "{stderr}");
    assert!(
        grouped[0].contains("-dbgsym") && grouped[0].contains("DEBUGINFOD_URLS"),
        "{stderr}"
    );
    eprintln!(
        "{} libraries, {} stderr lines, longest {}",
        libs.len(),
        lines.len(),
        lines.iter().map(|l| l.chars().count()).max().unwrap_or(0)
    );
}

/// Executable sections per `readelf -SW`: (name, address, size).
fn exec_sections(path: &Path) -> Vec<(String, u64, u64)> {
    let out = tool("readelf", &["-SW", path.to_str().unwrap()], Path::new(".")).unwrap();
    out.lines()
        .filter_map(|l| {
            let l = l.split_once(']')?.1;
            let f: Vec<&str> = l.split_whitespace().collect();
            // name type address offset size entsize flags …
            let flags = f.get(6)?;
            flags
                .contains('X')
                .then(|| (f[0].to_string(), parse_hex(f[2]), parse_hex(f[4])))
        })
        .collect()
}

/// A size-0 symbol (crti's `_init`, in `.init`) reaches at most to the end of its own
/// section, also when the module is a separate debug file whose sections hold no bytes:
/// the padding after `.init`, `.plt` and `.plt.got` is nobody's code. Checked against
/// `readelf -S` and `nm` on the program.
#[test]
fn size_zero_symbols_end_with_their_section() {
    let dir = scratch("nodebug-init");
    let Some(full) = build(&dir, "initprog", &["-g"]) else {
        return;
    };
    let sections = exec_sections(&full);
    let init = sections.iter().find(|s| s.0 == ".init").expect(".init");
    assert!(
        nm(&full, false)
            .iter()
            .any(|s| s.2 == "_init" && s.0 == init.1 && s.1.is_none_or(|z| z == 0)),
        "_init is the size-0 symbol at .init's start"
    );
    // The module as a debug file alone (debuginfod's `debuginfo`, a build-ID tree).
    let only = dir.join("debug-only");
    std::fs::create_dir_all(&only).unwrap();
    tool(
        "objcopy",
        &[
            "--only-keep-debug",
            full.to_str().unwrap(),
            only.join("initprog").to_str().unwrap(),
        ],
        &dir,
    )
    .unwrap();
    let base = elf_image_base(&full);
    for module in [full.clone(), only.join("initprog")] {
        // Each section's last byte and the bytes after its end, up to 0x40 or the next.
        let mut offsets = Vec::new();
        for (i, (_, start, size)) in sections.iter().enumerate() {
            let end = start + size;
            let next = sections.get(i + 1).map_or(end + 0x40, |s| s.1);
            offsets.push(end - 1 - base);
            offsets.extend((end..next.min(end + 0x40)).map(|a| a - base));
        }
        let frames = ask(&module, &offsets);
        let section_of = |a: u64| sections.iter().position(|s| s.1 <= a && a < s.1 + s.2);
        for (f, &o) in frames.iter().zip(&offsets) {
            let Some(start) = start_of(f) else { continue };
            let addr = o + base;
            assert_eq!(
                section_of(start + base),
                section_of(addr),
                "{}: {addr:#x} answered with {} from {:#x}, another section's or none",
                module.display(),
                f["function"],
                start + base
            );
        }
    }
}

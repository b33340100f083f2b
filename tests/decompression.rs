//! Debug files are untrusted: compressed sections inflate within one budget per module,
//! and PDBs and Breakpad files are read in place, not copied to the heap. The crafted
//! inputs come from `scripts/make-bombs` (gigabytes inflated from a few MB).
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// How a child ran: its answer, wall time and peak resident memory (from `wait4`).
struct Run {
    status: i32,
    stdout: Vec<u8>,
    wall: Duration,
    max_rss: u64,
}

/// Runs the binary's `query` mode on `request` under a resource limit (`RLIMIT_AS` or
/// `RLIMIT_DATA`), killed if it runs over two minutes.
fn query_limited(args: &[&str], request: &Value, limit: (libc::__rlimit_resource_t, u64)) -> Run {
    let req = tempfile(&serde_json::to_vec(request).unwrap());
    let (resource, bytes) = limit;
    let mut cmd = Command::new(BIN);
    cmd.arg("query")
        .args(args)
        .args(["/symbolicate/v5", req.to_str().unwrap()])
        .env_remove("DEBUGINFOD_URLS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // SAFETY: only setrlimit (async-signal-safe) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(resource, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    // Reaped by `wait4` below, which also gives its peak memory (std's `wait` cannot).
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut v).unwrap();
        v
    });
    // A watchdog: a hang must fail the test, not hold the suite. The child is waited for
    // without being reaped (WNOWAIT) until the watchdog is done, so its pid stays ours.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = done.clone();
    let watchdog = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(120);
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            if Instant::now() > until {
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        )
    };
    assert_eq!(r, 0, "waitid");
    let wall = start.elapsed();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    watchdog.join().unwrap();
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let stdout = reader.join().unwrap();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    Run {
        status: code,
        stdout,
        wall,
        // ru_maxrss is in KiB on Linux.
        max_rss: usage.ru_maxrss as u64 * 1024,
    }
}

/// A request file in the test's scratch folder.
fn tempfile(bytes: &[u8]) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("decompression-requests");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!(
        "req-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// `scripts/make-bombs` on `input`, written to `out`; false (a skip) without Python.
fn make_bomb(input: &Path, out: &Path, args: &[&str]) -> bool {
    let Some(mut python) = common::python3() else {
        return false;
    };
    let ok = python
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/make-bombs"))
        .args(args)
        .arg(input)
        .arg(out)
        .stdout(Stdio::null())
        .status()
        .expect("run scripts/make-bombs");
    assert!(ok.success(), "make-bombs {args:?}");
    true
}

const GIB: u64 = 1 << 30;

/// A decompression bomb: an ELF of 6 MB with the right build ID whose `.debug_info` and
/// `.debug_abbrev` inflate to 3 GiB of zeros each (unbounded, 42 s and 9.2 GB; here run
/// under a 1 GiB address-space limit). It is answered within 20 s from its symbol
/// table, and `module_errors` names the section and the limit.
#[test]
fn a_dwarf_bomb_is_answered_from_the_symbol_table_within_a_gib() {
    let t = Truth::load(&corpus().join("truth/elf/libmathlib.so.truth.json"));
    let id = t.breakpad_id();
    // (make-bombs arguments, the section the error names)
    let cases: [(&str, &[&str], &str); 3] = [
        ("gabi", &[], ".debug_info"),
        ("gnu", &["--gnu"], ".zdebug_info"),
        // A header that claims less than the stream holds: read up to the claim only,
        // and the second section no longer fits the budget.
        ("lying", &["--claim", "209715200"], ".debug_abbrev"),
    ];
    for (label, args, section) in cases {
        let dir = scratch(&format!("decompression-bomb-{label}"));
        if !make_bomb(&t.image(), &dir.join("libmathlib.so"), args) {
            return;
        }
        let size = std::fs::metadata(dir.join("libmathlib.so")).unwrap().len();
        assert!(size < 8 << 20, "{label}: the bomb is {size} bytes");
        let run = query_limited(
            &["--symbol-dir", dir.to_str().unwrap()],
            &job("libmathlib.so", &id, &t.offsets()),
            (libc::RLIMIT_AS, GIB),
        );
        assert_eq!(run.status, 0, "{label}: query failed");
        eprintln!("{label}: answered in {:?}", run.wall);
        assert!(run.max_rss < GIB, "{label}: peak RSS {} bytes", run.max_rss);
        let v: Value = serde_json::from_slice(&run.stdout).unwrap();
        let r = &v["results"][0];
        let key = format!("libmathlib.so/{id}");
        assert_eq!(r["found_modules"][&key], json!(true), "{label}: {r}");
        let errors = &r["module_errors"][&key];
        let error = errors
            .as_array()
            .and_then(|e| e.iter().find(|e| e["name"] == json!("DecompressionLimit")))
            .unwrap_or_else(|| panic!("{label}: no DecompressionLimit error in {errors}"));
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("section {section}:")) && message.contains("limit of"),
            "{label}: {message}"
        );
        // The symbol table (llvm-nm's names in the truth) answers, without file/line.
        let mut named = 0;
        for (frame, entry) in frames_of(r).iter().zip(&t.addresses) {
            let symtab = &entry["expect"]["symtab"];
            if entry["expect"]["found"] != json!(true) || symtab.is_null() {
                continue;
            }
            assert_eq!(frame["function"], symtab["name"], "{label}: {frame}");
            assert!(frame.get("file").is_none(), "{label}: {frame}");
            named += 1;
        }
        assert!(named > 10, "{label}: {named} frames checked");
    }
}

/// `.zdebug_*` sections (objcopy's `zlib-gnu`, older toolchains' default) are found and
/// read: the answers are llvm-symbolizer's, as for the uncompressed file.
#[test]
fn gnu_compressed_sections_are_read() {
    let t = Truth::load(&corpus().join("truth/elf/libmathlib.so.truth.json"));
    let dir = scratch("decompression-zdebug");
    let out = dir.join("libmathlib.so");
    let Some(_) = tool(
        "objcopy",
        &[
            "--compress-debug-sections=zlib-gnu",
            t.image().to_str().unwrap(),
            out.to_str().unwrap(),
        ],
        Path::new("."),
    ) else {
        return;
    };
    let sections = tool("readelf", &["-SW", out.to_str().unwrap()], Path::new(".")).unwrap();
    assert!(sections.contains(".zdebug_info"), "{sections}");
    let id = t.breakpad_id();
    let v = query_stdin(
        &["--symbol-dir", dir.to_str().unwrap(), "/symbolicate/v5"],
        &[],
        &job("libmathlib.so", &id, &t.offsets()),
    );
    let r = &v["results"][0];
    assert!(r["module_errors"].is_null(), "{r}");
    let mut lines = 0;
    for (frame, entry) in frames_of(r).iter().zip(&t.addresses) {
        check_frame(frame, entry).unwrap_or_else(|e| panic!("{e}: {frame}"));
        lines += usize::from(frame.get("line").is_some());
    }
    assert!(lines > 10, "{lines} frames with a line");
}

/// A PDB and a Breakpad file without the `.sym` name are parsed from the mapped file:
/// under a 96 MiB limit on the heap (`RLIMIT_DATA`, which a read-only file mapping does
/// not count) files of 160 and 120 MiB still answer. A copy of the file aborted.
#[test]
fn pdbs_and_breakpad_files_are_read_in_place() {
    const HEAP: u64 = 96 << 20;
    // The PDB, made 160 MiB by a sparse tail (no disk used; the MSF directory ignores it).
    let t = Truth::load(&corpus().join("truth/pe/mathlib.dll.truth.json"));
    let dir = scratch("decompression-pdb-in-place");
    let pdb = dir.join("mathlib.pdb");
    std::fs::copy(corpus().join("pe/mathlib.pdb"), &pdb).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&pdb)
        .unwrap()
        .set_len(160 << 20)
        .unwrap();
    let id = t.breakpad_id();
    let run = query_limited(
        &["--symbol-dir", dir.to_str().unwrap()],
        &job("mathlib.pdb", &id, &t.offsets()),
        (libc::RLIMIT_DATA, HEAP),
    );
    assert_eq!(run.status, 0, "PDB: query failed");
    let v: Value = serde_json::from_slice(&run.stdout).unwrap();
    let r = &v["results"][0];
    assert_eq!(
        r["found_modules"][format!("mathlib.pdb/{id}")],
        json!(true),
        "{r}"
    );
    for (frame, entry) in frames_of(r).iter().zip(&t.addresses) {
        check_frame(frame, entry).unwrap_or_else(|e| panic!("PDB: {e}: {frame}"));
    }

    // A Breakpad file named as the binary (as a symbol server's answer may be stored),
    // 120 MiB with a FUNC of line records no address asks for.
    let t = Truth::load(&corpus().join("truth/elf/libmathlib.so.truth.json"));
    let id = t.breakpad_id();
    let sym = corpus().join(format!("breakpad/libmathlib.so/{id}/libmathlib.so.sym"));
    let mut text = std::fs::read(&sym).unwrap();
    if !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    text.extend_from_slice(b"FUNC 10000000 10 0 filler\n");
    text.extend(b"10000000 1 1 0\n".repeat((120 << 20) / 15));
    let dir = scratch("decompression-sym-in-place");
    std::fs::write(dir.join("libmathlib.so"), &text).unwrap();
    drop(text);
    let run = query_limited(
        &["--symbol-dir", dir.to_str().unwrap()],
        &job("libmathlib.so", &id, &t.offsets()),
        (libc::RLIMIT_DATA, HEAP),
    );
    assert_eq!(run.status, 0, "Breakpad: query failed");
    let v: Value = serde_json::from_slice(&run.stdout).unwrap();
    let r = &v["results"][0];
    assert_eq!(
        r["found_modules"][format!("libmathlib.so/{id}")],
        json!(true),
        "{r}"
    );
    for (frame, entry) in frames_of(r).iter().zip(&t.addresses) {
        check_frame_against_sym(frame, entry).unwrap_or_else(|e| panic!("Breakpad: {e}: {frame}"));
    }
}

/// Copies `names` from `from` into `to`, their debug sections compressed with zstd
/// (`objcopy --compress-debug-sections=zstd`, `ELFCOMPRESS_ZSTD`); `false` when objcopy is
/// missing.
fn zstd_copies(from: &Path, to: &Path, names: &[&str]) -> bool {
    for name in names {
        let (src, dst) = (from.join(name), to.join(name));
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        let args = [
            "--compress-debug-sections=zstd",
            src.to_str().unwrap(),
            dst.to_str().unwrap(),
        ];
        if tool("objcopy", &args, Path::new(".")).is_none() {
            return false;
        }
        let sections = tool("readelf", &["-t", dst.to_str().unwrap()], Path::new(".")).unwrap();
        assert!(sections.contains("ZSTD"), "{name}: nothing compressed");
    }
    true
}

/// Gives `binary` in `dir` a `.gnu_debuglink` to `debug` with its CRC as it is now.
fn relink(dir: &Path, binary: &str, debug: &str) {
    let link = format!("--add-gnu-debuglink={debug}");
    tool(
        "objcopy",
        &["--remove-section=.gnu_debuglink", &link, binary],
        dir,
    )
    .unwrap();
}

/// The `/symbolicate/v5` result for `offsets` of module `name` with each of `dirs` as
/// `--symbol-dir`.
fn result_in(dirs: &[&Path], name: &str, id: &str, offsets: &[u64]) -> Value {
    let mut args = Vec::new();
    for d in dirs {
        args.extend(["--symbol-dir", d.to_str().unwrap()]);
    }
    args.push("/symbolicate/v5");
    let v = query_stdin(&args, &[], &job(name, id, offsets));
    v["results"][0].clone()
}

/// (label, truth, folder of the uncompressed twin, the files compressed, the files copied
/// as they are).
type ZstdCase<'a> = (&'a str, &'a Truth, PathBuf, Vec<&'a str>, Vec<&'a str>);

/// zstd-compressed debug sections are read wherever zlib is: the module's own sections,
/// its separate debug file (by `.gnu_debuglink` and by build ID), a `.dwp`, a lone
/// `.dwo`. Each answers as its uncompressed twin, and as llvm-symbolizer (the truth).
#[test]
fn zstd_compressed_sections_are_read_as_their_uncompressed_twins() {
    let c = corpus();
    let t_lib = Truth::load(&c.join("truth/elf/libmathlib.so.truth.json"));
    let t_split = Truth::load(&c.join("truth/elf/split-debug/shapes.truth.json"));
    let t_dwarf =
        Truth::load(&c.join("truth/elf/split-dwarf/shapes-clang19-O2-splitdwarf.truth.json"));
    let code_id = t_split.header["module"]["code_id"]
        .as_str()
        .unwrap()
        .to_ascii_lowercase();
    let by_build_id = format!(".build-id/{}/{}.debug", &code_id[..2], &code_id[2..]);
    let split_dwarf = "shapes-clang19-O2-splitdwarf";
    let dwp = format!("{split_dwarf}.dwp");
    let dir = scratch("decompression-zstd");
    let cases: [ZstdCase; 5] = [
        (
            "own sections",
            &t_lib,
            c.join("elf"),
            vec!["libmathlib.so"],
            vec![],
        ),
        (
            "separate debug file by .gnu_debuglink",
            &t_split,
            c.join("elf/split-debug"),
            vec!["shapes.debug"],
            vec!["shapes"],
        ),
        (
            "separate debug file by build ID",
            &t_split,
            c.join("elf/split-debug"),
            vec![&by_build_id],
            vec!["shapes"],
        ),
        (
            ".dwp",
            &t_dwarf,
            c.join("elf/split-dwarf"),
            vec![&dwp],
            vec![split_dwarf],
        ),
        (
            "lone .dwo",
            &t_dwarf,
            c.join("elf/split-dwarf"),
            vec!["shapes.split.dwo"],
            vec![split_dwarf],
        ),
    ];
    let mut table = Agreement::default();
    for (k, (label, t, from, packed, plain)) in cases.iter().enumerate() {
        let case = dir.join(format!("case{k}"));
        std::fs::create_dir_all(&case).unwrap();
        if !zstd_copies(from, &case, packed) {
            return;
        }
        for name in plain {
            std::fs::copy(from.join(name), case.join(name)).unwrap();
        }
        if *label == "separate debug file by .gnu_debuglink" {
            relink(&case, "shapes", "shapes.debug");
        }
        let name = t.image().file_name().unwrap().to_str().unwrap().to_string();
        let (id, offsets) = (t.breakpad_id(), t.offsets());
        let got = result_in(&[&case], &name, &id, &offsets);
        assert!(got["module_errors"].is_null(), "{label}: {got}");
        // The twin: the same files uncompressed, where the corpus has them.
        let twin = result_in(&[from], &name, &id, &offsets);
        assert_eq!(got["stacks"], twin["stacks"], "{label}");
        let frames = frames_of(&got);
        let lines = frames.iter().filter(|f| f.get("line").is_some()).count();
        assert!(lines > 10, "{label}: {lines} frames with a line");
        table.add(
            &format!("zstd: {label}"),
            frames
                .iter()
                .zip(&t.addresses)
                .map(|(f, e)| check_frame(f, e))
                .collect(),
        );
    }
    table.finish("zstd-compressed debug sections vs llvm-symbolizer on the uncompressed files");
}

/// A dwz supplementary file and a `.dwp` merged into the debuglink target
/// (fixtures/local-builds, checked against llvm-symbolizer in tests/local_builds.rs),
/// compressed with zstd, answer as before.
#[test]
fn zstd_compressed_dwz_and_dwp_in_the_debug_file_answer_as_before() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/local-builds");
    let dir = scratch("decompression-zstd-local-builds");
    let oracle = |case: &str| -> (String, Vec<u64>) {
        let v: Value = serde_json::from_slice(
            &std::fs::read(root.join(format!("{case}.oracle.json"))).unwrap(),
        )
        .unwrap();
        let offsets = v["addresses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
            .collect();
        (v["breakpad_id"].as_str().unwrap().to_string(), offsets)
    };
    for (case, packed) in [
        ("dwz", &["widget", "common.dwz"][..]),
        ("dwp-in-dbg", &["widget.dbg"][..]),
    ] {
        let from = root.join(case);
        let to = dir.join(case);
        if !zstd_copies(&from, &to, packed) {
            return;
        }
        // The stripped dwp-in-dbg binary, its .gnu_debuglink's CRC made again (as a build
        // compressing its debug file before linking to it has it).
        if !packed.contains(&"widget") {
            std::fs::copy(from.join("widget"), to.join("widget")).unwrap();
            relink(&to, "widget", "widget.dbg");
        }
        let (id, offsets) = oracle(case);
        let got = result_in(&[&to], "widget", &id, &offsets);
        assert!(got["module_errors"].is_null(), "{case}: {got}");
        let twin = result_in(&[&from], "widget", &id, &offsets);
        assert_eq!(got["stacks"], twin["stacks"], "{case}");
        let lines = frames_of(&got)
            .iter()
            .filter(|f| f.get("inlines").is_some())
            .count();
        assert!(lines > 10, "{case}: {lines} frames with inlines");
    }
}

/// Debug sections that cannot be read (here a zstd stream with a broken frame) do not
/// lose the module: its symbol table answers, `module_errors` names the section and the
/// cause, and stderr says the same rather than advising to build with `-g`.
#[test]
fn unreadable_debug_sections_leave_the_symbol_table_and_name_the_cause() {
    let t = Truth::load(&corpus().join("truth/elf/libmathlib.so.truth.json"));
    let dir = scratch("decompression-zstd-broken");
    if !zstd_copies(&corpus().join("elf"), &dir, &["libmathlib.so"]) {
        return;
    }
    // Every zstd frame magic broken: whichever section is read first fails.
    let path = dir.join("libmathlib.so");
    let mut bytes = std::fs::read(&path).unwrap();
    let magic = [0x28, 0xb5, 0x2f, 0xfd];
    let mut broken = 0;
    for i in 0..bytes.len().saturating_sub(4) {
        if bytes[i..i + 4] == magic {
            bytes[i] = 0;
            broken += 1;
        }
    }
    assert!(broken > 3, "{broken} frames");
    std::fs::write(&path, &bytes).unwrap();
    let id = t.breakpad_id();
    let req = tempfile(&serde_json::to_vec(&job("libmathlib.so", &id, &t.offsets())).unwrap());
    let out = Command::new(BIN)
        .args(["query", "--symbol-dir", dir.to_str().unwrap()])
        .args(["/symbolicate/v5", req.to_str().unwrap()])
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["results"][0];
    let key = format!("libmathlib.so/{id}");
    assert_eq!(r["found_modules"][&key], json!(true), "{r}");
    let errors = r["module_errors"][&key].to_string();
    assert!(
        errors.contains("ParseError") && errors.contains("corrupt zstd data"),
        "{errors}"
    );
    let mut named = 0;
    for (frame, entry) in frames_of(r).iter().zip(&t.addresses) {
        let symtab = &entry["expect"]["symtab"];
        if entry["expect"]["found"] != json!(true) || symtab.is_null() {
            continue;
        }
        assert_eq!(frame["function"], symtab["name"], "{frame}");
        named += 1;
    }
    assert!(named > 10, "{named} frames checked");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("debug info not read") && stderr.contains("corrupt zstd data"),
        "{stderr}"
    );
    assert!(!stderr.contains("-g"), "{stderr}");
}

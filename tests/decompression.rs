//! Debug files are untrusted: compressed sections inflate within one budget per module,
//! and PDBs and Breakpad files are read in place, not copied to the heap. The crafted
//! inputs come from `scripts/make-bombs` (gigabytes inflated from a few MB).
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
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

/// The case: an ELF of 6 MB with the right build ID whose `.debug_info` and
/// `.debug_abbrev` inflate to 3 GiB of zeros each (42 s and 9.2 GB before; here run
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
        assert!(
            run.wall < Duration::from_secs(20),
            "{label}: {:?}",
            run.wall
        );
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

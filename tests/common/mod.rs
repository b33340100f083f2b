//! Shared by the integration tests: the corpus and scratch folders here; child processes
//! (`process.rs`), the real binary as a server (`server.rs`), a small HTTP client
//! (`http.rs`) and the SPEC's rules for comparing an answer with the ground truth
//! (`truth.rs`). Each test binary uses some of it.
#![allow(dead_code)]

mod http;
mod process;
mod server;
mod truth;

// Each test binary uses some of these.
#[allow(unused_imports)]
pub use http::*;
#[allow(unused_imports)]
pub use process::*;
#[allow(unused_imports)]
pub use server::*;
#[allow(unused_imports)]
pub use truth::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_profiler-symbol-server");

thread_local! {
    /// The corpus the current test reads (see [`with_shared_corpus`]).
    static ROOT: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

/// The corpus with ground truth the tests compare with: the project's own mini corpus
/// (`fixtures/corpus`, made by `scripts/make-fixtures`), unless a test runs under
/// [`with_shared_corpus`].
pub fn corpus() -> PathBuf {
    if let Some(p) = ROOT.with(|r| r.borrow().clone()) {
        return p;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus")
}

/// Says that a test skipped (some of) its work, on the real stderr: the harness captures
/// `eprintln!` of passing tests, so a skip would otherwise be invisible. `ci_installs`:
/// the missing piece is one `.ci/run` installs, so under `CI=1` the skip is a failure.
pub fn skip(why: &str, ci_installs: bool) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {why}");
    if ci_installs && std::env::var_os("CI").is_some_and(|v| v == "1") {
        panic!("{why}, although .ci/run installs it: CI must not skip this");
    }
}

/// A `python3` command, or `None` (said as a skip) when there is no Python 3 here.
pub fn python3() -> Option<Command> {
    let ok = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip("python3 is not installed", true);
        return None;
    }
    Some(Command::new("python3"))
}

/// Runs `test` against `../shared/corpus` when it is beside the checkout (an extra:
/// bigger inputs and third-party files); says it was skipped otherwise.
pub fn with_shared_corpus(test: fn()) {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if !p.is_dir() {
        skip(
            &format!(
                "{} is not there (the shared corpus is an extra)",
                p.display()
            ),
            false,
        );
        return;
    }
    ROOT.with(|r| *r.borrow_mut() = Some(p.canonicalize().unwrap()));
    test();
    ROOT.with(|r| *r.borrow_mut() = None);
}

/// The debug ID of a corpus case, from its truth file (e.g. `elf/libmathlib.so`).
pub fn case_id(case: &str) -> String {
    Truth::load(&corpus().join(format!("truth/{case}.truth.json"))).breakpad_id()
}

/// A profile of the corpus's `fixtures/firefox-profiler` (the shared corpus) or its
/// stand-in of the same shape in `profiles/` (the project's own).
pub fn profiler_fixture(name: &str) -> PathBuf {
    let shared = corpus().join("fixtures/firefox-profiler").join(name);
    if shared.exists() {
        return shared;
    }
    let own = match name {
        "gecko-2.json" => "gecko-with-subprocess.json",
        "unsymbolicated.json" => "processed-unsymbolicated.json",
        other => other,
    };
    corpus().join("profiles").join(own)
}

/// A scratch folder under target/, fresh for each test that asks.
pub fn scratch(name: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Runs a tool; `None` (and a message) when it is not installed.
pub fn tool(cmd: &str, args: &[&str], dir: &Path) -> Option<String> {
    match Command::new(cmd).args(args).current_dir(dir).output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{cmd} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Err(e) => {
            skip(&format!("cannot run {cmd}: {e}"), true);
            None
        }
    }
}

/// The debug ID from the build ID `readelf -n` prints (SPEC: first 16 bytes as a
/// little-endian GUID, age 0).
pub fn elf_debug_id(path: &Path) -> String {
    let notes = tool("readelf", &["-n", path.to_str().unwrap()], Path::new(".")).unwrap();
    let hex = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build ID")
        .trim()
        .to_string();
    let mut b: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    b.resize(16, 0);
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    b.iter().map(|x| format!("{x:02X}")).collect::<String>() + "0"
}

/// The first `PT_LOAD`'s address: module offsets are relative to it.
pub fn elf_image_base(path: &Path) -> u64 {
    let out = tool("readelf", &["-lW", path.to_str().unwrap()], Path::new(".")).unwrap();
    let load = out
        .lines()
        .find(|l| l.trim_start().starts_with("LOAD"))
        .unwrap();
    parse_hex(load.split_whitespace().nth(2).unwrap())
}

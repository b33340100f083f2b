//! The many-address DWARF path (one pass per unit) against addr2line address by address
//! (`PROFILER_SYMBOL_SERVER_ONE_BY_ONE`), whose answers the truth tests check against
//! llvm-symbolizer/addr2line: the same request must get the same answer, byte for byte,
//! on every ELF and Mach-O case, densely around every truth address (so inside inline
//! chains, at function starts and ends, and in padding).

mod common;

use std::collections::BTreeSet;
use std::process::Command;

use common::*;
use serde_json::{Value, json};

/// Asks `offsets` of module `name` (in `dir`) once through each path; asserts the answers
/// are the same bytes; returns the frames.
fn both_paths(dir: &str, name: &str, id: &str, offsets: &[u64], what: &str) -> Vec<Value> {
    let request = json!({
        "memoryMap": [[name, id]],
        "stacks": [offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()],
    });
    let args = ["--symbol-dir", dir, "/symbolicate/v5"];
    let batch = query_stdin(&args, &[], &request);
    let single = one_by_one(&args, &request);
    let frames = |v: &Value| v["results"][0]["stacks"][0].as_array().cloned().unwrap();
    let (b, s) = (frames(&batch), frames(&single));
    assert_eq!(b.len(), offsets.len(), "{what}");
    for (i, (x, y)) in b.iter().zip(&s).enumerate() {
        assert_eq!(x, y, "{what} offset {:#x}", offsets[i]);
    }
    assert_eq!(batch, single, "{what}");
    b
}

/// `query` with `PROFILER_SYMBOL_SERVER_ONE_BY_ONE`, which must say it took effect.
fn one_by_one(args: &[&str], request: &Value) -> Value {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(BIN)
        .arg("query")
        .args(args)
        .env_remove("DEBUGINFOD_URLS")
        .env("PROFILER_SYMBOL_SERVER_ONE_BY_ONE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let body = serde_json::to_vec(request).unwrap();
    child.stdin.take().unwrap().write_all(&body).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "query failed: {stderr}");
    let said = "PROFILER_SYMBOL_SERVER_ONE_BY_ONE: every DWARF address through addr2line alone";
    assert!(stderr.contains(said), "the switch was not read: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn compare(cases: &[&str]) -> usize {
    let mut truths: Vec<Truth> = Vec::new();
    for c in cases {
        truths.extend(truth_files(c).iter().map(|f| Truth::load(f)));
    }
    // Split-DWARF cases too: the batch path reads their .dwo/.dwp as addr2line does.
    let mut compared = 0;
    let mut inline_frames = 0;
    for t in &truths {
        let image = t.image();
        let dir = image.parent().unwrap().display().to_string();
        let name = image.file_name().unwrap().to_string_lossy().into_owned();
        let offsets: BTreeSet<u64> = t
            .offsets()
            .iter()
            .flat_map(|&o| o.saturating_sub(24)..o + 24)
            .collect();
        let offsets: Vec<u64> = offsets.into_iter().collect();
        let b = both_paths(&dir, &name, &t.breakpad_id(), &offsets, &t.case());
        compared += b.iter().filter(|f| f.get("function").is_some()).count();
        inline_frames += b
            .iter()
            .filter(|f| {
                f.get("inlines")
                    .is_some_and(|i| i.as_array().is_some_and(|a| !a.is_empty()))
            })
            .count();
    }
    assert!(inline_frames > 0, "no inline chain was compared");
    eprintln!(
        "{} cases, {compared} named addresses, {inline_frames} with inlines: same answers",
        truths.len()
    );
    compared
}

#[test]
fn batch_answers_equal_one_by_one_answers() {
    let n = compare(&["elf", "macho"]);
    assert!(n > 1000, "only {n} named addresses compared");
}

#[test]
fn batch_answers_equal_one_by_one_answers_shared_corpus() {
    with_shared_corpus(|| {
        compare(&["elf", "macho"]);
    });
}

/// A fuzzed gcc build (`fixtures/corrupt/batch-unreadable-origin.elf`) where addr2line
/// cannot read `main` (a reference among its DIEs is out of bounds: `find_frames` fails)
/// while the DIEs and lines each address needs are sound. Both paths answer as
/// llvm-symbolizer-19 does (`llvm-symbolizer --obj=FILE 0x1090 0x10a0 0x10d4`, its output
/// below); before, addr2line's path answered the symbol table's `main` with no file, line
/// or inline frame, and the two paths differed.
#[test]
fn a_function_addr2line_cannot_read_is_answered_from_what_the_address_needs() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corrupt");
    let name = "batch-unreadable-origin.elf";
    let id = elf_debug_id(&std::path::Path::new(dir).join(name));
    let frames = both_paths(dir, name, &id, &[0x1090, 0x10a0, 0x10d4], name);
    let at = |f: &Value| {
        let inlines: Vec<(String, String)> = f["inlines"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|i| {
                        (
                            i["function"].to_string(),
                            format!("{}:{}", i["file"], i["line"]),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        (
            f["function"].to_string(),
            format!("{}:{}", f["file"], f["line"]),
            inlines,
        )
    };
    let file = "\"/corpus/src/shapes.c\"";
    let main = "\"main\"".to_string();
    assert_eq!(at(&frames[0]), (main.clone(), format!("{file}:79"), vec![]));
    assert_eq!(at(&frames[1]), (main.clone(), format!("{file}:80"), vec![]));
    assert_eq!(
        at(&frames[2]),
        (
            main,
            format!("{file}:86"),
            vec![("\"fill_shapes\"".to_string(), format!("{file}:67"))]
        )
    );
}

/// Template-heavy C++ (STL sort, map, unordered_map inlined many levels deep), built here
/// with g++ and clang++ when installed: every other byte of every function, both paths.
const CPP: &str = r#"
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>
template <int N> struct S { int v[N]; int sum() const { int s = 0; for (int i = 0; i < N; i++) s += v[i] * (i + 3); return s; } };
#define F(j) __attribute__((noinline)) int f_##j(std::vector<int>& v, std::map<int, std::string>& m, std::unordered_map<std::string, int>& u) { \
    std::sort(v.begin(), v.end()); int s = std::accumulate(v.begin(), v.end(), j); m[s] = std::to_string(s); u[m[s]] += j; \
    S<j % 7 + 1> t{}; s += t.sum(); return s + (int)m.size() + (int)u.size(); }
F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7)
int main() { std::vector<int> v{3, 1, 2}; std::map<int, std::string> m; std::unordered_map<std::string, int> u;
    return f_0(v, m, u) + f_5(v, m, u) > 0; }
"#;

/// Whether it compared (false: the compiler is not installed, said by `tool`).
fn compare_built(compiler: &str, flags: &[&str]) -> bool {
    let dir = scratch(&format!("batch-{compiler}"));
    std::fs::write(dir.join("t.cpp"), CPP).unwrap();
    let mut args = vec!["-g", "-o", "t", "t.cpp"];
    args.extend_from_slice(flags);
    if Command::new(compiler).arg("--version").output().is_err() {
        skip(&format!("{compiler} is not installed"), false);
        return false;
    }
    tool(compiler, &args, &dir).unwrap();
    let bin = dir.join("t");
    let base = elf_image_base(&bin);
    let mut offsets = BTreeSet::new();
    for line in tool("nm", &["-S", "--defined-only", "t"], &dir)
        .unwrap()
        .lines()
    {
        let p: Vec<&str> = line.split_whitespace().collect();
        if p.len() == 4 && "tTwW".contains(p[2]) {
            let (start, size) = (parse_hex(p[0]), parse_hex(p[1]));
            offsets.extend((start..start + size).step_by(2).map(|a| a - base));
        }
    }
    let offsets: Vec<u64> = offsets.into_iter().collect();
    assert!(
        offsets.len() > 1000,
        "{compiler}: only {} addresses",
        offsets.len()
    );
    let d = dir.display().to_string();
    let b = both_paths(&d, "t", &elf_debug_id(&bin), &offsets, compiler);
    let deep = b
        .iter()
        .filter(|f| f["inlines"].as_array().is_some_and(|a| a.len() >= 3))
        .count();
    assert!(
        deep > 100,
        "{compiler}: only {deep} addresses with 3 or more inline frames"
    );
    eprintln!(
        "{compiler} {flags:?}: {} addresses, {deep} with 3+ inline frames: same",
        b.len()
    );
    true
}

#[test]
fn batch_answers_equal_one_by_one_answers_on_inline_heavy_cpp() {
    // g++ is one `.ci/run` installs: without any compiler this test compared nothing.
    let gcc = compare_built("g++", &["-O2"]);
    let clang19 = compare_built("clang++-19", &["-O2", "-gdwarf-4"]);
    let clang = compare_built("clang++", &["-O1"]);
    if !(gcc || clang19 || clang) {
        skip("no C++ compiler (g++, clang++): nothing compared", true);
    }
}

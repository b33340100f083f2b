//! Split DWARF (DWARF 5, `-gsplit-dwarf`) built as Firefox builds it, with linkage names
//! on abstract subprograms only (`-mllvm -dwarf-linkage-names=Abstract`): an out-of-line
//! function's DIE has only its bare name, and the skeleton unit has no `DW_AT_language`.
//! Its name must be the qualified one llvm-symbolizer gives (from the symbol table), as
//! in a non-split build, not the bare `DW_AT_name` (`run`, not `ns::Worker::run(int)`).

mod common;

use std::process::Command;

use common::*;
use serde_json::Value;

const CPP: &str = r#"
namespace ns {
struct Worker {
  int base;
  __attribute__((noinline)) int run(int x) const { return base * x + 7; }
  __attribute__((noinline)) static int twice(int x) { return 2 * x; }
};
template <typename T> __attribute__((noinline)) T scaled(T v, int k) { return v * k; }
}
int main(int argc, char **) {
  ns::Worker w{argc};
  return w.run(argc) + ns::Worker::twice(argc) + (int)ns::scaled<long>(argc, 3);
}
"#;

#[test]
fn split_dwarf_functions_without_linkage_names_are_qualified() {
    for t in ["clang++-19", "llvm-symbolizer-19", "llvm-dwp-19"] {
        if Command::new(t).arg("--version").output().is_err() {
            skip(&format!("{t} is not installed"), false);
            return;
        }
    }
    let dir = scratch("split-names");
    std::fs::write(dir.join("t.cpp"), CPP).unwrap();
    tool(
        "clang++-19",
        &[
            "-O1",
            "-gdwarf-5",
            "-gsplit-dwarf",
            "-mllvm",
            "-dwarf-linkage-names=Abstract",
            "-c",
            "t.cpp",
            "-o",
            "t.o",
        ],
        &dir,
    )
    .unwrap();
    tool("clang++-19", &["-Wl,--build-id", "t.o", "-o", "t"], &dir).unwrap();
    tool("llvm-dwp-19", &["-e", "t", "-o", "t.dwp"], &dir).unwrap();
    let bin = dir.join("t");
    let base = elf_image_base(&bin);
    let mut offsets = Vec::new();
    for line in tool("nm", &["--defined-only", "t"], &dir).unwrap().lines() {
        let p: Vec<&str> = line.split_whitespace().collect();
        if p.len() == 3 && "tTwW".contains(p[1]) && p[2].starts_with("_ZN") {
            offsets.push(parse_hex(p[0]) - base);
        }
    }
    assert!(offsets.len() >= 3, "{offsets:?}");
    let d = dir.display().to_string();
    let v = query_stdin(
        &["/symbolicate/v5", "--symbol-dir", &d],
        &[],
        &job("t", &elf_debug_id(&bin), &offsets),
    );
    let frames = frames_of(&v["results"][0]);
    let input: String = offsets
        .iter()
        .map(|o| format!("{:#x}\n", o + base))
        .collect();
    let llvm = common::run_with_stdin(
        Command::new("llvm-symbolizer-19")
            .args(["--functions=linkage", "--demangle", "--obj"])
            .arg(&bin),
        input.as_bytes(),
    );
    let text = String::from_utf8_lossy(&llvm.stdout).into_owned();
    let blocks: Vec<&str> = text.trim().split("\n\n").collect();
    assert_eq!(blocks.len(), frames.len(), "{text}");
    for (f, block) in frames.iter().zip(&blocks) {
        // The outermost function: the last name line of the block.
        let lines: Vec<&str> = block.lines().collect();
        let want = lines[lines.len() - 2];
        let got = f.get("function").and_then(Value::as_str).unwrap_or("");
        assert_eq!(got.replace("> >", ">>"), want.replace("> >", ">>"), "{f}");
        assert!(got.contains("ns::"), "{f}");
    }
}

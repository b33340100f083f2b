//! Local builds as each toolchain leaves them: abstract linkage names and
//! simple template names (Firefox's clang flags), dwz supplementary files, a `.dwp`
//! merged into the debuglink target. Inputs and llvm-symbolizer's answers are committed
//! under fixtures/local-builds (scripts/make-local-build-fixtures); every instruction of
//! `.text` is compared through the real binary's `query` mode.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/local-builds")
}

struct Oracle {
    debug_name: String,
    breakpad_id: String,
    addresses: Vec<Value>,
}

fn oracle(case: &str) -> Oracle {
    let v: Value = serde_json::from_slice(
        &std::fs::read(fixtures().join(format!("{case}.oracle.json"))).unwrap(),
    )
    .unwrap();
    Oracle {
        debug_name: v["image"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap()
            .to_string(),
        breakpad_id: v["breakpad_id"].as_str().unwrap().to_string(),
        addresses: v["addresses"].as_array().unwrap().clone(),
    }
}

/// `query /symbolicate/v5` for `offsets` of module `widget`; the frames and stderr.
fn symbolicate(dir: &Path, o: &Oracle, offsets: &[u64]) -> (Value, String) {
    use std::io::Write;
    let request = job(&o.debug_name, &o.breakpad_id, offsets);
    let mut child = Command::new(BIN)
        .arg("query")
        .arg("/symbolicate/v5")
        .arg("--symbol-dir")
        .arg(dir)
        .env_remove("DEBUGINFOD_URLS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let body = serde_json::to_vec(&request).unwrap();
    child.stdin.take().unwrap().write_all(&body).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "query failed");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["results"][0].clone(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Compares our frame with llvm-symbolizer's frames (innermost first).
fn check(frame: &Value, want: &[Value]) -> Result<(), String> {
    let outer = want.last().unwrap();
    // Addresses without a line (crt code, compiler-made code) are not this test's
    // subject.
    if outer["function"] == json!("??") || want.iter().all(|w| w["line"] == json!(0)) {
        return Ok(());
    }
    // Lines but no subprogram (padding inside a unit's range): the SPEC wants no
    // function there, llvm-symbolizer gives an empty name.
    if outer["function"] == json!("") && want.len() == 1 {
        return match frame.get("function") {
            Some(f) => Err(format!("expected no function, got {f}")),
            None => Ok(()),
        };
    }
    let mut got: Vec<&Value> = frame["inlines"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    got.push(frame);
    if got.len() != want.len() {
        return Err(format!(
            "inline depth {}, expected {} ({:?})",
            got.len() - 1,
            want.len() - 1,
            want.iter().map(|w| &w["function"]).collect::<Vec<_>>()
        ));
    }
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        let gname = g["function"].as_str().unwrap_or("");
        let wname = w["function"].as_str().unwrap();
        if !name_matches(gname, &[wname]) {
            return Err(format!("frame {k}: function {gname:?}, expected {wname:?}"));
        }
        match w["line"].as_u64() {
            Some(0) | None => {
                if g.get("line").is_some() {
                    return Err(format!("frame {k}: line {}, expected none", g["line"]));
                }
            }
            Some(line) => {
                if g["file"] != w["file"] || g["line"].as_u64() != Some(line) {
                    return Err(format!(
                        "frame {k}: {}:{}, expected {}:{line}",
                        g["file"], g["line"], w["file"]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Every instruction of the case's image in `dir`, against its oracle.
fn agree(table: &mut Agreement, case: &str, dir: &Path) {
    let o = oracle(case);
    let offsets: Vec<u64> = o
        .addresses
        .iter()
        .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
        .collect();
    let (result, stderr) = symbolicate(dir, &o, &offsets);
    assert_eq!(
        result["found_modules"][format!("{}/{}", o.debug_name, o.breakpad_id)],
        json!(true),
        "{case}: {} {stderr}",
        result["module_errors"]
    );
    let frames = frames_of(&result);
    let checks = frames
        .iter()
        .zip(&o.addresses)
        .map(|(f, a)| {
            let want = a["frames_innermost_first"].as_array().unwrap();
            check(f, want).map_err(|m| format!("{} {m}", a["module_offset"]))
        })
        .collect();
    table.add(case, checks);
}

#[test]
fn abstract_linkage_and_simple_template_names() {
    let mut table = Agreement::default();
    agree(&mut table, "abstract", &fixtures().join("abstract"));
    // Without symbols the qualified names come from the declaration chain and the
    // template parameters alone (compared without argument lists).
    agree(
        &mut table,
        "abstract-nosym",
        &fixtures().join("abstract-nosym"),
    );
    table.finish("abstract linkage names vs llvm-symbolizer, every instruction");
}

#[test]
fn full_outer_name_with_abstract_linkage_names() {
    let o = oracle("abstract");
    let update = o
        .addresses
        .iter()
        .find(|a| {
            a["frames_innermost_first"]
                .as_array()
                .unwrap()
                .last()
                .unwrap()["function"]
                .as_str()
                .unwrap()
                .contains("Widget::Update")
        })
        .unwrap();
    let offset = parse_hex(update["module_offset"].as_str().unwrap());
    let (result, _) = symbolicate(&fixtures().join("abstract"), &o, &[offset]);
    assert_eq!(
        frames_of(&result)[0]["function"],
        json!("ns::Widget::Update(ns::Inner&, ns::Holder<int> const&) const")
    );
}

#[test]
fn dwz_supplementary_file() {
    let mut table = Agreement::default();
    agree(&mut table, "dwz", &fixtures().join("dwz"));
    agree(&mut table, "dwz2", &fixtures().join("dwz"));
    table.finish("dwz (.gnu_debugaltlink) vs llvm-symbolizer before dwz, every instruction");
}

#[test]
fn dwz_without_its_supplementary_file_still_gives_lines() {
    let dir = scratch("dwz-missing");
    std::fs::copy(fixtures().join("dwz/widget"), dir.join("widget")).unwrap();
    let o = oracle("dwz");
    let offsets: Vec<u64> = o
        .addresses
        .iter()
        .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
        .collect();
    let (result, stderr) = symbolicate(&dir, &o, &offsets);
    assert!(
        stderr.contains("common.dwz"),
        "stderr must name the missing file: {stderr}"
    );
    let errors = result["module_errors"].to_string();
    assert!(errors.contains("MissingSupplementaryFile"), "{errors}");
    let mut with_lines = 0;
    for (f, a) in frames_of(&result).iter().zip(&o.addresses) {
        let want = a["frames_innermost_first"].as_array().unwrap();
        let outer = want.last().unwrap();
        if outer["line"] == json!(0) || outer["function"] == json!("") {
            continue;
        }
        // The innermost line is the line table's; names may be missing, never wrong.
        let innermost = f["inlines"].get(0).unwrap_or(f);
        assert_eq!(innermost["line"], want[0]["line"], "{f} vs {a}");
        assert_eq!(innermost["file"], want[0]["file"], "{f} vs {a}");
        if let Some(name) = f["function"].as_str() {
            assert!(
                name_matches(name, &[outer["function"].as_str().unwrap()]),
                "{f} vs {a}"
            );
        }
        with_lines += 1;
    }
    assert!(with_lines > 50, "{with_lines}");
    // Inline frames whose names sit in the missing file have none: left out, so that the
    // front-end shows its own placeholder, never a made-up `??`.
    let frames = frames_of(&result);
    let inlines: Vec<&Value> = frames
        .iter()
        .filter_map(|f| f["inlines"].as_array())
        .flatten()
        .collect();
    assert!(inlines.iter().all(|i| i["function"] != json!("??")));
    let unnamed = inlines
        .iter()
        .filter(|i| i.get("function").is_none())
        .count();
    assert!(
        unnamed > 0,
        "no inline frame without a name: the case tests nothing"
    );
}

#[test]
fn dwp_sections_inside_the_debuglink_file() {
    let mut table = Agreement::default();
    agree(&mut table, "dwp-in-dbg", &fixtures().join("dwp-in-dbg"));
    table.finish(".dwp merged into the .dbg vs llvm-symbolizer with the .dwp, every instruction");
}

#[test]
fn zstd_compressed_by_clang_and_lld() {
    let mut table = Agreement::default();
    agree(&mut table, "zstd-clang", &fixtures().join("zstd-clang"));
    table.finish("clang -gz=zstd vs llvm-symbolizer on the decompressed copy, every instruction");
}

/// An assembly file's functions: line rows, no subprogram DIE. The symbol table names
/// them and the line table gives file and line, on the batch path (every instruction at
/// once) and the one-by-one path (each address alone), as llvm-symbolizer answers.
#[test]
fn functions_with_line_rows_and_no_die_get_their_lines() {
    let mut table = Agreement::default();
    let dir = fixtures().join("asm-lines");
    agree(&mut table, "asm-lines", &dir);
    table.finish("code without subprogram DIEs vs llvm-symbolizer, every instruction");
    let o = oracle("asm-lines");
    let mut checked = 0;
    for a in &o.addresses {
        let want = a["frames_innermost_first"].as_array().unwrap();
        if !want[0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("lines.S"))
        {
            continue;
        }
        let offset = parse_hex(a["module_offset"].as_str().unwrap());
        let (result, _) = symbolicate(&dir, &o, &[offset]);
        let frame = &frames_of(&result)[0];
        check(frame, want).unwrap_or_else(|e| panic!("{offset:#x} alone: {e}"));
        assert!(frame["line"].is_u64(), "{frame}");
        checked += 1;
    }
    assert!(checked >= 5, "{checked} addresses in lines.S");
}

/// The OSO fixture in a scratch folder, `main.o` with modification time `mtime` (git
/// does not keep times; the debug map recorded 1700000000).
fn oso_copy(name: &str, mtime: u64) -> PathBuf {
    let dir = scratch(name);
    for f in ["prog", "main.o", "libw.a"] {
        std::fs::copy(fixtures().join("oso").join(f), dir.join(f)).unwrap();
    }
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(mtime);
    std::fs::File::options()
        .write(true)
        .open(dir.join("main.o"))
        .unwrap()
        .set_modified(t)
        .unwrap();
    dir
}

#[test]
fn mach_o_debug_map_objects_and_archive_members() {
    let dir = oso_copy("oso", 1_700_000_000);
    let mut table = Agreement::default();
    agree(&mut table, "oso", &dir);
    table.finish("Mach-O debug map (OSO) vs dsymutil + llvm-symbolizer, every instruction");
}

#[test]
fn a_changed_object_is_reported_not_used() {
    let dir = oso_copy("oso-changed", 1_700_000_001);
    let o = oracle("oso");
    let offsets: Vec<u64> = o
        .addresses
        .iter()
        .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
        .collect();
    let (result, _) = symbolicate(&dir, &o, &offsets);
    let errors = result["module_errors"].to_string();
    assert!(
        errors.contains("ObjectModified") && errors.contains("main.o"),
        "{errors}"
    );
    let (mut from_main, mut from_lib) = (0, 0);
    for (f, a) in frames_of(&result).iter().zip(&o.addresses) {
        let want = a["frames_innermost_first"].as_array().unwrap();
        if want[0]["file"].as_str().unwrap().ends_with("main.c") {
            // Symbol names only: nothing from the changed object.
            assert!(f.get("file").is_none() && f.get("inlines").is_none(), "{f}");
            from_main += 1;
        } else {
            // The archive member is unchanged and still used.
            assert!(check(f, want).is_ok(), "{f} vs {a}");
            from_lib += 1;
        }
    }
    assert!(from_main > 10 && from_lib > 10, "{from_main} {from_lib}");
}

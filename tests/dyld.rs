//! macOS system libraries from a dyld shared cache (`--dyld-shared-cache`), on the caches
//! `scripts/make-dyld-cache` packed from clang-built dylibs (fixtures/dyld/): every
//! address answered as llvm-nm and llvm-objdump say of the dylibs before packing
//! (expected.json), `/asm/v1` as llvm-objdump disassembles them, and a wrong UUID refused
//! with the reason.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{Value, json};

const ARCHES: &[&str] = &["arm64", "x86_64"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/dyld")
}

fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(fixtures().join("expected.json")).unwrap()).unwrap()
}

fn cache_of(arch: &str) -> String {
    let e = expected();
    let rel = e["caches"][arch]["cache"].as_str().unwrap();
    fixtures().join(rel).to_str().unwrap().to_string()
}

fn images(arch: &str) -> Vec<Value> {
    expected()["caches"][arch]["images"]
        .as_array()
        .unwrap()
        .clone()
}

fn hex(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// One job asking every expected address of every image.
fn job(images: &[Value]) -> Value {
    let memory_map: Vec<Value> = images
        .iter()
        .map(|i| json!([i["debugName"], i["breakpadId"]]))
        .collect();
    let frames: Vec<Value> = images
        .iter()
        .enumerate()
        .flat_map(|(k, i)| {
            i["addresses"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |a| json!([k, a["offset"]]))
        })
        .collect();
    json!({"memoryMap": memory_map, "stacks": [frames]})
}

/// Compares the frames of `answer` with the expected addresses; (named as expected, all).
fn check(label: &str, images: &[Value], answer: &Value) -> (usize, usize, usize, usize) {
    let frames = answer["results"][0]["stacks"][0].as_array().unwrap();
    let mut want = Vec::new();
    let mut local = Vec::new();
    for i in images {
        for a in i["addresses"].as_array().unwrap() {
            let f = i["functions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["name"] == a["function"])
                .unwrap();
            want.push(a.clone());
            local.push(f["local"].as_bool().unwrap());
        }
    }
    assert_eq!(frames.len(), want.len());
    let (mut ok, mut locals_ok, mut unnamed_ok) = (0, 0, 0);
    let mut problems = Vec::new();
    for ((f, a), is_local) in frames.iter().zip(&want).zip(&local) {
        let good = f["function"] == a["function"]
            && hex(&f["function_offset"]) == a["functionOffset"].as_u64().unwrap()
            && hex(&f["function_size"]) == a["functionSize"].as_u64().unwrap();
        if good {
            ok += 1;
            if *is_local {
                locals_ok += 1;
            }
            if a["function"].as_str().unwrap().starts_with("fun_") {
                unnamed_ok += 1;
            }
        } else {
            problems.push(format!("{label}: {a} answered {f}"));
        }
    }
    println!(
        "{label}: {ok} of {} addresses named as llvm-nm/llvm-objdump say ({locals_ok} in local functions from .symbols, {unnamed_ok} fun_<hex> where the local name is redacted)",
        want.len()
    );
    for p in problems.iter().take(10) {
        println!("  {p}");
    }
    (ok, want.len(), locals_ok, unnamed_ok)
}

#[test]
fn every_address_of_both_images_is_named_from_the_cache_in_query_mode() {
    for arch in ARCHES {
        let imgs = images(arch);
        let answer = query_stdin(
            &[
                "-q",
                "--dyld-shared-cache",
                &cache_of(arch),
                "/symbolicate/v5",
            ],
            &[],
            &job(&imgs),
        );
        let (ok, all, locals, unnamed) = check(&format!("{arch} query"), &imgs, &answer);
        assert_eq!(ok, all, "{arch}: {answer}");
        assert!(
            locals >= 8,
            "{arch}: local symbols (from .symbols) named: {locals}"
        );
        assert!(
            unnamed >= 4,
            "{arch}: fun_<hex> for a redacted local: {unnamed}"
        );
        for i in &imgs {
            let key = format!(
                "{}/{}",
                i["debugName"].as_str().unwrap(),
                i["breakpadId"].as_str().unwrap()
            );
            assert_eq!(answer["results"][0]["found_modules"][&key], true);
        }
    }
}

fn write_profile(dir: &Path, arch: &str, imgs: &[Value]) -> PathBuf {
    // The images at their system paths, which are no files here (as on macOS 11+).
    let libs: Vec<Value> = imgs
        .iter()
        .enumerate()
        .map(|(k, i)| {
            let start = 0x1_0000_0000u64 + (k as u64) * 0x10_0000;
            json!({"debugName": i["debugName"], "name": i["debugName"],
                "breakpadId": i["breakpadId"], "codeId": i["uuid"].as_str().unwrap().replace('-', ""),
                "path": i["path"], "debugPath": i["path"], "arch": arch,
                "start": start, "end": start + 0x10_0000, "offset": 0})
        })
        .collect();
    let profile = dir.join("profile.json");
    let doc = json!({"meta": {"version": 27}, "libs": libs, "threads": []});
    std::fs::write(&profile, serde_json::to_vec(&doc).unwrap()).unwrap();
    profile
}

#[test]
fn a_profile_with_the_images_at_their_absent_paths_is_symbolicated_and_disassembled() {
    for arch in ARCHES {
        let imgs = images(arch);
        for i in &imgs {
            assert!(!Path::new(i["path"].as_str().unwrap()).exists());
        }
        let dir = scratch(&format!("dyld-load-{arch}"));
        let profile = write_profile(&dir, arch, &imgs);
        let server = Server::start(&[
            "-q",
            "--dyld-shared-cache",
            &cache_of(arch),
            profile.to_str().unwrap(),
        ]);
        let answer = server.post_json("/symbolicate/v5", &job(&imgs)).json();
        let (ok, all, _, _) = check(&format!("{arch} load"), &imgs, &answer);
        assert_eq!(ok, all, "{arch}: {answer}");
        // Asked again: the same answers from the kept cache.
        let again = server.post_json("/symbolicate/v5", &job(&imgs)).json();
        assert_eq!(again, answer);
        asm_matches_llvm_objdump(&server, arch, &imgs);
        server.assert_alive();
    }
}

/// One function of a disassembly: name, start, (address, text) of each instruction.
type RefFunction = (String, u64, Vec<(u64, String)>);

/// The functions of an `llvm-objdump -d` recording.
fn parse_objdump(text: &str) -> Vec<RefFunction> {
    let mut out: Vec<RefFunction> = Vec::new();
    for line in text.lines() {
        let t = line.trim_end();
        if let Some(head) = t.strip_suffix(">:")
            && let Some((addr, name)) = head.split_once(" <")
            && let Ok(start) = u64::from_str_radix(addr.trim(), 16)
        {
            let name = name.strip_prefix('_').unwrap_or(name).to_string();
            out.push((name, start, Vec::new()));
            continue;
        }
        let Some((addr, rest)) = t.split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        if !rest.contains('\t') || rest.trim().is_empty() {
            continue;
        }
        if let Some(f) = out.last_mut() {
            f.2.push((addr, rest.trim().to_string()));
        }
    }
    out
}

/// The expected function of `image` whose symbol (before packing) is `symbol`.
fn function_with_symbol<'a>(image: &'a Value, symbol: &str) -> &'a Value {
    image["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["symbol"] == symbol)
        .unwrap_or_else(|| panic!("no function {symbol}"))
}

fn mnemonic(text: &str) -> String {
    text.split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// `/asm/v1` of every function of both images (their code read from the cache): the
/// instruction boundaries of llvm-objdump's disassembly of the dylib before packing, the
/// same mnemonics, direct calls named, and `continueUntilFunctionEnd` giving the whole
/// function.
fn asm_matches_llvm_objdump(server: &Server, arch: &str, imgs: &[Value]) {
    let (mut insts, mut same, mut calls) = (0, 0, 0);
    for i in imgs {
        let name = i["debugName"].as_str().unwrap();
        let text =
            std::fs::read_to_string(fixtures().join(arch).join(format!("{name}.objdump.txt")))
                .unwrap();
        let funcs = parse_objdump(&text);
        assert_eq!(funcs.len(), i["functions"].as_array().unwrap().len());
        for (fname, start, reference) in &funcs {
            let f = function_with_symbol(i, fname);
            let size = f["size"].as_u64().unwrap();
            assert_eq!(f["start"].as_u64().unwrap(), *start);
            for (req_size, until_end) in [(size, false), (1, true)] {
                let req = json!({"debugName": name, "debugId": i["breakpadId"], "name": name,
                    "startAddress": format!("{start:#x}"), "size": format!("{req_size:#x}"),
                    "continueUntilFunctionEnd": until_end});
                let answer = server.post_json("/asm/v1", &req).json();
                assert!(answer.get("error").is_none(), "{arch} {fname}: {answer}");
                let ours: Vec<(u64, String)> = answer["instructions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| {
                        (
                            start + x[0].as_u64().unwrap(),
                            x[1].as_str().unwrap().to_string(),
                        )
                    })
                    .collect();
                let addrs: Vec<u64> = ours.iter().map(|x| x.0).collect();
                let want: Vec<u64> = reference.iter().map(|x| x.0).collect();
                assert_eq!(addrs, want, "{arch} {fname} (whole: {until_end})");
                if until_end {
                    continue;
                }
                for ((_, mine), (_, theirs)) in ours.iter().zip(reference) {
                    insts += 1;
                    if mnemonic(mine) == mnemonic(theirs) {
                        same += 1;
                    }
                    if matches!(mnemonic(theirs).as_str(), "bl" | "call")
                        && let Some((_, callee)) = theirs.rsplit_once(" <_")
                    {
                        // Named as we name the function (fun_<hex> where redacted).
                        let callee = function_with_symbol(i, callee.trim_end_matches('>'))["name"]
                            .as_str()
                            .unwrap();
                        assert!(
                            mine.contains(&format!("<{callee}>")),
                            "{arch} {fname}: {theirs} shown as {mine}"
                        );
                        calls += 1;
                    }
                }
            }
        }
    }
    println!(
        "{arch} /asm/v1: {insts} instructions at llvm-objdump's boundaries, {same} same mnemonics, {calls} direct calls named"
    );
    assert!(insts > 40 && calls >= 3);
    assert!(
        same * 100 >= insts * 95,
        "{same} of {insts} mnemonics agree"
    );
}

fn with_uuid_changed(id: &str) -> String {
    let mut b = id.as_bytes().to_vec();
    b[31] = if b[31] == b'0' { b'1' } else { b'0' };
    String::from_utf8(b).unwrap()
}

#[test]
fn a_wrong_uuid_is_not_answered_from_the_cache_and_the_error_says_why() {
    let arch = "arm64";
    let mut imgs = images(arch);
    let real = imgs[0]["breakpadId"].as_str().unwrap().to_string();
    let wrong = with_uuid_changed(&real);
    imgs[0]["breakpadId"] = json!(wrong);
    let dir = scratch("dyld-wrong-uuid");
    let profile = write_profile(&dir, arch, &imgs);
    let server = Server::start(&[
        "-q",
        "--dyld-shared-cache",
        &cache_of(arch),
        profile.to_str().unwrap(),
    ]);
    let answer = server.post_json("/symbolicate/v5", &job(&imgs)).json();
    let result = &answer["results"][0];
    let key = format!("libfoo.dylib/{wrong}");
    assert_eq!(result["found_modules"][&key], false, "{answer}");
    let n = imgs[0]["addresses"].as_array().unwrap().len();
    for f in &result["stacks"][0].as_array().unwrap()[..n] {
        assert!(
            f.get("function").is_none(),
            "answered from the wrong image: {f}"
        );
    }
    let errors = result["module_errors"][&key].to_string();
    let uuid = |id: &str| {
        format!(
            "{}-{}-{}-{}-{}",
            &id[..8],
            &id[8..12],
            &id[12..16],
            &id[16..20],
            &id[20..32]
        )
    };
    for part in [
        "UnmatchedDebugId",
        "the dyld shared cache",
        "/usr/lib/system/libfoo.dylib",
        &uuid(&real),
        &uuid(&wrong),
        "macOS updated since the profile was recorded",
    ] {
        assert!(errors.contains(part), "{part:?} not in {errors}");
    }
    // The other image, right UUID, is still answered.
    let bar = server.post_json("/symbolicate/v5", &job(&imgs[1..])).json();
    let (ok, _, _, _) = check("libbar beside a wrong libfoo", &imgs[1..], &bar);
    assert_eq!(ok, imgs[1]["addresses"].as_array().unwrap().len());
    // No code from the wrong image either.
    let req = json!({"debugName": "libfoo.dylib", "debugId": wrong,
        "startAddress": format!("{:#x}", imgs[0]["textStart"].as_u64().unwrap()), "size": "0x10"});
    let asm = server.post_json("/asm/v1", &req).json();
    let e = asm["error"].as_str().unwrap_or_else(|| panic!("{asm}"));
    assert!(e.contains("macOS updated"), "{e}");
    server.assert_alive();
}

#[test]
fn a_cache_without_its_subcaches_or_cut_short_is_an_error_not_a_crash() {
    let arch = "x86_64";
    let imgs = images(arch);
    let dir = scratch("dyld-broken");
    let main = PathBuf::from(cache_of(arch));
    // Only the main file: its subcache and .symbols are missing.
    let alone = dir.join("dyld_shared_cache_x86_64");
    std::fs::copy(&main, &alone).unwrap();
    let answer = query_stdin(
        &[
            "-q",
            "--dyld-shared-cache",
            alone.to_str().unwrap(),
            "/symbolicate/v5",
        ],
        &[],
        &job(&imgs),
    );
    let key = format!("libfoo.dylib/{}", imgs[0]["breakpadId"].as_str().unwrap());
    let errors = answer["results"][0]["module_errors"][&key].to_string();
    assert!(errors.contains(".01"), "{errors}");
    // Every file cut at several places: answers (errors), never a crash.
    let data = std::fs::read(&main).unwrap();
    let sub = std::fs::read(format!("{}.01", main.display())).unwrap();
    let symbols = std::fs::read(format!("{}.symbols", main.display())).unwrap();
    for (which, cut) in [
        (0, 0x100),
        (0, 0x300),
        (0, 0x4100),
        (1, 0x200),
        (1, 0x8010),
        (2, 0x240),
        (2, 0x300),
    ] {
        let cutdir = dir.join(format!("cut-{which}-{cut:x}"));
        std::fs::create_dir_all(&cutdir).unwrap();
        let path = cutdir.join("dyld_shared_cache_x86_64");
        let mut files = [data.clone(), sub.clone(), symbols.clone()];
        files[which].truncate(cut);
        std::fs::write(&path, &files[0]).unwrap();
        std::fs::write(format!("{}.01", path.display()), &files[1]).unwrap();
        std::fs::write(format!("{}.symbols", path.display()), &files[2]).unwrap();
        let out = Command::new(BIN)
            .args([
                "query",
                "-q",
                "--dyld-shared-cache",
                path.to_str().unwrap(),
                "/symbolicate/v5",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(job(&imgs).to_string().as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(
            out.status.success(),
            "cut {which} at {cut:#x}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["results"][0]["stacks"].is_array(), "{v}");
    }
}

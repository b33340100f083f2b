//! `symbolicate` (CI mode) and sidecars: rewritten strings against the ground truth, the
//! rest of the profile byte for byte, idempotence, atomic outputs, and `load` answering
//! from a sidecar on a machine without the binaries.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::{Value, json};

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The corpus Linux profile with its placeholder paths pointing into the corpus.
fn linux_profile(dir: &Path) -> PathBuf {
    let c = corpus();
    let text = std::fs::read_to_string(c.join("profiles/gecko-profile-linux.json"))
        .unwrap()
        .replace("\"/corpus/", &format!("\"{}/", c.display()));
    let p = dir.join("linux.json");
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn corpus_profile_strings_match_the_ground_truth() {
    let dir = scratch("ci-linux");
    let input = linux_profile(&dir);
    let out = dir.join("out.json");
    let before = std::fs::read(&input).unwrap();
    let o = run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    ok(&o);
    assert_eq!(
        std::fs::read(&input).unwrap(),
        before,
        "the input was modified"
    );
    let summary = String::from_utf8_lossy(&o.stderr);
    assert!(
        summary.contains("DWARF from") && summary.contains("addresses resolved"),
        "{summary}"
    );

    let expected: Value = serde_json::from_slice(
        &std::fs::read(corpus().join("profiles/gecko-profile-linux.expected.json")).unwrap(),
    )
    .unwrap();
    let src: Value = serde_json::from_slice(&before).unwrap();
    let got: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(got["meta"]["presymbolicated"], json!(true));
    let mut table = Agreement::default();
    let mut results = Vec::new();
    for (t, thread) in src["threads"].as_array().unwrap().iter().enumerate() {
        for (i, s) in thread["stringTable"].as_array().unwrap().iter().enumerate() {
            let s = s.as_str().unwrap();
            let new = got["threads"][t]["stringTable"][i].as_str().unwrap();
            let Some(e) = expected["frames"].get(s) else {
                assert_eq!(new, s, "a string that is no address changed");
                continue;
            };
            results.push(if e["lib"].is_null() {
                // JIT code outside every lib keeps its hex string.
                if new == s {
                    Ok(())
                } else {
                    Err(format!("{s} became {new}"))
                }
            } else {
                let suffix = format!(" (in {})", e["debugName"].as_str().unwrap());
                match new.strip_suffix(&suffix) {
                    Some(name) if name_matches(name, &[e["function"].as_str().unwrap()]) => Ok(()),
                    _ => Err(format!("{s}: {new:?}, expected {}{suffix}", e["function"])),
                }
            });
        }
    }
    table.add("profiles/gecko-profile-linux.json (symbolicate)", results);
    table.finish("symbolicate: rewritten location strings against the ground truth");

    // A second run on its own output changes nothing.
    let again = dir.join("again.json");
    ok(&run(&[
        "symbolicate",
        out.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]));
    assert_eq!(std::fs::read(&again).unwrap(), std::fs::read(&out).unwrap());

    // OUT ending in .gz is gzipped, with the same content.
    let gz = dir.join("out.json.gz");
    ok(&run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        gz.to_str().unwrap(),
    ]));
    let mut text = Vec::new();
    use std::io::Read;
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    assert_eq!(text, std::fs::read(&out).unwrap());
}

/// A Breakpad store with one FUNC per lib, so gecko-2.json's made-up libs resolve to names
/// chosen here.
fn gecko2_store(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    for (name, id, func) in [
        ("firefox", "F1D957D30B413D55A539BBA06F90DD8F0", "RootMain"),
        (
            "firefox-webcontent",
            "9F950E2CE3CD3E1ABD06D80788B606E60",
            "ContentMain",
        ),
    ] {
        let d = store.join(name).join(id);
        std::fs::create_dir_all(&d).unwrap();
        let sym = format!(
            "MODULE mac x86_64 {id} {name}\nFILE 0 /src/{name}.cpp\nFUNC f00 100 0 {func}()\nf00 100 10 0\nFUNC 1a00 80 0 {func}Loop(int)\n1a00 80 20 0\n"
        );
        std::fs::write(d.join(format!("{name}.sym")), sym).unwrap();
    }
    store
}

#[test]
fn gecko_fixture_with_subprocess_keeps_every_other_byte() {
    let dir = scratch("ci-gecko2");
    let store = gecko2_store(&dir);
    let input = fixture_path("gecko-2.json");
    let out = dir.join("out.json");
    ok(&run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--breakpad-symbol-dir",
        store.to_str().unwrap(),
    ]));
    let before = std::fs::read_to_string(&input).unwrap();
    let after = std::fs::read_to_string(&out).unwrap();
    let v: Value = serde_json::from_str(&after).unwrap();
    // Each process uses its own libs: the same address names different functions.
    let root: Vec<&str> = v["threads"][0]["stringTable"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(root.contains(&"RootMain() (in firefox)"), "{root:?}");
    assert!(root.contains(&"RootMainLoop(int) (in firefox)"), "{root:?}");
    let sub: Vec<&str> = v["processes"][0]["threads"][0]["stringTable"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        sub.contains(&"ContentMain() (in firefox-webcontent)"),
        "{sub:?}"
    );
    assert!(
        sub.contains(&"ContentMainLoop(int) (in firefox-webcontent)"),
        "{sub:?}"
    );
    assert_eq!(v["meta"]["presymbolicated"], json!(true));
    // Everything else, byte for byte: undo the replacements and the added flag.
    let mut undone = after.replacen(",\"presymbolicated\":true", "", 1);
    for (name, addr) in [
        ("RootMain() (in firefox)", "0x100000f84"),
        ("RootMainLoop(int) (in firefox)", "0x100001a45"),
        ("ContentMain() (in firefox-webcontent)", "0x100000f84"),
        (
            "ContentMainLoop(int) (in firefox-webcontent)",
            "0x100001a45",
        ),
    ] {
        undone = undone.replace(&format!("\"{name}\""), &format!("\"{addr}\""));
    }
    assert_eq!(undone, before);
}

fn fixture_path(name: &str) -> PathBuf {
    profiler_fixture(name)
}

#[test]
fn truncated_or_unreadable_input_writes_nothing() {
    let dir = scratch("ci-truncated");
    let input = linux_profile(&dir);
    let text = std::fs::read(&input).unwrap();
    let cut = dir.join("cut.json");
    std::fs::write(&cut, &text[..text.len() * 2 / 3]).unwrap();
    let out = dir.join("out.json");
    let o = run(&[
        "symbolicate",
        cut.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--sidecar",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cut.json"));
    assert!(!out.exists());
    assert!(!dir.join("cut.syms.json").exists());
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "temporary files left behind: {left:?}");

    let o = run(&[
        "symbolicate",
        "/nonexistent/p.json",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/p.json"));
    // An output that cannot be written.
    let o = run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        "/nonexistent/dir/out.json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/dir"));
    // The input is never the output.
    let o = run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        input.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read(&input).unwrap(), text);
}

#[test]
fn sidecar_answers_like_the_live_resolver_without_the_binaries() {
    let dir = scratch("ci-sidecar");
    let input = linux_profile(&dir);
    ok(&run(&["symbolicate", input.to_str().unwrap(), "--sidecar"]));
    let sidecar = dir.join("linux.syms.json");
    assert!(sidecar.is_file());

    // The request the front-end would make for every native frame.
    let p: Value = serde_json::from_slice(&std::fs::read(&input).unwrap()).unwrap();
    let libs = p["libs"].as_array().unwrap();
    let memory_map: Vec<Value> = libs
        .iter()
        .map(|l| json!([l["debugName"], l["breakpadId"]]))
        .collect();
    let mut frames = Vec::new();
    for s in p["threads"][0]["stringTable"].as_array().unwrap() {
        let Some(a) = s
            .as_str()
            .and_then(|s| s.strip_prefix("0x"))
            .map(|h| u64::from_str_radix(h, 16).unwrap())
        else {
            continue;
        };
        if let Some(i) = libs
            .iter()
            .position(|l| l["start"].as_u64().unwrap() <= a && a < l["end"].as_u64().unwrap())
        {
            frames.push(json!([i, a - libs[i]["start"].as_u64().unwrap()]));
        }
    }
    let request = json!({"memoryMap": memory_map, "stacks": [frames]});
    let live = Server::start(&[input.to_str().unwrap()])
        .post_json("/symbolicate/v5", &request)
        .json();

    // Elsewhere: the unsymbolicated profile (its paths lead nowhere) and its sidecar only.
    let away = scratch("ci-sidecar-elsewhere");
    std::fs::copy(
        corpus().join("profiles/gecko-profile-linux.json"),
        away.join("profile.json"),
    )
    .unwrap();
    std::fs::copy(&sidecar, away.join("profile.syms.json")).unwrap();
    let server = Server::start(&[away.join("profile.json").to_str().unwrap()]);
    let from_sidecar = server.post_json("/symbolicate/v5", &request).json();
    assert_eq!(
        frames_of(&from_sidecar["results"][0]),
        frames_of(&live["results"][0])
    );
    assert!(
        frames_of(&live["results"][0])
            .iter()
            .any(|f| f.get("inlines").is_some())
    );
    for (k, v) in from_sidecar["results"][0]["found_modules"]
        .as_object()
        .unwrap()
    {
        assert_eq!(v, &json!(true), "{k}");
    }
    // Without the sidecar the same folder symbolicates nothing.
    std::fs::remove_file(away.join("profile.syms.json")).unwrap();
    let server = Server::start(&[away.join("profile.json").to_str().unwrap()]);
    let none = server.post_json("/symbolicate/v5", &request).json();
    assert!(
        frames_of(&none["results"][0])
            .iter()
            .all(|f| f.get("function").is_none())
    );
}

/// Every file in `dir`, by name.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn an_unwritable_sidecar_leaves_no_output_at_all() {
    let dir = scratch("ci-all-or-nothing");
    let input = linux_profile(&dir);
    let out = dir.join("out.json");
    // Tests may run as root, who ignores permission bits: the sidecar's "folder" is a
    // regular file, which fails for everyone.
    let blocker = dir.join("blocker");
    std::fs::write(&blocker, "a file, not a folder").unwrap();
    let side = blocker.join("p.syms.json");
    let o = run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--sidecar",
        side.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot write the sidecar {}", side.display()))
            && err.contains(&format!("{} is not a folder", blocker.display())),
        "{err}"
    );
    assert!(!err.contains(".tmp") && !err.contains("resolved"), "{err}");
    assert!(!out.exists(), "-o was written although the sidecar failed");
    assert_eq!(names_in(&dir), ["blocker", "linux.json"]);

    // A folder that takes no new file (only found when writing, after -o was made).
    if cfg!(target_os = "linux") {
        let o = run(&[
            "symbolicate",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--sidecar=/proc/self/p.syms.json",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains("cannot write the sidecar /proc/self/p.syms.json")
                && err.contains("folder /proc/self"),
            "{err}"
        );
        assert!(!err.contains(".tmp"), "{err}");
        assert!(!out.exists(), "-o was written although the sidecar failed");
        assert_eq!(names_in(&dir), ["blocker", "linux.json"]);
    }
}

/// A processed profile (the profiler's own format, as saved from it) of two corpus libs:
/// `(lib index, offset)` frames, one without an address and one outside every lib. The
/// tables are the thread's (versions before 60) or in `shared` (60 and later).
fn processed_profile(
    dir: &Path,
    libs: &[&Truth],
    frames: &[(usize, u64)],
    shared: bool,
) -> PathBuf {
    let libs_json: Vec<Value> = libs
        .iter()
        .map(|t| {
            let image = t.image();
            let name = image.file_name().unwrap().to_str().unwrap().to_string();
            json!({"name": name, "debugName": name, "path": image, "debugPath": image,
                   "breakpadId": t.breakpad_id(), "codeId": t.header["code_id"],
                   "arch": "x86_64"})
        })
        .collect();
    // One resource and one func per lib, then a func without a resource.
    let n = libs.len() as i64;
    let mut address: Vec<i64> = frames.iter().map(|&(_, o)| o as i64).collect();
    let mut func: Vec<i64> = frames.iter().map(|&(l, _)| l as i64).collect();
    address.extend([-1, 0x1234]);
    func.extend([0, n]);
    let len = address.len();
    let tables = json!({
        "frameTable": {"address": address, "func": func, "inlineDepth": vec![0; len],
                       "category": vec![Value::Null; len], "length": len},
        "funcTable": {"resource": (0..n).chain([-1]).collect::<Vec<_>>(),
                      "name": (0..=n).collect::<Vec<_>>(), "length": n + 1},
        "resourceTable": {"lib": (0..n).collect::<Vec<_>>(),
                          "name": (0..n).collect::<Vec<_>>(), "length": n},
        "stringArray": ["0x10", "0x20"],
    });
    let mut thread = json!({"name": "GeckoMain", "samples": {"stack": [], "length": 0}});
    let mut profile = json!({
        "meta": {"preprocessedProfileVersion": if shared { 70 } else { 49 }, "version": 24,
                 "interval": 1.0, "symbolicated": false, "categories": []},
        "libs": libs_json,
    });
    if shared {
        profile["shared"] = tables;
    } else {
        for (k, v) in tables.as_object().unwrap() {
            thread[k] = v.clone();
        }
    }
    profile["threads"] = json!([thread]);
    let p = dir.join("processed.json");
    std::fs::write(&p, serde_json::to_vec_pretty(&profile).unwrap()).unwrap();
    p
}

/// The function a sidecar gives for each (debugName, offset).
fn sidecar_names(path: &Path) -> Vec<(String, u64, String)> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let strings = v["string_table"].as_array().unwrap();
    let mut out = Vec::new();
    for m in v["data"].as_array().unwrap() {
        let table = m["symbol_table"].as_array().unwrap();
        for k in m["known_addresses"].as_array().unwrap() {
            let entry = &table[k[1].as_u64().unwrap() as usize];
            let name = strings[entry["symbol"].as_u64().unwrap() as usize].as_str();
            out.push((
                m["debug_name"].as_str().unwrap().to_string(),
                k[0].as_u64().unwrap(),
                name.unwrap().to_string(),
            ));
        }
    }
    out
}

#[test]
fn a_processed_profile_gets_a_sidecar_and_no_pretend_rewrite() {
    let dir = scratch("ci-processed");
    let truths = [
        Truth::load(&corpus().join("truth/elf/libmathlib.so.truth.json")),
        Truth::load(&corpus().join("truth/elf/shapes-gcc-O2-dwarf4.truth.json")),
    ];
    // A few addresses inside functions of each lib, with their expected names.
    let mut frames = Vec::new();
    let mut expected = Vec::new();
    for (l, t) in truths.iter().enumerate() {
        for a in t
            .addresses
            .iter()
            .filter(|a| a["expect"]["found"] == json!(true))
            .take(3)
        {
            let offset = parse_hex(a["module_offset"].as_str().unwrap());
            frames.push((l, offset));
            expected.push((l, offset, a["expect"].clone()));
        }
    }
    for shared in [false, true] {
        processed_profile_case(&dir, &truths, &frames, &expected, shared);
    }
}

fn processed_profile_case(
    dir: &Path,
    truths: &[Truth; 2],
    frames: &[(usize, u64)],
    expected: &[(usize, u64, Value)],
    shared: bool,
) {
    for e in std::fs::read_dir(dir).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let input = processed_profile(dir, &[&truths[0], &truths[1]], frames, shared);

    // -o cannot do what the profiler does: refused, with the way to get it symbolicated.
    let out = dir.join("out.json");
    let o = run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("processed profile")
            && err.contains(&format!("profiler-symbol-server load {}", input.display()))
            && err.contains("--sidecar"),
        "{err}"
    );
    assert!(!out.exists());
    assert_eq!(names_in(dir), ["processed.json"]);

    // --sidecar: the symbols of every address of the profile's tables.
    let side = dir.join("processed.syms.json");
    let o = run(&["symbolicate", input.to_str().unwrap(), "--sidecar"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    // The frame without an address and the one outside every lib are no lib's addresses.
    let n = frames.len();
    assert!(
        err.contains(&format!("2 modules, {n} of {n} addresses resolved")),
        "{err}"
    );
    let got = sidecar_names(&side);
    for (l, offset, e) in expected {
        let lib = truths[*l].image();
        let lib = lib.file_name().unwrap().to_str().unwrap();
        let Some((_, _, name)) = got.iter().find(|(m, o, _)| m == lib && o == offset) else {
            panic!("{lib} {offset:#x} missing from the sidecar: {got:?}");
        };
        let spellings: Vec<&str> = ["function", "function_llvm", "function_short"]
            .iter()
            .filter_map(|k| e[*k].as_str())
            .collect();
        assert!(
            name_matches(name, &spellings),
            "{lib} {offset:#x}: {name}, expected {spellings:?} (shared tables: {shared})"
        );
    }
    assert_eq!(got.len(), n, "{got:?}");
}

#[test]
fn json_that_is_no_profile_is_refused_and_nothing_is_written() {
    let dir = scratch("ci-not-a-profile");
    let input = dir.join("config.json");
    std::fs::write(&input, r#"{"name": "not a profile", "threads": 3}"#).unwrap();
    let out = dir.join("out.json");
    let o = run(&[
        "symbolicate",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--sidecar",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("config.json: not a profile") && err.contains("meta"),
        "{err}"
    );
    assert_eq!(names_in(&dir), ["config.json"]);
}

/// The example profile in `dir`, with a second lib that exists nowhere and `extra` of its
/// addresses added to the main thread's frames; with the example binary beside it when
/// `binary`.
fn example_with_missing_lib(dir: &Path, binary: bool, extra: usize) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example");
    let mut p: Value =
        serde_json::from_slice(&std::fs::read(fixture.join("profile.json")).unwrap()).unwrap();
    if binary {
        std::fs::copy(fixture.join("example"), dir.join("example")).unwrap();
    }
    let start = 0x7f00_0000_0000u64;
    p["libs"].as_array_mut().unwrap().push(json!({
        "start": start, "end": start + 0x10000, "offset": 0, "name": "libgone.so",
        "path": "/nonexistent/libgone.so", "debugName": "libgone.so",
        "debugPath": "/nonexistent/libgone.so", "arch": "x86_64",
        "breakpadId": "0123456789ABCDEF0123456789ABCDEF0"}));
    let thread = &mut p["threads"][0];
    for k in 0..extra {
        let strings = thread["stringTable"].as_array_mut().unwrap();
        strings.push(json!(format!("{:#x}", start + 0x100 + 0x10 * k as u64)));
        let index = strings.len() - 1;
        thread["frameTable"]["data"]
            .as_array_mut()
            .unwrap()
            .push(json!([index, false, 0, null, null, null, null, null]));
    }
    let path = dir.join("profile.json");
    std::fs::write(&path, serde_json::to_vec(&p).unwrap()).unwrap();
    path
}

/// The hex strings left in the main thread's string table that fall in one of the
/// profile's libs (those outside every lib, JIT code, are not asked for).
fn hex_left(profile: &Value) -> usize {
    let in_a_lib = |a: u64| {
        profile["libs"].as_array().unwrap().iter().any(|l| {
            l["start"].as_u64().is_some_and(|b| b <= a) && l["end"].as_u64().is_some_and(|e| a < e)
        })
    };
    profile["threads"][0]["stringTable"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str()?.strip_prefix("0x"))
        .filter_map(|h| u64::from_str_radix(h, 16).ok())
        .filter(|&a| in_a_lib(a))
        .count()
}

/// `meta.presymbolicated` only when every address got a name: the profiler never
/// symbolicates a profile so marked. Nothing resolved is exit 3; part resolved, exit 0
/// with a warning; both say how many stayed unresolved and why.
#[test]
fn presymbolicated_only_when_every_address_got_a_name() {
    // `symbolicate [-q]` of the example profile with `missing` addresses in a lib that
    // is nowhere (and the example's own lib unless `!with_example`): exit code, stderr,
    // the output, and how many addresses the input asked.
    let case = |name: &str, with_example: bool, missing: usize, quiet: bool| {
        let dir = scratch(name);
        let input = example_with_missing_lib(&dir, with_example, missing);
        let out = dir.join("out.json");
        let mut args = vec!["symbolicate"];
        if quiet {
            args.push("-q");
        }
        args.extend([input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        let o = run(&args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let got: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let src: Value = serde_json::from_slice(&std::fs::read(&input).unwrap()).unwrap();
        (o.status.code(), err, got, hex_left(&src))
    };
    let unflagged = |got: &Value| {
        assert!(
            got["meta"].get("presymbolicated").is_none(),
            "{}",
            got["meta"]
        )
    };

    // Every lib missing: outputs written as they are, no flag, exit 3.
    let (code, err, got, asked) = case("ci-nothing-resolved", false, 2, false);
    assert_eq!(code, Some(3), "{err}");
    unflagged(&got);
    assert_eq!(hex_left(&got), asked);
    assert!(
        err.contains(&format!(
            "error: {asked} of {asked} addresses stayed unresolved"
        )) && err.contains("libgone.so: 2, no symbols found")
            && err.contains("example: ")
            && err.contains("meta.presymbolicated not set"),
        "{err}"
    );
    // The same with -q: the error is still said.
    let (code, err, _, _) = case("ci-nothing-resolved-quiet", false, 2, true);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("stayed unresolved"), "{err}");

    // One lib found, one missing: its addresses named, the rest left, no flag, exit 0.
    let (code, err, got, _) = case("ci-partly-resolved", true, 2, false);
    assert_eq!(code, Some(0), "{err}");
    unflagged(&got);
    assert_eq!(hex_left(&got), 2);
    assert!(
        err.contains("warning: 2 of ") && err.contains("(libgone.so: 2, no symbols found)"),
        "{err}"
    );

    // Only the found lib: complete, so marked.
    let (code, err, got, _) = case("ci-fully-resolved", true, 0, false);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("unresolved"), "{err}");
    assert_eq!(got["meta"]["presymbolicated"], json!(true));
    assert_eq!(hex_left(&got), 0);
}

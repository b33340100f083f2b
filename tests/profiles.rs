//! Profiles: served as they are on disk (gzip passed through), and their libs used as
//! hints for finding debug files.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    profiler_fixture(name)
}

fn gzip_copy(src: &Path, dir: &Path) -> PathBuf {
    // A name that does not end in .gz: gzip is recognised by its bytes.
    let dst = dir.join(format!(
        "{}.compressed",
        src.file_name().unwrap().to_string_lossy()
    ));
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&std::fs::read(src).unwrap()).unwrap();
    std::fs::write(&dst, enc.finish().unwrap()).unwrap();
    dst
}

fn expected_profiler_url(server: &Server) -> String {
    let enc = |s: &str| {
        s.replace('%', "%25")
            .replace(':', "%3A")
            .replace('/', "%2F")
    };
    format!(
        "https://profiler.firefox.com/from-url/{}/?symbolServer={}",
        enc(&format!("{}/profile.json", server.base)),
        enc(&server.base)
    )
}

#[test]
fn profiles_are_served_byte_for_byte() {
    let dir = scratch("served-profiles");
    for name in ["gecko-2.json", "unsymbolicated.json"] {
        let plain = fixture(name);
        let gz = gzip_copy(&plain, &dir);
        for (file, gzipped) in [(&plain, false), (&gz, true)] {
            let server = Server::start(&[file.to_str().unwrap()]);
            assert_eq!(server.profiler_url, expected_profiler_url(&server));
            let r = server.get(&server.path("/profile.json"));
            assert_eq!(r.status, 200);
            assert_eq!(r.body, std::fs::read(file).unwrap(), "{}", file.display());
            assert_eq!(
                r.header("Content-Type"),
                Some("application/json; charset=UTF-8")
            );
            assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
            assert_eq!(
                r.header("Content-Encoding"),
                if gzipped { Some("gzip") } else { None },
                "{}",
                file.display()
            );
        }
    }
}

/// The candidate files the server tried for a module, from its module_errors.
fn tried(server: &Server, debug_name: &str, id: &str) -> String {
    let r = server
        .post_json("/symbolicate/v5", &job(debug_name, id, &[0x1000]))
        .json();
    let key = format!("{debug_name}/{id}");
    assert_eq!(r["results"][0]["found_modules"][&key], json!(false));
    r["results"][0]["module_errors"][&key].to_string()
}

#[test]
fn libs_of_root_and_subprocesses_are_hints() {
    let dir = scratch("lib-hints");
    let gecko = fixture("gecko-2.json");
    let gz = gzip_copy(&gecko, &dir);
    for file in [&gecko, &gz] {
        let server = Server::start(&[file.to_str().unwrap()]);
        // A root lib and a lib of the subprocess: their `path` was tried.
        let t = tried(&server, "firefox", "F1D957D30B413D55A539BBA06F90DD8F0");
        assert!(
            t.contains("/Applications/FirefoxNightly.app/Contents/MacOS/firefox:"),
            "{t}"
        );
        let t = tried(
            &server,
            "firefox-webcontent",
            "9F950E2CE3CD3E1ABD06D80788B606E60",
        );
        assert!(
            t.contains("firefox-webcontent.app/Contents/MacOS/firefox-webcontent:"),
            "{t}"
        );
        // A module the profile does not list has nothing to try.
        let t = tried(
            &server,
            "not-in-profile",
            "9F950E2CE3CD3E1ABD06D80788B606E60",
        );
        assert!(t.contains("NoCandidates"), "{t}");
    }
    // Processed format: root libs with debugPath.
    let server = Server::start(&[fixture("unsymbolicated.json").to_str().unwrap()]);
    let t = tried(&server, "a.out", "F61DA4D57CBB38CA8BDF059C645834520");
    assert!(t.contains("/usr/helloworld/a.out:"), "{t}");
    let t = tried(&server, "dyld", "F635824E318B3F0C842CC369737F2B680");
    assert!(t.contains("/usr/lib/dyld:"), "{t}");
}

#[test]
fn corpus_linux_profile_symbolicates_from_its_lib_paths() {
    let c = corpus();
    let src = c.join("profiles/gecko-profile-linux.json");
    let text = std::fs::read_to_string(&src)
        .unwrap()
        .replace("\"/corpus/", &format!("\"{}/", c.display()));
    let dir = scratch("linux-profile");
    let profile = dir.join("profile.json");
    std::fs::write(&profile, &text).unwrap();
    let libs: Vec<Value> = serde_json::from_str::<Value>(&text).unwrap()["libs"]
        .as_array()
        .unwrap()
        .clone();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(c.join("profiles/gecko-profile-linux.expected.json")).unwrap(),
    )
    .unwrap();

    // No --symbol-dir: only the profile's paths lead to the files.
    let server = Server::start(&[profile.to_str().unwrap()]);
    let memory_map: Vec<Value> = libs
        .iter()
        .map(|l| json!([l["debugName"], l["breakpadId"]]))
        .collect();
    let mut wanted = Vec::new();
    let mut frames = Vec::new();
    for (addr, e) in expected["frames"].as_object().unwrap() {
        let addr = parse_hex(addr);
        let Some(i) = libs.iter().position(|l| {
            l["start"].as_u64().unwrap() <= addr && addr < l["end"].as_u64().unwrap()
        }) else {
            assert!(e["lib"].is_null());
            continue;
        };
        let start = libs[i]["start"].as_u64().unwrap() - libs[i]["offset"].as_u64().unwrap();
        frames.push(json!([i, addr - start]));
        let mut entry = e.clone();
        entry["found"] = json!(true);
        wanted.push(json!({ "module_offset": e["module_offset"], "expect": entry }));
    }
    let r = server
        .post_json(
            "/symbolicate/v5",
            &json!({ "memoryMap": memory_map, "stacks": [frames] }),
        )
        .json();
    let result = &r["results"][0];
    for l in &libs {
        let key = format!(
            "{}/{}",
            l["debugName"].as_str().unwrap(),
            l["breakpadId"].as_str().unwrap()
        );
        assert_eq!(
            result["found_modules"][&key],
            json!(true),
            "{key}: {}",
            result["module_errors"]
        );
    }
    let mut table = Agreement::default();
    let got = frames_of(result);
    table.add(
        "profiles/gecko-profile-linux.json",
        got.iter()
            .zip(&wanted)
            .map(|(g, w)| check_frame(g, w))
            .collect(),
    );
    table.finish("Corpus Linux profile, symbolicated through its lib paths");
}

#[test]
fn url_comes_before_the_profile_is_parsed() {
    // A profile that is not JSON at all: the server still starts and serves it as it is
    // (its libs are read beside the loop), says once that it is broken, and symbolicates
    // without hints.
    let dir = scratch("lazy-profile");
    let profile = dir.join("broken.json");
    std::fs::write(&profile, b"{ this is not JSON").unwrap();
    let server = Server::start(&[profile.to_str().unwrap()]);
    let r = server.get(&server.path("/profile.json"));
    assert_eq!(r.body, b"{ this is not JSON");
    let t = tried(&server, "x", "9F950E2CE3CD3E1ABD06D80788B606E60");
    assert!(t.contains("NoCandidates"), "{t}");
    // The reader thread's verdict reaches the loop at its next tick: under load, after
    // the requests above have been answered.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !server.stderr().contains("not a valid profile") && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    let stderr = server.stderr();
    assert_eq!(stderr.matches("not a valid profile").count(), 1, "{stderr}");
    server.assert_alive();
}

/// The corpus profile of `os`, with its placeholder paths pointing into the corpus.
fn corpus_profile(os: &str, dir: &Path) -> (PathBuf, Vec<Value>, Value) {
    let c = corpus();
    let text = std::fs::read_to_string(c.join(format!("profiles/gecko-profile-{os}.json")))
        .unwrap()
        .replace("\"/corpus/", &format!("\"{}/", c.display()))
        .replace("C:\\\\corpus\\\\", &format!("{}/pe/", c.display()));
    let profile = dir.join(format!("{os}.json"));
    std::fs::write(&profile, &text).unwrap();
    let libs = serde_json::from_str::<Value>(&text).unwrap()["libs"]
        .as_array()
        .unwrap()
        .clone();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(c.join(format!("profiles/gecko-profile-{os}.expected.json"))).unwrap(),
    )
    .unwrap();
    (profile, libs, expected)
}

#[test]
fn corpus_macos_and_windows_profiles_symbolicate_from_their_lib_paths() {
    let dir = scratch("mac-win-profiles");
    let mut table = Agreement::default();
    for os in ["macos", "windows"] {
        let (profile, libs, expected) = corpus_profile(os, &dir);
        let server = Server::start(&[profile.to_str().unwrap()]);
        let memory_map: Vec<Value> = libs
            .iter()
            .map(|l| json!([l["debugName"], l["breakpadId"]]))
            .collect();
        let (mut frames, mut wanted) = (Vec::new(), Vec::new());
        for (addr, e) in expected["frames"].as_object().unwrap() {
            let addr = parse_hex(addr);
            let Some(i) = libs.iter().position(|l| {
                l["start"].as_u64().unwrap() <= addr && addr < l["end"].as_u64().unwrap()
            }) else {
                continue;
            };
            frames.push(json!([i, addr - libs[i]["start"].as_u64().unwrap()]));
            let mut entry = e.clone();
            entry["found"] = json!(true);
            wanted.push(json!({ "module_offset": e["module_offset"], "expect": entry }));
        }
        assert!(!frames.is_empty());
        let r = server
            .post_json(
                "/symbolicate/v5",
                &json!({ "memoryMap": memory_map, "stacks": [frames] }),
            )
            .json();
        let got = frames_of(&r["results"][0]);
        table.add(
            &format!("profiles/gecko-profile-{os}.json"),
            got.iter()
                .zip(&wanted)
                .map(|(g, w)| check_frame(g, w))
                .collect(),
        );
    }
    table.finish("Corpus macOS (dSYM via debugPath) and Windows (PDB via debugPath) profiles");
}

#[test]
fn shared_corpus_profiles_symbolicate() {
    with_shared_corpus(corpus_linux_profile_symbolicates_from_its_lib_paths);
    with_shared_corpus(corpus_macos_and_windows_profiles_symbolicate_from_their_lib_paths);
}

/// Polls the server's stderr until it holds `needle` (the profile is checked beside the
/// loop, right after the URL is printed); gives up after 10 s.
fn stderr_with(server: &Server, needle: &str) -> String {
    let t = std::time::Instant::now();
    loop {
        let s = server.stderr();
        if s.contains(needle) || t.elapsed() > std::time::Duration::from_secs(10) {
            return s;
        }
        std::thread::yield_now();
    }
}

#[test]
fn a_broken_or_odd_profile_is_served_with_one_warning_naming_the_problem() {
    let dir = scratch("odd-profiles");
    // JSON, but no profile: neither `meta` nor `libs`/`threads`.
    let odd = dir.join("hello.json");
    std::fs::write(&odd, br#"{"hello":"world"}"#).unwrap();
    let server = Server::start(&[odd.to_str().unwrap()]);
    assert_eq!(
        server.get(&server.path("/profile.json")).body,
        br#"{"hello":"world"}"#
    );
    let s = stderr_with(&server, "`meta`");
    assert_eq!(s.matches("warning: profile").count(), 1, "{s}");
    assert!(s.contains("neither `meta` nor `libs`/`threads`"), "{s}");
    server.assert_alive();
    drop(server);
    // A gzipped profile cut short (an interrupted download), without any request.
    let text = std::fs::read(corpus().join("profiles/gecko-profile-linux.json")).unwrap();
    let mut padded: Value = serde_json::from_slice(&text).unwrap();
    padded["pad"] = json!(
        (0..200_000u64)
            .map(|i| i.wrapping_mul(2_654_435_761) % 1_000_003)
            .collect::<Vec<_>>()
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &serde_json::to_vec(&padded).unwrap()).unwrap();
    let gz = gz.finish().unwrap();
    let cut = dir.join("cut.json.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let server = Server::start(&[cut.to_str().unwrap()]);
    let s = stderr_with(&server, "gzip stream ended early");
    assert!(s.contains("gzip stream ended early"), "{s}");
    server.assert_alive();
}

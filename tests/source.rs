//! `/source/v1`: a file is served only when the debug info at that address names it and
//! the debug file is local; everything else gets a clear `error` (with status 200, the
//! only status on which the front-end shows it).

mod common;

use common::*;
use serde_json::{Value, json};

const PROFILE: &str = "fixtures/example/profile.json";

/// The example's profile, its folder vouched for with `--symbol-dir`: its binary is beside
/// the profile (a relative path), whose debug info's names are served only then.
const EXAMPLE: [&str; 3] = [PROFILE, "--symbol-dir", "fixtures/example"];

fn example_lib() -> (String, String) {
    let p: Value = serde_json::from_slice(&std::fs::read(PROFILE).unwrap()).unwrap();
    let l = &p["libs"][0];
    (
        l["debugName"].as_str().unwrap().into(),
        l["breakpadId"].as_str().unwrap().into(),
    )
}

/// An address of the example whose inline frames name `mix.h`, found by asking the server.
fn inlined_offset(server: &Server, name: &str, id: &str) -> (u64, String, String) {
    let offsets: Vec<u64> = (0x1200..0x1258).collect();
    let r = server
        .post_json("/symbolicate/v5", &job(name, id, &offsets))
        .json();
    for f in frames_of(&r["results"][0]) {
        if let Some(inl) = f["inlines"].as_array()
            && let Some(h) = inl
                .iter()
                .find(|i| i["file"].as_str().is_some_and(|s| s.ends_with("mix.h")))
        {
            let offset = parse_hex(f["module_offset"].as_str().unwrap());
            return (
                offset,
                h["file"].as_str().unwrap().into(),
                f["file"].as_str().unwrap().into(),
            );
        }
    }
    panic!("no inlined address in the example's checksum()");
}

fn source(server: &Server, name: &str, id: &str, offset: u64, file: &str) -> Value {
    let r = server.post_json(
        "/source/v1",
        &json!({"debugName": name, "debugId": id, "moduleOffset": format!("{offset:#x}"), "file": file}),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
    r.json()
}

#[test]
fn serves_a_file_named_by_an_inline_frame() {
    let (name, id) = example_lib();
    let server = Server::start(&EXAMPLE);
    let (offset, header, outer) = inlined_offset(&server, &name, &id);
    let v = source(&server, &name, &id, offset, &header);
    assert_eq!(v["file"], json!(header));
    assert_eq!(
        v["source"],
        json!(std::fs::read_to_string("fixtures/example/mix.h").unwrap())
    );
    assert!(v["symbolsLastModified"].is_null() && v["sourceLastModified"].is_null());
    // The outer function's file too.
    let v = source(&server, &name, &id, offset, &outer);
    assert_eq!(
        v["source"],
        json!(std::fs::read_to_string("fixtures/example/example.c").unwrap())
    );
}

#[test]
fn refuses_files_the_debug_info_does_not_name() {
    let (name, id) = example_lib();
    let server = Server::start(&EXAMPLE);
    let (offset, header, _) = inlined_offset(&server, &name, &id);
    for (file, needle) in [
        ("./profile.json", "does not name"),
        ("/etc/passwd", "does not name"),
        ("./../example/mix.h", "does not name"),
        (
            &format!("{header}/../../../../../etc/passwd"),
            "does not name",
        ),
        ("../../../../../../etc/passwd", "does not name"),
    ] {
        let v = source(&server, &name, &id, offset, file);
        assert!(v.get("source").is_none(), "{file} was served");
        assert!(v["error"].as_str().unwrap().contains(needle), "{file}: {v}");
    }
    // An address in no function names no file at all.
    let v = source(&server, &name, &id, 0x10, &header);
    assert!(v["error"].as_str().unwrap().contains("no function"), "{v}");
    // Malformed requests are 400s naming the field.
    for (body, field) in [
        (
            json!({"debugId": id, "moduleOffset": "0x1", "file": "x"}),
            "debugName",
        ),
        (
            json!({"debugName": name, "debugId": id, "moduleOffset": "12", "file": "x"}),
            "moduleOffset",
        ),
        (
            json!({"debugName": name, "debugId": id, "moduleOffset": "0x1"}),
            "file",
        ),
    ] {
        let r = server.post_json("/source/v1", &body);
        assert_eq!(r.status, 400);
        assert!(r.json()["error"].as_str().unwrap().contains(field));
    }
    server.assert_alive();
}

// Symlinks need a privilege on Windows: this one is for Unix.
#[cfg(unix)]
#[test]
fn refuses_a_symlink_out_of_the_compilation_directory() {
    let (name, id) = example_lib();
    let dir = scratch("source-symlink");
    std::fs::copy("fixtures/example/example", dir.join("example")).unwrap();
    std::fs::copy("fixtures/example/example.c", dir.join("example.c")).unwrap();
    // mix.h, as the debug info names it, is a link to a file elsewhere.
    let outside = scratch("source-symlink-target").join("secret.h");
    std::fs::write(&outside, "secret").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("mix.h")).unwrap();
    let server = Server::start(&["--symbol-dir", dir.to_str().unwrap()]);
    let (offset, header, outer) = inlined_offset(&server, &name, &id);
    let v = source(&server, &name, &id, offset, &header);
    assert!(v.get("source").is_none(), "the symlink was followed: {v}");
    assert!(v["error"].as_str().unwrap().contains("outside"), "{v}");
    // The real file beside it is still served.
    let v = source(&server, &name, &id, offset, &outer);
    assert_eq!(
        v["source"],
        json!(std::fs::read_to_string(dir.join("example.c")).unwrap())
    );
}

#[test]
fn refuses_modules_found_only_through_breakpad() {
    let c = corpus();
    let t = Truth::load(&c.join("truth/elf/libmathlib.so.truth.json"));
    let server = Server::start(&[
        "--breakpad-symbol-dir",
        c.join("breakpad").to_str().unwrap(),
    ]);
    let e = t
        .addresses
        .iter()
        .find(|a| a["expect"]["found"] == json!(true) && a["expect"]["file"].is_string())
        .unwrap();
    let offset = parse_hex(e["module_offset"].as_str().unwrap());
    let file = e["expect"]["frames_innermost_first"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["file"]
        .as_str()
        .unwrap()
        .to_string();
    let v = source(&server, "libmathlib.so", &t.breakpad_id(), offset, &file);
    assert!(v.get("source").is_none());
    assert!(v["error"].as_str().unwrap().contains("Breakpad"), "{v}");
    // And a module that is not found at all says so.
    let v = source(
        &server,
        "nothere.so",
        "0123456789ABCDEF0123456789ABCDEF0",
        1,
        "x.c",
    );
    assert!(
        v["error"].as_str().unwrap().contains("no debug file"),
        "{v}"
    );
}

/// Builds `pseudo` from C whose functions are each said (`#line`) to come from one of
/// `files`; the module offsets of those functions per nm, in order.
#[cfg(target_os = "linux")]
fn program_naming(dir: &std::path::Path, files: &[String]) -> (std::path::PathBuf, Vec<u64>) {
    let mut c = String::new();
    for (i, f) in files.iter().enumerate() {
        c += &format!(
            "#line 1 \"{f}\"\nint f{i}(int x) {{ return x * {} + 1; }}\n",
            i + 3
        );
    }
    c += "#line 100 \"pseudo.c\"\nint main(int c, char **v) { (void)v; return ";
    c += &(0..files.len())
        .map(|i| format!("f{i}(c)"))
        .collect::<Vec<_>>()
        .join(" + ");
    c += "; }\n";
    std::fs::write(dir.join("pseudo.c"), c).unwrap();
    let binary = dir.join("pseudo");
    let out = std::process::Command::new("gcc")
        .args(["-O0", "-g", "-Wl,--build-id", "-o"])
        .arg(&binary)
        .arg(dir.join("pseudo.c"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nm = tool("nm", &[binary.to_str().unwrap()], dir).unwrap();
    let offsets = (0..files.len())
        .map(|i| {
            nm.lines()
                .find_map(|l| {
                    let mut it = l.split_whitespace();
                    let (a, _, n) = (it.next()?, it.next()?, it.next()?);
                    (n == format!("f{i}")).then(|| parse_hex(&format!("0x{a}")) + 4)
                })
                .unwrap()
        })
        .collect();
    (binary, offsets)
}

#[test]
#[cfg(target_os = "linux")]
fn never_serves_pseudo_files_however_they_are_named() {
    let dir = scratch("source-pseudo");
    // `..` past the root and a symlink into /proc, as well as the plain path.
    std::fs::create_dir_all(dir.join("x")).unwrap();
    let climb = "../".repeat(dir.join("x").components().count());
    std::os::unix::fs::symlink("/proc", dir.join("link")).unwrap();
    let files = [
        "/proc/self/environ".to_string(),
        format!("{}/x/{climb}proc/self/environ", dir.display()),
        format!("{}/link/self/environ", dir.display()),
        format!("{}/link/self/status", dir.display()),
    ];
    let (binary, offsets) = program_naming(&dir, &files);
    let id = elf_debug_id(&binary);
    let profile = dir.join("profile.json");
    let lib = json!({"debugName": "pseudo", "name": "pseudo", "breakpadId": id,
                     "path": binary.to_str().unwrap(), "start": 0, "end": 0, "offset": 0});
    std::fs::write(
        &profile,
        json!({"meta": {"version": 27}, "libs": [lib]}).to_string(),
    )
    .unwrap();
    // The binary lies beside the profile: its folder vouched for, so that only the
    // pseudo-file rule is left to refuse.
    let server = Server::start(&[
        profile.to_str().unwrap(),
        "--symbol-dir",
        dir.to_str().unwrap(),
    ]);
    for (file, offset) in files.iter().zip(&offsets) {
        // The debug info does name it (so only the pseudo-file rule refuses it).
        let r = server.post_json("/symbolicate/v5", &job("pseudo", &id, &[*offset]));
        let frame = &frames_of(&r.json()["results"][0])[0];
        assert_eq!(frame["file"].as_str(), Some(file.as_str()), "{frame}");
        let v = source(&server, "pseudo", &id, *offset, file);
        assert!(v.get("source").is_none(), "{file} was served: {v}");
        assert!(v["error"].as_str().unwrap().contains("pseudo-file"), "{v}");
    }
}

/// A library beside an untrusted profile (a relative lib path) whose debug info names a
/// file of the user's (`#line 1 "/home/user/.ssh/id_rsa"`): that file is never served,
/// and the error says how to vouch for the folder; vouched for, it is.
#[test]
#[cfg(target_os = "linux")]
fn never_serves_files_named_by_a_library_that_came_with_the_profile() {
    let dir = scratch("source-beside-profile");
    let secret = scratch("source-beside-profile-secret").join("id_rsa");
    std::fs::write(&secret, "-----BEGIN PRIVATE KEY-----\n").unwrap();
    let (binary, offsets) = program_naming(&dir, &[secret.display().to_string()]);
    let id = elf_debug_id(&binary);
    let profile = dir.join("profile.json");
    let file = secret.display().to_string();
    // Named relative to the profile, and absolute into the profile's own folder (an
    // attacker who guesses where the user saves downloads).
    let absolute = binary.display().to_string();
    for path in ["pseudo", absolute.as_str()] {
        let lib = json!({"name": "pseudo", "debugName": "pseudo", "breakpadId": id,
                         "path": path, "debugPath": path,
                         "start": 0, "end": 0x100000, "offset": 0});
        std::fs::write(
            &profile,
            json!({"meta": {"version": 24}, "libs": [lib], "threads": []}).to_string(),
        )
        .unwrap();
        let server = Server::start(&[profile.to_str().unwrap()]);
        // The names are answered; the file is not served.
        let r = server
            .post_json("/symbolicate/v5", &job("pseudo", &id, &offsets))
            .json();
        assert_eq!(frames_of(&r["results"][0])[0]["file"], json!(file), "{r}");
        let v = source(&server, "pseudo", &id, offsets[0], &file);
        let e = v["error"].as_str().unwrap_or_default();
        assert!(v.get("source").is_none(), "{path}: {v}");
        assert!(
            e.contains("came with the profile") && e.contains("--symbol-dir"),
            "{v}"
        );
    }
    // The user vouches for the folder: served.
    let server = Server::start(&[
        profile.to_str().unwrap(),
        "--symbol-dir",
        dir.to_str().unwrap(),
    ]);
    let v = source(&server, "pseudo", &id, offsets[0], &file);
    assert_eq!(v["source"], json!("-----BEGIN PRIVATE KEY-----\n"), "{v}");
}

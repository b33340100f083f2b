//! The shape of what clients read: each endpoint's answer and error bodies, and `--help`,
//! compared with files in `tests/golden/`. A change in shape is then a reviewed diff, not a
//! surprise for the front-end or mach. `UPDATE_GOLDEN=1 cargo test --test golden` rewrites
//! the files (review them with `git diff` before committing). The values themselves are
//! checked against independent tools elsewhere (`tests/example.rs`, `tests/formats.rs`);
//! paths are written relative to the checkout.

mod common;

use std::path::Path;

use common::*;
use serde_json::{Value, json};

fn golden(name: &str, actual: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let actual = actual.replace(&root.display().to_string(), "<checkout>");
    let file = root.join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&file, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", file.display()));
    assert!(
        expected == actual,
        "{name} changed (UPDATE_GOLDEN=1 cargo test --test golden rewrites it):\n--- expected\n{expected}\n--- actual\n{actual}"
    );
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap() + "\n"
}

const ID: &str = "1F888B6846F37DD10B8171FD83CBEC3B0";

fn example_server() -> Server {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example");
    // The example's binary is beside its profile (a relative path): its sources are
    // served once the user vouches for that folder.
    Server::start(&[
        dir.join("profile.json").to_str().unwrap(),
        "--symbol-dir",
        dir.to_str().unwrap(),
    ])
}

#[test]
fn answers_of_each_endpoint() {
    let server = example_server();
    // checksum + 4 (in a function), main's first byte, an address in no function.
    let r = server.post_json(
        "/symbolicate/v5",
        &json!({"memoryMap": [["example", ID]], "stacks": [[[0, 0x1204], [0, 0x1080], [0, 0x10]]]}),
    );
    assert_eq!(r.status, 200);
    golden("symbolicate.json", &pretty(&r.json()));
    let r = server.post_json(
        "/asm/v1",
        &json!({"debugName": "example", "debugId": ID, "name": "example",
                "startAddress": "0x1260", "size": "0x10"}),
    );
    assert_eq!(r.status, 200);
    golden("asm.json", &pretty(&r.json()));
    // The file as the debug info names it (and `/symbolicate/v5` answered).
    let r = server.post_json(
        "/source/v1",
        &json!({"debugName": "example", "debugId": ID, "moduleOffset": "0x1204",
                "file": "./example.c"}),
    );
    assert_eq!(r.status, 200);
    let mut v = r.json();
    // The source text itself is the file's; the shape is what matters here.
    if let Some(s) = v.get_mut("source") {
        *s = json!(format!("<{} bytes>", s.as_str().unwrap_or("").len()));
    }
    golden("source.json", &pretty(&v));
}

#[test]
fn error_bodies() {
    let server = example_server();
    let bad = server.post("/symbolicate/v5", b"{ not json");
    let missing_field = server.post_json("/asm/v1", &json!({"debugName": "example"}));
    let unknown = server.post_json("/nope/v1", &json!({}));
    let no_source = server.post_json(
        "/source/v1",
        &json!({"debugName": "example", "debugId": ID, "moduleOffset": "0x1204",
                "file": "/no/such/file.c"}),
    );
    let outside = server.get("/not-the-token/profile.json");
    let mut out = String::new();
    for (what, r) in [
        ("malformed JSON", &bad),
        ("a missing field", &missing_field),
        ("an unknown path under the token", &unknown),
        ("a source that is not there", &no_source),
        ("a path outside the token", &outside),
    ] {
        out += &format!(
            "{what}: {} {}\n",
            r.status,
            String::from_utf8_lossy(&r.body)
        );
    }
    golden("errors.txt", &out);
}

#[test]
fn help_of_each_mode() {
    for (name, args) in [
        ("help.txt", vec!["--help"]),
        ("help-load.txt", vec!["load", "--help"]),
        ("help-symbolicate.txt", vec!["symbolicate", "--help"]),
        ("help-query.txt", vec!["query", "--help"]),
    ] {
        let o = std::process::Command::new(BIN)
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success());
        golden(name, &String::from_utf8_lossy(&o.stdout));
    }
}

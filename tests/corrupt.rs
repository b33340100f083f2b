//! Corrupt debug files cost only their own module: a parser panic becomes a module error,
//! the rest of the request is answered, and the file is not parsed again.

mod common;

use std::process::Command;

use common::*;
use serde_json::{Value, json};

/// Inputs in `fixtures/corrupt/` (mutants of `fixtures/corpus/pe/mathlib.pdb` that made
/// the `pdb` crate panic) with the module next to them that still works.
fn request(bad_dir: &std::path::Path) -> (Value, String, String) {
    let id = case_id("pe/mathlib.dll");
    let good = case_id("elf/libmathlib.so");
    let t = Truth::load(&corpus().join("truth/elf/libmathlib.so.truth.json"));
    let inside = t
        .addresses
        .iter()
        .find(|a| a["expect"]["found"] == json!(true))
        .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
        .unwrap();
    let req = json!({"jobs": [
        {"memoryMap": [["mathlib.pdb", id], ["libmathlib.so", good]],
         "stacks": [[[0, 0x1000], [1, inside], [0, 0x1010]]]}
    ]});
    let _ = bad_dir;
    (req, id, good)
}

#[test]
fn a_panicking_parser_costs_only_its_module() {
    for bad in ["pdb-panic-c13.pdb", "pdb-panic-modi.pdb"] {
        let dir = scratch(&format!("corrupt-{bad}"));
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corrupt/").to_string() + bad,
            dir.join("mathlib.pdb"),
        )
        .unwrap();
        let (req, id, good) = request(&dir);
        let elf = corpus().join("elf");
        // query: exit 0, the other module answered.
        let file = dir.join("req.json");
        std::fs::write(&file, req.to_string()).unwrap();
        let out = Command::new(BIN)
            .args(["query", "--symbol-dir", dir.to_str().unwrap()])
            .args(["--symbol-dir", elf.to_str().unwrap()])
            .args(["/symbolicate/v5", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{bad}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = &v["results"][0];
        assert_eq!(
            r["found_modules"][format!("mathlib.pdb/{id}")],
            json!(false),
            "{bad}: {r}"
        );
        let errors = r["module_errors"][format!("mathlib.pdb/{id}")].to_string();
        assert!(errors.contains("ParseError"), "{bad}: {errors}");
        assert_eq!(
            r["found_modules"][format!("libmathlib.so/{good}")],
            json!(true)
        );
        assert!(r["stacks"][0][1]["function"].is_string(), "{r}");
        // The server: same answer, twice (not parsed again), and it goes on.
        let server = Server::start(&[
            "--symbol-dir",
            dir.to_str().unwrap(),
            "--symbol-dir",
            elf.to_str().unwrap(),
        ]);
        for _ in 0..2 {
            let r = server.post_json("/symbolicate/v5", &req);
            assert_eq!(r.status, 200);
            let v = r.json();
            assert_eq!(
                v["results"][0]["found_modules"][format!("mathlib.pdb/{id}")],
                json!(false)
            );
        }
        let panics = server.stderr().matches("panicked").count();
        assert!(panics <= 1, "parsed again: {}", server.stderr());
        server.assert_alive();
    }
}

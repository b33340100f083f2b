//! `/symbolicate/v5` through the real server on every ELF case of the corpus, compared
//! with the ground truth (function, offset, size, file/line, whole inline chain).

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::*;
use serde_json::{Value, json};

fn elf_truths() -> Vec<Truth> {
    let mut files = truth_files("elf");
    files.extend(truth_files("fixtures/symbolic/linux"));
    files.iter().map(|f| Truth::load(f)).collect()
}

fn symbol_dir_args(truths: &[Truth]) -> Vec<String> {
    let dirs: BTreeSet<PathBuf> = truths
        .iter()
        .map(|t| t.image().parent().unwrap().to_path_buf())
        .collect();
    dirs.iter()
        .flat_map(|d| ["--symbol-dir".to_string(), d.display().to_string()])
        .collect()
}

fn debug_name(t: &Truth) -> String {
    t.image()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn every_elf_truth_case_matches() {
    let truths = elf_truths();
    assert!(
        truths.len() >= 14,
        "expected every ELF truth file, found {}",
        truths.len()
    );
    let args = symbol_dir_args(&truths);
    let server = Server::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let mut table = Agreement::default();
    // As the front-end does: one job per library, at most 10 jobs per request.
    for batch in truths.chunks(10) {
        let jobs: Vec<Value> = batch
            .iter()
            .map(|t| job(&debug_name(t), &t.breakpad_id(), &t.offsets()))
            .collect();
        let r = server.post_json("/symbolicate/v5", &json!({ "jobs": jobs }));
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        assert_eq!(r.header("Access-Control-Allow-Origin"), Some("*"));
        let answer = r.json();
        let results = answer["results"].as_array().unwrap();
        assert_eq!(results.len(), batch.len());
        for (t, result) in batch.iter().zip(results) {
            let key = format!("{}/{}", debug_name(t), t.breakpad_id());
            assert_eq!(
                result["found_modules"][&key],
                json!(true),
                "{key} not found: {}",
                result["module_errors"]
            );
            let frames = frames_of(result);
            assert_eq!(frames.len(), t.addresses.len());
            let checks = frames
                .iter()
                .zip(&t.addresses)
                .map(|(f, e)| {
                    check_frame(f, e).map_err(|m| format!("{} {}", e["module_offset"], m))
                })
                .collect();
            table.add(&t.case(), checks);
        }
    }
    table.finish("ELF agreement with ground truth (/symbolicate/v5 over HTTP)");
}

#[test]
fn query_answers_like_the_server() {
    let truths: Vec<Truth> = elf_truths()
        .into_iter()
        .filter(|t| t.case() == "elf/tmpl-gcc-O2-dwarf4")
        .collect();
    let t = &truths[0];
    let request = json!({ "jobs": [job(&debug_name(t), &t.breakpad_id(), &t.offsets())] });
    let dir = t.image().parent().unwrap().display().to_string();
    let server = Server::start(&["--symbol-dir", &dir]);
    let over_http = server.post_json("/symbolicate/v5", &request).json();

    let req_file = scratch("query-like-server").join("req.json");
    std::fs::write(&req_file, serde_json::to_vec(&request).unwrap()).unwrap();
    let out = std::process::Command::new(BIN)
        .args(["query", "--symbol-dir", &dir, "/symbolicate/v5"])
        .arg(&req_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_query: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_query, over_http);
    // And the answer is the right one, not merely the same.
    let frames = frames_of(&from_query["results"][0]);
    for (f, e) in frames.iter().zip(&t.addresses) {
        check_frame(f, e).unwrap();
    }

    // Standard input when no file is given.
    let from_stdin = query_stdin(&["--symbol-dir", &dir, "/symbolicate/v5"], &[], &request);
    assert_eq!(from_stdin, over_http);
}

#[test]
fn a_file_with_another_debug_id_is_never_used() {
    let truths = elf_truths();
    let t = truths
        .iter()
        .find(|t| t.case() == "elf/shapes-gcc-O2-dwarf4")
        .unwrap();
    let dir = t.image().parent().unwrap().display().to_string();
    let server = Server::start(&["--symbol-dir", &dir]);
    // Same name, another ID (the ID of a different corpus binary).
    let wrong = "7E9F0D7AD2F7D88F5BC85158309EED810";
    let offsets = t.offsets();
    let r = server
        .post_json("/symbolicate/v5", &job(&debug_name(t), wrong, &offsets))
        .json();
    let key = format!("{}/{wrong}", debug_name(t));
    let result = &r["results"][0];
    assert_eq!(result["found_modules"][&key], json!(false));
    let errors = result["module_errors"][&key].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["name"] == "UnmatchedDebugId"
            && e["message"]
                .as_str()
                .unwrap()
                .contains(&t.image().display().to_string())),
        "{errors:?}"
    );
    for f in frames_of(result) {
        assert!(f.get("function").is_none(), "{f}");
        assert_eq!(f["module"], json!(debug_name(t)));
    }
    // The right ID in either letter case still works on the same server.
    let lower = t.breakpad_id().to_ascii_lowercase();
    let r = server
        .post_json("/symbolicate/v5", &job(&debug_name(t), &lower, &offsets))
        .json();
    assert_eq!(
        r["results"][0]["found_modules"][format!("{}/{lower}", debug_name(t))],
        json!(true)
    );
}

#[test]
fn corrupt_and_truncated_debug_files_are_module_errors() {
    let truths = elf_truths();
    let t = truths
        .iter()
        .find(|t| t.case() == "elf/tmpl-gcc-O2-dwarf4")
        .unwrap();
    let dir = scratch("corrupt-debug-files");
    let data = std::fs::read(t.image()).unwrap();
    let name = debug_name(t);
    let server = Server::start(&["--symbol-dir", dir.to_str().unwrap()]);
    let offsets = t.offsets();
    for (what, bytes) in [
        ("truncated", data[..data.len() / 3].to_vec()),
        ("not an object file", b"garbage, not ELF".to_vec()),
        ("empty", Vec::new()),
    ] {
        std::fs::write(dir.join(&name), &bytes).unwrap();
        let r = server.post_json("/symbolicate/v5", &job(&name, &t.breakpad_id(), &offsets));
        assert_eq!(r.status, 200, "{what}");
        let v = r.json();
        let key = format!("{name}/{}", t.breakpad_id());
        assert_eq!(
            v["results"][0]["found_modules"][&key],
            json!(false),
            "{what}"
        );
        let errors = v["results"][0]["module_errors"][&key].to_string();
        assert!(
            errors.contains(&dir.join(&name).display().to_string()),
            "{what}: {errors}"
        );
        assert!(
            frames_of(&v["results"][0])
                .iter()
                .all(|f| f.get("function").is_none())
        );
        server.assert_alive();
    }
    // Once the real file is there, the same server finds it.
    std::fs::write(dir.join(&name), &data).unwrap();
    let v = server
        .post_json("/symbolicate/v5", &job(&name, &t.breakpad_id(), &offsets))
        .json();
    for (f, e) in frames_of(&v["results"][0]).iter().zip(&t.addresses) {
        check_frame(f, e).unwrap();
    }
}

#[test]
fn shared_corpus_elf_cases_match() {
    with_shared_corpus(every_elf_truth_case_matches);
}

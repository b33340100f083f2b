//! The bundled example (README's first command) works, and agrees with GNU addr2line,
//! an independent symbolizer, on every address of its profile.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::{Value, json};

/// GNU addr2line's frames for `offset`, innermost first: (function, file name, line).
fn gnu_frames(binary: &str, offset: u64) -> Vec<(String, String, Option<u64>)> {
    let out = Command::new("addr2line")
        .args(["-f", "-i", "-e", binary, &format!("{offset:#x}")])
        .output()
        .expect("GNU addr2line (binutils) is needed as the oracle");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    lines
        .chunks(2)
        .map(|c| {
            let (file, line) = c[1].rsplit_once(':').unwrap();
            let line = line.split(' ').next().unwrap().parse().ok();
            let file = file.rsplit('/').next().unwrap().to_string();
            (c[0].to_string(), file, line)
        })
        .collect()
}

#[test]
fn example_profile_symbolicates_like_gnu_addr2line() {
    // Started from another folder: the profile's relative lib paths are found beside it.
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/profile.json");
    let elsewhere = scratch("example-elsewhere");
    let server = Server::start_in(&elsewhere, &[profile.to_str().unwrap()]);
    let profile = profile.to_str().unwrap();
    let text = std::fs::read(profile).unwrap();
    assert_eq!(server.get(&server.path("/profile.json")).body, text);
    let p: Value = serde_json::from_slice(&text).unwrap();
    let lib = &p["libs"][0];
    let (start, end) = (lib["start"].as_u64().unwrap(), lib["end"].as_u64().unwrap());
    let offsets: Vec<u64> = p["threads"][0]["stringTable"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            s.as_str()?
                .strip_prefix("0x")
                .map(|h| u64::from_str_radix(h, 16).unwrap())
        })
        .filter(|a| (start..end).contains(a))
        .map(|a| a - start)
        .collect();
    assert!(offsets.len() >= 8);
    let r = server
        .post_json(
            "/symbolicate/v5",
            &json!({"jobs": [job(lib["debugName"].as_str().unwrap(), lib["breakpadId"].as_str().unwrap(), &offsets)]}),
        )
        .json();
    let frames = frames_of(&r["results"][0]);
    let mut inlined = 0;
    for (f, &offset) in frames.iter().zip(&offsets) {
        let ours: Vec<(String, String, Option<u64>)> = f["inlines"]
            .as_array()
            .map(|a| a.iter().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .chain([f])
            .map(|x| {
                let file = x["file"]
                    .as_str()
                    .unwrap_or("??")
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string();
                (
                    x["function"].as_str().unwrap_or("??").to_string(),
                    file,
                    x["line"].as_u64(),
                )
            })
            .collect();
        inlined += ours.len() - 1;
        let gnu = gnu_frames("fixtures/example/example", offset);
        assert_eq!(ours, gnu, "offset {offset:#x}");
    }
    assert!(inlined > 0, "the example is meant to show inline frames");
}

//! Hostile profiles: a small gzipped file whose `libs` value is a
//! 500 MB string, and a profile with 100 000 distinct libs. The server must answer within
//! 10 s and stay under 512 MiB, and say which file and limit stopped it.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Server, elf_debug_id, scratch, tool};
use serde_json::{Value, json};

const BUDGET: Duration = Duration::from_secs(10);
const MAX_RSS_KB: u64 = 512 << 10;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/example/example")
        .canonicalize()
        .unwrap()
}

/// `checksum`'s address per nm (the independent oracle).
fn checksum_address(binary: &Path) -> u64 {
    let nm = tool("nm", &[binary.to_str().unwrap()], Path::new(".")).expect("nm");
    nm.lines()
        .find_map(|l| {
            let mut it = l.split_whitespace();
            let (a, _, n) = (it.next()?, it.next()?, it.next()?);
            (n == "checksum").then(|| u64::from_str_radix(a, 16).unwrap())
        })
        .expect("checksum in nm's output")
}

/// The server's peak resident memory, in KiB.
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmHWM")
}

/// One gzip member holding `data` (a reader decodes concatenated members as one stream).
fn gzip_member(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Symbolicates `checksum+1` of the example binary; the answer's function and the time
/// it took.
fn symbolicate_checksum(server: &Server) -> (Value, Duration) {
    let binary = example();
    let id = elf_debug_id(&binary);
    let offset = checksum_address(&binary) + 1;
    let started = Instant::now();
    let r = server.post_json(
        "/symbolicate/v5",
        &json!({"memoryMap": [["example", id]], "stacks": [[[0, offset]]]}),
    );
    let took = started.elapsed();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let frame = r.json()["results"][0]["stacks"][0][0].clone();
    (frame["function"].clone(), took)
}

#[test]
fn a_gzipped_libs_string_of_500_mb_is_refused_within_limits() {
    let dir = scratch("bomb-libs-string");
    let profile = dir.join("profile.json.gz");
    // 500 gzip members of 1 MiB of 'a' each: about 1 MB on disk, 500 MB decompressed.
    let chunk = gzip_member(&vec![b'a'; 1 << 20]);
    let mut gz = gzip_member(br#"{"meta":{"version":27,"interval":1},"libs":""#);
    for _ in 0..500 {
        gz.extend_from_slice(&chunk);
    }
    gz.extend_from_slice(&gzip_member(br#"","threads":[],"processes":[]}"#));
    assert!(gz.len() < 2 << 20, "{} bytes", gz.len());
    std::fs::write(&profile, &gz).unwrap();
    let symbol_dir = example().parent().unwrap().display().to_string();
    let server = Server::start(&[
        profile.to_str().unwrap(),
        "--symbol-dir",
        symbol_dir.as_str(),
    ]);
    let started = Instant::now();
    let (function, took) = symbolicate_checksum(&server);
    assert_eq!(function, json!("checksum"));
    // A wall-clock bound on purpose: a bomb's limit is a time limit, and the bomb would
    // take minutes without it.
    assert!(took < BUDGET, "answered after {took:?}");
    let rss = peak_rss_kb(server.pid());
    eprintln!(
        "libs string bomb: answered in {:?}, peak RSS {} MiB",
        started.elapsed(),
        rss >> 10
    );
    assert!(rss < MAX_RSS_KB, "peak RSS {rss} KiB");
    // The warning names the file and the limit.
    let deadline = Instant::now() + BUDGET;
    while !server.stderr().contains("64 MiB") && Instant::now() < deadline {
        std::thread::yield_now();
    }
    let stderr = server.stderr();
    let warning = stderr
        .lines()
        .find(|l| l.contains("64 MiB"))
        .unwrap_or_else(|| panic!("no warning naming the limit: {stderr}"));
    assert!(warning.contains(profile.to_str().unwrap()), "{warning}");
    server.assert_alive();
}

#[test]
fn a_profile_with_100000_libs_is_answered_within_limits() {
    let dir = scratch("bomb-many-libs");
    let profile = dir.join("profile.json");
    let binary = example();
    let mut libs: Vec<Value> = (0..99_999u32)
        .map(|i| {
            json!({"debugName": format!("lib{i}.so"), "name": format!("lib{i}.so"),
                   "breakpadId": format!("{i:032X}0"), "path": format!("/nonexistent/lib{i}.so"),
                   "start": 0, "end": 0, "offset": 0})
        })
        .collect();
    // The one real lib comes last; only its path leads to the binary (no --symbol-dir).
    libs.push(json!({"debugName": "example", "name": "example",
        "breakpadId": elf_debug_id(&binary), "path": binary.to_str().unwrap(),
        "start": 0, "end": 0, "offset": 0}));
    let doc = json!({"meta": {"version": 27, "interval": 1}, "libs": libs,
                     "threads": [], "processes": []});
    std::fs::write(&profile, serde_json::to_vec(&doc).unwrap()).unwrap();
    let server = Server::start(&[profile.to_str().unwrap()]);
    let (function, took) = symbolicate_checksum(&server);
    assert_eq!(function, json!("checksum"));
    // A wall-clock bound on purpose: a bomb's limit is a time limit, and the bomb would
    // take minutes without it.
    assert!(took < BUDGET, "answered after {took:?}");
    let rss = peak_rss_kb(server.pid());
    eprintln!(
        "100 000 libs: answered in {took:?}, peak RSS {} MiB",
        rss >> 10
    );
    assert!(rss < MAX_RSS_KB, "peak RSS {rss} KiB");
    server.assert_alive();
}

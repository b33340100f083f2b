//! Idle-time symbolication: the server resolves the profile's own addresses before the
//! front-end asks (`src/api/idle.rs`), and what it answers then is what it answers
//! without that head start (`query`, which does no idle work).

mod common;

use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// The profile's frame addresses that fall in one of its libs, as module offsets, by lib
/// (read from the JSON here: the strings `0x…` of each thread's string table).
fn profile_offsets(profile: &Value) -> Vec<(String, String, Vec<u64>)> {
    let libs = profile["libs"].as_array().unwrap();
    let mut out = Vec::new();
    for lib in libs {
        let (start, end) = (lib["start"].as_u64().unwrap(), lib["end"].as_u64().unwrap());
        let mut offsets: Vec<u64> = profile["threads"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| t["stringTable"].as_array().unwrap().iter())
            .filter_map(|s| s.as_str()?.strip_prefix("0x"))
            .filter_map(|h| u64::from_str_radix(h, 16).ok())
            .filter(|a| (start..end).contains(a))
            .map(|a| a - start + lib["offset"].as_u64().unwrap_or(0))
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        out.push((
            lib["debugName"].as_str().unwrap().to_string(),
            lib["breakpadId"].as_str().unwrap().to_string(),
            offsets,
        ));
    }
    out
}

/// `--no-open`: idle work starts after the first request (mach asks at once); it resolves
/// every address of the profile, and the front-end's request is then answered as a
/// server without a head start answers it.
#[test]
fn the_profiles_addresses_are_resolved_before_they_are_asked_for() {
    let profile_path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example/profile.json");
    let profile: Value = serde_json::from_slice(&std::fs::read(profile_path).unwrap()).unwrap();
    let wanted = profile_offsets(&profile);
    let total: usize = wanted.iter().map(|w| w.2.len()).sum();
    assert!(total > 5, "{wanted:?}");
    let server = Server::start(&[profile_path]);
    assert_eq!(server.get(&server.path("/profile.json")).status, 200);
    // Bounded: a few milliseconds of work here.
    let t = Instant::now();
    let line = loop {
        let err = server.stderr();
        if let Some(l) = err
            .lines()
            .find(|l| l.contains("ahead of the profiler's requests"))
        {
            break l.to_string();
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no idle work done: {err}"
        );
        std::thread::yield_now();
    };
    assert!(
        line.starts_with(&format!(
            "Resolved {total} addresses of the profile's 1 module"
        )),
        "{line} (the profile has {total})"
    );
    for (name, id, offsets) in &wanted {
        let request = job(name, id, offsets);
        let answer = server.post_json("/symbolicate/v5", &request).json();
        let fresh = query_stdin(
            &["/symbolicate/v5", "--symbol-dir", "fixtures/example"],
            &[],
            &request,
        );
        assert_eq!(answer, fresh);
        assert!(
            frames_of(&answer["results"][0])
                .iter()
                .any(|f| f.get("function").is_some())
        );
    }
    server.assert_alive();
}

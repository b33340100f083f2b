//! `scripts/bench --smoke` still works: tiny inputs, one repetition, our server only
//! (samply too if it is on PATH). Nothing here is timed; the figures are only printed.

mod common;

#[test]
fn bench_smoke_runs() {
    let dir = common::scratch("bench-smoke");
    let Some(mut python) = common::python3() else {
        return;
    };
    let out = python
        .arg("scripts/bench")
        .arg("--smoke")
        .env("BENCH_BIN", common::BIN)
        .env("BENCH_DIR", &dir)
        .output()
        .expect("run scripts/bench");
    assert!(
        out.status.success(),
        "scripts/bench --smoke failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    println!("{table}");
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("smoke-results.json")).unwrap()).unwrap();
    let rows = &results["rows"];
    for row in [
        "cold 10k",
        "warm 100k",
        "cold .sym 10k",
        "peak RSS MB (after 100k)",
    ] {
        assert!(
            rows[row]["median"]["ours"].as_f64().is_some(),
            "no {row} row: {rows}"
        );
    }
    // The benchmark's requests really symbolicate: every sampled offset is in a function.
    let inputs = &results["inputs"];
    assert!(inputs["debug_bytes"].as_u64().unwrap() > 0);
    assert_eq!(rows["functions found 10k"]["median"]["ours"], 200.0);
    assert_eq!(rows["functions found .sym"]["median"]["ours"], 200.0);
}

//! The many-address DWARF path (one pass per unit) against addr2line address by address
//! (`PROFILER_SYMBOL_SERVER_ONE_BY_ONE`), whose answers the truth tests check against
//! llvm-symbolizer/addr2line: the same request must get the same answer, byte for byte,
//! on every ELF and Mach-O case, densely around every truth address (so inside inline
//! chains, at function starts and ends, and in padding).

mod common;

use std::collections::BTreeSet;

use common::*;
use serde_json::{Value, json};

fn compare(cases: &[&str]) -> usize {
    let mut truths: Vec<Truth> = Vec::new();
    for c in cases {
        truths.extend(truth_files(c).iter().map(|f| Truth::load(f)));
    }
    // Split-DWARF cases resolve through addr2line either way; keep them (the batch path
    // must hand them over).
    let mut compared = 0;
    let mut inline_frames = 0;
    for t in &truths {
        let image = t.image();
        let dir = image.parent().unwrap().display().to_string();
        let name = image.file_name().unwrap().to_string_lossy().into_owned();
        let offsets: BTreeSet<u64> = t
            .offsets()
            .iter()
            .flat_map(|&o| o.saturating_sub(24)..o + 24)
            .collect();
        let offsets: Vec<u64> = offsets.into_iter().collect();
        let request = json!({
            "memoryMap": [[name, t.breakpad_id()]],
            "stacks": [offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()],
        });
        let args = ["--symbol-dir", dir.as_str(), "/symbolicate/v5"];
        let batch = query_stdin(&args, &[], &request);
        let single = query_stdin(
            &args,
            &[("PROFILER_SYMBOL_SERVER_ONE_BY_ONE", "1")],
            &request,
        );
        let frames = |v: &Value| v["results"][0]["stacks"][0].as_array().cloned().unwrap();
        let (b, s) = (frames(&batch), frames(&single));
        assert_eq!(b.len(), offsets.len(), "{}", t.case());
        for (i, (x, y)) in b.iter().zip(&s).enumerate() {
            assert_eq!(x, y, "{} offset {:#x}", t.case(), offsets[i]);
        }
        assert_eq!(batch, single, "{}", t.case());
        compared += b.iter().filter(|f| f.get("function").is_some()).count();
        inline_frames += b
            .iter()
            .filter(|f| {
                f.get("inlines")
                    .is_some_and(|i| i.as_array().is_some_and(|a| !a.is_empty()))
            })
            .count();
    }
    assert!(inline_frames > 0, "no inline chain was compared");
    eprintln!(
        "{} cases, {compared} named addresses, {inline_frames} with inlines: same answers",
        truths.len()
    );
    compared
}

#[test]
fn batch_answers_equal_one_by_one_answers() {
    let n = compare(&["elf", "macho"]);
    assert!(n > 1000, "only {n} named addresses compared");
}

#[test]
fn batch_answers_equal_one_by_one_answers_shared_corpus() {
    with_shared_corpus(|| {
        compare(&["elf", "macho"]);
    });
}

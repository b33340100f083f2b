//! The batch DWARF path against addr2line, on mutated ELF files: every answer of one
//! many-address lookup must equal the answer addr2line gives address by address (the
//! second lookup with `set_one_by_one(true)`; `tests/batch.rs` compares the same two
//! through `PROFILER_SYMBOL_SERVER_ONE_BY_ONE`, across processes).
//! The file is opened for its own debug ID, once per path (no state shared between them),
//! and asked densely over the first 12 KiB of module offsets (the seeds' code and padding).
//! A different answer, or a panic outside the `open` that contains parser panics, is a
//! crash.
#![no_main]
use libfuzzer_sys::fuzz_target;
use profiler_symbol_server::internals::{
    Companion, DebugId, LoadContext, Module, open, set_one_by_one,
};
use std::path::Path;

/// The module at `path`, for whatever debug ID it has.
fn load(path: &Path) -> Option<Module> {
    let none = |_: &Path, _: Companion<'_>| Vec::new();
    let ctx = LoadContext {
        path,
        companions: &none,
        verbose: false,
    };
    let want = DebugId::new("00000000000000000000000000000000A");
    match open::open(&want, &ctx) {
        Ok(m) => Some(m),
        Err(e) if e.message.contains("has debug ID ") => e
            .message
            .split("has debug ID ")
            .nth(1)
            .and_then(|r| r.split([',', ' ']).next())
            .and_then(|id| open::open(&DebugId::new(id), &ctx).ok()),
        Err(_) => None,
    }
}

fuzz_target!(|data: &[u8]| {
    // Not an ELF file: the batch path only reads ELF and Mach-O DWARF, and the other
    // targets cover the other formats.
    if !data.starts_with(b"\x7fELF") {
        return;
    }
    let path = std::env::temp_dir().join(format!("pss-fuzz-batch-{}.bin", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let offsets: Vec<u64> = (0..0x3000u64).collect();
    let Some(batch) = load(&path) else { return };
    set_one_by_one(false);
    let batch = batch.lookup_sorted(&offsets);
    set_one_by_one(true);
    let single = load(&path).map(|m| {
        offsets
            .iter()
            .map(|&o| m.lookup_sorted(&[o]).pop().flatten())
            .collect::<Vec<_>>()
    });
    let Some(single) = single else {
        panic!("the file opened once and not again");
    };
    for (i, (b, s)) in batch.iter().zip(&single).enumerate() {
        assert_eq!(b, s, "offset {:#x}: batch path, then addr2line", offsets[i]);
    }
});

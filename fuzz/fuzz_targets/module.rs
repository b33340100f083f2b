//! Module loading and lookups through the formats' one entry: ELF, Mach-O (thin and fat),
//! PE, PDB, Breakpad. The file's own debug ID is asked for, so parsing goes past the ID
//! check. Panics are bugs here even though the store would contain them.
#![no_main]
use libfuzzer_sys::fuzz_target;
use profiler_symbol_server::resolve::{Companion, LoadContext, open};
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("pss-fuzz-{}.bin", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let none = |_: &Path, _: Companion<'_>| Vec::new();
    let ctx = LoadContext { path: &path, companions: &none, verbose: false };
    let want = "00000000000000000000000000000000A";
    let module = match open::open(want, &ctx) {
        Ok(m) => Some(m),
        // Ask again for the ID the file has.
        Err(e) if e.kind == "UnmatchedDebugId" => e
            .message
            .split("its debug ID is ")
            .nth(1)
            .and_then(|r| r.split([',', ' ']).next())
            .and_then(|id| open::open(id, &ctx).ok()),
        Err(_) => None,
    };
    if let Some(m) = module {
        let offsets: Vec<u64> = (0..128u64).map(|i| i * 0x20).collect();
        let _ = m.lookup_sorted(&offsets);
    }
});

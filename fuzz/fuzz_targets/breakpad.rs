//! Breakpad `.sym` indexing and lookups.
#![no_main]
use libfuzzer_sys::fuzz_target;
use profiler_symbol_server::internals::SymFile;

fuzz_target!(|data: &[u8]| {
    if let Ok(sym) = SymFile::from_bytes(data.to_vec(), std::path::Path::new("fuzz.sym")) {
        let offsets: Vec<u64> = (0..64u64)
            .map(|i| i * 0x10)
            .chain([0x1000, u64::MAX])
            .collect();
        sym.lookup_each(&offsets, &mut |_, _| {});
    }
});

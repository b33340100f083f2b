//! The zip reader: central directory, entries, zip64, inflate with its caps.
#![no_main]
use libfuzzer_sys::fuzz_target;
use profiler_symbol_server::internals::ZipArchive;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("pss-fuzz-{}.zip", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    if let Ok(zip) = ZipArchive::open(&path) {
        let names: Vec<String> = zip.names().map(str::to_string).collect();
        for n in names.iter().take(8) {
            let _ = zip.read(n);
        }
    }
});

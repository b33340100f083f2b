//! The profile reader and the CI rewriter on any text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use profiler_symbol_server::internals::Input;
use profiler_symbol_server::internals::{Replacements, rewrite};
use profiler_symbol_server::internals::{Want, read};

fuzz_target!(|data: &[u8]| {
    let mut repl = Replacements::new();
    if let Ok(processes) = read(&mut Input::new(data), Want::LibsAndAddresses) {
        for p in processes {
            let names = p
                .addresses
                .iter()
                .map(|&a| (a, format!("f{a:x}")))
                .collect();
            repl.insert(p.path, names);
        }
    }
    let _ = read(&mut Input::new(data), Want::RootLibs);
    let _ = rewrite(data, std::io::sink(), &repl, true);
});

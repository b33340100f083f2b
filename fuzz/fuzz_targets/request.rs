//! The API's request parsing: any body to any endpoint gives an answer or an error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use profiler_symbol_server::internals::Api;
use profiler_symbol_server::internals::SymbolStore;

fuzz_target!(|data: &[u8]| {
    let store = SymbolStore::new(Default::default());
    let mut api = Api::new(store, None, true);
    for path in ["/symbolicate/v5", "/source/v1", "/asm/v1"] {
        let _ = api.handle(path, data);
    }
});

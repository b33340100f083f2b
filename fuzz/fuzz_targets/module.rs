//! Module loading and lookups through the formats' one entry: ELF, Mach-O (thin and fat),
//! PE, PDB, Breakpad. The file's own debug ID is asked for, so parsing goes past the ID
//! check. A panic in our code is a crash, even one `open` contained. The `pdb` crate 0.8
//! (vendor/pdb) panics on some corrupt streams (see fixtures/corrupt/): `open` turns those
//! into the module's error, and they are let through here; any other panic aborts. The
//! file is also opened in slices (idle work's way, `resolve/pace.rs`), stopping at every
//! pause: it must end as the load at once does, with the same answers.
#![no_main]
use libfuzzer_sys::fuzz_target;
use profiler_symbol_server::internals::DebugId;
use profiler_symbol_server::internals::{Companion, LoadContext, open};
use std::cell::RefCell;
use std::path::Path;

thread_local! {
    static WHERE: RefCell<String> = const { RefCell::new(String::new()) };
}

fn run(data: &[u8]) {
    let path = std::env::temp_dir().join(format!("pss-fuzz-{}.bin", std::process::id()));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let none = |_: &Path, _: Companion<'_>| Vec::new();
    let ctx = LoadContext {
        path: &path,
        companions: &none,
        verbose: false,
    };
    let mut want = DebugId::new("00000000000000000000000000000000A");
    let module = match open::open(&want, &ctx) {
        Ok(m) => Some(m),
        // Ask again for the ID the file has (an `UnmatchedDebugId` error says which).
        Err(e) => e.found_id.and_then(|id| {
            want = id;
            open::open(&want, &ctx).ok()
        }),
    };
    let mut sliced = open::Opening::new(
        want,
        path.clone(),
        Box::new(|_: &Path, _: Companion<'_>| Vec::new()),
        false,
    );
    let mut steps = 0u32;
    let sliced = loop {
        if let Some(done) = sliced.step(std::time::Instant::now()) {
            break done;
        }
        steps += 1;
        assert!(steps < 10_000_000, "a load in slices that never ends");
    };
    assert_eq!(
        module.is_some(),
        sliced.is_ok(),
        "opened at once and in slices differ"
    );
    if let (Some(m), Ok(s)) = (module, sliced) {
        let offsets: Vec<u64> = (0..128u64).map(|i| i * 0x20).collect();
        // The store contains a lookup's panic to its module (`store/memo.rs`), as `open`
        // contains a load's: the panic hook below still says where it happened.
        let lookup =
            std::panic::AssertUnwindSafe(|| (m.lookup_sorted(&offsets), s.lookup_sorted(&offsets)));
        if let Ok((a, b)) = std::panic::catch_unwind(lookup) {
            assert_eq!(
                a, b,
                "answers of a module opened at once and in slices differ"
            );
        }
    }
}

fuzz_target!(
    init: {
        std::panic::set_hook(Box::new(|info| {
            let at = info.location().map(|l| l.file().to_string()).unwrap_or_default();
            WHERE.with(|w| *w.borrow_mut() = at);
        }));
    },
    |data: &[u8]| {
        WHERE.with(|w| w.borrow_mut().clear());
        // `open` contains parser panics itself; the hook still saw where they happened.
        let escaped = std::panic::catch_unwind(|| run(data)).is_err();
        let at = WHERE.with(|w| w.borrow().clone());
        // The `pdb` crate's own panics, from the registry or the patched copy in vendor/.
        let in_pdb = at.contains("/pdb-0.8") || at.contains("vendor/pdb/");
        if escaped || (!at.is_empty() && !in_pdb) {
            eprintln!("panic at {at}");
            std::process::abort();
        }
    }
);

//! The store's own tests: the cache bounds, download caches, dyld images, symbol paths,
//! sidecar modules.

use super::*;

fn corpus_elf() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus/elf")
}

#[test]
fn the_cache_is_bounded_by_count_and_by_bytes() {
    // IDs from fixtures/corpus/README.md (recorded by scripts/gen-truth.py).
    let a = (
        "shapes-gcc-O2-dwarf4",
        &DebugId::new("7E378474164BB4D8EDFD5660EA4970D90"),
    );
    let b = (
        "tmpl-gcc-O2-dwarf4",
        &DebugId::new("DF2B56A15D151081B4D7E992A14A8F690"),
    );
    let opts = SymbolOptions {
        symbol_dirs: vec![corpus_elf()],
        ..Default::default()
    };
    // Kept while within bounds: the same parsed module comes back.
    let mut store = SymbolStore::new(opts.clone());
    let first = store.module(a.0, a.1, None).ready().cloned().unwrap();
    assert!(
        first.cost() > 0,
        "mapped DWARF counts towards the byte bound"
    );
    assert!(Rc::ptr_eq(
        &first,
        &store.module(a.0, a.1, None).ready().cloned().unwrap()
    ));
    // A byte bound below two modules: loading b evicts a.
    let mut store = SymbolStore::new(opts.clone());
    let a1 = store.module(a.0, a.1, None).ready().cloned().unwrap();
    store.max_bytes = a1.cost() + 1;
    store.module(b.0, b.1, None).ready().cloned().unwrap();
    assert_eq!(store.cache.len(), 1);
    assert!(!Rc::ptr_eq(
        &a1,
        &store.module(a.0, a.1, None).ready().cloned().unwrap()
    ));
    // A count bound of one does the same.
    let mut store = SymbolStore::new(opts);
    store.max_modules = 1;
    let a1 = store.module(a.0, a.1, None).ready().cloned().unwrap();
    store.module(b.0, b.1, None).ready().cloned().unwrap();
    assert_eq!(store.cache.len(), 1);
    assert!(!Rc::ptr_eq(
        &a1,
        &store.module(a.0, a.1, None).ready().cloned().unwrap()
    ));
}

#[test]
fn files_in_a_symbol_server_cache_count_as_downloads() {
    let dir = std::env::temp_dir().join(format!("pss-srv-cache-{}", std::process::id()));
    let (cache, own) = (dir.join("cache"), dir.join("own"));
    for d in [&cache, &own] {
        std::fs::create_dir_all(d.join("a.pdb")).unwrap();
        std::fs::write(d.join("a.pdb/a.pdb"), b"x").unwrap();
    }
    let value = format!(
        "srv*{}*https://symbols.example;{}",
        cache.display(),
        own.display()
    );
    let opts = SymbolOptions {
        symbol_path: crate::shared::options::SymbolPath::parse(&value),
        ..Default::default()
    };
    let store = SymbolStore::new(opts);
    assert!(store.is_download_cache(&cache.join("a.pdb/a.pdb")));
    assert!(store.is_download_cache(&own.join("../cache/a.pdb/a.pdb")));
    assert!(!store.is_download_cache(&own.join("a.pdb/a.pdb")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_dyld_cache_is_opened_once_and_its_images_are_bounded_like_any_module() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/dyld");
    let expected: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
    let images = &expected["caches"]["arm64"]["images"];
    let id = |k: usize| DebugId::new(images[k]["breakpadId"].as_str().unwrap());
    let opts = SymbolOptions {
        dyld_shared_caches: vec![dir.join("arm64/dyld_shared_cache_arm64")],
        ..Default::default()
    };
    let mut store = SymbolStore::new(opts);
    store.max_modules = 1;
    let foo = store
        .module("libfoo.dylib", &id(0), None)
        .ready()
        .cloned()
        .unwrap();
    let Some(Some(Ok(cache))) = store.dyld_caches.first().map(|c| c.opened.clone()) else {
        panic!("the cache was not opened");
    };
    // libbar evicts libfoo (one module at most); the cache itself stays open.
    store
        .module("libbar.dylib", &id(1), None)
        .ready()
        .cloned()
        .unwrap();
    assert_eq!(store.cache.len(), 1);
    assert!(!Rc::ptr_eq(
        &foo,
        &store
            .module("libfoo.dylib", &id(0), None)
            .ready()
            .cloned()
            .unwrap()
    ));
    let Some(Some(Ok(again))) = store.dyld_caches.first().map(|c| c.opened.clone()) else {
        panic!("the cache was dropped");
    };
    assert!(Rc::ptr_eq(&cache, &again));
    assert!(foo.cost() > 0);
}

#[test]
fn symbol_path_syntax() {
    let parsed = crate::shared::options::SymbolPath::parse(
        r"srv*C:\cache*https://msdl.microsoft.com/download/symbols;D:\syms; cache*E:\c ;",
    );
    let l = parsed.folders;
    let r: Vec<&str> = parsed.servers.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        l,
        [
            PathBuf::from(r"C:\cache"),
            PathBuf::from(r"D:\syms"),
            PathBuf::from(r"E:\c")
        ]
    );
    assert_eq!(r, ["https://msdl.microsoft.com/download/symbols"]);
}

#[test]
fn sidecar_modules_answer_again_after_eviction() {
    let dir = std::env::temp_dir().join(format!("pss-sidecar-evict-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.syms.json");
    let ids = [
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA0",
        "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB0",
    ];
    let data: Vec<serde_json::Value> = ["a.so", "b.so"]
        .iter()
        .zip(ids)
        .map(|(n, id)| {
            serde_json::json!({"debug_name": n, "debug_id": id,
                "symbol_table": [{"rva": 0x100, "size": 0x10, "symbol": 0}],
                "known_addresses": [[0x104, 0]]})
        })
        .collect();
    let doc = serde_json::json!({"string_table": ["f"], "data": data});
    std::fs::write(&path, doc.to_string()).unwrap();
    let mut store = SymbolStore::new(SymbolOptions::default());
    store.set_sidecar(path);
    store.max_modules = 1;
    // Each asked twice, alternating: every answer evicts the other module.
    for _ in 0..2 {
        for (n, id) in ["a.so", "b.so"].iter().zip(ids) {
            let m = store
                .module(n, &DebugId::new(id), None)
                .ready()
                .cloned()
                .expect("answered from the sidecar");
            let r = m.lookup_sorted(&[0x104]).unwrap();
            assert_eq!(&*r[0].as_ref().unwrap().function, "f");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_module_opened_ahead_in_slices_answers_as_one_opened_at_once() {
    // IDs from fixtures/corpus/README.md. A deadline already past at every step: the load
    // stops at each of its pause points, and goes on from there.
    let pe = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus/pe");
    for (dir, name, id, pauses) in [
        (
            corpus_elf(),
            "shapes-gcc-O2-dwarf4",
            "7E378474164BB4D8EDFD5660EA4970D90",
            5,
        ),
        (
            corpus_elf(),
            "tmpl-gcc-O2-dwarf4",
            "DF2B56A15D151081B4D7E992A14A8F690",
            5,
        ),
        (pe, "geomcpp.pdb", "484A709EE9F7472C4C4C44205044422E1", 2),
    ] {
        let id = DebugId::new(id);
        let opts = SymbolOptions {
            symbol_dirs: vec![dir],
            ..Default::default()
        };
        let mut ahead = SymbolStore::new(opts.clone());
        let mut steps = 0;
        while !ahead.prepare(name, &id, None, std::time::Instant::now()) {
            steps += 1;
            assert!(steps < 100_000, "{name}: the load never ends");
        }
        assert!(
            steps >= pauses,
            "{name}: {steps} steps (the load did not pause)"
        );
        // Done: asked again, nothing is left to do.
        assert!(ahead.prepare(name, &id, None, std::time::Instant::now()));
        let a = ahead.module(name, &id, None).ready().cloned().unwrap();
        assert!(
            ahead.preparing.as_ref().is_some_and(|p| p.is_taken()),
            "{name}: the module was opened again"
        );
        let b = SymbolStore::new(opts)
            .module(name, &id, None)
            .ready()
            .cloned()
            .unwrap();
        let offsets: Vec<u64> = (0..0x8000).step_by(3).collect();
        let (a, b) = (
            a.lookup_sorted(&offsets).unwrap(),
            b.lookup_sorted(&offsets).unwrap(),
        );
        assert!(a.iter().filter(|s| s.is_some()).count() > 50, "{name}");
        assert_eq!(a, b, "{name}");
    }
}

//! Profiles recorded on this machine: stripped binaries at the libs' paths, named from the
//! symbol servers.

use super::*;

/// A profile lib whose file name and debug name differ (PE: `x.dll`, `x.pdb`).
pub(crate) fn lib_at(name: &str, debug_name: &str, id: &str, path: &Path) -> Value {
    let mut l = lib(debug_name, id, &path.display().to_string(), None);
    l["name"] = json!(name);
    l
}

/// Copies one module's `.sym` from the corpus store into `store`.
pub(crate) fn copy_sym(corpus: &Path, store: &Path, debug_name: &str, id: &str) {
    let stem = debug_name.strip_suffix(".pdb").unwrap_or(debug_name);
    let rel = format!("{debug_name}/{id}/{stem}.sym");
    std::fs::create_dir_all(store.join(&rel).parent().unwrap()).unwrap();
    std::fs::copy(corpus.join("breakpad").join(&rel), store.join(&rel)).unwrap();
}

/// A comparison of an answered frame with a truth entry.
pub(crate) type Check = fn(&Value, &Value) -> Result<(), String>;

/// (frames agreeing with `check`, frames asked).
pub(crate) fn agreement(
    got: &[Value],
    truth: &common::Truth,
    check: fn(&Value, &Value) -> Result<(), String>,
) -> (usize, usize) {
    let ok = got
        .iter()
        .zip(&truth.addresses)
        .filter(|(g, t)| check(g, t).is_ok())
        .count();
    (ok, got.len())
}

#[test]
pub(crate) fn stripped_local_files_are_named_from_the_symbol_servers() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-stripped");
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // ELF: fully stripped (no .symtab, no DWARF) with `strip` from binutils.
    let elf_truth = common::Truth::load(&corpus.join("truth/elf/libmathlib.so.truth.json"));
    let elf = bin.join("libmathlib.so");
    run(Command::new("strip")
        .arg("-o")
        .arg(&elf)
        .arg(corpus.join("elf/libmathlib.so")));
    // Mach-O: the dylib without its dSYM (symbol table only).
    let macho_truth =
        common::Truth::load(&corpus.join("truth/macho/x86_64/libmathlib.dylib.truth.json"));
    let macho = bin.join("libmathlib.dylib");
    std::fs::copy(corpus.join("macho/x86_64/libmathlib.dylib"), &macho).unwrap();
    // PE without its PDB, twice: one on a Windows symbol server, one on Tecken.
    let pe_truth = common::Truth::load(&corpus.join("truth/pe/mathlib.dll.truth.json"));
    let pe = bin.join("mathlib.dll");
    std::fs::copy(corpus.join("pe/mathlib.dll"), &pe).unwrap();
    let pe2_truth = common::Truth::load(&corpus.join("truth/pe/geomcpp.dll.truth.json"));
    let pe2 = bin.join("geomcpp.dll");
    std::fs::copy(corpus.join("pe/geomcpp.dll"), &pe2).unwrap();
    // A module with its DWARF on disk: no server is asked for it.
    let dwarf_truth =
        common::Truth::load(&corpus.join("truth/elf/shapes-gcc-O2-dwarf4.truth.json"));
    let dwarf = bin.join("shapes-gcc-O2-dwarf4");
    std::fs::copy(corpus.join("elf/shapes-gcc-O2-dwarf4"), &dwarf).unwrap();

    let store = dir.join("tecken-store");
    for (name, t) in [
        ("libmathlib.so", &elf_truth),
        ("libmathlib.dylib", &macho_truth),
        ("geomcpp.pdb", &pe2_truth),
        ("shapes-gcc-O2-dwarf4", &dwarf_truth),
    ] {
        copy_sym(&corpus, &store, name, &t.breakpad_id());
    }
    let (tecken, _storage) = tecken(store);
    let symsrv_root = dir.join("symsrv");
    let d = symsrv_root.join("mathlib.pdb").join(pe_truth.breakpad_id());
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(corpus.join("pe/mathlib.pdb"), d.join("mathlib.pdb")).unwrap();
    let symsrv = Fake::start(files_handler(symsrv_root));

    let profile = dir.join("profile.json");
    let modules = [
        ("libmathlib.so", "libmathlib.so", &elf_truth, &elf),
        ("libmathlib.dylib", "libmathlib.dylib", &macho_truth, &macho),
        ("mathlib.dll", "mathlib.pdb", &pe_truth, &pe),
        ("geomcpp.dll", "geomcpp.pdb", &pe2_truth, &pe2),
        (
            "shapes-gcc-O2-dwarf4",
            "shapes-gcc-O2-dwarf4",
            &dwarf_truth,
            &dwarf,
        ),
    ];
    let libs: Vec<Value> = modules
        .iter()
        .map(|(n, d, t, p)| lib_at(n, d, &t.breakpad_id(), p))
        .collect();
    write_profile(&profile, &libs);
    let args = |tecken_url: String, symsrv_url: String| {
        vec![
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            tecken_url,
            "--windows-symbol-server".into(),
            symsrv_url,
        ]
    };
    let cache = dir.join("cache");
    let env = [("XDG_CACHE_HOME", cache.display().to_string())];
    let ask = |server: &Running| -> Vec<Vec<Value>> {
        modules
            .iter()
            .map(|(_, d, t, _)| {
                let offsets: Vec<(usize, u64)> = t.offsets().into_iter().map(|o| (0, o)).collect();
                frames(&server.symbolicate(&[(d.to_string(), t.breakpad_id())], &offsets))
            })
            .collect()
    };
    let checks: [Check; 5] = [
        common::check_frame_against_sym,
        common::check_frame_against_sym,
        common::check_frame,
        common::check_frame_against_sym,
        common::check_frame,
    ];
    let score = |answers: &[Vec<Value>]| -> Vec<(usize, usize)> {
        answers
            .iter()
            .zip(&modules)
            .zip(checks)
            .map(|((got, m), check)| agreement(got, m.2, check))
            .collect()
    };

    let server = start(&args(tecken.url(), symsrv.url()), &env);
    let first = score(&ask(&server));
    eprintln!("stripped, from the servers: {first:?}");
    for ((ok, n), m) in first.iter().zip(&modules) {
        assert!(ok * 100 >= n * 98, "{}: {ok}/{n}\n{}", m.0, server.stderr());
    }
    // Every needed file asked for once, nothing for the module with DWARF.
    let asked = tecken.requests();
    for name in ["libmathlib.so.sym", "libmathlib.dylib.sym", "geomcpp.sym"] {
        assert_eq!(
            asked.iter().filter(|r| r.ends_with(name)).count(),
            1,
            "{asked:?}"
        );
    }
    assert!(!asked.iter().any(|r| r.contains("shapes")), "{asked:?}");
    assert_eq!(symsrv.count("mathlib.pdb"), 1);
    // Each module's line says which server answered.
    let stderr = server.stderr();
    assert!(
        stderr.contains(&format!(
            "libmathlib.so: Breakpad symbols (from {})",
            tecken.url()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("(from {})", symsrv.url())),
        "{stderr}"
    );
    drop(server);

    // Again with every server refused: the same answers from the cache.
    let server = start(&args(refused_url(), refused_url()), &env);
    assert_eq!(score(&ask(&server)), first);
    drop(server);

    // Every server says 404: the local tables still answer (names, no lines).
    let nothing = Fake::start(|_: &str| Reply::NotFound);
    let server = start(
        &args(nothing.url(), nothing.url()),
        &[(
            "XDG_CACHE_HOME",
            dir.join("cache-empty").display().to_string(),
        )],
    );
    let local = ask(&server);
    let named = |fs: &[Value]| fs.iter().filter(|f| f.get("function").is_some()).count();
    // The Mach-O's symbol table and the PE exports name most frames; no line anywhere.
    assert!(
        named(&local[1]) * 2 > local[1].len(),
        "{:?}",
        &local[1][..3]
    );
    for m in &local[..4] {
        assert!(m.iter().all(|f| f.get("line").is_none()));
    }
    assert!(nothing.requests().len() >= 4);
}

/// A stripped copy of a corpus ELF, its truth and its `.sym` (dump_syms).
pub(crate) fn stripped_corpus_elf(dir: &Path, name: &str) -> (PathBuf, common::Truth, Vec<u8>) {
    let corpus = common::corpus();
    let truth = common::Truth::load(&corpus.join(format!("truth/elf/{name}.truth.json")));
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let path = bin.join(name);
    run(Command::new("strip")
        .arg("-o")
        .arg(&path)
        .arg(corpus.join("elf").join(name)));
    let sym = std::fs::read(
        corpus
            .join("breakpad")
            .join(name)
            .join(truth.breakpad_id())
            .join(format!("{name}.sym")),
    )
    .unwrap();
    (path, truth, sym)
}

#[test]
pub(crate) fn a_slow_download_that_keeps_moving_is_awaited_and_a_stalled_one_gives_local_names() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-slow");
    let name = "shapes-gcc-O2-dwarf4";
    let (path, truth, sym) = stripped_corpus_elf(&dir, name);
    // About 21 s for the whole file, never 10 s without a byte.
    let per_tick = sym.len() / 210 + 1;
    let slow = Fake::start(move |_: &str| Reply::Throttled(sym.clone(), per_tick));
    let stall = Fake::start(|_: &str| Reply::Stall);
    let profile = dir.join("profile.json");
    let id = truth.breakpad_id();
    write_profile(&profile, &[lib_at(name, name, &id, &path)]);
    let offsets: Vec<(usize, u64)> = truth.offsets().into_iter().map(|o| (0, o)).collect();
    let map = [(name.to_string(), id.clone())];
    let ask = |server_url: String, cache: &str| {
        let server = start(
            &[
                profile.display().to_string(),
                "--breakpad-symbol-server".into(),
                server_url,
            ],
            &[("XDG_CACHE_HOME", dir.join(cache).display().to_string())],
        );
        let t = std::time::Instant::now();
        let got = frames(&server.symbolicate(&map, &offsets));
        (got, t.elapsed(), server.stderr())
    };
    let (slow_got, slow_took, stderr) = std::thread::scope(|s| {
        let stalled = s.spawn(|| ask(stall.url(), "cache-stall"));
        let slow = ask(slow.url(), "cache-slow");
        let (got, took, stderr) = stalled.join().unwrap();
        eprintln!("stalled server: answered after {took:?}");
        // The local tables answer: stripped, so `fun_…` names from unwind tables, no lines.
        let named = got.iter().filter(|f| f.get("function").is_some()).count();
        assert!(named * 2 > got.len(), "{named}/{}\n{stderr}", got.len());
        assert!(got.iter().all(|f| f.get("line").is_none()));
        slow
    });
    // No bound on the time here (a loaded machine stretches any): the full names and
    // lines below can only come from the whole download.
    eprintln!("slow server: answered after {slow_took:?}");
    let (ok, n) = agreement(&slow_got, &truth, common::check_frame_against_sym);
    assert!(ok * 100 >= n * 98, "{ok}/{n}\n{stderr}");
    // Progress was reported while it ran, and once at the end.
    assert!(stderr.contains("MB so far"), "{stderr}");
    assert!(
        stderr.contains(&format!("{name}.sym: 0.0 MB in ")),
        "{stderr}"
    );
}

#[test]
pub(crate) fn gzip_transfers_are_asked_for_and_decoded() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-gzip");
    // A module of 3000 functions: a .sym as big as the records of a real library.
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let mut sym = format!("MODULE Linux x86_64 {id} libbig.so\nFILE 0 /src/big/module.c\n");
    for i in 0..3000u64 {
        let start = 0x1000 + i * 0x40;
        sym += &format!("FUNC {start:x} 40 0 big_function_number_{i}(int, char const*)\n");
        sym += &format!(
            "{start:x} 20 {} 0\n{:x} 20 {} 0\n",
            10 + i * 3,
            start + 0x20,
            11 + i * 3
        );
    }
    let sent = Arc::new(Mutex::new(0usize));
    let s2 = sent.clone();
    let body = sym.clone().into_bytes();
    let server = Fake::start(move |_: &str| Reply::GzipIfAsked(body.clone(), s2.clone()));
    let offsets: Vec<u64> = (0..3000u64)
        .step_by(97)
        .map(|i| 0x1000 + i * 0x40 + 0x24)
        .collect();
    let request = json!({"memoryMap": [["libbig.so", id]],
                         "stacks": [offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()]});
    let cache = dir.join("cache").display().to_string();
    let a = common::query_stdin(
        &["/symbolicate/v5", "--breakpad-symbol-server", &server.url()],
        &[("XDG_CACHE_HOME", &cache)],
        &request,
    );
    let got = &a["results"][0]["stacks"][0];
    for (k, o) in offsets.iter().enumerate() {
        let i = (o - 0x1000) / 0x40;
        assert_eq!(
            got[k]["function"],
            json!(format!("big_function_number_{i}(int, char const*)"))
        );
        assert_eq!(got[k]["line"], json!(11 + i * 3));
    }
    let sent = *sent.lock().unwrap();
    eprintln!("gzip: {sent} bytes sent for {} plain", sym.len());
    assert!(sent * 100 <= sym.len() * 40, "{sent} of {}", sym.len());
    // Stored decoded.
    let stored = std::fs::read(
        dir.join("cache/profiler-symbol-server/breakpad/libbig.so")
            .join(id)
            .join("libbig.so.sym"),
    )
    .unwrap();
    assert_eq!(stored, sym.as_bytes());
}

#[test]
pub(crate) fn names_that_mean_more_than_a_file_on_windows_are_refused() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-windows-names");
    let server = Fake::start(|_: &str| Reply::NotFound);
    let xdg = dir.join("xdg");
    let id = "0123456789ABCDEF0123456789ABCDEF1";
    let names = [
        "C:x",
        "x.pdb:stream",
        "CON",
        "NUL.pdb",
        "com1.dll",
        "name.",
        "name ",
        "a|b.pdb",
    ];
    let map: Vec<Value> = names.iter().map(|n| json!([n, id])).collect();
    let request = json!({"memoryMap": map,
                         "stacks": [names.iter().enumerate().map(|(i, _)| json!([i, 0x10])).collect::<Vec<_>>()]});
    let cache = xdg.display().to_string();
    let a = common::query_stdin(
        &[
            "/symbolicate/v5",
            "--breakpad-symbol-server",
            &server.url(),
            "--symbol-dir",
            &dir.display().to_string(),
        ],
        &[("XDG_CACHE_HOME", &cache)],
        &request,
    );
    let errors = &a["results"][0]["module_errors"];
    for n in names {
        let e = errors[format!("{n}/{id}")].to_string();
        assert!(e.contains("InvalidDebugName"), "{n}: {e}");
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    // Nothing was created anywhere: the scratch folder holds only the (unused) cache root.
    let mut found = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                found.push(e.path());
            }
        }
    }
    assert!(found.is_empty(), "{found:?}");
}

/// The file names in a downloaded debug file are the server's choice, so
/// `/source/v1` must not open them (here a local file holding a secret); the same file
/// found locally is still served.
#[test]
pub(crate) fn sources_are_never_served_for_downloaded_debug_files() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-source-refused");
    let elf = build_elf(&dir);
    let source_file = elf.frames[0].2.clone();
    // The file the debug info names: a local file whose contents must not leak.
    let secret = "SECRET-7f3a9c";
    let mut text = std::fs::read_to_string(&source_file).unwrap();
    text.push_str(&format!("// {secret}\n"));
    std::fs::write(&source_file, &text).unwrap();
    let (stripped, debuginfod) = stripped_with_debuginfod(&dir, &elf);
    let env = [
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        (
            "DEBUGINFOD_CACHE_PATH",
            dir.join("dcache").display().to_string(),
        ),
        ("DEBUGINFOD_URLS", debuginfod.url()),
    ];
    let (offset, function) = (elf.frames[0].0, elf.frames[0].1.clone());
    let map = vec![("remote_prog".to_string(), elf.breakpad_id.clone())];
    let source = |server: &Running| -> Value {
        let body = json!({"debugName": "remote_prog", "debugId": elf.breakpad_id,
                          "moduleOffset": format!("{offset:#x}"), "file": source_file});
        let path = format!("/{}/source/v1", server.base.rsplit('/').next().unwrap());
        let r = http(
            server.addr,
            "POST",
            &path,
            &server.addr.to_string(),
            &[],
            &serde_json::to_vec(&body).unwrap(),
        );
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        r.json()
    };
    // Control: the unstripped binary found locally serves its source (the profile in a
    // folder of its own: a binary beside it would have come with it).
    std::fs::create_dir_all(dir.join("profiles")).unwrap();
    let profile = dir.join("profiles/local.json");
    write_profile(
        &profile,
        &[lib(
            "remote_prog",
            &elf.breakpad_id,
            elf.binary.to_str().unwrap(),
            Some(&elf.build_id),
        )],
    );
    let server = start(&[profile.display().to_string()], &env);
    assert_eq!(
        server.symbolicate(&map, &[(0, offset)])["results"][0]["stacks"][0][0]["function"],
        json!(function)
    );
    assert_eq!(source(&server)["source"], json!(text));
    drop(server);
    // The stripped binary with its DWARF from debuginfod: downloaded, then (second run)
    // from the debuginfod cache; refused both times.
    let profile = dir.join("remote.json");
    write_profile(
        &profile,
        &[lib(
            "remote_prog",
            &elf.breakpad_id,
            stripped.to_str().unwrap(),
            Some(&elf.build_id),
        )],
    );
    for run in ["download", "cache"] {
        let server = start(&[profile.display().to_string()], &env);
        let frame = &frames(&server.symbolicate(&map, &[(0, offset)]))[0];
        // The debug info from the server does name the file.
        assert_eq!(
            frame["file"].as_str(),
            Some(source_file.as_str()),
            "{run}: {frame}"
        );
        let v = source(&server);
        assert!(
            v.get("source").is_none(),
            "{run}: the secret was served: {v}"
        );
        assert!(!v.to_string().contains(secret), "{run}: {v}");
        assert!(
            v["error"].as_str().unwrap().contains("download"),
            "{run}: {v}"
        );
    }
    assert_eq!(debuginfod.requests().len(), 1);
}

/// A server that failed (a 503 here) is paused, not dropped for the run: once its pause is
/// over (1 s through PROFILER_SYMBOL_SERVER_RETRY_AFTER; 30 s by default) it is asked
/// again, and its symbols arrive without a restart.
#[test]
pub(crate) fn a_failed_symbol_server_is_asked_again_after_its_pause() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-retry");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules[..1]);
    let files = files_handler(store);
    let failed_once = Arc::new(Mutex::new(false));
    let flag = failed_once.clone();
    let server_side = Fake::start(move |target: &str| {
        let mut failed = flag.lock().unwrap();
        if !*failed {
            *failed = true;
            return Reply::Unavailable;
        }
        files(target)
    });
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let env = [
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        ("PROFILER_SYMBOL_SERVER_RETRY_AFTER", "1".to_string()),
    ];
    let server = start(
        &[
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            server_side.url(),
        ],
        &env,
    );
    let m = &modules[0];
    let map = vec![(m.name.to_string(), m.id.to_string())];
    let offsets = [(0, m.frames[0].0)];
    let first = server.symbolicate(&map, &offsets);
    assert!(frames(&first)[0].get("function").is_none());
    // The warning was written before the answer; the stderr reader may lag behind.
    let said = |s: &str| s.contains("failed (") && s.contains("not asked again for 1 s");
    let since = std::time::Instant::now();
    while !said(&server.stderr()) && since.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(said(&server.stderr()), "{}", server.stderr());
    // Asked again until the pause is over: then the server is tried and answers.
    let start_time = std::time::Instant::now();
    let named = loop {
        let a = server.symbolicate(&map, &offsets);
        if let Some(f) = frames(&a)[0].get("function") {
            break f.clone();
        }
        let errors = a["results"][0]["module_errors"].to_string();
        assert!(
            errors.contains("ServerDown") && errors.contains("asked again in"),
            "{errors}"
        );
        assert!(start_time.elapsed().as_secs() < 60, "never asked again");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(named, json!(m.frames[0].1));
    assert_eq!(
        server_side.requests().len(),
        2,
        "{:?}",
        server_side.requests()
    );
    assert_eq!(server.interrupt(), Some(0));
}

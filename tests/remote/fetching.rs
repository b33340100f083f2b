//! Downloads from Tecken, symsrv and debuginfod servers, once and then from the cache;
//! stalled and missing servers.

use super::*;

#[test]
fn symbols_come_from_tecken_and_debuginfod_once_and_then_from_the_cache() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-all");
    let store = dir.join("tecken-store");
    let modules = sym_modules();
    write_store(&store, &modules);
    // A .sym whose MODULE line has another ID: fetched, rejected, never used.
    let wrong = SymModule {
        name: "libwrong.so",
        id: "11111111111111111111111111111111A",
        frames: vec![(0x1000, "never_used", "/x.c", 1)],
    };
    let wrong_dir = store.join(wrong.name).join(wrong.id);
    std::fs::create_dir_all(&wrong_dir).unwrap();
    std::fs::write(
        wrong_dir.join("libwrong.so.sym"),
        sym_text(&wrong).replace(wrong.id, "22222222222222222222222222222222B"),
    )
    .unwrap();
    let (tecken, storage) = tecken(store);

    // debuginfod: the debug file of a program compiled here, by build ID.
    let elf = build_elf(&dir);
    let di_root = dir.join("debuginfod-root");
    let di_dir = di_root.join("buildid").join(&elf.build_id);
    std::fs::create_dir_all(&di_dir).unwrap();
    run(Command::new("objcopy")
        .arg("--only-keep-debug")
        .arg(&elf.binary)
        .arg(di_dir.join("debuginfo")));
    let debuginfod = Fake::start(files_handler(di_root));

    // A module found locally: the example fixture, by its path in the profile.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/example");
    let example_lib = {
        let p: Value = serde_json::from_slice(
            &std::fs::read(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/profile.json"),
            )
            .unwrap(),
        )
        .unwrap();
        let l = p["libs"][0].clone();
        (
            l["debugName"].as_str().unwrap().to_string(),
            l["breakpadId"].as_str().unwrap().to_string(),
        )
    };

    let profile = dir.join("profile.json");
    write_profile(
        &profile,
        &[
            lib("libfake.so", modules[0].id, "/absent/libfake.so", None),
            lib(
                "remote_prog",
                &elf.breakpad_id,
                "/absent/remote_prog",
                Some(&elf.build_id),
            ),
            lib(
                &example_lib.0,
                &example_lib.1,
                example.to_str().unwrap(),
                None,
            ),
        ],
    );
    let cache = dir.join("cache");
    let di_cache = dir.join("debuginfod-cache");
    let env = [
        ("XDG_CACHE_HOME", cache.display().to_string()),
        ("DEBUGINFOD_CACHE_PATH", di_cache.display().to_string()),
        ("DEBUGINFOD_URLS", format!("{} ", debuginfod.url())),
    ];
    let memory_map: Vec<(String, String)> = vec![
        ("libfake.so".into(), modules[0].id.into()),
        ("fakewin.pdb".into(), modules[1].id.into()),
        ("remote_prog".into(), elf.breakpad_id.clone()),
        (example_lib.0.clone(), example_lib.1.clone()),
        (
            "libmissing.so".into(),
            "33333333333333333333333333333333C".into(),
        ),
        ("libwrong.so".into(), wrong.id.into()),
    ];
    let mut offsets: Vec<(usize, u64)> = Vec::new();
    let mut want: Vec<(String, Option<String>, Option<u32>)> = Vec::new();
    for (i, m) in modules.iter().enumerate() {
        for f in &m.frames {
            offsets.push((i, f.0));
            want.push((f.1.into(), Some(f.2.into()), Some(f.3)));
        }
    }
    for f in &elf.frames {
        offsets.push((2, f.0));
        want.push((f.1.clone(), Some(f.2.clone()), Some(f.3)));
    }
    offsets.push((3, 0x1000));
    offsets.push((4, 0x1000));
    offsets.push((5, 0x1000));
    let check = |answer: &Value| {
        let got = frames(answer);
        for (k, w) in want.iter().enumerate() {
            assert_eq!(
                got[k]["function"].as_str(),
                Some(w.0.as_str()),
                "frame {k}: {}",
                got[k]
            );
            assert_eq!(
                got[k]["file"].as_str(),
                w.1.as_deref(),
                "frame {k}: {}",
                got[k]
            );
            assert_eq!(
                got[k]["line"].as_u64(),
                w.2.map(u64::from),
                "frame {k}: {}",
                got[k]
            );
        }
        let found = &answer["results"][0]["found_modules"];
        assert_eq!(
            found[format!("{}/{}", example_lib.0, example_lib.1)],
            json!(true)
        );
        assert_eq!(
            found["libmissing.so/33333333333333333333333333333333C"],
            json!(false)
        );
        assert_eq!(found[format!("libwrong.so/{}", wrong.id)], json!(false));
        assert!(got[want.len() + 2].get("function").is_none());
    };

    // The first server refuses connections: marked down, the next one is used.
    let refused = refused_url();
    let args = |servers: &[String]| -> Vec<String> {
        let mut a = vec![profile.display().to_string()];
        for s in servers {
            a.push("--breakpad-symbol-server".into());
            a.push(s.clone());
        }
        a
    };
    let server = start(
        &args(&[refused.clone(), format!("{}/", tecken.url())]),
        &env,
    );
    let answer = server.symbolicate(&memory_map, &offsets);
    check(&answer);
    let errors = answer["results"][0]["module_errors"].to_string();
    assert!(errors.contains("UnmatchedDebugId"), "{errors}");
    // Asked again: everything from memory or the cache, nothing twice.
    check(&server.symbolicate(&memory_map, &offsets));
    assert_eq!(
        tecken.count("/libmissing.so/"),
        1,
        "{:?}",
        tecken.requests()
    );
    assert_eq!(tecken.count("/libwrong.so/"), 1, "{:?}", tecken.requests());
    assert_eq!(tecken.count("/libfake.so/"), 1, "{:?}", tecken.requests());
    // fakewin.pdb is asked for as fakewin.sym.
    assert_eq!(
        tecken.count("/fakewin.pdb/FEDCBA9876543210FEDCBA98765432101/fakewin.sym"),
        1
    );
    assert_eq!(storage.count("X-Signature=abc"), storage.requests().len());
    assert_eq!(
        debuginfod.count(&format!("/buildid/{}/debuginfo", elf.build_id)),
        1
    );
    // Nothing asked for the module found locally; no path with a doubled slash.
    for r in tecken.requests().iter().chain(debuginfod.requests().iter()) {
        assert!(!r.contains(&example_lib.0), "{r}");
        assert!(!r.contains("//"), "{r}");
    }
    let stderr = server.stderr();
    // The failed server is reported once (the per-module lines may name it as tried).
    assert_eq!(
        stderr
            .matches(&format!("symbol server {refused} failed"))
            .count(),
        1,
        "{stderr}"
    );
    // Where the symbols came from is said once they are there, not "no symbols" while
    // the download was still going on.
    assert!(stderr.contains("libfake.so: Breakpad symbols"), "{stderr}");
    assert!(!stderr.contains("libfake.so: no symbols"), "{stderr}");
    assert_eq!(server.interrupt(), Some(0));
    // The caches, in their layouts: samply's Breakpad store, elfutils' debuginfod cache.
    assert!(
        cache
            .join(format!(
                "profiler-symbol-server/breakpad/libfake.so/{}/libfake.so.sym",
                modules[0].id
            ))
            .is_file()
    );
    assert!(di_cache.join(&elf.build_id).join("debuginfo").is_file());
    assert!(partial_files(&cache).is_empty() && partial_files(&di_cache).is_empty());
    assert!(
        !cache
            .join(format!(
                "profiler-symbol-server/breakpad/libwrong.so/{}/libwrong.so.sym",
                wrong.id
            ))
            .exists()
    );

    // Second run, every server down: the same answer from the cache, no request at all.
    let (t, d) = (tecken.requests().len(), debuginfod.requests().len());
    let env2 = [
        env[0].clone(),
        env[1].clone(),
        ("DEBUGINFOD_URLS", refused_url()),
    ];
    let server = start(&args(&[refused_url()]), &env2);
    let answer = server.symbolicate(&memory_map, &offsets);
    let got = frames(&answer);
    for (k, w) in want.iter().enumerate() {
        assert_eq!(got[k]["function"].as_str(), Some(w.0.as_str()), "frame {k}");
        assert_eq!(got[k]["line"].as_u64(), w.2.map(u64::from), "frame {k}");
    }
    assert_eq!(
        (tecken.requests().len(), debuginfod.requests().len()),
        (t, d)
    );
}

#[test]
fn debuginfod_adds_dwarf_to_a_local_binary_without_it() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-debuginfod-local");
    let elf = build_elf(&dir);
    let (stripped, debuginfod) = stripped_with_debuginfod(&dir, &elf);
    let profile = dir.join("profile.json");
    write_profile(
        &profile,
        &[lib(
            "remote_prog",
            &elf.breakpad_id,
            stripped.to_str().unwrap(),
            Some(&elf.build_id),
        )],
    );
    let offsets: Vec<(usize, u64)> = elf.frames.iter().map(|f| (0, f.0)).collect();
    let map = vec![("remote_prog".to_string(), elf.breakpad_id.clone())];
    // Without debuginfod: names from the symbol table, no lines.
    let env = [
        ("XDG_CACHE_HOME", dir.join("cache").display().to_string()),
        (
            "DEBUGINFOD_CACHE_PATH",
            dir.join("dcache").display().to_string(),
        ),
    ];
    let server = start(&[profile.display().to_string()], &env);
    let got = frames(&server.symbolicate(&map, &offsets));
    assert_eq!(got[0]["function"], json!(elf.frames[0].1));
    assert!(got[0].get("line").is_none(), "{}", got[0]);
    drop(server);
    let mut env = env.to_vec();
    env.push(("DEBUGINFOD_URLS", debuginfod.url()));
    let server = start(&[profile.display().to_string()], &env);
    let got = frames(&server.symbolicate(&map, &offsets));
    for (g, w) in got.iter().zip(&elf.frames) {
        assert_eq!(g["function"].as_str(), Some(w.1.as_str()), "{g}");
        assert_eq!(g["file"].as_str(), Some(w.2.as_str()), "{g}");
        assert_eq!(g["line"].as_u64(), Some(u64::from(w.3)), "{g}");
    }
    assert_eq!(debuginfod.requests().len(), 1);
}

#[test]
fn a_stalled_server_holds_up_neither_other_requests_nor_the_exit() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-stall");
    let stall = Fake::start(|_: &str| Reply::Stall);
    let modules = sym_modules();
    let local = dir.join("local");
    write_store(&local, &modules[1..]);
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let env = [("XDG_CACHE_HOME", dir.join("cache").display().to_string())];
    let server = Arc::new(start(
        &[
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            stall.url(),
            "--breakpad-symbol-dir".into(),
            local.display().to_string(),
        ],
        &env,
    ));
    let remote_map = vec![("libfake.so".to_string(), modules[0].id.to_string())];
    let local_map = vec![("fakewin.pdb".to_string(), modules[1].id.to_string())];
    let order = Arc::new(Mutex::new(Vec::new()));
    let waiting = {
        let (server, order) = (server.clone(), order.clone());
        std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let a = server.symbolicate(&remote_map, &[(0, 0x1004)]);
            order.lock().unwrap().push("remote");
            (a, started.elapsed())
        })
    };
    // Once the download has started, a request that needs none is answered meanwhile.
    while stall.requests().is_empty() {
        std::thread::yield_now();
    }
    let t = std::time::Instant::now();
    let a = server.symbolicate(&local_map, &[(0, 0x2008)]);
    order.lock().unwrap().push("local");
    eprintln!(
        "local request answered in {:?} while a download stalled",
        t.elapsed()
    );
    assert_eq!(frames(&a)[0]["function"], json!("WinMain"));
    let (a, took) = waiting.join().unwrap();
    eprintln!("request waiting on the stalled server answered after {took:?}");
    assert_eq!(*order.lock().unwrap(), ["local", "remote"]);
    assert!(frames(&a)[0].get("function").is_none());
    assert_eq!(
        a["results"][0]["found_modules"][format!("libfake.so/{}", modules[0].id)],
        json!(false)
    );
    // Marked down: asked again, no new connection.
    server.symbolicate(
        &[(
            "libother.so".to_string(),
            "44444444444444444444444444444444D".to_string(),
        )],
        &[(0, 1)],
    );
    assert_eq!(stall.requests().len(), 1);
    let server = Arc::try_unwrap(server).ok().unwrap();
    // All of stderr, read to its end after the exit: the warning is not raced for.
    let (code, stderr) = server.interrupt_with_stderr();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr.matches("not asked again for").count(), 1, "{stderr}");
    assert!(partial_files(&dir.join("cache")).is_empty());
}

#[test]
fn ctrl_c_during_a_download_leaves_nothing_partial() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-sigint");
    let stall = Fake::start(|_: &str| Reply::Stall);
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let cache = dir.join("cache");
    let server = Arc::new(start(
        &[
            profile.display().to_string(),
            "--breakpad-symbol-server".into(),
            stall.url(),
        ],
        &[("XDG_CACHE_HOME", cache.display().to_string())],
    ));
    let s = server.clone();
    let pending = std::thread::spawn(move || {
        // The connection is dropped at exit: no answer, which is fine.
        let body = br#"{"memoryMap":[["libx.so","55555555555555555555555555555555E"]],"stacks":[[[0,1]]]}"#;
        let mut c = TcpStream::connect(s.addr).unwrap();
        let path = format!("/{}/symbolicate/v5", s.base.rsplit('/').next().unwrap());
        let _ = write!(
            c,
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n",
            s.addr,
            body.len()
        );
        let _ = c.write_all(body);
        let mut sink = Vec::new();
        let _ = c.read_to_end(&mut sink);
    });
    while stall.requests().is_empty() {
        std::thread::yield_now();
    }
    assert!(
        !partial_files(&cache).is_empty(),
        "the download writes a partial file"
    );
    common::signal(server.pid(), libc::SIGINT);
    // The server closes the parked connection as it exits.
    pending.join().unwrap();
    let server = Arc::try_unwrap(server).ok().unwrap();
    let (code, stderr) = server.wait_exit();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        partial_files(&cache).is_empty(),
        "{:?}",
        partial_files(&cache)
    );
}

#[test]
fn windows_symbol_server_serves_pdbs_from_the_corpus() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-symsrv");
    let truth = common::Truth::load(&corpus.join("truth/pe/mathlib.dll.truth.json"));
    let id = truth.breakpad_id();
    // symsrv layout: <pdb>/<ID>/<pdb>.
    let root = dir.join("symsrv");
    let d = root.join("mathlib.pdb").join(&id);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(corpus.join("pe/mathlib.pdb"), d.join("mathlib.pdb")).unwrap();
    let symsrv = Fake::start(files_handler(root));
    let profile = dir.join("profile.json");
    write_profile(&profile, &[]);
    let win_cache = dir.join("wcache");
    let server = start(
        &[
            profile.display().to_string(),
            "--windows-symbol-server".into(),
            format!("{}/", symsrv.url()),
            "--windows-symbol-cache".into(),
            win_cache.display().to_string(),
        ],
        &[("XDG_CACHE_HOME", dir.join("cache").display().to_string())],
    );
    let offsets: Vec<(usize, u64)> = truth.offsets().into_iter().map(|o| (0, o)).collect();
    let answer = server.symbolicate(&[("mathlib.pdb".to_string(), id.clone())], &offsets);
    let got = frames(&answer);
    let ok = got
        .iter()
        .zip(&truth.addresses)
        .filter(|(g, t)| common::check_frame(g, t).is_ok())
        .count();
    eprintln!("symsrv: {ok}/{} frames match the truth", got.len());
    assert!(ok * 100 >= got.len() * 98, "{ok}/{}", got.len());
    assert!(
        win_cache
            .join("mathlib.pdb")
            .join(&id)
            .join("mathlib.pdb")
            .is_file()
    );
    assert_eq!(
        symsrv.requests(),
        [format!("/mathlib.pdb/{id}/mathlib.pdb")]
    );
}

#[test]
fn corpus_linux_profile_from_tecken_and_debuginfod() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-corpus-linux");
    let src = std::fs::read_to_string(corpus.join("profiles/gecko-profile-linux.json")).unwrap();
    let profile = dir.join("profile.json");
    // Paths stay /corpus/...: the binaries are absent on this machine.
    std::fs::write(&profile, &src).unwrap();
    let libs: Vec<Value> = serde_json::from_str::<Value>(&src).unwrap()["libs"]
        .as_array()
        .unwrap()
        .clone();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(corpus.join("profiles/gecko-profile-linux.expected.json")).unwrap(),
    )
    .unwrap();
    let map: Vec<(String, String)> = libs
        .iter()
        .map(|l| {
            (
                l["debugName"].as_str().unwrap().to_string(),
                l["breakpadId"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut offsets = Vec::new();
    let mut wanted = Vec::new();
    for (addr, e) in expected["frames"].as_object().unwrap() {
        let addr = common::parse_hex(addr);
        let Some(i) = libs.iter().position(|l| {
            l["start"].as_u64().unwrap() <= addr && addr < l["end"].as_u64().unwrap()
        }) else {
            continue;
        };
        offsets.push((i, addr - libs[i]["start"].as_u64().unwrap()));
        let mut entry = e.clone();
        entry["found"] = json!(true);
        wanted.push(json!({"module_offset": e["module_offset"], "expect": entry}));
    }
    // debuginfod serves the corpus ELF files by build ID (codeId), Tecken its .sym files:
    // each module comes from whichever answers first in the order of the sources.
    let mut by_build_id: HashMap<String, PathBuf> = HashMap::new();
    for l in &libs {
        let path = l["path"].as_str().unwrap().replacen("/corpus/", "", 1);
        // Two libs share a build ID (a binary and its stripped copy): serve the first,
        // which has the DWARF, as a debuginfod server would.
        by_build_id
            .entry(l["codeId"].as_str().unwrap().to_string())
            .or_insert_with(|| corpus.join(path));
    }
    let debuginfod = Fake::start(move |target: &str| {
        let id = target
            .trim_start_matches("/buildid/")
            .trim_end_matches("/debuginfo");
        match by_build_id.get(id).map(std::fs::read) {
            Some(Ok(b)) => Reply::Body(b),
            _ => Reply::NotFound,
        }
    });
    let (tecken, _storage) = tecken(corpus.join("breakpad"));
    for (name, env_extra, args) in [
        (
            "tecken",
            None,
            vec!["--breakpad-symbol-server".to_string(), tecken.url()],
        ),
        ("debuginfod", Some(debuginfod.url()), vec![]),
    ] {
        let mut env = vec![
            (
                "XDG_CACHE_HOME",
                dir.join(format!("cache-{name}")).display().to_string(),
            ),
            (
                "DEBUGINFOD_CACHE_PATH",
                dir.join(format!("dcache-{name}")).display().to_string(),
            ),
        ];
        if let Some(u) = env_extra {
            env.push(("DEBUGINFOD_URLS", u));
        }
        let mut a = vec![profile.display().to_string()];
        a.extend(args);
        let server = start(&a, &env);
        let answer = server.symbolicate(&map, &offsets);
        let got = frames(&answer);
        let results: Vec<Result<(), String>> = got
            .iter()
            .zip(&wanted)
            .map(|(g, w)| {
                // Names and file/line; Breakpad files carry no inline detail for all.
                if g.get("function").is_none() {
                    return Err(format!("unnamed: {g}"));
                }
                common::check_frame(g, w).or_else(|e| {
                    // The outer name and the innermost line are what a .sym always has.
                    let want = &w["expect"];
                    let name = want["function"].as_str().unwrap_or("");
                    let inner = g["inlines"].get(0).unwrap_or(g);
                    let line_ok = want["line"].is_null() || inner["line"] == want["line"];
                    if common::name_matches(g["function"].as_str().unwrap(), &[name]) && line_ok {
                        Ok(())
                    } else {
                        Err(e)
                    }
                })
            })
            .collect();
        let ok = results.iter().filter(|r| r.is_ok()).count();
        let strict = got
            .iter()
            .zip(&wanted)
            .filter(|(g, w)| common::check_frame(g, w).is_ok())
            .count();
        let with_line = got
            .iter()
            .zip(&wanted)
            .filter(|(g, w)| w["expect"]["line"].is_null() || g.get("line").is_some())
            .count();
        eprintln!("{name}: {strict} frames agree with the truth in every field");
        eprintln!(
            "{name}: {ok}/{} frames named as expected, {with_line} with a line",
            got.len()
        );
        for e in results.iter().filter_map(|r| r.as_ref().err()).take(5) {
            eprintln!("  {e}");
        }
        assert!(ok * 100 >= got.len() * 98, "{name}: {ok}/{}", got.len());
        assert!(
            with_line * 100 >= got.len() * 98,
            "{name}: {with_line}/{}",
            got.len()
        );
    }
}

#[test]
fn query_waits_for_its_downloads_and_says_once_when_curl_is_missing() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-query");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let (tecken, _storage) = tecken(store);
    let request = json!({"memoryMap": [["libfake.so", modules[0].id], ["fakewin.pdb", modules[1].id]],
                         "stacks": [[[0, 0x1004], [1, 0x2008]]]});
    let args = ["/symbolicate/v5", "--breakpad-symbol-server", &tecken.url()];
    let cache = dir.join("cache").display().to_string();
    let a = common::query_stdin(&args, &[("XDG_CACHE_HOME", &cache)], &request);
    let f = &a["results"][0]["stacks"][0];
    assert_eq!(f[0]["function"], json!("fake_alpha"));
    assert_eq!(f[1]["function"], json!("WinMain"));
    // No curl: said once, answered from local data (nothing here).
    let out = common::run_with_stdin(
        Command::new(BIN)
            .arg("query")
            .args(args)
            .env("XDG_CACHE_HOME", dir.join("cache2"))
            .env("PROFILER_SYMBOL_SERVER_CURL", dir.join("no-such-curl")),
        request.to_string().as_bytes(),
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.matches("warning: curl is not installed").count(),
        1,
        "{stderr}"
    );
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
}

#[test]
fn mach_flow_with_this_binary_in_place_of_samply() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-mach");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let (tecken, _storage) = tecken(store);
    let profile = dir.join("profile.json");
    write_profile(
        &profile,
        &modules
            .iter()
            .map(|m| lib(m.name, m.id, &format!("/absent/{}", m.name), None))
            .collect::<Vec<_>>(),
    );
    let mut frames = Vec::new();
    for (i, m) in modules.iter().enumerate() {
        for f in &m.frames {
            frames.push(json!([i, f.0, f.1]));
        }
    }
    // Enough jobs for several parallel requests of 10.
    let frames: Vec<Value> = frames.iter().cycle().take(25).cloned().collect();
    let expected = json!({
        "memoryMap": modules.iter().map(|m| json!([m.name, m.id])).collect::<Vec<_>>(),
        "frames": frames,
    });
    let expected_path = dir.join("expected.json");
    std::fs::write(&expected_path, expected.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mach_flow.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(BIN)
        .arg(&profile)
        .arg(format!("{}/", tecken.url()))
        .arg(&expected_path)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("named 25/25; exit status after SIGINT: 0"),
        "{text}"
    );
}

#[test]
fn symsrv_layout_from_the_flag_and_from_nt_symbol_path() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-symsrv-layout");
    let m = &sym_modules()[1];
    // The server's file is read by its bytes: a Breakpad text stands in for a PDB here
    // (the corpus test above serves a real one).
    let root = dir.join("srv");
    let at = root.join(m.name).join(m.id);
    std::fs::create_dir_all(&at).unwrap();
    std::fs::write(at.join(m.name), sym_text(m)).unwrap();
    // A CAB-compressed answer (symsrv's .pd_ form) is reported, not parsed.
    let cab_id = "ABABABABABABABABABABABABABABABAB1";
    let cab = root.join("cab.pdb").join(cab_id);
    std::fs::create_dir_all(&cab).unwrap();
    std::fs::write(cab.join("cab.pdb"), b"MSCF\0\0\0\0 not really a cabinet").unwrap();
    let srv = Fake::start(files_handler(root));
    let request = json!({"memoryMap": [[m.name, m.id], ["cab.pdb", cab_id]],
                         "stacks": [[[0, 0x2008], [1, 0x10]]]});
    let cache = dir.join("nt-cache");
    let path = format!("srv*{}*{}", cache.display(), srv.url());
    let home = dir.join("home").display().to_string();
    for (args, env) in [
        (
            vec!["/symbolicate/v5", "--windows-symbol-server", &srv.url()],
            vec![("XDG_CACHE_HOME", home.as_str())],
        ),
        (
            vec!["/symbolicate/v5"],
            vec![
                ("XDG_CACHE_HOME", home.as_str()),
                ("_NT_SYMBOL_PATH", path.as_str()),
            ],
        ),
    ] {
        let a = common::query_stdin(&args, &env, &request);
        let r = &a["results"][0];
        assert_eq!(r["stacks"][0][0]["function"], json!("WinMain"), "{a}");
        let errors = r["module_errors"][format!("cab.pdb/{cab_id}")].to_string();
        assert!(errors.contains("CAB-compressed"), "{errors}");
    }
    assert!(
        dir.join("home/profiler-symbol-server/windows")
            .join(m.name)
            .join(m.id)
            .join(m.name)
            .is_file()
    );
    assert!(cache.join(m.name).join(m.id).join(m.name).is_file());
    assert_eq!(srv.count(&format!("/{}/{}/{}", m.name, m.id, m.name)), 2);
}

#[test]
fn symbolicate_fetches_every_module_once_for_the_corpus_profile() {
    if !have_curl() {
        return;
    }
    let corpus = common::corpus();
    let dir = scratch("remote-ci");
    let (tecken, _storage) = tecken(corpus.join("breakpad"));
    let out = dir.join("out.json");
    let status = Command::new(BIN)
        .arg("symbolicate")
        .arg(corpus.join("profiles/gecko-profile-linux.json"))
        .arg("-o")
        .arg(&out)
        .args(["--breakpad-symbol-server", &tecken.url()])
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("DEBUGINFOD_URLS")
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    let expected: Value = serde_json::from_slice(
        &std::fs::read(corpus.join("profiles/gecko-profile-linux.expected.json")).unwrap(),
    )
    .unwrap();
    // Every address of a lib became a name: its hex string is gone from the output (the
    // names themselves are checked against the truth by the server tests above).
    let mut named = 0;
    let mut total = 0;
    for (addr, e) in expected["frames"].as_object().unwrap() {
        if e["lib"].is_string() {
            total += 1;
            named += usize::from(!text.contains(&format!("\"{addr}\"")));
        }
    }
    eprintln!("symbolicate: {named}/{total} addresses replaced by names");
    assert!(named * 100 >= total * 98, "{named}/{total}");
    let mut asked = tecken.requests();
    asked.sort();
    let n = asked.len();
    asked.dedup();
    assert_eq!(asked.len(), n, "a file asked for twice: {asked:?}");
}

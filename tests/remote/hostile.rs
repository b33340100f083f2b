//! Caches shared with other tools, and downloads as an attacker would serve them.

use super::*;

#[cfg(unix)]
pub(crate) fn set_age(path: &Path, days: u64) {
    let f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86400))
        .unwrap();
}

#[cfg(unix)]
pub(crate) fn plant(path: &Path, days: u64) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, b"a file of another tool").unwrap();
    set_age(path, days);
    path.to_path_buf()
}

/// Runs `query` on one frame of a module; (answer, stderr).
pub(crate) fn query_one(
    args: &[String],
    env: &[(&str, String)],
    name: &str,
    id: &str,
    offset: u64,
) -> (Value, String) {
    let request = json!({"memoryMap": [[name, id]], "stacks": [[[0, offset]]]});
    let out = common::run_with_stdin(
        Command::new(BIN)
            .arg("query")
            .arg("/symbolicate/v5")
            .args(args)
            .env_remove("DEBUGINFOD_URLS")
            .env_remove("_NT_SYMBOL_PATH")
            .envs(env.iter().map(|(k, v)| (k, v))),
        request.to_string().as_bytes(),
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

#[cfg(unix)]
#[test]
pub(crate) fn eviction_removes_only_files_this_program_fetched() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-evict-shared");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let (tecken, _storage) = tecken(store);
    let xdg = dir.join("xdg");
    let root = xdg.join("profiler-symbol-server");
    let env = [("XDG_CACHE_HOME", xdg.display().to_string())];
    let server = ["--breakpad-symbol-server".to_string(), tecken.url()];
    let id = "0123456789ABCDEF0123456789ABCDEF1";
    // Other tools' files, old enough for any age rule, in our default cache and in a
    // WinDbg-layout cache the user shares with us.
    let foreign = [
        plant(
            &root.join(format!("breakpad/ntdll.pdb/{id}/ntdll.pdb")),
            400,
        ),
        plant(&root.join("breakpad/notes.txt"), 400),
        plant(&root.join(format!("windows/ntdll.pdb/{id}/ntdll.pdb")), 400),
    ];
    let shared = dir.join("shared-symbols");
    let shared_files = [
        plant(&shared.join(format!("ntdll.pdb/{id}/ntdll.pdb")), 400),
        plant(&shared.join("libfake.so/OLD/libfake.sym"), 400),
    ];
    // A root that is a symlink: refused whole, its target untouched.
    let victim = dir.join("victim");
    let victim_file = plant(&victim.join(format!("kernel32.pdb/{id}/kernel32.pdb")), 400);
    let linked = dir.join("linked-cache");
    std::os::unix::fs::symlink(&victim, &linked).unwrap();

    // Run 1 fetches libfake's .sym into the default cache; it then looks 200 days old.
    let m = &modules[0];
    let (a, _) = query_one(&server, &env, m.name, m.id, m.frames[0].0);
    assert_eq!(
        a["results"][0]["stacks"][0][0]["function"],
        json!(m.frames[0].1)
    );
    let ours = root.join(format!("breakpad/{}/{}/libfake.so.sym", m.name, m.id));
    assert!(ours.is_file());
    set_age(&ours, 200);
    // Run 2 fetches another file: eviction runs, and only our own old file goes.
    let w = &modules[1];
    let (a, _) = query_one(&server, &env, w.name, w.id, w.frames[0].0);
    assert_eq!(
        a["results"][0]["stacks"][0][0]["function"],
        json!(w.frames[0].1)
    );
    assert!(!ours.exists(), "our own file unused for 200 days stays");
    for f in &foreign {
        assert!(f.is_file(), "{} was deleted", f.display());
    }
    // Into the shared cache (named by the user): added to, nothing removed.
    let mut args = server.to_vec();
    args.extend([
        "--breakpad-symbol-cache".to_string(),
        shared.display().to_string(),
    ]);
    query_one(&args, &env, m.name, m.id, m.frames[0].0);
    assert!(
        shared
            .join(format!("{}/{}/libfake.so.sym", m.name, m.id))
            .is_file()
    );
    set_age(
        &shared.join(format!("{}/{}/libfake.so.sym", m.name, m.id)),
        200,
    );
    query_one(&args, &env, w.name, w.id, w.frames[0].0);
    for f in &shared_files {
        assert!(f.is_file(), "{} was deleted", f.display());
    }
    assert!(
        shared
            .join(format!("{}/{}/libfake.so.sym", m.name, m.id))
            .is_file()
    );
    // The symlinked root: a warning, no request, nothing written or removed there.
    let before = tecken.requests().len();
    let mut args = server.to_vec();
    args.extend([
        "--breakpad-symbol-cache".to_string(),
        linked.display().to_string(),
    ]);
    let (a, stderr) = query_one(&args, &env, "other.so", id, 0x10);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
    assert_eq!(tecken.requests().len(), before);
    assert!(victim_file.is_file());
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
}

#[test]
pub(crate) fn files_in_the_debuginfod_cache_that_fail_verification_are_removed_only_if_ours() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-debuginfod-foreign");
    let xdg = dir.join("xdg");
    // The default debuginfod cache: shared with elfutils and gdb.
    let dcache = xdg.join("debuginfod_client");
    let theirs_id = "1111111111111111111111111111111111111111";
    let ours_id = "2222222222222222222222222222222222222222";
    let theirs = dcache.join(theirs_id).join("debuginfo");
    std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
    std::fs::write(&theirs, b"not an ELF file, written by another tool").unwrap();
    // The server answers with something that is no debug file either.
    let debuginfod = Fake::start(|_: &str| Reply::Body(b"not an ELF file either".to_vec()));
    let profile = dir.join("profile.json");
    let libs = [
        lib(
            "theirs.so",
            &breakpad_id_of(theirs_id),
            "/nonexistent/theirs.so",
            Some(theirs_id),
        ),
        lib(
            "ours.so",
            &breakpad_id_of(ours_id),
            "/nonexistent/ours.so",
            Some(ours_id),
        ),
    ];
    write_profile(&profile, &libs);
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        ("DEBUGINFOD_URLS", debuginfod.url()),
    ];
    let map = [
        ("theirs.so".to_string(), breakpad_id_of(theirs_id)),
        ("ours.so".to_string(), breakpad_id_of(ours_id)),
    ];
    for _ in 0..2 {
        let server = start(&[profile.display().to_string(), "-v".into()], &env);
        let a = server.symbolicate(&map, &[(0, 0x10), (1, 0x10)]);
        assert!(
            frames(&a).iter().all(|f| f.get("function").is_none()),
            "{a}"
        );
        drop(server);
        assert!(theirs.is_file(), "another tool's file was deleted");
        assert!(
            !dcache.join(ours_id).join("debuginfo").exists(),
            "our own rejected download stays"
        );
    }
    // Asked once per run for our file, never for theirs (it was in the cache).
    assert_eq!(debuginfod.count(theirs_id), 0);
    assert_eq!(debuginfod.count(ours_id), 2);
    let server = start(&[profile.display().to_string(), "-v".into()], &env);
    server.symbolicate(&map, &[(0, 0x10)]);
    // The line was written before the answer; its reader may not have it yet.
    let said = "not used; left in place, this program did not write it";
    let t = std::time::Instant::now();
    while !server.stderr().contains(said) && t.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(server.stderr().contains(said), "{}", server.stderr());
    assert!(theirs.is_file());
}

#[cfg(unix)]
#[test]
pub(crate) fn downloads_go_to_a_private_file_curl_never_opens_by_name() {
    if !have_curl() {
        return;
    }
    if !Path::new("/proc/self/fd").is_dir() {
        common::skip("no /proc/self/fd to list curl's open files", false);
        return;
    }
    let dir = scratch("remote-fd");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let server = Fake::start(files_handler(store));
    // A curl that logs its arguments and what its stdout is, then runs the real one.
    let log = dir.join("curl.log");
    let wrapper = dir.join("curl-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{log}'\necho \"stdout=$(readlink /proc/$$/fd/1)\" >> '{log}'\nexec curl \"$@\"\n",
            log = log.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let xdg = dir.join("xdg");
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        ("PROFILER_SYMBOL_SERVER_CURL", wrapper.display().to_string()),
    ];
    let m = &modules[0];
    let args = ["--breakpad-symbol-server".to_string(), server.url()];
    let (a, _) = query_one(&args, &env, m.name, m.id, m.frames[0].0);
    assert_eq!(
        a["results"][0]["stacks"][0][0]["function"],
        json!(m.frames[0].1)
    );
    let log = std::fs::read_to_string(&log).unwrap();
    let argv: Vec<&str> = log.lines().collect();
    assert!(
        !argv.iter().any(|a| *a == "--output" || *a == "-o"),
        "{log}"
    );
    for flag in ["--max-time", "--compressed", "--max-filesize"] {
        assert!(argv.contains(&flag), "{flag} missing: {log}");
    }
    assert!(
        !argv.contains(&"--location"),
        "curl follows no redirect itself: {log}"
    );
    let stdout = argv.iter().find_map(|a| a.strip_prefix("stdout=")).unwrap();
    assert!(stdout.contains(".libfake.so.sym.pss-part-"), "{log}");
    let root = xdg.join("profiler-symbol-server");
    let file = root.join(format!("breakpad/{}/{}/libfake.so.sym", m.name, m.id));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    for d in [
        root.clone(),
        root.join("breakpad"),
        file.parent().unwrap().to_path_buf(),
    ] {
        assert_eq!(mode(&d), 0o700, "{}", d.display());
    }
}

#[test]
pub(crate) fn without_a_cache_folder_servers_are_not_used_and_nothing_goes_to_tmp() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-nocache");
    let store = dir.join("store");
    let modules = sym_modules();
    write_store(&store, &modules);
    let server = Fake::start(files_handler(store));
    let m = &modules[0];
    let request = json!({"memoryMap": [[m.name, m.id]], "stacks": [[[0, m.frames[0].0]]]});
    let out = common::run_with_stdin(
        Command::new(BIN)
            .args([
                "query",
                "/symbolicate/v5",
                "--breakpad-symbol-server",
                &server.url(),
            ])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TMPDIR", dir.join("tmp")),
        request.to_string().as_bytes(),
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no cache folder"), "{stderr}");
    assert!(server.requests().is_empty());
    assert!(!dir.join("tmp").exists());
}

#[test]
pub(crate) fn oversized_chunked_answers_and_endless_redirects_are_cut_off() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-bounds");
    let big = Fake::start(|_: &str| Reply::Chunked(vec![b'x'; 3 << 20]));
    let xdg = dir.join("xdg");
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        (
            "PROFILER_SYMBOL_SERVER_MAX_DOWNLOAD",
            (1u64 << 20).to_string(),
        ),
    ];
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let (a, stderr) = query_one(
        &["--breakpad-symbol-server".to_string(), big.url()],
        &env,
        "big.so",
        id,
        0x10,
    );
    assert!(stderr.contains("larger than the limit"), "{stderr}");
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
    assert!(partial_files(&xdg).is_empty());
    assert!(
        !xdg.join("profiler-symbol-server/breakpad/big.so")
            .join(id)
            .join("big.sym")
            .exists()
    );
    // A server that redirects to itself forever: given up after 5 redirects.
    let looping = Arc::new(Mutex::new(String::new()));
    let l = looping.clone();
    let redirector =
        Fake::start(move |_: &str| Reply::Redirect(format!("{}/again", l.lock().unwrap())));
    *looping.lock().unwrap() = redirector.url();
    let (_, stderr) = query_one(
        &["--breakpad-symbol-server".to_string(), redirector.url()],
        &env,
        "loop.so",
        id,
        0x10,
    );
    assert!(stderr.contains("more than 5 redirects"), "{stderr}");
    assert_eq!(redirector.requests().len(), 6);
}

/// A front server that answers every request with a redirect to `to`.
pub(crate) fn redirect_to(to: String) -> Fake {
    Fake::start(move |_: &str| Reply::Redirect(to.clone()))
}

#[test]
pub(crate) fn redirects_to_curl_globs_or_to_this_machine_make_no_request() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-globs");
    let env = [("XDG_CACHE_HOME", dir.join("xdg").display().to_string())];
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    // A service on this machine, and a "remote" server holding the file.
    let secret = Fake::start(|_: &str| Reply::Body(b"secret".to_vec()));
    let remote = Fake::start(|_: &str| Reply::Body(b"MODULE Linux x86_64 X a.so\n".to_vec()));
    let port = |f: &Fake| f.addr.port();
    let cases = [
        // curl would ask both; the host check would read `{127.0.0.1`.
        format!(
            "http://{{127.0.0.1:{}/secret,127.0.0.1:{}/final}}",
            port(&secret),
            port(&remote)
        ),
        // curl would ask 500 times and concatenate the answers.
        format!("{}/final[1-500]", remote.url()),
        // A name that is this machine (looked up here, before any request).
        format!("http://localhost:{}/secret", port(&secret)),
    ];
    for (i, to) in cases.iter().enumerate() {
        let front = redirect_to(to.clone());
        let (a, stderr) = query_one(
            &["--breakpad-symbol-server".to_string(), front.url()],
            &env,
            &format!("m{i}.so"),
            id,
            0x10,
        );
        assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
        assert!(stderr.contains("refused"), "{to}: {stderr}");
        assert_eq!(front.requests().len(), 1, "{to}");
        if i == 2 {
            // Refused by the address the name has, not by its spelling.
            assert!(
                stderr.contains("127.0.0.1") || stderr.contains("::1"),
                "{stderr}"
            );
        }
    }
    assert_eq!(secret.requests(), Vec::<String>::new());
    assert_eq!(remote.requests(), Vec::<String>::new());
    assert!(partial_files(&dir.join("xdg")).is_empty());
}

#[test]
pub(crate) fn one_deadline_bounds_a_download_over_all_its_hops() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-deadline");
    let xdg = dir.join("xdg");
    // Moving all the time (never a stall), but taking 100 s for its 1 MB.
    let slow = Fake::start(|_: &str| Reply::Throttled(vec![b'x'; 1 << 20], 1 << 10));
    let front = redirect_to(format!("{}/file", slow.url()));
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        ("PROFILER_SYMBOL_SERVER_DOWNLOAD_SECONDS", "2".to_string()),
    ];
    let t = std::time::Instant::now();
    let (a, stderr) = query_one(
        &["--breakpad-symbol-server".to_string(), front.url()],
        &env,
        "slow.so",
        "0123456789ABCDEF0123456789ABCDEF0",
        0x10,
    );
    eprintln!("answered after {:?}", t.elapsed());
    assert!(
        stderr.contains("not complete after 2 s, the limit for one download"),
        "{stderr}"
    );
    assert!(a["results"][0]["stacks"][0][0].get("function").is_none());
    assert_eq!((front.requests().len(), slow.requests().len()), (1, 1));
    assert!(partial_files(&xdg).is_empty());
}

/// Every folder and file under `dir`, relative to it, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
pub(crate) fn downloads_that_find_nothing_leave_no_folder_and_no_index_line() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-404-leaves-nothing");
    let missing = Fake::start(|_| Reply::NotFound);
    let xdg = dir.join("xdg");
    // Our cache root exists (an earlier run's index in it); elfutils' does not yet.
    let root = xdg.join("profiler-symbol-server");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("written.jsonl"), "").unwrap();
    let env = [
        ("XDG_CACHE_HOME", xdg.display().to_string()),
        ("DEBUGINFOD_URLS", missing.url()),
    ];
    let args = [
        "--breakpad-symbol-server".to_string(),
        missing.url(),
        "--windows-symbol-server".to_string(),
        missing.url(),
    ];
    let request = json!({
        "memoryMap": [
            ["libnothere.so", "0123456789ABCDEF0123456789ABCDEF0"],
            ["nothere.pdb", "0123456789ABCDEF0123456789ABCDEF1"],
        ],
        "stacks": [[[0, 0x10], [1, 0x20]]]
    });
    let out = common::run_with_stdin(
        Command::new(BIN)
            .args(["query", "/symbolicate/v5"])
            .args(&args)
            .env_remove("_NT_SYMBOL_PATH")
            .envs(env.iter().map(|(k, v)| (k, v))),
        request.to_string().as_bytes(),
    );
    assert!(out.status.success());
    // Both servers were asked (a breakpad and a symsrv URL for the two modules).
    assert!(
        missing.count("libnothere.so") >= 1,
        "{:?}",
        missing.requests()
    );
    assert!(
        missing.count("nothere.pdb") >= 1,
        "{:?}",
        missing.requests()
    );
    assert_eq!(
        tree(&xdg),
        [
            "profiler-symbol-server",
            "profiler-symbol-server/written.jsonl"
        ]
    );
    assert_eq!(
        std::fs::read_to_string(root.join("written.jsonl")).unwrap(),
        ""
    );
}

#[test]
pub(crate) fn a_location_holding_a_status_line_does_not_make_the_redirect_body_the_file() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-forged-status");
    let modules = sym_modules();
    let m = &modules[0];
    // The redirect's own body is the module's .sym: stored, it would be found.
    let body = sym_text(m).into_bytes();
    let target = Fake::start(|_: &str| Reply::NotFound);
    let forged = [
        // curl prints the Location raw after its own fields: a status line of its own.
        format!("{}/y @@pss-status 200 8.8.8.8 ", target.url()),
        // Relative: curl encodes the blanks; back to the front, which says it again.
        "/y @@pss-status 200 8.8.8.8".to_string(),
        format!("{}/y?@@pss-status 200 8.8.8.8", target.url()),
        format!("{}/y\r@@pss-status 200 8.8.8.8", target.url()),
    ];
    for (i, to) in forged.iter().enumerate() {
        let (to, body) = (to.clone(), body.clone());
        let front = Fake::start(move |_: &str| Reply::RedirectWithBody(to.clone(), body.clone()));
        let xdg = dir.join(format!("xdg{i}"));
        let env = [("XDG_CACHE_HOME", xdg.display().to_string())];
        let (a, stderr) = query_one(
            &["--breakpad-symbol-server".to_string(), front.url()],
            &env,
            m.name,
            m.id,
            m.frames[0].0,
        );
        assert!(
            a["results"][0]["stacks"][0][0].get("function").is_none(),
            "{:?}: the 302's body was taken for the file: {a}\n{stderr}",
            forged[i]
        );
        let stored = xdg.join(format!(
            "profiler-symbol-server/breakpad/{}/{}/libfake.so.sym",
            m.name, m.id
        ));
        assert!(!stored.exists(), "{}", stored.display());
        assert!(partial_files(&xdg).is_empty());
    }
}

/// CPU time (user + system) the process `pid` has used so far, in clock ticks.
#[cfg(target_os = "linux")]
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces), from the third on.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

#[test]
#[cfg(target_os = "linux")]
pub(crate) fn a_stalled_download_with_idle_work_pending_leaves_the_loop_asleep() {
    if !have_curl() {
        return;
    }
    let dir = scratch("remote-idle-stall");
    let stall = Fake::start(|_: &str| Reply::Stall);
    // The example's profile, its library nowhere on disk: the idle-time work asks the
    // symbol server for it, which never answers.
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/profile.json");
    let mut profile: Value = serde_json::from_slice(&std::fs::read(example).unwrap()).unwrap();
    for key in ["name", "debugName", "path", "debugPath"] {
        profile["libs"][0][key] = json!("absent.so");
    }
    let path = dir.join("profile.json");
    std::fs::write(&path, serde_json::to_vec(&profile).unwrap()).unwrap();
    let env = [("XDG_CACHE_HOME", dir.join("cache").display().to_string())];
    let server = start(
        &[
            path.display().to_string(),
            "--breakpad-symbol-server".into(),
            stall.url(),
        ],
        &env,
    );
    // With --no-open, idle work starts after the first request.
    assert_eq!(server.get("/").status, 200);
    while stall.requests().is_empty() {
        std::thread::yield_now();
    }
    // A window of wall time in which nothing can progress (the download's deadline is
    // minutes away): a loop that polls instead of sleeping uses all of it.
    let before = cpu_ticks(server.pid());
    let window = std::time::Instant::now();
    std::thread::sleep(std::time::Duration::from_secs(2));
    let used = cpu_ticks(server.pid()) - before;
    // SAFETY: sysconf only reads a system constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let seconds = used as f64 / hz as f64;
    let wall = window.elapsed().as_secs_f64();
    eprintln!("{seconds:.2} s of CPU in {wall:.2} s while the download stalls");
    assert!(seconds < wall * 0.2, "{seconds} s of CPU in {wall} s");
    server.assert_alive();
}

//! The command line: help, versions, usage errors (exit 2), runtime failures (exit 1).

mod common;

use std::process::{Command, Output};

use common::*;

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn help_and_version() {
    let o = run(&["--help"]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for opt in [
        "--symbol-dir",
        "--breakpad-symbol-dir",
        "--symbols-zip",
        "--windows-symbol-path",
        "--dyld-shared-cache",
        "--verbose",
        "--quiet",
        "--no-open",
        "--port",
        "--address",
        "--profiler-url",
        "query",
        "symbolicate",
    ] {
        assert!(help.contains(opt), "--help does not explain {opt}");
    }
    let o = run(&["-V"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("profiler-symbol-server "));
}

#[test]
fn usage_errors_exit_2_and_name_the_option() {
    for (args, needle) in [
        (&["--bogus"][..], "--bogus"),
        (&["--port", "abc"], "--port"),
        (&["--address", "nowhere"], "--address"),
        (&["--profiler-url", "ftp://x"], "--profiler-url"),
        (&["query"], "API-PATH"),
        (&["symbolicate"], "PROFILE"),
        (&["a.json", "b.json"], "b.json"),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn runtime_failures_exit_1_and_name_the_file() {
    let o = run(&["--no-open", "/nonexistent/profile.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("/nonexistent/profile.json"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());

    let o = run(&["query", "/symbolicate/v5", "/nonexistent/req.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/req.json"));

    // A bad request in query mode: exit 1, the error as JSON on stdout.
    let dir = scratch("cli-bad-query");
    let req = dir.join("req.json");
    std::fs::write(&req, br#"{"stacks": []}"#).unwrap();
    let o = run(&["query", "/symbolicate/v5", req.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["error"].as_str().unwrap().contains("memoryMap"));
}

/// The first stdout line of a server started by `cmd` (its URL), then stops it.
fn url_line(cmd: &mut Command) -> String {
    let mut child = common::Reaped::spawn(
        cmd.stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null()),
    );
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    line
}

#[test]
fn an_exact_port_that_is_taken_fails_clearly() {
    let server = Server::start(&[]);
    let port = server.addr.port().to_string();
    let o = run(&["--no-open", "-P", &port]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(&port), "{}", stderr(&o));
    // N+ moves on to the next free port instead (and is stopped right away).
    let line = url_line(Command::new(BIN).args(["--no-open", "-P", &format!("{port}+")]));
    assert!(line.contains("symbolServer="), "{line}");
    assert!(
        !line.contains(&format!("%3A{port}%2F")),
        "took the busy port: {line}"
    );
}

#[test]
fn profiler_url_comes_from_the_option_or_the_environment() {
    let read_url = url_line;
    let line = read_url(
        Command::new(BIN)
            .args(["--no-open", "-P", "0"])
            .env("PROFILER_URL", "http://localhost:4242/"),
    );
    assert!(
        line.starts_with("http://localhost:4242/?symbolServer=http%3A%2F%2F127.0.0.1%3A"),
        "{line}"
    );
    let line = read_url(
        Command::new(BIN)
            .args([
                "--no-open",
                "-P",
                "0",
                "--profiler-url",
                "https://example.org/p",
            ])
            .env("PROFILER_URL", "http://localhost:4242"),
    );
    assert!(
        line.starts_with("https://example.org/p/?symbolServer="),
        "{line}"
    );
}

#[test]
fn each_mode_has_its_own_help() {
    for (mode, has, lacks) in [
        ("load", "--no-open", "--sidecar"),
        ("symbolicate", "--sidecar", "--port"),
        ("query", "API-PATH", "--port"),
    ] {
        let o = run(&[mode, "--help"]);
        assert!(o.status.success(), "{mode} --help");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.starts_with(mode), "{mode} --help: {text}");
        assert!(text.contains(has), "{mode} --help lacks {has}");
        assert!(
            text.contains("--symbol-dir"),
            "{mode} --help lacks --symbol-dir"
        );
        assert!(!text.contains(lacks), "{mode} --help shows {lacks}");
    }
    let o = run(&["--help"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("Ctrl-C"));
}

#[test]
fn a_taken_port_says_how_to_get_another() {
    let server = Server::start(&[]);
    let port = server.addr.port().to_string();
    let o = run(&["--no-open", "-P", &port]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("-P 0") && e.contains(&format!("-P {port}+")),
        "{e}"
    );
}

#[test]
fn a_profile_that_is_not_json_is_a_usage_error_at_start() {
    let dir = scratch("cli-not-json");
    let bogus = dir.join("notes.txt");
    std::fs::write(&bogus, "these are not the profiles you are looking for\n").unwrap();
    for mode in [&["--no-open"][..], &["symbolicate", "-o", "/dev/null"][..]] {
        let mut args = mode.to_vec();
        args.push(bogus.to_str().unwrap());
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("notes.txt"), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn output_into_a_missing_folder_or_onto_a_device_is_refused() {
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example/profile.json");
    let dir = scratch("cli-output");
    let missing = dir.join("no-such-folder");
    let out = missing.join("out.json");
    let o = run(&["symbolicate", profile, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(&format!("output folder {}", missing.display())),
        "{}",
        stderr(&o)
    );
    assert!(!missing.exists());
    // A folder (or a device) is never replaced by a regular file.
    let target = dir.join("a-folder");
    std::fs::create_dir_all(&target).unwrap();
    let o = run(&["symbolicate", profile, "-o", target.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(target.is_dir());
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "nothing left behind"
    );
    #[cfg(unix)]
    {
        let o = run(&["symbolicate", profile, "-o", "/dev/null"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    }
}

#[test]
fn missing_symbol_folders_and_zips_are_named_at_start() {
    let req = scratch("cli-missing-dirs").join("req.json");
    std::fs::write(&req, br#"{"memoryMap": [], "stacks": [[]]}"#).unwrap();
    let o = run(&[
        "query",
        "--symbol-dir",
        "/no/such/dir",
        "--breakpad-symbol-dir",
        "/no/such/store",
        "--symbols-zip",
        "/no/such.zip",
        "/symbolicate/v5",
        req.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    for needle in [
        "--symbol-dir /no/such/dir",
        "--breakpad-symbol-dir /no/such/store",
        "--symbols-zip /no/such.zip",
    ] {
        assert!(e.contains(needle), "no warning about {needle}: {e}");
    }
}

/// A lib path from a profile reaches the advice on stderr shell-quoted
/// inside the suggested commands, and no control byte (an ESC sequence) reaches the
/// terminal, in the advice or anywhere else.
#[test]
fn printed_advice_quotes_paths_and_escapes_control_characters() {
    let dir = scratch("cli-advice-quoting");
    let marker = dir.join("PWNED");
    // Under /usr: a distribution's library, whose advice names package commands.
    let path = format!(
        "/usr/lib/pss-no-such-dir/lib$(touch {})'`id`.so\x1b]0;title\x07\x1b[2J",
        marker.display()
    );
    let profile = dir.join("profile.json");
    let lib = serde_json::json!({"debugName": "libevil\x1b[31m.so", "name": "libevil.so",
        "breakpadId": "0123456789ABCDEF0123456789ABCDEF0", "path": path,
        "start": 0x1000, "end": 0x2000, "offset": 0});
    let doc = serde_json::json!({"meta": {"version": 27, "interval": 1}, "libs": [lib],
        "threads": [{"stringTable": ["0x1010"]}], "processes": []});
    std::fs::write(&profile, doc.to_string()).unwrap();
    // -v: each module's own advice, with its commands.
    let o = run(&[
        "symbolicate",
        "-v",
        profile.to_str().unwrap(),
        "-o",
        dir.join("out.json").to_str().unwrap(),
    ]);
    // Exit 3: the only lib is missing, so nothing was resolved.
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let err = stderr(&o);
    // Line ends are the only control bytes.
    let raw: Vec<char> = err
        .chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect();
    assert!(raw.is_empty(), "raw control characters {raw:?} in: {err}");
    assert!(err.contains("libevil\\x1b[31m.so"), "{err}");
    // The word after `dpkg -S`, as a POSIX shell reads it, is the path (controls shown
    // escaped), and reading it runs nothing.
    let word = err
        .split("$(dpkg -S ")
        .nth(1)
        .and_then(|rest| rest.split(" | cut").next())
        .unwrap_or_else(|| panic!("no dpkg command in: {err}"));
    assert!(word.starts_with('\''), "{word}");
    let shell = Command::new("sh")
        .args(["-c", &format!("printf %s {word}")])
        .output()
        .unwrap();
    let escaped = path.replace('\x1b', "\\x1b").replace('\x07', "\\x07");
    assert_eq!(String::from_utf8_lossy(&shell.stdout), escaped);
    for cmd in ["rpm -qf ", "debuginfod-find debuginfo "] {
        assert!(err.contains(&format!("{cmd}{word}")), "{cmd}: {err}");
    }
    assert!(!marker.exists(), "the advice ran a command");
}

/// A profile in `dir` whose one lib is the example program at `path`, wanted with `id`,
/// and one address in it.
fn example_profile(dir: &std::path::Path, id: &str, path: &std::path::Path) -> std::path::PathBuf {
    let lib = serde_json::json!({"debugName": "example", "name": "example", "breakpadId": id,
        "path": path, "debugPath": path, "start": 0x1000, "end": 0x9000, "offset": 0});
    let doc = serde_json::json!({"meta": {"version": 27, "interval": 1}, "libs": [lib],
        "threads": [{"stringTable": ["0x1100"]}], "processes": []});
    let profile = dir.join("profile.json");
    std::fs::write(&profile, doc.to_string()).unwrap();
    profile
}

/// The commonest failure: the binary was rebuilt since the profile was recorded. The
/// module's line names both IDs and the file, asks whether it was rebuilt, and gives no
/// package-manager advice (which cannot help a local build).
#[test]
fn a_rebuilt_binary_is_said_first_with_both_ids() {
    let dir = scratch("cli-rebuilt");
    let bin = dir.join("example");
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/example"),
        &bin,
    )
    .unwrap();
    let actual = elf_debug_id(&bin);
    // The profile's ID: the same build ID but one digit different (another build).
    let mut wanted: Vec<char> = actual.chars().collect();
    wanted[0] = if wanted[0] == 'A' { 'B' } else { 'A' };
    let wanted: String = wanted.into_iter().collect();
    let profile = example_profile(&dir, &wanted, &bin);
    let o = run(&[
        "symbolicate",
        profile.to_str().unwrap(),
        "-o",
        dir.join("out.json").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    let line = err
        .lines()
        .find(|l| l.trim_start().starts_with("example: "))
        .unwrap_or_else(|| panic!("no line for the module: {err}"));
    assert!(
        line.contains(&format!(
            "the file at {} has debug ID {actual}",
            bin.display()
        )) && line.contains(&format!("the profile wants {wanted}"))
            && line.contains("rebuilt"),
        "{line}"
    );
    for advice in ["apt", "dbgsym", "debuginfod", "dnf", ".dSYM"] {
        assert!(!err.contains(advice), "{advice} in: {err}");
    }
}

/// A stripped binary at the lib's path is only the fallback: an unstripped copy in
/// `--symbol-dir` (a later candidate) answers, without any symbol server configured.
#[test]
fn a_stripped_file_at_the_lib_path_does_not_hide_a_symbol_dir_copy() {
    let dir = scratch("cli-stripped-first");
    let full = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/example");
    let bin = dir.join("bin");
    let syms = dir.join("syms");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&syms).unwrap();
    let stripped = bin.join("example");
    let st = Command::new("strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&full)
        .status();
    if !st.is_ok_and(|s| s.success()) {
        skip("strip (binutils) is not installed", true);
        return;
    }
    std::fs::copy(&full, syms.join("example")).unwrap();
    let profile = example_profile(&dir, &elf_debug_id(&full), &stripped);
    let o = run(&[
        "symbolicate",
        profile.to_str().unwrap(),
        "--symbol-dir",
        syms.to_str().unwrap(),
        "-o",
        dir.join("out.json").to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "example: DWARF from {}",
            syms.join("example").display()
        )),
        "{err}"
    );
}

/// The first stdout line of `load -P 0 -q PROFILE` with `$BROWSER` set to `browser`, and
/// its stderr once stopped.
#[cfg(unix)]
fn url_when_the_browser_is(browser: &str) -> (String, String) {
    use std::io::{BufRead, Read};
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/example/profile.json");
    let mut child = common::Reaped::spawn(
        Command::new(BIN)
            .args(["load", "-q", "-P", "0", profile])
            .env("BROWSER", browser)
            .env_remove("PROFILER_URL")
            .env_remove("DEBUGINFOD_URLS")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped()),
    );
    // Read by a thread: a server that never prints the URL must fail the test, not hang it.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(20))
        .unwrap_or_default();
    // SIGTERM, not SIGKILL: the server removes its redirect file on the way out.
    // SAFETY: a plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (line.trim().to_string(), err)
}

#[cfg(unix)]
#[test]
fn a_browser_that_cannot_open_gives_the_url_even_when_quiet() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("cli-browser-fails");
    // xdg-open over SSH: starts, finds no browser, exits 3.
    let opener = dir.join("no-browser");
    std::fs::write(&opener, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (browser, why) in [
        (opener.to_str().unwrap(), "exited with status 3"),
        ("/nonexistent/browser", "/nonexistent/browser"),
    ] {
        let (url, err) = url_when_the_browser_is(browser);
        assert!(
            url.starts_with("https://profiler.firefox.com/from-url/"),
            "{url:?}; stderr: {err}"
        );
        assert!(
            err.contains("could not open a browser") && err.contains(why),
            "{err}"
        );
        let token = url.rsplit("%2F").next().unwrap();
        assert!(!err.contains(token), "the token went to stderr: {err}");
    }
}

//! What the user reads on stderr, through the real binary: the grouped advice after the
//! module lines it groups, with every module counted; counts in words ("1 library");
//! `-v` lines without Rust's debug formats; `-q` silent to the end, Ctrl-C included.
//! (README's quotes of each module line are checked in `src/hint.rs`'s tests.)

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{BIN, Server, elf_debug_id, job, scratch, tool};
use serde_json::json;

/// Polls `done` until it holds or `limit` passes (no fixed sleeps: the machine may be
/// loaded).
fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    done()
}

/// Two stripped programs (local builds without debug info) in `dir`.
fn stripped_programs(dir: &Path) -> Option<Vec<PathBuf>> {
    std::fs::write(dir.join("t.c"), "int main(void) { return 0; }\n").unwrap();
    let mut out = Vec::new();
    for name in ["proga", "progb"] {
        tool("gcc", &["-O1", "-o", name, "t.c"], dir)?;
        tool("strip", &["--strip-all", name], dir)?;
        out.push(dir.join(name));
    }
    Some(out)
}

/// The server answers two requests, one module each: the grouped advice comes after both
/// module lines (said again, not before, when a module joins later) and its last saying
/// counts both.
#[test]
fn grouped_advice_follows_the_module_lines_and_counts_them_all() {
    let dir = scratch("messages-advice");
    let Some(programs) = stripped_programs(&dir) else {
        return;
    };
    let server = Server::start(&["--symbol-dir", dir.to_str().unwrap()]);
    for p in &programs {
        let name = p.file_name().unwrap().to_str().unwrap();
        let r = server.post_json("/symbolicate/v5", &job(name, &elf_debug_id(p), &[0x1000]));
        assert_eq!(r.status, 200);
    }
    let told = |s: &str| s.contains("2 libraries have no debug info here (proga, progb)");
    assert!(
        wait_for(Duration::from_secs(20), || told(&server.stderr())),
        "{}",
        server.stderr()
    );
    let stderr = server.stderr();
    let lines: Vec<&str> = stderr.lines().collect();
    let at = |prefix: &str| lines.iter().position(|l| l.starts_with(prefix)).unwrap();
    let (a, b) = (at("proga: no debug info in"), at("progb: no debug info in"));
    for (i, l) in lines.iter().enumerate() {
        if l.contains("no debug info here") {
            // Each saying follows the lines of the modules it counts.
            assert!(i > a, "{stderr}");
            if l.starts_with("2 ") {
                assert!(i > b, "{stderr}");
            } else {
                assert!(l.starts_with("1 library has"), "{stderr}");
                assert!(l.contains("build it with -g"), "{stderr}");
            }
        }
    }
}

/// `-v` for a module with no place to look says so once, plainly; candidates are shown
/// as paths, never as Rust values like `File("…")`.
#[test]
fn verbose_lines_say_what_was_tried_in_words() {
    let dir = scratch("messages-verbose");
    let Some(programs) = stripped_programs(&dir) else {
        return;
    };
    let run = |args: &[&str], name: &str, id: &str| {
        use std::io::Write;
        let mut child = Command::new(BIN)
            .arg("query")
            .args(args)
            .arg("/symbolicate/v5")
            .env_remove("DEBUGINFOD_URLS")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let body = json!({"jobs": [job(name, id, &[0x1000])]});
        let mut input = child.stdin.take().unwrap();
        input.write_all(body.to_string().as_bytes()).unwrap();
        drop(input);
        String::from_utf8(child.wait_with_output().unwrap().stderr).unwrap()
    };
    let err = run(&["-v"], "libc.so.6", "0123456789ABCDEF0123456789ABCDEF0");
    let line = err
        .lines()
        .find(|l| l.starts_with("libc.so.6: "))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.starts_with("libc.so.6: not found; no file to try for libc.so.6"),
        "{line}"
    );
    assert!(
        !line.contains("looked at") && !line.contains("tried"),
        "{line}"
    );
    let p = &programs[0];
    let err = run(
        &["-v", "--symbol-dir", dir.to_str().unwrap()],
        "proga",
        &elf_debug_id(p),
    );
    assert!(
        err.contains("1 candidate\n") || err.contains(" candidates\n"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "  {}: no debug info; kept as the fallback",
            p.display()
        )),
        "{err}"
    );
    assert!(!err.contains("File(\""), "{err}");
    assert!(
        err.contains("1 library has no debug info here (proga)"),
        "{err}"
    );
}

/// `load` with a one-lib profile says "1 library"; Ctrl-C ends it with "Stopped.",
/// and with `-q` nothing at all is printed, to the end.
#[cfg(unix)]
#[test]
fn counts_read_as_words_and_quiet_stays_silent_at_ctrl_c() {
    use common::collect_stderr;
    use std::io::{BufRead, BufReader};
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/profile.json");
    for quiet in [false, true] {
        let mut cmd = Command::new(BIN);
        cmd.args(["load", "--no-open", "-P", "0"]);
        if quiet {
            cmd.arg("-q");
        }
        // Killed and reaped by the guard if an assertion fails before Ctrl-C.
        let mut child = common::Reaped::spawn(
            cmd.arg(&profile)
                .env_remove("DEBUGINFOD_URLS")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped()),
        );
        // Quiet: read to the end once the process is gone (the pipe then closes).
        let mut quiet_err = quiet.then(|| child.stderr.take().unwrap());
        let stderr = if quiet {
            Default::default()
        } else {
            collect_stderr(&mut child)
        };
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        assert!(url.starts_with("https://"), "{url}");
        if !quiet {
            let found = "Found 1 library with debug IDs in the profile.";
            assert!(
                wait_for(Duration::from_secs(20), || stderr
                    .lock()
                    .unwrap()
                    .contains(found)),
                "{}",
                stderr.lock().unwrap()
            );
        }
        // SAFETY: signalling a child of this test.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGINT);
        }
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0));
        if let Some(mut e) = quiet_err.take() {
            let mut log = String::new();
            std::io::Read::read_to_string(&mut e, &mut log).unwrap();
            assert_eq!(log, "", "-q printed something");
        } else {
            // The stderr thread reads the last line as it comes.
            wait_for(Duration::from_secs(5), || {
                stderr.lock().unwrap().contains("Stopped.")
            });
            let log = stderr.lock().unwrap().clone();
            assert!(log.contains("Stopped."), "{log}");
            assert!(!log.contains("libraries with debug IDs"), "{log}");
        }
    }
}

/// `perf record`'s output given as the profile: said what it is and how to convert it
/// (exit 2, as for any file that is no profile); `--version` names the platform too.
#[test]
fn a_perf_recording_gets_the_way_to_convert_it() {
    let dir = scratch("messages-perf");
    let perf = dir.join("perf.data");
    let mut data = b"PERFILE2".to_vec();
    data.resize(4096, 0);
    std::fs::write(&perf, data).unwrap();
    let out = dir.join("out.json");
    let p = perf.to_str().unwrap();
    for args in [
        vec!["load", "--no-open", p],
        vec!["symbolicate", p, "-o", out.to_str().unwrap()],
    ] {
        let o = Command::new(BIN).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("a Linux perf recording (perf.data), not a profile")
                && err.contains(&format!("samply import {p} --save-only")),
            "{err}"
        );
    }
    assert!(!out.exists());
    let o = Command::new(BIN).arg("--version").output().unwrap();
    let v = String::from_utf8_lossy(&o.stdout);
    assert!(
        v.starts_with(&format!(
            "profiler-symbol-server {} (",
            env!("CARGO_PKG_VERSION")
        )),
        "{v}"
    );
}

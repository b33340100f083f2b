//! End to end in a real browser: the real Firefox Profiler front-end (`../shared/frontend`,
//! served on loopback by its `serve.py`) in headless Chromium, driven by
//! `tests/browser/driver.mjs` (puppeteer-core), loads the bundled example from this binary
//! and symbolicates it; what a person would see (the call tree, its native frames, the
//! source view), read from the front-end's state, is checked against GNU `addr2line` and
//! `nm` on the example binary and against example.c on disk.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const BINARY: &str = "fixtures/example/example";
/// The driver's own bound (it closes the browser and exits past it); the test waits a
/// little longer for its answer before killing it.
const DRIVER_TIMEOUT: Duration = Duration::from_secs(60);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first line `out` prints, if it comes within `within`: a child that never prints
/// cannot hang the test (its guard, dropped on the panic, kills it and so ends the read).
fn first_line(out: ChildStdout, within: Duration) -> Option<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(within).ok()
}

/// Everything `out` prints until it closes, if it closes within `within`.
fn all_output(mut out: ChildStdout, within: Duration) -> Option<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    rx.recv_timeout(within).ok()
}

/// Whether `cmd --version` runs.
fn runs(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// What the test needs besides this binary, or `None` (said as a skip). The front-end is
/// an extra beside the checkout (a plain skip); Chromium, node and puppeteer-core are
/// installed by `.ci/run` (a failure under `CI=1`).
fn prerequisites() -> Option<(PathBuf, String)> {
    let frontend = root().join("../shared/frontend");
    if !frontend.join("dist/index.html").is_file() || !frontend.join("serve.py").is_file() {
        skip(
            &format!(
                "{} is not there (the real front-end is an extra)",
                frontend.display()
            ),
            false,
        );
        return None;
    }
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if !Path::new(&chromium).is_file() {
        skip(&format!("{chromium} is not installed"), true);
        return None;
    }
    if !runs("node") {
        skip("node is not installed", true);
        return None;
    }
    if !root()
        .join("tests/browser/node_modules/puppeteer-core/package.json")
        .is_file()
    {
        skip(
            "puppeteer-core is not installed (npm ci --prefix tests/browser)",
            true,
        );
        return None;
    }
    Some((frontend, chromium))
}

/// A frame as a person reads it: function, file name, line.
type Frame = (String, String, u64);

/// GNU addr2line's frames at each of `addresses`, outermost first (the order of the
/// front-end's inline depths): (function, file name, line).
fn gnu_frames(addresses: &BTreeSet<u64>) -> Option<BTreeMap<u64, Vec<Frame>>> {
    let mut args = vec!["-a", "-f", "-i", "-e", BINARY];
    let hex: Vec<String> = addresses.iter().map(|a| format!("{a:#x}")).collect();
    args.extend(hex.iter().map(String::as_str));
    let out = tool("addr2line", &args, root())?;
    let mut by_address: BTreeMap<u64, Vec<Frame>> = BTreeMap::new();
    let mut lines = out.lines();
    let mut current = None;
    // `-a` heads each address's frames with the address itself; then function and
    // file:line pairs, innermost first.
    while let Some(l) = lines.next() {
        if let Some(h) = l.strip_prefix("0x") {
            current = Some(u64::from_str_radix(h, 16).unwrap());
            continue;
        }
        let place = lines.next().expect("a file:line after a function");
        let (file, line) = place.rsplit_once(':').unwrap();
        let line = line.split(' ').next().unwrap().parse().unwrap_or(0);
        let file = file.rsplit('/').next().unwrap().to_string();
        by_address
            .entry(current.expect("an address first"))
            .or_default()
            .push((l.to_string(), file, line));
    }
    for chain in by_address.values_mut() {
        chain.reverse();
    }
    Some(by_address)
}

/// The text symbols `nm` lists in the example binary.
fn nm_functions() -> Option<BTreeSet<String>> {
    let out = tool("nm", &["--defined-only", BINARY], root())?;
    Some(
        out.lines()
            .filter_map(|l| {
                let p: Vec<&str> = l.split_whitespace().collect();
                (p.len() == 3 && (p[1] == "T" || p[1] == "t")).then(|| p[2].to_string())
            })
            .collect(),
    )
}

/// The non-blank lines of `s`, trimmed of trailing spaces: CodeMirror's rendered text
/// has its own blank lines (an empty line is drawn as a line break of its own).
fn non_blank(s: &str) -> Vec<&str> {
    s.lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn real_front_end_shows_names_inline_frames_and_source() {
    let Some((frontend, chromium)) = prerequisites() else {
        return;
    };
    let Some(mut py) = python3() else {
        return;
    };
    let Some(functions) = nm_functions() else {
        return;
    };
    // The function whose source view is opened: one example.c defines, listed by nm.
    let opened = "checksum";
    assert!(functions.contains(opened), "nm: {functions:?}");
    let t0 = Instant::now();

    // The front-end, on loopback; it prints its port once it listens.
    let mut statics = Reaped::spawn(
        py.arg(frontend.join("serve.py"))
            .arg(frontend.join("dist"))
            .arg("0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let port = first_line(statics.stdout.take().unwrap(), Duration::from_secs(20))
        .expect("serve.py printed no port within 20 s");
    let port: u16 = port.trim().parse().expect("serve.py's port");
    let front_end = format!("http://127.0.0.1:{port}");

    let server = Server::start(&[
        "fixtures/example/profile.json",
        "--symbol-dir",
        "fixtures/example",
        "--profiler-url",
        &front_end,
    ]);

    let scratch = scratch("browser");
    let mut driver = Reaped::spawn(
        Command::new("node")
            .arg(root().join("tests/browser/driver.mjs"))
            .args(["check", &server.profiler_url, opened])
            .env("CHROMIUM", &chromium)
            .env("DRIVER_TIMEOUT_MS", DRIVER_TIMEOUT.as_millis().to_string())
            // The browser's fresh profile folder goes under target/, not /tmp.
            .env("TMPDIR", &scratch)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let driver_stderr = collect_stderr(&mut driver);
    let Some(out) = all_output(
        driver.stdout.take().unwrap(),
        DRIVER_TIMEOUT + Duration::from_secs(15),
    ) else {
        // The guards kill the driver (and so its browser), the server and the front-end.
        panic!(
            "the driver gave no answer in time; its stderr:\n{}",
            driver_stderr.lock().unwrap()
        );
    };
    // Its stdout closed: it is exiting.
    let status = driver.wait().unwrap();
    assert!(
        status.success(),
        "the driver failed ({status}); its stderr:\n{}\nthe server's stderr:\n{}",
        driver_stderr.lock().unwrap(),
        server.stderr()
    );
    let report: Value = serde_json::from_str(out.trim()).expect("the driver's JSON");
    eprintln!(
        "symbolicated {} ms after the driver started; test {:?}",
        report["symbolicatedMs"],
        t0.elapsed()
    );
    assert_eq!(report["status"], "DONE");
    assert_eq!(report["symbolicated"], true);

    // Every native frame the stacks use, grouped by its address (the outer function at
    // inline depth 0, then the functions inlined into it), against GNU addr2line.
    let mut ours: BTreeMap<u64, Vec<(u64, String, String, u64)>> = BTreeMap::new();
    for f in report["frames"].as_array().unwrap() {
        let file = f["file"].as_str().unwrap_or_else(|| panic!("no file: {f}"));
        let line = f["line"].as_u64().unwrap_or_else(|| panic!("no line: {f}"));
        ours.entry(f["address"].as_u64().unwrap())
            .or_default()
            .push((
                f["inlineDepth"].as_u64().unwrap(),
                f["name"].as_str().unwrap().to_string(),
                file.rsplit('/').next().unwrap().to_string(),
                line,
            ));
    }
    assert!(ours.len() >= 8, "{}", report["frames"]);
    let Some(gnu) = gnu_frames(&ours.keys().copied().collect()) else {
        return;
    };
    for (address, frames) in &mut ours {
        frames.sort();
        let shown: Vec<Frame> = frames
            .iter()
            .map(|(_, n, f, l)| (n.clone(), f.clone(), *l))
            .collect();
        assert_eq!(shown, gnu[address], "address {address:#x}");
        assert!(
            functions.contains(&shown[0].0),
            "outer function {:?} is not in nm's list",
            shown[0].0
        );
    }
    assert!(
        gnu.values()
            .any(|c| c.len() > 1 && c.last().unwrap().1 == "mix.h"),
        "the example is meant to have functions of mix.h inlined"
    );

    // The call tree as drawn: the rows of the library's functions name exactly the
    // functions GNU addr2line names, with their files, and the inlined ones are marked.
    let expected: BTreeSet<&str> = gnu.values().flatten().map(|(n, ..)| n.as_str()).collect();
    let rows = report["rows"].as_array().unwrap();
    let in_lib: Vec<&Value> = rows.iter().filter(|r| r["origin"] != "").collect();
    let names: BTreeSet<&str> = in_lib.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, expected, "call tree: {rows:?}");
    let files: BTreeMap<&str, &str> = gnu
        .values()
        .flatten()
        .map(|(n, f, _)| (n.as_str(), f.as_str()))
        .collect();
    for r in &in_lib {
        let name = r["name"].as_str().unwrap();
        assert!(
            r["origin"].as_str().unwrap().ends_with(files[name]),
            "row {r}"
        );
    }
    assert!(
        in_lib
            .iter()
            .any(|r| r["inlined"] == true && r["origin"].as_str().unwrap().ends_with("mix.h")),
        "no inlined row: {rows:?}"
    );

    // The source view opened on `opened`: example.c, as on disk, and drawn.
    let source = &report["source"];
    assert_eq!(source["open"], true, "{source}");
    assert!(
        source["file"].as_str().unwrap().ends_with("example.c"),
        "{source}"
    );
    assert_eq!(source["code"]["type"], "AVAILABLE", "{source}");
    let text = std::fs::read_to_string(root().join("fixtures/example/example.c")).unwrap();
    assert_eq!(source["code"]["code"].as_str().unwrap(), text);
    let shown = non_blank(source["shown"].as_str().unwrap());
    let on_disk = non_blank(&text);
    assert!(
        !shown.is_empty() && on_disk.windows(shown.len()).any(|w| w == shown),
        "the drawn lines are not a run of example.c's: {shown:?}"
    );
    assert!(
        shown.iter().any(|l| l.contains(&format!(" {opened}("))),
        "{opened}'s definition is not in view: {shown:?}"
    );
}

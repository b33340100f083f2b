//! Prepared indexes kept between runs (`src/store/index.rs`, `src/resolve/prepared/`): a
//! server indexes a module it read in its idle time, and the next server answers from the
//! index, byte for byte as from the debug files; a damaged, foreign, stale or older index
//! is never trusted, and is written again.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// One module of the corpus and how a server finds it.
struct Case {
    label: String,
    args: Vec<String>,
    name: String,
    id: String,
    offsets: Vec<u64>,
}

/// Every ELF case with DWARF of the mini corpus (both compilers, DWARF 4 and 5, zlib
/// sections, a separate debug file, gcc's `.cold` parts), read from the binary, and each
/// one's Breakpad `.sym`; the offsets: every byte up to past the last truth address, so
/// every line row, inlined call and function edge is crossed, and a few past 4 GiB.
fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for file in truth_files("elf") {
        let t = Truth::load(&file);
        let case = t.case();
        // Split DWARF is not indexed (its DIEs are in the .dwo files).
        if case.contains("split-dwarf") {
            continue;
        }
        let image = t.image();
        let name = image.file_name().unwrap().to_string_lossy().into_owned();
        let last = t.offsets().into_iter().max().unwrap_or(0);
        // And past 4 GiB, where the index leaves the answer to the files.
        let offsets: Vec<u64> = (0..last + 0x200)
            .chain([u64::from(u32::MAX), 1 << 32, 1 << 40])
            .collect();
        out.push(Case {
            label: case.clone(),
            args: vec![
                "--symbol-dir".into(),
                image.parent().unwrap().to_string_lossy().into_owned(),
            ],
            name: name.clone(),
            id: t.breakpad_id(),
            offsets: offsets.clone(),
        });
        let sym = corpus()
            .join("breakpad")
            .join(&name)
            .join(t.breakpad_id())
            .join(format!("{name}.sym"));
        if sym.is_file() {
            out.push(Case {
                label: format!("{case}.sym"),
                args: vec![
                    "--breakpad-symbol-dir".into(),
                    corpus().join("breakpad").to_string_lossy().into_owned(),
                ],
                name,
                id: t.breakpad_id(),
                offsets,
            });
        }
    }
    assert!(out.len() >= 10, "{} cases", out.len());
    out
}

/// A server whose cache folder is `cache`, indexing every module however small.
fn start(case: &Case, cache: &Path, extra: &[&str]) -> Server {
    let mut args = case.args.clone();
    args.extend(extra.iter().map(|a| a.to_string()));
    Server::launch(Launch {
        args,
        env: vec![
            (
                "XDG_CACHE_HOME".into(),
                cache.to_string_lossy().into_owned(),
            ),
            ("HOME".into(), cache.to_string_lossy().into_owned()),
            (
                "PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE".into(),
                String::new(),
            ),
            ("PROFILER_SYMBOL_SERVER_INDEX_MIN_BYTES".into(), "0".into()),
        ],
        ..Launch::default()
    })
}

fn ask(s: &Server, case: &Case) -> Vec<u8> {
    let body = json!({
        "memoryMap": [[case.name, case.id]],
        "stacks": [case.offsets.iter().map(|o| json!([0, o])).collect::<Vec<_>>()],
    });
    let r = s.post_json("/symbolicate/v5", &body);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    r.body
}

fn index_folder(cache: &Path) -> PathBuf {
    cache.join("profiler-symbol-server/index")
}

/// The index files in the folder.
fn indexes(cache: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(index_folder(cache))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".psidx"))
        .collect();
    out.sort();
    out
}

/// Polls until `done()` or a minute has passed (then fails with the server's stderr).
fn wait_until(s: &Server, what: &str, mut done: impl FnMut() -> bool) {
    let t = Instant::now();
    while !done() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "{what}: not within a minute; stderr:\n{}",
            s.stderr()
        );
        std::thread::yield_now();
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `case` once (answers from its files, index written), returns the answer and the
/// index's path and bytes.
fn first_run(case: &Case, cache: &Path) -> (Vec<u8>, PathBuf, Vec<u8>) {
    let s = start(case, cache, &[]);
    let answer = ask(&s, case);
    wait_until(&s, &format!("{}: index written", case.label), || {
        s.stderr().contains("index of")
    });
    let files = indexes(cache);
    assert_eq!(files.len(), 1, "{}: {files:?}", case.label);
    let bytes = std::fs::read(&files[0]).unwrap();
    (answer, files[0].clone(), bytes)
}

#[test]
fn answers_from_the_index_are_the_debug_files_own_byte_for_byte() {
    for case in cases() {
        let cache = scratch(&format!("index-same-{}", case.label.replace('/', "-")));
        let (from_files, _, _) = first_run(&case, &cache);
        let s = start(&case, &cache, &[]);
        let from_index = ask(&s, &case);
        assert!(
            s.stderr().contains("prepared index"),
            "{}: the second server did not use the index:\n{}",
            case.label,
            s.stderr()
        );
        assert!(
            from_files == from_index,
            "{}: answers differ between the debug files and the index",
            case.label
        );
        // Something was named: the comparison is not between two empty answers.
        assert!(
            String::from_utf8_lossy(&from_index).contains("\"function\""),
            "{}",
            case.label
        );
    }
}

/// The cases the damage tests use: compressed gcc DWARF with inlined calls, and a .sym.
fn damage_cases() -> Vec<Case> {
    cases()
        .into_iter()
        .filter(|c| {
            c.label.ends_with("shapes-gcc-O2-dwarf4-zlib")
                || c.label.ends_with("tmpl-gcc-O2-dwarf4.sym")
        })
        .collect()
}

#[test]
fn damaged_foreign_or_older_indexes_are_not_trusted_and_are_written_again() {
    let cases = damage_cases();
    assert_eq!(cases.len(), 2);
    for (k, case) in cases.iter().enumerate() {
        let other = &cases[1 - k];
        let cache = scratch(&format!("index-damage-{k}"));
        let (good_answer, path, good) = first_run(case, &cache);
        let other_cache = scratch(&format!("index-damage-other-{k}"));
        let (_, _, foreign) = first_run(other, &other_cache);
        let len = good.len();
        let flip = |at: usize| {
            let mut b = good.clone();
            b[at] ^= 0x10;
            b
        };
        let damages: Vec<(&str, Vec<u8>)> = vec![
            ("truncated", good[..len / 2].to_vec()),
            ("empty", Vec::new()),
            ("header bit flipped", flip(40)),
            ("table bit flipped", flip(len - 3)),
            ("first row bit flipped", flip(len / 3)),
            ("other version", {
                let mut b = good.clone();
                b[16] = b[16].wrapping_add(1);
                b
            }),
            ("another module's", foreign.clone()),
            ("not an index", b"hello, this is not an index".repeat(10)),
        ];
        for (what, bytes) in damages {
            std::fs::write(&path, &bytes).unwrap();
            let s = start(case, &cache, &[]);
            let answer = ask(&s, case);
            assert!(
                answer == good_answer,
                "{} with a {what} index: the answer changed",
                case.label
            );
            s.assert_alive();
            wait_until(
                &s,
                &format!("{}: a {what} index written again", case.label),
                || std::fs::read(&path).is_ok_and(|b| b == good),
            );
        }
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_in_place_of_an_index_is_neither_followed_nor_replaced() {
    let case = &damage_cases()[0];
    let cache = scratch("index-symlink");
    let (good_answer, path, good) = first_run(case, &cache);
    let elsewhere = cache.join("elsewhere.psidx");
    std::fs::write(&elsewhere, &good).unwrap();
    std::fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    let s = start(case, &cache, &[]);
    assert!(ask(&s, case) == good_answer);
    assert!(!s.stderr().contains("prepared index"), "{}", s.stderr());
    // Idle work ends without writing through or over the link.
    wait_until(&s, "the module indexed or refused", || {
        s.stderr().contains("not a regular file") || s.stderr().contains("index of")
    });
    assert!(path.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&elsewhere).unwrap(), good);
}

#[test]
fn a_changed_debug_file_makes_its_index_stale() {
    let cases = damage_cases();
    let case = &cases[0];
    let cache = scratch("index-stale");
    // A copy of the binary the test may change.
    let dir = cache.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let from = Path::new(&case.args[1]).join(&case.name);
    let copy = dir.join(&case.name);
    std::fs::copy(&from, &copy).unwrap();
    let moved = Case {
        label: case.label.clone(),
        args: vec!["--symbol-dir".into(), dir.to_string_lossy().into_owned()],
        name: case.name.clone(),
        id: case.id.clone(),
        offsets: case.offsets.clone(),
    };
    let (good_answer, _, _) = first_run(&moved, &cache);
    // Same bytes, another inode and modification time: a rebuilt file of the same build.
    std::fs::remove_file(&copy).unwrap();
    std::fs::copy(&from, &copy).unwrap();
    let s = start(&moved, &cache, &[]);
    assert!(ask(&s, &moved) == good_answer);
    assert!(
        s.stderr().contains("changed since it was built"),
        "{}",
        s.stderr()
    );
}

#[test]
fn no_index_cache_reads_and_writes_none_and_the_bound_removes_only_our_files() {
    let case = &damage_cases()[0];
    let cache = scratch("index-off");
    let (_, path, _) = first_run(case, &cache);
    for (args, env_off) in [(vec!["--no-index-cache"], false), (vec![], true)] {
        let mut l = Launch {
            args: case.args.clone(),
            env: vec![
                (
                    "XDG_CACHE_HOME".into(),
                    cache.to_string_lossy().into_owned(),
                ),
                ("PROFILER_SYMBOL_SERVER_INDEX_MIN_BYTES".into(), "0".into()),
            ],
            ..Launch::default()
        };
        l.args.extend(args.iter().map(|a| a.to_string()));
        if env_off {
            l.env
                .push(("PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE".into(), "1".into()));
        } else {
            l.env.push((
                "PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE".into(),
                String::new(),
            ));
        }
        let s = Server::launch(l);
        ask(&s, case);
        s.assert_alive();
        assert!(!s.stderr().contains("prepared index"), "{}", s.stderr());
    }
    // A bound of 0: the index just written goes, a file that is not ours stays.
    std::fs::remove_file(&path).unwrap();
    let stranger = index_folder(&cache).join("someone-else.psidx");
    std::fs::write(&stranger, b"not written by us").unwrap();
    let s = start(case, &cache, &["--index-cache-size", "0"]);
    ask(&s, case);
    wait_until(&s, "index written", || s.stderr().contains("index of"));
    assert!(!path.exists());
    assert_eq!(std::fs::read(&stranger).unwrap(), b"not written by us");
}

#[cfg(unix)]
#[test]
fn an_index_folder_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let case = &damage_cases()[0];
    let cache = scratch("index-shared-folder");
    first_run(case, &cache);
    let folder = index_folder(&cache);
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
    let s = start(case, &cache, &[]);
    ask(&s, case);
    s.assert_alive();
    assert!(!s.stderr().contains("prepared index"), "{}", s.stderr());
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
}

/// `/source/v1` and `/asm/v1` read the debug and code files whatever answers
/// `/symbolicate/v5`: with the module from its index, their answers are the same bytes.
#[test]
fn source_and_asm_of_an_indexed_module_are_as_before() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example");
    let cache = scratch("index-source-asm");
    let id = "1F888B6846F37DD10B8171FD83CBEC3B0";
    let launch = || {
        Server::launch(Launch {
            args: vec![
                dir.join("profile.json").to_string_lossy().into_owned(),
                "--symbol-dir".into(),
                dir.to_string_lossy().into_owned(),
            ],
            env: vec![
                (
                    "XDG_CACHE_HOME".into(),
                    cache.to_string_lossy().into_owned(),
                ),
                (
                    "PROFILER_SYMBOL_SERVER_NO_INDEX_CACHE".into(),
                    String::new(),
                ),
                ("PROFILER_SYMBOL_SERVER_INDEX_MIN_BYTES".into(), "0".into()),
            ],
            ..Launch::default()
        })
    };
    let ask = |s: &Server| {
        let sym = s.post_json(
            "/symbolicate/v5",
            &json!({"memoryMap": [["example", id]], "stacks": [[[0, 0x1204], [0, 0x1080], [0, 0x10]]]}),
        );
        let asm = s.post_json(
            "/asm/v1",
            &json!({"debugName": "example", "debugId": id, "name": "example",
                    "startAddress": "0x1260", "size": "0x10"}),
        );
        let source = s.post_json(
            "/source/v1",
            &json!({"debugName": "example", "debugId": id, "moduleOffset": "0x1204",
                    "file": "./example.c"}),
        );
        for r in [&sym, &asm, &source] {
            assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        }
        (sym.body, asm.body, source.body)
    };
    let s = launch();
    let first = ask(&s);
    wait_until(&s, "the example's index written", || {
        s.stderr().contains("index of")
    });
    drop(s);
    let s = launch();
    let second = ask(&s);
    assert!(s.stderr().contains("prepared index"), "{}", s.stderr());
    assert!(
        first == second,
        "answers differ with the module from its index"
    );
}

/// Half-written indexes of a process that was killed are removed once they are a day old;
/// one being written now, and files not named as ours, stay.
#[test]
fn a_killed_writers_temp_files_go_when_stale() {
    let case = &damage_cases()[0];
    let cache = scratch("index-stale-temp");
    first_run(case, &cache);
    let folder = index_folder(&cache);
    let old = folder.join(".lib.so-ABC0-0123456789abcdef.psidx.tmp-4242");
    let fresh = folder.join(".lib.so-ABC0-0123456789abcdef.psidx.tmp-4243");
    let other = folder.join(".someone-else.tmp-4242");
    for p in [&old, &fresh, &other] {
        std::fs::write(p, b"half").unwrap();
    }
    let two_days_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 24 * 3600);
    for p in [&old, &other] {
        std::fs::File::options()
            .append(true)
            .open(p)
            .unwrap()
            .set_modified(two_days_ago)
            .unwrap();
    }
    // Written again (its index removed), so the folder is bounded again.
    for p in indexes(&cache) {
        std::fs::remove_file(p).unwrap();
    }
    let s = start(case, &cache, &[]);
    ask(&s, case);
    wait_until(&s, "index written", || s.stderr().contains("index of"));
    assert!(!old.exists(), "a stale temp file stayed");
    assert!(fresh.exists() && other.exists());
}

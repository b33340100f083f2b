//! Corrupt debug files cost only their own module: a parser panic becomes a module error,
//! the rest of the request is answered, and the file is not parsed again.

mod common;

use std::process::Command;

use common::*;
use serde_json::{Value, json};

/// Inputs in `fixtures/corrupt/` (mutants of `fixtures/corpus/pe/mathlib.pdb` that made
/// the `pdb` crate panic) with the module next to them that still works.
fn request(bad_dir: &std::path::Path) -> (Value, String, String) {
    let id = case_id("pe/mathlib.dll");
    let good = case_id("elf/libmathlib.so");
    let t = Truth::load(&corpus().join("truth/elf/libmathlib.so.truth.json"));
    let inside = t
        .addresses
        .iter()
        .find(|a| a["expect"]["found"] == json!(true))
        .map(|a| parse_hex(a["module_offset"].as_str().unwrap()))
        .unwrap();
    // PDB procedures are read when an address falls in them: the request covers all of
    // mathlib's code, so that the damaged one is read.
    let mut stack = vec![json!([0, 0x1000]), json!([1, inside]), json!([0, 0x1010])];
    stack.extend((0x1000..0x3000).step_by(4).map(|o| json!([0, o])));
    let req = json!({"jobs": [
        {"memoryMap": [["mathlib.pdb", id], ["libmathlib.so", good]],
         "stacks": [stack]}
    ]});
    let _ = bad_dir;
    (req, id, good)
}

#[test]
fn a_panicking_parser_costs_only_its_module() {
    for bad in [
        "pdb-panic-c13.pdb",
        "pdb-panic-modi.pdb",
        "pdb-panic-fuzz.pdb",
    ] {
        // This one panics through a `debug_assert!` of the pdb crate
        // (`vendor/pdb/src/modi/mod.rs`): a release build (`cargo test --release`) reads
        // past it and answers, as it did before the crate was vendored.
        if bad == "pdb-panic-modi.pdb" && !cfg!(debug_assertions) {
            continue;
        }
        let dir = scratch(&format!("corrupt-{bad}"));
        std::fs::copy(
            concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corrupt/").to_string() + bad,
            dir.join("mathlib.pdb"),
        )
        .unwrap();
        let (req, id, good) = request(&dir);
        let elf = corpus().join("elf");
        // query: exit 0, the other module answered.
        let file = dir.join("req.json");
        std::fs::write(&file, req.to_string()).unwrap();
        let out = Command::new(BIN)
            .args(["query", "--symbol-dir", dir.to_str().unwrap()])
            .args(["--symbol-dir", elf.to_str().unwrap()])
            .args(["/symbolicate/v5", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{bad}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let r = &v["results"][0];
        assert_eq!(
            r["found_modules"][format!("mathlib.pdb/{id}")],
            json!(false),
            "{bad}: {r}"
        );
        // A parser's panic keeps the name front-ends know: ParseError.
        let errors = &r["module_errors"][format!("mathlib.pdb/{id}")];
        let panic = errors
            .as_array()
            .and_then(|a| {
                a.iter().find(|e| {
                    e["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("the parser failed on this file"))
                })
            })
            .unwrap_or_else(|| panic!("{bad}: no parser panic in {errors}"));
        assert_eq!(panic["name"], json!("ParseError"), "{bad}: {errors}");
        assert_eq!(
            r["found_modules"][format!("libmathlib.so/{good}")],
            json!(true)
        );
        assert!(r["stacks"][0][1]["function"].is_string(), "{r}");
        // The server: same answer, twice (not parsed again), and it goes on.
        let server = Server::start(&[
            "--symbol-dir",
            dir.to_str().unwrap(),
            "--symbol-dir",
            elf.to_str().unwrap(),
        ]);
        for _ in 0..2 {
            let r = server.post_json("/symbolicate/v5", &req);
            assert_eq!(r.status, 200);
            let v = r.json();
            assert_eq!(
                v["results"][0]["found_modules"][format!("mathlib.pdb/{id}")],
                json!(false)
            );
            // Answered from the remembered panic the second time: the same name.
            let names: Vec<&Value> = v["results"][0]["module_errors"][format!("mathlib.pdb/{id}")]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| &e["name"])
                .collect();
            assert!(names.contains(&&json!("ParseError")), "{bad}: {v}");
        }
        let panics = server.stderr().matches("panicked").count();
        assert!(panics <= 1, "parsed again: {}", server.stderr());
        server.assert_alive();
    }
}

/// A `.sym` in store layout for module `name` with debug ID `id`.
fn sym_store(dir: &std::path::Path, name: &str, id: &str, text: &str) {
    let d = dir.join(name).join(id);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(format!("{name}.sym")), text).unwrap();
}

#[test]
fn sparse_file_numbers_and_long_line_tables_are_cheap_and_right() {
    let dir = scratch("corrupt-sym-amplification");
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    // FILE numbers in the tens of millions: memory follows the two records.
    let mut text = format!(
        "MODULE Linux x86_64 {id} sparse\nFILE 50000000 far.c\nFILE 3 near.c\nFUNC 1000 20 0 f\n1000 10 7 50000000\n1010 10 8 3\n"
    );
    // A FUNC with 200 000 line records, each address looked up in one pass.
    text.push_str("FUNC 100000 30d40 0 big\n");
    for i in 0..200_000u64 {
        text.push_str(&format!("{:x} 1 {} 3\n", 0x100000 + i, i + 1));
    }
    sym_store(&dir, "sparse", id, &text);
    let mut offsets = vec![0x1000u64, 0x1010];
    offsets.extend((0..20_000u64).map(|i| 0x100000 + i * 10));
    let v = query_stdin(
        &[
            "--breakpad-symbol-dir",
            dir.to_str().unwrap(),
            "/symbolicate/v5",
        ],
        &[],
        &job("sparse", id, &offsets),
    );
    let f = frames_of(&v["results"][0]);
    assert_eq!(f[0]["file"], json!("far.c"));
    assert_eq!(f[0]["line"], json!(7));
    assert_eq!(f[1]["file"], json!("near.c"));
    for (k, frame) in f[2..].iter().enumerate() {
        assert_eq!(frame["function"], json!("big"));
        assert_eq!(frame["line"], json!(k as u64 * 10 + 1));
    }
}

#[cfg(unix)]
#[test]
fn special_files_named_as_debug_files_are_refused_at_once() {
    let dir = scratch("corrupt-special-files");
    let fifo = dir.join("lib.fifo");
    let ok = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(ok.success());
    let server = serve_libs(
        &dir,
        &[
            ("fifo.so", fifo.to_str().unwrap()),
            ("zero.so", "/dev/zero"),
        ],
        "0123456789ABCDEF0123456789ABCDEF0",
    );
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let r = server.post_json(
        "/symbolicate/v5",
        &json!({"memoryMap": [["fifo.so", id], ["zero.so", id]], "stacks": [[[0, 16], [1, 16]]]}),
    );
    assert_eq!(r.status, 200);
    let v = r.json();
    for name in ["fifo.so", "zero.so"] {
        let errors = v["results"][0]["module_errors"][format!("{name}/{id}")].to_string();
        assert!(errors.contains("not a regular file"), "{name}: {errors}");
    }
    server.assert_alive();
}

/// Pseudo-files say they are regular but read as something else: `/proc/self/pagemap` has
/// size 0 and reads as 8 bytes per page of the reader's address space. Named as debug
/// files (also through a symlink), they are refused before any read.
#[cfg(target_os = "linux")]
#[test]
fn pseudo_files_named_as_debug_files_are_refused_before_any_read() {
    let dir = scratch("corrupt-pseudo-files");
    let link = dir.join("linked.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/proc/self/pagemap", &link).unwrap();
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let named = [
        ("pagemap.so", "/proc/self/pagemap".to_string()),
        ("maps.so", "/proc/self/maps".to_string()),
        ("linked.so", link.display().to_string()),
    ];
    let libs: Vec<(&str, &str)> = named.iter().map(|(n, p)| (*n, p.as_str())).collect();
    let server = serve_libs(&dir, &libs, id);
    let map: Vec<Value> = named.iter().map(|(n, _)| json!([n, id])).collect();
    let r = server.post_json(
        "/symbolicate/v5",
        &json!({"memoryMap": map, "stacks": [[[0, 16], [1, 16], [2, 16]]]}),
    );
    assert_eq!(r.status, 200);
    let v = r.json();
    for (name, _) in &named {
        let errors = v["results"][0]["module_errors"][format!("{name}/{id}")].to_string();
        assert!(
            errors.contains("pseudo-file of the proc filesystem"),
            "{name}: {errors}"
        );
    }
    // Nothing of the pagemap was read: the server's peak stays that of a small request.
    let peak = peak_kb(server.pid());
    assert!(peak < 512 * 1024, "peak {peak} kB");
    server.assert_alive();
}

#[test]
fn a_zip_bomb_is_refused() {
    let dir = scratch("corrupt-zip-bomb");
    // One deflated entry that expands a thousand times: 64 MiB of spaces in 65 KB.
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let path = dir.join("bomb.zip");
    let Some(mut python) = common::python3() else {
        return;
    };
    let made = python
        .arg("-c")
        .arg(
            "import sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED, compresslevel=9) as z:\n\
             \x20   z.writestr(sys.argv[2], b' ' * (64 << 20))",
        )
        .arg(&path)
        .arg(format!("bomb/{id}/bomb.sym"))
        .status()
        .expect("run python3");
    assert!(made.success());
    let v = query_stdin(
        &["--symbols-zip", path.to_str().unwrap(), "/symbolicate/v5"],
        &[],
        &job("bomb", id, &[0x10]),
    );
    let errors = v["results"][0]["module_errors"][format!("bomb/{id}")].to_string();
    assert!(errors.contains("zip bomb"), "{errors}");
}

/// A zeroed `.debug_str` makes every DWARF name empty: the answer takes the symbol
/// table's name (what `nm` lists at the address) and gives no empty file.
#[test]
fn empty_dwarf_names_fall_back_to_the_symbol_table() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corrupt"));
    let so = dir.join("libzerostr.so");
    let Some(nm) = tool("nm", &[so.to_str().unwrap()], dir) else {
        skip("no nm (binutils)", true);
        return;
    };
    let id = elf_debug_id(&so);
    let base = elf_image_base(&so);
    // (address, name) of the two exported functions, from nm.
    let funcs: Vec<(u64, String)> = nm
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (addr, kind, name) = (f.next()?, f.next()?, f.next()?);
            (kind == "T").then(|| (parse_hex(addr), name.to_string()))
        })
        .collect();
    assert_eq!(funcs.len(), 2, "{nm}");
    let offsets: Vec<u64> = funcs
        .iter()
        .flat_map(|(a, _)| [a - base, a - base + 4, a - base + 12])
        .collect();
    let v = query_stdin(
        &["/symbolicate/v5", "--symbol-dir", dir.to_str().unwrap()],
        &[],
        &job("libzerostr.so", &id, &offsets),
    );
    let frames = frames_of(&v["results"][0]);
    assert_eq!(frames.len(), offsets.len(), "{v}");
    for (k, f) in frames.iter().enumerate() {
        let (_, want) = &funcs[k / 3];
        assert_eq!(f["function"], json!(want), "{f}");
        assert_ne!(f.get("file"), Some(&json!("")), "{f}");
        for i in f["inlines"].as_array().into_iter().flatten() {
            assert_ne!(i.get("function"), Some(&json!("")), "{i}");
            assert_ne!(i.get("file"), Some(&json!("")), "{i}");
        }
    }
}

/// A device, FIFO, UNC or `/net` path from a profile is never opened: the type is looked
/// at first (`stat`), and UNC/device/automount paths not even that. A FIFO shows whether
/// it was opened: a writer blocked in `open` returns only when someone opens it to read.
#[cfg(unix)]
#[test]
fn profile_paths_that_are_no_regular_files_are_never_opened() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = scratch("corrupt-never-opened");
    let fifo = dir.join("lib.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let opened = Arc::new(AtomicBool::new(false));
    let writer = {
        let (fifo, opened) = (fifo.clone(), opened.clone());
        std::thread::spawn(move || {
            // Blocks until a reader opens the FIFO.
            let _f = std::fs::OpenOptions::new().write(true).open(&fifo);
            opened.store(true, Ordering::SeqCst);
        })
    };
    let id = "0123456789ABCDEF0123456789ABCDEF0";
    let server = serve_libs(
        &dir,
        &[
            ("fifo.so", fifo.to_str().unwrap()),
            ("unc.pdb", r"\\attacker\share\unc.pdb"),
            ("pipe.pdb", r"\\.\pipe\x"),
            ("net.so", "/net/attacker/lib/net.so"),
            ("climb.so", "/tmp/../net/attacker/climb.so"),
        ],
        id,
    );
    let names = ["fifo.so", "unc.pdb", "pipe.pdb", "net.so", "climb.so"];
    let map: Vec<Value> = names.iter().map(|n| json!([n, id])).collect();
    let stack: Vec<Value> = (0..names.len()).map(|i| json!([i, 16])).collect();
    let r = server.post_json(
        "/symbolicate/v5",
        &json!({"memoryMap": map, "stacks": [stack]}),
    );
    assert_eq!(r.status, 200);
    let v = r.json();
    let errors = |name: &str| v["results"][0]["module_errors"][format!("{name}/{id}")].to_string();
    assert!(
        errors("fifo.so").contains("not a regular file"),
        "{}",
        errors("fifo.so")
    );
    for name in ["unc.pdb", "pipe.pdb"] {
        let e = errors(name);
        assert!(
            e.contains("PathRefused") && e.contains("UNC"),
            "{name}: {e}"
        );
    }
    for name in ["net.so", "climb.so"] {
        let e = errors(name);
        assert!(
            e.contains("PathRefused") && e.contains("/net"),
            "{name}: {e}"
        );
    }
    // The asm view looks for the code at the profile's paths too.
    let a = server.post_json(
        "/asm/v1",
        &json!({"debugName": "fifo.so", "debugId": id, "name": "fifo.so",
                "startAddress": "0x10", "size": "0x10"}),
    );
    assert!(a.status < 500, "{}", a.status);
    server.assert_alive();
    assert!(!opened.load(Ordering::SeqCst), "the FIFO was opened");
    // Unblock the writer: open it for reading ourselves (its writer is waiting, so
    // this does not block).
    let _r = std::fs::File::open(&fifo);
    writer.join().unwrap();
}

/// The example's library offsets, from its profile's frame addresses.
#[cfg(unix)]
fn example_offsets(p: &Value) -> Vec<u64> {
    let lib = &p["libs"][0];
    let (start, end) = (lib["start"].as_u64().unwrap(), lib["end"].as_u64().unwrap());
    p["threads"][0]["stringTable"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| u64::from_str_radix(s.as_str()?.strip_prefix("0x")?, 16).ok())
        .filter(|a| (start..end).contains(a))
        .map(|a| a - start)
        .collect()
}

/// A debug file another user can write (a bundle in `/tmp`, a shared symbol folder) is
/// truncated between two requests: reading a truncated mapping's pages raises SIGBUS,
/// which would end the server. Such a file is read, not mapped, and a file whose stamp
/// changed is read again.
#[cfg(unix)]
#[test]
fn a_debug_file_truncated_under_the_server_leaves_it_answering() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("corrupt-truncated-under");
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example");
    let binary = dir.join("example");
    let _ = std::fs::remove_file(&binary);
    std::fs::copy(example.join("example"), &binary).unwrap();
    std::fs::copy(example.join("profile.json"), dir.join("profile.json")).unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o666)).unwrap();
    let original = std::fs::read(&binary).unwrap();
    let p: Value =
        serde_json::from_slice(&std::fs::read(dir.join("profile.json")).unwrap()).unwrap();
    let (name, id) = (
        p["libs"][0]["debugName"].as_str().unwrap(),
        p["libs"][0]["breakpadId"].as_str().unwrap(),
    );
    let offsets = example_offsets(&p);
    assert!(offsets.len() >= 4);
    let server = Server::start(&[dir.join("profile.json").to_str().unwrap()]);
    let ask = |offsets: &[u64]| {
        let r = server.post_json(
            "/symbolicate/v5",
            &json!({"jobs": [job(name, id, offsets)]}),
        );
        assert_eq!(r.status, 200);
        frames_of(&r.json()["results"][0])
    };
    let named = ask(&offsets[..1]);
    assert!(named[0]["function"].is_string(), "{}", named[0]);
    // Another process truncates the file: the rest of its pages are gone.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&binary)
        .unwrap()
        .set_len(4096)
        .unwrap();
    ask(&offsets[1..]);
    server.assert_alive();
    // Written back whole: read again, named again.
    std::fs::write(&binary, &original).unwrap();
    let again = ask(&offsets[1..]);
    assert!(again.iter().all(|f| f["function"].is_string()), "{again:?}");
    server.assert_alive();
}

/// The peak resident size of process `pid` so far, in kB (`VmHWM`).
#[cfg(target_os = "linux")]
fn peak_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A PDB of 4 MB whose type stream lists one page a million times (4 GiB declared, made
/// by `scripts/make-pdb-bombs` from the corpus's geomcpp.pdb): refused by its page list,
/// not walked for gigabytes.
#[cfg(target_os = "linux")]
#[test]
fn a_pdb_stream_listing_one_page_again_and_again_is_refused() {
    use std::io::Read;
    let dir = scratch("corrupt-pdb-repeated-page");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/pdb-bombs/geomcpp-tpi-4gib.pdb.gz");
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(fixture).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    std::fs::write(dir.join("geomcpp.pdb"), &bytes).unwrap();
    let server = Server::start(&["--symbol-dir", dir.to_str().unwrap()]);
    let id = "484A709EE9F7472C4C4C44205044422E1";
    let r = server.post_json(
        "/symbolicate/v5",
        &json!({"jobs": [job("geomcpp.pdb", id, &[0x1000, 0x1068, 0x1388])]}),
    );
    assert_eq!(r.status, 200);
    let errors = r.json()["results"][0]["module_errors"][format!("geomcpp.pdb/{id}")].to_string();
    assert!(errors.contains("twice in one stream"), "{errors}");
    assert!(peak_kb(server.pid()) < 512 * 1024);
    server.assert_alive();
}

/// A server on a profile whose libs are `libs` (name, path), all with the debug ID `id`.
#[cfg(unix)]
fn serve_libs(dir: &std::path::Path, libs: &[(&str, &str)], id: &str) -> Server {
    let libs: Vec<Value> = libs
        .iter()
        .map(|(n, p)| {
            json!({"name": n, "debugName": n, "path": p, "debugPath": p, "breakpadId": id,
                   "start": 0, "end": 4096, "offset": 0})
        })
        .collect();
    let profile = dir.join("profile.json");
    std::fs::write(
        &profile,
        json!({"meta": {"version": 24}, "libs": libs, "threads": []}).to_string(),
    )
    .unwrap();
    Server::start(&[profile.to_str().unwrap()])
}

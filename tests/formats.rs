//! Every debug format and symbol location through the real server, against the ground
//! truth: PE/PDB, Mach-O (thin, fat, dSYM), Breakpad stores and the symbols zip, ELF
//! separate debug files; and the bad inputs each of them can bring.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

fn truths(subs: &[&str]) -> Vec<Truth> {
    subs.iter()
        .flat_map(|s| truth_files(s))
        .map(|f| Truth::load(&f))
        .collect()
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The name the profiler would send: the PDB's for PE, else the binary's.
fn debug_name(t: &Truth) -> String {
    if t.header["module"]["format"] == "pe" {
        let rel = t.header["debug_file"].as_str().unwrap();
        file_name(Path::new(rel))
    } else {
        file_name(&t.image())
    }
}

fn dir_args(dirs: &[PathBuf], flag: &str) -> Vec<String> {
    let mut dirs = dirs.to_vec();
    dirs.sort();
    dirs.dedup();
    dirs.iter()
        .flat_map(|d| [flag.to_string(), d.display().to_string()])
        .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Sends every truth case as front-end jobs (one per module, ten per request) and adds
/// one table row per case; `judge` says how one answered frame compares.
fn run_cases(
    server: &Server,
    cases: &[(String, String, &Truth)],
    table: &mut Agreement,
    judge: &dyn Fn(&Truth, &Value, &Value) -> Result<&'static str, String>,
) {
    for batch in cases.chunks(10) {
        let jobs: Vec<Value> = batch
            .iter()
            .map(|(name, id, t)| job(name, id, &t.offsets()))
            .collect();
        let r = server.post_json("/symbolicate/v5", &json!({ "jobs": jobs }));
        assert_eq!(r.status, 200);
        let answer = r.json();
        for ((name, id, t), result) in batch.iter().zip(answer["results"].as_array().unwrap()) {
            let key = format!("{name}/{id}");
            assert_eq!(
                result["found_modules"][&key],
                json!(true),
                "{key}: {}",
                result["module_errors"]
            );
            let frames = frames_of(result);
            let outcomes = frames
                .iter()
                .zip(&t.addresses)
                .map(|(f, e)| judge(t, f, e).map_err(|m| format!("{} {m}", e["module_offset"])))
                .collect();
            table.add_labeled(&t.case(), outcomes);
        }
    }
}

/// A server whose --symbol-dir folders hold the truths' images, and the cases to send.
fn serve_images(ts: &[Truth]) -> (Server, Vec<(String, String, &Truth)>) {
    let dirs: Vec<PathBuf> = ts
        .iter()
        .map(|t| t.image().parent().unwrap().to_path_buf())
        .collect();
    let args = dir_args(&dirs, "--symbol-dir");
    let server = Server::start(&strs(&args));
    let cases = ts
        .iter()
        .map(|t| (debug_name(t), t.breakpad_id(), t))
        .collect();
    (server, cases)
}

fn exact(_: &Truth, f: &Value, e: &Value) -> Result<&'static str, String> {
    check_frame(f, e).map(|()| "matched")
}

#[test]
fn pe_and_pdb_cases_match() {
    let ts = truths(&["pe", "fixtures/symbolic/windows"]);
    assert!(ts.len() >= 5);
    let (server, cases) = serve_images(&ts);
    let mut table = Agreement::default();
    // MSVC inline sites: we read the binary annotations with the pdb crate and report a
    // site over its whole code range; llvm-symbolizer 19 (the truth) leaves out the first
    // range of many sites.
    const FIRST_RANGE: &str = "an inline site's first range, which llvm-symbolizer omits";
    const TWO_LINES: &str = "two line records at one offset; llvm-symbolizer takes the later";
    table.allow(
        "fixtures/symbolic/windows/crash.exe",
        &[
            ("0x10bd", FIRST_RANGE),
            ("0x138a", FIRST_RANGE),
            ("0x1394", FIRST_RANGE),
            ("0x13ca", FIRST_RANGE),
            ("0x1896", FIRST_RANGE),
            ("0x1bc4", TWO_LINES),
            ("0x25ba", TWO_LINES),
            ("0x26a8", FIRST_RANGE),
            ("0x26b4", FIRST_RANGE),
            ("0x26c5", FIRST_RANGE),
            ("0x26ce", FIRST_RANGE),
            ("0x27a0", FIRST_RANGE),
            ("0x2851", FIRST_RANGE),
            ("0x2a2c", FIRST_RANGE),
            (
                "0x2a3d",
                "an inlined function of an anonymous namespace, named as dump_syms names it \
                 ((anonymous namespace)::crash()); llvm-symbolizer prints MSVC's internal \
                 ?A0xc3a0617d::crash",
            ),
            ("0x2e15", FIRST_RANGE),
            ("0x2e78", FIRST_RANGE),
            ("0x2e7b", FIRST_RANGE),
            (
                "0x328d",
                "three procedures at one address (folded code): the first record names it, \
                 as dump_syms does (FUNC m 328d _guard_check_icall_nop); llvm-symbolizer \
                 names it after a public symbol, _initialize_invalid_parameter_handler",
            ),
            (
                "0x3726",
                "an import thunk: its public symbol ___CxxFrameHandler3 names it, the truth \
                 names no function",
            ),
        ],
    );
    run_cases(&server, &cases, &mut table, &exact);
    table.finish("PE/PDB agreement with ground truth");
}

#[test]
fn macho_cases_match_thin_fat_and_dsym() {
    let ts = truths(&["macho", "fixtures/symbolic/macos"]);
    assert!(ts.len() >= 5);
    let c = corpus();
    // The binaries' folders, their .dSYM bundles beside them.
    let (server, cases) = serve_images(&ts);
    let mut table = Agreement::default();
    run_cases(&server, &cases, &mut table, &exact);
    table.finish("Mach-O agreement with ground truth (thin binaries + dSYM)");

    // The universal (fat) file and its fat dSYM answer each arch's UUID like the thin one.
    let args = dir_args(&[c.join("macho/universal")], "--symbol-dir");
    let server = Server::start(&strs(&args));
    let fat: Vec<(String, String, &Truth)> = ts
        .iter()
        .filter(|t| t.case().ends_with("/libmathlib.dylib"))
        .map(|t| (debug_name(t), t.breakpad_id(), t))
        .collect();
    assert_eq!(fat.len(), 2);
    let mut table = Agreement::default();
    run_cases(&server, &fat, &mut table, &exact);
    table.finish("Universal Mach-O (member chosen by UUID)");
}

#[test]
fn fat_macho_without_the_uuid_lists_what_it_has() {
    let server = Server::start(&[
        "--symbol-dir",
        corpus().join("macho/universal").to_str().unwrap(),
    ]);
    let want = "00112233445566778899AABBCCDDEEFF0";
    let r = server
        .post_json("/symbolicate/v5", &job("libmathlib.dylib", want, &[0x300]))
        .json();
    let key = format!("libmathlib.dylib/{want}");
    assert_eq!(r["results"][0]["found_modules"][&key], json!(false));
    let errors = r["results"][0]["module_errors"][&key].as_array().unwrap();
    let multi: Vec<&Value> = errors
        .iter()
        .filter(|e| e["name"] == "NoMatchMultiArch")
        .collect();
    assert!(!multi.is_empty(), "{errors:?}");
    let msg = multi[0]["message"].as_str().unwrap();
    for arch in ["aarch64", "x86_64"] {
        assert!(msg.contains(arch), "{msg}");
    }
    assert!(
        msg.contains(&case_id("macho/arm64/libmathlib.dylib")),
        "{msg}"
    );
    server.assert_alive();
}

/// Every truth case that has a dump_syms `.sym` in the Breakpad store, with its store name.
fn sym_cases(ts: &[Truth]) -> Vec<(String, String, &Truth)> {
    ts.iter()
        .filter_map(|t| {
            let rel = t.header["tools"]["breakpad_sym"].as_str()?;
            let rel = rel.split("/breakpad/").nth(1)?;
            let mut parts = rel.split('/');
            Some((parts.next()?.to_string(), parts.next()?.to_string(), t))
        })
        .collect()
}

/// The PUBLIC a `.sym` gives for `offset` under the documented rule: no FUNC covers it
/// and the nearest symbol (FUNC or PUBLIC) at or before it is a PUBLIC with a real name.
/// Read here from the file itself, independently of the server.
fn public_in_sym(t: &Truth, offset: u64) -> Option<String> {
    let rel = t.header["tools"]["breakpad_sym"].as_str()?;
    let text = std::fs::read_to_string(t.file.parent()?.join(rel)).ok()?;
    let mut best: Option<(u64, Option<String>)> = None;
    for line in text.lines() {
        let mut f = line.split(' ');
        let (kind, is_public) = match f.next() {
            Some("FUNC") => ("FUNC", false),
            Some("PUBLIC") => ("PUBLIC", true),
            _ => continue,
        };
        let mut f = f.peekable();
        if f.peek() == Some(&"m") {
            f.next();
        }
        let addr = u64::from_str_radix(f.next()?, 16).ok()?;
        let second = f.next()?;
        if kind == "FUNC" && offset < addr + u64::from_str_radix(second, 16).ok()? && addr <= offset
        {
            return None; // a FUNC covers it
        }
        if addr <= offset && best.as_ref().is_none_or(|(a, _)| addr >= *a) {
            let name = is_public.then(|| f.collect::<Vec<_>>().join(" "));
            best = Some((addr, name));
        }
    }
    best?
        .1
        .filter(|n| !n.starts_with('<') && !n.ends_with("mh_execute_header"))
}

/// Against `expect`, except where the truth records that the `.sym` says otherwise (then
/// against the `.sym` record), and where `expect` says "no function" but the `.sym` has a
/// PUBLIC reaching there (a PUBLIC covers up to the next symbol; the truth counts only
/// sized code).
fn judge_sym(t: &Truth, f: &Value, e: &Value) -> Result<&'static str, String> {
    if e["breakpad_sym_agreement"] != "match" {
        return check_frame_against_sym(f, e).map(|()| ".sym differs");
    }
    // A FUNC's size is the .sym's own (for a function split in parts, dump_syms gives the
    // entry part its own FUNC).
    let mut e = e.clone();
    if let Some(size) = e["breakpad_sym"]["function_size"].as_str() {
        e["expect"]["function_size"] = json!(size);
    }
    let e = &e;
    match check_frame(f, e) {
        Ok(()) => Ok("matched"),
        Err(m) if e["expect"]["found"] == false => {
            let offset = parse_hex(e["module_offset"].as_str().unwrap());
            match public_in_sym(t, offset) {
                Some(name)
                    if f["function"] == json!(name)
                        && f.get("function_size").is_none()
                        && f.get("line").is_none() =>
                {
                    Ok("PUBLIC")
                }
                _ => Err(m),
            }
        }
        Err(m) => Err(m),
    }
}

#[test]
fn breakpad_store_and_symbols_zip_match() {
    let ts = truths(&[""]);
    let cases = sym_cases(&ts);
    assert!(cases.len() >= 19, "{} .sym cases", cases.len());
    let c = corpus();
    for (flag, path, title) in [
        (
            "--breakpad-symbol-dir",
            c.join("breakpad"),
            "Breakpad .sym store agreement",
        ),
        (
            "--symbols-zip",
            c.join("target.crashreporter-symbols.zip"),
            "target.crashreporter-symbols.zip agreement",
        ),
    ] {
        let server = Server::start(&[flag, path.to_str().unwrap()]);
        let mut table = Agreement::default();
        run_cases(&server, &cases, &mut table, &judge_sym);
        table.finish(title);
    }
}

#[test]
fn bad_sym_and_zip_files_are_module_errors() {
    let dir = scratch("bad-sym-zip");
    let c = corpus();
    let id = &case_id("elf/libmathlib.so");
    let good =
        std::fs::read(c.join(format!("breakpad/libmathlib.so/{id}/libmathlib.so.sym"))).unwrap();
    // A store whose .sym is cut off inside a FUNC record.
    let store = dir.join("store");
    let sym_dir = store.join(format!("libmathlib.so/{id}"));
    std::fs::create_dir_all(&sym_dir).unwrap();
    let text = String::from_utf8(good.clone()).unwrap();
    let cut = text.find("\nFUNC ").unwrap() + 8;
    std::fs::write(sym_dir.join("libmathlib.so.sym"), &good[..cut]).unwrap();
    // A zip that is not a zip, and a zip whose entry is corrupt.
    let not_zip = dir.join("not.zip");
    std::fs::write(&not_zip, b"this is not a zip archive at all").unwrap();
    let corrupt = dir.join("corrupt.zip");
    let mut zip = std::fs::read(c.join("target.crashreporter-symbols.zip")).unwrap();
    let name = format!("libmathlib.so/{id}/libmathlib.so.sym");
    let at = zip
        .windows(name.len())
        .position(|w| w == name.as_bytes())
        .expect("entry name in the local header");
    // Damage the entry's data just after its local header.
    for b in &mut zip[at + name.len() + 40..at + name.len() + 80] {
        *b ^= 0x5a;
    }
    std::fs::write(&corrupt, &zip).unwrap();

    let server = Server::start(&[
        "--breakpad-symbol-dir",
        store.to_str().unwrap(),
        "--symbols-zip",
        not_zip.to_str().unwrap(),
        "--symbols-zip",
        corrupt.to_str().unwrap(),
    ]);
    let r = server
        .post_json("/symbolicate/v5", &job("libmathlib.so", id, &[0x1100]))
        .json();
    let key = format!("libmathlib.so/{id}");
    assert_eq!(r["results"][0]["found_modules"][&key], json!(false));
    let errors = r["results"][0]["module_errors"][&key].to_string();
    assert!(
        errors.contains("libmathlib.so.sym") && errors.contains("FUNC"),
        "{errors}"
    );
    assert!(
        errors.contains("not.zip") && errors.contains("not a zip"),
        "{errors}"
    );
    assert!(
        errors.contains("corrupt.zip") && errors.contains("corrupt"),
        "{errors}"
    );
    server.assert_alive();
    // Another module from the same (corrupt) zip still works: only one entry is damaged.
    let other = &case_id("macho/x86_64/machotool");
    let r = server
        .post_json("/symbolicate/v5", &job("machotool", other, &[0x1000]))
        .json();
    assert_eq!(
        r["results"][0]["found_modules"][format!("machotool/{other}")],
        json!(true)
    );
}

#[test]
fn pdb_with_another_age_is_rejected() {
    let c = corpus();
    let server = Server::start(&["--symbol-dir", c.join("pe").to_str().unwrap()]);
    // mathlib.pdb's GUID with age 2 instead of 1.
    let real = case_id("pe/mathlib.dll");
    let id = &format!("{}2", real.strip_suffix('1').unwrap());
    let r = server
        .post_json("/symbolicate/v5", &job("mathlib.pdb", id, &[0x1000]))
        .json();
    let key = format!("mathlib.pdb/{id}");
    assert_eq!(r["results"][0]["found_modules"][&key], json!(false));
    let errors = r["results"][0]["module_errors"][&key].to_string();
    assert!(
        errors.contains("UnmatchedDebugId") && errors.contains(&real),
        "{errors}"
    );
    server.assert_alive();
}

#[test]
fn pdb_found_beside_the_dll_and_in_symstores() {
    let c = corpus();
    let t = Truth::load(&c.join("truth/pe/mathlib.dll.truth.json"));
    // A profile whose lib names only the DLL: the PDB is beside it.
    let dir = scratch("pdb-beside-dll");
    let profile = dir.join("profile.json");
    let lib = json!({"debugName": "mathlib.pdb", "breakpadId": t.breakpad_id(),
        "name": "mathlib.dll", "path": c.join("pe/mathlib.dll"), "codeId": "6553F1003000",
        "start": 0x180000000u64, "end": 0x180003000u64, "offset": 0, "arch": "x86_64"});
    std::fs::write(
        &profile,
        serde_json::to_vec(&json!({"meta": {"version": 27}, "libs": [lib], "threads": []}))
            .unwrap(),
    )
    .unwrap();
    let server = Server::start(&[profile.to_str().unwrap()]);
    let r = server
        .post_json(
            "/symbolicate/v5",
            &job("mathlib.pdb", &t.breakpad_id(), &t.offsets()),
        )
        .json();
    for (f, e) in frames_of(&r["results"][0]).iter().zip(&t.addresses) {
        check_frame(f, e).unwrap();
    }

    // A symstore <name>/<ID>/<name>, through --windows-symbol-path and _NT_SYMBOL_PATH
    // (whose remote server, here a refused loopback port, is tried and reported).
    let store = dir.join("symstore");
    let at = store.join("mathlib.pdb").join(t.breakpad_id());
    std::fs::create_dir_all(&at).unwrap();
    std::fs::copy(c.join("pe/mathlib.pdb"), at.join("mathlib.pdb")).unwrap();
    let path = format!("srv*{}*http://127.0.0.1:1/", store.display());
    let server = Server::start(&["--windows-symbol-path", &path]);
    let r = server
        .post_json(
            "/symbolicate/v5",
            &job("mathlib.pdb", &t.breakpad_id(), &t.offsets()),
        )
        .json();
    for (f, e) in frames_of(&r["results"][0]).iter().zip(&t.addresses) {
        check_frame(f, e).unwrap();
    }
    let missing = "B5CD53327987DD5F4C4C44205044422E1";
    let r = server
        .post_json(
            "/symbolicate/v5",
            &job("mathlib-O0.pdb", missing, &[0x1000]),
        )
        .json();
    let errors = r["results"][0]["module_errors"][format!("mathlib-O0.pdb/{missing}")].to_string();
    assert!(
        errors.contains("ServerDown") && errors.contains("http://127.0.0.1:1/mathlib-O0.pdb/"),
        "{errors}"
    );

    let store_path = store.display().to_string();
    let out = query_stdin(
        &["/symbolicate/v5"],
        &[("_NT_SYMBOL_PATH", &store_path)],
        &job("mathlib.pdb", &t.breakpad_id(), &t.offsets()),
    );
    for (f, e) in frames_of(&out["results"][0]).iter().zip(&t.addresses) {
        check_frame(f, e).unwrap();
    }
}

#[test]
fn separate_debug_by_build_id_and_a_bad_debuglink() {
    let c = corpus();
    let t = Truth::load(&c.join("truth/elf/split-debug/shapes.truth.json"));
    let dir = scratch("separate-debug");
    // The stripped binary alone in one folder; its debug file only under .build-id in
    // another --symbol-dir.
    let bin_dir = dir.join("bin");
    let sym_dir = dir.join("syms");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let code_id = t.header["module"]["code_id"]
        .as_str()
        .unwrap()
        .to_ascii_lowercase();
    let rel = format!(".build-id/{}/{}.debug", &code_id[..2], &code_id[2..]);
    std::fs::create_dir_all(sym_dir.join(&rel).parent().unwrap()).unwrap();
    std::fs::copy(c.join("elf/split-debug/shapes"), bin_dir.join("shapes")).unwrap();
    std::fs::copy(c.join("elf/split-debug").join(&rel), sym_dir.join(&rel)).unwrap();
    let server = Server::start(&[
        "--symbol-dir",
        bin_dir.to_str().unwrap(),
        "--symbol-dir",
        sym_dir.to_str().unwrap(),
    ]);
    let r = server
        .post_json(
            "/symbolicate/v5",
            &job("shapes", &t.breakpad_id(), &t.offsets()),
        )
        .json();
    let mut table = Agreement::default();
    table.add(
        "elf/split-debug/shapes via --symbol-dir/.build-id",
        frames_of(&r["results"][0])
            .iter()
            .zip(&t.addresses)
            .map(|(f, e)| check_frame(f, e))
            .collect(),
    );
    table.finish("Separate debug file found by build ID");

    // A .gnu_debuglink target with the right name but other bytes: rejected by its CRC,
    // reported, and the binary's own symbols still answer.
    let bad_dir = dir.join("bad");
    std::fs::create_dir_all(&bad_dir).unwrap();
    std::fs::copy(c.join("elf/split-debug/shapes"), bad_dir.join("shapes")).unwrap();
    let mut debug = std::fs::read(c.join("elf/split-debug/shapes.debug")).unwrap();
    let n = debug.len();
    debug[n - 1] ^= 0xff;
    std::fs::write(bad_dir.join("shapes.debug"), &debug).unwrap();
    let server = Server::start(&["--symbol-dir", bad_dir.to_str().unwrap()]);
    let r = server
        .post_json(
            "/symbolicate/v5",
            &job("shapes", &t.breakpad_id(), &t.offsets()),
        )
        .json();
    let key = format!("shapes/{}", t.breakpad_id());
    let errors = r["results"][0]["module_errors"][&key].to_string();
    assert!(
        errors.contains("DebugLinkCrcMismatch") && errors.contains("shapes.debug"),
        "{errors}"
    );
    for f in frames_of(&r["results"][0]) {
        assert!(
            f.get("file").is_none(),
            "no DWARF may come from the rejected file: {f}"
        );
    }
    server.assert_alive();
}

/// A zip64 archive (sizes and offset in zip64 extra fields, zip64 end records) with one
/// stored entry, written by hand: no tool here writes zip64 for small files.
fn zip64_archive(name: &str, data: &[u8]) -> Vec<u8> {
    let mut crc = flate2::Crc::new();
    crc.update(data);
    let crc = crc.sum();
    let le16 = |v: u16| v.to_le_bytes().to_vec();
    let le32 = |v: u32| v.to_le_bytes().to_vec();
    let le64 = |v: u64| v.to_le_bytes().to_vec();
    let size = data.len() as u64;
    let mut out = Vec::new();
    // Local header.
    for part in [
        le32(0x04034b50),
        le16(45),
        le16(0),
        le16(0),
        le16(0),
        le16(0),
        le32(crc),
        le32(u32::MAX),
        le32(u32::MAX),
        le16(name.len() as u16),
        le16(20),
    ] {
        out.extend(part);
    }
    out.extend(name.as_bytes());
    for part in [le16(1), le16(16), le64(size), le64(size)] {
        out.extend(part);
    }
    out.extend(data);
    // Central directory.
    let cd_offset = out.len() as u64;
    for part in [
        le32(0x02014b50),
        le16(45),
        le16(45),
        le16(0),
        le16(0),
        le16(0),
        le16(0),
        le32(crc),
        le32(u32::MAX),
        le32(u32::MAX),
        le16(name.len() as u16),
        le16(28),
        le16(0),
        le16(0),
        le16(0),
        le32(0),
        le32(u32::MAX),
    ] {
        out.extend(part);
    }
    out.extend(name.as_bytes());
    for part in [le16(1), le16(24), le64(size), le64(size), le64(0)] {
        out.extend(part);
    }
    let cd_size = out.len() as u64 - cd_offset;
    // Zip64 end of central directory, its locator, then the classic record.
    let eocd64 = out.len() as u64;
    for part in [
        le32(0x06064b50),
        le64(44),
        le16(45),
        le16(45),
        le32(0),
        le32(0),
        le64(1),
        le64(1),
        le64(cd_size),
        le64(cd_offset),
    ] {
        out.extend(part);
    }
    for part in [le32(0x07064b50), le32(0), le64(eocd64), le32(1)] {
        out.extend(part);
    }
    for part in [
        le32(0x06054b50),
        le16(0),
        le16(0),
        le16(u16::MAX),
        le16(u16::MAX),
        le32(u32::MAX),
        le32(u32::MAX),
        le16(0),
    ] {
        out.extend(part);
    }
    out
}

#[test]
fn zip64_archives_are_read() {
    let c = corpus();
    let t = Truth::load(&c.join("truth/elf/libmathlib.so.truth.json"));
    let id = t.breakpad_id();
    let name = format!("libmathlib.so/{id}/libmathlib.so.sym");
    let zip = scratch("zip64").join("symbols64.zip");
    std::fs::write(
        &zip,
        zip64_archive(
            &name,
            &std::fs::read(c.join("breakpad").join(&name)).unwrap(),
        ),
    )
    .unwrap();
    // Python's zipfile, an independent reader, accepts the archive.
    match std::process::Command::new("python3")
        .args(["-m", "zipfile", "-t"])
        .arg(&zip)
        .status()
    {
        Ok(s) => assert!(s.success(), "python3 rejects the hand-written zip64"),
        Err(e) => skip(&format!("python3 (the zip64 oracle): {e}"), true),
    }
    let server = Server::start(&["--symbols-zip", zip.to_str().unwrap()]);
    let cases = vec![("libmathlib.so".to_string(), id, &t)];
    let mut table = Agreement::default();
    run_cases(&server, &cases, &mut table, &judge_sym);
    table.finish("zip64 symbols archive");
}

#[test]
fn shared_corpus_pe_macho_and_breakpad_cases_match() {
    with_shared_corpus(pe_and_pdb_cases_match);
    with_shared_corpus(macho_cases_match_thin_fat_and_dsym);
    with_shared_corpus(breakpad_store_and_symbols_zip_match);
}

/// The memo that answers repeats (texts in shared chunks, inline frames kept once, new
/// answers merged into it) gives what a fresh server gives: requests that overlap, repeat,
/// come in another order and ask an address twice, on a `.sym` with inline records.
#[test]
fn repeats_and_overlapping_requests_answer_as_a_fresh_server_does() {
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus/breakpad");
    let (name, id) = ("tmpl-gcc-O2-dwarf4", "DF2B56A15D151081B4D7E992A14A8F690");
    let sym = std::fs::read_to_string(store.join(format!("{name}/{id}/{name}.sym"))).unwrap();
    // Every FUNC's first two bytes, middle and last byte (neighbours: an answer kept
    // under the wrong offset shows in its function_offset).
    let mut offsets = Vec::new();
    for line in sym.lines().filter(|l| l.starts_with("FUNC ")) {
        let f: Vec<&str> = line.split(' ').collect();
        let f = if f[1] == "m" { &f[2..] } else { &f[1..] };
        let (a, s) = (
            u64::from_str_radix(f[0], 16).unwrap(),
            u64::from_str_radix(f[1], 16).unwrap(),
        );
        if s > 2 {
            offsets.extend([a, a + 1, a + s / 2, a + s - 1]);
        }
    }
    assert!(offsets.len() > 30, "{} offsets", offsets.len());
    let third = offsets.len() / 3;
    let first: Vec<(usize, u64)> = offsets[..2 * third].iter().map(|&o| (0, o)).collect();
    // Overlapping the first, backwards, one address twice.
    let mut second: Vec<(usize, u64)> = offsets[third..].iter().rev().map(|&o| (0, o)).collect();
    second.push(second[0]);
    let map = [(name.to_string(), id.to_string())];
    let args = ["--breakpad-symbol-dir", store.to_str().unwrap()];
    let fresh = |stack: &[(usize, u64)]| Server::start(&args).symbolicate(&map, stack);
    let (want_first, want_second) = (fresh(&first), fresh(&second));
    let inlined = want_second["results"][0]["stacks"][0]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f.get("inlines").is_some())
        .count();
    assert!(inlined >= 3, "only {inlined} frames with inline frames");
    let server = Server::start(&args);
    for round in 0..2 {
        assert_eq!(
            server.symbolicate(&map, &first),
            want_first,
            "first, round {round}"
        );
        assert_eq!(
            server.symbolicate(&map, &second),
            want_second,
            "second, round {round}"
        );
    }
}

/// A big answer asked for again is sent again as it was, until a module of the request
/// resolves otherwise: a `.sym` put in the store after the first requests names the
/// frames of the next ones, as a fresh server names them.
#[test]
fn a_request_asked_again_is_answered_as_before_until_a_module_changes() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus/breakpad");
    let (name, id) = ("tmpl-gcc-O2-dwarf4", "DF2B56A15D151081B4D7E992A14A8F690");
    let sym_path = fixtures.join(format!("{name}/{id}/{name}.sym"));
    let sym = std::fs::read_to_string(&sym_path).unwrap();
    let starts: Vec<u64> = sym
        .lines()
        .filter(|l| l.starts_with("FUNC "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let f = if f[1] == "m" { &f[2..] } else { &f[1..] };
            u64::from_str_radix(f[0], 16).unwrap()
        })
        .collect();
    // Answers of more than 256 KiB are kept: 6 000 frames, even unnamed, are more.
    let stack: Vec<(usize, u64)> = starts.iter().cycle().take(6000).map(|&o| (0, o)).collect();
    let map = [(name.to_string(), id.to_string())];
    let store = scratch("asked-again-store");
    let server = Server::start(&["--breakpad-symbol-dir", store.to_str().unwrap()]);
    let again = |n: usize| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let seen = server.stderr().matches("the same answer as before").count();
            if seen >= n || std::time::Instant::now() > deadline {
                return seen;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };

    let missing = server.symbolicate(&map, &stack);
    assert_eq!(
        missing["results"][0]["found_modules"][format!("{name}/{id}")],
        false
    );
    assert_eq!(server.symbolicate(&map, &stack), missing);
    assert_eq!(again(1), 1, "{}", server.stderr());

    let dir = store.join(name).join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&sym_path, dir.join(format!("{name}.sym"))).unwrap();
    let want = Server::start(&["--breakpad-symbol-dir", fixtures.to_str().unwrap()])
        .symbolicate(&map, &stack);
    let frames = want["results"][0]["stacks"][0].as_array().unwrap();
    assert!(frames.iter().all(|f| f.get("function").is_some()));
    assert_eq!(
        server.symbolicate(&map, &stack),
        want,
        "once the .sym is there"
    );
    assert_eq!(server.symbolicate(&map, &stack), want, "asked again");
    assert_eq!(again(2), 2, "{}", server.stderr());
    // The log lines of the four requests, in order: the third was answered afresh.
    let log = server.stderr();
    let again: Vec<bool> = log
        .lines()
        .filter(|l| l.contains("/symbolicate/v5 200"))
        .map(|l| l.contains("the same answer as before"))
        .collect();
    assert_eq!(again, [false, true, false, true], "{log}");
}

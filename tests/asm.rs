//! `/asm/v1` against independent disassemblers: llvm-objdump output recorded next to the
//! fixtures (scripts/make-asm-fixtures, the command at the top of each recording), GNU
//! objdump on a binary gcc builds at test time, and llvm-objdump run now on the shared
//! corpus (skipped with a message when the corpus or llvm-objdump is absent).
//!
//! For every function: our instruction boundaries must equal the reference's (all of
//! them), mnemonics must agree on at least 95 %, a direct call to a known function must
//! name it, and `continueUntilFunctionEnd` with a size of 1 must give the whole function.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::{Value, json};

const FIXTURES: &str = "fixtures/asm";

/// One function of a reference disassembly: its name, and (address, text) of each
/// instruction.
#[derive(Debug)]
struct RefFunction {
    name: String,
    start: u64,
    insts: Vec<(u64, String)>,
}

const PREFIXES: &[&str] = &[
    "lock", "rep", "repe", "repne", "repz", "repnz", "xacquire", "xrelease",
];

/// Parses `objdump -d` output (LLVM or GNU): `<addr> <name>:` headers, then
/// `addr:<tab>text` lines.
fn parse_objdump(text: &str) -> Vec<RefFunction> {
    let mut out: Vec<RefFunction> = Vec::new();
    let mut pending: Option<(u64, String)> = None;
    for line in text.lines() {
        let t = line.trim_end();
        if let Some(head) = t.strip_suffix(">:")
            && let Some((addr, name)) = head.split_once(" <")
            && let Ok(start) = u64::from_str_radix(addr.trim(), 16)
        {
            out.push(RefFunction {
                name: name.to_string(),
                start,
                insts: Vec::new(),
            });
            continue;
        }
        let Some((addr, rest)) = t.split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        let mut text = rest.trim();
        // Instruction lines have a tab after the address (headers and notes have not).
        if text.is_empty() || text == "..." || !rest.contains('\t') {
            continue;
        }
        // 32-bit ARM data (`.word` of a literal pool) comes with its bytes even under
        // --no-show-raw-insn: `0f 05 09 10  <tab>.word<tab>0x1009050f`.
        // (Instruction lines have only blanks before that tab.)
        if let Some((bytes, after)) = rest.split_once('\t')
            && !bytes.trim().is_empty()
            && bytes.chars().all(|c| c.is_ascii_hexdigit() || c == ' ')
        {
            text = after.trim();
        }
        // llvm-objdump's ARM comments (`@ imm = #-0x12`) are not part of the instruction.
        if let Some((insn, _)) = text.split_once(" @ ").or_else(|| text.split_once("\t@ ")) {
            text = insn.trim_end();
        }
        let Some(f) = out.last_mut() else { continue };
        // llvm-objdump prints a prefix the instruction's REX byte follows (`f0 48 ff 08`)
        // on a line of its own: the instruction starts at the prefix, as it does for us.
        if let Some((at, prefix)) = pending.take() {
            f.insts.push((at, format!("{prefix} {text}")));
            continue;
        }
        if PREFIXES.contains(&text) {
            pending = Some((addr, text.to_string()));
            continue;
        }
        f.insts.push((addr, text.to_string()));
    }
    out.retain(|f| !f.insts.is_empty());
    out
}

/// The mnemonic of an instruction text; aarch64 arrangement suffixes of Apple syntax
/// (`dup.16b`), GNU's `cs`/`ds` segment prefixes before `nop` and the Thumb width
/// qualifiers `.w`/`.n` (assembler hints: the offsets say the width) do not count as
/// differences.
fn mnemonic(text: &str) -> String {
    let mut words = text.split_whitespace();
    let mut m = words.next().unwrap_or("").to_ascii_lowercase();
    if matches!(m.as_str(), "cs" | "ds" | "data16") {
        m = words.next().unwrap_or("").to_ascii_lowercase();
    }
    if let Some(a) = m.strip_suffix(".w").or_else(|| m.strip_suffix(".n")) {
        m = a.to_string();
    }
    match m.split_once('.') {
        Some((a, b))
            if b.ends_with(['b', 'h', 's', 'd']) && b.starts_with(|c: char| c.is_ascii_digit()) =>
        {
            a.to_string()
        }
        _ => m,
    }
}

/// The branch target of `call 0x1d190 <name>` (llvm-objdump, ours) or `call 1d190 <name>`
/// (GNU objdump), when a name follows it.
fn target_of(text: &str) -> Option<u64> {
    let (head, _) = text.split_once(" <")?;
    let hex = head.split_whitespace().nth(1)?;
    u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok()
}

/// Names as symbol tables spell them and as we answer them (Mach-O's leading `_`).
fn plain_name(n: &str) -> &str {
    n.strip_prefix('_').unwrap_or(n)
}

/// A demangled name reduced to what every demangler spells alike: no argument list, no
/// Rust hash, no Mach-O underscore.
fn short_name(n: &str) -> String {
    let n = plain_name(n);
    let n = n.split_once('(').map_or(n, |(a, _)| a);
    let n = match n.rsplit_once("::h") {
        Some((a, h)) if h.len() == 16 && h.chars().all(|c| c.is_ascii_hexdigit()) => a,
        _ => n,
    };
    n.to_string()
}

struct Module {
    label: String,
    debug_name: String,
    debug_id: String,
    name: String,
    /// Reference addresses minus this are module offsets.
    image_base: u64,
}

#[derive(Default)]
struct Tally {
    insts: usize,
    boundary_ok: usize,
    mnemonic_ok: usize,
    calls: usize,
    calls_named: usize,
    functions: usize,
    whole: usize,
    problems: Vec<String>,
}

fn asm_request(m: &Module, start: u64, size: u64, until_end: bool) -> Value {
    json!({
        "debugName": m.debug_name, "debugId": m.debug_id, "name": m.name,
        "startAddress": format!("{start:#x}"), "size": format!("{size:#x}"),
        "continueUntilFunctionEnd": until_end,
    })
}

fn instructions(answer: &Value) -> Vec<(u64, String)> {
    answer["instructions"]
        .as_array()
        .unwrap_or_else(|| panic!("no instructions in {answer}"))
        .iter()
        .map(|i| (i[0].as_u64().unwrap(), i[1].as_str().unwrap().to_string()))
        .collect()
}

/// Compares every function of `funcs` (the last one only up to `end`, the end of its
/// section) with our answers from `server`.
fn compare(
    server: &Server,
    m: &Module,
    funcs: &[RefFunction],
    end: u64,
    names: &[&str],
    names_exact: bool,
    t: &mut Tally,
) {
    for (k, f) in funcs.iter().enumerate() {
        let next = funcs.get(k + 1).map_or(end, |n| n.start);
        let start = f.start - m.image_base;
        let answer = server
            .post_json("/asm/v1", &asm_request(m, start, next - f.start, false))
            .json();
        if answer.get("error").is_some() {
            t.problems.push(format!("{} {}: {answer}", m.label, f.name));
            continue;
        }
        let base = u64::from_str_radix(
            answer["startAddress"]
                .as_str()
                .unwrap()
                .trim_start_matches("0x"),
            16,
        )
        .unwrap();
        let ours: BTreeMap<u64, String> = instructions(&answer)
            .into_iter()
            .map(|(o, s)| (base + o + m.image_base, s))
            .collect();
        for (addr, text) in &f.insts {
            t.insts += 1;
            let Some(mine) = ours.get(addr) else {
                t.problems.push(format!(
                    "{} {}: no instruction of ours starts at {addr:#x} ({text})",
                    m.label, f.name
                ));
                continue;
            };
            t.boundary_ok += 1;
            if mnemonic(mine) == mnemonic(text) {
                t.mnemonic_ok += 1;
            } else {
                t.problems.push(format!(
                    "{} {}: at {addr:#x} {mine:?}, the reference has {text:?}",
                    m.label, f.name
                ));
            }
            // A direct call to a function of the module must name it.
            let is_call = matches!(mnemonic(text).as_str(), "call" | "bl" | "blx");
            if let Some(callee) = text.rsplit_once(" <").map(|(_, n)| n.trim_end_matches('>'))
                && is_call
                && !callee.contains('+')
                && !callee.contains('@')
                && names.contains(&plain_name(callee))
            {
                t.calls += 1;
                // The same target, named: the exact spelling is checked on the fixtures
                // (demanglers spell Rust and C++ names differently).
                let named = if names_exact {
                    mine.contains(&format!("<{}", short_name(callee)))
                        || mine.contains(&format!("<{callee}"))
                } else {
                    // Ours are module offsets, llvm-objdump's addresses.
                    target_of(mine).is_some()
                        && target_of(mine).map(|t| t + m.image_base) == target_of(text)
                };
                if named {
                    t.calls_named += 1;
                } else {
                    t.problems.push(format!(
                        "{} {}: call at {addr:#x} to {callee} shown as {mine:?}",
                        m.label, f.name
                    ));
                }
            }
        }
        if ours.len() != f.insts.len() {
            t.problems.push(format!(
                "{} {}: {} instructions, the reference has {}",
                m.label,
                f.name,
                ours.len(),
                f.insts.len()
            ));
        }
    }
}

/// `continueUntilFunctionEnd` with a size of 1 at each function start: the answer must
/// be the reference's instructions from there up to the function's end (`size_of`).
fn check_whole(
    server: &Server,
    m: &Module,
    funcs: &[RefFunction],
    size_of: &dyn Fn(&RefFunction) -> Option<u64>,
    t: &mut Tally,
) {
    for f in funcs {
        let Some(size) = size_of(f) else { continue };
        let start = f.start - m.image_base;
        let answer = server
            .post_json("/asm/v1", &asm_request(m, start, 1, true))
            .json();
        let got: Vec<u64> = instructions(&answer).iter().map(|i| i.0 + start).collect();
        let want: Vec<u64> = f
            .insts
            .iter()
            .map(|i| i.0 - m.image_base)
            .filter(|&a| a < start + size)
            .collect();
        t.functions += 1;
        if got == want {
            t.whole += 1;
        } else {
            t.problems.push(format!(
                "{} {}: continueUntilFunctionEnd gave {} instructions, want {} (size {size:#x})",
                m.label,
                f.name,
                got.len(),
                want.len()
            ));
        }
    }
}

fn report(label: &str, t: &Tally) {
    let pct = |a: usize, b: usize| {
        if b == 0 {
            100.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    println!(
        "{label}: {} instructions, boundaries {:.2} %, mnemonics {:.2} %, direct calls named {}/{}, whole functions {}/{}",
        t.insts,
        pct(t.boundary_ok, t.insts),
        pct(t.mnemonic_ok, t.insts),
        t.calls_named,
        t.calls,
        t.whole,
        t.functions
    );
    for p in t
        .problems
        .iter()
        .filter(|p| !p.contains(" .text:"))
        .take(60)
    {
        println!("  {p}");
    }
    assert!(t.insts > 0, "{label}: nothing compared");
    assert_eq!(
        t.boundary_ok, t.insts,
        "{label}: instruction boundaries differ"
    );
    assert!(
        pct(t.mnemonic_ok, t.insts) >= 95.0,
        "{label}: mnemonics agree on less than 95 %"
    );
    assert_eq!(
        t.calls_named, t.calls,
        "{label}: a direct call does not name its callee"
    );
    assert_eq!(t.whole, t.functions, "{label}: continueUntilFunctionEnd");
}

/// The breakpad ID of an ELF build ID (SPEC section 5).
fn elf_debug_id(build_id_hex: &str) -> String {
    let mut b: Vec<u8> = (0..16)
        .map(|i| {
            u8::from_str_radix(build_id_hex.get(2 * i..2 * i + 2).unwrap_or("00"), 16).unwrap()
        })
        .collect();
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    b.iter().map(|x| format!("{x:02X}")).collect::<String>() + "0"
}

/// `IDS.txt`: `<file> <key> <value...>` lines.
fn ids() -> Vec<(String, String, String)> {
    std::fs::read_to_string(Path::new(FIXTURES).join("IDS.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut p = l.splitn(3, ' ');
            Some((p.next()?.into(), p.next()?.into(), p.next()?.into()))
        })
        .collect()
}

fn id_of(file: &str, key: &str) -> String {
    ids()
        .into_iter()
        .find(|(f, k, _)| f == file && k == key)
        .map(|x| x.2)
        .unwrap_or_else(|| panic!("IDS.txt has no {key} for {file}"))
}

fn fixture_module(file: &str) -> Module {
    let base = id_of(file, "image-base");
    let image_base = u64::from_str_radix(base.trim_start_matches("0x"), 16).unwrap();
    let (debug_name, debug_id) = if file.ends_with(".dll") {
        // `{GUID} age` as llvm-readobj prints it.
        let v = id_of(file, "pdb-guid-age");
        let (guid, age) = v.split_once(' ').unwrap();
        let guid: String = guid.chars().filter(|c| c.is_ascii_hexdigit()).collect();
        (file.replace(".dll", ".pdb"), format!("{guid}{age}"))
    } else if file.ends_with(".dylib") {
        let uuid = id_of(file, "uuid").replace('-', "");
        (file.to_string(), format!("{uuid}0"))
    } else {
        (file.to_string(), elf_debug_id(&id_of(file, "build-id")))
    };
    Module {
        label: file.to_string(),
        debug_name,
        debug_id,
        name: file.to_string(),
        image_base,
    }
}

/// `llvm-nm -S` sizes of the recording, for ELF (Mach-O and PE symbols have none).
fn nm_sizes(file: &str) -> BTreeMap<u64, u64> {
    let text = std::fs::read_to_string(Path::new(FIXTURES).join(format!("{file}.nm.txt"))).unwrap();
    text.lines()
        .filter_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            (p.len() == 4).then(|| {
                Some((
                    u64::from_str_radix(p[0], 16).ok()?,
                    u64::from_str_radix(p[1], 16).ok()?,
                ))
            })?
        })
        .collect()
}

/// The end of the code the recording disassembles: the last function's last instruction
/// is followed by nothing else in its section, so its span ends at the section's end,
/// which the recordings do not give; the answer's own size is used for that one.
fn fixture_case(file: &str) {
    let m = fixture_module(file);
    let text =
        std::fs::read_to_string(Path::new(FIXTURES).join(format!("{file}.objdump.txt"))).unwrap();
    let funcs = parse_objdump(&text);
    let server = Server::start(&["--symbol-dir", FIXTURES]);
    let mut t = Tally::default();
    // The last function: up to its last recorded instruction plus one byte (the answer
    // goes on to decode that instruction whole).
    let end = funcs
        .last()
        .and_then(|f| f.insts.last())
        .map_or(0, |i| i.0 + 1);
    let names: Vec<&str> = funcs.iter().map(|f| plain_name(&f.name)).collect();
    compare(&server, &m, &funcs, end, &names, true, &mut t);
    let sizes = nm_sizes(file);
    let next_start: BTreeMap<u64, u64> =
        funcs.windows(2).map(|w| (w[0].start, w[1].start)).collect();
    check_whole(
        &server,
        &m,
        &funcs,
        &|f| {
            sizes.get(&f.start).copied().filter(|&s| s > 0).or_else(|| {
                // No size (PE exports): up to the next start, less the padding that
                // follows the last instruction (padding is no function's).
                next_start.get(&f.start)?;
                let padding = f
                    .insts
                    .iter()
                    .rev()
                    .take_while(|i| i.1.starts_with("nop") || i.1.starts_with("int3"))
                    .last()
                    .map_or(next_start[&f.start], |i| i.0);
                Some(padding - f.start)
            })
        },
        &mut t,
    );
    report(file, &t);
    server.assert_alive();
}

#[test]
fn x86_64_elf_from_clang() {
    fixture_case("asm-x86_64.elf");
}

#[test]
fn i686_elf() {
    fixture_case("asm-i686.elf");
}

#[test]
fn aarch64_elf() {
    fixture_case("asm-aarch64.elf");
}

/// 32-bit ARM: a Thumb-2 library with an ARM function and literal pools, and an ARM
/// library with a Thumb function (fixtures/asm/asm-arm32.c).
#[test]
fn thumb_elf() {
    fixture_case("asm-thumb.so");
}

#[test]
fn arm_elf() {
    fixture_case("asm-arm.so");
}

/// A 32-bit ARM library from sources this code was not tuned against (Thumb and ARM
/// objects mixed; scripts/make-asm-fixtures).
#[test]
fn unseen_armv7_elf() {
    fixture_case("unseen-armv7.so");
}

/// Debian's armhf C library (libc6-armhf-cross, which CI installs): stripped, so the
/// Thumb bit of its exported functions is all there is to tell the modes, as it is for
/// llvm-objdump.
#[test]
fn armhf_libm_from_debian() {
    let bin = Path::new("/usr/arm-linux-gnueabihf/lib/libm.so.6");
    if !bin.is_file() || !have("llvm-objdump") {
        skip("libc6-armhf-cross or llvm-objdump is not installed", true);
        return;
    }
    let bin_s = bin.to_str().unwrap();
    let notes = run("readelf", &["-n", bin_s]);
    let build_id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("readelf shows a build ID");
    let m = Module {
        label: "Debian armhf libm.so.6".into(),
        debug_name: "libm.so.6".into(),
        debug_id: elf_debug_id(build_id),
        name: "libm.so.6".into(),
        image_base: 0,
    };
    let args = [
        "-d",
        "--no-show-raw-insn",
        "--triple=thumbv7a",
        "-j",
        ".text",
        bin_s,
    ];
    live_case(
        &m,
        bin.parent().unwrap(),
        "llvm-objdump",
        &args,
        5,
        None,
        false,
    );
}

#[test]
fn arm64_macho() {
    fixture_case("asm-arm64.dylib");
}

#[test]
fn x86_64_pe() {
    fixture_case("asm-x64.dll");
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(tool: &str, args: &[&str]) -> String {
    let out = Command::new(tool).args(args).output().unwrap();
    assert!(out.status.success(), "{tool} {args:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `nm -S` sizes (GNU or LLVM), by address (names repeat: Rust generics, local symbols).
fn sizes_from_nm(nm: &str, args: &[&str]) -> BTreeMap<u64, u64> {
    run(nm, args)
        .lines()
        .filter_map(|l| {
            let p: Vec<&str> = l.splitn(4, ' ').collect();
            (p.len() == 4).then(|| {
                Some((
                    u64::from_str_radix(p[0], 16).ok()?,
                    u64::from_str_radix(p[1], 16).ok()?,
                ))
            })?
        })
        .collect()
}

/// Compares a binary disassembled now by `objdump_args` (every `stride`-th function, to
/// bound the time on big binaries) and checks whole functions with `sizes`. A function
/// is compared up to llvm-objdump's first `<unknown>`: in a stripped 32-bit ARM library
/// that is a literal pool no mapping symbol marks, which llvm-objdump then reads as Thumb
/// code one byte at a time (instructions at odd addresses), a reading nobody can match.
fn live_case(
    m: &Module,
    symbol_dir: &Path,
    objdump: &str,
    objdump_args: &[&str],
    stride: usize,
    sizes: Option<BTreeMap<u64, u64>>,
    exact: bool,
) {
    let text = run(objdump, objdump_args);
    let all = parse_objdump(&text);
    // Calls are checked to the functions symbolication knows: for ELF those with a
    // size (an unsized CRT label such as `deregister_tm_clones` names nothing).
    let names: Vec<&str> = all
        .iter()
        .filter(|f| {
            sizes
                .as_ref()
                .is_none_or(|s| s.get(&f.start).is_some_and(|&n| n > 0))
        })
        .map(|f| plain_name(&f.name))
        .collect();
    let funcs: Vec<RefFunction> = all
        .iter()
        .step_by(stride)
        .map(|f| RefFunction {
            name: f.name.clone(),
            start: f.start,
            insts: f
                .insts
                .iter()
                .take_while(|i| i.1 != "<unknown>")
                .cloned()
                .collect(),
        })
        .filter(|f| !f.insts.is_empty())
        .collect();
    let server = Server::start(&["--symbol-dir", symbol_dir.to_str().unwrap()]);
    let mut t = Tally::default();
    let end = funcs
        .last()
        .and_then(|f| f.insts.last())
        .map_or(0, |i| i.0 + 1);
    // With a stride the next function of the list is not the next one of the binary:
    // each is asked up to its last reference instruction (decoded whole).
    for f in &funcs {
        let last = f.insts.last().map_or(f.start, |i| i.0 + 1);
        compare(
            &server,
            m,
            std::slice::from_ref(f),
            last,
            &names,
            exact,
            &mut t,
        );
    }
    let _ = end;
    if let Some(sizes) = sizes {
        check_whole(
            &server,
            m,
            &funcs,
            &|f| sizes.get(&f.start).copied().filter(|&s| s > 0),
            &mut t,
        );
    }
    report(&m.label, &t);
    server.assert_alive();
}

/// An x86_64 ELF built now by gcc, against GNU objdump (binutils): tools CI has.
#[test]
fn x86_64_elf_from_gcc_against_gnu_objdump() {
    let dir = scratch("asm-gcc");
    let bin = dir.join("asm-gcc");
    let bin_s = bin.to_str().unwrap();
    let status = Command::new("gcc")
        .args([
            "-O2",
            "-mavx2",
            "-ffreestanding",
            "-fno-builtin",
            "-nostdlib",
        ])
        .args(["-Wl,-e,entry", "-Wl,--build-id=sha1", "-o", bin_s])
        .arg(Path::new(FIXTURES).join("asm.c"))
        .status()
        .unwrap();
    assert!(status.success(), "gcc failed");
    let notes = run("readelf", &["-n", bin_s]);
    let build_id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("readelf shows a build ID");
    // First PT_LOAD's virtual address, from `readelf -lW`.
    let image_base = run("readelf", &["-lW", bin_s])
        .lines()
        .find_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            (p.first() == Some(&"LOAD"))
                .then(|| u64::from_str_radix(p[2].trim_start_matches("0x"), 16).ok())?
        })
        .expect("a LOAD segment");
    let m = Module {
        label: "gcc x86_64 ELF vs GNU objdump".into(),
        debug_name: "asm-gcc".into(),
        debug_id: elf_debug_id(build_id),
        name: "asm-gcc".into(),
        image_base,
    };
    let sizes = sizes_from_nm("nm", &["-S", "--defined-only", bin_s]);
    live_case(
        &m,
        &dir,
        "objdump",
        &[
            "-d",
            "-M",
            "intel",
            "--no-show-raw-insn",
            "-j",
            ".text",
            bin_s,
        ],
        1,
        Some(sizes),
        true,
    );
}

/// The shared corpus disassembled now by llvm-objdump: binaries this code was not
/// written against (C++ and Rust ELF, arm64 Mach-O with a dSYM, x86_64 PE with a PDB).
fn corpus_case(
    rel: &str,
    debug_name: &str,
    debug_id: &str,
    name: &str,
    image_base: u64,
    section: &str,
    stride: usize,
) {
    if !have("llvm-objdump") {
        skip("llvm-objdump is not installed", true);
        return;
    }
    // The project's own corpus when it has the case (its IDs from its truth files), then
    // the shared corpus as an extra.
    let own = corpus();
    let mut compared = 0;
    if own.join(rel).is_file() {
        let id = case_id(rel);
        one_corpus_case(
            &own, rel, debug_name, &id, name, image_base, section, stride,
        );
        compared += 1;
    }
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if shared.is_dir() {
        one_corpus_case(
            &shared, rel, debug_name, debug_id, name, image_base, section, stride,
        );
        compared += 1;
    }
    if compared == 0 {
        // Neither corpus has the case: say so, loudly, rather than pass having compared
        // nothing.
        skip(
            &format!(
                "{rel}: in neither {} nor {}",
                own.display(),
                shared.display()
            ),
            false,
        );
    }
}

#[allow(clippy::too_many_arguments)]
fn one_corpus_case(
    corpus: &Path,
    rel: &str,
    debug_name: &str,
    debug_id: &str,
    name: &str,
    image_base: u64,
    section: &str,
    stride: usize,
) {
    let bin = corpus.join(rel);
    let bin_s = bin.to_str().unwrap();
    let m = Module {
        label: rel.to_string(),
        debug_name: debug_name.into(),
        debug_id: debug_id.into(),
        name: name.into(),
        image_base,
    };
    let mut args = vec!["-d", "-C", "--no-show-raw-insn", "--section", section];
    if !rel.contains("arm64") {
        args.extend(["-M", "intel"]);
    }
    args.push(bin_s);
    // Whole functions by symbol size where the format has sizes (ELF).
    let sizes = rel
        .starts_with("elf/")
        .then(|| sizes_from_nm("llvm-nm", &["-S", "-C", "--defined-only", bin_s]));
    live_case(
        &m,
        bin.parent().unwrap(),
        "llvm-objdump",
        &args,
        stride,
        sizes,
        false,
    );
}

#[test]
fn corpus_rust_elf() {
    corpus_case(
        "elf/prog-rust-O2",
        "prog-rust-O2",
        "3123E74C97F2B4C109ED8517D12E31C60",
        "prog-rust-O2",
        0,
        ".text",
        7,
    );
}

#[test]
fn corpus_cpp_elf() {
    corpus_case(
        "elf/tmpl-clang19-O2-dwarf5",
        "tmpl-clang19-O2-dwarf5",
        "41FC5C612E366684EAC03EE424F1B40F0",
        "tmpl-clang19-O2-dwarf5",
        0,
        ".text",
        1,
    );
}

#[test]
fn corpus_arm64_macho() {
    corpus_case(
        "macho/arm64/libgeomcpp.dylib",
        "libgeomcpp.dylib",
        "4C4C447F55553144A1B01EE645710E070",
        "libgeomcpp.dylib",
        0,
        "__text",
        1,
    );
}

#[test]
fn corpus_x86_64_pe() {
    corpus_case(
        "pe/geomcpp.dll",
        "geomcpp.pdb",
        "97BBA2DC90DE01C04C4C44205044422E1",
        "geomcpp.dll",
        0x180000000,
        ".text",
        1,
    );
}

/// Failures to answer are a 200 with `{"error": …}` (what the front-end shows); a
/// malformed request is a 400 naming the field.
#[test]
fn failures_are_errors_not_crashes() {
    let m = fixture_module("asm-x86_64.elf");
    let server = Server::start(&["--symbol-dir", FIXTURES]);
    let ask = |v: &Value| server.post_json("/asm/v1", v);
    let error_200 = |v: Value, what: &str| {
        let r = ask(&v);
        assert_eq!(r.status, 200, "{what}");
        let e = r.json();
        assert!(e["error"].is_string(), "{what}: {e}");
    };
    let mut other = asm_request(&m, 0x1470, 4, false);
    other["debugId"] = json!("00000000000000000000000000000000A");
    error_200(other, "no binary with that ID");
    error_200(
        asm_request(&m, 0x1470, (1 << 20) + 1, false),
        "over the size cap",
    );
    error_200(asm_request(&m, 0x10, 4, false), "outside the code");
    error_200(asm_request(&m, u64::MAX, 4, true), "past everything");
    let mut named_only = asm_request(&m, 0x1470, 4, false);
    named_only["debugName"] = json!("nothing-here");
    named_only["name"] = json!("nothing-here");
    error_200(named_only, "unknown module");
    for (bad, field) in [
        (
            json!({"debugName": "a", "debugId": "B0", "size": "0x4"}),
            "startAddress",
        ),
        (
            json!({"debugName": "a", "debugId": "B0", "startAddress": "12", "size": "0x4"}),
            "startAddress",
        ),
        (
            json!({"debugName": "a", "startAddress": "0x0", "size": "0x4"}),
            "debugId",
        ),
        (
            json!({"debugName": "a", "debugId": "B0", "startAddress": "0x0", "size": "0x4", "continueUntilFunctionEnd": 1}),
            "continueUntilFunctionEnd",
        ),
    ] {
        let r = ask(&bad);
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.json()["error"].as_str().unwrap().contains(field), "{bad}");
    }
    // The answer's fields, as the front-end reads them.
    let ok = ask(&asm_request(&m, 0x1470, 1, true)).json();
    assert_eq!(ok["arch"], "x86_64");
    assert_eq!(ok["syntax"], json!(["Intel"]));
    assert_eq!(ok["startAddress"], "0x1470");
    assert!(ok["size"].as_str().unwrap().starts_with("0x"));
    server.assert_alive();
}

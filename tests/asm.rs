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

/// Parses `objdump -d` output (LLVM or GNU): `<addr> <name>:` headers, then
/// `addr:<tab>text` lines.
fn parse_objdump(text: &str) -> Vec<RefFunction> {
    let mut out: Vec<RefFunction> = Vec::new();
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
        let text = rest.trim();
        // Instruction lines have a tab after the address (headers and notes have not).
        if text.is_empty() || text == "..." || !rest.contains('\t') {
            continue;
        }
        if let Some(f) = out.last_mut() {
            f.insts.push((addr, text.to_string()));
        }
    }
    out.retain(|f| !f.insts.is_empty());
    out
}

/// The mnemonic of an instruction text; aarch64 arrangement suffixes of Apple syntax
/// (`dup.16b`) and GNU's `cs`/`ds` segment prefixes before `nop` do not count as
/// differences.
fn mnemonic(text: &str) -> String {
    let mut words = text.split_whitespace();
    let mut m = words.next().unwrap_or("").to_ascii_lowercase();
    if matches!(m.as_str(), "cs" | "ds" | "data16") {
        m = words.next().unwrap_or("").to_ascii_lowercase();
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

/// Names as symbol tables spell them and as we answer them (Mach-O's leading `_`).
fn plain_name(n: &str) -> &str {
    n.strip_prefix('_').unwrap_or(n)
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
fn compare(server: &Server, m: &Module, funcs: &[RefFunction], end: u64, t: &mut Tally) {
    let names: Vec<&str> = funcs.iter().map(|f| plain_name(&f.name)).collect();
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
            }
            // A direct call to a function of the module must name it.
            let is_call = matches!(mnemonic(text).as_str(), "call" | "bl");
            if let Some(callee) = text.rsplit_once(" <").map(|(_, n)| n.trim_end_matches('>'))
                && is_call
                && !callee.contains('+')
                && names.contains(&plain_name(callee))
            {
                t.calls += 1;
                let named = mine.contains(&format!("<{}>", plain_name(callee)))
                    || mine.contains(&format!("<{callee}>"));
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
    for p in t.problems.iter().take(20) {
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
fn nm_sizes(file: &str) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(Path::new(FIXTURES).join(format!("{file}.nm.txt"))).unwrap();
    text.lines()
        .filter_map(|l| {
            let p: Vec<&str> = l.split_whitespace().collect();
            (p.len() == 4)
                .then(|| (p[3].to_string(), u64::from_str_radix(p[1], 16).ok()))?
                .1
                .map(|s| (p[3].to_string(), s))
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
    compare(&server, &m, &funcs, end, &mut t);
    let sizes = nm_sizes(file);
    let next_start: BTreeMap<u64, u64> =
        funcs.windows(2).map(|w| (w[0].start, w[1].start)).collect();
    check_whole(
        &server,
        &m,
        &funcs,
        &|f| {
            sizes
                .get(&f.name)
                .copied()
                .filter(|&s| s > 0)
                .or_else(|| next_start.get(&f.start).map(|n| n - f.start))
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

#[test]
fn arm64_macho() {
    fixture_case("asm-arm64.dylib");
}

#[test]
fn x86_64_pe() {
    fixture_case("asm-x64.dll");
}

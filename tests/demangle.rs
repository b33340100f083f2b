//! Itanium C++ demangling against LLVM's: every mangled name of the real C++ libraries on
//! the machine (libstdc++, libLLVM 19 and libclang-cpp 19, the ICU libraries when they are
//! there), demangled by our code path and by `llvm-cxxfilt-19`, must be the same text after
//! folding the spellings the SPEC allows (`> >`, `(unsigned long)32`). Any other difference
//! fails the test, except for the names listed in `fixtures/demangle/llvm19-misreads.txt`
//! (an LLVM defect, explained there).

mod common;

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use common::skip;

const CXXFILT: &str = "llvm-cxxfilt-19";

/// The libraries whose names are compared; those missing are skipped, but libstdc++ and
/// libLLVM 19 (package llvm-19, which .ci/run installs) must be there under CI.
const LIBS: &[(&str, bool)] = &[
    ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", true),
    ("/usr/lib/x86_64-linux-gnu/libLLVM.so.19.1", true),
    ("/usr/lib/x86_64-linux-gnu/libclang-cpp.so.19.1", false),
    ("/usr/lib/x86_64-linux-gnu/libicuuc.so.72", false),
    ("/usr/lib/x86_64-linux-gnu/libicui18n.so.72", false),
];

/// The `_Z` names `nm` lists (dynamic and, when not stripped, static symbol tables),
/// without their symbol versions.
fn names_of(lib: &Path, out: &mut BTreeSet<String>) {
    for args in [&["-D"][..], &[][..]] {
        let Ok(o) = Command::new("nm").args(args).arg(lib).output() else {
            skip(&format!("cannot run nm on {}", lib.display()), true);
            return;
        };
        for line in String::from_utf8_lossy(&o.stdout).lines() {
            let Some(sym) = line.split_whitespace().last() else {
                continue;
            };
            let sym = sym.split('@').next().unwrap_or(sym);
            if sym.starts_with("_Z") {
                out.insert(sym.to_string());
            }
        }
    }
}

/// Folds the spellings that differ between demanglers but say the same thing.
fn fold(s: &str) -> String {
    let mut t = s.to_string();
    while t.contains("> >") {
        t = t.replace("> >", ">>");
    }
    // Integer literals: `(unsigned long)32` is `32ul`.
    for (ty, suffix) in [
        ("(unsigned long long)", "ull"),
        ("(unsigned long)", "ul"),
        ("(unsigned int)", "u"),
        ("(long long)", "ll"),
        ("(long)", "l"),
    ] {
        let mut out = String::new();
        let mut rest = t.as_str();
        while let Some(i) = rest.find(ty) {
            let after = &rest[i + ty.len()..];
            let digits = after
                .char_indices()
                .take_while(|(j, c)| c.is_ascii_digit() || (*j == 0 && *c == '-'))
                .count();
            if digits == 0 {
                out.push_str(&rest[..i + ty.len()]);
                rest = after;
                continue;
            }
            out.push_str(&rest[..i]);
            out.push_str(&after[..digits]);
            out.push_str(suffix);
            rest = &after[digits..];
        }
        out.push_str(rest);
        t = out;
    }
    t
}

/// The names LLVM 19 demangles wrongly (see the file's header).
fn llvm_misreads() -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demangle/llvm19-misreads.txt");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// One name of each kind the patches of `vendor/cpp_demangle` cover, checked without any
/// tool against what `llvm-cxxfilt-19` prints for them (spelled `> >`). Through the DWARF
/// path's language dispatch too, which demangles C++ linkage names with the same crate.
#[test]
fn known_names_as_llvm_writes_them() {
    let cases = [
        ("_Z1fIJiiEEiDpOT_", "int f<int, int>(int&&, int&&)"),
        ("_ZN1SC2IiEEiT_", "S::S<int>(int, int)"),
        (
            "_ZN4llvm11PassManagerINS_8FunctionENS_15AnalysisManagerIS1_JEEEJEE3runERS1_RS3_",
            "llvm::PassManager<llvm::Function, llvm::AnalysisManager<llvm::Function> >::run(llvm::Function&, llvm::AnalysisManager<llvm::Function>&)",
        ),
        (
            "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC2IS3_EEPKcRKS3_",
            "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string<std::allocator<char> >(char const*, std::allocator<char> const&)",
        ),
        ("_ZTVSo", "vtable for std::ostream"),
        ("_ZZ1fvENKUlvE_clEv", "f()::'lambda'()::operator()() const"),
        ("_Z1fN1X1AERKNS0_1BE", "f(X::A, X::A::B const&)"),
        // C++20: a trailing requires-clause (clang 19's `int g(T) requires C<T>`).
        ("_Z1gIiEiT_Q1CIS0_E", "int g<int>(int) requires C<int>"),
        // An inheriting constructor (`using Base::Base;`) is named after its own class
        // (SpiderMonkey's `mozilla::Result`; GNU c++filt writes the base's name).
        (
            "_ZN7mozilla6detail28ResultImplementationNullIsOkI19ZonedDateTimeString11ParserErrorLb1EECI2NS0_32ResultImplementationNullIsOkBaseIS2_S3_EEEOS2_",
            "mozilla::detail::ResultImplementationNullIsOk<ZonedDateTimeString, ParserError, true>::ResultImplementationNullIsOk(ZonedDateTimeString&&)",
        ),
        // A lambda with its own template parameters (`[]<auto N, std::size_t M>()`),
        // named as LLVM invents them (V8's regexp bytecode writer, in SpiderMonkey).
        (
            "_ZZN2v88internal6regexp14BytecodeWriter4EmitILNS1_8BytecodeE49EJiPNS0_5LabelEEEEvDpT0_ENKUlTnDaTnmvE_clILNS1_6detail20BytecodeOperandNamesILS4_49EE7OperandE1ELm1EEEDav",
            "auto void v8::internal::regexp::BytecodeWriter::Emit<(v8::internal::regexp::Bytecode)49, int, v8::internal::Label*>(int, v8::internal::Label*)::'lambda'<auto $N, unsigned long $N0>()::operator()<(v8::internal::regexp::detail::BytecodeOperandNames<(v8::internal::regexp::Bytecode)49>::Operand)1, (unsigned long)1>() const",
        ),
        // A function template returning a function pointer: the name inside the
        // declarator (SpiderMonkey's `get_real_symbol`).
        (
            "_ZL15get_real_symbolIPDoFPcPKcEET_S2_S5_",
            "char* (*get_real_symbol<char* (*)(char const*) noexcept>(char const*, char* (*)(char const*) noexcept))(char const*) noexcept",
        ),
    ];
    for (mangled, llvm) in cases {
        assert_eq!(profiler_symbol_server::internals::demangle(mangled), llvm);
        let dwarf = addr2line::demangle(mangled, gimli::DW_LANG_C_plus_plus_14);
        assert_eq!(dwarf.as_deref(), Some(llvm), "{mangled}");
    }
}

#[test]
fn itanium_names_as_llvm_writes_them() {
    let have_cxxfilt = Command::new(CXXFILT)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_cxxfilt {
        skip(&format!("{CXXFILT} is not installed"), true);
        return;
    }
    let mut names = BTreeSet::new();
    for (lib, ci_installs) in LIBS {
        let lib = Path::new(lib);
        if lib.is_file() {
            names_of(lib, &mut names);
        } else {
            skip(&format!("{} is not there", lib.display()), *ci_installs);
        }
    }
    let names: Vec<String> = names.into_iter().collect();

    let mut child = Command::new(CXXFILT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = names.join("\n") + "\n";
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let llvm: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(
        llvm.len(),
        names.len(),
        "{CXXFILT} answered one line per name"
    );

    let misreads = llvm_misreads();
    let mut differ = Vec::new();
    let (mut compared, mut misread, mut stale) = (0, 0, 0);
    for (name, want) in names.iter().zip(&llvm) {
        // A name LLVM cannot demangle either is not a real C++ name to compare.
        if want == name {
            continue;
        }
        compared += 1;
        let got = profiler_symbol_server::internals::demangle(name);
        let same = fold(&got) == fold(want);
        if misreads.contains(name.as_str()) {
            if same {
                stale += 1;
            } else {
                misread += 1;
            }
        } else if !same {
            differ.push(format!("{name}\n  ours: {got}\n  llvm: {want}"));
        }
    }
    eprintln!(
        "{} of {compared} names demangle differently from {CXXFILT} ({misread} more that \
         LLVM misreads, listed; {stale} listed ones now agree)",
        differ.len()
    );
    if let Some(path) = std::env::var_os("DEMANGLE_DIFF") {
        std::fs::write(path, differ.join("\n")).unwrap();
    }
    if compared < 30_000 {
        skip(
            &format!("only {compared} mangled names on this machine (30 000 wanted)"),
            true,
        );
    }
    assert!(
        differ.is_empty(),
        "{} of {compared} names differ from {CXXFILT}; the first:\n{}",
        differ.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}

/// The names LLVM 19 demangles and we leave mangled, in `fixtures/demangle/cxx20-names.txt`:
/// C++20 constructs not read yet (a vendor type trait `u…E` with a type argument).
const CXX20_NOT_YET: &[&str] = &[
    "_ZNSt8__detail9__variant15_Variadic_unionIJiNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEED2EvQoontu24__has_trivial_destructorT_Entu24__has_trivial_destructorNS1_IJDpT0_EEEE",
    "_ZSt4swapIiENSt9enable_ifIXsrSt6__and_IJSt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS4_ESt18is_move_assignableIS4_EEE5valueEvE4typeERS4_SE_",
];

/// The defined names of a C++20 program (`fixtures/demangle/cxx20-names.cpp`: ranges,
/// concepts, requires-clauses, variant, optional, map; compiled `-std=c++20 -O0` by
/// clang 19 and gcc 12): every name `llvm-cxxfilt-19` demangles is demangled here too (an
/// unread requires-clause would leave an inline frame's whole name mangled). The spelling
/// differences with LLVM are those of the libraries above (literals, `> >`) and LLVM's
/// misreads of a template parameter inside a requires-clause (`T&&` for the argument).
#[test]
fn cxx20_names_are_demangled() {
    let have_cxxfilt = Command::new(CXXFILT)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have_cxxfilt {
        skip(&format!("{CXXFILT} is not installed"), true);
        return;
    }
    let list = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demangle/cxx20-names.txt");
    let names: Vec<String> = std::fs::read_to_string(list)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut child = Command::new(CXXFILT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let text = names.join("\n") + "\n";
    let writer = std::thread::spawn(move || input.write_all(text.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let llvm: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(llvm.len(), names.len());
    let mut left = Vec::new();
    for (name, theirs) in names.iter().zip(&llvm) {
        let ours = profiler_symbol_server::internals::demangle(name);
        if ours == *name && theirs != name && !CXX20_NOT_YET.contains(&name.as_str()) {
            left.push(name.clone());
        }
    }
    assert!(
        left.is_empty(),
        "left mangled though LLVM reads them: {left:#?}"
    );
}

/// Real linkage names of the Debian 12 `-dbg` packages' debug information (libstdc++,
/// ceph's librados and libcephfs, cupt's boost::spirit parsers, GraphicsMagick, PETSc,
/// valgrind), each with what `llvm-cxxfilt-19` printed for it, stored in
/// `fixtures/demangle/debian-dbg-names.tsv.gz` (made by `scripts/linkage-names subset`):
/// a few of each kind of difference an older demangler had (boost names nested 50 deep,
/// pack expansions of expressions, ref-qualified function types, clone suffixes, lambdas'
/// constructors, …) and a seeded sample of the rest. Checked without any tool; when
/// `llvm-cxxfilt-19` is there, the stored text is checked to be still what it prints.
#[test]
fn debian_dbg_names_as_llvm_writes_them() {
    stored_names_as_llvm_writes_them("debian-dbg-names.tsv.gz", 3_000);
}

/// Real linkage names of a clang 19 build (`-O2 -g`, C++17 and C++20, DWARF 4 and 5) of
/// template-heavy programs over libstdc++ 12 (ranges, variant, tuple, regex, chrono,
/// coroutines), SpiderMonkey-like `Variant`/`Tuple` and packed-field code, range-v3,
/// fmt, nlohmann-json, Eigen, cereal, glm, boost (spirit, hana, mp11, phoenix,
/// multi_index, graph) and abseil, each with what `llvm-cxxfilt-19` printed, stored in
/// `fixtures/demangle/clang19-names.tsv.gz` (`scripts/linkage-names subset`): a few of
/// each kind of difference an older demangler had (constraint parameters `TL0_`, hidden
/// friends, floating-point literals, folds, subscripts, `>` in `decltype`, and LLVM's
/// misreads) and a seeded sample of the rest.
#[test]
fn clang19_names_as_llvm_writes_them() {
    stored_names_as_llvm_writes_them("clang19-names.tsv.gz", 1_500);
}

/// The names of `fixtures/demangle/FILE` (`name TAB llvm-cxxfilt-19's output`, gzip),
/// at least `min` of them, demangled as stored, apart from the folded spellings and
/// LLVM's misreads; the stored text is checked to be still what `llvm-cxxfilt-19`
/// prints when it is there.
fn stored_names_as_llvm_writes_them(file: &str, min: usize) {
    use std::io::Read;
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/demangle")
        .join(file);
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let rows: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('\t')).collect();
    assert!(rows.len() > min, "{} names", rows.len());

    let have_cxxfilt = Command::new(CXXFILT)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if have_cxxfilt {
        let mut child = Command::new(CXXFILT)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input: String = rows.iter().map(|(n, _)| format!("{n}\n")).collect();
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        let now: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        let stored: Vec<&str> = rows.iter().map(|(_, w)| *w).collect();
        assert!(
            now == stored,
            "the stored outputs are not what {CXXFILT} prints"
        );
    } else {
        skip(
            &format!("{CXXFILT} is not installed: the stored outputs are used as they are"),
            true,
        );
    }

    let misreads = llvm_misreads();
    let mut differ = Vec::new();
    let (mut compared, mut misread) = (0, 0);
    for (name, want) in &rows {
        if want == name {
            continue;
        }
        compared += 1;
        let got = profiler_symbol_server::internals::demangle(name);
        if fold(&got) == fold(want) {
            continue;
        }
        if misreads.contains(*name) {
            misread += 1;
        } else {
            differ.push(format!("{name}\n  ours: {got}\n  llvm: {want}"));
        }
    }
    eprintln!(
        "{} of {compared} names differ from {CXXFILT} ({misread} more that LLVM misreads, listed)",
        differ.len()
    );
    assert!(
        differ.is_empty(),
        "{file}: {} of {compared} names differ from {CXXFILT}; the first:\n{}",
        differ.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}

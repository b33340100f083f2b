//! What the user reads about each module on stderr: one short line per module (where its
//! symbols came from, or the cause when there are none), and, once per kind of problem,
//! what to do about it, for all the modules it concerns. A screen of repeated advice is
//! read by nobody; `-v` gives each module its full commands and every candidate tried.

use std::collections::BTreeMap;

use crate::log::shell_quote;
use crate::resolve::{LoadError, Module};
use crate::shared::library::Lib;
use crate::store::LoadedModule;

/// Where a module without debug info comes from, which decides what can help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Advice {
    /// Firefox itself (libxul, XUL, xul.dll, firefox): Mozilla's symbol server has it.
    Firefox,
    /// A Linux distribution's package: its debug package, or debuginfod.
    DistroPackage,
    /// Windows: the PDB beside the DLL, a symstore, Microsoft's symbol server.
    Windows,
    /// macOS: the dSYM bundle.
    Mac,
    /// macOS's own libraries: no debug info anywhere; names from the dyld shared cache.
    MacSystem,
    /// Something built on this machine (outside the system folders): a build with symbols.
    LocalBuild,
}

fn path_of<'a>(lib: Option<&'a Lib>, file: Option<&'a std::path::Path>) -> Option<String> {
    lib.and_then(|l| l.path.clone())
        .or_else(|| file.map(|f| f.display().to_string()))
}

/// The kind of advice that fits a module without debug info.
pub fn advice_for(debug_name: &str, lib: Option<&Lib>, file: Option<&std::path::Path>) -> Advice {
    let path = path_of(lib, file).unwrap_or_default();
    let name = lib
        .and_then(|l| l.name.as_deref())
        .unwrap_or(debug_name)
        .to_ascii_lowercase();
    let lower = debug_name.to_ascii_lowercase();
    let firefox_names = [
        "libxul.so",
        "xul",
        "xul.pdb",
        "xul.dll",
        "firefox",
        "firefox.exe",
    ];
    if firefox_names.contains(&name.as_str())
        || firefox_names.contains(&lower.as_str())
        || path.to_ascii_lowercase().contains("firefox")
    {
        Advice::Firefox
    } else if lower.ends_with(".pdb") || lower.ends_with(".dll") || lower.ends_with(".exe") {
        Advice::Windows
    } else if (path.starts_with("/usr/lib/") && lower.ends_with(".dylib"))
        || path.starts_with("/System/")
        || path.contains("dyld_shared_cache")
    {
        Advice::MacSystem
    } else if lower.ends_with(".dylib")
        || path.contains(".app/")
        || path.contains(".framework/")
        || path.starts_with("/System/")
        || path.starts_with("/usr/lib/system/")
    {
        Advice::Mac
    } else if ["/usr/", "/lib/", "/lib64/", "/lib32/", "/bin/", "/sbin/"]
        .iter()
        .any(|p| path.starts_with(p))
    {
        Advice::DistroPackage
    } else {
        Advice::LocalBuild
    }
}

/// How to get debug info for one module: the full commands (`-v`).
fn module_advice(
    debug_name: &str,
    kind: Advice,
    lib: Option<&Lib>,
    file: Option<&std::path::Path>,
) -> String {
    // It stands inside commands the user may paste.
    let path = path_of(lib, file).unwrap_or_else(|| debug_name.to_string());
    let path = shell_quote(&path);
    match kind {
        Advice::Firefox => "pass --breakpad-symbol-server https://symbols.mozilla.org/ (or \
             --symbols-zip with the build's crashreporter-symbols.zip)"
            .to_string(),
        Advice::Windows => format!(
            "put {debug_name} beside the DLL, pass --windows-symbol-path (a symstore), or \
             --windows-symbol-server https://msdl.microsoft.com/download/symbols for Windows' own DLLs"
        ),
        Advice::Mac => format!("pass --symbol-dir DIR holding {debug_name}.dSYM"),
        // Apple ships no debug info for these; they exist only in the dyld shared cache.
        Advice::MacSystem => "a macOS system library: its names come from the dyld shared cache \
             (on macOS the system's; elsewhere pass --dyld-shared-cache PATH, the cache files \
             copied from the Mac that recorded the profile, same macOS version)"
            .to_string(),
        Advice::DistroPackage => format!(
            "install its debug package (Debian/Ubuntu: apt install $(dpkg -S {path} | cut -d: -f1)-dbgsym, \
             with the debug archive enabled; Fedora: dnf debuginfo-install $(rpm -qf {path})), \
             or set DEBUGINFOD_URLS (debuginfod-find debuginfo {path} shows whether a server has it)"
        ),
        Advice::LocalBuild => {
            "build it with debug info (-g) and keep the debug files, or pass --symbol-dir DIR holding them"
                .to_string()
        }
    }
}

/// The one line said for all modules of a kind.
fn grouped_advice(kind: Advice, names: &[String]) -> String {
    let n = names.len();
    let mut shown = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if n > 3 {
        shown.push_str(", …");
    }
    let one = n == 1;
    let what = if one {
        "1 library has".to_string()
    } else {
        format!("{n} libraries have")
    };
    let todo = match (kind, one) {
        (Advice::Firefox, _) => "pass --breakpad-symbol-server https://symbols.mozilla.org/",
        (Advice::DistroPackage, true) => "install its -dbgsym package, or set DEBUGINFOD_URLS",
        (Advice::DistroPackage, false) => "install their -dbgsym packages, or set DEBUGINFOD_URLS",
        (Advice::Windows, true) => "put its PDB beside it or pass --windows-symbol-server URL",
        (Advice::Windows, false) => {
            "put their PDBs beside them or pass --windows-symbol-server URL"
        }
        (Advice::Mac, true) => "pass --symbol-dir DIR holding its .dSYM bundle",
        (Advice::Mac, false) => "pass --symbol-dir DIR holding their .dSYM bundles",
        (Advice::MacSystem, _) => {
            "pass --dyld-shared-cache PATH (the cache of the Mac that recorded the profile)"
        }
        (Advice::LocalBuild, true) => {
            "build it with -g, or pass --symbol-dir DIR with its debug files"
        }
        (Advice::LocalBuild, false) => {
            "build them with -g, or pass --symbol-dir DIR with their debug files"
        }
    };
    format!("{what} no debug info here ({shown}): {todo} (-v: how)")
}

/// Collects the modules that lack debug info, and says the advice for each kind once
/// (again only when more modules of that kind came since, with all of them counted).
#[derive(Default)]
pub struct Advisor {
    /// Every module noted, per kind, in the order noted.
    names: BTreeMap<Advice, Vec<String>>,
    /// How many of each kind's modules the last line said.
    told: BTreeMap<Advice, usize>,
}

impl Advisor {
    pub fn note(&mut self, kind: Advice, debug_name: &str) {
        let names = self.names.entry(kind).or_default();
        if !names.iter().any(|n| n == debug_name) {
            names.push(debug_name.to_string());
        }
    }

    /// The stderr line of one module's answer (where its symbols came from, or why there
    /// are none), its advice noted for the grouped lines: the one module report of
    /// `load`, `query` and `symbolicate`.
    pub fn report(
        &mut self,
        debug_name: &str,
        answer: &Result<std::rc::Rc<LoadedModule>, Vec<LoadError>>,
        lib: Option<&Lib>,
        verbose: bool,
    ) -> String {
        let (line, advice) = match answer {
            Ok(module) => found(debug_name, module, module.origin(), lib, verbose),
            Err(errors) => missing(debug_name, errors, lib, verbose),
        };
        if let Some(kind) = advice {
            self.note(kind, debug_name);
        }
        line
    }

    /// The grouped lines for kinds with modules not yet counted in a line.
    pub fn take_lines(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (kind, names) in &self.names {
            let told = self.told.entry(*kind).or_default();
            if names.len() > *told {
                *told = names.len();
                out.push(grouped_advice(*kind, names));
            }
        }
        out
    }
}

/// Where a found module's symbols come from, in one line; `Some(kind)` when it has no
/// debug info (for the [`Advisor`]). `origin`: the server it was downloaded from. With
/// `verbose`, the module's own advice follows.
pub fn found(
    debug_name: &str,
    module: &Module,
    origin: Option<&str>,
    lib: Option<&Lib>,
    verbose: bool,
) -> (String, Option<Advice>) {
    let (line, kind) = match module {
        Module::Native(m) if m.dwarf.is_some() => (
            format!("{debug_name}: DWARF from {}", m.debug_file.display()),
            None,
        ),
        Module::Native(m) => {
            let what = if m.symbols.named() > 0 {
                "names from its symbol table"
            } else if !m.symbols.is_empty() {
                "functions from unwind tables only (fun_<offset>)"
            } else {
                "no symbols either"
            };
            // Debug info that is there but could not be read: its cause is what the user
            // can act on, not advice to build with -g.
            if let Some(e) = m.unreadable_dwarf() {
                let line = format!(
                    "{debug_name}: debug info not read ({}: {}); {what}",
                    e.kind, e.message
                );
                return (with_origin(line, origin, None), None);
            }
            let kind = advice_for(debug_name, lib, Some(&m.debug_file));
            let mut line = format!(
                "{debug_name}: no debug info in {}; {what}",
                m.debug_file.display()
            );
            if verbose {
                line += "; ";
                line += &module_advice(debug_name, kind, lib, Some(&m.debug_file));
            }
            (line, Some(kind))
        }
        Module::Pdb(m) => (format!("{debug_name}: PDB {}", m.path.display()), None),
        Module::Breakpad(_) => (format!("{debug_name}: Breakpad symbols"), None),
        Module::Indexed(m) => (
            format!(
                "{debug_name}: prepared index {} of {}",
                m.index.path.display(),
                m.index.meta.debug_file
            ),
            None,
        ),
        Module::Sidecar(_) => (
            format!("{debug_name}: the profile's .syms.json sidecar"),
            None,
        ),
    };
    (with_origin(line, origin, module.warnings().first()), kind)
}

/// `line`, with the server it came from and the first `warning`: a companion that was
/// looked for and not usable (a dwz file, a debuglink whose CRC differs) changes what the
/// user sees, said on the same line.
fn with_origin(line: String, origin: Option<&str>, warning: Option<&LoadError>) -> String {
    let line = match origin {
        Some(server) => format!("{line} (from {server})"),
        None => line,
    };
    match warning {
        Some(w) => format!("{line}; {}", w.message),
        None => line,
    }
}

/// Why a module has no symbols, cause first, in one line; `Some(kind)` when advice can
/// help (not for a file of another build). With `verbose`, every candidate and the
/// module's own advice.
pub fn missing(
    debug_name: &str,
    errors: &[LoadError],
    lib: Option<&Lib>,
    verbose: bool,
) -> (String, Option<Advice>) {
    let not_found = |e: &&LoadError| e.kind.is_absence();
    // A file of another build: nothing to install, the profile is older than the build.
    if let Some(e) = errors.iter().find(|e| e.kind.is_other_build()) {
        return (format!("{debug_name}: {}", e.message), None);
    }
    let kind = advice_for(debug_name, lib, None);
    // Nothing to try at all: said as it is, not as a place looked at.
    if let Some(e) = errors
        .iter()
        .find(|e| e.kind == crate::resolve::LoadErrorKind::NoCandidates)
        .filter(|_| errors.len() == 1)
    {
        let mut line = format!("{debug_name}: not found; {}", e.message);
        if verbose {
            line += "; ";
            line += &module_advice(debug_name, kind, lib, None);
        }
        return (line, Some(kind));
    }
    let mut line = match errors.iter().find(|e| !not_found(e)) {
        // Something was there but could not be used (not an object file, corrupt,
        // refused): that is what the user can act on.
        Some(e) => format!("{debug_name}: {} ({})", e.message, e.kind),
        None => {
            let looked = errors.len();
            let first = errors.first().map(|e| {
                e.message
                    .split(": ")
                    .next()
                    .unwrap_or(&e.message)
                    .to_string()
            });
            match (first, looked) {
                (Some(first), 1) => format!("{debug_name}: not found (looked at {first})"),
                (Some(first), n) => format!(
                    "{debug_name}: not found (looked at {first} and {}{})",
                    crate::log::count(n as u64 - 1, "more place", "more places"),
                    // With -v the places follow on this line.
                    if verbose { "" } else { "; -v lists them" }
                ),
                (None, _) => format!("{debug_name}: not found"),
            }
        }
    };
    if verbose {
        let tried: Vec<String> = errors
            .iter()
            .map(|e| format!("{} ({})", e.message, e.kind))
            .collect();
        line += &format!(
            "; tried {}; {}",
            tried.join(", "),
            module_advice(debug_name, kind, lib, None)
        );
    }
    (line, Some(kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::LoadErrorKind;

    fn lib(path: &str) -> Lib {
        Lib {
            path: Some(path.to_string()),
            ..Default::default()
        }
    }

    #[test]
    fn advice_fits_where_a_module_comes_from() {
        let kind = |name: &str, path: &str| advice_for(name, Some(&lib(path)), None);
        assert_eq!(kind("libxul.so", "/opt/firefox/libxul.so"), Advice::Firefox);
        assert_eq!(
            kind("xul.pdb", r"C:\Program Files\Mozilla Firefox\xul.dll"),
            Advice::Firefox
        );
        assert_eq!(
            kind("libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
            Advice::DistroPackage
        );
        assert_eq!(
            kind("ntdll.pdb", r"C:\Windows\System32\ntdll.dll"),
            Advice::Windows
        );
        assert_eq!(
            kind(
                "libsystem_kernel.dylib",
                "/usr/lib/system/libsystem_kernel.dylib"
            ),
            Advice::MacSystem
        );
        assert_eq!(
            kind("libmine.dylib", "/Users/me/b/libmine.dylib"),
            Advice::Mac
        );
        assert_eq!(kind("example", "/home/me/src/example"), Advice::LocalBuild);
    }

    #[test]
    fn a_rebuilt_file_is_said_first_and_gets_no_install_advice() {
        let errors = [
            LoadError::new(LoadErrorKind::NotFound, std::path::Path::new("/x/example.debug"), "No such file"),
            LoadError::msg(
                LoadErrorKind::UnmatchedDebugId,
                "the file at /x/example has debug ID A, the profile wants B (rebuilt since the profile was recorded?)".into(),
            ),
        ];
        let (line, kind) = missing("example", &errors, Some(&lib("/x/example")), false);
        assert!(
            line.starts_with("example: the file at /x/example has debug ID A"),
            "{line}"
        );
        assert!(kind.is_none());
        assert!(
            !line.contains("apt") && !line.contains("debuginfod"),
            "{line}"
        );
    }

    /// Each kind of module line, made by the code that prints it with README's
    /// placeholders (libfoo.so, PATH, X, Y, N, URL), is quoted in README's
    /// Troubleshooting as printed.
    #[test]
    fn readme_quotes_each_module_line_as_printed() {
        use crate::resolve::funcs::{FunctionTable, Range};
        use crate::resolve::native::NativeModule;
        let readme = include_str!("../README.md");
        let troubleshooting = &readme[readme.find("## Troubleshooting").unwrap()..];
        let quoted = |line: &str| {
            assert!(
                troubleshooting.contains(&format!("`{line}`")),
                "README's Troubleshooting does not quote `{line}`"
            );
        };
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/example/example");
        let shown = fixture.display().to_string();
        let none = |_: &std::path::Path, _: crate::resolve::Companion<'_>| Vec::new();
        let ctx = crate::resolve::LoadContext {
            path: &fixture,
            companions: &none,
            verbose: false,
        };
        let id = "1F888B6846F37DD10B8171FD83CBEC3B0";
        let module = crate::resolve::open::open(&id.into(), &ctx).unwrap();
        let (line, _) = found("libfoo.so", &module, None, None, false);
        quoted(&line.replace(&shown, "PATH"));
        let (line, _) = found("libfoo.so", &module, Some("URL"), None, false);
        quoted(&line.replace(&shown, "PATH"));
        // PDB and Breakpad files of the corpus.
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus");
        let pdb_id = "76621AC462B7F1B04C4C44205044422E1";
        for file in [
            corpus.join("pe/mathlib.pdb"),
            corpus.join(format!("breakpad/mathlib.pdb/{pdb_id}/mathlib.sym")),
        ] {
            let ctx = crate::resolve::LoadContext {
                path: &file,
                companions: &none,
                verbose: false,
            };
            let module = crate::resolve::open::open(&pdb_id.into(), &ctx).unwrap();
            let (line, _) = found("libfoo.so", &module, None, None, false);
            quoted(&line.replace(&file.display().to_string(), "PATH"));
        }
        // The profile's sidecar.
        let side = std::env::temp_dir().join(format!("pss-hint-{}.syms.json", std::process::id()));
        let doc = serde_json::json!({"string_table": ["f"], "data": [{"debug_name": "libfoo.so",
            "debug_id": pdb_id, "symbol_table": [{"rva": 0x100, "size": 4, "symbol": 0}],
            "known_addresses": [[0x100, 0]]}]});
        std::fs::write(&side, doc.to_string()).unwrap();
        let loaded = crate::resolve::sidecar::load(&side);
        let _ = std::fs::remove_file(&side);
        let m = loaded.unwrap().into_values().next().unwrap();
        let (line, _) = found("libfoo.so", &Module::Sidecar(m.into()), None, None, false);
        quoted(&line);
        // Another build: X and Y for the IDs.
        let wrong = "0123456789ABCDEF0123456789ABCDEF0";
        let e = crate::resolve::open::open(&wrong.into(), &ctx)
            .err()
            .unwrap();
        let (line, _) = missing("libfoo.so", &[e], None, false);
        quoted(
            &line
                .replace(&shown, "PATH")
                .replace(id, "X")
                .replace(wrong, "Y"),
        );
        // Stripped: symbol table, unwind tables only, nothing.
        let stripped = |symbols: FunctionTable| {
            Module::Native(Box::new(NativeModule {
                debug_file: "PATH".into(),
                base: 0,
                code: Vec::new(),
                dwarf: None,
                symbols,
                debug_map: None,
                unsized_symbols: false,
                warnings: Vec::new(),
                symbol_names: Default::default(),
            }))
        };
        let named = FunctionTable::new(0, vec![(0x10, 4, "f".into())], vec![], vec![], &[]);
        let unwind = FunctionTable::new(0, vec![], vec![Range::new(0x10, 0x20)], vec![], &[]);
        for (table, ending) in [
            (named, None),
            (
                unwind,
                Some("functions from unwind tables only (fun_<offset>)"),
            ),
            (FunctionTable::default(), Some("no symbols either")),
        ] {
            let (line, _) = found("libfoo.so", &stripped(table), None, None, false);
            match ending {
                None => quoted(&line),
                // Quoted after the first: `…; <ending>`.
                Some(e) => {
                    assert!(line.ends_with(&format!("; {e}")), "{line}");
                    quoted(&format!("…; {e}"));
                }
            }
        }
        // Missing: one place, several, none at all.
        let absent = |p: &str| LoadError::new(LoadErrorKind::NotFound, p.as_ref(), "No such file");
        let (line, _) = missing("libfoo.so", &[absent("PATH")], None, false);
        quoted(&line);
        let errors: Vec<LoadError> = (0..4).map(|_| absent("PATH")).collect();
        let (line, _) = missing("libfoo.so", &errors, None, false);
        quoted(&line.replace("3 more", "N more"));
        let nothing = crate::store::no_candidates("libfoo.so");
        let (line, _) = missing("libfoo.so", &[nothing], None, false);
        quoted(&line);
        // The grouped advice.
        let names = ["libc.so.6".to_string(), "libm.so.6".to_string()];
        quoted(&grouped_advice(Advice::DistroPackage, &names));
    }

    #[test]
    fn advice_is_grouped_and_said_once() {
        let mut a = Advisor::default();
        for n in ["libc.so.6", "libm.so.6", "libz.so.1", "libgcc_s.so.1"] {
            a.note(Advice::DistroPackage, n);
        }
        let lines = a.take_lines();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with(
                "4 libraries have no debug info here (libc.so.6, libm.so.6, libz.so.1, …)"
            ),
            "{}",
            lines[0]
        );
        assert!(lines[0].len() < 160, "{}", lines[0]);
        assert!(a.take_lines().is_empty());
        // A module of that kind later: said again, every module counted.
        a.note(Advice::DistroPackage, "libx.so");
        let lines = a.take_lines();
        assert!(lines[0].starts_with("5 libraries have"), "{}", lines[0]);
        a.note(Advice::LocalBuild, "prog");
        assert_eq!(
            a.take_lines(),
            [
                "1 library has no debug info here (prog): build it with -g, or pass --symbol-dir DIR with its debug files (-v: how)"
            ]
        );
    }
}

//! One line per module for the user: where its symbols came from, or what was tried and
//! how to get better ones. Without it an unnamed library gives no clue why.

use crate::profile::libs::Lib;
use crate::resolve::{LoadError, Module};

/// The platform a module belongs to, guessed from its names (for the advice only).
#[derive(PartialEq)]
enum Platform {
    Windows,
    Mac,
    Linux,
}

fn platform(debug_name: &str, lib: Option<&Lib>) -> Platform {
    let path = lib.and_then(|l| l.path.as_deref()).unwrap_or("");
    let lower = debug_name.to_ascii_lowercase();
    if lower.ends_with(".pdb") || lower.ends_with(".dll") || lower.ends_with(".exe") {
        Platform::Windows
    } else if lower.ends_with(".dylib")
        || path.contains(".app/")
        || path.contains(".framework/")
        || path.starts_with("/System/")
    {
        Platform::Mac
    } else {
        Platform::Linux
    }
}

/// How to get full debug info for a module, in one sentence.
/// `file`: the binary, when known from where it was found.
fn advice(debug_name: &str, lib: Option<&Lib>, file: Option<&std::path::Path>) -> String {
    let path = lib
        .and_then(|l| l.path.clone())
        .or_else(|| file.map(|f| f.display().to_string()))
        .unwrap_or_else(|| debug_name.to_string());
    match platform(debug_name, lib) {
        Platform::Windows => format!(
            "for its PDB pass --windows-symbol-path (a symstore, or srv*CACHE*URL whose cache was \
             filled by a symbol server), --symbols-zip/--breakpad-symbol-dir, or put {debug_name} beside the DLL"
        ),
        // Apple ships no debug info for these; they exist only in the dyld shared cache.
        Platform::Mac
            if path.starts_with("/usr/lib/")
                || path.starts_with("/System/")
                || path.contains("dyld_shared_cache") =>
        {
            "a macOS system library: its names come from the dyld shared cache (on macOS the \
             system's; elsewhere pass --dyld-shared-cache PATH, the cache files copied from the \
             Mac that recorded the profile, same macOS version)"
                .to_string()
        }
        Platform::Mac => format!(
            "for its dSYM pass --symbol-dir DIR holding {debug_name}.dSYM (or set the lib's debugPath)"
        ),
        Platform::Linux => format!(
            "install its debug package (Debian/Ubuntu: apt install $(dpkg -S {path} | cut -d: -f1)-dbgsym, \
             with the debug archive enabled; Fedora: dnf debuginfo-install $(rpm -qf {path})), \
             or with DEBUGINFOD_URLS set fetch it with debuginfod-find debuginfo {path} and copy it to \
             DIR/.build-id/xx/rest.debug for --symbol-dir DIR, or pass --breakpad-symbol-dir/--symbols-zip"
        ),
    }
}

/// Where a found module's symbols come from, and advice when they are thin.
pub fn found(debug_name: &str, module: &Module, lib: Option<&Lib>) -> String {
    match module {
        Module::Native(m) if m.dwarf.is_some() => {
            format!("{debug_name}: DWARF from {}", m.debug_file.display())
        }
        Module::Native(m) => {
            let what = if m.symbols.named() > 0 {
                "symbol table and unwind tables"
            } else if !m.symbols.is_empty() {
                "unwind tables only (functions named fun_<offset>)"
            } else {
                "no symbols"
            };
            format!(
                "{debug_name}: {what} of {}, no file/line; {}",
                m.debug_file.display(),
                advice(debug_name, lib, Some(&m.debug_file))
            )
        }
        Module::Pdb(m) => format!("{debug_name}: PDB {}", m.path.display()),
        Module::Breakpad(_) => format!("{debug_name}: Breakpad symbols"),
        Module::Sidecar(_) => format!("{debug_name}: the profile's .syms.json sidecar"),
    }
}

/// What was tried for a module without symbols, and how to get them.
pub fn missing(debug_name: &str, errors: &[LoadError], lib: Option<&Lib>) -> String {
    let tried: Vec<String> = errors
        .iter()
        .take(3)
        .map(|e| format!("{} ({})", e.message, e.kind))
        .collect();
    let more = errors.len().saturating_sub(3);
    let more = if more > 0 {
        format!(" and {more} more (-v lists them)")
    } else {
        String::new()
    };
    format!(
        "{debug_name}: no symbols; tried {}{more}; {}",
        tried.join(", "),
        advice(debug_name, lib, None)
    )
}

//! `symbolicate`: CI mode. Two streaming passes over the profile (addresses out, then the
//! rewritten text through), the same resolver as the server in between; outputs written
//! atomically (temp file + rename), the input never touched.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::profile::ProfileFile;
use crate::profile::libs::Lib;
use crate::profile::rewrite::{self, Replacements};
use crate::resolve::Symbolized;
use crate::resolve::sidecar::{self, ModuleSymbols};
use crate::store::SymbolStore;

/// A failure of this mode: the message names the file.
#[derive(Debug)]
pub struct CiError(pub String);

/// The default sidecar of a profile: its last extension replaced by `syms.json`.
pub fn default_sidecar(profile: &Path) -> PathBuf {
    profile.with_extension("syms.json")
}

/// Writes a file through a temporary one beside it, renamed into place once complete.
fn write_atomically(
    target: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<(), String>,
) -> Result<(), CiError> {
    let name = target
        .file_name()
        .ok_or_else(|| CiError(format!("{}: not a file name", target.display())))?;
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(CiError(format!(
            "{}: the output folder {} does not exist",
            target.display(),
            dir.display()
        )));
    }
    // Never replace a device, FIFO or folder by a regular file.
    if let Ok(meta) = std::fs::metadata(target)
        && !meta.is_file()
    {
        return Err(CiError(format!(
            "{}: exists and is not a regular file; refusing to replace it",
            target.display()
        )));
    }
    // An unpredictable name, created exclusively: nobody can have it point elsewhere.
    let random = {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    };
    let temp = dir.join(format!(".{}.{random:016x}.tmp", name.to_string_lossy()));
    let result = (|| {
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| format!("{}: {e}", temp.display()))?;
        crate::signals::track(&temp, None);
        let mut out = BufWriter::with_capacity(1 << 16, file);
        write(&mut out)?;
        let file = out
            .into_inner()
            .map_err(|e| format!("{}: {}", target.display(), e.error()))?;
        file.sync_all()
            .map_err(|e| format!("{}: {e}", target.display()))?;
        std::fs::rename(&temp, target).map_err(|e| format!("{}: {e}", target.display()))
    })();
    crate::signals::untrack(&temp);
    if let Err(e) = result {
        let _ = std::fs::remove_file(&temp);
        return Err(CiError(e));
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

struct ModuleWork {
    lib: Lib,
    offsets: BTreeSet<u64>,
    results: Vec<Option<Symbolized>>,
}

/// Runs `symbolicate`; returns the summary lines for stderr.
pub fn symbolicate(
    profile_path: &Path,
    output: Option<&Path>,
    sidecar: Option<Option<PathBuf>>,
    store: &mut SymbolStore,
    quiet: bool,
) -> Result<(), CiError> {
    let started = Instant::now();
    let profile = ProfileFile::open(profile_path).map_err(|e| CiError(e.to_string()))?;
    let sidecar = sidecar.map(|p| p.unwrap_or_else(|| default_sidecar(profile_path)));
    for out in output.iter().copied().chain(sidecar.as_deref()) {
        if same_file(out, profile_path) {
            return Err(CiError(format!(
                "{}: this is the input profile; it is never overwritten",
                out.display()
            )));
        }
    }
    let processes = profile
        .read_processes()
        .map_err(|e| CiError(e.to_string()))?;

    // Which module offsets each process's addresses are, grouped by module.
    let mut modules: BTreeMap<(String, String), ModuleWork> = BTreeMap::new();
    let mut placed: Vec<(usize, u64, (String, String), u64)> = Vec::new(); // (process, address, module, offset)
    let mut total = 0u64;
    for (p, proc_) in processes.iter().enumerate() {
        for &addr in &proc_.addresses {
            total += 1;
            let Some(lib) = proc_
                .libs
                .iter()
                .find(|l| matches!((l.start, l.end), (Some(s), Some(e)) if s <= addr && addr < e))
            else {
                continue;
            };
            let base = lib.start.unwrap_or(0).wrapping_sub(lib.offset);
            let offset = addr.wrapping_sub(base);
            let key = (lib.debug_name.clone(), lib.breakpad_id.to_ascii_uppercase());
            modules
                .entry(key.clone())
                .or_insert_with(|| ModuleWork {
                    lib: lib.clone(),
                    offsets: BTreeSet::new(),
                    results: Vec::new(),
                })
                .offsets
                .insert(offset);
            placed.push((p, addr, key, offset));
        }
    }

    // Downloads first, all at once.
    let wanted: Vec<(&str, &str, Option<&crate::profile::libs::Lib>)> = modules
        .iter()
        .map(|((name, _), w)| (name.as_str(), w.lib.breakpad_id.as_str(), Some(&w.lib)))
        .collect();
    store.fetch_all(&wanted);
    // Resolve, one ascending pass per module.
    let mut summary = Vec::new();
    let mut advisor = crate::hint::Advisor::default();
    for ((name, _), work) in modules.iter_mut() {
        let offsets: Vec<u64> = work.offsets.iter().copied().collect();
        match store.module(name, &work.lib.breakpad_id, Some(&work.lib)) {
            Ok(module) => {
                work.results = match module.lookup_sorted(&offsets) {
                    Ok(r) => r,
                    Err(e) => {
                        crate::elog!("warning: {name}: {} ({})", e.message, e.kind);
                        vec![None; offsets.len()]
                    }
                };
                let n = work.results.iter().filter(|r| r.is_some()).count();
                let (line, advice) = crate::hint::found(
                    name,
                    &module,
                    module.origin(),
                    Some(&work.lib),
                    store.verbose(),
                );
                if let Some(kind) = advice {
                    advisor.note(kind, name);
                }
                summary.push(format!("  {line} ({n} of {} addresses)", offsets.len()));
            }
            Err(errors) => {
                let (line, advice) =
                    crate::hint::missing(name, &errors, Some(&work.lib), store.verbose());
                if let Some(kind) = advice {
                    advisor.note(kind, name);
                }
                summary.push(format!(
                    "  {line} ({} addresses left as they are)",
                    offsets.len()
                ));
            }
        }
    }
    // Where each offset's result is in its module's (sorted) results.
    let positions: HashMap<&(String, String), HashMap<u64, usize>> = modules
        .iter()
        .map(|(k, w)| {
            (
                k,
                w.offsets.iter().enumerate().map(|(i, &o)| (o, i)).collect(),
            )
        })
        .collect();
    let symbol_of = |key: &(String, String), offset: u64| -> Option<&Symbolized> {
        let i = *positions.get(key)?.get(&offset)?;
        modules.get(key)?.results.get(i)?.as_ref()
    };

    let mut resolved = 0u64;
    if let Some(out) = output {
        let mut repl: Replacements = HashMap::new();
        for (p, addr, key, offset) in &placed {
            if let Some(s) = symbol_of(key, *offset) {
                repl.entry(processes[*p].path.clone())
                    .or_default()
                    .insert(*addr, format!("{} (in {})", s.function, key.0));
                resolved += 1;
            }
        }
        let gz = out.extension().is_some_and(|e| e == "gz");
        write_atomically(out, |w| {
            let input = profile.reader().map_err(|e| e.to_string())?;
            let err = |e: String| format!("{}: {e}", profile_path.display());
            if gz {
                // The rewriter writes small pieces; the encoder wants big ones.
                let enc = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
                let mut buffered = BufWriter::with_capacity(1 << 16, enc);
                rewrite::rewrite(input, &mut buffered, &repl).map_err(err)?;
                buffered
                    .into_inner()
                    .map_err(|e| e.error().to_string())?
                    .finish()
                    .map_err(|e| e.to_string())?;
            } else {
                rewrite::rewrite(input, w, &repl).map_err(err)?;
            }
            Ok(())
        })?;
    } else {
        resolved = placed
            .iter()
            .filter(|(_, _, k, o)| symbol_of(k, *o).is_some())
            .count() as u64;
    }

    if let Some(path) = &sidecar {
        let symbols: Vec<ModuleSymbols<'_>> = modules
            .iter()
            .filter(|(_, w)| w.results.iter().any(Option::is_some))
            .map(|((name, _), w)| ModuleSymbols {
                debug_name: name,
                debug_id: &w.lib.breakpad_id,
                code_id: w.lib.code_id.as_deref(),
                addresses: w
                    .offsets
                    .iter()
                    .zip(&w.results)
                    .filter_map(|(&o, r)| Some((o, r.as_ref()?)))
                    .collect(),
            })
            .collect();
        write_atomically(path, |w| {
            sidecar::write(&symbols, w).map_err(|e| e.to_string())
        })?;
    }

    if !quiet {
        crate::elog!(
            "{}: {} module(s), {resolved} of {total} addresses resolved, in {:.2} s",
            profile_path.display(),
            modules.len(),
            started.elapsed().as_secs_f64()
        );
        for line in summary.iter().chain(&advisor.take_lines()) {
            crate::elog!("{line}");
        }
        if let Some(out) = output {
            crate::elog!("  wrote {}", out.display());
        }
        if let Some(s) = &sidecar {
            crate::elog!("  wrote {}", s.display());
        }
    }
    Ok(())
}

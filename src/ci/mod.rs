//! `symbolicate`: CI mode. Two streaming passes over the profile (addresses out, then the
//! rewritten text through), the same resolver as the server in between; outputs written
//! atomically (temp file + rename), the input never touched.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::profile::ProfileFile;
use crate::profile::rewrite::{self, Replacements};
use crate::resolve::Symbolized;
use crate::resolve::sidecar::{self, ModuleSymbols};
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;
use crate::store::SymbolStore;

mod output;
use output::{Staged, check_target, commit, stage};

/// A failure of this mode: the message names the file.
#[derive(Debug)]
pub struct CiError(pub String);

/// The default sidecar of a profile: its last extension replaced by `syms.json`.
pub fn default_sidecar(profile: &Path) -> PathBuf {
    profile.with_extension("syms.json")
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

/// Notes that `offset` of `lib`'s module is wanted; the module's key.
fn want(
    modules: &mut BTreeMap<(String, DebugId), ModuleWork>,
    lib: &Lib,
    offset: u64,
) -> (String, DebugId) {
    let key = (lib.debug_name.clone(), lib.breakpad_id.clone());
    modules
        .entry(key.clone())
        .or_insert_with(|| ModuleWork {
            lib: lib.clone(),
            offsets: BTreeSet::new(),
            results: Vec::new(),
        })
        .offsets
        .insert(offset);
    key
}

/// What a run resolved: of the addresses in the profile's libs (`asked`), how many got a
/// name. Addresses outside every lib (JIT code) are not asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub asked: u64,
    pub resolved: u64,
}

impl Outcome {
    /// Addresses were to be resolved and none was (exit code 3: a CI job should notice).
    pub fn nothing_resolved(&self) -> bool {
        self.asked > 0 && self.resolved == 0
    }
}

/// Runs `symbolicate`: writes the symbolicated profile (`output`) and/or the sidecar, both
/// or neither, and the summary to stderr (unless `quiet`; what stayed unresolved is said
/// also then); the error says why nothing was written.
pub fn symbolicate(
    profile_path: &Path,
    output: Option<&Path>,
    sidecar: Option<Option<PathBuf>>,
    store: &mut SymbolStore,
    quiet: bool,
) -> Result<Outcome, CiError> {
    let started = Instant::now();
    let profile = ProfileFile::open(profile_path).map_err(|e| CiError(e.to_string()))?;
    let sidecar = sidecar.map(|p| p.unwrap_or_else(|| default_sidecar(profile_path)));
    check_outputs(profile_path, output, sidecar.as_deref())?;
    let processes = profile
        .read_processes()
        .map_err(|e| CiError(e.to_string()))?;
    let Wanted {
        mut modules,
        placed,
        total,
        processed,
    } = wanted(&processes, profile_path, output)?;

    // Downloads first, all at once.
    let fetch: Vec<(&str, &DebugId, Option<&crate::shared::library::Lib>)> = modules
        .iter()
        .map(|((name, _), w)| (name.as_str(), &w.lib.breakpad_id, Some(&w.lib)))
        .collect();
    store.fetch_all(&fetch);
    let Resolved {
        summary,
        mut advisor,
        failed,
    } = resolve_all(store, &mut modules);
    let results = Results::new(&modules);

    // Unresolved addresses per module: of the profile's frames (a processed profile's
    // are the modules' offsets).
    let mut unresolved: BTreeMap<&Key, u64> = BTreeMap::new();
    if processed {
        for (k, w) in &modules {
            let named = w.results.iter().filter(|r| r.is_some()).count();
            let left = (w.offsets.len() - named) as u64;
            if left > 0 {
                unresolved.insert(k, left);
            }
        }
    } else {
        for (_, _, k, o) in &placed {
            if results.symbol_of(k, *o).is_none() {
                *unresolved.entry(k).or_default() += 1;
            }
        }
    }
    let asked = if processed {
        modules.values().map(|w| w.offsets.len() as u64).sum()
    } else {
        placed.len() as u64
    };
    let left: u64 = unresolved.values().sum();
    let resolved = asked - left;

    let mut staged: Vec<Staged> = Vec::new();
    if let Some(out) = output {
        // Marked only when complete: the profiler never symbolicates a profile marked
        // presymbolicated, so a partial mark would hide the rest for good.
        let complete = left == 0;
        staged.push(stage_profile(
            out,
            &profile,
            profile_path,
            &processes,
            &placed,
            &results,
            complete,
        )?);
    }
    if let Some(path) = &sidecar {
        staged.push(stage_sidecar(path, &modules)?);
    }
    // Both complete: only now does either appear.
    commit(staged)?;

    let outcome = Outcome { asked, resolved };
    if !quiet {
        // A processed profile's frames are counted per distinct offset: no such note.
        let outside = match total.saturating_sub(asked) {
            n if n == 0 || processed => String::new(),
            n => format!(" ({n} outside every lib, kept as they are)"),
        };
        crate::log::elog!(
            "{}: {}, {resolved} of {asked} addresses resolved{outside}, in {:.2} s",
            profile_path.display(),
            crate::log::count(modules.len() as u64, "module", "modules"),
            started.elapsed().as_secs_f64()
        );
        for line in summary.iter().chain(&advisor.take_lines()) {
            crate::log::elog!("{line}");
        }
        if let Some(out) = output {
            crate::log::elog!("  wrote {}", out.display());
        }
        if let Some(s) = &sidecar {
            crate::log::elog!("  wrote {}", s.display());
        }
    }
    if left > 0 {
        warn_unresolved(&unresolved, &failed, &outcome, output.is_some());
    }
    Ok(outcome)
}

/// A module: its debug name and ID.
type Key = (String, DebugId);

/// Each address of an unprocessed profile inside a lib: (process, address, module, offset).
type Placed = Vec<(usize, u64, Key, u64)>;

/// What the profile asks for.
struct Wanted {
    /// The module offsets wanted, grouped by module.
    modules: BTreeMap<Key, ModuleWork>,
    placed: Placed,
    /// Every address (or frame) the profile holds, inside a lib or not.
    total: u64,
    /// A processed profile (frames are module offsets already).
    processed: bool,
}

/// Refuses an output that is the input, the same file given twice, or a target that cannot
/// be written: said before the work, not after it.
fn check_outputs(
    profile_path: &Path,
    output: Option<&Path>,
    sidecar: Option<&Path>,
) -> Result<(), CiError> {
    for out in output.iter().copied().chain(sidecar) {
        if same_file(out, profile_path) {
            return Err(CiError(format!(
                "{}: this is the input profile; it is never overwritten",
                out.display()
            )));
        }
    }
    if let (Some(out), Some(side)) = (output, sidecar)
        && (out == side || same_file(out, side))
    {
        return Err(CiError(format!(
            "{}: given as both -o and --sidecar; name two different files",
            out.display()
        )));
    }
    // Said before the work, not after it: a folder that is not there.
    if let Some(out) = output {
        check_target(out, "the profile")?;
    }
    if let Some(side) = sidecar {
        check_target(side, "the sidecar")?;
    }
    Ok(())
}

/// Which module offsets each process's addresses are, grouped by module.
fn wanted(
    processes: &[crate::profile::read::ProcessInfo],
    profile_path: &Path,
    output: Option<&Path>,
) -> Result<Wanted, CiError> {
    let mut modules: BTreeMap<Key, ModuleWork> = BTreeMap::new();
    let mut placed: Placed = Vec::new();
    let mut total = 0u64;
    if processes.first().is_none_or(|root| !root.has_meta) {
        return Err(CiError(format!(
            "{}: not a profile: its top level has no \"meta\" object (a Gecko profile from Firefox or a processed profile from the profiler has one); nothing written",
            profile_path.display()
        )));
    }
    let processed = processes.iter().any(|p| p.processed);
    if processed && output.is_some() {
        // The profiler symbolicates a processed profile by merging functions per symbol and
        // adding inline frames; renaming strings in place would give a different profile.
        let quoted = crate::log::shell_quote(&profile_path.to_string_lossy()).into_owned();
        return Err(CiError(format!(
            "{}: this is a processed profile (the format the profiler saves and `samply record` writes), which -o cannot symbolicate; open it with `profiler-symbol-server load {quoted}` (the profiler then symbolicates it through this server), or write its symbols with `profiler-symbol-server symbolicate {quoted} --sidecar` (without -o); nothing written",
            profile_path.display()
        )));
    }
    for proc_ in processes.iter().filter(|p| p.processed) {
        // Frames are module offsets already, each tied to its lib by the tables.
        for &(index, offset) in &proc_.lib_frames {
            total += 1;
            let Some(lib) = proc_.lib_at(index) else {
                continue;
            };
            want(&mut modules, lib, offset);
        }
    }
    for (p, proc_) in processes.iter().enumerate().filter(|(_, p)| !p.processed) {
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
            placed.push((p, addr, want(&mut modules, lib, offset), offset));
        }
    }
    Ok(Wanted {
        modules,
        placed,
        total,
        processed,
    })
}

/// What resolving the modules said.
struct Resolved {
    /// A line per module.
    summary: Vec<String>,
    advisor: crate::hint::Advisor,
    /// Modules without symbols (for the count of what stayed unresolved, and why).
    failed: BTreeSet<Key>,
}

/// Resolves every module's offsets, one ascending pass per module.
fn resolve_all(store: &mut SymbolStore, modules: &mut BTreeMap<Key, ModuleWork>) -> Resolved {
    let mut summary = Vec::new();
    let mut advisor = crate::hint::Advisor::default();
    let mut failed: BTreeSet<Key> = BTreeSet::new();
    for ((name, _), work) in modules.iter_mut() {
        let offsets: Vec<u64> = work.offsets.iter().copied().collect();
        let answer = store
            .module(name, &work.lib.breakpad_id, Some(&work.lib))
            .now(name, &work.lib.breakpad_id);
        let line = advisor.report(name, &answer, Some(&work.lib), store.verbose());
        match answer {
            Ok(module) => {
                work.results = match module.lookup_sorted(&offsets) {
                    Ok(r) => r,
                    Err(e) => {
                        crate::log::elog!("warning: {name}: {} ({})", e.message, e.kind);
                        vec![None; offsets.len()]
                    }
                };
                let n = work.results.iter().filter(|r| r.is_some()).count();
                summary.push(format!("  {line} ({n} of {} addresses)", offsets.len()));
            }
            Err(_) => {
                failed.insert((name.clone(), work.lib.breakpad_id.clone()));
                summary.push(format!(
                    "  {line} ({} addresses left as they are)",
                    offsets.len()
                ));
            }
        }
    }
    Resolved {
        summary,
        advisor,
        failed,
    }
}

/// The modules' results, found by module and offset.
struct Results<'a> {
    modules: &'a BTreeMap<Key, ModuleWork>,
    /// Where each offset's result is in its module's (sorted) results.
    positions: HashMap<&'a Key, HashMap<u64, usize>>,
}

impl<'a> Results<'a> {
    fn new(modules: &'a BTreeMap<Key, ModuleWork>) -> Results<'a> {
        let positions = modules
            .iter()
            .map(|(k, w)| {
                (
                    k,
                    w.offsets.iter().enumerate().map(|(i, &o)| (o, i)).collect(),
                )
            })
            .collect();
        Results { modules, positions }
    }

    fn symbol_of(&self, key: &Key, offset: u64) -> Option<&'a Symbolized> {
        let i = *self.positions.get(key)?.get(&offset)?;
        self.modules.get(key)?.results.get(i)?.as_ref()
    }
}

/// Stages the symbolicated profile: the input rewritten with each resolved address's name
/// (`gz` when `out` ends in `.gz`); marked presymbolicated when `complete`.
fn stage_profile(
    out: &Path,
    profile: &ProfileFile,
    profile_path: &Path,
    processes: &[crate::profile::read::ProcessInfo],
    placed: &[(usize, u64, Key, u64)],
    results: &Results<'_>,
    complete: bool,
) -> Result<Staged, CiError> {
    let mut repl: Replacements = HashMap::new();
    for (p, addr, key, offset) in placed {
        if let Some(s) = results.symbol_of(key, *offset) {
            repl.entry(processes[*p].path.clone())
                .or_default()
                .insert(*addr, format!("{} (in {})", s.function, key.0));
        }
    }
    let gz = out.extension().is_some_and(|e| e == "gz");
    stage(
        out,
        "the profile",
        Box::new(|w| {
            let input = profile.reader().map_err(|e| e.to_string())?;
            let err = |e: crate::profile::scan::JsonError| {
                output::WriteError::from(format!("{}: {e}", profile_path.display()))
            };
            if gz {
                // The rewriter writes small pieces; the encoder wants big ones.
                let enc = flate2::write::GzEncoder::new(w, flate2::Compression::fast());
                let mut buffered = BufWriter::with_capacity(1 << 16, enc);
                rewrite::rewrite(input, &mut buffered, &repl, complete).map_err(err)?;
                buffered
                    .into_inner()
                    .map_err(|e| e.into_error())?
                    .finish()?;
            } else {
                rewrite::rewrite(input, w, &repl, complete).map_err(err)?;
            }
            Ok(())
        }),
    )
}

/// Stages the sidecar: the symbols of every module that got any.
fn stage_sidecar(path: &Path, modules: &BTreeMap<Key, ModuleWork>) -> Result<Staged, CiError> {
    let symbols: Vec<ModuleSymbols<'_>> = modules
        .iter()
        .filter(|(_, w)| w.results.iter().any(Option::is_some))
        .map(|((name, _), w)| ModuleSymbols {
            debug_name: name,
            debug_id: w.lib.breakpad_id.to_string(),
            code_id: w.lib.code_id.as_deref(),
            addresses: w
                .offsets
                .iter()
                .zip(&w.results)
                .filter_map(|(&o, r)| Some((o, r.as_ref()?)))
                .collect(),
        })
        .collect();
    stage(
        path,
        "the sidecar",
        Box::new(|w| Ok(sidecar::write(&symbols, w)?)),
    )
}

/// Says what stayed unresolved, with `-q` too: the output is not what a complete run
/// gives. The modules with most left first, a few of them: one line however many.
fn warn_unresolved(
    unresolved: &BTreeMap<&Key, u64>,
    failed: &BTreeSet<Key>,
    outcome: &Outcome,
    wrote_profile: bool,
) {
    let (asked, left) = (outcome.asked, outcome.asked - outcome.resolved);
    let mut by_count: Vec<(&&Key, &u64)> = unresolved.iter().collect();
    crate::coldsort::sort_by(&mut by_count, |a, b| b.1.cmp(a.1));
    let shown = 2;
    let mut why: Vec<String> = by_count
        .iter()
        .take(shown)
        .map(|(k, n)| {
            let cause = if failed.contains(*k) {
                "no symbols found"
            } else {
                "no function there"
            };
            format!("{}: {n}, {cause}", k.0)
        })
        .collect();
    if by_count.len() > shown {
        why.push(format!("{} more modules", by_count.len() - shown));
    }
    // The profiler symbolicates them when it opens the output.
    let flag = if wrote_profile {
        "; meta.presymbolicated not set"
    } else {
        ""
    };
    let level = if outcome.nothing_resolved() {
        "error"
    } else {
        "warning"
    };
    crate::log::elog!(
        "{level}: {} of {asked} addresses stayed unresolved ({}){flag}",
        left,
        why.join("; ")
    );
}

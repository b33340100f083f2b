//! Prepared indexes kept between runs (`<user cache>/profiler-symbol-server/index/`): a
//! module read from a big debug file is indexed in the server's idle time
//! ([`crate::resolve::prepared`]), and the next process answers from the index without
//! reading the debug file.
//!
//! - The index is looked for at the candidate file the search order reaches; it is used
//!   only if every file it was built from is unchanged (size, modification time, device
//!   and inode), its header and tables match their hashes, and it was built for this
//!   module. Anything else is said on one line and the index is built again.
//! - Written by the server only (a one-shot `query` or `symbolicate` ends with its
//!   answers; building an index there would cost it the whole file's walk): to a temp
//!   file created with `O_EXCL`, renamed when complete, removed on failure. A name that
//!   is not a regular file (a symlink) is neither read nor replaced.
//! - The folder is bounded ([`DEFAULT_MAX_BYTES`], `--index-cache-size`): the least
//!   recently used indexes go first, and only files that start with the format's magic
//!   (files this program wrote) are ever removed.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

use super::memo::LoadedModule;
use crate::resolve::indexed::{Indexed, Reopen};
use crate::resolve::prepared::build::{Builder, Unfit};
use crate::resolve::prepared::{INDEXED_END, MAGIC, Meta, Prepared, Rejected, Source};
use crate::resolve::{Module, Symbolized};
use crate::shared::debugid::DebugId;

/// Indexes kept at most, together, by default: some 4 GB covers a Firefox build's
/// libxul and a desktop's system libraries several times over.
pub const DEFAULT_MAX_BYTES: u64 = 4_000_000_000;

/// The smallest debug file worth an index: below it a module loads in milliseconds.
/// `PROFILER_SYMBOL_SERVER_INDEX_MIN_BYTES` sets it (the tests index small fixtures).
const MIN_SOURCE_BYTES: u64 = 4 << 20;

/// Edges looked up per slice at most (with the last address before each next edge).
const EDGES_PER_LOOKUP: usize = 8192;

const SUFFIX: &str = ".psidx";
/// What names an index being written: `.<file name>.tmp-<pid>`.
const TMP_MARK: &str = ".tmp-";
/// An index still being written this long after it was started belongs to a process that
/// was killed (`kill -9`, a crash): removed when the folder is next bounded.
const STALE_TMP: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// How the index folder is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexMode {
    Off,
    /// Read indexes, write none (one-shot modes).
    Read,
    ReadWrite,
}

/// A module to index: its files and their stamps before it was read.
struct Wanted {
    debug_name: String,
    id: DebugId,
    module: Rc<LoadedModule>,
    name: String,
    sources: Vec<Source>,
    debug_file: String,
}

enum Phase {
    Edges { step: usize, steps: usize },
    Lookups { at: usize },
}

struct Job {
    wanted: Wanted,
    phase: Phase,
    edges: Vec<u64>,
    /// (DWARF unit << 32 | index into `edges`), sorted: by unit, then offset.
    order: Vec<u64>,
    builder: Builder,
    started: Instant,
    /// The longest step so far and what it was: how long a request may wait behind
    /// this work.
    longest: (std::time::Duration, &'static str),
}

pub struct IndexCache {
    folder: Option<PathBuf>,
    mode: IndexMode,
    max_bytes: u64,
    min_source: u64,
    queue: Vec<Wanted>,
    job: Option<Job>,
    /// Modules indexed or tried this run: (debug name, ID).
    tried: Vec<(String, DebugId)>,
    quiet: bool,
}

/// The file name of the index of `(debug_name, id)` found at `candidate`: the name kept
/// readable, the candidate's path hashed (two builds' files of one name and ID, in two
/// folders, each have their own).
fn file_name(debug_name: &str, id: &DebugId, candidate: &Path) -> String {
    let shown: String = debug_name
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = candidate.to_string_lossy();
    let h = crate::resolve::prepared::hash(path.as_bytes());
    format!("{shown}-{id}-{h:016x}{SUFFIX}")
}

impl IndexCache {
    pub fn new(mode: IndexMode, max_bytes: u64, quiet: bool) -> IndexCache {
        let folder = match mode {
            IndexMode::Off => None,
            _ => crate::remote::cache::default_root().map(|r| r.join("index")),
        };
        let min_source = std::env::var("PROFILER_SYMBOL_SERVER_INDEX_MIN_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MIN_SOURCE_BYTES);
        IndexCache {
            folder,
            mode,
            max_bytes,
            min_source,
            queue: Vec::new(),
            job: None,
            tried: Vec::new(),
            quiet,
        }
    }

    fn say(&self, line: impl FnOnce() -> String) {
        if !self.quiet {
            crate::log::elog!("{}", line());
        }
    }

    /// The folder, if it may be used: ours, not a symlink, nobody else can write it.
    fn folder(&self) -> Option<&Path> {
        let f = self.folder.as_deref()?;
        let root = f.parent()?;
        for dir in [root, f] {
            if let Ok(m) = dir.symlink_metadata()
                && (!m.is_dir()
                    || crate::remote::cache::check_root(dir).is_err()
                    || others_can_write(&m))
            {
                return None;
            }
        }
        Some(f)
    }

    /// The module `(debug_name, id)` from its index for `candidate`, if there is a
    /// usable one; `reopen` opens it from its files when needed.
    pub fn open(
        &mut self,
        debug_name: &str,
        id: &DebugId,
        candidate: &Path,
        reopen: impl FnOnce() -> Reopen,
    ) -> Option<Module> {
        let folder = self.folder()?;
        let name = file_name(debug_name, id, candidate);
        let path = folder.join(&name);
        match crate::remote::cache::lookup(folder, Path::new(&name)) {
            Ok(Some(_)) => {}
            Ok(None) => return None,
            Err(e) => {
                self.say(|| format!("{debug_name}: index not used: {e}"));
                return None;
            }
        }
        // The index is untrusted input: a panic in its reader is a rejection.
        let opened =
            std::panic::catch_unwind(|| Prepared::open(&path, debug_name, &id.to_string()))
                .unwrap_or(Err(Rejected::Damaged("the reader failed on it")));
        match opened {
            Ok(p) => {
                crate::remote::cache::touch(folder, Path::new(&name));
                Some(Module::Indexed(Box::new(Indexed::new(p, reopen()))))
            }
            Err(why) => {
                self.say(|| format!("{}: not used, {why}; it is built again", path.display()));
                None
            }
        }
    }

    /// A module just read from `candidate` (stamped as `stamp` before the read): queued
    /// for an index if it earns one.
    pub fn offer(
        &mut self,
        debug_name: &str,
        id: &DebugId,
        candidate: &Path,
        stamp: &crate::fs::FileStamp,
        module: &Rc<LoadedModule>,
    ) {
        if self.mode != IndexMode::ReadWrite
            || self.folder().is_none()
            || module.edge_steps().is_none()
            || self.tried.iter().any(|(n, i)| n == debug_name && i == id)
        {
            return;
        }
        let debug_file = module.local_debug_file().unwrap_or(candidate);
        let Some(stamp) = Source::from_stamp(candidate, stamp) else {
            return;
        };
        let mut sources = vec![stamp];
        if debug_file != candidate {
            let Some(d) = Source::of(debug_file) else {
                return;
            };
            sources.push(d);
        }
        if sources.iter().map(|s| s.len).max().unwrap_or(0) < self.min_source {
            return;
        }
        let Some(debug_file) = debug_file.to_str() else {
            return;
        };
        self.tried.push((debug_name.to_string(), id.clone()));
        self.queue.push(Wanted {
            debug_name: debug_name.to_string(),
            id: id.clone(),
            module: module.clone(),
            name: file_name(debug_name, id, candidate),
            sources,
            debug_file: debug_file.to_string(),
        });
    }

    /// Whether indexes are left to build.
    pub fn has_work(&self) -> bool {
        self.job.is_some() || !self.queue.is_empty()
    }

    /// Builds for about until `deadline` (a unit's edges or one lookup may take longer).
    pub fn step(&mut self, deadline: Instant) {
        while Instant::now() < deadline {
            let Some(mut job) = self.job.take().or_else(|| self.start()) else {
                return;
            };
            let t = Instant::now();
            let what = match job.phase {
                Phase::Edges { .. } => "edges",
                Phase::Lookups { .. } => "lookups",
            };
            let advanced = self.advance(&mut job);
            if t.elapsed() > job.longest.0 {
                job.longest = (t.elapsed(), what);
            }
            match advanced {
                Ok(true) => self.finish(job),
                Ok(false) => self.job = Some(job),
                Err(why) => self.say(|| format!("{}: no index ({why})", job.wanted.debug_name)),
            }
        }
    }

    fn start(&mut self) -> Option<Job> {
        let wanted = self.queue.pop()?;
        let steps = wanted.module.edge_steps()?;
        Some(Job {
            wanted,
            phase: Phase::Edges { step: 0, steps },
            edges: Vec::new(),
            order: Vec::new(),
            builder: Builder::default(),
            started: Instant::now(),
            longest: (std::time::Duration::ZERO, ""),
        })
    }

    /// One slice of `job`'s work; `Ok(true)` when its rows are all there.
    fn advance(&self, job: &mut Job) -> Result<bool, String> {
        let module = &job.wanted.module;
        match job.phase {
            Phase::Edges { step, steps } => {
                module
                    .edges_step(step, &mut job.edges)
                    .map_err(|e| e.to_string())?;
                if step + 1 < steps {
                    job.phase = Phase::Edges {
                        step: step + 1,
                        steps,
                    };
                    return Ok(false);
                }
                // Offset 0 too: the first run starts there. The last one ends at
                // `INDEXED_END`, past which the module's files answer.
                job.edges.push(0);
                job.edges.sort_unstable();
                job.edges.dedup();
                if job.edges.last().is_some_and(|&e| e >= INDEXED_END) {
                    return Err(Unfit::TooBig.to_string());
                }
                u32::try_from(job.edges.len()).map_err(|_| Unfit::TooBig.to_string())?;
                // (unit, index) in one u64: the same sort as the edges' (one copy of it
                // in the binary).
                let mut order: Vec<u64> = job
                    .edges
                    .iter()
                    .enumerate()
                    .map(|(i, &e)| {
                        let part = module
                            .part_of(e)
                            .map_or(u32::MAX, |p| p.min(u32::MAX as usize - 1) as u32);
                        u64::from(part) << 32 | i as u64
                    })
                    .collect();
                order.sort_unstable();
                job.order = order;
                job.phase = Phase::Lookups { at: 0 };
                Ok(false)
            }
            Phase::Lookups { at } => {
                let unit = job.order[at] >> 32;
                let mut end = at + 1;
                while end < job.order.len()
                    && end - at < EDGES_PER_LOOKUP
                    && job.order[end] >> 32 == unit
                {
                    end += 1;
                }
                // Ascending already: one unit's, in the edges' order.
                let these: Vec<u32> = job.order[at..end].iter().map(|&k| k as u32).collect();
                self.lookups(job, &these)?;
                if end == job.order.len() {
                    return Ok(true);
                }
                job.phase = Phase::Lookups { at: end };
                Ok(false)
            }
        }
    }

    /// Looks up the edges `these` (indexes into `job.edges`, ascending) and the last
    /// address before each next edge; adds the rows if both agree.
    fn lookups(&self, job: &mut Job, these: &[u32]) -> Result<(), String> {
        let edges = &job.edges;
        let mut asked = Vec::with_capacity(these.len() * 2);
        for &i in these {
            let e = edges[i as usize];
            asked.push(e);
            let next = edges.get(i as usize + 1).copied().unwrap_or(INDEXED_END);
            if next - 1 > e {
                asked.push(next - 1);
            }
        }
        asked.sort_unstable();
        asked.dedup();
        let answers = job
            .wanted
            .module
            .lookup_sorted(&asked)
            .map_err(|e| e.message)?;
        let at = |o: u64| -> Option<&Symbolized> {
            let k = asked.binary_search(&o).ok()?;
            answers[k].as_ref()
        };
        for &i in these {
            let e = edges[i as usize];
            let here = at(e);
            let next = edges.get(i as usize + 1).copied().unwrap_or(INDEXED_END);
            let same = match (here, at(next - 1)) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    b.function_offset.wrapping_sub(a.function_offset) == next - 1 - e
                        && a.function == b.function
                        && a.function_size == b.function_size
                        && a.file == b.file
                        && a.line == b.line
                        && a.inlines == b.inlines
                }
                _ => false,
            };
            if !same {
                return Err(Unfit::Disagrees { at: e }.to_string());
            }
            job.builder.add(e, here).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Writes `job`'s index: a temp file, renamed when complete; then the folder's bound.
    fn finish(&mut self, job: Job) {
        let w = job.wanted;
        // A file changed while it was read or indexed: the index would not be its own.
        if w.sources.iter().any(|s| !s.unchanged()) {
            return;
        }
        let Some(folder) = self.folder().map(Path::to_path_buf) else {
            return;
        };
        let final_path = folder.join(&w.name);
        if final_path
            .symlink_metadata()
            .is_ok_and(|m| !m.file_type().is_file())
        {
            self.say(|| {
                format!(
                    "{}: not a regular file; no index written",
                    final_path.display()
                )
            });
            return;
        }
        let meta = Meta {
            debug_name: w.debug_name.clone(),
            debug_id: w.id.to_string(),
            sources: w.sources.clone(),
            debug_file: w.debug_file.clone(),
            warnings: w
                .module
                .warnings()
                .iter()
                .map(|e| (e.kind.name().to_string(), e.message.clone()))
                .collect(),
            rows: 0,
            nodes: 0,
            funcs: 0,
            strings: 0,
        };
        let tmp_name = format!(".{}{TMP_MARK}{}", w.name, std::process::id());
        let writing = Instant::now();
        let written = (|| -> std::io::Result<u64> {
            let tmp = crate::remote::cache::prepare(&folder, Path::new(&tmp_name))?;
            let mut f = crate::remote::cache::create_new(&tmp)?;
            // Removed if the process is stopped while it is written.
            crate::signals::track(&tmp, None);
            let result = job.builder.write(meta, &mut f).and_then(|n| {
                f.sync_all()?;
                std::fs::rename(&tmp, &final_path)?;
                Ok(n)
            });
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            crate::signals::untrack(&tmp);
            result
        })();
        match written {
            Ok(n) => {
                self.say(|| {
                    format!(
                        "{}: index of {} written ({:.1} MB, {:.1} s, longest step {} ms of {}, writing {} ms)",
                        w.debug_name,
                        w.debug_file,
                        n as f64 / 1e6,
                        job.started.elapsed().as_secs_f64(),
                        job.longest.0.as_millis(),
                        job.longest.1,
                        writing.elapsed().as_millis()
                    )
                });
                self.evict(&folder);
            }
            Err(e) => self.say(|| format!("{}: index not written ({e})", w.debug_name)),
        }
    }

    /// Removes the least recently used indexes past the bound (only files that start
    /// with the format's magic: ours), and indexes a killed process left half-written.
    fn evict(&self, folder: &Path) {
        for e in std::fs::read_dir(folder).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if is_stale_tmp(&name)
                && let Ok(m) = e.path().symlink_metadata()
                && m.is_file()
                && m.modified()
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_TMP)
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let Ok(dir) = std::fs::read_dir(folder) else {
            return;
        };
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = dir
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(SUFFIX))
            .filter_map(|e| {
                let m = e.path().symlink_metadata().ok()?;
                if !m.is_file() {
                    return None;
                }
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        crate::coldsort::sort_by(&mut files, |a, b| a.0.cmp(&b.0));
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if is_ours(&path) && std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// Whether users other than the owner may write in a folder (never, where there are no
/// such permission bits).
fn others_can_write(m: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        m.mode() & 0o022 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = m;
        false
    }
}

/// Whether `name` is one of our temp files: `.<name>.psidx.tmp-<pid>`.
fn is_stale_tmp(name: &str) -> bool {
    name.starts_with('.')
        && name
            .split_once(&format!("{SUFFIX}{TMP_MARK}"))
            .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

fn is_ours(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 8];
    crate::fs::open_regular(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == MAGIC
}

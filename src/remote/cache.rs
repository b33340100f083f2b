//! Where downloaded symbol files are kept, and how those folders stay bounded without
//! touching anything this program did not write.
//!
//! Cache folders may be shared with other tools (a WinDbg `srv*C:\symbols*…` store, the
//! elfutils debuginfod cache) or be one typo away from a user's home, so:
//! - every path under a cache root is walked with `symlink_metadata`, component by
//!   component: nothing is opened, touched or created through a symlink, and a root that
//!   is a symlink or another user's folder is refused;
//! - folders we create are 0700;
//! - eviction removes only files listed in our own index (`written.jsonl` in our default
//!   root), i.e. files this program wrote, and only from the default caches; a cache the
//!   user names (`--breakpad-symbol-cache`, `--windows-symbol-cache`, `srv*CACHE*`) is
//!   only ever added to.

use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Like samply's default: 10 GB of symbol files.
pub const MAX_BYTES: u64 = 10_000_000_000;
/// Files unused this long go whatever the size (a profile's builds are long gone by then).
pub const MAX_AGE: Duration = Duration::from_secs(90 * 24 * 3600);
/// A `.part-` file this old belongs to a run that was killed.
const STALE_PART: Duration = Duration::from_secs(24 * 3600);
/// The index of files we wrote; bigger than this it is not ours or broken, and is reset.
const MAX_INDEX: u64 = 64 << 20;
const INDEX_NAME: &str = "written.jsonl";

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The platform's per-user cache folder.
pub fn user_cache_dir() -> Option<PathBuf> {
    if cfg!(windows) {
        env_path("LOCALAPPDATA")
    } else if cfg!(target_os = "macos") {
        env_path("HOME").map(|h| h.join("Library/Caches"))
    } else {
        env_path("XDG_CACHE_HOME").or_else(|| env_path("HOME").map(|h| h.join(".cache")))
    }
}

/// Our own cache root, `<user cache>/profiler-symbol-server`; `None` when the user has no
/// cache folder (no shared `/tmp` fallback: anyone could plant files there).
pub fn default_root() -> Option<PathBuf> {
    user_cache_dir().map(|c| c.join("profiler-symbol-server"))
}

/// The elfutils debuginfod client's cache, so gdb's downloads and ours are shared:
/// `$DEBUGINFOD_CACHE_PATH`, else `$XDG_CACHE_HOME/debuginfod_client`, else
/// `~/.cache/debuginfod_client`.
pub fn debuginfod_dir() -> Option<PathBuf> {
    debuginfod_dir_named().or_else(debuginfod_default_dir)
}

/// `$DEBUGINFOD_CACHE_PATH`: a folder the user names, only ever added to.
pub fn debuginfod_dir_named() -> Option<PathBuf> {
    env_path("DEBUGINFOD_CACHE_PATH")
}

fn debuginfod_default_dir() -> Option<PathBuf> {
    env_path("XDG_CACHE_HOME")
        .map(|c| c.join("debuginfod_client"))
        .or_else(|| env_path("HOME").map(|h| h.join(".cache/debuginfod_client")))
}

fn refuse(path: &Path, why: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!("{}: {why}", path.display()),
    )
}

/// Whether a folder's owner is the user running us (always true where there is no owner
/// to compare).
fn owned_by_us(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        meta.uid() == unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

fn make_dir(path: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    // Missing folders above a cache root (`~/.cache` itself) are private too.
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(path)
}

/// Checks a cache root: absent (it will be created), or a real folder of ours.
pub fn check_root(root: &Path) -> std::io::Result<()> {
    match root.symlink_metadata() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.file_type().is_symlink() => Err(refuse(
            root,
            "the cache folder is a symbolic link; name its target instead",
        )),
        Ok(m) if !m.is_dir() => Err(refuse(root, "the cache folder is not a folder")),
        Ok(m) if !owned_by_us(&m) => Err(refuse(
            root,
            "the cache folder belongs to another user; choose a folder of your own",
        )),
        Ok(_) => Ok(()),
    }
}

/// The plain components of `rel` (a path made of names from the profile, already refused
/// if it holds anything but names).
fn names(rel: &Path) -> Option<Vec<&std::ffi::OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect()
}

/// Creates the folders of `root/rel`'s parent as needed (0700), refusing to go through a
/// symlink or anything but a folder. Returns the full path of `rel`.
pub fn prepare(root: &Path, rel: &Path) -> std::io::Result<PathBuf> {
    check_root(root)?;
    if root.symlink_metadata().is_err() {
        make_dir(root)?;
        check_root(root)?;
    }
    let parts = names(rel).ok_or_else(|| refuse(rel, "not a plain relative path"))?;
    let mut dir = root.to_path_buf();
    for name in &parts[..parts.len().saturating_sub(1)] {
        dir.push(name);
        match dir.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => make_dir(&dir)?,
            Err(e) => return Err(e),
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(refuse(&dir, "in a cache folder but not a folder")),
        }
        // Re-checked: a symlink swapped in between the two calls is caught.
        if !dir.symlink_metadata()?.is_dir() {
            return Err(refuse(&dir, "in a cache folder but not a folder"));
        }
    }
    Ok(root.join(rel))
}

/// What the cache holds at `root/rel`: the regular file's metadata, `Ok(None)` when
/// absent, an error when any component is a symlink or not what it should be.
pub fn lookup(root: &Path, rel: &Path) -> std::io::Result<Option<std::fs::Metadata>> {
    if root.symlink_metadata().is_err() {
        return Ok(None);
    }
    check_root(root)?;
    let parts = names(rel).ok_or_else(|| refuse(rel, "not a plain relative path"))?;
    let mut path = root.to_path_buf();
    for (i, name) in parts.iter().enumerate() {
        path.push(name);
        let m = match path.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
            Ok(m) => m,
        };
        let last = i + 1 == parts.len();
        if m.file_type().is_symlink() {
            return Err(refuse(
                &path,
                "a symbolic link in a cache folder; not followed",
            ));
        }
        if (last && !m.is_file()) || (!last && !m.is_dir()) {
            return Err(refuse(&path, "in a cache folder but not what it should be"));
        }
        if last {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// Opens without following a final symlink (the components before were checked).
fn open_nofollow(path: &Path, opts: &mut std::fs::OpenOptions) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let f = opts.open(path)?;
    if !f.metadata()?.is_file() {
        return Err(refuse(path, "not a regular file"));
    }
    Ok(f)
}

/// Creates a new file (`O_EXCL`, 0600) that nobody else can have prepared.
pub fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    open_nofollow(path, &mut opts)
}

/// Marks a cached file as just used: eviction goes by modification time. Only a regular
/// file, never through a symlink.
pub fn touch(root: &Path, rel: &Path) {
    if !matches!(lookup(root, rel), Ok(Some(_))) {
        return;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.append(true);
    if let Ok(f) = open_nofollow(&root.join(rel), &mut opts) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// What names a download in progress: `.<file name>.pss-part-<pid>-<n>`, at the top of a
/// cache root (`curl::part_rel`).
pub const PART_MARK: &str = ".pss-part-";

/// Whether a cache file name is a download in progress (never a cache entry); earlier
/// versions wrote `.part-` and listed those in the index.
fn is_part(name: &str) -> bool {
    name.contains(".part-") || name.contains(PART_MARK)
}

/// Whether `name` is exactly what [`PART_MARK`] files are named: ours, whoever wrote it
/// (no other tool names files so), and only a file a killed run of ours can leave.
fn is_our_part(name: &str) -> bool {
    let Some((head, tail)) = name.rsplit_once(PART_MARK) else {
        return false;
    };
    let mut nums = tail.split('-');
    head.starts_with('.')
        && nums
            .next()
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && nums
            .next()
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && nums.next().is_none()
}

/// Removes `root` again if this download made it and it is still empty (`remove_dir`
/// removes nothing else): a download that stored nothing leaves no folder.
pub fn remove_if_made(root: &Path, made: bool) {
    if made {
        let _ = std::fs::remove_dir(root);
    }
}

/// Removes partial downloads that a killed run of ours left at the top of `root` (named
/// by [`PART_MARK`], regular files, not symlinks) and unchanged for a day: a running
/// download writes to its file all the time. Returns how many went.
pub fn sweep_parts(root: &Path) -> usize {
    if check_root(root).is_err() {
        return 0;
    }
    let Ok(dir) = std::fs::read_dir(root) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for e in dir.flatten() {
        let name = e.file_name();
        if !name.to_str().is_some_and(is_our_part) {
            continue;
        }
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        let age = meta
            .modified()
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        if meta.is_file() && age > STALE_PART && std::fs::remove_file(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// One file this program wrote into a cache: where, and its size when written (a file of
/// another size at that place has been replaced by someone else: not ours any more).
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    root: PathBuf,
    rel: PathBuf,
    size: u64,
}

impl Entry {
    fn to_line(&self) -> Option<String> {
        let v = serde_json::json!([self.size, self.root.to_str()?, self.rel.to_str()?]);
        Some(format!("{v}\n"))
    }

    fn from_line(line: &str) -> Option<Entry> {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        let a = v.as_array()?;
        Some(Entry {
            size: a.first()?.as_u64()?,
            root: PathBuf::from(a.get(1)?.as_str()?),
            rel: PathBuf::from(a.get(2)?.as_str()?),
        })
    }
}

/// The list of files this program wrote into the caches it may prune: kept in our own
/// default root, so that eviction never needs to guess what is ours.
#[derive(Debug, Clone)]
pub struct Index {
    path: PathBuf,
}

impl Index {
    /// The index in `root` (our default cache root).
    pub fn new(root: &Path) -> Index {
        Index {
            path: root.join(INDEX_NAME),
        }
    }

    /// Records a file written at `root/rel` (a finished download, or a partial one that
    /// a killed run may leave behind).
    pub fn record(&self, root: &Path, rel: &Path, size: u64) {
        let Some(line) = (Entry {
            root: root.to_path_buf(),
            rel: rel.to_path_buf(),
            size,
        })
        .to_line() else {
            // A path that is not UTF-8 cannot be recorded: that file is simply never evicted.
            return;
        };
        let Some(dir) = self.path.parent() else {
            return;
        };
        if prepare(dir, Path::new(INDEX_NAME)).is_err() {
            return;
        }
        let mut opts = std::fs::OpenOptions::new();
        opts.append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        // One short write per line: appends of two runs at once do not interleave.
        if let Ok(mut f) = open_nofollow(&self.path, &mut opts) {
            let _ = f.write_all(line.as_bytes());
        }
    }

    fn read(&self) -> Vec<Entry> {
        let Some(dir) = self.path.parent() else {
            return Vec::new();
        };
        match lookup(dir, Path::new(INDEX_NAME)) {
            Ok(Some(m)) if m.len() <= MAX_INDEX => {}
            _ => return Vec::new(),
        }
        let mut opts = std::fs::OpenOptions::new();
        opts.read(true);
        let Ok(text) =
            open_nofollow(&self.path, &mut opts).and_then(|mut f| std::io::read_to_string(&mut f))
        else {
            return Vec::new();
        };
        // Later lines win (a file written again).
        let mut out: Vec<Entry> = Vec::new();
        let mut seen = std::collections::HashMap::new();
        for e in text.lines().filter_map(Entry::from_line) {
            let key = e.root.join(&e.rel);
            match seen.get(&key) {
                Some(&i) => out[i] = e,
                None => {
                    seen.insert(key, out.len());
                    out.push(e);
                }
            }
        }
        out
    }

    /// Whether the file at `root/rel` is one this program wrote: listed, and still as big
    /// as when it was written.
    pub fn lists(&self, root: &Path, rel: &Path) -> bool {
        let Ok(Some(meta)) = lookup(root, rel) else {
            return false;
        };
        self.read()
            .iter()
            .any(|e| e.root == root && e.rel == rel && e.size == meta.len())
    }

    /// Replaces the index with `entries` (temporary file, then rename).
    fn write(&self, entries: &[Entry]) {
        let Some(dir) = self.path.parent() else {
            return;
        };
        let tmp = dir.join(format!(".{INDEX_NAME}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let Ok(mut f) = create_new(&tmp) else {
            return;
        };
        let text: String = entries.iter().filter_map(Entry::to_line).collect();
        if f.write_all(text.as_bytes()).is_ok() && std::fs::rename(&tmp, &self.path).is_ok() {
            return;
        }
        let _ = std::fs::remove_file(&tmp);
    }

    /// Removes stale partial downloads, files unused for `max_age`, then the least
    /// recently used files until ours hold at most `max_bytes` with `in_flight` bytes of
    /// downloads still running. Only files listed in the index, still where and as big as
    /// we left them, reached without a symlink. Returns (files, bytes) removed.
    pub fn evict(&self, max_bytes: u64, max_age: Duration, in_flight: u64) -> (usize, u64) {
        let now = SystemTime::now();
        let age = |t: SystemTime| now.duration_since(t).unwrap_or_default();
        let (mut removed, mut freed) = (0, 0);
        // (entry, size, last use, whether it is a partial download)
        let mut kept: Vec<(Entry, u64, SystemTime, bool)> = Vec::new();
        for e in self.read() {
            let Ok(Some(meta)) = lookup(&e.root, &e.rel) else {
                // Gone, or reached through a symlink: forget it, touch nothing.
                continue;
            };
            let name = e.rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let part = is_part(name);
            if !part && meta.len() != e.size {
                // Someone else wrote there since: not ours any more.
                continue;
            }
            let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            let stale = age(mtime) > if part { STALE_PART } else { max_age };
            if stale && std::fs::remove_file(e.root.join(&e.rel)).is_ok() {
                removed += 1;
                freed += meta.len();
                continue;
            }
            kept.push((e, meta.len(), mtime, part));
        }
        // Running downloads' partial files are on disk and in `in_flight`: counted once.
        let parts: u64 = kept.iter().filter(|k| k.3).map(|k| k.1).sum();
        let files: u64 = kept.iter().filter(|k| !k.3).map(|k| k.1).sum();
        let mut total = files + parts.max(in_flight);
        // Oldest first; a partial file is never the one to go (it may be running).
        crate::coldsort::sort_by_key(&mut kept, |k| k.2);
        let mut survivors = Vec::with_capacity(kept.len());
        for (e, size, _, part) in kept {
            if total > max_bytes && !part && std::fs::remove_file(e.root.join(&e.rel)).is_ok() {
                removed += 1;
                freed += size;
                total -= size;
            } else {
                survivors.push(e);
            }
        }
        self.write(&survivors);
        (removed, freed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("pss-cache-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn mk(path: &Path, size: usize, ago: Duration) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, vec![b'x'; size]).unwrap();
        let f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.set_modified(SystemTime::now() - ago).unwrap();
    }

    #[test]
    fn eviction_goes_by_age_then_least_recently_used_and_only_for_our_files() {
        let dir = temp("evict");
        let root = dir.join("root");
        let index = Index::new(&root);
        let day = Duration::from_secs(86400);
        let ours = |name: &str, size: usize, ago: Duration| {
            let rel = PathBuf::from("a.so/ID").join(name);
            mk(&root.join(&rel), size, ago);
            index.record(&root, &rel, size as u64);
            root.join(rel)
        };
        let old = ours("old.sym", 10, 200 * day);
        let lru = ours("lru.sym", 100, 3 * day);
        let recent = ours("recent.sym", 100, day);
        let part = ours(".x.sym.part-1-1", 5, 2 * day);
        let fresh_part = ours(".y.sym.part-1-2", 5, Duration::ZERO);
        // Files of other tools, even old and big, in the same folders.
        let foreign_old = root.join("a.so/ID/windbg.pdb");
        mk(&foreign_old, 1000, 400 * day);
        let foreign_part = root.join("ntdll.pdb/ID/.n.part-9-9");
        mk(&foreign_part, 10, 30 * day);
        // A file of ours that someone else has since replaced (another size).
        let replaced = ours("replaced.sym", 50, 300 * day);
        mk(&replaced, 60, 300 * day);
        let (n, bytes) = index.evict(150, MAX_AGE, 0);
        assert_eq!((n, bytes), (3, 115));
        assert!(!old.exists() && !lru.exists() && !part.exists());
        assert!(recent.exists() && fresh_part.exists());
        assert!(foreign_old.exists() && foreign_part.exists() && replaced.exists());
        // Bytes still arriving count against the bound.
        let (n, _) = index.evict(150, MAX_AGE, 100);
        assert_eq!(n, 1);
        assert!(!recent.exists() && fresh_part.exists());
        // A running download's bytes, on disk and in flight, count once.
        let kept = ours("kept.sym", 100, day);
        let running = ours(".z.sym.part-1-3", 45, Duration::ZERO);
        assert_eq!(index.evict(150, MAX_AGE, 50), (0, 0));
        assert!(kept.exists() && running.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_in_a_cache_are_never_followed() {
        let dir = temp("links");
        let outside = dir.join("outside");
        mk(
            &outside.join("ID/victim.sym"),
            10,
            Duration::from_secs(400 * 86400),
        );
        let root = dir.join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("a.so")).unwrap();
        let rel = Path::new("a.so/ID/victim.sym");
        assert!(lookup(&root, rel).is_err());
        assert!(prepare(&root, rel).is_err());
        // An index entry (planted or stale) that leads through the link removes nothing.
        let index = Index::new(&root);
        index.record(&root, rel, 10);
        assert_eq!(index.evict(0, Duration::ZERO, 0), (0, 0));
        assert!(outside.join("ID/victim.sym").exists());
        // A symlinked root is refused as a whole.
        let linked = dir.join("linked-root");
        std::os::unix::fs::symlink(&outside, &linked).unwrap();
        assert!(check_root(&linked).is_err());
        assert!(lookup(&linked, Path::new("ID/victim.sym")).is_err());
        // And a final component that is a link is not a cache file.
        std::fs::create_dir_all(root.join("b.so/ID")).unwrap();
        std::os::unix::fs::symlink(outside.join("ID/victim.sym"), root.join("b.so/ID/b.sym"))
            .unwrap();
        assert!(lookup(&root, Path::new("b.so/ID/b.sym")).is_err());
        touch(&root, Path::new("b.so/ID/b.sym"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(unix)]
    #[test]
    fn created_folders_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp("mode");
        let root = dir.join("new-root");
        let p = prepare(&root, Path::new("x.so/ID/x.sym")).unwrap();
        assert_eq!(p, root.join("x.so/ID/x.sym"));
        for d in [&root, &root.join("x.so"), &root.join("x.so/ID")] {
            let mode = d.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o700, "{}", d.display());
        }
        let f = create_new(&p).unwrap();
        assert_eq!(f.metadata().unwrap().permissions().mode() & 0o777, 0o600);
        assert!(create_new(&p).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

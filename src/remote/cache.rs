//! Where downloaded symbol files are kept, and how that folder stays bounded.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Like samply's default: 10 GB of symbol files.
pub const MAX_BYTES: u64 = 10_000_000_000;
/// Files unused this long go whatever the size (a profile's builds are long gone by then).
pub const MAX_AGE: Duration = Duration::from_secs(90 * 24 * 3600);
/// A `.part-` file this old belongs to a run that was killed.
const STALE_PART: Duration = Duration::from_secs(24 * 3600);

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

/// Our own cache root: `<user cache>/profiler-symbol-server`.
pub fn default_root() -> PathBuf {
    user_cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("profiler-symbol-server")
}

/// The elfutils debuginfod client's cache, so gdb's downloads and ours are shared:
/// `$DEBUGINFOD_CACHE_PATH`, else `$XDG_CACHE_HOME/debuginfod_client`, else
/// `~/.cache/debuginfod_client`.
pub fn debuginfod_dir() -> PathBuf {
    env_path("DEBUGINFOD_CACHE_PATH")
        .or_else(|| env_path("XDG_CACHE_HOME").map(|c| c.join("debuginfod_client")))
        .or_else(|| env_path("HOME").map(|h| h.join(".cache/debuginfod_client")))
        .unwrap_or_else(|| std::env::temp_dir().join("debuginfod_client"))
}

/// Marks a cached file as just used: eviction goes by modification time.
pub fn touch(path: &Path) {
    if let Ok(f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = f.set_modified(SystemTime::now());
    }
}

/// Whether a cache file name is a download in progress (never a cache entry).
pub fn is_part(name: &str) -> bool {
    name.contains(".part-")
}

fn walk(dir: &Path, out: &mut Vec<(PathBuf, u64, SystemTime)>, depth: u32) {
    // Our layouts are three levels deep; a deeper tree is not ours to clean.
    if depth > 4 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        if meta.is_dir() {
            walk(&e.path(), out, depth + 1);
        } else if meta.is_file() {
            let mtime = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            out.push((e.path(), meta.len(), mtime));
        }
    }
}

/// Removes stale partial downloads, files unused for `max_age`, then the least recently
/// used files until the folder holds at most `max_bytes`. Returns (files, bytes) removed.
pub fn evict(dir: &Path, max_bytes: u64, max_age: Duration) -> (usize, u64) {
    let mut files = Vec::new();
    walk(dir, &mut files, 0);
    let now = SystemTime::now();
    let age = |t: SystemTime| now.duration_since(t).unwrap_or_default();
    let (mut removed, mut freed) = (0, 0);
    let mut kept = Vec::with_capacity(files.len());
    for (path, size, mtime) in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let stale = if is_part(name) {
            age(mtime) > STALE_PART
        } else {
            age(mtime) > max_age
        };
        if stale && std::fs::remove_file(&path).is_ok() {
            removed += 1;
            freed += size;
        } else if !is_part(name) {
            kept.push((path, size, mtime));
        }
    }
    let mut total: u64 = kept.iter().map(|f| f.1).sum();
    kept.sort_by_key(|f| f.2);
    for (path, size, _) in kept {
        if total <= max_bytes {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            removed += 1;
            freed += size;
            total -= size;
        }
    }
    (removed, freed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eviction_goes_by_age_then_least_recently_used() {
        let dir = std::env::temp_dir().join(format!("pss-evict-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let sub = dir.join("a.so/ID");
        std::fs::create_dir_all(&sub).unwrap();
        let day = Duration::from_secs(86400);
        let now = SystemTime::now();
        let mk = |name: &str, size: usize, ago: Duration| {
            let p = sub.join(name);
            std::fs::write(&p, vec![b'x'; size]).unwrap();
            let f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
            f.set_modified(now - ago).unwrap();
            p
        };
        let old = mk("old.sym", 10, 200 * day);
        let lru = mk("lru.sym", 100, 3 * day);
        let recent = mk("recent.sym", 100, day);
        let part = mk(".x.sym.part-1-1", 5, 2 * day);
        let fresh_part = mk(".y.sym.part-1-2", 5, Duration::ZERO);
        let (n, bytes) = evict(&dir, 150, MAX_AGE);
        assert_eq!((n, bytes), (3, 115));
        assert!(!old.exists() && !lru.exists() && !part.exists());
        assert!(recent.exists() && fresh_part.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

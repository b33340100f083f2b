//! Source files for `/source/v1`: where a file named by the debug info lives on this
//! machine, and reading it within limits.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest source file served.
pub const MAX_SOURCE: u64 = 64 << 20;

/// The local path of `file` (as the debug info names it), resolved against the unit's
/// compilation directory, then the debug file's folder. The file must not lead out of
/// the folder it was resolved in (a symlink to elsewhere is refused).
pub fn locate(file: &str, comp_dir: Option<&str>, debug_dir: &Path) -> Result<PathBuf, String> {
    let mut tries: Vec<(PathBuf, PathBuf)> = Vec::new(); // (candidate, folder it must stay in)
    let comp = comp_dir.map(|c| {
        let c = Path::new(c);
        if c.is_absolute() {
            c.to_path_buf()
        } else {
            debug_dir.join(c)
        }
    });
    let f = Path::new(file);
    if f.is_absolute() {
        let root = match &comp {
            Some(c) if f.starts_with(c) => c.clone(),
            _ => f.parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        tries.push((f.to_path_buf(), root));
    } else {
        if let Some(c) = &comp {
            tries.push((c.join(f), c.clone()));
        }
        tries.push((debug_dir.join(f), debug_dir.to_path_buf()));
    }
    let mut last = format!("{file}: not found on this machine");
    for (candidate, root) in tries {
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        let Ok(root) = root.canonicalize() else {
            continue;
        };
        if !real.starts_with(&root) {
            last = format!(
                "{file}: {} leads to {}, outside {}; not served",
                candidate.display(),
                real.display(),
                root.display()
            );
            continue;
        }
        return Ok(real);
    }
    Err(last)
}

/// The text of `path` (lossy UTF-8), if it is a regular file within the size limit.
pub fn read(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    if meta.len() > MAX_SOURCE {
        return Err(format!(
            "{}: {} bytes, more than the {} MiB served",
            path.display(),
            meta.len(),
            MAX_SOURCE >> 20
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    crate::resolve::bytes::open_regular(path)
        .and_then(|f| f.take(MAX_SOURCE + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

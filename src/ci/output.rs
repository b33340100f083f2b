//! The outputs of `symbolicate`, all or nothing: each written whole to an exclusively
//! created temporary file in its target's folder, renamed into place only once every
//! output is complete, removed on failure (also at Ctrl-C).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::CiError;

/// One output of the run: written whole to a temporary file in its target's folder,
/// renamed into place only once every output of the run is complete (all or nothing).
pub(super) struct Staged {
    target: PathBuf,
    temp: PathBuf,
}

impl Drop for Staged {
    /// Not committed (an error, or another output failed): the temporary goes.
    fn drop(&mut self) {
        crate::signals::untrack(&self.temp);
        let _ = std::fs::remove_file(&self.temp);
    }
}

/// The folder `target` goes in (`.` for a bare file name).
fn folder_of(target: &Path) -> &Path {
    target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Checks an output can be placed before any work is done: its folder exists, and the
/// target is not a device, FIFO or folder. `what` names it ("the profile", "the sidecar").
pub(super) fn check_target(target: &Path, what: &str) -> Result<(), CiError> {
    let cannot = |why: String| CiError(format!("cannot write {what} {}: {why}", target.display()));
    if target.file_name().is_none() {
        return Err(cannot("not a file name".into()));
    }
    let dir = folder_of(target);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(cannot(format!("{} is not a folder", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(cannot(format!(
                "the output folder {} does not exist",
                dir.display()
            )));
        }
        Err(e) => return Err(cannot(format!("the output folder {}: {e}", dir.display()))),
    }
    // Never replace a device, FIFO or folder by a regular file.
    if let Ok(meta) = std::fs::metadata(target)
        && !meta.is_file()
    {
        return Err(cannot(
            "it exists and is not a regular file; refusing to replace it".into(),
        ));
    }
    Ok(())
}

/// Why an output's content could not be written (an input that fails to read or parse, a
/// write that fails): shown after the output's name.
pub(super) type WriteError = Box<dyn std::error::Error>;

/// What writes an output's content, for [`stage`].
pub(super) type WriteContent<'a> = Box<dyn FnOnce(&mut dyn Write) -> Result<(), WriteError> + 'a>;

/// Writes `target`'s content to a new temporary file beside it. Errors name the target
/// and its folder, never the temporary (a hidden name the user has never seen). `write`
/// is boxed: a generic one made a copy of this function per caller (14 KB each).
pub(super) fn stage(target: &Path, what: &str, write: WriteContent<'_>) -> Result<Staged, CiError> {
    check_target(target, what)?;
    let cannot = |why: String| CiError(format!("cannot write {what} {}: {why}", target.display()));
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let dir = folder_of(target);
    // An unpredictable name, created exclusively: nobody can have it point elsewhere.
    let random = {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    };
    let temp = dir.join(format!(".{name}.{random:016x}.tmp"));
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| {
            cannot(if e.kind() == std::io::ErrorKind::PermissionDenied {
                format!("the output folder {} is not writable ({e})", dir.display())
            } else {
                format!(
                    "cannot create a file in the output folder {} ({e})",
                    dir.display()
                )
            })
        })?;
    crate::signals::track(&temp, None);
    // From here on, dropping `staged` removes the temporary.
    let staged = Staged {
        target: target.to_path_buf(),
        temp,
    };
    let mut out = BufWriter::with_capacity(1 << 16, file);
    write(&mut out).map_err(|e| cannot(e.to_string()))?;
    let file = out
        .into_inner()
        .map_err(|e| cannot(e.error().to_string()))?;
    file.sync_all().map_err(|e| cannot(e.to_string()))?;
    Ok(staged)
}

/// Renames every staged output into place. Only a rename can fail here (the temporaries
/// are in their targets' folders); the outputs already renamed are then removed, so that
/// no run leaves one output without the other.
pub(super) fn commit(staged: Vec<Staged>) -> Result<(), CiError> {
    let mut done: Vec<PathBuf> = Vec::new();
    for s in &staged {
        if let Err(e) = std::fs::rename(&s.temp, &s.target) {
            for d in &done {
                let _ = std::fs::remove_file(d);
            }
            return Err(CiError(format!(
                "cannot write {}: moving the finished file into place failed ({e})",
                s.target.display()
            )));
        }
        crate::signals::untrack(&s.temp);
        done.push(s.target.clone());
    }
    Ok(())
}

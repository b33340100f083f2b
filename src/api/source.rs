//! `/source/v1`: a source file named by the debug info at an address, where it lives on
//! this machine, read within limits.

use std::fmt;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use super::{Api, ApiError, offset_field, str_field};
use crate::resolve::LoadError;
use crate::shared::debugid::DebugId;

/// Why a source file is not served: the message of the 200 `{"error": …}` answer (the
/// front-end shows a failure's message only on a 200).
#[derive(Debug)]
pub enum SourceError {
    /// No debug file for the module (each candidate's reason).
    NoDebugFile {
        module: String,
        why: Vec<String>,
    },
    /// Symbols from a Breakpad file only: no local debug file names paths.
    OnlyBreakpad {
        module: String,
    },
    /// A downloaded debug file: its names were chosen by the server.
    OnlyDownload {
        module: String,
        file: PathBuf,
    },
    /// A debug file the profile named by a relative path (it came with the profile).
    BesideProfile {
        module: String,
        file: PathBuf,
    },
    /// Looking up the address failed.
    Lookup(LoadError),
    NoFunction {
        offset: u64,
        module: String,
    },
    /// The debug info at the address does not name the file asked for.
    NotNamed {
        offset: u64,
        module: String,
        file: String,
    },
    /// The file is not on this machine, or may not be served (the message says why).
    NotServed(String),
    /// The file was found but cannot be read within the limits.
    Read {
        path: PathBuf,
        problem: String,
    },
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::NoDebugFile { module, why } => {
                write!(f, "no debug file for {module}: {}", why.join("; "))
            }
            SourceError::OnlyBreakpad { module } => write!(
                f,
                "{module} was found only through a Breakpad symbol file; sources are served only from local debug files"
            ),
            SourceError::OnlyDownload { module, file } => write!(
                f,
                "{module} was found only through a download ({}); sources are served only from local debug files",
                file.display()
            ),
            SourceError::BesideProfile { module, file } => write!(
                f,
                "{module} came with the profile ({}, beside it or named relative to it); the file names in its debug info are the profile's, so no file is served for them: pass --symbol-dir {} to vouch for that folder",
                file.display(),
                file.parent().unwrap_or(Path::new(".")).display()
            ),
            SourceError::Lookup(e) => write!(f, "{} ({})", e.message, e.kind),
            SourceError::NoFunction { offset, module } => {
                write!(f, "no function at {offset:#x} in {module}")
            }
            SourceError::NotNamed {
                offset,
                module,
                file,
            } => write!(
                f,
                "the debug info at {offset:#x} in {module} does not name {file}"
            ),
            SourceError::NotServed(why) => f.write_str(why),
            SourceError::Read { path, problem } => write!(f, "{}: {problem}", path.display()),
        }
    }
}

/// Largest source file served.
pub const MAX_SOURCE: u64 = 64 << 20;

/// Folders of kernel and runtime pseudo-files (`/proc/self/environ` is "regular" and
/// holds the server's environment): never served, whatever a debug file names.
const PSEUDO_ROOTS: [&str; 4] = ["/proc", "/sys", "/dev", "/run"];

/// `path` with `.` and `..` taken away as written (no symlink followed): what a
/// `/tmp/x/../../proc/…` really names.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn is_pseudo(path: &Path) -> bool {
    PSEUDO_ROOTS.iter().any(|r| path.starts_with(r))
}

/// A Windows device rather than a file: `\\.\…` and `\\?\…` paths (`canonical`: a
/// verbatim drive or UNC path, which canonicalizing gives for ordinary files, is fine),
/// or a component with a reserved device name (`CON`, `NUL`, `COM1`, `con.txt`…).
pub fn is_windows_device(path: &str, canonical: bool) -> bool {
    let p = path.replace('/', "\\");
    if let Some(rest) = p.strip_prefix("\\\\?\\") {
        let drive =
            rest.as_bytes().get(1) == Some(&b':') && rest.as_bytes()[0].is_ascii_alphabetic();
        let unc = rest
            .get(..4)
            .is_some_and(|u| u.eq_ignore_ascii_case("UNC\\"));
        // Wine canonicalizes a path of its Unix side to `\\?\/work/…`.
        let unix_side = rest.starts_with('\\');
        if !(canonical && (drive || unc || unix_side)) {
            return true;
        }
    } else if p.starts_with("\\\\.\\") {
        return true;
    }
    p.split('\\').any(|c| {
        let stem = c
            .split('.')
            .next()
            .unwrap_or("")
            .trim_end_matches([' ', ':']);
        let upper = stem.to_uppercase();
        matches!(
            upper.as_str(),
            "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$"
        ) || ((upper.starts_with("COM") || upper.starts_with("LPT"))
            && upper.chars().count() == 4
            && upper
                .chars()
                .nth(3)
                .is_some_and(|d| matches!(d, '1'..='9' | '¹' | '²' | '³')))
    })
}

/// Why `path` is no file to serve (a pseudo-file, a device), if it is not. `canonical`:
/// the path comes from canonicalizing (a verbatim `\\?\C:\…` path is then a file's).
fn not_servable(path: &Path, canonical: bool) -> Option<&'static str> {
    // Under wine, a Unix path canonicalizes to `\\?\/proc/…`: judged as the Unix path.
    let text = path.to_string_lossy();
    let unix = text
        .strip_prefix("\\\\?\\")
        .filter(|r| r.starts_with('/'))
        .map(Path::new);
    if is_pseudo(&lexical(path)) || unix.is_some_and(|u| is_pseudo(&lexical(u))) {
        return Some("a system pseudo-file (under /proc, /sys, /dev or /run)");
    }
    if cfg!(windows) && is_windows_device(&text, canonical) {
        return Some("a Windows device path");
    }
    None
}

/// The local path of `file` (as the debug info names it), resolved against the unit's
/// compilation directory, then the debug file's folder. The file must not lead out of
/// the folder it was resolved in (a symlink to elsewhere is refused), must be a regular
/// file, and neither it nor where it leads may be a pseudo-file or a device.
pub fn locate(
    file: &str,
    comp_dir: Option<&str>,
    debug_dir: &Path,
) -> Result<PathBuf, SourceError> {
    // Debug info (and the request) name these: a UNC or /net path is not even looked at.
    for named in std::iter::once(file).chain(comp_dir) {
        if let Some(why) = crate::shared::pathname::refused_from_outside(named) {
            return Err(SourceError::NotServed(format!(
                "{file}: {named} is {why}; not served"
            )));
        }
    }
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
        if let Some(why) = not_servable(&candidate, false) {
            last = format!("{file}: {} is {why}; not served", candidate.display());
            continue;
        }
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        if let Some(why) = not_servable(&real, true) {
            last = format!(
                "{file}: {} leads to {}, {why}; not served",
                candidate.display(),
                real.display()
            );
            continue;
        }
        if !std::fs::metadata(&real).is_ok_and(|m| m.is_file()) {
            last = format!(
                "{file}: {} is not a regular file; not served",
                real.display()
            );
            continue;
        }
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
    Err(SourceError::NotServed(last))
}

/// The text of `path` (lossy UTF-8), if it is a regular file within the size limit.
pub fn read(path: &Path) -> Result<String, SourceError> {
    let fail = |problem: String| SourceError::Read {
        path: path.to_path_buf(),
        problem,
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
    if !meta.is_file() {
        return Err(fail("not a regular file".into()));
    }
    if meta.len() > MAX_SOURCE {
        return Err(fail(format!(
            "{} bytes, more than the {} MiB served",
            meta.len(),
            MAX_SOURCE >> 20
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    crate::fs::open_regular(path)
        .and_then(|f| f.take(MAX_SOURCE + 1).read_to_end(&mut bytes))
        .map_err(|e| fail(e.to_string()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A `/source/v1` request, checked.
pub(super) struct SourceRequest {
    pub(super) debug_name: String,
    pub(super) debug_id: DebugId,
    module_offset: u64,
    file: String,
}

impl SourceRequest {
    pub(super) fn parse(v: &Value) -> Result<SourceRequest, ApiError> {
        if !v.is_object() {
            return Err(ApiError::bad_request("the request must be a JSON object"));
        }
        Ok(SourceRequest {
            debug_name: str_field(v, "debugName")?,
            debug_id: DebugId::from(str_field(v, "debugId")?),
            module_offset: offset_field(v, "moduleOffset")?,
            file: str_field(v, "file")?,
        })
    }
}

impl Api {
    /// `/source/v1`: the file, if the debug info at that address names it and the debug
    /// file is local.
    pub(super) fn source(&mut self, req: &SourceRequest) -> Result<Value, SourceError> {
        let lib = self.lib(&req.debug_name, &req.debug_id).known();
        let module = self
            .store
            .module(&req.debug_name, &req.debug_id, lib.as_ref())
            .now(&req.debug_name, &req.debug_id)
            .map_err(|errors| SourceError::NoDebugFile {
                module: format!("{}/{}", req.debug_name, req.debug_id),
                why: errors.into_iter().map(|e| e.message).collect(),
            })?;
        let debug_file = module
            .local_debug_file()
            .ok_or_else(|| SourceError::OnlyBreakpad {
                module: req.debug_name.clone(),
            })?;
        // A file that came with the profile (a relative lib path): its names were chosen
        // by whoever made the profile (`#line 1 "/home/user/.ssh/id_rsa"`).
        if module.came_with_profile() {
            return Err(SourceError::BesideProfile {
                module: req.debug_name.clone(),
                file: debug_file.to_path_buf(),
            });
        }
        // A downloaded file's names were chosen by the server: answered as for Breakpad.
        if module.downloaded() || self.store.is_download_cache(debug_file) {
            return Err(SourceError::OnlyDownload {
                module: req.debug_name.clone(),
                file: debug_file.to_path_buf(),
            });
        }
        let sym = module
            .lookup_sorted(&[req.module_offset])
            .map_err(SourceError::Lookup)?
            .pop()
            .flatten()
            .ok_or_else(|| SourceError::NoFunction {
                offset: req.module_offset,
                module: req.debug_name.clone(),
            })?;
        let named = sym
            .file
            .iter()
            .chain(sym.inlines.iter().filter_map(|i| i.file.as_ref()));
        if !named.into_iter().any(|f| **f == *req.file) {
            return Err(SourceError::NotNamed {
                offset: req.module_offset,
                module: req.debug_name.clone(),
                file: req.file.clone(),
            });
        }
        let dir = debug_file.parent().unwrap_or(std::path::Path::new("."));
        let path = crate::api::source::locate(
            &req.file,
            module.comp_dir(req.module_offset).as_deref(),
            dir,
        )?;
        let source = crate::api::source::read(&path)?;
        Ok(json!({
            "symbolsLastModified": null,
            "sourceLastModified": null,
            "file": req.file,
            "source": source,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_files_and_devices_are_recognised() {
        for p in [
            "/proc/self/environ",
            "/tmp/x/../../proc/self/environ",
            "/sys/x",
            "/dev/zero",
            "/run/secrets/a",
        ] {
            assert!(is_pseudo(&lexical(Path::new(p))), "{p}");
        }
        for p in ["/procs/a.c", "/home/dev/a.c", "/tmp/proc/a.c"] {
            assert!(!is_pseudo(&lexical(Path::new(p))), "{p}");
        }
        for p in [
            r"\\.\PhysicalDrive0",
            r"\\?\GLOBALROOT\Device\X",
            "//./pipe/x",
            r"C:\src\CON",
            r"C:\src\nul.txt",
            r"C:\src\com1.c",
            "aux",
            r"C:\x\LPT9.h",
        ] {
            assert!(is_windows_device(p, false), "{p}");
        }
        assert!(is_windows_device(r"\\?\C:\src\a.c", false));
        for p in [
            r"\\?\C:\src\a.c",
            r"\\?\UNC\server\share\a.c",
            r"C:\src\console.c",
            r"C:\com10.c",
            "aux_x.c",
        ] {
            assert!(!is_windows_device(p, true), "{p}");
        }
    }
}

//! dwz supplementary files (`.gnu_debugaltlink`, Fedora/RHEL/openSUSE debug packages):
//! DIEs and strings shared by several debug files live in one file they all refer to
//! with `DW_FORM_GNU_ref_alt`/`DW_FORM_GNU_strp_alt`. The store says where it may be;
//! its build ID must be the one the link records.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use object::Object;

use crate::resolve::bytes::FileBytes;
use crate::resolve::types::{Companion, LoadContext, LoadError, LoadErrorKind};
use crate::shared::debugid;

/// The supplementary file `debug` (read from `debug_path`) links to, if it links to one.
/// A missing or mismatched one is a warning (and said on stderr): lines and the names
/// the file has itself still work without it.
pub fn find(
    debug: &object::File<'_>,
    debug_path: &Path,
    ctx: &LoadContext<'_>,
    warnings: &mut Vec<LoadError>,
) -> Option<(PathBuf, Rc<FileBytes>)> {
    let (name, build_id) = debug.gnu_debugaltlink().ok().flatten()?;
    let name = String::from_utf8_lossy(name).into_owned();
    let hex = debugid::hex_lower(build_id);
    let companion = Companion::Supplementary {
        path: &name,
        build_id: &hex,
    };
    let mut tried = Vec::new();
    for path in (ctx.companions)(debug_path, companion) {
        if tried.contains(&path) {
            continue;
        }
        let Ok(data) = FileBytes::open(&path) else {
            tried.push(path);
            continue;
        };
        let same = object::File::parse(&*data)
            .ok()
            .and_then(|f| f.build_id().ok().flatten().map(|b| b == build_id))
            .unwrap_or(false);
        if same {
            if ctx.verbose {
                crate::log::elog!("  using dwz supplementary file {}", path.display());
            }
            return Some((path, Rc::new(data)));
        }
        if ctx.verbose {
            crate::log::elog!(
                "  {}: build ID differs from the dwz link's, skipped",
                path.display()
            );
        }
        warnings.push(LoadError::new(
            LoadErrorKind::UnmatchedDebugId,
            &path,
            format!(
                "its build ID is not {hex}, which the dwz link of {} names",
                debug_path.display()
            ),
        ));
        tried.push(path);
    }
    crate::log::elog!(
        "{}: dwz supplementary file {name} (build ID {hex}) not found; names it holds are missing",
        debug_path.display()
    );
    warnings.push(LoadError::new(
        LoadErrorKind::MissingSupplementaryFile,
        debug_path,
        format!("dwz supplementary file {name} (build ID {hex}) not found"),
    ));
    None
}

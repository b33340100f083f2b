//! Small helpers the symbol store uses to bring in remote sources.

use std::path::Path;

use crate::profile::libs::Lib;
use crate::resolve::Module;

/// A module read from a local binary that has no debug information of its own or found
/// beside it (stripped ELF or Mach-O, a PE without its PDB): its names are `fun_…`,
/// exports and PLT entries, without files or lines, so better sources are worth asking.
pub fn lacks_debug_info(module: &Module) -> bool {
    matches!(module, Module::Native(m)
        if m.dwarf.is_none() && m.debug_map.as_ref().is_none_or(|d| !d.has_objects()))
}

/// A lib's path made relative (for `--simpleperf-binary-cache DIR/<lib path>`), unless
/// it could lead out of the folder.
pub fn device_path(lib: &Lib) -> Option<&Path> {
    let rel = lib.path.as_deref()?.trim_start_matches('/');
    // Each component a plain name: on Windows `C:` or `NUL` would lead elsewhere.
    let ok = !rel.is_empty()
        && rel
            .split('/')
            .filter(|c| !c.is_empty())
            .all(crate::pathname::is_plain);
    ok.then(|| Path::new(rel))
}

//! Small helpers the symbol store uses to bring in remote sources.

use std::path::Path;

use super::Remote;
use crate::profile::libs::Lib;
use crate::resolve::Module;

/// An ELF module found locally without DWARF, while debuginfod is configured.
pub fn wants_debuginfod(remote: Option<&Remote>, module: &Module) -> bool {
    let Module::Native(m) = module else {
        return false;
    };
    if m.dwarf.is_some() || !remote.is_some_and(Remote::has_debuginfod) {
        return false;
    }
    let mut magic = [0u8; 4];
    crate::resolve::bytes::open_regular(&m.debug_file)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok()
        && &magic == b"\x7fELF"
}

/// A lib's path made relative (for `--simpleperf-binary-cache DIR/<lib path>`), unless
/// it could lead out of the folder.
pub fn device_path(lib: &Lib) -> Option<&Path> {
    let rel = lib.path.as_deref()?.trim_start_matches('/');
    let ok = !rel.is_empty() && !rel.contains('\\') && !rel.split('/').any(|c| c == "..");
    ok.then(|| Path::new(rel))
}

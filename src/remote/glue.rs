//! Small helpers the symbol store uses to bring in remote sources.

use std::path::Path;

use super::Remote;
use crate::profile::libs::Lib;
use crate::resolve::Module;
use crate::store::SymbolStore;

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

/// Fetches what these modules need from the remote sources, all downloads at once, and
/// returns when none is left (`symbolicate`: a CI job with a hundred modules on Tecken
/// should not fetch them one after the other). The store's `blocking` mode is restored.
pub fn fetch_all(store: &mut SymbolStore, modules: &[(&str, &str, Option<&Lib>)]) {
    let Some(remote) = store.remote_mut() else {
        return;
    };
    let blocking = std::mem::replace(&mut remote.blocking, false);
    loop {
        store.take_pending();
        for &(name, id, lib) in modules {
            let _ = store.module(name, id, lib);
        }
        if !store.take_pending() {
            break;
        }
        if let Some(r) = store.remote_mut() {
            r.wait_any();
        }
    }
    if let Some(r) = store.remote_mut() {
        r.blocking = blocking;
    }
}

/// A lib's path made relative (for `--simpleperf-binary-cache DIR/<lib path>`), unless
/// it could lead out of the folder.
pub fn device_path(lib: &Lib) -> Option<&Path> {
    let rel = lib.path.as_deref()?.trim_start_matches('/');
    let ok = !rel.is_empty() && !rel.contains('\\') && !rel.split('/').any(|c| c == "..");
    ok.then(|| Path::new(rel))
}

//! The module offsets a profile's own frames name, by module: what the server resolves in
//! its idle time, before the front-end asks (`api::idle`).

use std::collections::BTreeMap;

use super::ProcessInfo;
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;

/// One module's share of the profile's frames.
pub struct WantedModule {
    pub lib: Lib,
    /// Module offsets, ascending, each once.
    pub offsets: Vec<u64>,
}

/// Every module the profile's frames fall in, with their offsets: raw addresses placed in
/// their process's libs (`start..end`, module offset = address - start + offset), a
/// processed profile's frames by their lib. Modules with the most distinct addresses
/// first: the main library (libxul) before the system libraries the samples pass through.
pub fn wanted_modules(processes: &[ProcessInfo]) -> Vec<WantedModule> {
    let mut by_module: BTreeMap<(String, DebugId), WantedModule> = BTreeMap::new();
    let mut add = |lib: &Lib, offset: u64| {
        by_module
            .entry((lib.debug_name.clone(), lib.breakpad_id.clone()))
            .or_insert_with(|| WantedModule {
                lib: lib.clone(),
                offsets: Vec::new(),
            })
            .offsets
            .push(offset);
    };
    for p in processes {
        if p.processed {
            for &(index, offset) in &p.lib_frames {
                if let Some(lib) = p.lib_at(index) {
                    add(lib, offset);
                }
            }
            continue;
        }
        // The libs by start, for a binary search per address (a profile has thousands of
        // libs and hundreds of thousands of addresses).
        let mut ranges: Vec<(u64, u64, &Lib)> = p
            .libs
            .iter()
            .filter_map(|l| Some((l.start?, l.end?, l)))
            .filter(|(s, e, _)| s < e)
            .collect();
        crate::coldsort::sort_by_key(&mut ranges, |r| r.0);
        for &addr in &p.addresses {
            let i = ranges.partition_point(|r| r.0 <= addr);
            let Some(&(start, end, lib)) = i.checked_sub(1).map(|i| &ranges[i]) else {
                continue;
            };
            if addr < end {
                add(lib, (addr - start).wrapping_add(lib.offset));
            }
        }
    }
    let mut out: Vec<WantedModule> = by_module.into_values().collect();
    for m in &mut out {
        m.offsets.sort_unstable();
        m.offsets.dedup();
    }
    crate::coldsort::sort_by_key(&mut out, |m| std::cmp::Reverse(m.offsets.len()));
    out
}

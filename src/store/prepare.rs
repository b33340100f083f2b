//! A module's local files opened ahead, in slices: idle-time work (`api/idle.rs`) calls
//! [`SymbolStore::prepare`] before [`SymbolStore::module`], so that the first load of a
//! big file (over 100 ms at libxul's size) goes in steps of a few milliseconds between
//! requests instead of holding the loop ([`crate::resolve::pace`]). What is opened waits
//! here until `module` tries the same file, which takes it as if it had opened it then:
//! the search order, the cache and its bounds are `module`'s alone.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::SymbolStore;
use super::paths::{self, Candidate, Step};
use crate::resolve::open::Opening;
use crate::resolve::{Companion, LoadError, Module};
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;

/// The files of one module being opened ahead.
pub(super) struct Preparing {
    debug_name: String,
    id: DebugId,
    /// Local files of the search order not opened yet, in order.
    left: VecDeque<PathBuf>,
    /// The one being opened.
    opening: Option<(PathBuf, Opening)>,
    /// Files opened, with what opening them gave: taken by [`SymbolStore::module`].
    opened: Vec<(PathBuf, Result<Module, LoadError>)>,
}

impl Preparing {
    /// Whether everything opened was taken by [`SymbolStore::module`] (for the tests).
    #[cfg(test)]
    pub(super) fn is_taken(&self) -> bool {
        self.opening.is_none() && self.opened.is_empty()
    }
}

impl SymbolStore {
    /// Opens the module's local files, in the search order, until one holds debug info or
    /// none is left, for as long as `deadline` allows. True when [`SymbolStore::module`]
    /// will not have a long parse to do (its local files are opened, or it needs none:
    /// cached, failed before, or found elsewhere than in a local file); false when time
    /// ran out first: call again in the next slice.
    pub fn prepare(
        &mut self,
        debug_name: &str,
        id: &DebugId,
        lib: Option<&Lib>,
        deadline: Instant,
    ) -> bool {
        let same = |n: &str, i: &DebugId| n == debug_name && i == id;
        if !id.is_valid()
            || self
                .cache
                .iter()
                .any(|e| same(&e.debug_name, &e.breakpad_id))
            || self.poisoned.iter().any(|(n, i, _)| same(n, i))
        {
            return true;
        }
        if !self
            .preparing
            .as_ref()
            .is_some_and(|p| same(&p.debug_name, &p.id))
        {
            // The files `module` tries first; it stops at anything else (a zip entry,
            // the sidecar, a download), and so does this.
            let left = self
                .search_order(debug_name, id, lib)
                .into_iter()
                .map_while(|s| match s {
                    Step::Local(Candidate::File(p)) => Some(p),
                    _ => None,
                })
                .collect();
            self.preparing = Some(Preparing {
                debug_name: debug_name.to_string(),
                id: id.clone(),
                left,
                opening: None,
                opened: Vec::new(),
            });
        }
        let (dirs, stores, verbose) = (
            self.opts.symbol_dirs.clone(),
            self.symstores.clone(),
            self.opts.verbose,
        );
        let Some(p) = self.preparing.as_mut() else {
            return true;
        };
        loop {
            if let Some((path, opening)) = &mut p.opening {
                let Some(result) = opening.step(deadline) else {
                    return false;
                };
                let found = result.as_ref().is_ok_and(|m| !m.lacks_debug_info());
                p.opened.push((path.clone(), result));
                p.opening = None;
                if found {
                    return true;
                }
            }
            // Started even when time is up: its first step goes to its first pause (a
            // missing file fails at once), so that every call gets somewhere.
            let Some(next) = p.left.pop_front() else {
                return true;
            };
            let (dirs, stores) = (dirs.clone(), stores.clone());
            let companions = Box::new(move |binary: &Path, c: Companion<'_>| {
                paths::companions(binary, c, &dirs, &stores)
            });
            let opening = Opening::new(id.clone(), next.clone(), companions, verbose);
            p.opening = Some((next, opening));
        }
    }

    /// What opening `path` ahead gave, if it was opened (or is being opened: the rest of
    /// the load is done now) for module `id`.
    pub(super) fn take_prepared(
        &mut self,
        path: &Path,
        id: &DebugId,
    ) -> Option<Result<Module, LoadError>> {
        let p = self.preparing.as_mut().filter(|p| p.id == *id)?;
        if let Some(i) = p.opened.iter().position(|(q, _)| q == path) {
            return Some(p.opened.swap_remove(i).1);
        }
        let (_, opening) = p.opening.take_if(|(q, _)| q == path)?;
        Some(opening.finish())
    }
}

//! The store's remote sources: only the store asks them, and the modes and the API see
//! downloads through these methods (start, poll, wait, stop), never the fetchers.

use crate::remote::{Lookup, Remote};
use crate::resolve::{LoadError, Module};
use crate::shared::debugid::DebugId;
use crate::shared::library::Lib;

use super::{ModuleState, SymbolStore};

impl SymbolStore {
    /// Fetches what these modules need from the remote sources, all downloads at once, and
    /// returns when none is left (`symbolicate`: a CI job with a hundred modules on Tecken
    /// should not fetch them one after the other).
    pub fn fetch_all(&mut self, modules: &[(&str, &DebugId, Option<&Lib>)]) {
        if self.remote.is_none() {
            return;
        }
        loop {
            let mut pending = false;
            for &(name, id, lib) in modules {
                pending |= matches!(self.module(name, id, lib), ModuleState::Pending(_));
            }
            if !pending {
                break;
            }
            self.wait_download();
        }
    }

    /// Sets up the remote sources its options name (none when they name no server and
    /// `debuginfod_urls` is `None`): only the store asks them.
    pub fn add_remote_sources(&mut self, debuginfod_urls: Option<&str>) {
        self.remote = Remote::new(&self.opts, debuginfod_urls);
    }

    /// Whether there are remote sources, i.e. whether an answer may wait on a download.
    pub fn has_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// Reaps ended downloads and starts queued ones; [`Self::downloads_finished`] after.
    pub fn poll_downloads(&mut self) -> u64 {
        if let Some(r) = self.remote.as_mut() {
            r.poll();
        }
        self.downloads_finished()
    }

    /// Blocks until a download ends (returns at once without remote sources).
    pub fn wait_download(&mut self) {
        if let Some(r) = self.remote.as_mut() {
            r.wait_any();
        }
    }

    /// Stops downloads and removes their partial files.
    pub fn shutdown_downloads(&mut self) {
        if let Some(r) = self.remote.as_mut() {
            r.shutdown();
        }
    }

    /// How many downloads have ended so far (0 without remote sources): work that waits
    /// on a download can move only when this changes.
    pub fn downloads_finished(&self) -> u64 {
        self.remote.as_ref().map_or(0, |r| r.finished)
    }

    /// Step 7 of the search order: the remote sources' cached files, each opened and
    /// checked as a local candidate is; the module and the server it came from.
    pub(super) fn ask_remote(
        &mut self,
        debug_name: &str,
        breakpad_id: &DebugId,
        lib: Option<&Lib>,
        errors: &mut Vec<LoadError>,
    ) -> RemoteFound {
        let mut from = 0;
        loop {
            let Some(remote) = self.remote.as_mut() else {
                return RemoteFound::Absent;
            };
            let candidate = match remote.find(debug_name, breakpad_id, lib, from, errors) {
                Lookup::Cached(c) => c,
                Lookup::Pending => return RemoteFound::Pending,
                Lookup::Absent => return RemoteFound::Absent,
            };
            match self.try_file(&candidate.path, breakpad_id) {
                Ok(module) => return RemoteFound::Module(module, candidate.server),
                Err(e) => {
                    errors.push(e.clone());
                    from = candidate.next;
                    if let Some(remote) = self.remote.as_mut() {
                        remote.reject(&candidate, e);
                    }
                }
            }
        }
    }
}

/// What step 7 found.
pub(super) enum RemoteFound {
    Module(Module, String),
    Pending,
    Absent,
}

//! The profile's libraries, read on a thread of their own (`profile-libs`, see
//! docs/RUNTIME.md): the loop must not sit in a pass over a big (or hostile) profile. The
//! root's libs come first (near the start of the file, quick), then every process's and
//! the frames' module offsets (a pass over the whole file); the loop takes them as they
//! come, without waiting.

use std::sync::mpsc;

use super::LibState;
use crate::profile::libs::LibList;
use crate::profile::wanted::{WantedModule, wanted_modules};
use crate::profile::{ProfileError, ProfileFile};
use crate::shared::debugid::DebugId;

/// What the reader thread sends.
enum LibsRead {
    Root(LibList),
    /// Every process's libs, and the module offsets of the profile's frames.
    All(Result<(LibList, Vec<WantedModule>), ProfileError>),
}

pub(super) struct ProfileLibs {
    profile: Option<ProfileFile>,
    /// `None` once everything has come (or without a profile).
    reader: Option<mpsc::Receiver<LibsRead>>,
    /// Messages received (progress, for parked requests).
    progress: u64,
    root: Option<LibList>,
    all: Option<LibList>,
}

impl ProfileLibs {
    /// Starts reading `profile`'s libraries on their thread.
    pub(super) fn start(profile: Option<ProfileFile>) -> ProfileLibs {
        let reader = profile.clone().and_then(|p| {
            let (tx, rx) = mpsc::channel();
            let spawned = std::thread::Builder::new()
                .name("profile-libs".into())
                .spawn(move || {
                    // A root whose libs cannot be read is told by the full read below.
                    let root = p.read_root_libs().unwrap_or_default();
                    if tx.send(LibsRead::Root(LibList::new(root))).is_ok() {
                        // One pass gives every process's libs and the frames' addresses.
                        let all = p.read_processes().map(|processes| {
                            let wanted = wanted_modules(&processes);
                            let libs = processes.into_iter().flat_map(|p| p.libs).collect();
                            (LibList::new(libs), wanted)
                        });
                        let _ = tx.send(LibsRead::All(all));
                    }
                });
            match spawned {
                Ok(_) => Some(rx),
                Err(e) => {
                    crate::log::elog!(
                        "warning: cannot start a thread to read the profile's libraries ({e}); \
                         symbolicating without them"
                    );
                    None
                }
            }
        });
        ProfileLibs {
            profile,
            reader,
            progress: 0,
            root: None,
            all: None,
        }
    }

    /// Whether more is to come from the reader.
    pub(super) fn reading(&self) -> bool {
        self.reader.is_some()
    }

    /// A count that moves with each message received.
    pub(super) fn progress(&self) -> u64 {
        self.progress
    }

    /// Takes what the reader has sent, without waiting (or waiting for one message when
    /// `block`). The module offsets of the profile's frames, when the full read has just
    /// come (once).
    pub(super) fn receive(&mut self, block: bool, quiet: bool) -> Option<Vec<WantedModule>> {
        let mut block = block;
        while let Some(rx) = &self.reader {
            let msg = if std::mem::take(&mut block) {
                rx.recv().map_err(|_| mpsc::TryRecvError::Disconnected)
            } else {
                rx.try_recv()
            };
            let all = match msg {
                Ok(LibsRead::Root(list)) => {
                    self.progress += 1;
                    self.root = Some(list);
                    continue;
                }
                Err(mpsc::TryRecvError::Empty) => return None,
                Ok(LibsRead::All(all)) => all,
                Err(mpsc::TryRecvError::Disconnected) => Err(ProfileError {
                    path: self
                        .profile
                        .as_ref()
                        .map(|p| p.path.clone())
                        .unwrap_or_default(),
                    problem: "reading its libraries stopped (internal error)".into(),
                    not_a_profile: false,
                }),
            };
            self.progress += 1;
            self.reader = None;
            let (list, wanted) = all.unwrap_or_else(|e| {
                crate::log::elog!(
                    "warning: {e}; symbolicating without the profile's library hints"
                );
                (LibList::default(), Vec::new())
            });
            if !quiet {
                crate::log::elog!(
                    "Found {} with debug IDs in the profile.",
                    crate::log::count(list.len() as u64, "library", "libraries")
                );
            }
            self.all = Some(list);
            return Some(wanted);
        }
        None
    }

    /// The profile's lib entry for a module. The root's `libs` come first in a profile
    /// and are read on their own (a few KB); the full scan over every process, which on a
    /// big profile costs a pass over all of it, only matters when the module is not among
    /// them.
    pub(super) fn find(&self, debug_name: &str, breakpad_id: &DebugId) -> LibState {
        let found = [&self.root, &self.all]
            .into_iter()
            .flatten()
            .find_map(|l| l.find(debug_name, breakpad_id));
        match found {
            Some(l) => LibState::Known(Some(l.clone())),
            None if self.reader.is_some() => LibState::Reading,
            None => LibState::Known(None),
        }
    }
}

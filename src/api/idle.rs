//! Idle-time symbolication: the server reads the profile itself, so it knows every address
//! the front-end will ask for before it asks. In the loop's idle time it resolves them,
//! module by module (the most addresses first), into the same memo the requests use: the
//! front-end's requests then find their answers made. The work goes in slices of a few
//! milliseconds, between which the loop takes requests: a module's first load in steps
//! ([`SymbolStore::prepare`](crate::store::SymbolStore::prepare)), then chunks of offsets.
//!
//! A module a request has asked for is left to the requests ("taken over"): the
//! front-end asks for all of a module's addresses at once, so what is left would be
//! answered for nobody.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::Api;
use crate::profile::wanted::WantedModule;
use crate::store::ModuleState;

/// Offsets resolved between two looks at the clock, at first: a chunk's size then follows
/// what chunks cost (halved when one took longer than a slice, doubled when one took under
/// a quarter of it), within these bounds: the batch path's pass per unit pays off on many
/// offsets, but a cold unit's DIEs and line program are read by the first offset in it.
const FIRST_CHUNK: usize = 32;
const MIN_CHUNK: usize = 4;
const MAX_CHUNK: usize = 1024;

/// Modules prepared at most: half the module cache, so that idle work never evicts what
/// it prepared, nor everything else.
const MAX_MODULES: usize = crate::store::DEFAULT_MAX_MODULES / 2;

#[derive(Default)]
pub(super) struct IdleWork {
    /// Modules left, in order; the first is being resolved from `pos`.
    modules: VecDeque<WantedModule>,
    pos: usize,
    /// Whether the first module's offsets are in unit order yet.
    grouped: bool,
    chunk: usize,
    /// Modules whose downloads were running, with the download count then: tried again
    /// when downloads have moved on.
    waiting: Vec<WantedModule>,
    waited_at: u64,
    /// Offsets resolved so far, and modules done (for the log).
    pub(super) resolved: u64,
    pub(super) done: usize,
}

impl IdleWork {
    pub(super) fn new(modules: Vec<WantedModule>) -> IdleWork {
        IdleWork {
            modules: modules.into_iter().take(MAX_MODULES).collect(),
            chunk: FIRST_CHUNK,
            ..Default::default()
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.modules.is_empty() && self.waiting.is_empty()
    }

    /// Whether a slice could do anything now: a module left to resolve, or one whose
    /// download may have ended (`finished` moved since it was set aside). Modules that only
    /// wait on running downloads leave the loop asleep: it would otherwise poll for them
    /// without pause, a whole core for as long as a stalled download's deadline.
    fn can_progress(&self, finished: u64) -> bool {
        !self.modules.is_empty() || (!self.waiting.is_empty() && finished != self.waited_at)
    }

    /// A request asked for this module: its work is the request's now.
    pub(super) fn take_over(&mut self, debug_name: &str, id: &crate::shared::debugid::DebugId) {
        let is = |m: &WantedModule| m.lib.debug_name == debug_name && m.lib.breakpad_id == *id;
        if self.modules.front().is_some_and(is) {
            self.pos = 0;
            self.grouped = false;
        }
        self.modules.retain(|m| !is(m));
        self.waiting.retain(|m| !is(m));
    }
}

impl Api {
    /// Whether idle work is left (the profile's addresses are read on the reader thread:
    /// none before they have come).
    pub fn has_idle_work(&mut self) -> bool {
        self.receive_libs(false);
        let finished = self.store.downloads_finished();
        self.idle.as_ref().is_some_and(|w| w.can_progress(finished)) || self.store.has_index_work()
    }

    /// Does idle work for about `budget` (one module load may take longer), then returns.
    pub fn idle_slice(&mut self, budget: Duration) {
        let deadline = Instant::now() + budget;
        let Some(mut work) = self.idle.take() else {
            // The profile's addresses first; then the modules' prepared indexes.
            self.store.index_step(deadline);
            return;
        };
        let finished = self.store.downloads_finished();
        if !work.waiting.is_empty() && finished != work.waited_at {
            let back = std::mem::take(&mut work.waiting);
            work.modules.extend(back);
        }
        while Instant::now() < deadline {
            let Some(m) = work.modules.front() else {
                break;
            };
            // A big file's first load goes in steps too: the rest in the next slice.
            let ready = self.store.prepare(
                &m.lib.debug_name,
                &m.lib.breakpad_id,
                Some(&m.lib),
                deadline,
            );
            if !ready {
                break;
            }
            match self
                .store
                .module(&m.lib.debug_name, &m.lib.breakpad_id, Some(&m.lib))
            {
                ModuleState::Ready(module) => {
                    let Some(m) = work.modules.front_mut() else {
                        break;
                    };
                    if work.pos == 0 && !work.grouped {
                        // By DWARF unit, each unit's offsets ascending (the others, in
                        // no unit, last): a unit's ranges interleave with others' in a
                        // big library, and a unit met again in a later slice is read
                        // whole again.
                        m.offsets
                            .sort_by_cached_key(|&o| (module.part_of(o).unwrap_or(usize::MAX), o));
                        work.grouped = true;
                    }
                    let len = m.offsets.len();
                    let part = module.part_of(m.offsets[work.pos]);
                    let mut end = work.pos + 1;
                    if part.is_some() {
                        // One DWARF unit's offsets, together and alone: the first reads
                        // the unit's DIEs and line program whole (up to a few ms at
                        // libxul's size), the others then cost little. At most
                        // MAX_CHUNK of them.
                        while end < len
                            && end - work.pos < MAX_CHUNK
                            && module.part_of(m.offsets[end]) == part
                        {
                            end += 1;
                        }
                    } else {
                        // Elsewhere (symbol tables, PDB, `.sym`): `chunk` offsets, sized
                        // by what the last ones cost.
                        end = (work.pos + work.chunk).min(len);
                    }
                    let t = Instant::now();
                    // Only the memo is wanted: the places are the next request's.
                    let _ = module.remember(&m.offsets[work.pos..end], super::symbolicate::encode);
                    let took = t.elapsed();
                    work.chunk = if part.is_some() {
                        work.chunk
                    } else if took > budget {
                        (work.chunk / 2).max(MIN_CHUNK)
                    } else if took < budget / 4 {
                        (work.chunk * 2).min(MAX_CHUNK)
                    } else {
                        work.chunk
                    };
                    work.resolved += (end - work.pos) as u64;
                    work.pos = end;
                    if end == len {
                        work.modules.pop_front();
                        work.pos = 0;
                        work.grouped = false;
                        work.done += 1;
                    }
                }
                // Its download started now, not when the front-end asks.
                ModuleState::Pending(_) => {
                    if let Some(m) = work.modules.pop_front() {
                        work.waiting.push(m);
                    }
                    work.pos = 0;
                    work.grouped = false;
                    work.waited_at = finished;
                }
                ModuleState::Missing(_) => {
                    work.modules.pop_front();
                    work.pos = 0;
                    work.grouped = false;
                }
            }
        }
        if work.modules.is_empty() && Instant::now() < deadline {
            self.store.index_step(deadline);
        }
        if work.is_empty() {
            if !self.quiet {
                crate::log::elog!(
                    "Resolved {} of the profile's {} ahead of the profiler's requests.",
                    crate::log::count(work.resolved, "address", "addresses"),
                    crate::log::count(work.done as u64, "module", "modules")
                );
            }
            // Said once; what is left is the prepared indexes' work.
            return;
        }
        self.idle = Some(work);
    }
}

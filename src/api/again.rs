//! Identical symbolication requests answered again with the answer sent the first time
//! (its text and the pieces it shares with the memo, read again). The front-end asks
//! again with the same bodies when its page is reloaded; reading the request, looking up
//! its frames in the memo and writing its text cost such a request 1.5-3 ms of the
//! loop's time for 10 000 frames.
//!
//! A kept answer is given only while every module of the request resolves as it did:
//! the same loaded module (not evicted, not failed since), or a failure with the same
//! errors. Anything else (a file found since, a download finished) answers afresh.

use std::rc::{Rc, Weak};
use std::sync::Arc;

use super::Answer;
use super::answer::Keeper;
use crate::resolve::LoadError;
use crate::shared::debugid::DebugId;
use crate::store::{LoadedModule, ModuleState};

/// Answers smaller than this are answered afresh in no time.
const KEEP_MIN: usize = 256 << 10;
/// Bytes of kept answers' own (their text between the pieces they share with the memo,
/// and the places of those) and of their request bodies, together; the oldest go first.
const KEEP_TOTAL: usize = 64 << 20;

/// How a module of a request resolved.
pub(super) enum Outcome {
    /// Weak: a kept answer does not keep its modules in memory. While the module lives,
    /// its address is its identity.
    Found(Weak<LoadedModule>),
    Missing(Vec<LoadError>),
}

impl Outcome {
    /// `None` for an outcome not to be relied on later: a download still going on.
    pub(super) fn of(state: &ModuleState) -> Option<Outcome> {
        Some(match state {
            ModuleState::Ready(module) => Outcome::Found(Rc::downgrade(module)),
            ModuleState::Pending(_) => return None,
            ModuleState::Missing(errors) => Outcome::Missing(errors.clone()),
        })
    }

    /// Whether its module is still loaded (a kept answer would otherwise hold its texts).
    fn live(&self) -> bool {
        match self {
            Outcome::Found(m) => m.strong_count() > 0,
            Outcome::Missing(_) => true,
        }
    }

    /// Whether `now` gives the answers this outcome gave: the same loaded module (by
    /// identity), or the same errors (by value).
    pub(super) fn holds(&self, now: &ModuleState) -> bool {
        match (self, now) {
            (Outcome::Found(then), ModuleState::Ready(now)) => {
                std::ptr::eq(then.as_ptr(), Rc::as_ptr(now))
            }
            (Outcome::Missing(then), ModuleState::Missing(now)) => then == now,
            _ => false,
        }
    }
}

/// The modules of a request, each once, with how they resolved.
pub(super) type Resolved = Vec<((String, DebugId), Outcome)>;

pub(super) struct Entry {
    hash: u64,
    body: Vec<u8>,
    pub(super) modules: Resolved,
    keeper: Arc<Keeper>,
    /// Bytes counted for it: the body and what the answer holds of its own.
    cost: usize,
}

/// Kept answers, oldest first.
#[derive(Default)]
pub(super) struct Again {
    entries: Vec<Entry>,
    cost: usize,
}

fn hash(body: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    crate::resolve::fasthash::Fast::default().hash_one(body)
}

impl Again {
    /// The entry for this exact body, taken out (put back by [`Self::answer`]).
    pub(super) fn take(&mut self, body: &[u8]) -> Option<Entry> {
        if self.entries.is_empty() {
            return None;
        }
        // An answer whose module left the cache would hold that module's texts.
        self.entries.retain(|e| {
            let live = e.modules.iter().all(|(_, o)| o.live());
            if !live {
                self.cost -= e.cost;
            }
            live
        });
        let h = hash(body);
        let i = self
            .entries
            .iter()
            .position(|e| e.hash == h && e.body == body)?;
        let e = self.entries.remove(i);
        self.cost -= e.cost;
        Some(e)
    }

    /// The answer of a taken entry whose modules still resolve as they did; the entry
    /// goes back.
    pub(super) fn answer(&mut self, entry: Entry) -> Option<Answer> {
        // Not sent whole yet (or never: the client went away): answered afresh, and kept
        // anew from there.
        let answer = entry.keeper.answer()?;
        self.insert(entry);
        Some(Answer::again(answer))
    }

    /// Keeps `answer` for this body once it is sent whole, if it is big enough to be
    /// worth it; `modules` is `None` when one of them is not final. Called only after
    /// [`Self::take`] for the same body.
    pub(super) fn remember(&mut self, body: &[u8], modules: Option<Resolved>, answer: &mut Answer) {
        let Some(modules) = modules else {
            return;
        };
        if answer.len() < KEEP_MIN {
            return;
        }
        let keeper = Arc::new(Keeper::default());
        answer.keep_in(keeper.clone());
        // No entry for this body is left: `take` ran before this request was answered.
        self.insert(Entry {
            hash: hash(body),
            body: body.to_vec(),
            modules,
            keeper,
            cost: body.len().saturating_add(answer.own_size()),
        });
    }

    fn insert(&mut self, entry: Entry) {
        if entry.cost > KEEP_TOTAL {
            return;
        }
        while self.cost + entry.cost > KEEP_TOTAL && !self.entries.is_empty() {
            let old = self.entries.remove(0);
            self.cost -= old.cost;
        }
        self.cost += entry.cost;
        self.entries.push(entry);
    }
}

//! A parsed module with the answers it has given: the memo that makes a repeated
//! request a lookup and a copy, and the guard that fails one module, not the server,
//! when a lookup panics.

use std::path::Path;
use std::sync::Arc;

use crate::resolve::{self, LoadError, Module, Symbolized};

/// Where a remembered answer's text is: a range of one of the module's text chunks.
/// `chunk == NOTHING`: the offset resolved to nothing.
#[derive(Clone, Copy)]
pub struct Place {
    pub chunk: u32,
    pub start: u32,
    pub len: u32,
}

const NOTHING: u32 = u32::MAX;

impl Place {
    pub const NOTHING: Place = Place {
        chunk: NOTHING,
        start: 0,
        len: 0,
    };

    /// Whether the offset resolved to something.
    pub fn found(&self) -> bool {
        self.chunk != NOTHING
    }
}

/// Answer texts are appended to chunks of this size, shared with the answers being
/// written: a piece is a range, not an allocation of its own with a count to touch.
const CHUNK: usize = 1 << 20;

/// A parsed module with the answers it has given, kept in the caller's encoding (JSON
/// text for the API): the front-end asks for the same addresses again on every
/// re-symbolication, and a repeat is then a lookup and a copy.
pub struct LoadedModule {
    module: Module,
    /// Ordered: a request's offsets are looked up ascending, so consecutive lookups
    /// meet the same nodes (a hash table's probes were a cache miss each).
    memo: std::cell::RefCell<std::collections::BTreeMap<u64, Place>>,
    /// The texts `memo` points into. Only the last chunk grows, and only while no answer
    /// being written holds it.
    chunks: std::cell::RefCell<Vec<Arc<Vec<u8>>>>,
    /// Bytes held by `memo`: chunk capacities and entries (for the cache bound).
    memo_bytes: std::cell::Cell<u64>,
    /// Set when a lookup panicked (a parser bug met a corrupt file): the module answers
    /// nothing more, and the store drops it for a remembered error.
    failed: std::cell::RefCell<Option<LoadError>>,
    /// The server its debug file was downloaded from (symbol server, debuginfod): whoever
    /// runs it wrote the file names in it, so they must not choose local files to serve.
    origin: Option<String>,
}

/// Bytes counted per remembered answer besides its text (its share of a tree node).
const MEMO_ENTRY_COST: u64 = 32;

/// Answers kept per module before the memo starts over.
const MAX_MEMO: usize = 1 << 20;

impl std::ops::Deref for LoadedModule {
    type Target = Module;
    fn deref(&self) -> &Module {
        &self.module
    }
}

impl LoadedModule {
    pub(super) fn new(module: Module, origin: Option<String>) -> LoadedModule {
        LoadedModule {
            module,
            memo: Default::default(),
            chunks: Default::default(),
            memo_bytes: Default::default(),
            failed: Default::default(),
            origin,
        }
    }

    /// Whether the debug file came from a remote source (see `downloaded`).
    pub fn downloaded(&self) -> bool {
        self.origin.is_some()
    }

    /// The server the debug file came from, if downloaded.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// Resolves ascending offsets. A panic in the format's code fails this module only.
    pub fn lookup_sorted(&self, offsets: &[u64]) -> Result<Vec<Option<Symbolized>>, LoadError> {
        self.guarded(|| self.module.lookup_sorted(offsets))
    }

    /// Where the answers for the ascending `offsets` are, in the chunks [`Self::texts`]
    /// gives: remembered ones looked up, the others resolved and encoded by `encode` (one
    /// pass over those not yet asked for) and remembered.
    pub fn places_sorted(
        &self,
        offsets: &[u64],
        encode: impl Fn(&Symbolized, &mut Vec<u8>),
    ) -> Result<Vec<Place>, LoadError> {
        let mut places = Vec::with_capacity(offsets.len());
        // Indexes (into `offsets`) of those not remembered.
        let mut missing = Vec::new();
        {
            let memo = self.memo.borrow();
            for (i, o) in offsets.iter().enumerate() {
                match memo.get(o) {
                    Some(&place) => places.push(place),
                    None => {
                        places.push(Place::NOTHING);
                        missing.push(i);
                    }
                }
            }
        }
        if missing.is_empty() {
            return Ok(places);
        }
        if self.memo.borrow().len() + missing.len() > MAX_MEMO {
            // Starting over: every offset of this request is looked up again, and all of
            // its answers are kept (even past the limit) while it is written.
            self.forget();
            missing = (0..offsets.len()).collect();
        }
        let asked: Vec<u64> = missing.iter().map(|&i| offsets[i]).collect();
        // Each answer is encoded as it comes: a big request's answers are never all held
        // as structures at once.
        let mut scratch = Vec::new();
        self.guarded(|| {
            self.module.lookup_each(&asked, &mut |i, s| {
                let place = match s {
                    Some(s) => {
                        scratch.clear();
                        encode(&s, &mut scratch);
                        self.keep(&scratch).unwrap_or(Place::NOTHING)
                    }
                    None => Place::NOTHING,
                };
                self.memo_bytes.set(self.memo_bytes.get() + MEMO_ENTRY_COST);
                self.memo.borrow_mut().insert(asked[i], place);
                places[missing[i]] = place;
            })
        })?;
        Ok(places)
    }

    /// Appends `text` to the chunks; `None` for a text past what a place can say (no
    /// real answer is near 4 GiB: the caps on names and inline depth see to that).
    fn keep(&self, text: &[u8]) -> Option<Place> {
        let len = u32::try_from(text.len()).ok()?;
        let mut chunks = self.chunks.borrow_mut();
        let fits = chunks
            .last_mut()
            .and_then(Arc::get_mut)
            .is_some_and(|c| c.capacity() - c.len() >= text.len());
        if !fits {
            let capacity = text.len().max(CHUNK);
            self.memo_bytes.set(self.memo_bytes.get() + capacity as u64);
            chunks.push(Arc::new(Vec::with_capacity(capacity)));
        }
        let chunk = u32::try_from(chunks.len() - 1).ok()?;
        let last = chunks.last_mut().and_then(Arc::get_mut)?;
        let start = u32::try_from(last.len()).ok()?;
        start.checked_add(len)?;
        last.extend_from_slice(text);
        Some(Place { chunk, start, len })
    }

    /// The chunks the places of [`Self::places_sorted`] point into, shared with the answer being
    /// written (answers are written on other threads).
    pub fn texts(&self) -> Vec<Arc<Vec<u8>>> {
        self.chunks.borrow().clone()
    }

    fn forget(&self) {
        self.memo.borrow_mut().clear();
        self.chunks.borrow_mut().clear();
        self.memo_bytes.set(0);
    }

    fn guarded<R>(&self, run: impl FnOnce() -> R) -> Result<R, LoadError> {
        if let Some(e) = self.failed.borrow().as_ref() {
            return Err(e.clone());
        }
        resolve::open::contained(Path::new("looking up addresses"), || Ok(run())).inspect_err(|e| {
            *self.failed.borrow_mut() = Some(e.clone());
            self.forget();
        })
    }

    /// Memory held by remembered answers.
    pub fn memo_cost(&self) -> u64 {
        self.memo_bytes.get()
    }

    /// The error of a module whose lookups failed.
    pub fn failure(&self) -> Option<LoadError> {
        self.failed.borrow().clone()
    }
}

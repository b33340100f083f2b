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

/// Where an offset's answer is, in the order it is written: a text it shares with the
/// other offsets of its function (name, size, file), a short text of its own (offset,
/// line), and a text it shares with the offsets that have the same inline frames. The
/// shared parts were most of an answer's bytes: kept once, not once per offset.
#[derive(Clone, Copy)]
pub struct Answered {
    pub head: Place,
    pub own: Place,
    pub shared: Place,
}

impl Answered {
    pub const NOTHING: Answered = Answered {
        head: Place::NOTHING,
        own: Place::NOTHING,
        shared: Place::NOTHING,
    };

    /// The places to write, in order.
    pub fn parts(&self) -> [Place; 3] {
        [self.head, self.own, self.shared]
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
    /// Sorted by offset: a request's offsets, ascending, are looked up in one forward
    /// walk (a hash table's probes were a cache miss each, a tree's a descent each).
    memo: std::cell::RefCell<Vec<(u64, Answered)>>,
    /// Answers idle-time work remembered ([`Self::remember`]), a DWARF unit at a time, so
    /// not in the order of `memo`: merged into it in one pass when it is next read (a
    /// merge per unit grew with the square of the profile's addresses).
    pending: std::cell::RefCell<Vec<(u64, Answered)>>,
    /// The shared texts kept, by a hash of their bytes (one text per hash: a collision
    /// keeps a second copy, never a wrong one).
    shared: std::cell::RefCell<std::collections::HashMap<u64, Place>>,
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
    /// Found through a path the profile gave relative (beside it): its debug info's file
    /// names are the profile author's, so no local file is served for them.
    from_profile: bool,
}

/// Writes an answer's three parts ([`Answered`]) in order, returning where the second and
/// the third begin.
type Encode<'a> = dyn Fn(&Symbolized, &mut Vec<u8>) -> (usize, usize) + 'a;

/// Bytes counted per remembered answer besides its text.
const MEMO_ENTRY_COST: u64 = std::mem::size_of::<(u64, Answered)>() as u64;

/// Bytes counted per shared text besides its bytes (its slot in the map).
const SHARED_ENTRY_COST: u64 = 32;

/// Answers kept per module before the memo starts over.
const MAX_MEMO: usize = 1 << 20;

impl std::ops::Deref for LoadedModule {
    type Target = Module;
    fn deref(&self) -> &Module {
        &self.module
    }
}

impl LoadedModule {
    pub(super) fn new(module: Module, origin: Option<String>, from_profile: bool) -> LoadedModule {
        LoadedModule {
            module,
            memo: Default::default(),
            pending: Default::default(),
            shared: Default::default(),
            chunks: Default::default(),
            memo_bytes: Default::default(),
            failed: Default::default(),
            origin,
            from_profile,
        }
    }

    /// Whether the module was found only through a relative path of the profile (a file
    /// that came with the profile, beside it) and not in a `--symbol-dir`.
    pub fn came_with_profile(&self) -> bool {
        self.from_profile
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
    /// pass over those not yet asked for) and remembered. `encode` writes the three parts
    /// of [`Answered`] in order and returns where the second and the third begin.
    pub fn places_sorted(
        &self,
        offsets: &[u64],
        encode: impl Fn(&Symbolized, &mut Vec<u8>) -> (usize, usize),
    ) -> Result<Vec<Answered>, LoadError> {
        let pending = std::mem::take(&mut *self.pending.borrow_mut());
        if !pending.is_empty() {
            self.insert(pending);
        }
        let mut places = Vec::with_capacity(offsets.len());
        // Indexes (into `offsets`) of those not remembered.
        let mut missing = Vec::new();
        {
            let memo = self.memo.borrow();
            let mut at = 0;
            for (i, &o) in offsets.iter().enumerate() {
                at = gallop(&memo, at, o);
                match memo.get(at).filter(|e| e.0 == o) {
                    Some(&(_, place)) => places.push(place),
                    None => {
                        places.push(Answered::NOTHING);
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
        let mut new = Vec::with_capacity(asked.len());
        self.resolve(&asked, &encode, |i, place| {
            new.push((asked[i], place));
            places[missing[i]] = place;
        })?;
        self.insert(new);
        Ok(places)
    }

    /// Resolves and remembers ascending offsets none of which was asked for before (idle
    /// work: the offsets of one DWARF unit, or of no unit, at a time), without answering
    /// them; a request then finds them in the memo. Nothing is remembered past the memo's
    /// bound.
    pub fn remember(
        &self,
        offsets: &[u64],
        encode: impl Fn(&Symbolized, &mut Vec<u8>) -> (usize, usize),
    ) -> Result<(), LoadError> {
        if self.memo.borrow().len() + self.pending.borrow().len() + offsets.len() > MAX_MEMO {
            return Ok(());
        }
        let mut new = Vec::with_capacity(offsets.len());
        self.resolve(offsets, &encode, |i, place| new.push((offsets[i], place)))?;
        self.pending.borrow_mut().extend(new);
        Ok(())
    }

    /// Resolves `asked` (ascending), encodes each answer with `encode` as it comes (a big
    /// request's answers are never all held as structures at once) and keeps its texts:
    /// `put(i, place)` for each.
    fn resolve(
        &self,
        asked: &[u64],
        encode: &Encode<'_>,
        mut put: impl FnMut(usize, Answered),
    ) -> Result<(), LoadError> {
        let mut scratch = Vec::new();
        // The last shared texts kept: offsets of one function come one after the other,
        // and a comparison with these is cheaper than a hash and a probe.
        let mut last = [(Vec::new(), Place::NOTHING), (Vec::new(), Place::NOTHING)];
        self.guarded(|| {
            self.module.lookup_each(asked, &mut |i, s| {
                let place = match s {
                    Some(s) => {
                        scratch.clear();
                        let (a, b) = encode(&s, &mut scratch);
                        let b = b.min(scratch.len());
                        let (head, rest) = scratch[..].split_at(a.min(b));
                        let (own, shared) = rest.split_at(b - head.len());
                        match self.keep(own) {
                            Some(own) => {
                                let [h, i] = &mut last;
                                Answered {
                                    head: self.keep_after(head, h, false),
                                    own,
                                    shared: self.keep_after(shared, i, true),
                                }
                            }
                            None => Answered::NOTHING,
                        }
                    }
                    None => Answered::NOTHING,
                };
                self.memo_bytes.set(self.memo_bytes.get() + MEMO_ENTRY_COST);
                put(i, place);
            })
        })
    }

    /// Puts answers (in any order) into the memo.
    fn insert(&self, mut new: Vec<(u64, Answered)>) {
        new.sort_unstable_by_key(|e| e.0);
        let mut memo = self.memo.borrow_mut();
        // Past every offset remembered: appended, not merged.
        if memo
            .last()
            .is_none_or(|l| new.first().is_none_or(|f| l.0 < f.0))
        {
            memo.extend(new);
            return;
        }
        let old = std::mem::take(&mut *memo);
        memo.reserve_exact(old.len() + new.len());
        let (mut a, mut b) = (old.into_iter().peekable(), new.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.0 <= y.0 => a.next(),
                (Some(_), Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, _) => b.next(),
            };
            match next {
                Some(e) => memo.push(e),
                None => break,
            }
        }
    }

    /// Where `text` is kept: where `last` (the text kept before) is if it is the same,
    /// else kept anew, once per module if `dedup` (a hash and a probe: worth it for the
    /// inline frames, which addresses of different functions share; not for a
    /// function's name and file, which only its own addresses share, and they come one
    /// after the other).
    fn keep_after(&self, text: &[u8], last: &mut (Vec<u8>, Place), dedup: bool) -> Place {
        if last.0 != text {
            last.1 = match dedup {
                true => self.keep_shared(text),
                false if text.is_empty() => Place::NOTHING,
                false => self.keep(text).unwrap_or(Place::NOTHING),
            };
            last.0.clear();
            last.0.extend_from_slice(text);
        }
        last.1
    }

    /// Where `text` is kept, once for all the answers that share it (nothing for an
    /// empty text).
    fn keep_shared(&self, text: &[u8]) -> Place {
        if text.is_empty() {
            return Place::NOTHING;
        }
        use std::hash::BuildHasher;
        let key = crate::resolve::fasthash::Fast::default().hash_one(text);
        if let Some(&p) = self.shared.borrow().get(&key)
            && self.chunks.borrow()[p.chunk as usize]
                .get(p.start as usize..p.start as usize + p.len as usize)
                == Some(text)
        {
            return p;
        }
        let Some(place) = self.keep(text) else {
            return Place::NOTHING;
        };
        let mut shared = self.shared.borrow_mut();
        if let std::collections::hash_map::Entry::Vacant(e) = shared.entry(key) {
            e.insert(place);
            self.memo_bytes
                .set(self.memo_bytes.get() + SHARED_ENTRY_COST);
        }
        place
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
        // The memory goes too (a kept capacity would not be counted).
        *self.memo.borrow_mut() = Vec::new();
        *self.pending.borrow_mut() = Vec::new();
        *self.shared.borrow_mut() = Default::default();
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

/// The index of the first entry of `memo[from..]` at or past `offset`: steps doubling
/// from `from`, then a binary search (offsets asked close together cost a step or two).
fn gallop(memo: &[(u64, Answered)], from: usize, offset: u64) -> usize {
    let rest = &memo[from.min(memo.len())..];
    let (mut lo, mut step) = (0, 1);
    while step <= rest.len() && rest[step - 1].0 < offset {
        lo = step;
        step *= 2;
    }
    let hi = step.min(rest.len());
    from + lo + rest[lo..hi].partition_point(|e| e.0 < offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallop_finds_what_a_binary_search_finds() {
        let memo: Vec<(u64, Answered)> = (0..300u64)
            .map(|i| (i * 8 + i % 7, Answered::NOTHING))
            .collect();
        for from in [0, 1, 5, 64, 299, 300] {
            for offset in 0..2500 {
                let want = from + memo[from..].partition_point(|e| e.0 < offset);
                assert_eq!(
                    gallop(&memo, from, offset),
                    want,
                    "from {from}, offset {offset}"
                );
            }
        }
        assert_eq!(gallop(&[], 0, 5), 0);
    }

    /// The texts of answers, as an answer is spliced from them.
    fn texts_of(m: &LoadedModule, places: &[Answered]) -> Vec<Vec<u8>> {
        let chunks = m.texts();
        places
            .iter()
            .map(|a| {
                let mut t = Vec::new();
                for p in [a.head, a.own, a.shared] {
                    if p.found() {
                        let at = p.start as usize;
                        t.extend_from_slice(&chunks[p.chunk as usize][at..at + p.len as usize]);
                    }
                }
                t
            })
            .collect()
    }

    #[test]
    fn answers_remembered_out_of_order_are_found_without_resolving_again() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus/elf/shapes-gcc-O2-dwarf4");
        let none = |_: &Path, _: resolve::Companion<'_>| Vec::new();
        let ctx = resolve::LoadContext {
            path: &path,
            companions: &none,
            verbose: false,
        };
        let id = crate::shared::debugid::DebugId::new("7E378474164BB4D8EDFD5660EA4970D90");
        let load = || LoadedModule::new(resolve::open::open(&id, &ctx).unwrap(), None, false);
        let encode = |s: &Symbolized, out: &mut Vec<u8>| {
            out.extend_from_slice(s.function.as_bytes());
            let a = out.len();
            out.extend_from_slice(format!("{:?}{:?}", s.file, s.line).as_bytes());
            let b = out.len();
            out.extend_from_slice(format!("{:?}", s.inlines).as_bytes());
            (a, b)
        };
        let all: Vec<u64> = (0x1000..0x3000).step_by(7).collect();
        // Idle work's order: the upper half, then the lower (each ascending).
        let (low, high) = all.split_at(all.len() / 2);
        let ahead = load();
        ahead.remember(high, encode).unwrap();
        ahead.remember(low, encode).unwrap();
        let cost = ahead.memo_cost();
        let places = ahead.places_sorted(&all, encode).unwrap();
        assert_eq!(ahead.memo_cost(), cost, "answers were resolved again");
        let fresh = load();
        let want = fresh.places_sorted(&all, encode).unwrap();
        let got = texts_of(&ahead, &places);
        assert!(got.iter().filter(|t| !t.is_empty()).count() > 100);
        assert_eq!(got, texts_of(&fresh, &want));
    }
}

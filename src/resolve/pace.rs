//! Loads that stop and go on: the idle-time work (`api/idle.rs`) opens a big file in
//! slices of a few milliseconds, so that a request never waits behind a whole parse (a
//! libxul-sized ELF takes over 100 ms). The long parts of a load (symbol tables, the DWARF
//! unit list, unwind tables, the function table) are `async` functions that call
//! [`pause`] every few thousand items; the compiler keeps their state between slices.
//! Nothing here is a runtime: one future is polled by hand, on the loop's own thread,
//! with a waker that is never woken ([`Waker::noop`]), since a pause only waits for the
//! caller's next slice.
//!
//! Called the ordinary way ([`finish`]), a load never pauses: no deadline is set.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

thread_local! {
    /// When the slice being run ends; `None` outside a slice.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// A point where a load may stop for now: ready at once, unless a slice is running and
/// its time is up. Cheap enough for every few thousand items (one clock read).
pub fn pause() -> Pause {
    Pause { paused: false }
}

pub struct Pause {
    paused: bool,
}

impl Future for Pause {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        if self.paused {
            return Poll::Ready(());
        }
        let due = DEADLINE
            .with(Cell::get)
            .is_some_and(|d| Instant::now() >= d);
        if due {
            self.paused = true;
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }
}

/// Whether a slice is running: work a request would do later (lazily) may be done now.
pub fn pacing() -> bool {
    DEADLINE.with(Cell::get).is_some()
}

/// Items per run sorted at once in a slice.
const RUN: usize = 1 << 14;

/// `v.sort_by(cmp)`, pausing inside a slice: there it sorts runs of a few thousand items,
/// then merges neighbouring runs, wider each round, a pause after each sort (a stable sort
/// of two sorted runs is one merge). Stable either way, so the order is the one
/// `sort_by` gives; outside a slice it is `sort_by` itself. Both ways sort through
/// `&mut cmp`: one instantiation of the standard library's sort per call site, not two
/// (each is 5-8 KB of the binary).
pub async fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) {
    if !pacing() || v.len() <= RUN {
        v.sort_by(&mut cmp);
        return;
    }
    for run in v.chunks_mut(RUN) {
        run.sort_by(&mut cmp);
        pause().await;
    }
    let mut width = RUN;
    while width < v.len() {
        for pair in v.chunks_mut(2 * width) {
            if pair.len() > width {
                pair.sort_by(&mut cmp);
                pause().await;
            }
        }
        width *= 2;
    }
}

/// `v.sort_unstable()` for items where equal means the same (a whole order): the same
/// order whether it went in slices or not. In a slice, runs are sorted by `sort_unstable`
/// itself and merged here (not by a stable sort: that would be a second sort in the
/// binary for each item type).
pub async fn sort_unstable<T: Ord + Copy>(v: &mut [T]) {
    if !pacing() || v.len() <= RUN {
        v.sort_unstable();
        return;
    }
    for run in v.chunks_mut(RUN) {
        run.sort_unstable();
        pause().await;
    }
    let mut spare = Vec::new();
    let mut width = RUN;
    while width < v.len() {
        for pair in v.chunks_mut(2 * width) {
            if pair.len() > width {
                merge(pair, width, &mut spare);
                pause().await;
            }
        }
        width *= 2;
    }
}

/// The positions of `keys`, ordered by key, equal keys in the order they came: the order
/// a stable sort by key gives. A radix sort, one pass per byte in which the keys differ
/// (four for the addresses of a libxul-sized library), a pause after each: the 257 000
/// symbols of `libmozjs-scale.so` took 11 ms in a comparison sort of the symbols, about
/// 4 ms this way (MEASUREMENTS, "Figures behind code choices").
pub async fn order_by_key(keys: &[u64]) -> Vec<usize> {
    let mut order: Vec<(u64, usize)> = keys.iter().copied().zip(0..).collect();
    let (any, all) = keys.iter().fold((0u64, !0u64), |(o, a), &k| (o | k, a & k));
    let varying = any ^ all;
    let mut spare = vec![(0u64, 0usize); order.len()];
    for shift in (0..64).step_by(8) {
        if varying >> shift & 0xff == 0 {
            continue;
        }
        let mut at = [0usize; 256];
        for &(k, _) in &order {
            at[(k >> shift & 0xff) as usize] += 1;
        }
        let mut sum = 0;
        for slot in at.iter_mut() {
            (*slot, sum) = (sum, sum + *slot);
        }
        for &item in &order {
            let b = (item.0 >> shift & 0xff) as usize;
            spare[at[b]] = item;
            at[b] += 1;
        }
        std::mem::swap(&mut order, &mut spare);
        pause().await;
    }
    order.into_iter().map(|(_, i)| i).collect()
}

/// Merges the sorted `v[..mid]` and `v[mid..]` in place, through `spare`.
fn merge<T: Ord + Copy>(v: &mut [T], mid: usize, spare: &mut Vec<T>) {
    spare.clear();
    spare.extend_from_slice(&v[..mid]);
    let (mut i, mut j, mut k) = (0, mid, 0);
    while i < spare.len() {
        if j < v.len() && v[j] < spare[i] {
            v[k] = v[j];
            j += 1;
        } else {
            v[k] = spare[i];
            i += 1;
        }
        k += 1;
    }
}

/// Sets the slice's deadline for the duration of `f` (restored after, also on a panic's
/// way out, so that an ordinary load after a panicked slice never pauses).
fn with_deadline<T>(deadline: Option<Instant>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEADLINE.with(|d| d.replace(deadline)));
    f()
}

/// Runs a load to its end without pausing (the requests' way: they need the module now).
pub fn finish<T>(load: impl Future<Output = T>) -> T {
    let mut load = std::pin::pin!(load);
    let mut cx = Context::from_waker(Waker::noop());
    with_deadline(None, || {
        loop {
            if let Poll::Ready(v) = load.as_mut().poll(&mut cx) {
                return v;
            }
        }
    })
}

/// A load run in slices: each [`Self::step`] goes on until its deadline, the next from
/// where it stopped.
pub struct Resumable<T> {
    load: Pin<Box<dyn Future<Output = T>>>,
}

impl<T> Resumable<T> {
    pub fn new(load: impl Future<Output = T> + 'static) -> Resumable<T> {
        Resumable {
            load: Box::pin(load),
        }
    }

    /// Goes on until `deadline` (the first pause after it): the result when the load is
    /// done. A panic in the load goes to the caller, which must drop this load then.
    pub fn step(&mut self, deadline: Instant) -> Option<T> {
        let mut cx = Context::from_waker(Waker::noop());
        with_deadline(Some(deadline), || match self.load.as_mut().poll(&mut cx) {
            Poll::Ready(v) => Some(v),
            Poll::Pending => None,
        })
    }

    /// Runs the rest without pausing.
    pub fn finish(mut self) -> T {
        finish(self.load.as_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn order_by_key_is_a_stable_sort_by_key() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for (n, spread) in [
            (0, 1),
            (1, 1),
            (7, 3),
            (1000, 50),
            (70_000, 1 << 40),
            (5000, u64::MAX),
        ] {
            let keys: Vec<u64> = (0..n)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state % spread).wrapping_add(0x40_0000)
                })
                .collect();
            let mut want: Vec<usize> = (0..n).collect();
            want.sort_by_key(|&i| keys[i]);
            assert_eq!(finish(order_by_key(&keys)), want, "{n}");
        }
    }

    async fn count(n: u64) -> u64 {
        let mut sum = 0;
        for i in 0..n {
            if i % 1000 == 0 {
                pause().await;
            }
            sum += i;
        }
        sum
    }

    #[test]
    fn a_load_in_slices_ends_as_it_does_at_once() {
        let mut load = Resumable::new(count(3_000_000));
        let mut steps = 0;
        let sum = loop {
            steps += 1;
            // A deadline already past: one pause point per step.
            if let Some(v) = load.step(Instant::now()) {
                break v;
            }
        };
        assert_eq!(sum, finish(count(3_000_000)));
        assert!(steps > 1000, "{steps} steps");
        // Outside a step nothing pauses.
        assert_eq!(DEADLINE.with(Cell::get), None);
    }

    #[test]
    fn a_sort_in_slices_orders_as_sort_by_does() {
        // Many equal keys, so stability shows: (key, original position).
        let items: Vec<(u32, usize)> = (0..100_000)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) % 1000, i))
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|a| a.0);
        let mut load = Resumable::new(async move {
            let mut v = items;
            sort_by(&mut v, |a, b| a.0.cmp(&b.0)).await;
            v
        });
        let sorted = loop {
            if let Some(v) = load.step(Instant::now()) {
                break v;
            }
        };
        assert_eq!(sorted, expected);
    }

    #[test]
    fn an_unstable_sort_in_slices_orders_as_sort_unstable_does() {
        // Several rounds of merges, an odd run at the end, and repeated items.
        let items: Vec<(u64, u32)> = (0..5 * RUN + 123)
            .map(|i| {
                (
                    ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 50) % 7000,
                    (i % 3) as u32,
                )
            })
            .collect();
        let mut expected = items.clone();
        expected.sort_unstable();
        let mut load = Resumable::new(async move {
            let mut v = items;
            sort_unstable(&mut v).await;
            v
        });
        let mut steps = 0;
        let sorted = loop {
            steps += 1;
            if let Some(v) = load.step(Instant::now()) {
                break v;
            }
        };
        assert!(steps > 5, "{steps} steps: it did not go in slices");
        assert_eq!(sorted, expected);
    }

    #[test]
    fn a_step_with_time_left_runs_to_the_end() {
        let mut load = Resumable::new(count(10_000));
        let far = Instant::now() + Duration::from_secs(3600);
        assert_eq!(load.step(far), Some((0..10_000).sum()));
    }
}

//! Sorting off the hot path. Each use of the standard library's sorts with another item
//! type or comparator is one more copy of the sort in the binary (4-8 KB each; 270 KB of
//! sorts in all before this module and the paced sorts' fixes, 170 KB after). The short
//! lists sorted once per run or per request (the profile's libraries and modules, a
//! request's modules, cache entries, the dyld cache's images, the CI summary) share one
//! copy here instead: positions are sorted through a `dyn` comparator, then the items are
//! put in that order. Not for per-address work: a call through a pointer per comparison
//! costs there.

use std::cmp::Ordering;

/// `v.sort_by(cmp)`: stable, the same order.
pub fn sort_by<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let order = positions(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    let mut items: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    v.extend(order.into_iter().filter_map(|i| items[i].take()));
}

/// `v.sort_by_key(key)`: stable, the same order.
pub fn sort_by_key<T, K: Ord>(v: &mut Vec<T>, mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// The positions `0..n` in the order `cmp` gives them (equal ones ascending): the one
/// sort in the binary that all of this module's callers share.
fn positions(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

#[cfg(test)]
mod tests {
    #[test]
    fn orders_as_the_standard_sorts_do() {
        // Many equal keys, so stability shows: (key, original position).
        let items: Vec<(u32, usize)> = (0..5000)
            .map(|i| ((i as u32).wrapping_mul(2_654_435_761) % 97, i))
            .collect();
        let mut expected = items.clone();
        expected.sort_by_key(|a| a.0);
        let mut got = items.clone();
        super::sort_by_key(&mut got, |a| a.0);
        assert_eq!(got, expected);
        let mut expected = items.clone();
        expected.sort_by_key(|a| std::cmp::Reverse(a.0));
        let mut got = items;
        super::sort_by(&mut got, |a, b| b.0.cmp(&a.0));
        assert_eq!(got, expected);
    }
}

//! Sorting and searching the lists a trace gives nearly in order.

/// Sorts `v` by `key`, which must order any two items that differ (then the result is the one
/// `sort_unstable_by_key` gives). A trace's ops and runtime calls come nearly in order: the
/// exceptions are taken out, sorted and merged back from the end, so that only they are
/// sorted, and in place but for them. An exception comes late with an early key (a step's
/// ProfilerStep span, written when it closes) or early with a late key (the same span's
/// External id, by start: above its step's ops'); the latter is seen as a kept item above the
/// item after it but not above the one before it. Where more than one in 32 items break the
/// order, the whole list is sorted as before (the items taken out by then, at most a 32nd of
/// the list, are the memory this costs).
pub fn sort_nearly_sorted<T: Copy, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    merge_strays(v, key);
}

/// [`sort_nearly_sorted`]; returns the items taken out and merged back, or None where the
/// whole list was sorted.
fn merge_strays<T: Copy, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) -> Option<usize> {
    let n = v.len();
    let mut strays: Vec<T> = Vec::new();
    let mut last: Option<K> = None;
    let mut kept = 0;
    for i in 0..n {
        let (x, k) = (v[i], key(&v[i]));
        if last.as_ref().is_none_or(|l| *l <= k) {
            v[kept] = x;
            kept += 1;
            last = Some(k);
            continue;
        }
        if kept == 1 || key(&v[kept - 2]) <= k {
            // The last kept item is the one out of order: it makes way for this one.
            strays.push(v[kept - 1]);
            v[kept - 1] = x;
            last = Some(k);
        } else {
            strays.push(x);
        }
        if strays.len() > n / 32 {
            // Back to a permutation of the list (`kept + strays` items fill `..=i`), then sorted.
            v[kept..=i].copy_from_slice(&strays);
            v.sort_unstable_by_key(key);
            return None;
        }
    }
    let taken = strays.len();
    strays.sort_unstable_by_key(&key);
    let (mut a, mut b) = (kept, strays.len());
    while b > 0 {
        let out = a + b - 1;
        if a > 0 && key(&v[a - 1]) > key(&strays[b - 1]) {
            v[out] = v[a - 1];
            a -= 1;
        } else {
            v[out] = strays[b - 1];
            b -= 1;
        }
    }
    Some(taken)
}

/// `v.sort_unstable_by_key(key)` (keys distinct, so the one order), after a pass that computes
/// each key once: a list already in order (a stream's rows, mostly) is left as it is, where the
/// sort's own check computes two keys a comparison (a row's start is decoded for each).
pub fn sort_unless_sorted<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> K) {
    let mut last: Option<K> = None;
    for x in v.iter() {
        let k = key(x);
        if last.as_ref().is_some_and(|l| *l > k) {
            v.sort_unstable_by_key(key);
            return;
        }
        last = Some(k);
    }
}

/// `v.partition_point(pred)`, searched outward from `*hint` (where the previous search ended),
/// and left there: where searches come nearly in order (a stream's rows, a thread's launches),
/// each takes a few steps instead of a binary search over the whole list.
pub fn partition_point_from<T>(v: &[T], hint: &mut usize, pred: impl Fn(&T) -> bool) -> usize {
    let h = (*hint).min(v.len());
    let mut step = 1;
    // The point lies in `lo..=hi`: `pred` holds before `lo` and fails from `hi` (or `hi` is the end).
    let (lo, hi) = if h < v.len() && pred(&v[h]) {
        while h + step < v.len() && pred(&v[h + step]) {
            step *= 2;
        }
        (h + step / 2 + 1, (h + step).min(v.len()))
    } else {
        while step <= h && !pred(&v[h - step]) {
            step *= 2;
        }
        ((h + 1).saturating_sub(step), h - step / 2)
    };
    let k = lo + v[lo..hi].partition_point(pred);
    *hint = k;
    k
}

#[cfg(test)]
mod tests {
    use super::{merge_strays, partition_point_from, sort_nearly_sorted, sort_unless_sorted};

    /// The same order as a plain sort, whatever the share out of order (the strays merged in,
    /// or the whole list sorted), at lengths from 0 to 1000.
    #[test]
    fn sorts_as_a_plain_sort_does() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for n in [0usize, 1, 2, 3, 8, 9, 50, 257, 1000] {
            for out_of_order in [0u32, 1, 5, 12, 40, 100] {
                let v: Vec<(u32, u32)> = (0..n as u32)
                    .map(|i| if next() % 100 < out_of_order { (next() % (n as u32 + 1), i) } else { (i, i) })
                    .collect();
                let mut want = v.clone();
                want.sort_unstable();
                let mut got = v.clone();
                sort_nearly_sorted(&mut got, |&x| x);
                assert_eq!(got, want, "n {n}, {out_of_order}% out of order");
            }
        }
    }

    /// In order already, out of order at the start, the middle or the end: the plain sort's
    /// order.
    #[test]
    fn sorts_unless_sorted_as_a_plain_sort_does() {
        let sorted: Vec<u32> = (0..50).collect();
        for swap in [None, Some(0), Some(24), Some(48)] {
            let mut v = sorted.clone();
            if let Some(k) = swap {
                v.swap(k, k + 1);
            }
            let calls = std::cell::Cell::new(0);
            sort_unless_sorted(&mut v, |&x| {
                calls.set(calls.get() + 1);
                x
            });
            assert_eq!(v, sorted);
            // In order: one key an item, and no sort.
            if swap.is_none() {
                assert_eq!(calls.get(), sorted.len());
            }
        }
    }

    /// A late item with an early key (a ProfilerStep span written when its step closes) lands
    /// before the ones it belongs before, and equal keys stay together.
    #[test]
    fn moves_a_late_early_item_forward() {
        let mut v = vec![(2, 'a'), (3, 'b'), (3, 'c'), (1, 'p'), (4, 'd'), (0, 'q'), (5, 'e')];
        sort_nearly_sorted(&mut v, |&(k, _)| k);
        assert_eq!(v, vec![(0, 'q'), (1, 'p'), (2, 'a'), (3, 'b'), (3, 'c'), (4, 'd'), (5, 'e')]);
    }

    /// Ids by start (a step's span before its ops, its id above theirs: 66, 1, 2, ..., 65,
    /// 10000066, 10000001, ...): one item taken out a step, not every op after the span.
    #[test]
    fn takes_out_an_early_item_with_a_late_key() {
        let steps = 100i64;
        let v: Vec<i64> = (0..steps)
            .flat_map(|s| std::iter::once(s * 10_000_000 + 66).chain((1..=65).map(move |k| s * 10_000_000 + k)))
            .collect();
        let mut want = v.clone();
        want.sort_unstable();
        let mut got = v.clone();
        assert_eq!(merge_strays(&mut got, |&x| x), Some(steps as usize));
        assert_eq!(got, want);
        // A spike as the first item and as the last but one, and a late item with an early key.
        let mut got: Vec<i64> = std::iter::once(50).chain((1..=99).filter(|&k| k != 50)).collect();
        got.extend([500, 100, 0]);
        let mut want = got.clone();
        want.sort_unstable();
        assert_eq!(merge_strays(&mut got, |&x| x), Some(3));
        assert_eq!(got, want);
    }

    /// The point a plain binary search finds, from any hint: before, at, after, past the end.
    #[test]
    fn partition_point_from_finds_what_a_binary_search_finds() {
        let v: Vec<i64> = (0..500).map(|k| k * 4 + (k % 3)).collect();
        let mut seed = 3u64;
        let mut hint = 0;
        for round in 0..20_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = (seed >> 33) as i64 % 2100 - 50;
            if round % 7 == 0 {
                hint = (seed >> 20) as usize % 600;
            }
            let got = partition_point_from(&v, &mut hint, |&x| x < t);
            assert_eq!(got, v.partition_point(|&x| x < t), "t {t}");
            assert_eq!(hint, got);
        }
        let mut hint = 3;
        assert_eq!(partition_point_from(&[] as &[i64], &mut hint, |&x| x < 1), 0);
    }
}

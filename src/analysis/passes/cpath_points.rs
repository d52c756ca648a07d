//! A thread's instants in the critical path's graph: made from its items, and looked up.

use crate::analysis::model::sort::partition_point_from;
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A CPU interval on a thread: an op (rank 0), a runtime call (1) or a synchronising call (2).
#[derive(Clone, Copy)]
pub(super) struct Item {
    pub start: i64,
    pub end: i64,
    pub name: u32,
    pub rank: u8,
}

/// A thread's instants (ascending) and the node of the first.
pub(super) struct Points {
    pub pts: Vec<i64>,
    pub base: u32,
    /// Where the last lookup ended: a stream's launches come in time order, so the next is
    /// near it.
    pub hint: Cell<usize>,
}

impl Points {
    /// The node at instant `t`, if the thread has one. Searched outward from the last lookup
    /// (a binary search over the whole thread per GPU row cost 4-5 ms more of the path's
    /// 110 ms on a 500 MB trace).
    pub fn node_at(&self, t: i64) -> Option<u32> {
        let mut hint = self.hint.get();
        let k = partition_point_from(&self.pts, &mut hint, |&p| p < t);
        self.hint.set(hint);
        (self.pts.get(k) == Some(&t)).then(|| self.base + k as u32)
    }
}

/// Every start and end of `items` (sorted by start), ascending and distinct. The ends come
/// from a min-heap of the open items' ends, as deep as the nesting, instead of sorting all
/// 2n instants (that sort was a third of the threads' chains). An item ending before it
/// starts (hostile input) would put an end behind the sweep: then they are sorted.
pub(super) fn instants(items: &[Item]) -> Vec<i64> {
    if items.iter().any(|i| i.end < i.start) {
        let mut pts: Vec<i64> = items.iter().flat_map(|i| [i.start, i.end]).collect();
        pts.sort_unstable();
        pts.dedup();
        return pts;
    }
    let mut pts = Vec::with_capacity(2 * items.len());
    let mut ends: BinaryHeap<Reverse<i64>> = BinaryHeap::new();
    let mut next = 0;
    loop {
        let t = match (items.get(next).map(|i| i.start), ends.peek().map(|e| e.0)) {
            (Some(s), Some(e)) => s.min(e),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => break,
        };
        while ends.peek().is_some_and(|e| e.0 <= t) {
            ends.pop();
        }
        while let Some(i) = items.get(next).filter(|i| i.start <= t) {
            ends.push(Reverse(i.end));
            next += 1;
        }
        if pts.last() != Some(&t) {
            pts.push(t);
        }
    }
    pts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(start: i64, end: i64) -> Item {
        Item { start, end, name: 0, rank: 0 }
    }

    /// The instants are every start and end, sorted and distinct: nested, touching, zero-length
    /// and (hostile) backwards items alike.
    #[test]
    fn instants_are_every_start_and_end_in_order() {
        let cases: Vec<Vec<Item>> = vec![
            vec![],
            vec![item(0, 100), item(0, 50), item(10, 20), item(20, 20), item(50, 60), item(100, 130)],
            vec![item(5, 5), item(5, 9), item(7, 8), item(8, 12), item(30, 31)],
            vec![item(0, 10), item(4, 2), item(6, 20)],
        ];
        for mut items in cases {
            items.sort_by_key(|i| (i.start, Reverse(i.end)));
            let mut want: Vec<i64> = items.iter().flat_map(|i| [i.start, i.end]).collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(instants(&items), want, "{:?}", items.iter().map(|i| (i.start, i.end)).collect::<Vec<_>>());
        }
    }

    /// A lookup finds what a binary search finds, in any order of lookups (forward, back, far,
    /// absent, past either end).
    #[test]
    fn node_at_finds_what_a_binary_search_finds() {
        let pts: Vec<i64> = (0..300).map(|k| k * 4 + (k % 3)).collect();
        let p = Points { pts: pts.clone(), base: 1000, hint: Cell::new(0) };
        let mut seed = 11u64;
        for _ in 0..5000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = (seed >> 33) as i64 % 1300 - 50;
            let want = pts.binary_search(&t).ok().map(|k| 1000 + k as u32);
            assert_eq!(p.node_at(t), want, "t {t}");
        }
        assert_eq!(Points { pts: vec![], base: 0, hint: Cell::new(0) }.node_at(5), None);
    }
}

//! What some ops carry (their work from shapes, their collective's metadata), by op: sorted by
//! op (an index into the op tree), and found from where the last search ended. The passes ask
//! in row order, and consecutive rows' ops are the same or next to each other, so most
//! searches end at once, in memory just read (a hash map was a cache miss a row: 3-4% of the
//! CPU time of a one-thread read of 1 GB).

/// Values by op, sorted by op.
#[derive(Debug, Clone, PartialEq)]
pub struct ByOp<T> {
    entries: Vec<(u32, T)>,
}

impl<T> Default for ByOp<T> {
    fn default() -> Self {
        ByOp { entries: Vec::new() }
    }
}

impl<T> ByOp<T> {
    /// From `(op, value)` pairs in increasing op order (each op once).
    pub fn from_sorted(entries: Vec<(u32, T)>) -> ByOp<T> {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        ByOp { entries }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The ops that carry a value, in increasing order.
    pub fn ops(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().map(|e| e.0)
    }

    /// The value at position `k` (from [`ByOp::find`]).
    pub fn at(&self, k: usize) -> &T {
        &self.entries[k].1
    }

    pub fn get(&self, op: u32) -> Option<&T> {
        let mut finger = 0;
        self.find(op, &mut finger).map(|k| self.at(k))
    }

    /// The position of `op`'s value, searched from `finger` (where the last search ended,
    /// updated): the entry there and the next are looked at first, the whole list only after.
    pub fn find(&self, op: u32, finger: &mut usize) -> Option<usize> {
        let e = &self.entries;
        // The last entry at or below `op`, if `k` is it.
        let ends_at = |k: usize| e.get(k).is_some_and(|x| x.0 <= op) && e.get(k + 1).is_none_or(|x| x.0 > op);
        let k = if ends_at(*finger) {
            *finger
        } else if ends_at(*finger + 1) {
            *finger + 1
        } else {
            e.partition_point(|x| x.0 <= op).checked_sub(1)?
        };
        *finger = k;
        (e[k].0 == op).then_some(k)
    }
}

#[cfg(test)]
mod tests {
    use super::ByOp;

    #[test]
    fn every_search_order_finds_what_a_map_finds() {
        let ops = [3u32, 4, 5, 9, 20, 21, 40];
        let by = ByOp::from_sorted(ops.iter().map(|&o| (o, o * 10)).collect());
        // Ascending, repeated, descending, jumping and past both ends, from one finger.
        let asks: Vec<u32> = (0..45).chain((0..45).rev()).chain([5, 5, 40, 0, 21, 3, 44, 9, 9, 4, 20, 2]).collect();
        let mut finger = 0;
        for op in asks {
            let k = by.find(op, &mut finger);
            assert_eq!(k.map(|k| *by.at(k)), ops.contains(&op).then_some(op * 10), "op {op}");
            assert_eq!(by.get(op).copied(), ops.contains(&op).then_some(op * 10), "op {op}");
        }
        let empty = ByOp::<u32>::default();
        assert_eq!(empty.find(3, &mut 7), None);
        assert_eq!(by.ops().collect::<Vec<_>>(), ops);
    }
}

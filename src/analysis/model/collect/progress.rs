//! Growing the per-event lists to the size the input's progress predicts.
//!
//! A list that doubles as it grows is copied into a block twice as large while the old one is
//! still held. In a wasm memory (the page's worker) the copy lands above everything else and
//! the old block stays a hole that only smaller blocks reuse, so the ops' and the runtime
//! calls' lists, doubling side by side, set the worker's peak on a large trace. Where the
//! input's size is known, a full list grows instead to its length extrapolated to the whole
//! input (plus 5%), at least 1.25x and at most 2x: a trace writes its kinds of event in a
//! steady mix, so past about half the input the estimate is close to the final length and the
//! last copy is about the right size rather than up to twice it. Emulated
//! (`examples/wasm_heap.rs`) on a 2 GB `gen_trace.py` trace: 309 -> 267 MiB; reserving the
//! exact final sizes up front would give 267 as well. Capacity only: no result changes.

/// Bytes of the input read so far, of how many (`total` 0: not known).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub read: u64,
    pub total: u64,
}

impl Progress {
    /// Makes room for one more item in `v`.
    #[inline(always)]
    pub fn make_room<T>(self, v: &mut Vec<T>) {
        if v.len() == v.capacity() && self.total > 0 && self.read > 0 {
            v.reserve_exact(self.room(v.len()));
        }
    }

    /// Makes room in `v` for `more` items at once (a later part's, joined; `read` then counts
    /// the input up to that part's end): a list that must grow grows to its length after them
    /// extrapolated to the whole input, plus 5%, at most twice that length.
    pub fn make_room_for<T>(self, v: &mut Vec<T>, more: usize) {
        let need = v.len().saturating_add(more);
        if need > v.capacity() && self.total > 0 && self.read > 0 {
            v.reserve_exact(self.estimate(need).clamp(need, need.saturating_mul(2)) - v.len());
        }
    }

    /// How many items a full list of `len` grows by.
    #[cold]
    fn room(self, len: usize) -> usize {
        // The smallest lists grow by 16 at least.
        self.estimate(len).clamp(len + len / 4 + 16, 2 * len + 16) - len
    }

    /// A list's length `len` now, extrapolated to the whole input, plus 5% (`as` saturates:
    /// a huge estimate is then clamped by the caller).
    fn estimate(self, len: usize) -> usize {
        (len as f64 * (self.total as f64 / self.read as f64) * 1.05) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_list_grows_to_its_extrapolated_length_within_one_and_a_quarter_and_twice() {
        let at = |read, total| Progress { read, total };
        // Half read: the estimate is twice the length (plus 5%), so at most 2x.
        assert_eq!(at(50, 100).room(1000), 1016);
        // 60% read: the length extrapolated, plus 5% (1000 / 0.6 * 1.05 = 1750).
        assert_eq!(at(60, 100).room(1000), 750);
        // Past what the estimate says is needed (the mix changed): at least 1.25x.
        assert_eq!(at(99, 100).room(1000), 266);
        assert_eq!(at(200, 100).room(1000), 266);
        // Empty lists start at 16.
        assert_eq!(at(1, 1 << 40).room(0), 16);
        let mut v: Vec<u8> = vec![1; 1000];
        v.shrink_to_fit();
        at(60, 100).make_room(&mut v);
        assert!((1750..1800).contains(&v.capacity()), "{}", v.capacity());
        // Unknown size: left to Vec's own doubling.
        let mut w: Vec<u8> = vec![1; 1000];
        w.shrink_to_fit();
        Progress::default().make_room(&mut w);
        assert_eq!(w.capacity(), 1000);
    }

    #[test]
    fn a_list_joined_to_grows_to_its_length_after_the_part_extrapolated() {
        let at = |read, total| Progress { read, total };
        let mut v: Vec<u8> = vec![1; 1000];
        v.shrink_to_fit();
        // A third of the input joined after the first: 2000 of 3000 read, 2000 items needed,
        // so 3000 + 5%.
        at(2000, 3000).make_room_for(&mut v, 1000);
        assert!((3150..3200).contains(&v.capacity()), "{}", v.capacity());
        // Room enough already: unchanged.
        let cap = v.capacity();
        at(2000, 3000).make_room_for(&mut v, 100);
        assert_eq!(v.capacity(), cap);
        // At most twice what is needed; at least what is needed; unknown size: as Vec would.
        let mut w: Vec<u8> = Vec::new();
        at(1, 1 << 40).make_room_for(&mut w, 10);
        assert!((20..24).contains(&w.capacity()), "{}", w.capacity());
        let mut w: Vec<u8> = Vec::new();
        at(200, 100).make_room_for(&mut w, 10);
        assert!((10..16).contains(&w.capacity()), "{}", w.capacity());
        let mut w: Vec<u8> = Vec::new();
        at(0, 0).make_room_for(&mut w, 10);
        assert!(w.capacity() == 0);
    }
}

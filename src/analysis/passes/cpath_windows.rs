//! Which rows, op spans, runtime calls and synchronising calls fall in each step window, found
//! once for all steps. Filtering every list once per step made the critical path cost steps x
//! events: on a 300 MB trace of about 3,600 steps it was half of a one-thread read.

use super::cpath_graph::Inputs;

/// The indices of what each window holds, in the lists' own order (as a filter gives them);
/// 4 bytes each (the lists hold at most `limits::MAX_ROWS` of a kind).
pub(super) struct InWindows {
    pub rows: PerWindow,
    pub spans: PerWindow,
    pub runtime: PerWindow,
    pub syncs: PerWindow,
}

/// Each window's indices, all windows' in one list (counted first, then filled): a vector per
/// window grown by pushes held up to twice its items, 24 k of them at 2 GB of trace.
#[derive(Debug)]
pub(super) struct PerWindow {
    /// Window `w`'s indices are `items[from[w]..from[w + 1]]`.
    from: Vec<u32>,
    items: Vec<u32>,
}

impl std::ops::Index<usize> for PerWindow {
    type Output = [u32];
    fn index(&self, w: usize) -> &[u32] {
        &self.items[self.from[w] as usize..self.from[w + 1] as usize]
    }
}

/// One item: a point `(t, t)` belongs to a window `[s, e)` when `s <= t < e`; an interval
/// `(a, b)` when `a < e && b > s`.
#[derive(Clone, Copy)]
enum Item {
    Point(i64),
    Span(i64, i64),
}

impl Item {
    fn meets(self, s: i64, e: i64) -> bool {
        match self {
            Item::Point(t) => s <= t && t < e,
            Item::Span(a, b) => a < e && b > s,
        }
    }
}

impl InWindows {
    /// A GPU row falls in the window of its [`Inputs::key`].
    pub fn new(x: &Inputs, windows: &[(i64, i64)]) -> Self {
        InWindows {
            rows: assign(windows, || (0..x.c.gpu.len()).map(|i| Item::Point(x.key(i)))),
            spans: assign(windows, || x.at.ops.spans.iter().map(|o| Item::Span(o.start, o.end))),
            runtime: assign(windows, || x.runtime.iter().map(|r| Item::Point(r.start))),
            syncs: assign(windows, || x.c.syncs.iter().map(|y| Item::Point(y.start))),
        }
    }
}

/// Each item's windows. Steps are sorted and do not overlap, so a binary search finds the
/// first window an item can meet and the walk stops at the first it cannot; windows that
/// overlap (a hand-made trace) are each tested, as a filter per window would.
fn assign<I: Iterator<Item = Item>>(windows: &[(i64, i64)], items: impl Fn() -> I) -> PerWindow {
    let ordered = windows.windows(2).all(|w| w[0].0 <= w[0].1 && w[0].1 <= w[1].0);
    let mut count = vec![0u32; windows.len() + 1];
    let mut hint = 0;
    for item in items() {
        each_window(windows, (ordered, &mut hint), item, |w| count[w + 1] += 1);
    }
    for w in 1..count.len() {
        count[w] += count[w - 1];
    }
    let mut next = count.clone();
    let mut out = vec![0u32; *count.last().unwrap_or(&0) as usize];
    for (i, item) in items().enumerate() {
        each_window(windows, (ordered, &mut hint), item, |w| {
            out[next[w] as usize] = i as u32;
            next[w] += 1;
        });
    }
    PerWindow { from: count, items: out }
}

/// Calls `f` with each window `item` meets, in order. `hint`: the first window the previous
/// item could meet; items come nearly in time order, so it or the next is usually this one's.
#[inline]
fn each_window(windows: &[(i64, i64)], (ordered, hint): (bool, &mut usize), item: Item, mut f: impl FnMut(usize)) {
    if !ordered {
        for (w, &(s, e)) in windows.iter().enumerate() {
            if item.meets(s, e) {
                f(w);
            }
        }
        return;
    }
    let (Item::Point(t) | Item::Span(t, _)) = item;
    // The first window ending after `t` (the ends ascend): the hint's or the next, checked, else
    // a binary search.
    let first_after =
        |w: usize| w <= windows.len() && (w == windows.len() || windows[w].1 > t) && (w == 0 || windows[w - 1].1 <= t);
    let from = if first_after(*hint) {
        *hint
    } else if first_after(*hint + 1) {
        *hint + 1
    } else {
        windows.partition_point(|&(_, e)| e <= t)
    };
    *hint = from;
    for (w, &(s, e)) in windows.iter().enumerate().skip(from) {
        if !item.meets(s, e) {
            // A point meets one window at most; a span none after the first it misses
            // (every later window starts later still).
            if matches!(item, Item::Point(_)) || s >= item_end(item) {
                break;
            }
            continue;
        }
        f(w);
        if matches!(item, Item::Point(_)) {
            break;
        }
    }
}

fn item_end(item: Item) -> i64 {
    match item {
        Item::Point(t) => t,
        Item::Span(_, b) => b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index gives what a filter per window gives, on ordered and overlapping windows.
    #[test]
    fn equals_a_filter_per_window() {
        let items: Vec<Item> = (0..400)
            .map(|i: i64| {
                let a = (i * 37) % 1000 - 50;
                if i % 3 == 0 {
                    Item::Point(a)
                } else {
                    Item::Span(a, a + (i * 13) % 400)
                }
            })
            .collect();
        let ordered: Vec<(i64, i64)> = vec![(0, 100), (100, 250), (250, 250), (300, 700), (700, 1000)];
        let overlapping: Vec<(i64, i64)> = vec![(0, 500), (100, 300), (250, 900)];
        // In time order too, as a trace's items mostly come (the previous item's window is
        // then the hint that holds).
        let mut sorted = items.clone();
        sorted.sort_by_key(|&i| match i {
            Item::Point(t) | Item::Span(t, _) => t,
        });
        for items in [items, sorted] {
            for windows in [&ordered, &overlapping, &vec![(i64::MIN, i64::MAX)], &vec![]] {
                let got = assign(windows, || items.iter().copied());
                for (w, &(s, e)) in windows.iter().enumerate() {
                    let want: Vec<u32> = (0..items.len() as u32).filter(|&i| items[i as usize].meets(s, e)).collect();
                    assert_eq!(got[w], want[..], "window {w} of {windows:?}");
                }
                assert_eq!(got.from.len(), windows.len() + 1);
            }
        }
    }
}

//! Which rows, op spans, runtime calls and synchronising calls fall in each step window, found
//! once for all steps. Filtering every list once per step made the critical path cost steps x
//! events: on a 300 MB trace of about 3,600 steps it was half of a one-thread read.

use super::cpath_graph::Inputs;

/// The indices of what each window holds, in the lists' own order (as a filter gives them).
#[derive(Default)]
pub(super) struct InWindows {
    pub rows: Vec<Vec<usize>>,
    pub spans: Vec<Vec<usize>>,
    pub runtime: Vec<Vec<usize>>,
    pub syncs: Vec<Vec<usize>>,
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
    /// `key[i]`: the time that places GPU row `i` in a step (its launch, else its start).
    pub fn new(x: &Inputs, key: &[i64], windows: &[(i64, i64)]) -> Self {
        let spans = x.at.ops.spans.iter().map(|o| Item::Span(o.start, o.end));
        InWindows {
            rows: assign(windows, key.iter().map(|&t| Item::Point(t))),
            spans: assign(windows, spans),
            runtime: assign(windows, x.runtime.iter().map(|r| Item::Point(r.start))),
            syncs: assign(windows, x.c.syncs.iter().map(|y| Item::Point(y.start))),
        }
    }
}

/// Each item's windows. Steps are sorted and do not overlap, so a binary search finds the
/// first window an item can meet and the walk stops at the first it cannot; windows that
/// overlap (a hand-made trace) are each tested, as a filter per window would.
fn assign(windows: &[(i64, i64)], items: impl Iterator<Item = Item>) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new(); windows.len()];
    let ordered = windows.windows(2).all(|w| w[0].0 <= w[0].1 && w[0].1 <= w[1].0);
    for (i, item) in items.enumerate() {
        if !ordered {
            for (w, &(s, e)) in windows.iter().enumerate() {
                if item.meets(s, e) {
                    out[w].push(i);
                }
            }
            continue;
        }
        let from = match item {
            Item::Point(t) | Item::Span(t, _) => windows.partition_point(|&(_, e)| e <= t),
        };
        for (w, &(s, e)) in windows.iter().enumerate().skip(from) {
            if !item.meets(s, e) {
                // A point meets one window at most; a span none after the first it misses
                // (every later window starts later still).
                if matches!(item, Item::Point(_)) || s >= item_end(item) {
                    break;
                }
                continue;
            }
            out[w].push(i);
            if matches!(item, Item::Point(_)) {
                break;
            }
        }
    }
    out
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
        for windows in [ordered, overlapping, vec![(i64::MIN, i64::MAX)], vec![]] {
            let got = assign(&windows, items.iter().copied());
            for (w, &(s, e)) in windows.iter().enumerate() {
                let want: Vec<usize> = (0..items.len()).filter(|&i| items[i].meets(s, e)).collect();
                assert_eq!(got[w], want, "window {w} of {windows:?}");
            }
        }
    }
}

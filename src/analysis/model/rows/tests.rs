use super::columns::*;
use super::*;

fn row(start: i64, dur: i64, stream: i32) -> GpuRow {
    GpuRow { start, dur, name: 3, device: 0, stream, kind: GpuKind::Kernel }
}

#[test]
fn values_that_do_not_fit_are_kept_exactly() {
    let mut g = GpuRows::default();
    let starts = [1_700_000_000_000_000_000, 5, i64::MAX - 7, -40, 1_700_000_000_000_000_001];
    for (k, &s) in starts.iter().enumerate() {
        g.push(row(s, [0, 1 << 40, 9, 0, 3][k], k as i32), [NONE, 1 << 35, 0, -2, 7][k], NONE);
    }
    for (k, &s) in starts.iter().enumerate() {
        assert_eq!(g.start(k), s);
        assert_eq!(g.get(k).stream, k as i32);
    }
    assert_eq!(g.get(1).dur, 1 << 40);
    assert_eq!((0..5).map(|i| g.correlation(i)).collect::<Vec<_>>(), [NONE, 1 << 35, 0, -2, 7]);
    assert_eq!(g.external(4), NONE);
    // Keep rows 1 and 3, clipped.
    let index = g.retain_clipped(|r| (r.stream % 2 == 1).then_some((r.start + 1, 2)));
    assert_eq!(index, [u32::MAX, 0, u32::MAX, 1, u32::MAX]);
    assert_eq!((g.len(), g.start(0), g.start(1), g.get(1).dur), (2, 6, -39, 2));
    assert_eq!((g.correlation(0), g.correlation(1)), (1 << 35, -2));
}

#[test]
fn rows_in_time_order_keep_one_base_a_block_and_no_selector() {
    let mut g = GpuRows::default();
    for i in 0..10_000i64 {
        g.push(row(1_700_000_000_000_000_000 + i * 50_000, 5, 7), NONE, NONE);
    }
    assert_eq!(g.start.bases.len(), 3);
    assert!(g.start.base_of.iter().all(Option::is_none));
    assert!((0..10_000).all(|i| g.start(i) == 1_700_000_000_000_000_000 + i as i64 * 50_000));
}

#[test]
fn rows_far_apart_in_time_share_a_block_without_the_side_table() {
    // Ten runs of rows ten seconds apart, interleaved as a generator writes steps.
    let mut g = GpuRows::default();
    let starts: Vec<i64> = (0..5000).map(|i| (i % 10) * 10_000_000_000 + i * 1000).collect();
    for &s in &starts {
        g.push(row(s, 5, 7), NONE, NONE);
    }
    assert!(g.start.offset.wide.is_empty(), "{} rows in the side table", g.start.offset.wide.len());
    assert!((0..starts.len()).all(|i| g.start(i) == starts[i]));
    // More distinct times in a block than it has bases: the rest are kept exactly too.
    let mut g = GpuRows::default();
    let starts: Vec<i64> = (0..300).map(|i| i * 10_000_000_000).collect();
    for &s in &starts {
        g.push(row(s, 5, 7), NONE, NONE);
    }
    assert_eq!(g.start.offset.wide.len(), 300 - MAX_BASES);
    assert!((0..starts.len()).all(|i| g.start(i) == starts[i]));
    let index = g.retain_clipped(|r| (r.start % 20_000_000_000 == 0).then_some((r.start + 3, r.dur)));
    assert_eq!(g.len(), 150);
    assert!((0..150).all(|k| g.start(k) == starts[2 * k] + 3 && index[2 * k] == k as u32));
}

#[test]
fn many_lanes() {
    let mut g = GpuRows::default();
    let n = LANE_WIDE as i32 + 10;
    for s in 0..n {
        g.push(row(s as i64, 1, s), NONE, NONE);
    }
    assert!((0..n).all(|s| g.get(s as usize).stream == s));
    g.retain_clipped(|r| (r.stream % 3 == 0).then_some((r.start, r.dur)));
    assert!(g.iter().enumerate().all(|(i, r)| r.stream == 3 * i as i32));
}

#[test]
fn ids_past_four_billion_stay_out_of_the_side_table() {
    // As a long trace (or gen_trace.py's steps) numbers them: far past 2^32, close in a block;
    // a block may open with rows that carry none.
    let mut g = GpuRows::default();
    let ids: Vec<i64> =
        (0..10_000i64).map(|i| if i % 4096 < 3 { NONE } else { 79_720_000_000 + i * 3 - (i % 7) * 1000 }).collect();
    for (i, &c) in ids.iter().enumerate() {
        g.push(row(i as i64, 5, 7), c, c.checked_add(1).filter(|_| c != NONE).unwrap_or(NONE));
    }
    assert!(g.correlation.values.wide.is_empty() && g.external.values.wide.is_empty());
    assert!((0..ids.len()).all(|i| g.correlation(i) == ids[i]));
    // Extremes are kept exactly, in the side table; a block's base never moves.
    let odd = [i64::MIN + 1, 5, i64::MAX, -3, 1 << 40];
    let mut h = GpuRows::default();
    for (k, &c) in odd.iter().enumerate() {
        h.push(row(k as i64, 1, 7), c, NONE);
    }
    assert!((0..odd.len()).all(|k| h.correlation(k) == odd[k]));
    // Kept rows move to earlier places (other blocks): their ids stay exact.
    let index = g.retain_clipped(|r| (r.start % 3 == 0).then_some((r.start, r.dur)));
    assert!((0..ids.len()).filter(|i| i % 3 == 0).all(|i| g.correlation(index[i] as usize) == ids[i]));
}

use super::*;

fn op(start: i64, end: i64, name: u32, thread: u32) -> OpRow {
    OpRow { start, end, external: NONE, seq: NONE, name, thread }
}

#[test]
fn ids_are_found_dense_or_spread_and_the_first_index_wins() {
    let dense = [10, 12, 10, NONE, 11];
    let spread = [10, i64::MAX, 10, NONE, -5, i64::MIN + 1];
    let (of_dense, of_spread) = (|i: usize| dense[i], |i: usize| spread[i]);
    let d = IdIndex::new(dense.len(), of_dense);
    let s = IdIndex::new(spread.len(), of_spread);
    assert!(matches!(d, IdIndex::Dense { .. }));
    assert!(matches!(s, IdIndex::Sorted(_)));
    let dg = |id| d.get(id, of_dense);
    assert_eq!([dg(10), dg(11), dg(12), dg(13), dg(9), dg(NONE)], [0, 4, 1, NO, NO, NO]);
    let sg = |id| s.get(id, of_spread);
    assert_eq!([sg(10), sg(i64::MAX), sg(-5), sg(i64::MIN + 1), sg(0)], [0, 1, 4, 5, NO]);
    assert_eq!(sg(NONE), NO);
    let empty = IdIndex::new(1, |_| NONE);
    assert_eq!(empty.get(0, |_| NONE), NO);
    // Many equal ids out of order: still the first index of each.
    let many: Vec<i64> = (0..1000).map(|i| [7, -3, i64::MAX / 2][i % 3]).collect();
    let m = IdIndex::new(many.len(), |i| many[i]);
    assert!(matches!(m, IdIndex::Sorted(_)));
    assert_eq!([m.get(7, |i| many[i]), m.get(-3, |i| many[i]), m.get(i64::MAX / 2, |i| many[i])], [0, 1, 2]);
}

#[test]
fn ids_counted_up_from_several_bases_are_found_by_block() {
    // Three runs (as gen_trace.py's steps), one across a block's edge, one negative, one at
    // the top of the range; repeats, and NONE between them.
    let mut ids: Vec<i64> = Vec::new();
    for base in [200_000_000i64, -7_000, i64::MAX - 3_000, 1_023] {
        ids.extend((0..2_000).map(|k| base + k));
        ids.push(NONE);
        ids.push(base + 5);
    }
    let of = |i: usize| ids[i];
    let index = IdIndex::new(ids.len(), of);
    assert!(matches!(index, IdIndex::Blocks { .. }));
    let sorted = {
        let mut v: Vec<u32> = (0..ids.len() as u32).filter(|&i| ids[i as usize] != NONE).collect();
        v.sort_unstable_by_key(|&i| (ids[i as usize], i));
        IdIndex::Sorted(v)
    };
    let probes = ids.iter().flat_map(|&v| [v, v.wrapping_add(1), v.wrapping_sub(1), v.wrapping_add(5000)]);
    for want in probes.chain([NONE, 0, -1, i64::MAX, 1_022, 1_024]) {
        assert_eq!(index.get(want, of), sorted.get(want, of), "id {want}");
    }
    // Looked up in turn, from where the last lookup ended (a block, a place in the sorted
    // indices), in the ids' order and backwards: the same answers.
    let probes: Vec<i64> = ids
        .iter()
        .flat_map(|&v| [v, v.wrapping_add(1), v.wrapping_sub(1), v.wrapping_add(5000)])
        .chain([NONE, 0, -1, i64::MAX, 1_022, 1_024, 200_000_001])
        .collect();
    for index in [&index, &sorted] {
        let (mut forward, mut backward) = (index.finder(), index.finder());
        for (&a, &b) in probes.iter().zip(probes.iter().rev()) {
            assert_eq!(forward.get(a, of), sorted.get(a, of), "id {a} in turn");
            assert_eq!(backward.get(b, of), sorted.get(b, of), "id {b} backwards");
        }
    }
    // Many equal ids out of order, in turn: still the first index of each.
    let many: Vec<i64> = (0..1000).map(|i| [7, -3, i64::MAX / 2][i % 3]).collect();
    let m = IdIndex::new(many.len(), |i| many[i]);
    let mut finder = m.finder();
    let got: Vec<u32> = [i64::MAX / 2, 7, -3, 7, 8, i64::MAX / 2].iter().map(|&w| finder.get(w, |i| many[i])).collect();
    assert_eq!(got, [2, 0, 1, 0, NO, 2]);
    // The first index of a repeated id.
    assert_eq!(index.get(200_000_005, of), 5);
    // Blocks too many for the ids (one id each): sorted instead.
    let sparse: Vec<i64> = (0..5_000).map(|k| k * 1_000_000).collect();
    assert!(matches!(IdIndex::new(sparse.len(), |i| sparse[i]), IdIndex::Sorted(_)));
}

#[test]
fn intervals_are_half_open() {
    let t = SpanTree::new(vec![op(0, 10, 0, 1), op(10, 20, 1, 1), op(12, 15, 2, 1)]);
    // An op ending where the call starts does not enclose it.
    let at10 = t.innermost(1, 10);
    assert_eq!(t.spans[at10 as usize].name, 1);
    let at13 = t.innermost(1, 13);
    assert_eq!(t.spans[at13 as usize].name, 2);
    assert_eq!(t.innermost(1, 20), NO);
    assert_eq!(t.innermost(2, 13), NO, "other thread");
    assert_eq!(t.chain(at13).map(|i| t.spans[i as usize].name).collect::<Vec<_>>(), [2, 1]);
}

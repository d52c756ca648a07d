use super::*;

fn op(start: i64, end: i64, name: u32, thread: u32) -> OpRow {
    OpRow { start, end, external: NONE, seq: NONE, name, thread }
}

#[test]
fn ids_are_found_dense_or_spread_and_the_first_value_wins() {
    let dense = [(10, 0), (12, 1), (10, 2), (NONE, 3), (11, 4)];
    let spread = [(10, 0), (i64::MAX, 1), (10, 2), (NONE, 3), (-5, 4), (i64::MIN + 1, 5)];
    let d = IdIndex::new(|| dense.iter().copied());
    let s = IdIndex::new(|| spread.iter().copied());
    assert!(matches!(d, IdIndex::Dense { .. }));
    assert!(matches!(s, IdIndex::Sorted(_)));
    assert_eq!([d.get(10), d.get(11), d.get(12), d.get(13), d.get(9), d.get(NONE)], [0, 4, 1, NO, NO, NO]);
    assert_eq!([s.get(10), s.get(i64::MAX), s.get(-5), s.get(i64::MIN + 1), s.get(0)], [0, 1, 4, 5, NO]);
    assert_eq!(s.get(NONE), NO);
    let empty = IdIndex::new(|| [(NONE, 0)].into_iter());
    assert_eq!(empty.get(0), NO);
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

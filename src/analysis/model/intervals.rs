//! Interval arithmetic in integer nanoseconds. Kernels on one stream can overlap
//! (programmatic dependent launch), so busy time is always a union, never a sum.

/// Half-open `[start, end)` intervals.
pub type Span = (i64, i64);

/// Sorts and merges into disjoint, ordered intervals (touching intervals merge). In place:
/// the busy lists hold millions of spans, and a second list of that size was the report
/// build's peak memory.
pub fn union(mut v: Vec<Span>) -> Vec<Span> {
    v.retain(|&(s, e)| e > s);
    v.sort_unstable();
    let mut kept = 0;
    for i in 0..v.len() {
        let (s, e) = v[i];
        if kept > 0 && s <= v[kept - 1].1 {
            v[kept - 1].1 = v[kept - 1].1.max(e);
        } else {
            v[kept] = (s, e);
            kept += 1;
        }
    }
    v.truncate(kept);
    v
}

/// The union of several unions (each disjoint and ordered), merged in one pass without
/// copying them into one list first.
pub fn union_of(lists: &[&[Span]]) -> Vec<Span> {
    let mut at = vec![0usize; lists.len()];
    let mut out: Vec<Span> = Vec::new();
    loop {
        // The list whose next span starts first.
        let next = (0..lists.len()).filter(|&k| at[k] < lists[k].len()).min_by_key(|&k| lists[k][at[k]].0);
        let Some(k) = next else { break };
        let (s, e) = lists[k][at[k]];
        at[k] += 1;
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out.shrink_to_fit();
    out
}

/// Total length of disjoint intervals.
pub fn total(u: &[Span]) -> i64 {
    u.iter().map(|(s, e)| e - s).sum()
}

/// Length of the intersection of two disjoint, ordered interval lists.
pub fn intersection(a: &[Span], b: &[Span]) -> i64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            sum += hi - lo;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_merges_overlaps_and_touching() {
        let u = union(vec![(5, 10), (0, 3), (2, 4), (10, 12), (20, 20), (15, 18)]);
        assert_eq!(u, vec![(0, 4), (5, 12), (15, 18)]);
        assert_eq!(total(&u), 4 + 7 + 3);
    }

    #[test]
    fn union_of_unions_is_the_union_of_all() {
        let a = union(vec![(0, 3), (10, 12), (40, 50)]);
        let b = union(vec![(2, 5), (12, 13), (30, 31)]);
        let c = union(vec![(5, 6), (100, 101)]);
        let all = union([&a[..], &b[..], &c[..]].concat());
        assert_eq!(union_of(&[&a, &b, &c]), all);
        assert_eq!(all, vec![(0, 6), (10, 13), (30, 31), (40, 50), (100, 101)]);
        assert_eq!(union_of(&[&a, &[], &[]]), a);
        assert!(union_of(&[]).is_empty());
    }

    #[test]
    fn intersection_of_lists() {
        let a = union(vec![(0, 10), (20, 30)]);
        let b = union(vec![(5, 25)]);
        assert_eq!(intersection(&a, &b), 5 + 5);
        assert_eq!(intersection(&a, &[]), 0);
    }
}

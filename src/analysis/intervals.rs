//! Interval arithmetic in integer nanoseconds. Kernels on one stream can overlap
//! (programmatic dependent launch), so busy time is always a union, never a sum.

/// Half-open `[start, end)` intervals.
pub type Span = (i64, i64);

/// Sorts and merges into disjoint, ordered intervals (touching intervals merge).
pub fn union(mut v: Vec<Span>) -> Vec<Span> {
    v.retain(|&(s, e)| e > s);
    v.sort_unstable();
    let mut out: Vec<Span> = Vec::with_capacity(v.len() / 2 + 1);
    for (s, e) in v {
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
    fn intersection_of_lists() {
        let a = union(vec![(0, 10), (20, 30)]);
        let b = union(vec![(5, 25)]);
        assert_eq!(intersection(&a, &b), 5 + 5);
        assert_eq!(intersection(&a, &[]), 0);
    }
}

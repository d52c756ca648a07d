//! Units: times are kept in integer nanoseconds inside the analysis and reported in
//! microseconds (f64); shares are percent.

/// Nanoseconds as microseconds.
pub fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// `part` as a percentage of `whole` (0 when `whole` is not positive).
pub fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// A time in microseconds for people: s, ms or us with two decimals where they matter.
pub fn fmt_us(us: f64) -> String {
    let a = us.abs();
    if a >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if a >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else if a >= 10.0 || a == 0.0 {
        format!("{us:.0} us")
    } else {
        format!("{us:.2} us")
    }
}

/// A count with a decimal SI prefix and its unit: `fmt_si(8.19e9, "FLOP")` is "8.19 GFLOP".
pub fn fmt_si(v: f64, unit: &str) -> String {
    const PREFIXES: [(f64, &str); 5] = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    match PREFIXES.iter().find(|(s, _)| v.abs() >= *s) {
        Some((s, p)) => format!("{} {p}{unit}", three_digits(v / s)),
        None => format!("{} {unit}", three_digits(v)),
    }
}

/// Three significant digits for values under 1000 (whole numbers as they are).
fn three_digits(v: f64) -> String {
    match v.abs() {
        a if a == a.trunc() => format!("{v:.0}"),
        a if a < 10.0 => format!("{v:.2}"),
        a if a < 100.0 => format!("{v:.1}"),
        _ => format!("{v:.0}"),
    }
}

#[cfg(test)]
mod si_tests {
    #[test]
    fn si_prefixes() {
        assert_eq!(super::fmt_si(8.19e9, "FLOP"), "8.19 GFLOP");
        assert_eq!(super::fmt_si(27.276e12, "FLOP"), "27.3 TFLOP");
        assert_eq!(super::fmt_si(2e12, "B"), "2 TB");
        assert_eq!(super::fmt_si(512.0, "B"), "512 B");
    }
}

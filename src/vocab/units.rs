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

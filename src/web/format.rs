//! Number formatting for the views: units per magnitude (us / ms / s) as the CLI prints them,
//! percentages to one decimal.

/// A duration in microseconds with a unit that fits its magnitude (the CLI's formatting).
pub fn us(v: f64) -> String {
    crate::text::fmt_us(v)
}

pub fn pct(v: f64) -> String {
    format!("{v:.1}%")
}

/// A count with thin thousands separators (1 234 567).
pub fn count(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// Bytes in decimal units (MB = 10^6 bytes, as the MB/s figure).
pub fn bytes(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2} GB", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1} MB", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.0} kB", v / 1e3)
    } else {
        format!("{v:.0} B")
    }
}

/// Seconds left, rounded for a progress line.
pub fn seconds(s: f64) -> String {
    if !s.is_finite() {
        "…".into()
    } else if s < 1.0 {
        "< 1 s".into()
    } else if s < 90.0 {
        format!("{s:.0} s")
    } else {
        format!("{:.0} min {:.0} s", (s / 60.0).floor(), s % 60.0)
    }
}

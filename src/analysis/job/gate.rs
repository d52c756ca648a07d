//! CI gates on a diff: `step_time>+5%`, `gemm>+10%`, `idle>+2ms`. A limit names a metric of
//! the diff (its id) or a bucket (its id), a direction and a size in percent of A or in time;
//! it is crossed when B moved past it. A limit whose figure the diff does not have (no steps in
//! a run, a bucket in neither) cannot pass: it fails with the reason, so a gate never passes
//! on what it could not see.

use super::diff::{Change, Diff, Metric};
use crate::vocab::{fmt_us, Bucket};
use serde::{Deserialize, Serialize};

/// What a limit is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Metric(Metric),
    Bucket(Bucket),
}

/// How far B may move from A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// Percent of A's figure.
    Pct(f64),
    /// Microseconds (per rank, as the diff's figures).
    Us(f64),
}

/// One limit: `target > +size` (B may not grow by more) or `target < -size` (B may not shrink
/// by more).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    /// As the user wrote it.
    pub text: String,
    pub target: Target,
    /// True for `>`: an increase past `size` crosses it.
    pub up: bool,
    pub size: Size,
}

const METRICS: [(&str, Metric); 7] = [
    ("step_time", Metric::StepTime),
    ("kernel_time", Metric::KernelTime),
    ("busy", Metric::Busy),
    ("idle", Metric::Idle),
    ("span", Metric::Span),
    ("comm", Metric::Comm),
    ("exposed_comm", Metric::ExposedComm),
];

/// The names a limit can use, for messages.
pub fn target_names() -> String {
    let mut v: Vec<&str> = METRICS.iter().map(|m| m.0).collect();
    v.extend(Bucket::ALL.iter().map(|b| b.id()));
    v.join(", ")
}

impl Limit {
    /// Reads `name>+5%`, `name>+2ms`, `name<-10%`, `name>300us` (spaces allowed).
    pub fn parse(text: &str) -> Result<Limit, String> {
        let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let (at, up) = match (t.find('>'), t.find('<')) {
            (Some(i), None) => (i, true),
            (None, Some(i)) => (i, false),
            _ => return Err(format!("'{text}': write NAME>+N% or NAME<-N% (also ms or us)")),
        };
        let (name, rest) = (&t[..at], &t[at + 1..]);
        let target = METRICS
            .iter()
            .find(|m| m.0 == name)
            .map(|m| Target::Metric(m.1))
            .or_else(|| Bucket::ALL.iter().find(|b| b.id() == name).map(|&b| Target::Bucket(b)))
            .ok_or_else(|| format!("'{text}': unknown figure '{name}' (one of: {})", target_names()))?;
        let sign = match rest.chars().next() {
            Some('+') if up => 1,
            Some('-') if !up => 1,
            Some('+' | '-') => return Err(format!("'{text}': use > with + and < with -")),
            _ => 0,
        };
        let rest = &rest[sign..];
        let (number, unit) =
            rest.split_at(rest.find(|c: char| c.is_ascii_alphabetic() || c == '%').unwrap_or(rest.len()));
        let v: f64 = number
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| format!("'{text}': '{number}' is not a size"))?;
        let size = match unit {
            "%" => Size::Pct(v),
            "us" => Size::Us(v),
            "ms" => Size::Us(v * 1e3),
            "s" => Size::Us(v * 1e6),
            _ => return Err(format!("'{text}': the size needs a unit: %, us, ms or s")),
        };
        Ok(Limit { text: text.trim().to_string(), target, up, size })
    }
}

/// A limit against one diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub limit: Limit,
    /// The figure in A and B; None when the diff does not have it.
    pub change: Option<Change>,
    pub passed: bool,
    /// One line: the figures and the verdict.
    pub message: String,
}

fn change_of(d: &Diff, t: Target) -> Option<Change> {
    match t {
        Target::Metric(m) => d.metrics.iter().find(|x| x.metric == m).map(|x| x.change.clone()),
        Target::Bucket(b) => d.buckets.iter().find(|x| x.bucket == b).map(|x| x.change.clone()),
    }
}

/// Checks every limit against the diff.
pub fn check(d: &Diff, limits: &[Limit]) -> Vec<Check> {
    limits
        .iter()
        .map(|l| {
            let Some(c) = change_of(d, l.target) else {
                let why = match l.target {
                    Target::Metric(Metric::StepTime) => "a run has no ProfilerStep spans",
                    _ => "neither run has it",
                };
                return Check {
                    limit: l.clone(),
                    change: None,
                    passed: false,
                    message: format!("{}: cannot be checked ({why}): failed", l.text),
                };
            };
            // Moved in the limit's direction, by this much.
            let moved_us = if l.up { c.delta_us } else { -c.delta_us };
            let crossed = match l.size {
                Size::Us(u) => moved_us > u,
                // From nothing, any growth is past a percentage.
                Size::Pct(_) if c.a_us == 0.0 => moved_us > 0.0,
                Size::Pct(p) => moved_us / c.a_us * 100.0 > p,
            };
            let rel = c.rel_pct.map_or("new".into(), |r| format!("{r:+.1}%"));
            let message = format!(
                "{}: {} -> {} ({rel}): {}",
                l.text,
                fmt_us(c.a_us),
                fmt_us(c.b_us),
                if crossed { "crossed" } else { "ok" }
            );
            Check { limit: l.clone(), change: Some(c), passed: !crossed, message }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_as_written_and_bad_ones_say_why() {
        let l = Limit::parse("step_time>+5%").unwrap();
        assert_eq!((l.target, l.up, l.size), (Target::Metric(Metric::StepTime), true, Size::Pct(5.0)));
        let l = Limit::parse(" gemm > 2ms ").unwrap();
        assert_eq!((l.target, l.up, l.size), (Target::Bucket(Bucket::Gemm), true, Size::Us(2000.0)));
        assert_eq!(Limit::parse("idle<-300us").unwrap().size, Size::Us(300.0));
        for bad in ["step_time", "gemm>+5", "nope>+5%", "gemm>-5%", "gemm>+x%", "gemm>+5%<", "gemm>+-1%", "gemm>+inf%"]
        {
            assert!(Limit::parse(bad).is_err(), "{bad}");
        }
        assert!(Limit::parse("nope>+5%").unwrap_err().contains("step_time"));
    }
}

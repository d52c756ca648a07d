//! The page's view state, which a share link carries: the selected trace, each table's sort,
//! search and unfolded rows, the bucket filter, the compared sets, the user's rules and
//! figures. Pure data (serde, no browser APIs), so it is compiled on every target and the
//! native tests build links with it; the link format itself (share_link) takes it as its
//! generic view part through [`LinkView`], with its bounds and indices checked here.

use crate::analysis::rules::taxonomy::parse_rules;
use crate::report::{Report, TraceReport};
use crate::share_link::{is_default, is_true, yes, LinkError, LinkView, SharedView};
use crate::share_link::{MAX_QUERY, MAX_RANKS, MAX_ROWS, MAX_TRACES};
use crate::vocab::Bucket as BucketId;
use serde::{Deserialize, Serialize};

/// Longest rules text a link may carry.
pub const MAX_RULES_BYTES: usize = 4096;

/// Reads a link's fragment for the page: [`crate::share_link::decode`] with this view state.
pub fn decode(fragment: &str) -> Result<SharedView<ViewState>, LinkError> {
    crate::share_link::decode(fragment)
}

/// Column a top table is sorted by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SortCol {
    #[serde(rename = "n")]
    Name,
    #[default]
    #[serde(rename = "t")]
    Time,
    #[serde(rename = "c")]
    Count,
    #[serde(rename = "m")]
    Mean,
    #[serde(rename = "x")]
    Max,
    /// Achieved TFLOP/s of the row's work.
    #[serde(rename = "f")]
    Tflops,
    /// % of the roof at the row's intensity.
    #[serde(rename = "r")]
    Roof,
}

/// The state of one top table (kernels or ops).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableState {
    #[serde(rename = "c", default, skip_serializing_if = "is_default")]
    pub sort: SortCol,
    /// Descending (the default for numbers).
    #[serde(rename = "d", default = "yes", skip_serializing_if = "is_true")]
    pub desc: bool,
    /// The search text.
    #[serde(rename = "q", default, skip_serializing_if = "String::is_empty")]
    pub query: String,
    /// Indices (in the Report's row order) of rows whose full name is unfolded.
    #[serde(rename = "e", default, skip_serializing_if = "Vec::is_empty")]
    pub expanded: Vec<u32>,
}

impl Default for TableState {
    fn default() -> Self {
        TableState { sort: SortCol::Time, desc: true, query: String::new(), expanded: Vec::new() }
    }
}

/// Everything about what the sender was looking at, besides the data.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewState {
    /// Index of the selected trace (rank) in `Report::traces`.
    #[serde(rename = "t", default, skip_serializing_if = "is_default")]
    pub trace: u32,
    /// The bucket the top tables are filtered to.
    #[serde(rename = "b", default, skip_serializing_if = "Option::is_none")]
    pub bucket: Option<BucketId>,
    #[serde(rename = "k", default, skip_serializing_if = "is_default")]
    pub kernels: TableState,
    #[serde(rename = "o", default, skip_serializing_if = "is_default")]
    pub ops: TableState,
    /// Buckets whose "why" details are unfolded.
    #[serde(rename = "w", default, skip_serializing_if = "Vec::is_empty")]
    pub buckets_open: Vec<BucketId>,
    /// Two runs compared: set A (before) against set B (after).
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    pub compare: Option<CompareSets>,
    /// The user's bucket rules the report was made with (`pattern => bucket` lines).
    #[serde(rename = "r", default, skip_serializing_if = "String::is_empty")]
    pub rules: String,
    /// The peaks and model size the user typed, which re-measure the efficiency figures.
    #[serde(rename = "f", default, skip_serializing_if = "is_default")]
    pub figures: Figures,
}

/// The user's figures for the efficiency section, as typed (empty: the device table's peaks,
/// no analytic MFU). Kept as text so the fields show what was typed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figures {
    /// Peak TFLOP/s for every precision (as `--peak-tflops T`).
    #[serde(rename = "t", default, skip_serializing_if = "String::is_empty")]
    pub tflops: String,
    /// Memory bandwidth, TB/s (as `--peak-tbps`).
    #[serde(rename = "b", default, skip_serializing_if = "String::is_empty")]
    pub tbps: String,
    /// The model's parameters and tokens per step (as `--params`, `--tokens-per-step`).
    #[serde(rename = "n", default, skip_serializing_if = "String::is_empty")]
    pub params: String,
    #[serde(rename = "k", default, skip_serializing_if = "String::is_empty")]
    pub tokens: String,
}

/// A figure field holds at most this many characters.
pub const MAX_FIGURE: usize = 24;

impl Figures {
    pub fn fields(&self) -> [&str; 4] {
        [&self.tflops, &self.tbps, &self.params, &self.tokens]
    }
}

/// Two disjoint sets of traces (indices into `Report::traces`): A, the run before, and B, the
/// run after. One trace on each side is the plain two-trace comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "WCompare", into = "WCompare")]
pub struct CompareSets {
    pub a: Vec<u32>,
    pub b: Vec<u32>,
}

impl CompareSets {
    pub fn pair(a: u32, b: u32) -> CompareSets {
        CompareSets { a: vec![a], b: vec![b] }
    }

    /// Which side trace `i` is on.
    pub fn side(&self, i: u32) -> Option<Side> {
        if self.a.contains(&i) {
            Some(Side::A)
        } else if self.b.contains(&i) {
            Some(Side::B)
        } else {
            None
        }
    }

    /// Puts trace `i` on `side` (None: on neither), keeping each set sorted.
    pub fn assign(&mut self, i: u32, side: Option<Side>) {
        self.a.retain(|&x| x != i);
        self.b.retain(|&x| x != i);
        let set = match side {
            Some(Side::A) => &mut self.a,
            Some(Side::B) => &mut self.b,
            None => return,
        };
        let at = set.partition_point(|&x| x < i);
        set.insert(at, i);
    }

    /// The traces on each side, from each trace's side (None: on neither).
    pub fn from_sides(sides: &[Option<Side>]) -> CompareSets {
        let on = |want: Side| (0..sides.len() as u32).filter(|&i| sides[i as usize] == Some(want)).collect();
        CompareSets { a: on(Side::A), b: on(Side::B) }
    }

    /// The usual split of `traces`: two traces are A then B; two runs of one job dropped
    /// together are split by run ([`CompareSets::by_run`]); otherwise the first half is A and
    /// the second half B.
    pub fn default_for(traces: &[TraceReport]) -> CompareSets {
        CompareSets::by_run(traces).unwrap_or_else(|| CompareSets::halves(traces.len() as u32))
    }

    /// The first `ceil(n/2)` traces in A, the rest in B (with 2 or more traces).
    pub fn halves(n: u32) -> CompareSets {
        let half = n.div_ceil(2).clamp(1, n.saturating_sub(1).max(1));
        CompareSets { a: (0..half).collect(), b: (half..n).collect() }
    }

    /// When every rank appears exactly twice (two runs of one job), each rank's first file (by
    /// name) in A and its second in B.
    pub fn by_run(traces: &[TraceReport]) -> Option<CompareSets> {
        // Traces are sorted by rank then file name, so a rank's two files are neighbours.
        let ranks: Vec<Option<i64>> = traces.iter().map(|t| t.rank).collect();
        let n = ranks.len() as u32;
        let pairs: Vec<&[Option<i64>]> = ranks.chunks(2).collect();
        let two_runs = n > 2
            && n.is_multiple_of(2)
            && ranks.iter().all(Option::is_some)
            && pairs.iter().all(|p| p[0] == p[1])
            && pairs.windows(2).all(|w| w[0][0] != w[1][0]);
        two_runs.then(|| CompareSets { a: (0..n).step_by(2).collect(), b: (1..n).step_by(2).collect() })
    }
}

/// A side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

impl Side {
    pub fn label(self) -> &'static str {
        match self {
            Side::A => "A",
            Side::B => "B",
        }
    }
}

/// On the wire: `[a, b]` for one trace a side (the form older links have), else `[[..], [..]]`.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum WCompare {
    Pair(u32, u32),
    Sets(Vec<u32>, Vec<u32>),
}

impl From<WCompare> for CompareSets {
    fn from(w: WCompare) -> Self {
        match w {
            WCompare::Pair(a, b) => CompareSets::pair(a, b),
            WCompare::Sets(a, b) => CompareSets { a, b },
        }
    }
}

impl From<CompareSets> for WCompare {
    fn from(c: CompareSets) -> Self {
        match (c.a.as_slice(), c.b.as_slice()) {
            ([a], [b]) => WCompare::Pair(*a, *b),
            _ => WCompare::Sets(c.a, c.b),
        }
    }
}

impl LinkView for ViewState {
    fn check(&self, report: Option<&Report>) -> Result<(), String> {
        check_state(self, report)
    }

    fn selected(&self) -> u32 {
        self.trace
    }

    fn for_selected_only(&self) -> Self {
        ViewState { trace: 0, compare: None, ..self.clone() }
    }
}

/// The state's bounds, and with a report its indices.
pub fn check_state(s: &ViewState, report: Option<&Report>) -> Result<(), String> {
    for t in [&s.kernels, &s.ops] {
        if t.query.chars().count() > MAX_QUERY || t.query.chars().any(char::is_control) {
            return Err("search text too long or with control characters".into());
        }
        if t.expanded.len() > MAX_ROWS {
            return Err("too many expanded rows".into());
        }
    }
    if s.buckets_open.len() > BucketId::ALL.len() {
        return Err("too many unfolded buckets".into());
    }
    if let Some(c) = &s.compare {
        if c.a.len() > MAX_RANKS || c.b.len() > MAX_RANKS {
            return Err("too many traces compared".into());
        }
        if c.a.iter().any(|i| c.b.contains(i)) {
            return Err("a trace compared with itself".into());
        }
        let sorted = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
        if !sorted(&c.a) || !sorted(&c.b) {
            return Err("a compared set out of order or repeated".into());
        }
    }
    if s.figures.fields().iter().any(|f| f.chars().count() > MAX_FIGURE || f.chars().any(char::is_control)) {
        return Err("a peak or model figure too long or with control characters".into());
    }
    if s.rules.len() > MAX_RULES_BYTES {
        return Err(format!("bucket rules longer than {MAX_RULES_BYTES} bytes"));
    }
    if let Err(e) = parse_rules(&s.rules) {
        return Err(format!("bucket rules that cannot be read ({e})"));
    }
    if let Some(r) = report {
        let n = r.traces.len() as u32;
        if s.trace >= n.max(1) {
            return Err(format!("trace {} selected of {n}", s.trace));
        }
        if let Some(c) = &s.compare {
            if c.a.iter().chain(&c.b).any(|&i| i >= n) {
                return Err("compared trace out of range".into());
            }
        }
        if let Some(t) = r.traces.get(s.trace as usize) {
            if s.kernels.expanded.iter().any(|&i| i as usize >= t.top_kernels.len())
                || s.ops.expanded.iter().any(|&i| i as usize >= t.top_ops.len())
            {
                return Err("an expanded row that does not exist".into());
            }
        }
    } else if s.trace as usize >= MAX_TRACES {
        return Err("trace index out of range".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share_link::{encode, MAX_FRAGMENT};

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for f in ["", "#", "#x", "#s=", "#s=@@@", "#v=AAAA", "#s=////", "#r=abc", "s=%3Cscript%3E"] {
            let r = decode(f);
            assert!(r.is_err(), "{f}: {r:?}");
        }
        let long = format!("s={}", "A".repeat(MAX_FRAGMENT + 10));
        assert!(matches!(decode(&long), Err(LinkError::TooLong { .. })));
    }

    #[test]
    fn state_only_round_trip() {
        let s = ViewState {
            trace: 3,
            bucket: Some(BucketId::Gemm),
            kernels: TableState { sort: SortCol::Mean, desc: false, query: "gemm".into(), expanded: vec![0, 4] },
            ops: TableState::default(),
            buckets_open: vec![BucketId::Attention],
            compare: Some(CompareSets::pair(0, 2)),
            rules: "attn_fwd* => attention".into(),
            figures: Figures { tflops: String::new(), tbps: "2".into(), params: "1.3e9".into(), tokens: "4096".into() },
        };
        let f = encode(None, &s);
        assert!(f.starts_with("v="));
        assert_eq!(decode(&f).unwrap(), SharedView { state: s, report: None });
        assert!(encode(None, &ViewState::default()).len() < 40);
    }
}

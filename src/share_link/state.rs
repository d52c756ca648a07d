//! The view state a link carries: the selected trace, each table's sort, search and unfolded
//! rows, the bucket filter, the compared sets.

use super::common::*;
use crate::report::{Report, TraceReport};
use crate::vocab::Bucket as BucketId;
use serde::{Deserialize, Serialize};

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

/// What a link opens: the view state, and the summary unless the page reads the trace itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedView {
    pub state: ViewState,
    pub report: Option<Report>,
}

/// Why a fragment could not be opened. Each has its own message for the error screen.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkError {
    /// No `s=` / `v=` fragment at all (not an error for the page: it shows the start screen).
    Absent,
    TooLong {
        len: usize,
    },
    /// Not base64url, or not deflate data (a truncated or edited link).
    Corrupt(&'static str),
    TooLarge,
    /// Valid packing, but the content breaks the schema or its bounds.
    Invalid(String),
    /// A link from an older tracesight (the `#r=` format, or format version 1).
    OldFormat,
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            LinkError::Absent => write!(f, "the link carries no report"),
            LinkError::TooLong { len } => {
                write!(f, "the link's data is {len} characters long; at most {MAX_FRAGMENT} are accepted")
            }
            LinkError::Corrupt(what) => write!(f, "the link's data is damaged ({what}); it may have been cut short"),
            LinkError::TooLarge => write!(f, "the link's data unpacks to more than {} KB", MAX_INFLATED / 1024),
            LinkError::Invalid(why) => write!(f, "the link's data is not a tracesight report: {why}"),
            LinkError::OldFormat => write!(f, "the link was made by an older tracesight; open the trace itself"),
        }
    }
}

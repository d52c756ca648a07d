//! Share links: the view state (selected trace, sort, search, bucket filter, expanded rows,
//! compare pair) and, unless the page opened the trace itself by `?trace=`, the summary the
//! views show, packed into a URL fragment.
//!
//! Wire format: `s=` + base64url(raw deflate(JSON)) for view state + summary, `v=` + the same
//! for view state only. The JSON uses one- or two-letter keys and leaves out whatever the
//! views derive themselves (bucket names and definitions from the bucket id, a kernel's short
//! name from its full name), so a typical report's link stays well under 8 KB.
//!
//! A fragment is untrusted input: [`decode`] is a pure function with bounded work (fragment
//! length, inflated size, row counts, string lengths, number ranges are all capped), a strict
//! schema (unknown keys, wrong types, out-of-range indices are errors) and no panics, so it
//! can be fuzzed directly.

#![forbid(unsafe_code)]

use crate::analysis::diagnostics::DiagnosticId;
use crate::analysis::hints::HintId;
use crate::analysis::taxonomy::{Backend, Bucket as BucketId};
use crate::report::*;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// The longest fragment accepted (characters after `#`).
pub const MAX_FRAGMENT: usize = 64 * 1024;
/// The most JSON a fragment may inflate to.
pub const MAX_INFLATED: usize = 1 << 20;
/// At most this many traces, and rows in any one table.
pub const MAX_TRACES: usize = 64;
/// At most this many rows in a link's ranks view (each a few numbers).
pub const MAX_RANKS: usize = 1024;
pub const MAX_ROWS: usize = 1000;
/// The longest string (name, message) accepted, in bytes.
pub const MAX_STRING: usize = 16 * 1024;
/// The longest search text kept in the view state.
pub const MAX_QUERY: usize = 200;
/// Counts above this are not plausible profiler output.
pub const MAX_COUNT: u64 = 1 << 53;
/// Times (microseconds) beyond this magnitude are not plausible.
pub const MAX_TIME: f64 = 1e15;

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
    /// A link from an older tracesight (the `#r=` format).
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

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
fn is_true(v: &bool) -> bool {
    *v
}
fn yes() -> bool {
    true
}
fn is_false(v: &bool) -> bool {
    !*v
}
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
fn is_zero_u(v: &u64) -> bool {
    *v == 0
}

// ---------------------------------------------------------------------------------------
// The compact wire form of the parts of a Report the views show.

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WLink {
    /// Format version.
    v: u8,
    s: ViewState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<WReport>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WReport {
    v: String,
    t: Vec<WTrace>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    e: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    k: Vec<WRank>,
    /// The rest of the ranks view, when there are several ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    j: Option<WJob>,
}

/// What the ranks view shows beyond `WRank`: per rank, the job verdict, waits, the straggler
/// and the collectives listed. The spread of each metric, the outliers and the straggler are
/// derived from these on opening, as the analysis derives them.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WJob {
    #[serde(default, skip_serializing_if = "is_false")]
    o: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    n: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    w: Option<i64>,
    /// Collectives matched by sequence number.
    #[serde(default, skip_serializing_if = "is_false")]
    q: bool,
    #[serde(default, skip_serializing_if = "is_zero_u")]
    u: u64,
    /// One per `WRank`, in the same order.
    r: Vec<WRankJob>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    c: Vec<WCollective>,
}

/// compute, step, waited, waiting caused, collectives arrived at last, top buckets.
#[derive(Serialize, Deserialize)]
struct WRankJob(f64, Option<f64>, f64, f64, u64, Vec<(BucketId, f64)>);

/// name, group, seq, index, ranks, bytes, transfer, waited, skew, last row (the bandwidth is
/// derived from bytes and transfer; per-rank durations are not carried).
#[derive(Serialize, Deserialize)]
struct WCollective(String, Option<String>, Option<i64>, i64, usize, Option<i64>, f64, f64, f64, usize);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WRank(String, Option<i64>, f64, f64, f64, f64, f64, f64, f64);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WTrace {
    f: String,
    n: u64,
    #[serde(default, skip_serializing_if = "is_zero_u")]
    j: u64,
    d: WDevice,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    w: Option<i64>,
    #[serde(default, skip_serializing_if = "is_false")]
    g: bool,
    /// kernel, busy, span, idle, compute, comm, exposed, overlap, memory.
    u: [f64; 9],
    #[serde(default, skip_serializing_if = "is_zero_u")]
    c: u64,
    /// est. SM efficiency, achieved occupancy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    se: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    oc: Option<f64>,
    b: Vec<WBucket>,
    a: WAttention,
    tk: Vec<WRow>,
    to: Vec<WRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    st: Vec<WStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    h: Vec<WHint>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    x: Vec<WDiag>,
    /// The analysed range (start, end ns), when the report covers a range only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rg: Option<(i64, i64, i64)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WDevice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    s: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    c: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    m: Option<f64>,
    #[serde(default, skip_serializing_if = "is_default")]
    k: usize,
}

/// A name and its display form: one string when they are equal, else both. (The display form
/// is not derived here: that would link the kernel-name parser and its demangler into the
/// page; deflate stores a short name that repeats its full name cheaply.)
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum WName {
    Same(String),
    Both(String, String),
}

impl WName {
    fn pack(name: &str, short: &str) -> WName {
        if short == name {
            WName::Same(name.into())
        } else {
            WName::Both(name.into(), short.into())
        }
    }
    fn unpack(self) -> (String, String) {
        match self {
            WName::Same(n) => (n.clone(), n),
            WName::Both(n, s) => (n, s),
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WBucket {
    i: BucketId,
    /// Name and definition, only when they differ from the bucket id's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    n: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<String>,
    t: f64,
    /// Share, only when it differs from the one derived from the times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<f64>,
    c: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    m: Vec<(String, f64, u64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    k: Vec<(WName, f64, u64)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WAttention {
    b: Backend,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    l: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    t: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    a: f64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    e: Vec<WEvidence>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    r: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    f: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WEvidence {
    b: Backend,
    k: EvidenceKind,
    n: WName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    l: Option<String>,
    t: f64,
    c: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WRow {
    n: WName,
    t: f64,
    /// Share and mean, only when they differ from those derived from time and count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<f64>,
    c: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    m: Option<f64>,
    /// Max, only when it differs from the time (a single call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    x: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    o: Option<String>,
    b: BucketId,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WStep(String, [f64; 7], u64);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WHint {
    i: HintId,
    s: Severity,
    m: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    e: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    f: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WDiag(DiagnosticId, u64, String, Severity);

// ---------------------------------------------------------------------------------------

/// The part of `report` a link carries: what the views show. Fields the views do not read
/// (per-device times, launch statistics, copies, tensor-core split, ...) are left at their
/// defaults. `decode(encode(r, s))` gives back `for_link(r)`.
pub fn for_link(report: &Report) -> Report {
    unpack_report(pack_report(report))
}

fn pack_report(r: &Report) -> WReport {
    WReport {
        v: r.tool_version.clone(),
        t: r.traces.iter().map(pack_trace).collect(),
        e: r.errors.iter().map(|e| (e.file.clone(), e.message.clone())).collect(),
        k: r.ranks
            .iter()
            .map(|k| {
                WRank(
                    k.file.clone(),
                    k.rank,
                    k.kernel_time_us,
                    k.busy_us,
                    k.span_us,
                    k.idle_us,
                    k.comm_us,
                    k.exposed_comm_us,
                    k.busy_vs_max_pct,
                )
            })
            .collect(),
        j: r.job.as_ref().map(|j| pack_job(j, &r.ranks)),
    }
}

fn pack_job(j: &JobView, rows: &[RankRow]) -> WJob {
    WJob {
        o: j.one_job,
        n: j.notes.clone(),
        w: j.world_size,
        q: j.matched_by_seq,
        u: j.unmatched,
        r: rows
            .iter()
            .enumerate()
            .map(|(i, k)| {
                let w = j.waits.iter().find(|w| w.row == i);
                WRankJob(
                    k.compute_us,
                    k.step_us,
                    k.wait_us,
                    w.map_or(0.0, |w| w.caused_us),
                    w.map_or(0, |w| w.last_count),
                    k.top_buckets.clone(),
                )
            })
            .collect(),
        c: j.collectives
            .iter()
            .take(crate::analysis::ranks::COLLECTIVES_SHOWN)
            .map(|c| {
                WCollective(
                    c.name.clone(),
                    c.group.clone(),
                    c.seq,
                    c.index,
                    c.ranks,
                    c.bytes,
                    c.transfer_us,
                    c.wait_us,
                    c.skew_us,
                    c.last_row,
                )
            })
            .collect(),
    }
}

/// The job view from a link: rows get their per-rank part, and what the analysis derives
/// (spreads, outliers, the straggler, bandwidth) is derived again.
fn unpack_job(w: WJob, rows: &mut [RankRow]) -> JobView {
    let mut waits = Vec::with_capacity(rows.len());
    for (i, (row, WRankJob(compute, step, wait, caused, last, top))) in rows.iter_mut().zip(w.r).enumerate() {
        row.compute_us = compute;
        row.step_us = step;
        row.wait_us = wait;
        row.top_buckets = top;
        waits.push(RankWait { row: i, rank: row.rank, wait_us: wait, caused_us: caused, last_count: last });
    }
    let metrics = crate::analysis::ranks::spreads(rows);
    let collectives =
        w.c.into_iter()
            .map(|WCollective(name, group, seq, index, ranks, bytes, transfer_us, wait_us, skew_us, last_row)| {
                // As the analysis computes it, from the integer nanoseconds of the transfer.
                let transfer_ns = (transfer_us * 1e3).round() as i64;
                MatchedCollective {
                    name,
                    group,
                    seq,
                    index,
                    ranks,
                    bytes,
                    transfer_us,
                    wait_us,
                    skew_us,
                    last_row,
                    durations_us: Vec::new(),
                    algbw_gbps: bytes.filter(|_| transfer_ns > 0).map(|b| b as f64 / transfer_ns as f64),
                }
            })
            .collect();
    JobView {
        one_job: w.o,
        notes: w.n,
        world_size: w.w,
        metrics,
        matched_by_seq: w.q,
        unmatched: w.u,
        straggler: crate::analysis::ranks::straggler(&waits),
        waits,
        collectives,
    }
}

fn pack_trace(t: &TraceReport) -> WTrace {
    let g = &t.gpu;
    WTrace {
        f: t.file.clone(),
        n: t.events,
        j: t.json_bytes,
        d: WDevice {
            n: t.device.name.clone(),
            s: t.device.sm_count,
            c: t.device.compute_capability.clone(),
            m: t.device.memory_gb,
            k: t.device.count,
        },
        r: t.rank,
        w: t.world_size,
        g: t.has_gpu,
        u: [
            g.kernel_time_us,
            g.busy_us,
            g.span_us,
            g.idle_us,
            g.compute_us,
            g.comm_us,
            g.exposed_comm_us,
            g.overlap_pct,
            g.memory_us,
        ],
        rg: t.window.map(|w| (w.start_ns, w.end_ns, w.origin_ns)),
        c: g.kernel_count,
        se: g.est_sm_efficiency_pct,
        oc: g.achieved_occupancy_pct,
        b: t.buckets
            .iter()
            .map(|b| WBucket {
                i: b.id,
                n: (b.name != b.id.name()).then(|| b.name.clone()),
                r: (b.rule != b.id.definition()).then(|| b.rule.clone()),
                t: b.time_us,
                p: unless(b.pct, pct_of(b.time_us, t.gpu.kernel_time_us)),
                c: b.count,
                m: b.matched.iter().map(|m| (m.rule.clone(), m.time_us, m.count)).collect(),
                k: b.top_names.iter().map(|n| (WName::pack(&n.name, &n.short), n.time_us, n.count)).collect(),
            })
            .collect(),
        a: WAttention {
            b: t.attention.backend,
            l: t.attention.library.clone(),
            t: t.attention.time_us,
            a: t.attention.total_us,
            e: t.attention
                .evidence
                .iter()
                .map(|e| WEvidence {
                    b: e.backend,
                    k: e.kind,
                    n: WName::pack(&e.name, &e.short),
                    l: e.library.clone(),
                    t: e.time_us,
                    c: e.count,
                })
                .collect(),
            r: t.attention.not_flash_reasons.clone(),
            f: t.attention.fix.clone(),
        },
        tk: t.top_kernels.iter().map(|r| pack_row(r, g.kernel_time_us)).collect(),
        to: t.top_ops.iter().map(|r| pack_row(r, g.kernel_time_us)).collect(),
        st: t
            .steps
            .iter()
            .map(|s| {
                WStep(
                    s.name.clone(),
                    [s.span_us, s.busy_us, s.idle_us, s.kernel_time_us, s.comm_us, s.exposed_comm_us, s.cpu_us],
                    s.kernel_count,
                )
            })
            .collect(),
        h: t.hints
            .iter()
            .map(|h| WHint { i: h.id, s: h.severity, m: h.message.clone(), e: h.evidence.clone(), f: h.fix.clone() })
            .collect(),
        x: t.diagnostics.iter().map(|d| WDiag(d.id, d.count, d.message.clone(), d.severity)).collect(),
    }
}

/// A number the decoder can derive is left out: `None` when `v` equals `derived` exactly.
fn unless(v: f64, derived: f64) -> Option<f64> {
    (v.to_bits() != derived.to_bits()).then_some(v)
}

/// The analysis' share: integer nanoseconds of the part over the whole, in percent.
fn pct_of(time_us: f64, total_us: f64) -> f64 {
    let (part, whole) = ((time_us * 1000.0).round() as i64, (total_us * 1000.0).round() as i64);
    if whole <= 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn mean_of(time_us: f64, count: u64) -> f64 {
    if count > 0 {
        time_us / count as f64
    } else {
        0.0
    }
}

fn pack_row(r: &TopRow, total_us: f64) -> WRow {
    WRow {
        n: WName::pack(&r.name, &r.short),
        t: r.time_us,
        p: unless(r.pct, pct_of(r.time_us, total_us)),
        c: r.count,
        m: unless(r.mean_us, mean_of(r.time_us, r.count)),
        x: unless(r.max_us, r.time_us),
        o: r.op.clone(),
        b: r.bucket,
    }
}

fn unpack_report(w: WReport) -> Report {
    let mut ranks: Vec<RankRow> = w.k.into_iter().map(unpack_rank).collect();
    let job = w.j.map(|j| unpack_job(j, &mut ranks));
    Report {
        tool_version: w.v,
        traces: w.t.into_iter().map(unpack_trace).collect(),
        errors: w.e.into_iter().map(|(file, message)| FileError { file, message }).collect(),
        ranks,
        job,
    }
}

fn unpack_rank(
    WRank(file, rank, kernel_time_us, busy_us, span_us, idle_us, comm_us, exposed_comm_us, busy_vs_max_pct): WRank,
) -> RankRow {
    RankRow {
        file,
        rank,
        kernel_time_us,
        busy_us,
        span_us,
        idle_us,
        comm_us,
        exposed_comm_us,
        busy_vs_max_pct,
        // The job part (WJob) fills these in when the link has it.
        compute_us: 0.0,
        step_us: None,
        top_buckets: Vec::new(),
        wait_us: 0.0,
        outlier: Vec::new(),
    }
}

fn unpack_trace(w: WTrace) -> TraceReport {
    let u = w.u;
    let total = u[0];
    TraceReport {
        file: w.f,
        events: w.n,
        json_bytes: w.j,
        device: DeviceInfo { name: w.d.n, sm_count: w.d.s, compute_capability: w.d.c, memory_gb: w.d.m, count: w.d.k },
        rank: w.r,
        world_size: w.w,
        distributed_backend: None,
        has_gpu: w.g,
        gpu: GpuTime {
            kernel_time_us: u[0],
            busy_us: u[1],
            span_us: u[2],
            idle_us: u[3],
            compute_us: u[4],
            comm_us: u[5],
            exposed_comm_us: u[6],
            overlap_pct: u[7],
            memory_us: u[8],
            kernel_count: w.c,
            est_sm_efficiency_pct: w.se,
            achieved_occupancy_pct: w.oc,
        },
        devices: Vec::new(),
        buckets: w
            .b
            .into_iter()
            .map(|b| Bucket {
                id: b.i,
                name: b.n.unwrap_or_else(|| b.i.name().to_string()),
                rule: b.r.unwrap_or_else(|| b.i.definition()),
                time_us: b.t,
                pct: b.p.unwrap_or_else(|| pct_of(b.t, total)),
                count: b.c,
                matched: b.m.into_iter().map(|(rule, time_us, count)| RuleHit { rule, time_us, count }).collect(),
                top_names: b
                    .k
                    .into_iter()
                    .map(|(n, time_us, count)| {
                        let (name, short) = n.unpack();
                        NameTime { name, short, time_us, count }
                    })
                    .collect(),
            })
            .collect(),
        attention: Attention {
            backend: w.a.b,
            library: w.a.l,
            time_us: w.a.t,
            total_us: w.a.a,
            evidence: w
                .a
                .e
                .into_iter()
                .map(|e| {
                    let (name, short) = e.n.unpack();
                    Evidence { backend: e.b, kind: e.k, name, short, library: e.l, time_us: e.t, count: e.c }
                })
                .collect(),
            not_flash_reasons: w.a.r,
            fix: w.a.f,
        },
        top_kernels: w.tk.into_iter().map(|r| unpack_row(r, total)).collect(),
        top_ops: w.to.into_iter().map(|r| unpack_row(r, total)).collect(),
        steps: w
            .st
            .into_iter()
            .map(|WStep(name, v, kernel_count)| Step {
                name,
                span_us: v[0],
                busy_us: v[1],
                idle_us: v[2],
                kernel_time_us: v[3],
                comm_us: v[4],
                exposed_comm_us: v[5],
                cpu_us: v[6],
                kernel_count,
                // The idle causes need the trace; links carry what the views show.
                host_wait_us: 0.0,
                kernel_wait_us: 0.0,
                other_wait_us: 0.0,
            })
            .collect(),
        hints: w
            .h
            .into_iter()
            .map(|h| Hint { id: h.i, severity: h.s, message: h.m, evidence: h.e, fix: h.f })
            .collect(),
        diagnostics: w
            .x
            .into_iter()
            .map(|WDiag(id, count, message, severity)| Diagnostic { id, count, message, severity })
            .collect(),
        launch: LaunchStats::default(),
        training: false,
        copies: Copies::default(),
        tensor_cores: TensorCoreUse::default(),
        // Full lists and the why views are not carried by links: they need the trace.
        kernels: Vec::new(),
        ops: Vec::new(),
        collectives: Vec::new(),
        idle: Default::default(),
        layers: Vec::new(),
        memory: None,
        timeline: None,
        window: w.rg.filter(|r| r.0 < r.1).map(|(start_ns, end_ns, origin_ns)| TimeWindow {
            start_ns,
            end_ns,
            origin_ns,
        }),
    }
}

fn unpack_row(r: WRow, total_us: f64) -> TopRow {
    let (name, short) = r.n.unpack();
    TopRow {
        pct: r.p.unwrap_or_else(|| pct_of(r.t, total_us)),
        mean_us: r.m.unwrap_or_else(|| mean_of(r.t, r.c)),
        name,
        short,
        time_us: r.t,
        count: r.c,
        max_us: r.x.unwrap_or(r.t),
        op: r.o,
        bucket: r.b,
    }
}

// ---------------------------------------------------------------------------------------

/// The fragment (without `#`) for `state` and, when given, the report's summary.
pub fn encode(report: Option<&Report>, state: &ViewState) -> String {
    let link = WLink { v: 1, s: state.clone(), r: report.map(pack_report) };
    let json = serde_json::to_vec(&link).unwrap_or_default();
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    let packed = enc.write_all(&json).and_then(|_| enc.finish()).unwrap_or_default();
    use base64::Engine;
    let data = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(packed);
    format!("{}={data}", if report.is_some() { "s" } else { "v" })
}

/// What a summary link holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every trace's summary (and the ranks view): the receiver sees every view.
    Full,
    /// The ranks view of every rank and the summary of the selected trace only: for more
    /// traces than a link may hold ([`MAX_TRACES`], [`MAX_FRAGMENT`]).
    RanksAndSelected,
}

/// The fragment of a summary link for `report` and `state`: every trace when they fit, else
/// the ranks view and the selected trace (the view state then selects it and compares
/// nothing). None when even that does not fit.
pub fn encode_summary(report: &Report, state: &ViewState) -> Option<(String, Scope)> {
    if report.traces.len() <= MAX_TRACES {
        let full = encode(Some(report), state);
        if full.len() <= MAX_FRAGMENT {
            return Some((full, Scope::Full));
        }
    }
    encode_ranks_and_selected(report, state).map(|link| (link, Scope::RanksAndSelected))
}

/// The [`Scope::RanksAndSelected`] fragment: None without a ranks view or when too large.
pub fn encode_ranks_and_selected(report: &Report, state: &ViewState) -> Option<String> {
    if report.ranks.is_empty() || report.ranks.len() > MAX_RANKS {
        return None;
    }
    let selected = report.traces.get(state.trace as usize)?;
    let compact = Report {
        tool_version: report.tool_version.clone(),
        traces: vec![selected.clone()],
        errors: report.errors.iter().take(MAX_TRACES).cloned().collect(),
        ranks: report.ranks.clone(),
        job: report.job.clone(),
    };
    let state = ViewState { trace: 0, compare: None, ..state.clone() };
    let link = encode(Some(&compact), &state);
    (link.len() <= MAX_FRAGMENT).then_some(link)
}

/// Reads a fragment (with or without its leading `#`). Bounded, strict, never panics.
pub fn decode(fragment: &str) -> Result<SharedView, LinkError> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    if fragment.len() > MAX_FRAGMENT + 2 {
        return Err(LinkError::TooLong { len: fragment.len() });
    }
    let (with_report, data) = if let Some(d) = fragment.strip_prefix("s=") {
        (true, d)
    } else if let Some(d) = fragment.strip_prefix("v=") {
        (false, d)
    } else if fragment.starts_with("r=") {
        return Err(LinkError::OldFormat);
    } else {
        return Err(LinkError::Absent);
    };
    use base64::Engine;
    let packed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(data.as_bytes())
        .map_err(|_| LinkError::Corrupt("not base64url"))?;
    let mut json = Vec::new();
    flate2::read::DeflateDecoder::new(packed.as_slice())
        .take(MAX_INFLATED as u64 + 1)
        .read_to_end(&mut json)
        .map_err(|_| LinkError::Corrupt("not deflate data"))?;
    if json.len() > MAX_INFLATED {
        return Err(LinkError::TooLarge);
    }
    let link: WLink = serde_json::from_slice(&json).map_err(|e| LinkError::Invalid(e.to_string()))?;
    if link.v != 1 {
        return Err(LinkError::Invalid(format!("unknown format version {}", link.v)));
    }
    if link.r.is_some() != with_report {
        return Err(LinkError::Invalid("the data does not match the link's kind".into()));
    }
    if let Some(r) = &link.r {
        check_report(r).map_err(LinkError::Invalid)?;
    }
    let report = link.r.map(unpack_report);
    check_state(&link.s, report.as_ref()).map_err(LinkError::Invalid)?;
    Ok(SharedView { state: link.s, report })
}

/// The state's bounds, and with a report its indices.
/// Longest rules text a link may carry.
pub const MAX_RULES_BYTES: usize = 4096;

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
    if s.rules.len() > MAX_RULES_BYTES {
        return Err(format!("bucket rules longer than {MAX_RULES_BYTES} bytes"));
    }
    if let Err(e) = crate::analysis::taxonomy::parse_rules(&s.rules) {
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

struct Budget {
    rows: usize,
}

fn text(s: &str) -> Result<(), String> {
    if s.len() > MAX_STRING {
        return Err(format!("a text of {} bytes (at most {MAX_STRING})", s.len()));
    }
    if s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err("a text with control characters".into());
    }
    Ok(())
}

fn opt_text(s: &Option<String>) -> Result<(), String> {
    s.as_deref().map_or(Ok(()), text)
}

fn num(v: f64) -> Result<(), String> {
    if v.is_finite() && v.abs() <= MAX_TIME {
        Ok(())
    } else {
        Err(format!("a number out of range ({v})"))
    }
}

fn count(v: u64) -> Result<(), String> {
    if v <= MAX_COUNT {
        Ok(())
    } else {
        Err(format!("a count out of range ({v})"))
    }
}

fn rows(b: &mut Budget, n: usize) -> Result<(), String> {
    if n > MAX_ROWS {
        return Err(format!("a table of {n} rows (at most {MAX_ROWS})"));
    }
    b.rows += n;
    if b.rows > MAX_ROWS * 8 {
        return Err("too many rows in all".into());
    }
    Ok(())
}

fn name(n: &WName) -> Result<(), String> {
    match n {
        WName::Same(n) => text(n),
        WName::Both(n, s) => text(n).and_then(|_| text(s)),
    }
}

fn check_report(r: &WReport) -> Result<(), String> {
    text(&r.v)?;
    if r.t.len() > MAX_TRACES || r.e.len() > MAX_TRACES {
        return Err(format!("more than {MAX_TRACES} traces"));
    }
    if r.k.len() > MAX_RANKS {
        return Err(format!("more than {MAX_RANKS} ranks"));
    }
    if r.t.is_empty() {
        return Err("no traces".into());
    }
    let mut budget = Budget { rows: 0 };
    for (f, m) in &r.e {
        text(f)?;
        text(m)?;
    }
    for k in &r.k {
        text(&k.0)?;
        for v in [k.2, k.3, k.4, k.5, k.6, k.7, k.8] {
            num(v)?;
        }
    }
    if let Some(j) = &r.j {
        check_job(j, r.k.len(), &mut budget)?;
    }
    for t in &r.t {
        text(&t.f)?;
        count(t.n)?;
        count(t.j)?;
        count(t.c)?;
        opt_text(&t.d.n)?;
        opt_text(&t.d.c)?;
        if t.d.k > MAX_ROWS {
            return Err("too many devices".into());
        }
        for v in t.u.iter().chain(&t.se).chain(&t.oc).chain(&t.d.m) {
            num(*v)?;
        }
        rows(&mut budget, t.b.len())?;
        for b in &t.b {
            opt_text(&b.n)?;
            opt_text(&b.r)?;
            num(b.t)?;
            num(b.p.unwrap_or(0.0))?;
            count(b.c)?;
            rows(&mut budget, b.m.len() + b.k.len())?;
            for (rule, t, c) in &b.m {
                text(rule)?;
                num(*t)?;
                count(*c)?;
            }
            for (n, t, c) in &b.k {
                name(n)?;
                num(*t)?;
                count(*c)?;
            }
        }
        let a = &t.a;
        opt_text(&a.l)?;
        opt_text(&a.f)?;
        num(a.t)?;
        num(a.a)?;
        rows(&mut budget, a.e.len() + a.r.len())?;
        for e in &a.e {
            name(&e.n)?;
            opt_text(&e.l)?;
            num(e.t)?;
            count(e.c)?;
        }
        for reason in &a.r {
            text(reason)?;
        }
        for table in [&t.tk, &t.to] {
            rows(&mut budget, table.len())?;
            for row in table {
                name(&row.n)?;
                opt_text(&row.o)?;
                for v in [row.t, row.p.unwrap_or(0.0), row.m.unwrap_or(0.0), row.x.unwrap_or(0.0)] {
                    num(v)?;
                }
                count(row.c)?;
            }
        }
        rows(&mut budget, t.st.len())?;
        for s in &t.st {
            text(&s.0)?;
            for v in s.1 {
                num(v)?;
            }
            count(s.2)?;
        }
        rows(&mut budget, t.h.len())?;
        for h in &t.h {
            text(&h.m)?;
            text(&h.f)?;
            rows(&mut budget, h.e.len())?;
            for e in &h.e {
                text(e)?;
            }
        }
        rows(&mut budget, t.x.len())?;
        for d in &t.x {
            count(d.1)?;
            text(&d.2)?;
        }
    }
    Ok(())
}

fn check_job(j: &WJob, ranks: usize, budget: &mut Budget) -> Result<(), String> {
    if j.r.len() != ranks {
        return Err(format!("{} ranks in the job view, {ranks} rank rows", j.r.len()));
    }
    if j.n.len() > 16 {
        return Err("too many notes on the job".into());
    }
    for n in &j.n {
        text(n)?;
    }
    count(j.u)?;
    for WRankJob(compute, step, wait, caused, last, top) in &j.r {
        for v in [*compute, step.unwrap_or(0.0), *wait, *caused] {
            num(v)?;
        }
        count(*last)?;
        if top.len() > BucketId::ALL.len() {
            return Err("too many top buckets".into());
        }
        for (_, pct) in top {
            num(*pct)?;
        }
    }
    rows(budget, j.c.len())?;
    for WCollective(name, group, _, _, n, bytes, transfer, wait, skew, last) in &j.c {
        text(name)?;
        opt_text(group)?;
        if *n > ranks || *last >= ranks {
            return Err("a collective on ranks that do not exist".into());
        }
        if bytes.is_some_and(|b| b < 0 || b as u64 > MAX_COUNT) {
            return Err("a message size out of range".into());
        }
        for v in [*transfer, *wait, *skew] {
            num(v)?;
        }
    }
    Ok(())
}

/// A stable, short file name stem for exports: the trace file name without `.json[.gz]`.
pub fn stem(file: &str) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or("trace");
    base.trim_end_matches(".gz").trim_end_matches(".json").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        };
        let f = encode(None, &s);
        assert!(f.starts_with("v="));
        assert_eq!(decode(&f).unwrap(), SharedView { state: s, report: None });
        assert!(encode(None, &ViewState::default()).len() < 40);
    }
}

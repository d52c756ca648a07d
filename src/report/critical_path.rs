//! The critical path of each step: what the step's time waited on, CPU and GPU, and what a
//! faster bucket or op would give along it (the what-if).

use crate::vocab::Bucket;
use serde::{Deserialize, Serialize};

/// The path of every ProfilerStep (or of the whole trace when it has none) on one rank.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CriticalPath {
    pub steps: Vec<StepPath>,
    /// The what-if asked for (`--what-if gemm=30%`), summed over the steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what_if: Option<WhatIf>,
    /// Synchronising calls whose waited-on GPU row could not be told (no row ended inside
    /// them): their wait is left on the CPU.
    #[serde(default)]
    pub unmatched_syncs: u64,
    /// Synchronising calls whose waited-on row the trace's `cuda_sync` rows named.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub syncs_by_id: u64,
    /// Event waits (`cudaStreamWaitEvent`: a recorded row -> the waiting stream's next row)
    /// made edges, from the trace's `cuda_sync` rows.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub event_waits: u64,
    /// Stream waits with no `cuda_sync` row (HIP, or CUDA recorded without
    /// `enable_cuda_sync_events`): not edges, so a path through them is not seen.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stream_waits_unseen: u64,
    /// Per collective row on this rank: what its path spent the time since the previous
    /// collective on (what the job's critical path names when this rank arrives last).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arrivals: Vec<Arrival>,
    /// Steps whose path a share link left out (it carries the first [`Self::LINK_STEPS`], and
    /// none in a link of several ranks, which carries the job's path instead); 0 in a report
    /// read from a trace.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub steps_not_carried: u64,
    /// Names the steps' `pieces` and `segments` index into (ops, runtime calls, GPU rows, and
    /// the names of launch delays and gaps), each once: a 2 GB trace has 240 k pieces naming a
    /// few dozen kernels, which written out in full were most of the `--json` report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Segments a share link left out (it carries none: no link carries the GPU timeline they
    /// are drawn on); 0 in a report read from a trace.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub segments_not_carried: u64,
    /// Steps whose path was not computed: they hold more items than
    /// `limits::MAX_PATH_ITEMS` (memory); every other figure of theirs is exact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps_too_large: Vec<StepTooLarge>,
}

/// A step left without a path, and how many items (GPU rows, runtime calls, CPU ops,
/// synchronising calls) it held.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTooLarge {
    pub step: String,
    pub items: u64,
}

impl CriticalPath {
    /// The step name of a trace without ProfilerSteps, whose path is the whole trace's.
    pub const WHOLE_TRACE: &'static str = "whole trace";

    /// Steps a share link of one trace carries (the text report lists as many).
    pub const LINK_STEPS: usize = 4;
    /// Largest pieces and path buckets a link carries per step.
    pub const LINK_PIECES: usize = 3;
    pub const LINK_BUCKETS: usize = 3;

    /// What a share link carries: the first [`Self::LINK_STEPS`] steps (with `steps`; none
    /// without, as in a link of several ranks) with their length, split and largest pieces and
    /// buckets, what the path could not see and the what-if summed over every step; the steps
    /// and the path's segments in time left out are counted.
    /// The per-collective arrivals (what the job's path is made of) stay in the report.
    pub fn link_subset(&self, steps: bool) -> CriticalPath {
        let keep = if steps { Self::LINK_STEPS } else { 0 };
        let mut p = self.clone();
        // No link carries the GPU timeline the path in time is drawn on.
        p.segments_not_carried += p.segment_count();
        p.steps_not_carried += p.steps.len().saturating_sub(keep) as u64;
        p.steps.truncate(keep);
        // The names of the pieces carried only, in the order they are first met.
        let mut names: Vec<String> = Vec::new();
        for s in &mut p.steps {
            s.pieces.truncate(Self::LINK_PIECES);
            s.buckets.truncate(Self::LINK_BUCKETS);
            for x in &mut s.pieces {
                x.name = name_index(&mut names, self.name(x.name));
            }
        }
        p.names = names;
        p.arrivals.clear();
        // Hostile input only (each needs a million items); names can be 4 KB.
        p.steps_too_large.truncate(Self::LINK_STEPS);
        for s in &mut p.steps {
            s.segments.clear();
            s.segments_left_out = 0;
        }
        p
    }

    /// The name a piece or segment indexes; `?` where the index is out of range (a report read
    /// back may hold anything).
    pub fn name(&self, i: u32) -> &str {
        self.names.get(i as usize).map_or("?", String::as_str)
    }

    /// The path's segments in time, kept or left out, over every step here.
    pub fn segment_count(&self) -> u64 {
        self.steps.iter().map(|s| s.segments.len() as u64 + s.segments_left_out as u64).sum()
    }

    /// Every step the path was found for, carried or not.
    pub fn step_count(&self) -> u64 {
        self.steps.len() as u64 + self.steps_not_carried
    }

    /// Whether there is anything per step to show: a path, or a step too large for one.
    pub fn has_steps(&self) -> bool {
        self.step_count() > 0 || !self.steps_too_large.is_empty()
    }
}

/// What held one rank on its way to a collective: the largest piece of its critical path
/// between its previous collective (or the step's start) and this one's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    /// The collective row's start and duration (as in `TraceReport::collectives`).
    pub start_ns: i64,
    pub dur_ns: i64,
    pub held_by: String,
    pub side: PathSide,
    pub held_us: f64,
    /// The path's length from the previous collective to this one.
    pub stretch_us: f64,
}

/// One stretch of the job's critical path: the collective everyone waited at and the rank
/// that arrived last, with what held it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobStretch {
    pub collective: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// The last rank's row in `Report::ranks` and its rank.
    pub row: usize,
    pub rank: Option<i64>,
    pub held_by: String,
    pub side: PathSide,
    pub held_us: f64,
    pub stretch_us: f64,
    /// What the other ranks waited there in all (as `MatchedCollective::wait_us`).
    pub wait_us: f64,
}

impl JobStretch {
    /// Stretches of the job's path a share link carries (the page lists as many).
    pub const LINK_STRETCHES: usize = 32;
}

/// One step's longest path through its dependency graph (CPU op nesting and order per thread,
/// launch -> GPU row, stream order, GPU row -> the synchronising call that waited for it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepPath {
    pub step: String,
    /// The step's extent: its CPU start to the last of its CPU end and its GPU rows' ends.
    pub span_us: f64,
    pub path_us: f64,
    /// CPU time on the path (op and runtime-call time; a blocking wait counts as none).
    pub cpu_us: f64,
    /// GPU row time on the path.
    pub gpu_us: f64,
    /// Launch delays on the path (a row that started late because its launch came late).
    pub launch_us: f64,
    /// Gaps between rows queued back to back on one stream, and between a recorded row's end
    /// and the start of a row that waited on its event.
    pub gap_us: f64,
    /// Synchronising calls the path runs through (GPU row -> the call that waited).
    pub syncs: u32,
    /// Event waits the path runs through (a row of one stream -> a row of another).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub event_waits: u32,
    pub longest_row_us: f64,
    /// GPU time on the path per bucket, largest first.
    pub buckets: Vec<PathBucket>,
    /// The path's largest pieces by name (an op, a runtime call or a GPU row), largest first.
    pub pieces: Vec<PathPiece>,
    /// The path's length with the what-if applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub what_if_path_us: Option<f64>,
    /// The path in time order, for drawing it on the GPU timeline: the longest
    /// [`Self::MAX_SEGMENTS`] of its timed edges (back-to-back CPU stretches of one name as
    /// one), none past the first steps when the report's [`Self::SEGMENT_BUDGET`] is spent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub segments: Vec<PathSegment>,
    /// This step's timed edges not in `segments` (the shortest, or all past the budget).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub segments_left_out: u32,
}

impl StepPath {
    /// Pieces per step the text report and Markdown list (and links keep).
    pub const PIECES_SHOWN: usize = 5;
    /// Segments kept per step, and over all steps of a report: a drawing 1,000 units wide
    /// shows no more; a range of the trace (one step) is analysed again with its own.
    pub const MAX_SEGMENTS: usize = 240;
    pub const SEGMENT_BUDGET: usize = 960;
}

/// One stretch of a step's critical path in time, on the trace's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathSegment {
    pub start_ns: i64,
    pub end_ns: i64,
    pub side: PathSide,
    /// Index into [`CriticalPath::names`].
    pub name: u32,
    /// The stream a GPU row, a queue gap or an event wait is on; None for CPU time and launch
    /// delays (they are on a CPU thread, or between one and a stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<PathStream>,
}

/// A GPU stream, as the timeline's lanes name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathStream {
    pub device: i64,
    pub stream: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathBucket {
    pub bucket: Bucket,
    pub us: f64,
    pub pct_of_path: f64,
}

/// Which side of the machine a piece of the path ran on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathSide {
    Cpu,
    Gpu,
    Launch,
    Gap,
}

impl PathSide {
    /// The short label every front end shows.
    pub fn label(self) -> &'static str {
        match self {
            PathSide::Cpu => "CPU",
            PathSide::Gpu => "GPU",
            PathSide::Launch => "launch",
            PathSide::Gap => "gap",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathPiece {
    /// Index into [`CriticalPath::names`].
    pub name: u32,
    pub side: PathSide,
    pub us: f64,
    pub pct_of_path: f64,
    /// Path edges of this name (rows, op stretches).
    pub count: u32,
}

/// "x% faster" for a bucket or a name family, along the critical path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIf {
    /// A bucket id (`gemm`) or a text that kernel and op names contain (case-insensitive).
    pub target: String,
    pub faster_pct: f64,
    /// The steps' paths, summed, before and after.
    pub path_before_us: f64,
    pub path_after_us: f64,
    /// The steps' spans, summed, and the same less what the paths saved.
    pub step_before_us: f64,
    pub step_after_us: f64,
    /// The naive estimate: the target's whole time on the steps' GPU rows and ops, cut by the
    /// same share, whatever the path.
    pub naive_saving_us: f64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

/// The index of `text` in `names`, added at the end when it is not there: how a path's names
/// are made (the analysis, a link's subset, the pieces of an earlier report), each text once.
/// A path names a few dozen texts, so a scan is all it needs.
pub fn name_index(names: &mut Vec<String>, text: &str) -> u32 {
    match names.iter().position(|n| n == text) {
        Some(k) => k as u32,
        None => {
            names.push(text.to_string());
            (names.len() - 1) as u32
        }
    }
}

/// Reports and share links of earlier versions named each piece in full (`"name": "text"`):
/// each such name becomes an index into its path's `names` (the entry of that text, or one
/// added at the end), in the order met, as the analysis makes them. A path whose `names` are
/// not all text is left as it is (reading it then says what is wrong). Whether any name was
/// changed.
pub fn index_piece_names(report: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    let mut changed = false;
    let traces = report.get_mut("traces").and_then(Value::as_array_mut).into_iter().flatten();
    for path in traces.filter_map(|t| t.get_mut("critical_path").and_then(Value::as_object_mut)) {
        let names: Option<Vec<String>> = match path.get("names") {
            None => Some(Vec::new()),
            Some(v) => v.as_array().and_then(|a| a.iter().map(|n| n.as_str().map(String::from)).collect()),
        };
        let Some(mut names) = names else { continue };
        let steps = path.get_mut("steps").and_then(Value::as_array_mut).into_iter().flatten();
        let pieces = steps.filter_map(|s| s.get_mut("pieces").and_then(Value::as_array_mut)).flatten();
        let mut here = false;
        for name in pieces.filter_map(|x| x.get_mut("name")) {
            let Some(text) = name.as_str() else { continue };
            *name = Value::from(name_index(&mut names, text));
            here = true;
        }
        if here {
            path.insert("names".into(), Value::from(names));
            changed = true;
        }
    }
    changed
}

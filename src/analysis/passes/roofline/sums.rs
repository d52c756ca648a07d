//! The work summed over the rows: each kernel row's share of its op's work, per kernel name,
//! step and source, and what could not be known.

use crate::analysis::model::attribution::NO;
use crate::analysis::model::collect::{Collector, GpuKind, OpWork, RowBrief, NAME_GRAPH_LAUNCH, NAME_WORK};
use crate::analysis::model::frozen::Model;
use crate::report::WorkSource;
use crate::vocab::{Bucket, Precision};
use rustc_hash::FxHashMap;

/// The slot of FLOPs whose precision is not known (Inductor's counts).
pub(super) const UNKNOWN_PRECISION: usize = 7;

/// Unmodelled ops listed by name in the coverage.
const UNMODELLED_LISTED: usize = 8;

#[derive(Default)]
pub(super) struct KernelSum {
    pub(super) time_ns: i64,
    pub(super) count: u64,
    pub(super) flops: f64,
    pub(super) bytes: f64,
    /// FLOPs per precision (indexed by `Precision::index`; the last: precision not known).
    pub(super) by_precision: [f64; 8],
    /// Time per precision, as `by_precision`: the precision of work without FLOPs.
    pub(super) time_by_precision: [i64; 8],
    /// Time per source, indexed as `SOURCES`.
    pub(super) by_source: [i64; 3],
    pub(super) split: bool,
    pub(super) causal: bool,
    pub(super) bucket: Option<Bucket>,
}

impl KernelSum {
    /// Adds one kernel row's work (`p`: its precision's slot).
    fn add(&mut self, dur: i64, w: &RowWork, p: usize, bucket: Bucket) {
        self.time_ns += dur;
        self.count += 1;
        (self.flops, self.bytes) = (self.flops + w.flops, self.bytes + w.bytes);
        self.by_source[source_index(w.source)] += dur;
        (self.split, self.causal) = (self.split | w.split, self.causal | w.causal);
        self.bucket.get_or_insert(bucket);
        self.by_precision[p] += w.flops;
        self.time_by_precision[p] += dur;
    }
}

/// The buckets whose kernels do an op's FLOPs when it launched several kinds.
const MATH: [Bucket; 2] = [Bucket::Gemm, Bucket::Attention];

#[derive(Default, Clone, Copy)]
struct OpKernels {
    ns: i64,
    math_ns: i64,
    count: u32,
    math_count: u32,
}

/// Library names that say an FP32 GEMM ran on tensor cores in TF32 (cuBLAS' `tf32`, hipBLASLt's
/// `xf32`, CUTLASS' `tensorop_s1688` / `s16816` single-precision tensor-op tiles).
fn runs_tf32(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["tf32", "xf32", "tensorop_s1688", "tensorop_s16816"].iter().any(|t| n.contains(t))
}

pub(super) const SOURCES: [WorkSource; 3] = [WorkSource::Shapes, WorkSource::Profiler, WorkSource::Inductor];

/// The work summed over the rows.
#[derive(Default)]
pub struct WorkSums {
    /// (full name, short name, sums).
    pub(super) kernels: Vec<(String, String, KernelSum)>,
    /// Per launching op name (the leaf op whose work the kernels did): (name, sums).
    pub(super) ops: Vec<(String, KernelSum)>,
    /// Per step: FLOPs by precision, as in `KernelSum`.
    pub(super) steps: Vec<[f64; 8]>,
    pub(super) known_ns: [i64; 3],
    pub(super) unmodelled_ns: i64,
    pub(super) unmodelled: Vec<(String, i64)>,
    pub(super) unknown_ns: i64,
    pub(super) graph_ns: i64,
    pub(super) kernel_ns: i64,
    pub(super) communication_ns: i64,
    pub(super) ops_with_shapes: u64,
}

impl WorkSums {
    /// Keeps the steps the report keeps (`keep` per step).
    pub fn retain_steps(&mut self, keep: &[bool]) {
        let mut k = keep.iter();
        self.steps.retain(|_| k.next().copied().unwrap_or(false));
    }
}

pub(super) fn source_index(s: WorkSource) -> usize {
    SOURCES.iter().position(|&x| x == s).unwrap_or(0)
}

/// Each working op's kernels: their time and count, and the time of those that do its math
/// (GEMM, attention), to split its work by. Made once for both readers (the sums and the
/// layers' [`RowWorks`]), beside the ops with work (`Attribution::op_work`, position for
/// position: 24 bytes an op, against 64-90 in a hash map at its load): it is made while the
/// model passes hold the most, and in the page's wasm memory it landed above everything else
/// (2 GB: 16.5 MiB).
pub struct OpKernelTable {
    kernels: Vec<OpKernels>,
}

impl OpKernelTable {
    pub fn new(m: &Model) -> OpKernelTable {
        let (c, at) = (m.c, m.at);
        let mut kernels = vec![OpKernels::default(); at.op_work.len()];
        if kernels.is_empty() {
            return OpKernelTable { kernels };
        }
        let mut finger = 0;
        for (i, row) in c.gpu.briefs().enumerate() {
            let leaf = at.leaf[i];
            if row.kind != GpuKind::Kernel || leaf == NO {
                continue;
            }
            if let Some(k) = at.op_work.find(leaf, &mut finger) {
                let e = &mut kernels[k];
                e.ns += row.dur;
                e.count += 1;
                if MATH.contains(&m.buckets[i]) {
                    e.math_ns += row.dur;
                    e.math_count += 1;
                }
            }
        }
        OpKernelTable { kernels }
    }

    /// The kernels of the op with work at position `k` of `Attribution::op_work` (none counted
    /// for an op that launched no kernel).
    fn at(&self, k: usize) -> &OpKernels {
        &self.kernels[k]
    }
}

/// The work of the op at `leaf` (an index into the op tree), when its shapes gave one, and its
/// position among the ops with work; searched from `finger` (rows are read in order).
fn op_work<'m>(m: &Model<'m>, leaf: u32, finger: &mut usize) -> Option<(usize, &'m OpWork)> {
    let works = &m.at.op_work;
    works.find(leaf, finger).map(|k| (k, works.at(k)))
}

/// One kernel row's work.
struct RowWork {
    flops: f64,
    bytes: f64,
    precision: Option<Precision>,
    source: WorkSource,
    split: bool,
    causal: bool,
}

impl RowWork {
    /// A row's share of its op's work: the op's FLOPs went to its GEMM or attention kernels
    /// when it launched some (a convolution's transposes and reductions move its data), else
    /// to all of them, by time; its bytes to all of them by time.
    fn share_of(w: &OpWork, k: &OpKernels, dur: i64, math: bool) -> RowWork {
        let share = |ns: i64, n: u32| if ns > 0 { dur as f64 / ns as f64 } else { 1.0 / n as f64 };
        let flop_share = match (k.math_count, math) {
            (0, _) => share(k.ns, k.count),
            (_, true) => share(k.math_ns, k.math_count),
            (_, false) => 0.0,
        };
        RowWork {
            flops: w.flops * flop_share,
            bytes: w.bytes * share(k.ns, k.count),
            precision: w.precision,
            source: w.source,
            split: k.count > 1,
            causal: w.causal,
        }
    }
}

/// Each kernel row's work (FLOPs, bytes), asked for in row order: what the layers pass adds
/// up per layer, by the same split as the sums (the trace's own counts first, then the op's
/// work by its kernels' time). Communication has no work here, as on the roofline.
pub struct RowWorks<'m> {
    m: &'m Model<'m>,
    per_op: &'m OpKernelTable,
    counted: std::iter::Peekable<std::slice::Iter<'m, crate::analysis::model::collect::KernelCount>>,
    finger: usize,
}

impl<'m> RowWorks<'m> {
    /// None when the trace has no work to split (no shapes and no counts): nothing to ask.
    pub fn new(m: &'m Model<'m>, per_op: &'m OpKernelTable) -> Option<RowWorks<'m>> {
        let c = m.c;
        if m.at.op_work.is_empty() && c.gpu_work.is_empty() {
            return None;
        }
        Some(RowWorks { m, per_op, counted: c.gpu_work.iter().peekable(), finger: 0 })
    }

    /// Row `i`'s (FLOPs, bytes); `i` must not go down from one call to the next.
    pub fn of(&mut self, i: usize) -> Option<(f64, f64)> {
        while self.counted.next_if(|k| (k.row as usize) < i).is_some() {}
        let own = self.counted.next_if(|k| k.row as usize == i);
        let (c, at) = (self.m.c, self.m.at);
        if c.gpu.kind(i) != GpuKind::Kernel || self.m.buckets[i] == Bucket::Communication {
            return None;
        }
        if let Some(k) = own {
            return Some((k.flops, k.bytes));
        }
        let leaf = at.leaf[i];
        let (k, w) = op_work(self.m, leaf, &mut self.finger)?;
        let r = RowWork::share_of(w, self.per_op.at(k), c.gpu.dur(i), MATH.contains(&self.m.buckets[i]));
        Some((r.flops, r.bytes))
    }
}

/// Sums each kernel row's share of its op's work. `row_step` is each row's step (or NO), empty
/// without steps.
pub fn sums(m: &Model, per_op: &OpKernelTable) -> WorkSums {
    let (c, at, buckets) = (m.c, m.at, m.buckets);
    let s =
        WorkSums { steps: vec![[0.0; 8]; m.steps.len()], ops_with_shapes: c.ops_with_shapes, ..WorkSums::default() };
    let mut sum = Summer { s, ..Summer::default() };
    let mut counted = c.gpu_work.iter().peekable();
    let mut finger = 0;
    for (i, row) in c.gpu.briefs().enumerate() {
        let own = match counted.peek() {
            Some(k) if k.row as usize == i => counted.next(),
            _ => None,
        };
        if row.kind != GpuKind::Kernel {
            continue;
        }
        // Collectives move data between GPUs at the link's rate, not the memory's: they have
        // their own figures (the collectives table), not a place on the roofline.
        if buckets[i] == Bucket::Communication {
            sum.s.communication_ns += row.dur;
            continue;
        }
        sum.s.kernel_ns += row.dur;
        let leaf = at.leaf[i];
        let work = match (own, op_work(m, leaf, &mut finger)) {
            (Some(k), w) => Some(RowWork {
                flops: k.flops,
                bytes: k.bytes,
                precision: w.and_then(|(_, w)| w.precision),
                source: WorkSource::Inductor,
                split: false,
                causal: false,
            }),
            (None, Some((k, w))) => Some(RowWork::share_of(w, per_op.at(k), row.dur, MATH.contains(&buckets[i]))),
            (None, None) => None,
        };
        match work {
            Some(work) => sum.add(m, i, row, leaf, work),
            None => sum.without_work(m, i, row, leaf),
        }
    }
    sum.finish(c)
}

/// The sums so far, with where each kernel name and op sits in them.
#[derive(Default)]
struct Summer {
    s: WorkSums,
    by_name: FxHashMap<u32, usize>,
    by_op: FxHashMap<u32, usize>,
    unmodelled: FxHashMap<u32, i64>,
    /// Whether each kernel name says TF32, read once per name (it lowercases the full name).
    tf32: FxHashMap<u32, bool>,
}

impl Summer {
    /// A kernel row whose work is not known: a graph replay's, an op's that no formula
    /// models (listed by name), or unknown.
    fn without_work(&mut self, m: &Model, i: usize, row: RowBrief, leaf: u32) {
        let (c, at, s) = (m.c, m.at, &mut self.s);
        let name = (leaf != NO).then(|| at.ops.spans[leaf as usize].name);
        let call = at.runtime[i];
        match name {
            // A graph replay's op is the one around the launch, not the one that captured
            // the kernel: its work needs the capture trace (or the captured op has none).
            _ if call != NO
                && at.captured(i).is_none()
                && c.names.is(m.runtime[call as usize].name, NAME_GRAPH_LAUNCH) =>
            {
                s.graph_ns += row.dur;
            }
            Some(n) if c.ops_with_shapes > 0 && !c.names.is(n, NAME_WORK) => {
                s.unmodelled_ns += row.dur;
                *self.unmodelled.entry(n).or_default() += row.dur;
            }
            _ => s.unknown_ns += row.dur,
        }
    }

    /// A kernel row's work, to its kernel name, its op and its step.
    fn add(&mut self, m: &Model, i: usize, row: RowBrief, leaf: u32, mut work: RowWork) {
        let (c, facts, bucket, s) = (m.c, m.facts, m.buckets[i], &mut self.s);
        // FP32 work ran at the TF32 rate where the library chose it: the kernel's name says.
        work.precision = match work.precision {
            Some(Precision::Fp32)
                if *self
                    .tf32
                    .entry(row.name)
                    .or_insert_with(|| facts.get(&row.name).is_some_and(|f| runs_tf32(&f.name.full))) =>
            {
                Some(Precision::Tf32)
            }
            p => p,
        };
        s.known_ns[source_index(work.source)] += row.dur;
        let k = *self.by_name.entry(row.name).or_insert_with(|| {
            let full = c.names.get(row.name).to_string();
            let short = facts.get(&row.name).map_or_else(|| full.clone(), |f| f.name.short.clone());
            s.kernels.push((full, short, KernelSum::default()));
            s.kernels.len() - 1
        });
        let p = work.precision.map_or(UNKNOWN_PRECISION, Precision::index);
        s.kernels[k].2.add(row.dur, &work, p, bucket);
        if leaf != NO {
            let name = m.at.ops.spans[leaf as usize].name;
            let o = *self.by_op.entry(name).or_insert_with(|| {
                s.ops.push((c.names.get(name).to_string(), KernelSum::default()));
                s.ops.len() - 1
            });
            s.ops[o].1.add(row.dur, &work, p, bucket);
        }
        if let Some(step) = m.row_step.get(i).filter(|&&t| t != NO) {
            s.steps[*step as usize][p] += work.flops;
        }
    }

    /// The sums, with the unmodelled ops that took the most time listed by name.
    fn finish(self, c: &Collector) -> WorkSums {
        let mut s = self.s;
        let mut listed: Vec<(String, i64)> =
            self.unmodelled.into_iter().map(|(n, t)| (c.names.get(n).to_string(), t)).collect();
        listed.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        listed.truncate(UNMODELLED_LISTED);
        s.unmodelled = listed;
        s
    }
}

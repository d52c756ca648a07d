//! Diagnostics: what the reader and the analysis noticed about the input, one typed table.
//! Each id has one fixed severity; the message adds the numbers of this trace.

use crate::analysis::model::collect::Collector;
use crate::analysis::passes::extra::Extra;
use crate::report::{CriticalPath, Diagnostic};
use crate::trace::{self, End};
pub use crate::vocab::DiagnosticId;

fn diag(id: DiagnosticId, count: u64, message: String) -> Diagnostic {
    Diagnostic { id, count, severity: id.severity(), message }
}

/// How the reading ended, where it ended early.
fn ending(o: &trace::Outcome) -> Option<Diagnostic> {
    use DiagnosticId as D;
    let one = match &o.end {
        End::Complete | End::Cancelled => return None,
        End::Truncated { at } => diag(
            D::Truncated,
            1,
            format!("the file is cut short: the JSON ends at byte {at} inside the trace; this report covers the {} events read before that", o.events),
        ),
        End::Invalid { at, message } => diag(
            D::InvalidJson,
            1,
            format!("invalid JSON at byte {at} ({message}); reading stopped there, this report covers the {} events before it", o.events),
        ),
        End::Corrupt { at, message } => diag(
            D::CorruptGzip,
            1,
            format!("{message} (after {at} bytes of JSON); this report covers the {} events read before that", o.events),
        ),
        End::Io { at, message } => diag(
            D::InputError,
            1,
            format!("{message} (after {at} bytes of JSON); this report covers the {} events read before that", o.events),
        ),
        End::ValueTooLarge { at } => diag(
            D::ValueTooLarge,
            1,
            format!("the JSON value at byte {at} is larger than the {} MiB limit on one value; reading stopped there, this report covers the {} events before it", crate::limits::MAX_VALUE_BYTES >> 20, o.events),
        ),
    };
    Some(one)
}

pub fn diagnostics(c: &Collector, o: &trace::Outcome, b: &Extra, path: Option<&CriticalPath>) -> Vec<Diagnostic> {
    let mut d = Vec::new();
    d.extend(ending(o));
    d.extend(gpu_rows_missing(c, o));
    unreadable(c, &mut d);
    skipped(c, &mut d);
    linking(c, b, &mut d);
    not_analysed(c, o, &mut d);
    limits(c, &mut d);
    path_limit(path, &mut d);
    if o.trailing_bytes {
        d.push(diag(
            DiagnosticId::TrailingData,
            1,
            "data after the end of the top-level JSON value was ignored".into(),
        ));
    }
    d
}

/// Steps too large for a critical path (`limits::MAX_PATH_ITEMS`), named in the path's section.
fn path_limit(cp: Option<&CriticalPath>, d: &mut Vec<Diagnostic>) {
    let Some(cp) = cp else { return };
    let n = cp.steps_too_large.len() as u64;
    count(
        d,
        DiagnosticId::PathStepTooLarge,
        n,
        format!(
            "{n} step(s) hold more than {} rows, calls, ops and syncs: their critical path was not computed (memory); every other figure is exact",
            crate::limits::MAX_PATH_ITEMS
        ),
    );
}

/// `id` with its count, where there is something to count.
fn count(d: &mut Vec<Diagnostic>, id: DiagnosticId, n: u64, message: String) {
    if n > 0 {
        d.push(diag(id, n, message));
    }
}

/// Why the trace has no GPU rows, where it has none.
fn gpu_rows_missing(c: &Collector, o: &trace::Outcome) -> Option<Diagnostic> {
    use DiagnosticId as D;
    if c.gpu.is_empty() && c.launch_ns > 0 && matches!(o.end, End::Complete) {
        // The host launched kernels, so the GPU ran: its rows were lost (CUPTI / roctracer
        // buffers dropped, the GPU activity not requested, or the trace written before flush).
        // In a file cut short they may be past the cut: that is said by the cut's diagnostic.
        // The count is the launch calls seen: the page and the text say how many were lost.
        Some(diag(
            D::GpuActivityLost,
            c.launch_calls.max(1),
            format!(
                "{} kernel launch calls ({:.1} ms of CPU) but no kernel, memcpy or memset rows: the profiler lost \
                 the GPU activity, this is not a CPU-only trace; re-profile with the CUDA / HIP activity on",
                c.launch_calls,
                c.launch_ns as f64 / 1e6
            ),
        ))
    } else if c.gpu.is_empty() {
        Some(diag(D::NoGpuRows, 1, "no GPU kernel, memcpy or memset rows: a CPU-only trace, or an accelerator whose rows tracesight does not know (see unknown categories)".into()))
    } else {
        None
    }
}

/// Events that could not be read as events, or whose category is unknown.
fn unreadable(c: &Collector, d: &mut Vec<Diagnostic>) {
    use DiagnosticId as D;
    let k = &c.counters;
    if k.malformed > 0 {
        let (at, why) = k.first_malformed.clone().unwrap_or_default();
        d.push(diag(
            D::MalformedEvent,
            k.malformed,
            format!("trace events that are not readable event objects were skipped (first at byte {at}: {why})"),
        ));
    }
    if !k.unknown_cats.is_empty() {
        let total: u64 = k.unknown_cats.iter().map(|(_, n)| n).sum();
        let list: Vec<String> = k.unknown_cats.iter().map(|(cat, n)| format!("\"{cat}\" ({n})")).collect();
        d.push(diag(
            D::UnknownCategory,
            total,
            format!("events with unknown categories were not analysed: {}", list.join(", ")),
        ));
    }
}

/// Complete events whose times could not be used as written.
fn skipped(c: &Collector, d: &mut Vec<Diagnostic>) {
    let k = &c.counters;
    count(d, DiagnosticId::MissingTimestamp, k.missing_ts, "complete events without a readable ts were skipped".into());
    count(d, DiagnosticId::NegativeDuration, k.negative_dur, "events with a negative dur were counted as 0".into());
}

/// GPU rows and launch calls that could not be tied to each other or to their ops as usual.
fn linking(c: &Collector, b: &Extra, d: &mut Vec<Diagnostic>) {
    use DiagnosticId as D;
    let k = &c.counters;
    count(d, D::ExternalIdMismatch, b.external_mismatch, format!("{} launch calls carry an External id naming an op that does not enclose the call (on another thread or at another time); the op around the call was used instead", b.external_mismatch));
    count(
        d,
        D::DanglingCorrelation,
        b.dangling_correlation,
        "GPU rows whose correlation id matches no runtime launch call (they keep their kernel name only)".into(),
    );
    count(
        d,
        D::UnattributedGpuRows,
        b.unattributed.0,
        "GPU rows with no resolvable launching op (bucketed by kernel name only)".into(),
    );
    let linked = if b.external_only_us > 0.0 {
        format!(
            ": {} of them linked to their ops through their own External id (the trace has no launch calls for them)",
            crate::vocab::fmt_us(b.external_only_us)
        )
    } else {
        String::new()
    };
    count(
        d,
        D::GpuRowWithoutCorrelation,
        k.gpu_without_correlation,
        format!("GPU rows without args.correlation{linked}"),
    );
    count(d, D::ZeroDurationGpuRows, k.zero_dur_gpu, "GPU rows with dur 0".into());
}

/// Rows read but, by their kind, not analysed (or not needed).
fn not_analysed(c: &Collector, o: &trace::Outcome, d: &mut Vec<Diagnostic>) {
    use DiagnosticId as D;
    let k = &c.counters;
    count(d, D::CudaSyncRows, k.cuda_sync_rows, "cuda_sync rows (GPU-side waits) are not GPU work and are not counted in GPU time (HolisticTraceAnalysis counts them as kernels)".into());
    count(d, D::GpuUserAnnotations, k.gpu_annotations, gpu_annotations_message(k.gpu_step_annotations));
    count(
        d,
        D::BeginEndEvents,
        k.begin_end,
        "B/E (begin/end) events are not analysed; only complete (X) events are".into(),
    );
    count(
        d,
        D::FlowEvents,
        k.flow,
        "flow events (ph s/f) were not needed: launches are linked to GPU rows by correlation id".into(),
    );
    count(d, D::InstantEvents, k.instant, "instant events (ph i) are not analysed".into());
    count(d, D::CounterEvents, k.counters, "counter events (ph C) are not analysed".into());
    count(
        d,
        D::NoCategory,
        k.no_category,
        "events without a cat (e.g. old [memory] instant events) were skipped".into(),
    );
    count(d, D::StrayCommas, o.stray_commas, "empty elements (stray commas) in traceEvents were skipped".into());
}

/// What the reader's bounds on names and rows cut or merged.
fn limits(c: &Collector, d: &mut Vec<Diagnostic>) {
    use DiagnosticId as D;
    let k = &c.counters;
    let long = c.names.long_names + c.string_ids_long();
    count(
        d,
        D::LongName,
        long,
        format!("{long} names longer than {} bytes were cut to that length", crate::limits::MAX_NAME_BYTES),
    );
    let over = c.names.over_limit + c.string_ids_over();
    count(
        d,
        D::NameLimit,
        over,
        format!(
            "more than {} distinct names: {over} occurrences of later new names were merged into \"{}\"",
            crate::limits::MAX_NAMES,
            crate::limits::OTHER_NAME
        ),
    );
    count(
        d,
        D::RowLimit,
        k.rows_dropped,
        format!(
            "{} events past the limit of {} kept rows of their kind (GPU rows, runtime calls, CPU ops) were counted but not analysed",
            k.rows_dropped,
            crate::limits::MAX_ROWS
        ),
    );
}

/// The diagnostics vocabulary as Markdown, for docs/definitions.md.
pub fn markdown() -> String {
    let mut o = String::from("| id | severity | meaning |\n|---|---|---|\n");
    for d in DiagnosticId::ALL {
        o.push_str(&format!("| `{}` | {} | {} |\n", d.id(), d.severity(), d.meaning()));
    }
    o
}

/// What the gpu_user_annotation diagnostic says, with the GPU-side ProfilerStep spans named.
fn gpu_annotations_message(steps: u64) -> String {
    let mut m = "gpu_user_annotation spans are annotations, not GPU work; not counted in GPU time".to_string();
    if steps > 0 {
        m.push_str(&format!("; {steps} of them are ProfilerStep spans: steps are taken from the CPU's ProfilerStep spans only, so each is counted once (with them on the GPU alone there are no steps)"));
    }
    m
}

//! The ids of hints, diagnostics and idle causes, and how much each matters: the words every
//! layer uses. Their rules live with the passes that fire them (`impl` blocks there).

use super::units::fmt_us;
use serde::{Deserialize, Serialize};

/// How much a hint or diagnostic matters. Ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    #[default]
    Info,
    Warning,
    Error,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HintId {
    GpuIdle,
    LaunchBound,
    HostSync,
    CollectiveShare,
    ExposedComm,
    ElementwiseShare,
    /// Device-side layout copies (the seed's memory-share rule).
    MemoryShare,
    /// Host <-> device copies.
    MemcpyShare,
    Dataloader,
    NoTensorCores,
    AttentionNotFlash,
    EagerAttention,
    CoreComputeLow,
    /// Kernels far below their roofline (compute or memory).
    BelowRoof,
    /// No op shapes recorded: no FLOPs, roofline or MFU.
    NoShapes,
}

impl HintId {
    pub fn id(self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    }
}

impl std::fmt::Display for HintId {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.id())
    }
}

impl HintId {
    pub const ALL: [HintId; 15] = [
        HintId::AttentionNotFlash,
        HintId::EagerAttention,
        HintId::GpuIdle,
        HintId::LaunchBound,
        HintId::HostSync,
        HintId::CollectiveShare,
        HintId::ExposedComm,
        HintId::ElementwiseShare,
        HintId::MemoryShare,
        HintId::MemcpyShare,
        HintId::Dataloader,
        HintId::NoTensorCores,
        HintId::CoreComputeLow,
        HintId::BelowRoof,
        HintId::NoShapes,
    ];
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticId {
    Truncated,
    InvalidJson,
    CorruptGzip,
    InputError,
    ValueTooLarge,
    NoGpuRows,
    GpuActivityLost,
    MalformedEvent,
    UnknownCategory,
    MissingTimestamp,
    NegativeDuration,
    ExternalIdMismatch,
    DanglingCorrelation,
    UnattributedGpuRows,
    GpuRowWithoutCorrelation,
    ZeroDurationGpuRows,
    CudaSyncRows,
    GpuUserAnnotations,
    BeginEndEvents,
    FlowEvents,
    InstantEvents,
    CounterEvents,
    NoCategory,
    StrayCommas,
    TrailingData,
    LongName,
    NameLimit,
    RowLimit,
    PathStepTooLarge,
}

impl DiagnosticId {
    pub const ALL: [DiagnosticId; 29] = [
        DiagnosticId::Truncated,
        DiagnosticId::InvalidJson,
        DiagnosticId::CorruptGzip,
        DiagnosticId::InputError,
        DiagnosticId::ValueTooLarge,
        DiagnosticId::NoGpuRows,
        DiagnosticId::GpuActivityLost,
        DiagnosticId::MalformedEvent,
        DiagnosticId::UnknownCategory,
        DiagnosticId::MissingTimestamp,
        DiagnosticId::NegativeDuration,
        DiagnosticId::ExternalIdMismatch,
        DiagnosticId::DanglingCorrelation,
        DiagnosticId::UnattributedGpuRows,
        DiagnosticId::GpuRowWithoutCorrelation,
        DiagnosticId::ZeroDurationGpuRows,
        DiagnosticId::CudaSyncRows,
        DiagnosticId::GpuUserAnnotations,
        DiagnosticId::BeginEndEvents,
        DiagnosticId::FlowEvents,
        DiagnosticId::InstantEvents,
        DiagnosticId::CounterEvents,
        DiagnosticId::NoCategory,
        DiagnosticId::StrayCommas,
        DiagnosticId::TrailingData,
        DiagnosticId::LongName,
        DiagnosticId::NameLimit,
        DiagnosticId::RowLimit,
        DiagnosticId::PathStepTooLarge,
    ];

    pub fn severity(self) -> Severity {
        use DiagnosticId::*;
        match self {
            Truncated | InvalidJson | CorruptGzip | InputError | ValueTooLarge => Severity::Error,
            NoGpuRows | GpuActivityLost | MalformedEvent | UnknownCategory | MissingTimestamp | NegativeDuration
            | ExternalIdMismatch | BeginEndEvents | TrailingData | LongName | NameLimit | RowLimit
            | PathStepTooLarge => Severity::Warning,
            DanglingCorrelation
            | UnattributedGpuRows
            | GpuRowWithoutCorrelation
            | ZeroDurationGpuRows
            | CudaSyncRows
            | GpuUserAnnotations
            | FlowEvents
            | InstantEvents
            | CounterEvents
            | NoCategory
            | StrayCommas => Severity::Info,
        }
    }

    /// The stable id, as in the JSON.
    pub fn id(self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    }

    /// What the diagnostic means, for docs/definitions.md's table.
    pub fn meaning(self) -> &'static str {
        use DiagnosticId::*;
        match self {
            Truncated => {
                "the file (plain or gzip) ends inside the trace; the report covers the events before the cut"
            }
            InvalidJson => "invalid JSON inside traceEvents; reading stopped there",
            CorruptGzip => {
                "damaged gzip data (bad header, invalid deflate data, CRC-32 or size mismatch, garbage after a member); reading stopped there"
            }
            InputError => "the file could not be read to its end (a read error); reading stopped there",
            ValueTooLarge => "one event or metadata value is larger than the 64 MiB limit; reading stopped there",
            NoGpuRows => "no kernel, memcpy or memset rows: a CPU-only trace or an unknown accelerator",
            GpuActivityLost => {
                "kernel launch calls but no kernel, memcpy or memset rows: the profiler lost the GPU activity \
                 (re-profile); not a CPU-only trace"
            }
            MalformedEvent => "array elements that are not readable event objects were skipped",
            UnknownCategory => {
                "events with categories tracesight does not know were not analysed (the categories are listed)"
            }
            MissingTimestamp => "complete events without a readable ts were skipped",
            NegativeDuration => "events with a negative dur were counted as 0",
            ExternalIdMismatch => {
                "launch calls whose External id names an op that does not enclose the call; the enclosing op was used"
            }
            DanglingCorrelation => "GPU rows whose correlation id matches no launch call",
            UnattributedGpuRows => "GPU rows with no launching op (bucketed by kernel name only)",
            GpuRowWithoutCorrelation => "GPU rows without args.correlation",
            ZeroDurationGpuRows => "GPU rows with dur 0",
            CudaSyncRows => "cuda_sync rows are waits, not GPU work; not counted",
            GpuUserAnnotations => "gpu_user_annotation spans are annotations, not GPU work; not counted",
            BeginEndEvents => "B/E events are not analysed; only complete (X) events are",
            FlowEvents => "flow events are not needed (launches are linked by correlation id)",
            InstantEvents => "instant events are not analysed",
            CounterEvents => "counter events are not analysed",
            NoCategory => "events without a cat (old [memory] events) were skipped",
            StrayCommas => "empty elements (stray commas) in traceEvents were skipped",
            TrailingData => "data after the end of the top-level JSON value was ignored",
            LongName => "names longer than the 4096-byte limit were cut to it",
            NameLimit => "past the limit of distinct names, new names were merged into one placeholder",
            RowLimit => {
                "past the limit of kept rows of one kind (GPU rows, runtime calls, CPU ops), later events were counted, not analysed"
            }
            PathStepTooLarge => {
                "steps holding more than the 2^20 items (rows, calls, ops, syncs) a critical path is built from got none (memory); every other figure is exact"
            }
        }
    }
}

impl std::fmt::Display for DiagnosticId {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.id())
    }
}

/// Why a gap between GPU rows on a stream happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdleCause {
    Host,
    Kernel,
    Other,
}

impl IdleCause {
    pub const ALL: [IdleCause; 3] = [IdleCause::Host, IdleCause::Kernel, IdleCause::Other];

    pub fn label(self) -> &'static str {
        match self {
            IdleCause::Host => "host wait",
            IdleCause::Kernel => "kernel wait",
            IdleCause::Other => "other",
        }
    }

    /// What the cause means (`threshold_us`: the kernel-wait threshold).
    pub fn meaning(self, threshold_us: f64) -> String {
        match self {
            IdleCause::Host => {
                "the next kernel's launch call began after the previous kernel ended: the CPU was late".into()
            }
            IdleCause::Kernel => {
                format!("gaps shorter than {}: launch overhead between back-to-back kernels", fmt_us(threshold_us))
            }
            IdleCause::Other => "waiting on another stream or event, or rows with no launch call".into(),
        }
    }
}

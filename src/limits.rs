//! Explicit limits on what one trace may make tracesight hold. Reaching one is reported as a
//! diagnostic (the report covers what was kept), never a failure; they bound memory on
//! hostile input (a gzip bomb, a 10 MB name, millions of distinct names) and are far above
//! what real profiler traces need.

#![forbid(unsafe_code)]

/// The largest single JSON value (one event, one top-level metadata value) read into memory.
/// Reading stops at a larger one (diagnostic `value_too_large`).
pub const MAX_VALUE_BYTES: usize = 64 << 20;

/// Longest name kept, in bytes: longer names are cut at a character boundary (diagnostic
/// `long_name`).
pub const MAX_NAME_BYTES: usize = 4096;

/// Distinct names (kernels, ops, runtime calls) tracked; later new names are merged into one
/// placeholder name (diagnostic `name_limit`).
pub const MAX_NAMES: usize = 1 << 17;

/// The placeholder for names past [`MAX_NAMES`].
pub const OTHER_NAME: &str = "(names past the distinct-name limit)";

/// Nesting depth: values tracesight does not read (most of `args`) are skipped by bracket
/// counting or serde_json's iterative skip, at any depth without recursion; the fields it
/// reads are at most three levels deep, and a value of the wrong shape there is a malformed
/// event. serde_json's recursion limit (128) guards every value it parses.
pub const MAX_DEPTH: usize = 128;

/// Rows kept per kind (GPU rows, runtime calls, CPU ops, module spans, memory events): later
/// events of that kind are read and counted but not analysed (diagnostic `row_limit`). About
/// 23-24 bytes per GPU row, 40 per runtime call or CPU op (see docs/definitions.md). Sized for real traces
/// first: a 10 GB Kineto trace has a few million rows of each kind, and its numbers must be
/// exact; hostile input (10 million tiny kernels, a gzip bomb) fills the GPU rows' limit in
/// about 230 MB, see docs/performance.md.
pub const MAX_ROWS: usize = 1 << 23;

/// Items (GPU rows, runtime calls, CPU op spans, synchronising calls) one step's critical path
/// is built from. Its graph costs about 100-134 bytes an item, so a step past this (a trace of
/// 8 M tiny kernels with no ProfilerStep is one step) would cost over a gigabyte: its path is
/// not computed and the report names the step (`steps_too_large`); every other figure stays
/// exact. Real steps hold thousands to a few hundred thousand.
pub const MAX_PATH_ITEMS: usize = 1 << 20;

//! The trace's top-level metadata (devices, distributed info) and what a later part of a split file defers.

use crate::trace::{Device, Meta};
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize)]
pub(super) struct DeferredSums {
    pub(super) sm_eff: Vec<f64>,
    pub(super) occupancy: Vec<f64>,
    /// Metadata the part read, replayed onto the parts before it (a later value replaces an
    /// earlier one, as in one reading).
    pub(super) metadata: Vec<Meta>,
}

/// A part of a split file that cannot be joined to the parts before it with the result of one
/// reading: a limit was reached; the file is then read on from that part in one go (the CLI,
/// a `.json.gz` inflated again, the page's lead worker).
#[derive(Debug)]
pub struct NotJoinable;

/// Top-level metadata of the trace file.
#[derive(Debug, Default, Clone)]
pub struct Metadata {
    pub devices: Vec<Device>,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
}

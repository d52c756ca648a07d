//! The trace's top-level metadata (devices, distributed info) and what a later part of a split file defers.

use crate::trace::Loose;
use serde::{Deserialize, Serialize};

#[derive(Default, Serialize, Deserialize)]
pub(super) struct DeferredSums {
    pub(super) sm_eff: Vec<f64>,
    pub(super) occupancy: Vec<f64>,
    /// Top-level metadata (key, JSON text) the part read, replayed onto the parts before it
    /// (a later value replaces an earlier one, as in one reading).
    pub(super) metadata: Vec<(MetaKey, String)>,
}

/// The top-level metadata the analysis reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum MetaKey {
    /// `deviceProperties` (2021 traces: `computeProperties`).
    Devices,
    /// `distributedInfo`.
    Distributed,
}

impl MetaKey {
    pub(super) fn of(key: &str) -> Option<MetaKey> {
        match key {
            "deviceProperties" | "computeProperties" => Some(MetaKey::Devices),
            "distributedInfo" => Some(MetaKey::Distributed),
            _ => None,
        }
    }
}

/// A part of a split file that cannot be joined to the parts before it with the result of one
/// reading: a limit was reached; the file is then read whole.
#[derive(Debug)]
pub struct NotJoinable;

/// Top-level metadata of the trace file.
#[derive(Debug, Default, Clone)]
pub struct Metadata {
    pub devices: Vec<DeviceProps>,
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize)]
pub struct DeviceProps {
    #[serde(default)]
    pub id: Option<Loose>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, rename = "numSms")]
    pub num_sms: Option<Loose>,
    #[serde(default, rename = "computeMajor")]
    pub compute_major: Option<Loose>,
    #[serde(default, rename = "computeMinor")]
    pub compute_minor: Option<Loose>,
    #[serde(default, rename = "totalGlobalMem")]
    pub total_global_mem: Option<Loose>,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct DistributedInfo {
    #[serde(default)]
    pub(super) backend: Option<String>,
    #[serde(default)]
    pub(super) rank: Option<Loose>,
    #[serde(default)]
    pub(super) world_size: Option<Loose>,
}

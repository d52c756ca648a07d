//! Cross-trace work: ranks of one job, before/after diffs, gates, merging reports.

pub mod combine;
pub mod diff;
pub mod gate;
pub mod ranks;
pub mod split;

//! The data model: the collector's records, rows and their attribution, frozen into a
//! read-only [`frozen::Model`] that every pass reads.

pub(super) mod attribution;
pub(super) mod capture;
pub(super) mod classify;
pub mod collect;
pub mod frozen;
pub mod intervals;
pub(super) mod rows;
pub(super) mod sort;

//! The per-trace passes: each reads the frozen model and returns one part of the report.

pub(super) mod attention;
pub(super) mod collectives;
pub(super) mod cpath;
pub(super) mod cpath_graph;
pub(super) mod cpath_points;
pub(super) mod cpath_segments;
pub(super) mod cpath_step;
pub(super) mod cpath_waits;
pub(super) mod cpath_what_if;
pub(super) mod cpath_windows;
pub mod diagnostics;
pub(super) mod extra;
pub(super) mod generation;
pub(super) mod graphs;
pub mod hints;
pub mod hints_doc;
pub mod idle;
pub(super) mod layers;
pub(super) mod memory;
pub mod roofline;
pub(super) mod row_passes;
pub mod stakes;
pub(super) mod steps;
pub(super) mod tables;
pub mod timeline;

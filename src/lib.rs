//! tracesight: where does my GPU time go?
//!
//! A streaming analyser for PyTorch profiler (Kineto) Chrome-trace files. The pipeline is
//! `input` (bytes, gzip, one importer per format) -> `trace` (format-neutral events, one at a
//! time) -> `analysis` -> [`Report`], which the CLI (`src/main.rs`) and the web page
//! (`src/web`, wasm32 only) both render.
//!
//! The core has no clocks, threads, printing or file access, and never panics on bad input.

pub mod analysis;
pub mod export;
#[cfg(not(target_arch = "wasm32"))]
pub mod files;
pub mod input;
pub mod limits;
#[cfg(not(target_arch = "wasm32"))]
pub mod mcp;
#[cfg(not(target_arch = "wasm32"))]
pub mod parallel;
pub mod report;
#[cfg(not(target_arch = "wasm32"))]
pub mod serve;
pub mod share_link;
pub mod text;
pub mod trace;
pub mod vocab;

/// The page: its view state (pure data) on every target, the rest on wasm32 only.
pub mod web;

pub use analysis::{
    analyze_any, analyze_reader, analyze_slice, combine, combine_all, merge, merge_labelled, Analysis, ErrorKind,
    Options, Range, TraceError, WhatIfSpec,
};
pub use report::{Report, TraceReport};

pub use vocab::TOOL_VERSION;

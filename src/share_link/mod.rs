//! Share links: a view state (the page's: selected trace, sort, search, bucket filter,
//! expanded rows, compare sets; its type lives in web::view_state and comes here as the
//! generic [`LinkView`]) and, unless the page opened the trace itself by `?trace=`, the
//! summary the views show, packed into a URL fragment.
//!
//! Wire format: `s=` + base64url(raw deflate(JSON)) for view state + summary, `v=` + the same
//! for view state only. The JSON is `{"v": 3, "s": view state, "r": report}`: the report in
//! its own serde form ([`Report`]), cut to the declared subset links carry
//! ([`for_link`], in subset.rs) with the text the views derive left empty. A report field
//! added to the schema travels with no edit here.

//! A fragment is untrusted input: [`decode`] is a pure function with bounded work (fragment
//! length, inflated size, row counts, string lengths, number ranges are all capped), a strict
//! schema (unknown keys, wrong types, out-of-range indices are errors) and no panics, so it
//! can be fuzzed directly. One decoder serves every field: generic bounds on the parsed JSON
//! (bounds.rs), serde into the report's types, then the link must be exactly what the encoder
//! makes of what it decoded (no unknown or redundant keys, nothing beyond the subset), and
//! the indices between parts are checked (check.rs, and the view's own [`LinkView::check`]).

#![forbid(unsafe_code)]

mod bounds;
mod check;
mod common;
mod subset;
mod view;

pub use bounds::{MAX_NUMBER, MAX_VALUES};
pub use common::*;
pub use subset::for_link;
pub use view::*;

use crate::report::Report;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

/// The format version in every link; links of version 1 (positional tuples) are refused as
/// an older tracesight's. Version 2 named each critical-path piece in full; it is read as
/// version 3 once the names are indexed (`report::index_piece_names`).
const VERSION: u8 = 3;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, bound = "V: LinkView")]
struct Link<V> {
    v: u8,
    s: V,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    r: Option<Report>,
}

/// The wire form of `report`: its declared subset, derived text left empty.
fn wire_report(report: &Report) -> Report {
    let mut r = for_link(report);
    subset::strip_derived(&mut r);
    r
}

// ---------------------------------------------------------------------------------------

/// The fragment (without `#`) for `state` and, when given, the report's summary.
pub fn encode<V: LinkView>(report: Option<&Report>, state: &V) -> String {
    let link = Link { v: VERSION, s: state.clone(), r: report.map(wire_report) };
    let json = serde_json::to_vec(&link).unwrap_or_default();
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
    let packed = enc.write_all(&json).and_then(|_| enc.finish()).unwrap_or_default();
    use base64::Engine;
    let data = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(packed);
    format!("{}={data}", if report.is_some() { "s" } else { "v" })
}

/// What a summary link holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every trace's summary (and the ranks view): the receiver sees every view.
    Full,
    /// The ranks view of every rank and the summary of the selected trace only: for more
    /// traces than a link may hold ([`MAX_TRACES`], [`MAX_FRAGMENT`]).
    RanksAndSelected,
}

/// The fragment of a summary link for `report` and `state`: every trace when they fit, else
/// the ranks view and the selected trace (the view state then selects it and compares
/// nothing). None when even that does not fit.
pub fn encode_summary<V: LinkView>(report: &Report, state: &V) -> Option<(String, Scope)> {
    if report.traces.len() <= MAX_TRACES {
        let full = encode(Some(report), state);
        if full.len() <= MAX_FRAGMENT {
            return Some((full, Scope::Full));
        }
    }
    encode_ranks_and_selected(report, state).map(|link| (link, Scope::RanksAndSelected))
}

/// The [`Scope::RanksAndSelected`] fragment: None without a ranks view or when too large.
pub fn encode_ranks_and_selected<V: LinkView>(report: &Report, state: &V) -> Option<String> {
    if report.ranks.is_empty() || report.ranks.len() > MAX_RANKS {
        return None;
    }
    let selected = report.traces.get(state.selected() as usize)?;
    let compact = Report {
        tool_version: report.tool_version.clone(),
        traces: vec![selected.clone()],
        errors: report.errors.iter().take(MAX_TRACES).cloned().collect(),
        ranks: report.ranks.clone(),
        job: report.job.clone(),
    };
    let link = encode(Some(&compact), &state.for_selected_only());
    (link.len() <= MAX_FRAGMENT).then_some(link)
}

/// Reads a fragment (with or without its leading `#`). Bounded, strict, never panics.
pub fn decode<V: LinkView>(fragment: &str) -> Result<SharedView<V>, LinkError> {
    let fragment = fragment.strip_prefix('#').unwrap_or(fragment);
    if fragment.len() > MAX_FRAGMENT + 2 {
        return Err(LinkError::TooLong { len: fragment.len() });
    }
    let (with_report, data) = if let Some(d) = fragment.strip_prefix("s=") {
        (true, d)
    } else if let Some(d) = fragment.strip_prefix("v=") {
        (false, d)
    } else if fragment.starts_with("r=") {
        return Err(LinkError::OldFormat);
    } else {
        return Err(LinkError::Absent);
    };
    use base64::Engine;
    let packed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(data.as_bytes())
        .map_err(|_| LinkError::Corrupt("not base64url"))?;
    let mut json = Vec::new();
    flate2::read::DeflateDecoder::new(packed.as_slice())
        .take(MAX_INFLATED as u64 + 1)
        .read_to_end(&mut json)
        .map_err(|_| LinkError::Corrupt("not deflate data"))?;
    if json.len() > MAX_INFLATED {
        return Err(LinkError::TooLarge);
    }
    read_link(&json, with_report)
}

/// The inflated JSON to a view: generic bounds, the version, serde into the report's types,
/// the canonical form, the subset, the indices.
fn read_link<V: LinkView>(json: &[u8], with_report: bool) -> Result<SharedView<V>, LinkError> {
    let invalid = |e: String| LinkError::Invalid(e);
    let mut value: serde_json::Value = serde_json::from_slice(json).map_err(|e| invalid(e.to_string()))?;
    match value.get("v").and_then(serde_json::Value::as_u64) {
        Some(1) => return Err(LinkError::OldFormat),
        Some(2) => {
            // Pieces named in full: indexed, then read (and held to the encoder's form) as now.
            if let Some(r) = value.get_mut("r") {
                crate::report::index_piece_names(r);
            }
            value["v"] = serde_json::Value::from(VERSION);
        }
        Some(v) if v == VERSION as u64 => {}
        other => return Err(invalid(format!("unknown format version {other:?}"))),
    }
    bounds::check_bounds(&value).map_err(invalid)?;
    let link: Link<V> = serde_json::from_value(value.clone()).map_err(|e| invalid(e.to_string()))?;
    // Strict: the data must be what the encoder writes for what was read, so unknown keys,
    // defaults written out and parts beyond the declared subset are refused alike.
    if link.r.is_some() != with_report {
        return Err(invalid("the data does not match the link's kind".into()));
    }
    let mut report = link.r;
    if let Some(r) = &mut report {
        check::check_report(r).map_err(invalid)?;
        subset::restore_derived(r);
    }
    let again = Link { v: VERSION, s: link.s, r: report.as_ref().map(wire_report) };
    if serde_json::to_value(&again).ok().as_ref() != Some(&value) {
        return Err(invalid("fields that a link does not carry, or not in the form the encoder writes".into()));
    }
    again.s.check(report.as_ref()).map_err(invalid)?;
    Ok(SharedView { state: again.s, report })
}

/// A stable, short file name stem for exports: the trace file name without `.json[.gz]`.
pub fn stem(file: &str) -> String {
    let base = file.rsplit(['/', '\\']).next().unwrap_or("trace");
    base.trim_end_matches(".gz").trim_end_matches(".json").to_string()
}

//! Share links: a trimmed Report, deflated (miniz_oxide) and base64url-encoded into the URL
//! fragment. Browsers never send the fragment to a server, so the link carries the summary
//! from browser to browser only; the trace itself is never in it.

use super::app::Loaded;
use crate::Report;
use std::sync::Arc;

const PREFIX: &str = "#r=";
/// Links longer than this are unwieldy in chat tools and some browsers' address bars.
const MAX_LINK: usize = 60_000;

/// The Report in the current URL's fragment, if there is a valid one.
pub fn from_location() -> Option<Arc<Loaded>> {
    let hash = leptos::prelude::window().location().hash().ok()?;
    let data = hash.strip_prefix(PREFIX)?;
    let report = decode(data)?;
    Some(Arc::new(Loaded { report, json: String::new(), worker_memory: 0.0 }))
}

/// Removes the fragment so that a reload shows the start screen again.
pub fn clear_location() {
    let window = leptos::prelude::window();
    if window.location().hash().is_ok_and(|h| !h.is_empty()) {
        if let (Ok(history), Ok(path)) = (window.history(), window.location().pathname()) {
            let search = window.location().search().unwrap_or_default();
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&format!("{path}{search}")));
        }
    }
}

/// A link to this page that shows `report` when opened.
pub fn link(report: &Report) -> Result<String, String> {
    let location = leptos::prelude::window().location();
    let href = location.href().map_err(|_| "no page URL".to_string())?;
    let base = href.split('#').next().unwrap_or_default().to_string();
    for keep in [15, 8, 4] {
        let data = encode(&trim(report, keep));
        if data.len() + base.len() + PREFIX.len() <= MAX_LINK {
            return Ok(format!("{base}{PREFIX}{data}"));
        }
    }
    Err("This report is too large for a link; use Export JSON instead.".into())
}

/// Keeps the first `keep` rows of every list that can be long.
fn trim(report: &Report, keep: usize) -> Report {
    let mut r = report.clone();
    for t in &mut r.traces {
        t.top_kernels.truncate(keep);
        t.top_ops.truncate(keep);
        t.steps.truncate(keep * 2);
        t.attention.evidence.truncate(keep);
        for b in &mut t.buckets {
            b.top_names.truncate(3);
            b.matched.truncate(3);
        }
    }
    r
}

fn encode(report: &Report) -> String {
    let json = serde_json::to_vec(report).unwrap_or_default();
    base64url(&miniz_oxide::deflate::compress_to_vec(&json, 9))
}

fn decode(data: &str) -> Option<Report> {
    let packed = unbase64url(data)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, 8 << 20).ok()?;
    serde_json::from_slice(&json).ok()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

fn unbase64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

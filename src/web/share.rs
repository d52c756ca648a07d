//! Share links: a trimmed Report, deflated (miniz_oxide) and base64url-encoded into the URL
//! fragment (the encoding itself is `crate::share`, target-independent). Browsers never send
//! the fragment to a server, so the link carries the summary from browser to browser only;
//! the trace itself is never in it.

use super::app::Loaded;
use crate::share::{decode, encode};
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

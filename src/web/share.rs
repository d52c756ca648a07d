//! What the page's URL asks for, and links back to what the page shows.
//!
//! - `?trace=<URL>` (repeatable, one per rank): the page fetches the traces itself and
//!   analyses them locally; the fragment then carries only the view state (`#v=...`).
//! - `#s=...`: the view state and the report's summary, for a trace the receiver does not
//!   have. Browsers never send the fragment to a server.
//!
//! The fragment is decoded by the core's [`crate::share_link::decode`] (bounded, strict); a
//! bad one gives an error screen that says what is wrong with the link.

use crate::report::Report;
use crate::share_link::{self, LinkError, Scope, SharedView};
use crate::web::view_state::{self, ViewState};
use wasm_bindgen::JsCast;

/// What the page was opened with.
pub enum Opening {
    Start,
    /// A summary link: the report and the view.
    Shared(SharedView<ViewState>),
    /// Traces to fetch, and the view to restore once they are analysed.
    Urls(Vec<String>, ViewState),
    /// A fragment that cannot be opened.
    BadLink(LinkError),
}

/// At most this many `trace=` URLs (ranks) in one link.
pub const MAX_URLS: usize = 64;

/// Reads the page's URL. The fragment's length is checked before it is copied into wasm.
pub fn from_location() -> Opening {
    let location = leptos::prelude::window().location();
    let urls = trace_urls();
    let hash_len = js_sys::Reflect::get(&location, &"hash".into())
        .ok()
        .and_then(|h| h.dyn_into::<js_sys::JsString>().ok())
        .map_or(0, |h| h.length() as usize);
    let fragment = if hash_len > share_link::MAX_FRAGMENT + 3 {
        return Opening::BadLink(LinkError::TooLong { len: hash_len.saturating_sub(1) });
    } else {
        location.hash().unwrap_or_default()
    };
    let shared = if fragment.len() > 1 { Some(view_state::decode(&fragment)) } else { None };
    match (urls.is_empty(), shared) {
        (true, None) | (true, Some(Err(LinkError::Absent))) => Opening::Start,
        (true, Some(Ok(v))) if v.report.is_some() => Opening::Shared(v),
        (true, Some(Ok(_))) => Opening::BadLink(LinkError::Invalid("a view without a report or a trace URL".into())),
        (true, Some(Err(e))) => Opening::BadLink(e),
        (false, None) | (false, Some(Err(LinkError::Absent))) => Opening::Urls(urls, ViewState::default()),
        (false, Some(Ok(v))) => Opening::Urls(urls, v.state),
        (false, Some(Err(e))) => Opening::BadLink(e),
    }
}

/// The `trace=` parameters of the page's URL, in order.
pub fn trace_urls() -> Vec<String> {
    let search = leptos::prelude::window().location().search().unwrap_or_default();
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return Vec::new();
    };
    params.get_all("trace").iter().filter_map(|v| v.as_string()).filter(|s| !s.is_empty()).take(MAX_URLS).collect()
}

/// Removes the query and fragment so that a reload shows the start screen again.
pub fn clear_location() {
    let window = leptos::prelude::window();
    let location = window.location();
    let dirty = location.hash().is_ok_and(|h| !h.is_empty()) || location.search().is_ok_and(|s| !s.is_empty());
    if dirty {
        if let (Ok(history), Ok(path)) = (window.history(), location.pathname()) {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&path));
        }
    }
}

/// A link to this page that reopens `state`: next to the page's `?trace=` URLs when it was
/// opened by them (view state only), else with the report's summary (all of it, or for too
/// many traces the ranks view and the selected trace: the scope says which).
pub fn link(report: &Report, state: &ViewState, from_urls: bool) -> Result<(String, Option<Scope>), String> {
    let location = leptos::prelude::window().location();
    let href = location.href().map_err(|_| "no page URL".to_string())?;
    let without_hash = href.split('#').next().unwrap_or_default().to_string();
    let (fragment, scope) = if from_urls {
        (share_link::encode(None, state), None)
    } else {
        let (f, scope) = share_link::encode_summary(report, state).ok_or_else(|| {
            format!(
                "This report is too large for a link (at most {} KB of data); use Export JSON, or share the traces' URLs with ?trace=.",
                share_link::MAX_FRAGMENT / 1024
            )
        })?;
        (f, Some(scope))
    };
    if fragment.len() > share_link::MAX_FRAGMENT {
        return Err(format!(
            "This view is too large for a link ({} KB of data, at most {} KB).",
            fragment.len() / 1024,
            share_link::MAX_FRAGMENT / 1024
        ));
    }
    let base = if from_urls {
        without_hash
    } else {
        // A summary link stands alone: no ?trace= next to it.
        let origin = location.origin().unwrap_or_default();
        format!("{origin}{}", location.pathname().unwrap_or_default())
    };
    Ok((format!("{base}#{fragment}"), scope))
}

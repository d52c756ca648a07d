//! Opening traces by URL (`?trace=`): the page fetches each body as a stream, with progress,
//! into a Blob (browser memory, not wasm memory), and hands it to the worker as a `File`,
//! which reads it through the same chunked reader as a dropped file (gzip by magic bytes).
//!
//! Which hosts may be fetched from is a build-time setting (`TRACESIGHT_TRACE_ORIGINS`,
//! space-separated origins), written by `scripts/build-web.sh` into the page's CSP
//! `connect-src` and compiled in here, so the page says clearly when a host is not allowed
//! instead of failing on a CSP violation. The default: the site's own origin only.

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, ReadableStreamDefaultReader, Response, Url};

/// The origins besides the page's own that traces may be fetched from.
pub fn allowed_origins() -> Vec<&'static str> {
    option_env!("TRACESIGHT_TRACE_ORIGINS").unwrap_or("").split_whitespace().collect()
}

/// Why a trace URL could not be read: a title and details for the error screen.
pub struct FetchError {
    pub title: String,
    pub details: Vec<String>,
}

fn err(title: impl Into<String>, details: Vec<String>) -> FetchError {
    FetchError { title: title.into(), details }
}

/// Resolves `url` against the page and checks its origin against the allowed list.
pub fn check(url: &str) -> Result<String, FetchError> {
    let location = leptos::prelude::window().location();
    let page = location.href().unwrap_or_default();
    let own = location.origin().unwrap_or_default();
    let parsed = Url::new_with_base(url, &page).map_err(|_| err("This trace URL is not valid", vec![url.into()]))?;
    if !matches!(parsed.protocol().as_str(), "http:" | "https:") {
        return Err(err("Only http and https trace URLs can be opened", vec![url.into()]));
    }
    let origin = parsed.origin();
    if origin != own && !allowed_origins().contains(&origin.as_str()) {
        let allowed = std::iter::once(format!("{own} (this site)"))
            .chain(allowed_origins().iter().map(|o| o.to_string()))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(err(
            "This page may not fetch traces from that host",
            vec![
                format!("{url}: {origin} is not in this site's allowed list ({allowed})."),
                "The hosts are fixed when the site is built (TRACESIGHT_TRACE_ORIGINS, see docs/browser.md), so a link cannot send your browser elsewhere.".into(),
            ],
        ));
    }
    Ok(parsed.href())
}

/// The last path segment of `url`, for the report's file name.
pub fn file_name(url: &str) -> String {
    let name = Url::new(url)
        .ok()
        .map(|u| u.pathname())
        .and_then(|p| p.rsplit('/').next().map(str::to_string))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "trace.json".into());
    js_sys::decode_uri_component(&name).ok().and_then(|s| s.as_string()).unwrap_or(name)
}

/// Fetches `url` (already checked) into a `File`, calling `progress(bytes, total)` per chunk
/// (`total` 0 when the server does not say).
pub async fn fetch_trace(url: &str, mut progress: impl FnMut(f64, f64)) -> Result<File, FetchError> {
    let window = leptos::prelude::window();
    let resp: Response = match JsFuture::from(window.fetch_with_str(url)).await {
        Ok(r) => r.unchecked_into(),
        Err(e) => {
            return Err(err(
                "The trace server did not let this page read the trace",
                vec![
                    format!("{url}: {}", describe(&e)),
                    "Either the server cannot be reached, or it does not send the CORS header this page needs (Access-Control-Allow-Origin with this site's origin; see docs/browser.md).".into(),
                ],
            ))
        }
    };
    let status = resp.status();
    if status == 404 || status == 410 {
        return Err(err("Trace not found (HTTP 404)", vec![format!("{url}: the server has no file at this address.")]));
    }
    if !resp.ok() {
        return Err(err(
            format!("The trace server answered HTTP {status}"),
            vec![format!("{url}: {} {}", status, resp.status_text())],
        ));
    }
    let headers = resp.headers();
    let content_type = headers.get("content-type").ok().flatten().unwrap_or_default().to_ascii_lowercase();
    let html = || {
        err(
            "This URL returned a web page, not a trace",
            vec![
                format!("{url}: the server sent HTML ({content_type}), for example a login or error page."),
                "Use the address of the .json or .json.gz file itself.".into(),
            ],
        )
    };
    if content_type.starts_with("text/html") || content_type.starts_with("application/xhtml") {
        return Err(html());
    }
    // Content-Length is the transferred size (compressed when the server gzips on the fly).
    let total: f64 = headers.get("content-length").ok().flatten().and_then(|v| v.trim().parse().ok()).unwrap_or(0.0);
    let Some(body) = resp.body() else {
        return Err(err("The trace server sent an empty answer", vec![url.into()]));
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let parts = Array::new();
    let mut bytes = 0.0;
    let mut first = true;
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|e| err("Reading the trace from the server failed", vec![format!("{url}: {}", describe(&e))]))?;
        if Reflect::get(&chunk, &"done".into()).ok().and_then(|d| d.as_bool()).unwrap_or(true) {
            break;
        }
        let Ok(value) = Reflect::get(&chunk, &"value".into()) else { break };
        let data: Uint8Array = value.unchecked_into();
        if first && data.length() > 0 {
            first = false;
            let head = data.subarray(0, data.length().min(512)).to_vec();
            if looks_like_html(&head) {
                let _ = reader.cancel();
                return Err(html());
            }
        }
        bytes += data.length() as f64;
        parts.push(&data);
        progress(bytes, total);
    }
    File::new_with_u8_array_sequence(&parts, &file_name(url))
        .map_err(|e| err("The browser could not hold the trace", vec![describe(&e)]))
}

/// An HTML document rather than JSON or gzip: starts (after whitespace / BOM) with `<`.
fn looks_like_html(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    head.iter().find(|b| !b.is_ascii_whitespace()).is_some_and(|&b| b == b'<')
}

fn describe(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}

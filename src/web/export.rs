//! Getting results out of the page: the JSON download and the clipboard.

use crate::report::Report;
use std::time::Duration;
use wasm_bindgen::JsCast;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, Url};

/// Downloads `text` as a file of type `mime` (Blob + object URL: nothing leaves the browser).
pub fn download(name: &str, text: &str, mime: &str) {
    let parts = js_sys::Array::of1(&text.into());
    let opts = BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let anchor =
        leptos::prelude::document().create_element("a").ok().and_then(|a| a.dyn_into::<HtmlAnchorElement>().ok());
    if let Some(a) = anchor {
        a.set_href(&url);
        a.set_download(name);
        a.click();
    }
    // The download starts asynchronously; free the URL a little later.
    leptos::prelude::set_timeout(
        move || {
            let _ = Url::revoke_object_url(&url);
        },
        Duration::from_secs(30),
    );
}

/// `<base name>.tracesight.json` for one trace, as a user would name the CLI's output.
pub fn file_name(report: &Report) -> String {
    match report.traces.as_slice() {
        [one] => {
            let stem = crate::export::csv::safe_stem(&crate::share_link::stem(&one.file));
            format!("{stem}.tracesight.json")
        }
        _ => "tracesight-report.json".into(),
    }
}

pub fn copy_text(text: &str) {
    let clipboard = leptos::prelude::window().navigator().clipboard();
    let _ = clipboard.write_text(text);
}

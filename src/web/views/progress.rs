use crate::web::app::{now_ms, FileProgress};
use crate::web::format;
use leptos::prelude::*;

/// Per-file progress while the worker reads: bytes of total, MB/s and time left, and Cancel.
#[component]
pub fn ProgressScreen(progress: RwSignal<Vec<FileProgress>>, on_cancel: Callback<()>) -> impl IntoView {
    view! {
        <section class="progress-screen" data-testid="progress" aria-live="polite">
            <h1>"Reading…"</h1>
            <ul class="files">
                {move || progress.get().into_iter().map(file_row).collect_view()}
            </ul>
            <button type="button" class="button" data-testid="cancel" on:click=move |_| on_cancel.run(())>"Cancel"</button>
            <p class="hint-text">"The trace is read in a background worker; this page stays responsive."</p>
        </section>
    }
}

fn file_row(f: FileProgress) -> impl IntoView {
    let status = match (f.done, f.started_ms) {
        (Some(true), _) => "done".to_string(),
        (Some(false), _) => "could not be read".to_string(),
        (None, None) if f.size == 0.0 => "fetching…".to_string(),
        (None, None) => "waiting".to_string(),
        (None, Some(start)) => {
            let secs = ((now_ms() - start) / 1000.0).max(1e-3);
            let rate = f.bytes / secs;
            let left = if rate > 0.0 { (f.size - f.bytes) / rate } else { f64::INFINITY };
            if f.size <= 0.0 {
                // A download whose size the server did not say.
                return view! {
                    <li>
                        <div class="file-line"><span class="file-name">{f.name.clone()}</span>
                            <span class="num">{format!("{} · {:.0} MB/s", format::bytes(f.bytes), rate / 1e6)}</span></div>
                        <progress aria-label=format!("{} read", f.name)></progress>
                    </li>
                }.into_any();
            }
            format!(
                "{} of {} · {:.0} MB/s · {} left",
                format::bytes(f.bytes),
                format::bytes(f.size),
                rate / 1e6,
                format::seconds(left)
            )
        }
    };
    let max = f.size.max(1.0);
    view! {
        <li>
            <div class="file-line"><span class="file-name">{f.name.clone()}</span><span class="num">{status}</span></div>
            <progress max=max value=f.bytes.min(max) aria-label=format!("{} read", f.name)></progress>
        </li>
    }
    .into_any()
}

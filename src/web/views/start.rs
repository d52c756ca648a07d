use super::widgets::FilePicker;
use leptos::prelude::*;
use web_sys::File;

/// The first screen: one large drop zone, a file button and the sample. Nothing else.
#[component]
pub fn StartScreen(ready: RwSignal<bool>, on_files: Callback<Vec<File>>, on_sample: Callback<()>) -> impl IntoView {
    view! {
        <section class="drop-zone" data-testid="drop-zone" data-ready=move || ready.get().to_string()>
            <h1>"Where does my GPU time go?"</h1>
            <p class="lead">
                "Drop PyTorch profiler traces (" <code>".json"</code> " or " <code>".json.gz"</code>
                ") anywhere on this page to see GPU time by kernel category, the attention backend, "
                "the top kernels and ops, per-step idle time and what to try next."
            </p>
            <div class="actions">
                <FilePicker on_files=on_files label="Choose trace files…" primary=true />
                <button type="button" class="button" data-testid="sample-button" on:click=move |_| on_sample.run(())>
                    "Open the sample trace"
                </button>
            </div>
            <p class="privacy">
                <span class="lock" aria-hidden="true"></span>
                "Your trace stays in this browser: it is read locally, in a background worker, and never uploaded. "
                "Several files (one per rank) can be opened together."
            </p>
        </section>
    }
}

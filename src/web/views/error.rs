use super::widgets::FilePicker;
use crate::web::state::Failure;
use leptos::prelude::*;
use web_sys::File;

/// Nothing could be analysed: say why, and offer the way back.
#[component]
pub fn ErrorScreen(failure: Failure, on_files: Callback<Vec<File>>, on_reset: Callback<()>) -> impl IntoView {
    view! {
        <section class="error-screen" data-testid="error" role="alert">
            <h1>{failure.title}</h1>
            <ul class="error-list">
                {failure.details.into_iter().map(|d| view! { <li><code>{d}</code></li> }).collect_view()}
            </ul>
            <p>
                "tracesight reads Chrome-trace JSON written by the PyTorch profiler ("
                <code>"torch.profiler"</code> " with " <code>"on_trace_ready=tensorboard_trace_handler(...)"</code>
                " or " <code>"prof.export_chrome_trace(...)"</code> "), plain or gzip-compressed."
            </p>
            <div class="actions">
                <FilePicker on_files=on_files label="Choose another file…" primary=true />
                <button type="button" class="button" on:click=move |_| on_reset.run(())>"Back to start"</button>
            </div>
        </section>
    }
}

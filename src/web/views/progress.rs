use crate::web::format;
use crate::web::pool::WorkerPool;
use crate::web::state::{now_ms, FileProgress, FileState, ProgressRows};
use leptos::prelude::*;

/// Per-file progress while the workers read: a row per file (bytes of total, MB/s and time
/// left, done, or why it could not be read), how many are read at once, and Cancel.
#[component]
pub fn ProgressScreen(rows: ProgressRows, on_cancel: Callback<()>) -> impl IntoView {
    // The rows change while this screen shows (`?trace=` downloads, then their reading).
    let headline = move || {
        let n = rows.with(Vec::len);
        let finished = rows.with(|r| {
            r.iter().filter(|f| f.with(|f| matches!(f.state, FileState::Done | FileState::Failed(_)))).count()
        });
        match n {
            1 => "Reading…".to_string(),
            _ => format!("Reading {n} files, {} at a time: {finished} of {n} done", WorkerPool::width(n)),
        }
    };
    view! {
        <section class="progress-screen" data-testid="progress" aria-live="polite">
            <h1 data-testid="progress-headline">{headline}</h1>
            <ul class="files">
                {move || rows.get().into_iter().map(|row| view! { <FileRow row=row /> }).collect_view()}
            </ul>
            <button type="button" class="button" data-testid="cancel" on:click=move |_| on_cancel.run(())>"Cancel"</button>
            <p class="hint-text">"Traces are read in background workers; this page stays responsive."</p>
        </section>
    }
}

/// One file's row; redraws only when this file's progress changes.
#[component]
fn FileRow(row: ArcRwSignal<FileProgress>) -> impl IntoView {
    move || file_row(row.get())
}

fn file_row(f: FileProgress) -> impl IntoView {
    let state = match &f.state {
        FileState::Waiting => "waiting",
        FileState::Reading { .. } => "reading",
        FileState::Done => "done",
        FileState::Failed(_) => "failed",
    };
    if let FileState::Failed(why) = &f.state {
        return view! {
            <li data-state=state class="failed">
                <div class="file-line"><span class="file-name">{f.name.clone()}</span><span class="num">"could not be read"</span></div>
                <p class="file-error">{why.clone()}</p>
            </li>
        }
        .into_any();
    }
    let status = match &f.state {
        FileState::Done => "done".to_string(),
        FileState::Failed(_) => String::new(),
        FileState::Waiting if f.size == 0.0 => "fetching…".to_string(),
        FileState::Waiting => format!("{} · waiting for a free worker", format::bytes(f.size)),
        FileState::Reading { started_ms, from_bytes } => {
            let secs = ((now_ms() - started_ms) / 1000.0).max(1e-3);
            let rate = (f.bytes - from_bytes).max(0.0) / secs;
            let left = if rate > 0.0 { (f.size - f.bytes) / rate } else { f64::INFINITY };
            if rate <= 0.0 && f.size > 0.0 {
                // No rate before the second report.
                format!("{} of {}", format::bytes(f.bytes), format::bytes(f.size))
            } else if f.size <= 0.0 {
                // A download whose size the server did not say.
                return view! {
                    <li data-state=state>
                        <div class="file-line"><span class="file-name">{f.name.clone()}</span>
                            <span class="num">{format!("{} · {:.0} MB/s", format::bytes(f.bytes), rate / 1e6)}</span></div>
                        <progress aria-label=format!("{} read", f.name)></progress>
                    </li>
                }
                .into_any();
            } else {
                format!(
                    "{} of {} · {:.0} MB/s · {} left",
                    format::bytes(f.bytes),
                    format::bytes(f.size),
                    rate / 1e6,
                    format::seconds(left)
                )
            }
        }
    };
    let max = f.size.max(1.0);
    view! {
        <li data-state=state>
            <div class="file-line"><span class="file-name">{f.name.clone()}</span><span class="num">{status}</span></div>
            <progress max=max value=f.bytes.min(max) aria-label=format!("{} read", f.name)></progress>
        </li>
    }
    .into_any()
}

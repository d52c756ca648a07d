//! The browser front end (wasm32 only): a Leptos CSR page (`app`, `views`) and a Web Worker
//! (`worker`) that runs the streaming core on a dropped `File`, chunk by chunk.
//!
//! The page never reads trace bytes itself: it posts the `File` handles to the worker, shows
//! progress, and renders the combined [`crate::report::Report`] the worker sends back.

mod app;
mod client;
mod export;
mod fetch;
mod format;
mod perfetto;
mod pool;
mod protocol;
mod share;
mod state;
mod views;
mod worker;

/// Entry point of the page binary (`src/bin/app.rs`).
pub fn start_app() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}

/// Entry point of the worker binary (`src/bin/worker.rs`).
pub fn start_worker() {
    console_error_panic_hook::set_once();
    worker::run();
}

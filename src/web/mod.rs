//! The browser front end: a Leptos CSR page (`app`, `views`) and a Web Worker (`worker`) that
//! runs the streaming core on a dropped `File`, chunk by chunk, all wasm32 only; and the
//! page's view state ([`view_state`]), pure data compiled on every target so that native
//! tests can build and read share links with it.
//!
//! The page never reads trace bytes itself: it posts the `File` handles to the worker, shows
//! progress, and renders the combined [`crate::report::Report`] the worker sends back.

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod client;
#[cfg(target_arch = "wasm32")]
mod export;
#[cfg(target_arch = "wasm32")]
mod fetch;
#[cfg(target_arch = "wasm32")]
mod format;
#[cfg(target_arch = "wasm32")]
mod perfetto;
#[cfg(target_arch = "wasm32")]
mod pool;
#[cfg(target_arch = "wasm32")]
mod protocol;
#[cfg(target_arch = "wasm32")]
mod share;
#[cfg(target_arch = "wasm32")]
mod state;
pub mod view_state;
#[cfg(target_arch = "wasm32")]
mod views;
#[cfg(target_arch = "wasm32")]
mod worker;

#[cfg(target_arch = "wasm32")]
/// Entry point of the page binary (`src/bin/app.rs`).
pub fn start_app() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(app::App);
}

#[cfg(target_arch = "wasm32")]
/// Entry point of the worker binary (`src/bin/worker.rs`).
pub fn start_worker() {
    console_error_panic_hook::set_once();
    worker::run();
}

//! The analysis Web Worker's wasm entry point (see `src/web/worker.rs`); a stub natively.
fn main() {
    #[cfg(target_arch = "wasm32")]
    tracesight::web::start_worker();
}

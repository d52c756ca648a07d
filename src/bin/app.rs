//! The web page's wasm entry point (see `src/web`); a stub on native targets.
fn main() {
    #[cfg(target_arch = "wasm32")]
    tracesight::web::start_app();
}

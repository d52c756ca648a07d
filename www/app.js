// Page entry: load the Leptos app's wasm (its main() mounts the page). A separate file,
// not an inline script, so the Content-Security-Policy can forbid inline code.
import init from './pkg/app.js';
init();

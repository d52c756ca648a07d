//! Messages between the page and the worker. The page posts a JS array of `File`s (structured
//! clone: the handles cross, not the bytes); the worker answers with these, encoded by
//! serde-wasm-bindgen.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToPage {
    /// The worker's wasm is loaded: messages posted from now on are not lost.
    Ready,
    /// Bytes of file `index` consumed so far (compressed bytes for .gz).
    Progress { index: u32, bytes: f64 },
    /// File `index` is finished (`ok` false when it could not be read).
    FileDone { index: u32, ok: bool },
    /// All files analysed: the combined Report exactly as `tracesight --json` prints it, and
    /// the worker's wasm memory size (its high-water mark: wasm memory never shrinks).
    Done { json: String, wasm_memory_bytes: f64 },
}

//! Messages between the page and the worker. The page posts `{files, request}`: a JS array of
//! `File`s (structured clone: the handles cross, not the bytes) and a [`Request`] as JSON text;
//! the worker answers with [`ToPage`] messages, encoded by serde-wasm-bindgen.

use serde::{Deserialize, Serialize};

/// How to analyse the posted files. Sent as JSON text: trace clock nanoseconds do not fit in a
/// JS number.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// Only GPU time in `[start, end)` on the trace's clock (a timeline selection).
    #[serde(default)]
    pub range: Option<(i64, i64)>,
    /// The user's bucket rules (`pattern => bucket` lines), tried before the built-in ones.
    #[serde(default)]
    pub rules: String,
}

impl Request {
    /// The analysis options, or why the rules cannot be used.
    pub fn options(&self) -> Result<crate::Options, String> {
        let rules = crate::analysis::taxonomy::parse_rules(&self.rules)?;
        let window = self.range.map(|(start_ns, end_ns)| crate::Range::Clock { start_ns, end_ns });
        Ok(crate::Options { rules, window, ..crate::Options::default() })
    }
}

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

//! Input: bytes in, a reading out. `gzip` turns the bytes a caller hands us (a file, a
//! browser `File`, a slice) into the decompressed stream; `formats` holds one folder per input
//! format, each an [`Importer`] that pushes format-neutral events ([`crate::trace::Event`])
//! into a sink or reads a finished report; [`Import`] is the one dispatch that tells them
//! apart from the first bytes, used by the CLI, the page's worker and the tests alike.

// `deny`, not `forbid`, only so that formats/chrome_json/blocks.rs (SIMD intrinsics) can allow
// it: no other module of the input layer may use `unsafe`.
#![deny(unsafe_code)]

pub mod formats;
mod gunzip;
pub mod gzip;
mod import;
pub mod importer;
pub mod sniff;

pub use gunzip::Gunzip;
pub use gzip::*;
pub use import::*;
pub use importer::*;

#[cfg(test)]
mod gunzip_tests;
#[cfg(test)]
mod tests;

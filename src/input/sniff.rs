//! Telling the formats apart from an input's first bytes (plain or gzip).

use super::formats::Format;
use super::gzip::{Encoding, GZIP_MAGIC};
use std::io::Read;

/// Bytes looked at to tell the formats apart.
pub const SNIFF: usize = 512;

/// How an input whose first bytes are `prefix` is encoded: gzip by its magic bytes, never by
/// the file name.
pub fn encoding(prefix: &[u8]) -> Encoding {
    if prefix.starts_with(&GZIP_MAGIC) {
        Encoding::Gzip
    } else {
        Encoding::Plain
    }
}

/// The format of an input (plain or gzip) whose first bytes are `prefix`: gzip is inflated
/// (the first 256 bytes) for the formats to look at.
pub fn format(prefix: &[u8]) -> Format {
    if encoding(prefix) == Encoding::Gzip {
        let mut out = Vec::new();
        let _ = super::gunzip::Gunzip::new(prefix).take(256).read_to_end(&mut out);
        Format::of(&out)
    } else {
        Format::of(prefix)
    }
}

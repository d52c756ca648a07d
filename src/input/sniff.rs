//! Telling the formats apart from an input's first bytes: a Kineto trace, or a report that
//! `tracesight --json` wrote (each plain or gzip).

use std::io::Read;

/// What a Report written by `tracesight --json` starts with (our serializer writes
/// `tool_version` first), after optional whitespace.
fn is_report_prefix(bytes: &[u8]) -> bool {
    let t = bytes.trim_ascii_start();
    let Some(rest) = t.strip_prefix(b"{") else { return false };
    rest.trim_ascii_start().starts_with(b"\"tool_version\"")
}

/// Whether the first bytes of an input (plain or gzip) are those of a tracesight report.
pub fn is_report(prefix: &[u8]) -> bool {
    if prefix.starts_with(&super::GZIP_MAGIC) {
        let mut out = Vec::new();
        let _ = flate2::read::MultiGzDecoder::new(prefix).take(256).read_to_end(&mut out);
        is_report_prefix(&out)
    } else {
        is_report_prefix(prefix)
    }
}

//! The pure part of share links, for every target (the web page builds and reads the links;
//! the native tests and fuzzers exercise the decoder): a Report as JSON, deflated and
//! base64url-encoded. Decoding never panics and is bounded: at most [`MAX_JSON`] bytes are
//! inflated, whatever the input.

use crate::Report;

/// The largest inflated JSON a link may carry (a link is at most ~60 kB; this bounds a
/// hostile one).
pub const MAX_JSON: usize = 8 << 20;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The link payload for `report`.
pub fn encode(report: &Report) -> String {
    let json = serde_json::to_vec(report).unwrap_or_default();
    base64url(&miniz_oxide::deflate::compress_to_vec(&json, 9))
}

/// The Report in a link payload, or None when it is not a valid one.
pub fn decode(data: &str) -> Option<Report> {
    let packed = unbase64url(data)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_JSON).ok()?;
    serde_json::from_slice(&json).ok()
}

pub fn base64url(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 4 / 3 + 3);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

pub fn unbase64url(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = acc << 6 | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_hostile_links() {
        let r = crate::combine(vec![]);
        assert_eq!(decode(&encode(&r)), Some(r));
        for bytes in [&b""[..], b"\x00", b"\xff\xff\xff", &[0u8; 3000]] {
            assert_eq!(unbase64url(&base64url(bytes)).as_deref(), Some(bytes));
        }
        assert_eq!(decode("not base64!"), None);
        assert_eq!(decode(""), None);
        // A deflate bomb: 100 MB of zeros in ~100 kB stops at the limit.
        let bomb = base64url(&miniz_oxide::deflate::compress_to_vec(&vec![b' '; 100 << 20], 9));
        assert_eq!(decode(&bomb), None);
    }
}

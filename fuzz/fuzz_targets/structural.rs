//! The vectorised structural scan (64 bytes at a time, `chrome_json/structural.rs`) against
//! its scalar reference: on any bytes after an opening bracket, both find the same end (or
//! both need more input).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::input::formats::chrome_json::{structural_end, structural_end_scalar};

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else { return };
    let (open, close) = if kind & 1 == 0 { (b'[', b']') } else { (b'{', b'}') };
    let mut b = Vec::with_capacity(rest.len() + 1);
    b.push(open);
    b.extend_from_slice(rest);
    assert_eq!(structural_end(&b, open, close), structural_end_scalar(&b, open, close));
});

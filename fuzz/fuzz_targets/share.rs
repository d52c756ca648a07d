//! Share-link payloads: any text decodes to a Report or None, bounded, never a panic; a
//! decoded Report encodes and decodes back to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::share;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(report) = share::decode(&text) {
        assert_eq!(share::decode(&share::encode(&report)), Some(report));
    }
    // Arbitrary bytes as the deflated payload.
    let _ = share::decode(&share::base64url(data));
});

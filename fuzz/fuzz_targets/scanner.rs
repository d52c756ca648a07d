//! The hand-written event scanner against serde_json: where the scanner reads an event,
//! serde_json reads the same event from the same bytes. The scanner checks skipped values
//! for structure only, so it may accept text that is not JSON at all (serde_json rejects it,
//! the reader never sees it from a valid file); on valid JSON they must agree.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::input::formats::chrome_json::{scan_event, RawEvent};

fuzz_target!(|data: &[u8]| {
    let mut fast = RawEvent::default();
    let Ok(n) = scan_event(data, &mut fast) else { return };
    let text = &data[..n];
    match serde_json::from_slice::<RawEvent>(text) {
        Ok(reference) => {
            assert_eq!(fast, reference, "{}", String::from_utf8_lossy(text));
        }
        Err(e) => {
            let valid_json = serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok();
            assert!(!valid_json, "scanner accepts, serde_json rejects valid JSON ({e}): {}", String::from_utf8_lossy(text));
        }
    }
});

//! The hand-written event scanner against serde_json: where the scanner reads an event,
//! serde_json reads the same event from the same bytes. The scanner checks skipped values
//! for structure only, so it may accept text that is not JSON at all (serde_json rejects it,
//! the reader never sees it from a valid file); on valid JSON they must agree. The flow
//! reader (flow events read for their phase and category only) is held to the same: where it
//! reads an event that is valid JSON, serde_json finds the same `ph` and top-level `cat`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::input::formats::chrome_json::{scan_event, scan_flow, RawEvent};

fuzz_target!(|data: &[u8]| {
    flow(data);
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

fn flow(data: &[u8]) {
    let mut ev = RawEvent::default();
    let Some(Ok(n)) = scan_flow(data, &mut ev) else { return };
    let text = &data[..n];
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(text) else { return };
    let s = |v: Option<&serde_json::Value>| v.and_then(|v| v.as_str()).map(|s| s.as_bytes().to_vec());
    let shown = String::from_utf8_lossy(text);
    assert_eq!(s(value.get("ph")).as_deref(), Some(ev.ph.bytes()), "{shown}");
    assert_eq!(s(value.get("cat")).unwrap_or_default(), ev.cat.bytes(), "{shown}");
}

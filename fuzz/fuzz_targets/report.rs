//! Any bytes -> a Report or a TraceError, never a panic; the same outcome whether read in one
//! slice or through tiny chunks (every refill path).
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::{analyze_reader, analyze_slice, Options};

fuzz_target!(|data: &[u8]| {
    let whole = analyze_slice("fuzz", data, &Options::default());
    let tiny = analyze_reader("fuzz", data, &Options { chunk_size: 16, ..Options::default() }, &mut |_| true);
    match (&whole, &tiny) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.events, b.events);
            assert_eq!(a.diagnostics, b.diagnostics);
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("chunking changed the outcome: {whole:?} vs {tiny:?}"),
    }
});

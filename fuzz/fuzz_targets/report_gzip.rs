//! The same bytes, gzip-compressed, give the same outcome as plain (one vocabulary whatever
//! the input path); and the raw bytes behind a gzip header never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use tracesight::{analyze_slice, Options};

fuzz_target!(|data: &[u8]| {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    let gz = e.finish().unwrap();
    let plain = analyze_slice("fuzz", data, &Options::default());
    let packed = analyze_slice("fuzz", &gz, &Options::default());
    // A plain input that is itself gzip would be inflated once more: compare the rest.
    if !data.starts_with(&[0x1f, 0x8b]) {
        match (&plain, &packed) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a.events, b.events);
                assert_eq!(a.diagnostics, b.diagnostics);
            }
            (Err(a), Err(b)) => assert_eq!(a, b),
            _ => panic!("gzip changed the outcome: {plain:?} vs {packed:?}"),
        }
    }
    // Arbitrary bytes after a gzip header: damaged or cut-short gzip, never a panic.
    let mut raw = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    raw.extend_from_slice(data);
    let _ = analyze_slice("fuzz", &raw, &Options::default());
});

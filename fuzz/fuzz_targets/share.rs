//! Share-link fragments: any text decodes to a view or an error, bounded, never a panic; a
//! decoded view encodes and decodes back to itself.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracesight::share_link::encode;
use tracesight::web::view_state::decode;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(v) = decode(&text) {
        let again = decode(&format!("#{}", encode(v.report.as_ref(), &v.state)));
        assert_eq!(again.map(|w| (w.report, w.state)), Ok((v.report, v.state)));
    }
});

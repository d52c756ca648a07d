use super::*;
use crate::trace::number::parse_micros;

fn ns(s: &str) -> Option<i64> {
    parse_micros(s.as_bytes())
}

#[test]
fn micros_keep_nanosecond_precision() {
    assert_eq!(ns("1606910596297023"), Some(1_606_910_596_297_023_000));
    assert_eq!(ns("1606910596297023.123"), Some(1_606_910_596_297_023_123));
    assert_eq!(ns("1419247333430.849"), Some(1_419_247_333_430_849));
    assert_eq!(ns("3.136"), Some(3136));
    assert_eq!(ns("0.0004"), Some(0));
    assert_eq!(ns("0.0005"), Some(1));
    assert_eq!(ns("-2.5"), Some(-2500));
    assert_eq!(ns("1.5e3"), Some(1_500_000));
    assert_eq!(ns("7"), Some(7000));
    assert_eq!(ns(""), None);
    assert_eq!(ns("abc"), None);
    assert_eq!(ns("99999999999999999999999"), None);
    // At the edge of i64 nanoseconds: exact, or None, never wrapped.
    assert_eq!(ns("9223372036854775.807"), Some(i64::MAX));
    assert_eq!(ns("-9223372036854775.807"), Some(-i64::MAX));
    assert_eq!(ns("9223372036854775.808"), None);
    assert_eq!(ns("9223372036854775.8069"), Some(i64::MAX));
    assert_eq!(ns("9223372036854775.8075"), None);
    assert_eq!(ns("9223372036854776"), None);
    assert_eq!(ns("999999999999999999"), None);
    assert_eq!(ns("0000000000000000000000001.5"), Some(1500));
}

#[test]
fn ids_accept_numbers_and_strings() {
    assert_eq!(Id::Str("stream 7".into()).as_int(), Some(7));
    assert_eq!(Id::Str("123".into()).as_int(), Some(123));
    assert_eq!(Id::Str("Spans".into()).as_int(), None);
    let e: RawEvent = serde_json::from_str(r#"{"pid": "Traces", "tid": -1, "ts": 1.5}"#).unwrap();
    assert_eq!(e.pid, Id::Str("Traces".into()));
    assert_eq!(e.tid, Id::Int(-1));
    assert_eq!(micros_to_nanos(e.ts.unwrap()), Some(1500));
    let e: RawEvent = serde_json::from_str(r#"{"name": "a\u00e9\"b", "args": {"external id": 4, "x": [1]}}"#).unwrap();
    assert_eq!(e.name.to_str(), "a\u{e9}\"b");
    assert_eq!(e.args.unwrap().external_id(), Some(4));
}

#[test]
fn loose_numbers() {
    let a: Args =
        serde_json::from_str(r#"{"correlation": "12", "External id": 3.0, "stream": null, "blocks per SM": 0.5}"#)
            .unwrap();
    assert_eq!(a.correlation.and_then(Loose::as_i64), Some(12));
    assert_eq!(a.external_id(), Some(3));
    assert_eq!(a.stream, None);
    assert_eq!(a.blocks_per_sm.and_then(Loose::as_f64), Some(0.5));
}

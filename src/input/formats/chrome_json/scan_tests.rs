//! Scanner tests: the fast event scanner against serde_json, key by key and number by number.

use super::tests::scanned;
use super::*;

/// The fast scanner and the serde reference read the same fields from every event of every
/// fixture and real trace.
#[test]
fn scanner_matches_serde_on_every_event() {
    use serde_json::value::RawValue;
    use std::io::Read;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<std::path::PathBuf> =
        std::fs::read_dir(root.join("tests/fixtures")).unwrap().map(|e| e.unwrap().path()).collect();
    let shared = root.join("../shared/traces");
    if shared.is_dir() {
        let mut stack = vec![shared];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p)
                } else {
                    files.push(p)
                }
            }
        }
    } else {
        eprintln!("SKIP: ../shared/traces is absent; comparing on the fixtures only");
    }
    #[derive(serde::Deserialize)]
    struct Top<'a> {
        #[serde(borrow, rename = "traceEvents")]
        events: Vec<&'a RawValue>,
    }
    let (mut compared, mut flows) = (0, 0);
    for f in files.into_iter().filter(|f| f.to_string_lossy().contains(".json")) {
        let raw = std::fs::read(&f).unwrap();
        let mut bytes = Vec::new();
        if raw.starts_with(&[0x1f, 0x8b]) {
            flate2::read::MultiGzDecoder::new(&raw[..]).read_to_end(&mut bytes).unwrap();
        } else {
            bytes = raw;
        }
        let events: Vec<&RawValue> = match serde_json::from_slice::<Top>(&bytes) {
            Ok(t) => t.events,
            Err(_) => serde_json::from_slice(&bytes).unwrap(),
        };
        for e in events {
            let text = e.get().as_bytes();
            let reference: RawEvent = serde_json::from_slice(text).unwrap();
            let (fast, n) = scanned(text).unwrap_or_else(|m| panic!("{}: {m:?} on {}", f.display(), e.get()));
            assert_eq!(n, text.len());
            assert_eq!(fast, reference, "{}: {}", f.display(), e.get());
            compared += 1;
            // Where the flow reader takes an event, it reads what both read into ph and cat.
            let mut ev = RawEvent::default();
            if let Some(read) = flow::flow(text, &mut ev) {
                assert_eq!(read, Ok(text.len()), "{}: {}", f.display(), e.get());
                assert_eq!((&ev.ph, &ev.cat), (&reference.ph, &reference.cat), "{}: {}", f.display(), e.get());
                flows += 1;
            }
        }
    }
    assert!(compared > 50);
    assert!(flows > 0, "the fixtures hold flow events");
}

#[test]
fn scanner_edge_cases() {
    let ok = |t: &str| scanned(t.as_bytes()).map(|(e, n)| (e.name.to_str().into_owned(), n));
    assert_eq!(ok(r#"{"name": "a\"b", "x": [1, {"y": "]"}], "z": null}"#).unwrap().0, "a\"b");
    assert_eq!(ok(r#"{}"#).unwrap(), (String::new(), 2));
    assert_eq!(ok(r#"{"name": "a""#), Err(scan::Miss::NeedMore));
    assert_eq!(ok(r#"{"name": "a", "x": [1, 2"#), Err(scan::Miss::NeedMore));
    assert_eq!(ok(r#"{"name": 5}"#), Err(scan::Miss::Fallback));
    assert_eq!(ok(r#"[1]"#), Err(scan::Miss::Fallback));
    assert_eq!(ok(r#"{"name" "a"}"#), Err(scan::Miss::Fallback));
    // A number or raw value cut by the window's end needs more; one that is not JSON falls back.
    for cut in [
        r#"{"pid": 12"#,
        r#"{"pid": -"#,
        r#"{"ts": 1."#,
        r#"{"ts": 1e"#,
        r#"{"ts": 1e+"#,
        r#"{"args": {"correlation": 4"#,
    ] {
        assert_eq!(ok(cut), Err(scan::Miss::NeedMore), "{cut}");
    }
    for bad in [r#"{"pid": 12x}"#, r#"{"ts": 1.}"#, r#"{"ts": 01}"#, r#"{"ts": nul}"#, r#"{"pid": true}"#] {
        assert_eq!(ok(bad), Err(scan::Miss::Fallback), "{bad}");
    }
}

#[test]
fn members_read_alike_whatever_the_spacing_and_wherever_the_window_ends() {
    // Kineto's `": "` and `, "` (stepped over at once) and every other spacing the grammar
    // allows, in events and in args; each read as serde_json reads it, and each cut short at
    // any byte needs more.
    let spaced = [
        r#"{"ph": "X", "name": "k", "pid": 1, "tid": 7, "ts": 1.5, "dur": 2, "args": {"correlation": 3, "device": 0}}"#,
        r#"{"ph":"X","name":"k","pid":1,"tid":7,"ts":1.5,"dur":2,"args":{"correlation":3,"device":0}}"#,
        r#"{ "ph" : "X" ,"name" :"k",  "pid":  1 ,	"tid":7 , "args" : { "correlation" : 3 , "device":0 } }"#,
        "{\n  \"ph\": \"X\",\n  \"name\": \"k\",\r\n  \"args\": {\n    \"correlation\": 3\n  }\n}",
        // `json.dump(indent=2)`'s indentation of an event's members and its args' (six and
        // eight spaces), runs longer than one word of eight, and tabs and carriage returns after
        // a line break's spaces.
        "{\n      \"ph\": \"X\",\n      \"name\": \"k\",\n      \"args\": {\n        \"correlation\": 3,\n        \"device\": 0\n      }\n    }",
        "{\n                 \"ph\": \"X\",\n                \t \"name\": \"k\",\n \r\n  \"args\": {\n\n\n         \"correlation\":\n           3\n                          }\n}",
        r#"{"ph": "X", "x": [1, 2], "y": {"z": ", \""}, "name": ", \"", "pid": "1"}"#,
    ];
    for text in spaced {
        both(text);
        for cut in 1..text.len() {
            assert_eq!(scanned(&text.as_bytes()[..cut]).map(|_| ()), Err(scan::Miss::NeedMore), "{cut} of {text}");
        }
    }
    for bad in [r#"{"ph": "X", , "name": "k"}"#, r#"{"ph": "X",, "name": "k"}"#, r#"{"ph":: "X"}"#, r#"{"ph": "X", }"#]
    {
        rejected(bad);
    }
}

// ---------------------------------------------------------------------------------------
// The two event parsers agree: one key table, one number path (see `event/mod.rs`).

use super::event::{ArgKey, EventKey, Num, Text};

/// Parses `text` with both parsers; both must read it, to the same value (compared by `Debug`
/// too, which tells `-0.0` from `0.0`), and the scanner must consume all of it.
fn both(text: &str) -> RawEvent<'_> {
    let reference: RawEvent = serde_json::from_str(text).unwrap_or_else(|e| panic!("serde: {e} on {text}"));
    let (fast, n) = scanned(text.as_bytes()).unwrap_or_else(|m| panic!("scanner: {m:?} on {text}"));
    assert_eq!(n, text.len(), "{text}");
    assert_eq!(fast, reference, "{text}");
    assert_eq!(format!("{fast:?}"), format!("{reference:?}"), "{text}");
    fast
}

/// The scanner leaves `text` to serde_json, which rejects it.
fn rejected(text: &str) {
    assert_eq!(scanned(text.as_bytes()).map(|_| ()), Err(scan::Miss::Fallback), "{text}");
    assert!(serde_json::from_str::<RawEvent>(text).is_err(), "serde accepts {text}");
}

fn args(ev: RawEvent<'_>) -> Args<'_> {
    ev.args.expect("args")
}

fn corr(text: &str) -> Option<Loose> {
    args(both(&format!(r#"{{"args": {{"correlation": {text}}}}}"#))).correlation
}

fn tid(text: &str) -> Id<'static> {
    match both(&format!(r#"{{"tid": {text}}}"#)).tid {
        Id::Str(s) => Id::Str(s.into_owned().into()),
        Id::Int(i) => Id::Int(i),
        Id::Missing => Id::Missing,
    }
}

#[test]
fn integers_beyond_i64_are_not_integers() {
    // Within i64: exact integers.
    assert_eq!(corr("9223372036854775807"), Some(Loose::Int(i64::MAX)));
    assert_eq!(corr("-9223372036854775808"), Some(Loose::Int(i64::MIN)));
    assert_eq!(corr("0"), Some(Loose::Int(0)));
    // Beyond: the nearest f64, never a wrapped (-1) or saturated (i64::MAX) integer, and not
    // an integer for `as_i64`, though still a number for `as_f64`.
    for (text, f) in [
        ("9223372036854775808", 2f64.powi(63)),
        ("18446744073709551615", 1.8446744073709552e19),
        ("18446744073709551616", 1.8446744073709552e19),
        ("-9223372036854775809", -(2f64.powi(63))),
        ("-18446744073709551617", -1.8446744073709552e19),
        ("123456789012345678901234567890", 1.2345678901234568e29),
    ] {
        let v = corr(text).unwrap();
        assert_eq!(v, Loose::Float(f), "{text}");
        assert_eq!(v.as_i64(), None, "{text}");
        assert_eq!(v.as_f64(), Some(f), "{text}");
        // The same as a numeric string.
        assert_eq!(corr(&format!("\"{text}\"")), Some(v), "{text}");
        // A pid or tid that does not fit is its own thread, not an integer one.
        let id = tid(text);
        assert!(matches!(id, Id::Str(_)), "{text}: {id:?}");
        assert_eq!(id.as_int(), None, "{text}");
    }
    assert_eq!(tid("18446744073709551615"), Id::Str("18446744073709551615".into()));
    assert_eq!(tid("9223372036854775808"), Id::Str("9223372036854775808".into()));
    assert_eq!(tid("9223372036854775807"), Id::Int(i64::MAX));
    assert_eq!(tid("-9223372036854775808"), Id::Int(i64::MIN));
    assert_eq!(tid("-9223372036854775809"), Id::Str("-9.223372036854776e18".into()));
    // Two ids past 2^64 that round to one f64 are one id; below 2^64 every id stays distinct.
    assert_ne!(tid("18446744073709551614"), tid("18446744073709551615"));
}

#[test]
fn floats_as_ids_only_when_whole_and_exact() {
    let int = |t: &str| corr(t).unwrap().as_i64();
    assert_eq!(int("1.5e3"), Some(1500));
    assert_eq!(int("1E3"), Some(1000));
    assert_eq!(int("1e+3"), Some(1000));
    assert_eq!(int("3.0"), Some(3));
    assert_eq!(int("-0"), Some(0));
    assert_eq!(int("-0.0"), Some(0));
    assert_eq!(int("9007199254740991.0"), Some(9_007_199_254_740_991));
    assert_eq!(int("-9007199254740991.0"), Some(-9_007_199_254_740_991));
    // Past 2^53 - 1 a float no longer names one integer.
    assert_eq!(int("9007199254740992.0"), None);
    assert_eq!(int("1e19"), None);
    assert_eq!(int("2.5"), None);
    assert_eq!(int("1e-3"), None);
    // Integers are exact whatever their size within i64.
    assert_eq!(int("9007199254740993"), Some(9_007_199_254_740_993));
    // `-0` is the float -0.0 in both parsers (as serde_json reads it), not the integer 0.
    assert_eq!(format!("{:?}", corr("-0")), "Some(Float(-0.0))");
    assert_eq!(corr("0.0"), Some(Loose::Float(0.0)));
    assert_eq!(corr("1e-400"), Some(Loose::Float(0.0)));
    assert_eq!(corr("1.7976931348623157e308"), Some(Loose::Float(f64::MAX)));
    // Float pids/tids: whole and exact ones are integers, others their own (string) ids.
    assert_eq!(tid("7.0"), Id::Int(7));
    assert_eq!(tid("1e3"), Id::Int(1000));
    assert_eq!(tid("-0"), Id::Int(0));
    assert_eq!(tid("1.5"), Id::Str("1.5".into()));
    assert_eq!(tid("1.5").as_int(), None);
    assert_eq!(tid("1e20"), Id::Str("1e20".into()));
}

#[test]
fn strings_and_literals_as_numbers() {
    assert_eq!(corr(r#""12""#), Some(Loose::Int(12)));
    assert_eq!(corr(r#"" 12 ""#), Some(Loose::Int(12)));
    assert_eq!(corr(r#""\u0031\u0032""#), Some(Loose::Int(12)));
    assert_eq!(corr(r#""12.5""#), Some(Loose::Float(12.5)));
    assert_eq!(corr(r#""-0""#).map(|v| format!("{v:?}")), Some("Float(-0.0)".into()));
    // Not JSON numbers: not numbers.
    for s in ["0x0", "007", "+1", ".5", "1.", "inf", "NaN", "", "12 13", "1_000"] {
        assert_eq!(corr(&format!("\"{s}\"")), Some(Loose::Null), "{s:?}");
    }
    // Past f64 in a string: an infinite float, neither an integer nor a finite number.
    let inf = corr(r#""1e400""#).unwrap();
    assert_eq!(inf, Loose::Float(f64::INFINITY));
    assert_eq!((inf.as_i64(), inf.as_f64()), (None, None));
    assert_eq!(corr("null"), None);
    assert_eq!(corr("true"), Some(Loose::Int(1)));
    assert_eq!(corr("false"), Some(Loose::Int(0)));
    // Ids: strings stay strings; numeric ones read as numbers read.
    assert_eq!(tid(r#""Traces""#), Id::Str("Traces".into()));
    assert_eq!(tid(r#""123""#).as_int(), Some(123));
    assert_eq!(tid(r#""stream 7""#).as_int(), Some(7));
    assert_eq!(tid(r#""1.0""#).as_int(), Some(1));
    assert_eq!(tid(r#""007""#).as_int(), None);
    assert_eq!(tid(r#""18446744073709551615""#).as_int(), None);
    assert_eq!(tid("null"), Id::Missing);
}

#[test]
fn both_parsers_read_every_key_of_the_table() {
    for &(spelling, key) in EventKey::SPELLINGS {
        let k = std::str::from_utf8(spelling).unwrap();
        let value = match key {
            EventKey::Args => "{}",
            EventKey::Ph
            | EventKey::Cat
            | EventKey::Name
            | EventKey::Pid
            | EventKey::Tid
            | EventKey::Ts
            | EventKey::Dur => r#""x""#,
        };
        let plain = format!(r#"{{"{k}": {value}}}"#);
        assert_ne!(both(&plain), RawEvent::default(), "{k} is not read");
        // Keys are compared after unescaping.
        let escaped = format!(r#"{{"\u{:04x}{}": {value}}}"#, spelling[0], &k[1..]);
        assert_eq!(format!("{:?}", both(&escaped)), format!("{:?}", both(&plain)), "{escaped}");
        assert_eq!(EventKey::of(spelling), Some(key));
    }
    for &(spelling, key) in ArgKey::SPELLINGS {
        let k = std::str::from_utf8(spelling).unwrap();
        let plain = format!(r#"{{"args": {{"{k}": 7}}}}"#);
        let a = args(both(&plain));
        assert_ne!(a, Args::default(), "{k} is not read");
        let escaped = format!(r#"{{"args": {{"\u{:04x}{}": 7}}}}"#, spelling[0], &k[1..]);
        assert_eq!(format!("{:?}", args(both(&escaped))), format!("{a:?}"), "{escaped}");
        assert_eq!(ArgKey::of(spelling), Some(key));
    }
    // Exact spellings only.
    assert_eq!(both(r#"{"Name": "a", "PID": 1, "args ": {}}"#), RawEvent::default());
    assert_eq!(args(both(r#"{"args": {"External Id": 1, "Correlation": 2}}"#)), Args::default());
}

#[test]
fn keys_in_any_order_and_duplicates() {
    let a = both(
        r#"{"name": "k", "ph": "X", "ts": 1.5, "dur": 2, "pid": 1, "tid": 2, "args": {"correlation": 5, "External id": 6}}"#,
    );
    let b = both(
        r#"{"args": {"External id": 6, "correlation": 5}, "tid": 2, "pid": 1, "dur": 2, "ts": 1.5, "ph": "X", "name": "k"}"#,
    );
    assert_eq!(a, b);
    // Duplicates: the last one wins, in both parsers.
    let e = both(r#"{"name": "first", "ts": 1, "pid": 1, "name": "last", "ts": 2, "pid": "p"}"#);
    assert_eq!((e.name.to_str().as_ref(), e.ts, e.pid), ("last", Some(&b"2"[..]), Id::Str("p".into())));
    // Across spellings of one key too.
    assert_eq!(args(both(r#"{"args": {"External id": 1, "external id": 2}}"#)).external_id(), Some(2));
    assert_eq!(args(both(r#"{"args": {"external id": 2, "Ext\u0065rnal id": 1}}"#)).external_id(), Some(1));
    // A later `null` clears an earlier value; a later `args` replaces the whole object.
    assert_eq!(args(both(r#"{"args": {"correlation": 1, "correlation": null}}"#)).correlation, None);
    let e = both(r#"{"args": {"correlation": 1, "stream": 7}, "args": {"device": 0}}"#);
    assert_eq!(args(e), Args { device: Some(Loose::Int(0)), ..Args::default() });
    assert_eq!(both(r#"{"args": {"correlation": 1}, "args": null}"#).args, None);
}

#[test]
fn raw_values_and_escapes() {
    let e = both(
        r#"{"n\u0061me": "a\u00e9", "\u0070id": 3, "ts" : 1.5e3 , "dur":"12.5", "args":{"Input Dims":[[1, 2], []],"Input type":null}}"#,
    );
    assert_eq!(e.name, Text(b"a\xc3\xa9".to_vec().into()));
    assert_eq!(e.pid, Id::Int(3));
    assert_eq!(e.ts, Some(&b"1.5e3"[..]));
    assert_eq!(e.dur, Some(&br#""12.5""#[..]));
    let a = args(e);
    assert_eq!(a.input_dims, Some(&b"[[1, 2], []]"[..]));
    assert_eq!(a.input_type, Some(&b"null"[..]));
    // serde_json's `RawValue` checks only the grammar: a timestamp past f64 is kept, and
    // reads as no timestamp.
    let e = both(r#"{"ts": 1e400, "dur": -0}"#);
    assert_eq!(e.ts.and_then(event::micros_to_nanos), None);
    assert_eq!(e.dur.and_then(event::micros_to_nanos), Some(0));
    let e = both(r#"{"ts": 99999999999999999999, "dur": 9223372036854775.807}"#);
    assert_eq!(e.ts.and_then(event::micros_to_nanos), None);
    assert_eq!(e.dur.and_then(event::micros_to_nanos), Some(i64::MAX));
}

#[test]
fn what_serde_json_rejects_the_scanner_leaves_to_it() {
    for text in [
        // Numbers outside the JSON grammar, or past f64 ("number out of range").
        r#"{"args": {"correlation": 1e400}}"#,
        r#"{"args": {"correlation": -1e400}}"#,
        r#"{"args": {"correlation": 007}}"#,
        r#"{"args": {"correlation": +1}}"#,
        r#"{"args": {"correlation": .5}}"#,
        r#"{"args": {"correlation": 1.}}"#,
        r#"{"args": {"correlation": 1e}}"#,
        r#"{"args": {"correlation": 1.2.3}}"#,
        r#"{"args": {"correlation": NaN}}"#,
        r#"{"args": {"correlation": [1]}}"#,
        r#"{"pid": 1e400}"#,
        r#"{"pid": 01}"#,
        r#"{"ts": 01}"#,
        r#"{"ts": 1.}"#,
        r#"{"ts": -}"#,
        r#"{"dur": tru}"#,
        // Types serde_json does not read there.
        r#"{"pid": true}"#,
        r#"{"tid": {}}"#,
        r#"{"name": 5}"#,
        r#"{"args": 5}"#,
        // A numeric string serde_json cannot take as a `str`.
        "{\"args\": {\"correlation\": \"1\u{1}\"}}",
        "{\"pid\": \"a\tb\"}",
    ] {
        rejected(text);
    }
    // Found by the scanner fuzz target: invalid UTF-8 inside a value kept raw (serde_json's
    // RawValue is a `str`).
    for bytes in
        [&b"{\"args\": {\"Input type\": [\"c10\xff\xfe::BFloat16\"]}}"[..], b"{\"args\": {\"Input Dims\": \"\xc3\"}}"]
    {
        assert_eq!(scanned(bytes).map(|_| ()), Err(scan::Miss::Fallback));
        assert!(serde_json::from_slice::<RawEvent>(bytes).is_err());
    }
}

/// `Num`s equal to the bit (tells -0.0 from 0.0).
fn same(a: Option<Num>, b: Option<Num>) -> bool {
    match (a, b) {
        (Some(Num::F64(x)), Some(Num::F64(y))) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

#[test]
fn number_literals_classified_as_serde_json_does() {
    let mut literals: Vec<String> = [
        "0",
        "-0",
        "1",
        "-1",
        "0.0",
        "-0.0",
        "0e0",
        "-0e-0",
        "1e5",
        "1E+5",
        "1e-5",
        "2.5",
        "1.5e3",
        "9007199254740993",
        "9007199254740993.0",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775807",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "-18446744073709551615",
        "-18446744073709551616",
        "99999999999999999999",
        "10000000000000000000",
        "1000000000000000000000000",
        "-1000000000000000000000000",
        "1e308",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        "1e309",
        "1e400",
        "-1e400",
        "4.9e-324",
        "2e-324",
        "1e-400",
        "-1e-400",
        "0.30000000000000004",
        "123456789.123456789e-3",
        // Around the short-fraction fast path's bounds (digits below 2^53, at most 22 after the point).
        "900719925474099.1",
        "900719925474099.2",
        "900719925474099.3",
        "-900719925474099.1",
        "0.0000000000000000000001",
        "0.00000000000000000000001",
        "1.2",
        "9.6",
        "0.1",
        "-0.1",
        "00",
        "01",
        "-01",
        "+1",
        ".5",
        "1.",
        "1e",
        "1e+",
        "-",
        "",
        " 1",
        "1 ",
        "1.5.3",
        "0x10",
        "inf",
        "NaN",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Pseudo-random digit strings with fractions and exponents, around the hard cases.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for _ in 0..20_000 {
        let mut s = String::new();
        if next(2) == 0 {
            s.push('-');
        }
        let int_len = 1 + next(22);
        for i in 0..int_len {
            s.push(char::from(b'0' + if i == 0 { 1 + next(9) as u8 } else { next(10) as u8 }));
        }
        if next(3) == 0 {
            s.push('.');
            for _ in 0..1 + next(20) {
                s.push(char::from(b'0' + next(10) as u8));
            }
        }
        if next(3) == 0 {
            s.push(['e', 'E'][next(2) as usize]);
            s.push_str(["", "+", "-"][next(3) as usize]);
            s.push_str(&next(330).to_string());
        }
        literals.push(s);
    }
    // Short fractions, as Kineto writes them (`1.2`, `1000093.758`), most of them within the
    // fast path's bounds and some just past them.
    for _ in 0..20_000 {
        let mut s = String::new();
        if next(4) == 0 {
            s.push('-');
        }
        let int_len = 1 + next(16);
        for i in 0..int_len {
            s.push(char::from(b'0' + if i == 0 && int_len > 1 { 1 + next(9) as u8 } else { next(10) as u8 }));
        }
        s.push('.');
        for _ in 0..1 + next(24 - int_len.min(16)) {
            s.push(char::from(b'0' + next(10) as u8));
        }
        literals.push(s);
    }
    for lit in &literals {
        let serde = serde_json::from_str::<Probe>(lit).ok().map(|p| p.0);
        let ours = Num::parse(lit.as_bytes());
        // serde_json rejects what overflows f64; `Num` keeps it as an infinity.
        let ours_finite = ours.filter(|n| !matches!(n, Num::F64(f) if !f.is_finite()));
        if lit.trim() == lit {
            assert!(same(ours_finite, serde), "{lit}: ours {ours:?}, serde_json {serde:?}");
        } else {
            assert_eq!(ours, None, "{lit:?}");
        }
        if ours.is_some() && ours_finite.is_none() {
            assert!(serde_json::from_str::<Probe>(lit).unwrap_err().to_string().contains("out of range"));
        }
    }
}

/// What serde_json hands a visitor for a number literal.
#[derive(Debug)]
struct Probe(Num);

impl<'de> serde::Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Probe;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Probe, E> {
                Ok(Probe(Num::U64(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Probe, E> {
                Ok(Probe(Num::I64(v)))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Probe, E> {
                Ok(Probe(Num::F64(v)))
            }
        }
        d.deserialize_any(V)
    }
}

/// The indentation count: the spaces it steps over are spaces, and it stops at the first other
/// byte unless fewer than eight bytes were left to look at (the caller's loop reads those).
#[test]
fn indentation_is_counted_a_word_at_a_time_and_exactly() {
    for n in 0..40 {
        for tail in ["", "\"", "\n", "\t", "}", "x", "        \"", "1234567"] {
            let text = format!("{}{tail}", " ".repeat(n));
            let b = text.as_bytes();
            let r = runs::spaces(b);
            assert!(b[..r].iter().all(|&c| c == b' '), "{text:?}: {r}");
            assert!(r == b.len() || b[r] != b' ' || b.len() - r < 8, "{text:?}: {r}");
            // The word holding the run's end was whole: the count is the run.
            let run = b.iter().take_while(|&&c| c == b' ').count();
            if run / 8 * 8 + 8 <= b.len() {
                assert_eq!(r, run, "{text:?}");
            }
        }
    }
}

/// The flow reader's `ph` and `cat` for `text`, or why it left the event to the full scanner.
fn flow_read(text: &str) -> Option<Result<(String, String, usize), scan::Miss>> {
    let mut ev = RawEvent::default();
    let read = flow::flow(text.as_bytes(), &mut ev)?;
    Some(read.map(|n| (ev.ph.to_str().into_owned(), ev.cat.to_str().into_owned(), n)))
}

#[test]
fn flow_events_are_read_for_their_phase_and_category_only() {
    let whole =
        |t: &str, ph: &str, cat: &str| assert_eq!(flow_read(t), Some(Ok((ph.into(), cat.into(), t.len()))), "{t}");
    whole(
        r#"{"ph": "s", "id": 1, "pid": 1000, "tid": 1000, "ts": 1000002.0, "cat": "ac2g", "name": "ac2g"}"#,
        "s",
        "ac2g",
    );
    // Kineto's own layout: a line break and indentation after the brace and before `cat`.
    whole("{\n    \"ph\": \"f\", \"id\": 14, \"pid\": 0, \"tid\": 7, \"ts\": 1.5,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }", "f", "ac2g");
    whole(r#"{"ph":"t","cat":"fwdbwd"}"#, "t", "fwdbwd");
    // No category; the last of two (as the full scanner keeps); `cat` or `ph` as a value, and a
    // colon inside a string, are not keys.
    whole(r#"{"ph": "s", "id": 1}"#, "s", "");
    whole(r#"{"ph": "s", "cat": "a", "cat": "b"}"#, "s", "b");
    whole(r#"{"ph": "s", "v": "cat", "w": "ph", "cat": "z", "n": "cat:"}"#, "s", "z");
    // Braces, brackets and colons inside strings are text.
    whole(r#"{"ph": "s", "name": "a}{:[cat: ]", "cat": "c"}"#, "s", "c");
    // Longer than a block: strings and keys across the 64-byte boundaries.
    let long = format!(r#"{{"ph": "f", "name": "{}", "cat" :  "{}", "id": 7}}"#, "n".repeat(61), "c".repeat(70));
    whole(&long, "f", &"c".repeat(70));
    // A key at every offset, so that its quotes fall on both sides of a block's edge.
    for pad in 0..140 {
        let name = "n".repeat(pad);
        whole(&format!(r#"{{"ph": "f", "name": "{name}", "cat": "c"}}"#), "f", "c");
        assert_eq!(flow_read(&format!(r#"{{"ph": "f", "name": "{name}", "ph": "s"}}"#)), None, "{pad}");
    }
    // Left to the full scanner: other phases or layouts, escapes, a second ph, a cat that is
    // not a string, nested values (a `cat` there is not the event's) and brackets even inside
    // strings.
    for other in [
        r#"{"ph": "s", "args": {"cat": "x"}}"#,
        r#"{"ph": "s", "l": ["cat"], "cat": "z"}"#,
        r#"{"ph": "X", "cat": "kernel"}"#,
        r#"{"ph": "sf", "cat": "ac2g"}"#,
        r#"{"id": 1, "ph": "s"}"#,
        r#"{"ph": "s", "name": "a\"b"}"#,
        r#"{"ph": "s", "ph": "X"}"#,
        r#"{"ph": "s", "cat": 5}"#,
        r#"{"ph": "s", "cat": null}"#,
        r#"{"ph": "s", "x": [}"#,
        r#"[{"ph": "s"}]"#,
        r#" {"ph": "s"}"#,
    ] {
        assert_eq!(flow_read(other), None, "{other}");
    }
    // Cut by the window's end: more input is needed (or, before the phase is known, the full
    // scanner says so).
    assert_eq!(flow_read(r#"{"ph": "s", "id": 1, "cat": "ac"#), Some(Err(scan::Miss::NeedMore)));
    assert_eq!(flow_read(r#"{"ph": "s"#), None);
    assert_eq!(scanned(br#"{"ph": "s"#).map(|(_, n)| n), Err(scan::Miss::NeedMore));
}

/// Flow events of many shapes (members in any order, nested values, spacing, strings holding
/// brackets and keys' names): where the flow reader takes one, serde_json reads the same phase
/// and category from it.
#[test]
fn flow_reader_matches_serde_json_on_generated_events() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let words = ["ac2g", "cat", "ph", "{", "}:", "[x]", "fwdbwd", ""];
    let (mut taken, mut left) = (0, 0);
    for _ in 0..4000 {
        let mut members = vec![format!(r#""ph": "{}""#, ["s", "f", "t"][next(3) as usize])];
        for _ in 0..next(6) {
            let w = words[next(words.len() as u64) as usize];
            let key = ["id", "pid", "cat", "name", "args", "ts", "cat"][next(7) as usize];
            let value = match next(6) {
                0 => format!("{}", next(100_000)),
                1 => format!(r#"{{"cat": "{w}", "n": [1, {{"ph": "X"}}]}}"#),
                4 => format!(r#"{{"n": [1], "cat": "{w}"}}"#),
                2 => format!(r#"["{w}", {{"cat": 1}}]"#),
                3 if key == "cat" => "null".to_string(),
                _ => format!(r#""{w}""#),
            };
            members.push(format!(r#""{key}":{}{value}"#, [" ", "", "\n   "][next(3) as usize]));
        }
        let text = format!("{{{}{}}}", ["", "\n    "][next(2) as usize], members.join(", "));
        let Some(read) = flow_read(&text) else {
            left += 1;
            continue;
        };
        let (ph, cat, n) = read.unwrap_or_else(|m| panic!("{m:?}: {text}"));
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(n, text.len(), "{text}");
        assert_eq!(value["ph"].as_str(), Some(ph.as_str()), "{text}");
        assert_eq!(value.get("cat").and_then(|c| c.as_str()).unwrap_or(""), cat, "{text}");
        taken += 1;
    }
    assert!(taken > 500 && left > 500, "taken {taken}, left {left}");
}

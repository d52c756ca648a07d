use super::*;

/// The reader before the eight-digit fast path: trims, unquotes, then [`parse_micros`].
fn general(raw: &[u8]) -> Option<i64> {
    let text = raw.trim_ascii();
    parse_micros(text.strip_prefix(b"\"").and_then(|t| t.strip_suffix(b"\"")).unwrap_or(text).trim_ascii())
}

#[test]
fn digit_runs_and_their_values() {
    for text in ["", "7", "12345678", "1234567x", "0000000012", "9.5", "x1", "99999999", "1234 5678"] {
        let b = text.as_bytes();
        let w = padded_word(b, 0);
        let n = b.iter().take(8).take_while(|c| c.is_ascii_digit()).count();
        assert_eq!(digit_run(w), n, "{text:?}");
        let value = b[..n].iter().fold(0u64, |v, &c| v * 10 + (c - b'0') as u64);
        assert_eq!(leading_digits(w, n), value, "{text:?}");
    }
    // Every byte value after a digit run, including those whose `+ 0x76` carries.
    for c in 0..=255u8 {
        let w = u64::from_le_bytes([b'4', b'2', c, b'1', b'1', b'1', b'1', b'1']);
        let n = if c.is_ascii_digit() { 8 } else { 2 };
        assert_eq!(digit_run(w), n, "byte {c}");
    }
}

#[test]
fn a_word_past_the_end_is_padded_with_spaces() {
    let bytes: Vec<u8> = (0..20u8).map(|k| b'0' + k * 7 % 75).collect();
    for len in 0..bytes.len() {
        let b = &bytes[..len];
        for at in 0..=len + 2 {
            let mut want = [b' '; 8];
            for (k, w) in want.iter_mut().enumerate() {
                if let Some(&c) = b.get(at + k) {
                    *w = c;
                }
            }
            assert_eq!(padded_word(b, at), u64::from_le_bytes(want), "{len} bytes from {at}");
        }
    }
}

#[test]
fn the_fast_time_path_reads_what_the_general_one_reads() {
    let mut cases: Vec<String> = Vec::new();
    for int in [
        "0",
        "7",
        "1234567",
        "12345678",
        "123456789",
        "000000000000001",
        "1694128201436168",
        "4458676526259",
        "9223372036854774",
        "9223372036854775",
        "9999999999999999",
        "12345678901234567",
        "99999999999999999999",
    ] {
        for frac in ["", ".", ".0", ".5", ".099", ".999", ".1234", ".9995", "e3", ".5e1", ".x"] {
            for (before, after) in [("", ""), (" ", ""), ("", " "), ("\"", "\""), ("-", ""), ("", ","), ("+", "")] {
                cases.push(format!("{before}{int}{frac}{after}"));
            }
        }
    }
    // Random digit strings of every length around the word boundaries.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = 1 + (x % 20) as usize;
        let mut s: String = (0..len).map(|k| char::from(b'0' + ((x >> (k * 3)) % 10) as u8)).collect();
        if x >> 60 < 12 {
            s.push('.');
            let f = ((x >> 40) % 5) as usize;
            s.extend((0..f).map(|k| char::from(b'0' + ((x >> (k * 4 + 1)) % 10) as u8)));
        }
        cases.push(s);
    }
    let mut fast = 0;
    for c in &cases {
        let b = c.as_bytes();
        assert_eq!(micros_to_nanos(b), general(b), "{c:?}");
        fast += plain_micros(b).is_some() as usize;
    }
    // The fast path must take the common forms, not leave them all to the general one.
    assert!(fast > cases.len() / 2, "{fast} of {}", cases.len());
    assert_eq!(plain_micros(b"1694128201436168.123"), Some(1_694_128_201_436_168_123));
    assert_eq!(plain_micros(b"30.068"), Some(30_068));
    assert_eq!(plain_micros(b"1.5"), Some(1_500));
    assert_eq!(plain_micros(b"9223372036854775"), None);
}

#[test]
fn integer_prefixes_of_every_length_read_as_serde_json_reads_them() {
    for len in 1..=22usize {
        for tail in ["", ",", "}", ".25", "e2", " ", "x12345678"] {
            let digits: String = (0..len).map(|k| char::from(b'1' + (k % 9) as u8)).collect();
            let text = format!("{digits}{tail}");
            let number = if tail.starts_with(['.', 'e']) { &text[..] } else { &digits[..] };
            let want: serde_json::Value = serde_json::from_str(number).unwrap();
            let (num, end) = Num::parse_prefix(text.as_bytes()).unwrap();
            let got = match num {
                Num::U64(v) => serde_json::Value::from(v),
                Num::I64(v) => serde_json::Value::from(v),
                Num::F64(v) => serde_json::Value::from(v),
            };
            assert_eq!(got, want, "{text:?}");
            assert_eq!(end, number.len(), "{text:?}");
        }
    }
}

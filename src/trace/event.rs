//! One trace event as serde sees it: borrowed from the input chunk wherever possible, with
//! only the fields the analysis reads. Everything else is skipped by serde without allocating.

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// A JSON string as raw bytes, borrowed from the input when it has no escapes. Not checked
/// for UTF-8 here: most names are only compared or hashed, and the interner converts each
/// distinct name once (lossily), which keeps UTF-8 validation off the per-event path.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Text<'a>(pub Cow<'a, [u8]>);

impl Text<'_> {
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
    pub fn to_str(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_vec())))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v.as_bytes())))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.as_bytes().to_vec())))
            }
        }
        d.deserialize_bytes(V)
    }
}

/// A Chrome-trace event with only the fields the analysis reads. Unknown fields are skipped;
/// every field is optional so that odd producers still parse (the analysis decides what a
/// missing field means). Deserialised by hand with byte keys: serde's derive would validate
/// every key as UTF-8, which is a tenth of the parse time on Kineto's key-heavy events.
#[derive(Debug, Default, PartialEq)]
pub struct RawEvent<'a> {
    pub ph: Text<'a>,
    pub cat: Text<'a>,
    pub name: Text<'a>,
    pub pid: Id<'a>,
    pub tid: Id<'a>,
    /// Kept as raw JSON text: epoch microseconds with a nanosecond fraction exceed f64
    /// precision.
    pub ts: Option<&'a [u8]>,
    pub dur: Option<&'a [u8]>,
    pub args: Option<Args<'a>>,
}

/// The `args` the analysis uses. Kineto's spellings changed over the years; both are read.
#[derive(Debug, Default, PartialEq)]
pub struct Args<'a> {
    pub correlation: Option<Loose>,
    pub external_id: Option<Loose>,
    pub device: Option<Loose>,
    pub stream: Option<Loose>,
    pub blocks_per_sm: Option<Loose>,
    pub occupancy_pct: Option<Loose>,
    /// Raw JSON text of the SDPA arguments (parsed only for attention ops).
    pub input_dims: Option<&'a [u8]>,
    pub input_type: Option<&'a [u8]>,
    pub concrete_inputs: Option<&'a [u8]>,
}

impl Args<'_> {
    pub fn external_id(&self) -> Option<i64> {
        self.external_id.and_then(Loose::as_i64)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for RawEvent<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawEvent<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a trace event object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<RawEvent<'de>, A::Error> {
                let mut ev = RawEvent::default();
                while let Some(k) = m.next_key::<Text<'de>>()? {
                    match k.bytes() {
                        b"ph" => ev.ph = m.next_value()?,
                        b"cat" => ev.cat = m.next_value()?,
                        b"name" => ev.name = m.next_value()?,
                        b"pid" => ev.pid = m.next_value()?,
                        b"tid" => ev.tid = m.next_value()?,
                        b"ts" => ev.ts = Some(m.next_value::<&RawValue>()?.get().as_bytes()),
                        b"dur" => ev.dur = Some(m.next_value::<&RawValue>()?.get().as_bytes()),
                        b"args" => ev.args = m.next_value()?,
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(ev)
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Args<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an args object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Args<'de>, A::Error> {
                let mut a = Args::default();
                while let Some(k) = m.next_key::<Text<'de>>()? {
                    match k.bytes() {
                        b"correlation" => a.correlation = m.next_value()?,
                        // Current Kineto writes "External id", 2020-2021 traces "external id".
                        b"External id" | b"external id" => a.external_id = m.next_value()?,
                        b"device" => a.device = m.next_value()?,
                        b"stream" => a.stream = m.next_value()?,
                        b"blocks per SM" => a.blocks_per_sm = m.next_value()?,
                        b"est. achieved occupancy %" => a.occupancy_pct = m.next_value()?,
                        b"Input Dims" | b"Input dims" => a.input_dims = Some(m.next_value::<&RawValue>()?.get().as_bytes()),
                        b"Input type" => a.input_type = Some(m.next_value::<&RawValue>()?.get().as_bytes()),
                        b"Concrete Inputs" => a.concrete_inputs = Some(m.next_value::<&RawValue>()?.get().as_bytes()),
                        _ => {
                            m.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(a)
            }
        }
        d.deserialize_map(V)
    }
}

/// A number written as an integer, a float, a numeric string, or `null`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loose {
    Int(i64),
    Float(f64),
    Null,
}

impl Loose {
    /// A number written as a string ("12", "1.5"); anything else ("0x0") is `Null`.
    pub fn from_text(v: &str) -> Loose {
        let t = v.trim();
        t.parse::<i64>().map(Loose::Int).or_else(|_| t.parse::<f64>().map(Loose::Float)).unwrap_or(Loose::Null)
    }

    pub fn as_i64(self) -> Option<i64> {
        match self {
            Loose::Int(i) => Some(i),
            Loose::Float(f) if f.is_finite() => Some(f as i64),
            _ => None,
        }
    }
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Loose::Int(i) => Some(i as f64),
            Loose::Float(f) if f.is_finite() => Some(f),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Loose, E> {
                Ok(Loose::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Loose, E> {
                Ok(Loose::Int(v.min(i64::MAX as u64) as i64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Loose, E> {
                Ok(Loose::Float(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Loose, E> {
                Ok(Loose::from_text(v))
            }
            fn visit_unit<E>(self) -> Result<Loose, E> {
                Ok(Loose::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Loose, E> {
                Ok(Loose::Int(v as i64))
            }
        }
        d.deserialize_any(V)
    }
}

/// A pid or tid: an integer, or a string ("stream 7", "Spans", "123").
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Id<'a> {
    #[default]
    Missing,
    Int(i64),
    Str(Cow<'a, str>),
}

impl Id<'_> {
    /// The numeric value: integers, numeric strings and Kineto's old "stream 7" spelling.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Id::Int(i) => Some(*i),
            Id::Str(s) => {
                let t = s.trim();
                let t = t.strip_prefix("stream").map(str::trim).unwrap_or(t);
                t.parse::<i64>().ok()
            }
            Id::Missing => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Id<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Id<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E>(self, v: i64) -> Result<Id<'de>, E> {
                Ok(Id::Int(v))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Id<'de>, E> {
                // Thread ids above 2^63 exist only as wrapped unsigned values; keep the bits.
                Ok(Id::Int(v as i64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Id<'de>, E> {
                Ok(Id::Int(v as i64))
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Id<'de>, E> {
                Ok(Id::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Id<'de>, E> {
                Ok(Id::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_unit<E>(self) -> Result<Id<'de>, E> {
                Ok(Id::Missing)
            }
        }
        d.deserialize_any(V)
    }
}

/// Parses a JSON number (or numeric string) of microseconds into integer nanoseconds,
/// exactly: `1606910596297023.123` must not lose its fraction the way an f64 would.
pub fn micros_to_nanos(raw: &[u8]) -> Option<i64> {
    let text = raw.trim_ascii();
    let text = text.strip_prefix(b"\"").and_then(|t| t.strip_suffix(b"\"")).unwrap_or(text).trim_ascii();
    parse_micros(text)
}

fn parse_micros(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    let mut int: i64 = 0;
    let mut i = 0;
    while i < digits.len() && digits[i].is_ascii_digit() {
        int = int.checked_mul(10)?.checked_add((digits[i] - b'0') as i64)?;
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let mut frac_ns: i64 = 0;
    if i < digits.len() && digits[i] == b'.' {
        i += 1;
        let mut scale = 100;
        let mut round_up = false;
        let mut first_extra = true;
        while i < digits.len() && digits[i].is_ascii_digit() {
            let d = (digits[i] - b'0') as i64;
            if scale > 0 {
                frac_ns += d * scale;
                scale /= 10;
            } else if first_extra {
                // Round to the nearest nanosecond on the first digit past it.
                round_up = d >= 5;
                first_extra = false;
            }
            i += 1;
        }
        frac_ns += round_up as i64;
    }
    if i < digits.len() {
        // Exponent or other forms: rare; fall back to f64 (still nanosecond-exact for any
        // duration or relative timestamp below ~100 days).
        let s = std::str::from_utf8(b).ok()?;
        let v: f64 = s.parse().ok()?;
        let ns = v * 1000.0;
        return if ns.is_finite() && ns.abs() < 9.2e18 { Some(ns.round() as i64) } else { None };
    }
    let ns = int.checked_mul(1000)?.checked_add(frac_ns)?;
    Some(if neg { -ns } else { ns })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let a: Args = serde_json::from_str(
            r#"{"correlation": "12", "External id": 3.0, "stream": null, "blocks per SM": 0.5}"#,
        )
        .unwrap();
        assert_eq!(a.correlation.and_then(Loose::as_i64), Some(12));
        assert_eq!(a.external_id(), Some(3));
        assert_eq!(a.stream, None);
        assert_eq!(a.blocks_per_sm.and_then(Loose::as_f64), Some(0.5));
    }
}

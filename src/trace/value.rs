//! Loosely typed values ([`Loose`]: a number or a number written as a string) and ids
//! ([`Id`]: pid/tid as an integer or text), read from [`Num`] by the rules in the Chrome-trace
//! reader's docs (`input::formats::chrome_json::event`).

use super::number::*;
use serde::de::{Deserializer, Visitor};
use serde::Deserialize;
use std::borrow::Cow;
use std::fmt;

/// A number written as an integer, a float, a numeric string, a boolean or `null`; see the
/// module documentation for how literals map onto it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loose {
    /// An integer within `i64` (a boolean as 1 or 0).
    Int(i64),
    /// Any other number: fractions, exponents, `-0`, integers beyond `i64`.
    Float(f64),
    /// `null`, or a string that is not a number.
    Null,
}

/// The largest magnitude up to which every integer is exactly an `f64`: 2^53 - 1
/// (JavaScript's `MAX_SAFE_INTEGER`). [`Loose::as_i64`] reads no `Float` beyond it.
pub const MAX_EXACT_F64_INT: f64 = 9_007_199_254_740_991.0;

impl From<Num> for Loose {
    #[inline]
    fn from(n: Num) -> Loose {
        match n {
            Num::U64(v) => match i64::try_from(v) {
                Ok(i) => Loose::Int(i),
                Err(_) => Loose::Float(v as f64),
            },
            Num::I64(v) => Loose::Int(v),
            Num::F64(f) => Loose::Float(f),
        }
    }
}

impl From<bool> for Loose {
    fn from(v: bool) -> Loose {
        Loose::Int(v as i64)
    }
}

impl Loose {
    /// A number written as a string (`"12"`, `" 1.5 "`), read like a literal after trimming;
    /// anything that is not a JSON number (`"0x0"`, `"007"`) is `Null`.
    pub fn from_text(v: &str) -> Loose {
        Num::parse(v.trim().as_bytes()).map_or(Loose::Null, Loose::from)
    }

    /// The value as an integer: `Int` as is, a `Float` only when it is a whole number within
    /// ±(2^53 - 1). Out-of-range integers, fractions and infinities are `None`.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Loose::Int(i) => Some(i),
            Loose::Float(f) if f.fract() == 0.0 && f.abs() <= MAX_EXACT_F64_INT => Some(f as i64),
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
                Ok(Num::I64(v).into())
            }
            fn visit_u64<E>(self, v: u64) -> Result<Loose, E> {
                Ok(Num::U64(v).into())
            }
            fn visit_f64<E>(self, v: f64) -> Result<Loose, E> {
                Ok(Num::F64(v).into())
            }
            fn visit_str<E>(self, v: &str) -> Result<Loose, E> {
                Ok(Loose::from_text(v))
            }
            fn visit_unit<E>(self) -> Result<Loose, E> {
                Ok(Loose::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Loose, E> {
                Ok(v.into())
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
    /// The numeric value: integers, numeric strings and Kineto's old "stream 7" spelling,
    /// read as [`Loose::from_text`] and [`Loose::as_i64`] read them.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Id::Int(i) => Some(*i),
            Id::Str(s) => {
                let t = s.trim();
                let t = t.strip_prefix("stream").unwrap_or(t);
                Loose::from_text(t).as_i64()
            }
            Id::Missing => None,
        }
    }
}

impl From<Num> for Id<'_> {
    /// `Int` when [`Loose::as_i64`] reads the number; otherwise (`2^64 - 1`, `1.5`) its
    /// canonical text, so that such ids stay distinct from each other and from integer ids.
    #[inline]
    fn from(n: Num) -> Self {
        match Loose::from(n).as_i64() {
            Some(i) => Id::Int(i),
            None => Id::Str(Cow::Owned(num_text(n))),
        }
    }
}

/// A number's canonical text (for the rare ids that are not integers).
#[cold]
fn num_text(n: Num) -> String {
    match n {
        Num::U64(v) => v.to_string(),
        Num::I64(v) => v.to_string(),
        Num::F64(f) => format!("{f:?}"),
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
                Ok(Num::I64(v).into())
            }
            fn visit_u64<E>(self, v: u64) -> Result<Id<'de>, E> {
                Ok(Num::U64(v).into())
            }
            fn visit_f64<E>(self, v: f64) -> Result<Id<'de>, E> {
                Ok(Num::F64(v).into())
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

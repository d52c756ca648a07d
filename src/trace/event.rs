//! One trace event as serde sees it: borrowed from the input chunk wherever possible, with
//! only the fields the analysis reads. Everything else is skipped by serde without allocating.
//!
//! This file also holds what the serde reference and the fast scanner (`scan.rs`) share, so
//! that the two read every event the same way:
//! - the key tables ([`EventKey`], [`ArgKey`]): which keys are read, in every spelling, and
//!   (`event_member`, `arg_member`) which field each key fills with what kind of value;
//! - the number path ([`Num`] -> [`Loose`] / [`Id`]): how a JSON number becomes a value.
//!
//! # Numbers
//!
//! A number literal is first classified as serde_json classifies it ([`Num`]): a
//! non-negative integer that fits `u64`, a negative one that fits `i64`, or else an `f64`
//! (fractions, exponents, `-0`, and integers beyond those ranges, rounded to nearest). Then:
//! - [`Loose`] keeps integers within `i64` as `Int`, everything else as `Float`: an integer
//!   literal `>= 2^63` or `< -2^63` becomes the nearest `f64`, never a wrapped (`-1`) or
//!   saturated (`i64::MAX`) integer.
//! - [`Loose::as_i64`] reads `Int` as is, and a `Float` only when it is a whole number of
//!   magnitude at most 2^53 - 1 (where every integer is exact): `3.0`, `1.5e3` and `-0` give
//!   3, 1500 and 0; `1.5`, `1e19` and every out-of-range integer give `None` ("not an
//!   integer"), so an id that does not fit can never collide with a real one.
//! - [`Id`] (pid, tid) is `Int` when [`Loose::as_i64`] reads the number, otherwise the number's
//!   canonical text as `Id::Str` (`"18446744073709551615"`, `"1.5"`): a distinct thread, not
//!   an integer one.
//! - A literal whose value overflows `f64` (`1e400`) is an error in serde_json ("number out of
//!   range"); the scanner hands such events back to serde_json. Inside a string (`"1e400"`)
//!   it reads as an infinite `Float`, which neither `as_i64` nor `as_f64` accepts.
//! - Numbers written as strings (`"12"`, `" 1.5 "`) follow the same rules after trimming;
//!   a string that is not a JSON number (`"0x0"`, `"007"`, `"+1"`, `"inf"`) is `Loose::Null`.
//!
//! # Duplicate keys
//!
//! Both parsers store members in order, so the last of duplicate keys wins (also across
//! spellings: of `"External id"` and `"external id"`, the later one). A duplicate `args`
//! replaces the earlier object entirely.

use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
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
    /// Raw JSON text of the collective metadata (read only for collectives).
    pub collective_name: Option<&'a [u8]>,
    pub process_group: Option<&'a [u8]>,
    pub seq: Option<Loose>,
    pub in_msg_nelems: Option<Loose>,
    pub dtype: Option<&'a [u8]>,
    pub sequence_number: Option<Loose>,
    pub addr: Option<Loose>,
    pub bytes: Option<Loose>,
    pub total_allocated: Option<Loose>,
    pub total_reserved: Option<Loose>,
    pub device_id: Option<Loose>,
}

impl Args<'_> {
    pub fn external_id(&self) -> Option<i64> {
        self.external_id.and_then(Loose::as_i64)
    }
}

/// Declares a key table: an enum with one variant per field, the byte spellings of each
/// (compared after unescaping, case-sensitively), a `SPELLINGS` list and an `of` lookup.
macro_rules! key_table {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $($spelling:literal)|+,)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// Every spelling read, with its key, in table order.
            pub const SPELLINGS: &'static [(&'static [u8], $name)] = &[$($(($spelling, $name::$variant),)+)*];

            /// The key spelled `key`, if it is one the parsers read.
            #[inline(always)]
            pub fn of(key: &[u8]) -> Option<$name> {
                match key {
                    $($($spelling)|+ => Some($name::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

key_table! {
    /// The top-level members of an event object that both parsers read.
    EventKey {
        Ph = b"ph",
        Cat = b"cat",
        Name = b"name",
        Pid = b"pid",
        Tid = b"tid",
        Ts = b"ts",
        Dur = b"dur",
        Args = b"args",
    }
}

key_table! {
    /// The members of an event's `args` that both parsers read.
    ArgKey {
        Correlation = b"correlation",
        /// Current Kineto writes "External id", 2020-2021 traces "external id".
        ExternalId = b"External id" | b"external id",
        Device = b"device",
        Stream = b"stream",
        BlocksPerSm = b"blocks per SM",
        OccupancyPct = b"est. achieved occupancy %",
        InputDims = b"Input Dims" | b"Input dims",
        InputType = b"Input type",
        ConcreteInputs = b"Concrete Inputs",
        /// Collective metadata (on NCCL kernels in current Kineto, on `record_param_comms`).
        CollectiveName = b"Collective name",
        ProcessGroup = b"Process Group Name",
        Seq = b"Seq",
        InMsgNelems = b"In msg nelems",
        Dtype = b"dtype",
        /// Autograd: a forward op and its backward share a sequence number.
        SequenceNumber = b"Sequence number",
        /// `[memory]` events (profile_memory=True).
        Addr = b"Addr",
        Bytes = b"Bytes",
        TotalAllocated = b"Total Allocated",
        TotalReserved = b"Total Reserved",
        DeviceId = b"Device Id",
    }
}

/// A member value read as one of the kinds the key tables store. Implemented by the serde
/// visitors (over `MapAccess`) and by the scanner's cursor, so that [`event_member`] and
/// [`arg_member`] are the one place that says how each key is read.
pub(crate) trait Values<'a> {
    type Error;
    /// A string, as raw bytes.
    fn text(&mut self) -> Result<Text<'a>, Self::Error>;
    /// A pid or tid.
    fn id(&mut self) -> Result<Id<'a>, Self::Error>;
    /// A number, numeric string or boolean; `null` is `None`.
    fn number(&mut self) -> Result<Option<Loose>, Self::Error>;
    /// Any value, kept as its raw JSON text.
    fn raw(&mut self) -> Result<&'a [u8], Self::Error>;
    /// An `args` object, or `null`, read into `into` (in place: the struct is large, and
    /// returning it would copy it once more per event).
    fn args(&mut self, into: &mut Option<Args<'a>>) -> Result<(), Self::Error>;
    /// Any value, ignored.
    fn skip(&mut self) -> Result<(), Self::Error>;
}

/// Reads the value of the event member named `key` into `ev` (or skips it).
#[inline(always)]
pub(crate) fn event_member<'a, V: Values<'a>>(ev: &mut RawEvent<'a>, key: &[u8], v: &mut V) -> Result<(), V::Error> {
    match EventKey::of(key) {
        Some(EventKey::Ph) => ev.ph = v.text()?,
        Some(EventKey::Cat) => ev.cat = v.text()?,
        Some(EventKey::Name) => ev.name = v.text()?,
        Some(EventKey::Pid) => ev.pid = v.id()?,
        Some(EventKey::Tid) => ev.tid = v.id()?,
        Some(EventKey::Ts) => ev.ts = Some(v.raw()?),
        Some(EventKey::Dur) => ev.dur = Some(v.raw()?),
        Some(EventKey::Args) => v.args(&mut ev.args)?,
        None => v.skip()?,
    }
    Ok(())
}

/// Reads the value of the `args` member named `key` into `a` (or skips it).
#[inline(always)]
pub(crate) fn arg_member<'a, V: Values<'a>>(a: &mut Args<'a>, key: &[u8], v: &mut V) -> Result<(), V::Error> {
    match ArgKey::of(key) {
        Some(ArgKey::Correlation) => a.correlation = v.number()?,
        Some(ArgKey::ExternalId) => a.external_id = v.number()?,
        Some(ArgKey::Device) => a.device = v.number()?,
        Some(ArgKey::Stream) => a.stream = v.number()?,
        Some(ArgKey::BlocksPerSm) => a.blocks_per_sm = v.number()?,
        Some(ArgKey::OccupancyPct) => a.occupancy_pct = v.number()?,
        Some(ArgKey::InputDims) => a.input_dims = Some(v.raw()?),
        Some(ArgKey::InputType) => a.input_type = Some(v.raw()?),
        Some(ArgKey::ConcreteInputs) => a.concrete_inputs = Some(v.raw()?),
        Some(ArgKey::CollectiveName) => a.collective_name = Some(v.raw()?),
        Some(ArgKey::ProcessGroup) => a.process_group = Some(v.raw()?),
        Some(ArgKey::Seq) => a.seq = v.number()?,
        Some(ArgKey::InMsgNelems) => a.in_msg_nelems = v.number()?,
        Some(ArgKey::Dtype) => a.dtype = Some(v.raw()?),
        Some(ArgKey::SequenceNumber) => a.sequence_number = v.number()?,
        Some(ArgKey::Addr) => a.addr = v.number()?,
        Some(ArgKey::Bytes) => a.bytes = v.number()?,
        Some(ArgKey::TotalAllocated) => a.total_allocated = v.number()?,
        Some(ArgKey::TotalReserved) => a.total_reserved = v.number()?,
        Some(ArgKey::DeviceId) => a.device_id = v.number()?,
        None => v.skip()?,
    }
    Ok(())
}

/// [`Values`] for serde: the next value of a map.
struct NextValue<'m, A>(&'m mut A);

impl<'de, A: MapAccess<'de>> Values<'de> for NextValue<'_, A> {
    type Error = A::Error;
    fn text(&mut self) -> Result<Text<'de>, A::Error> {
        self.0.next_value()
    }
    fn id(&mut self) -> Result<Id<'de>, A::Error> {
        self.0.next_value()
    }
    fn number(&mut self) -> Result<Option<Loose>, A::Error> {
        self.0.next_value()
    }
    fn raw(&mut self) -> Result<&'de [u8], A::Error> {
        Ok(self.0.next_value::<&RawValue>()?.get().as_bytes())
    }
    fn args(&mut self, into: &mut Option<Args<'de>>) -> Result<(), A::Error> {
        *into = self.0.next_value()?;
        Ok(())
    }
    fn skip(&mut self) -> Result<(), A::Error> {
        self.0.next_value::<IgnoredAny>().map(|_| ())
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
                    event_member(&mut ev, k.bytes(), &mut NextValue(&mut m))?;
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
                    arg_member(&mut a, k.bytes(), &mut NextValue(&mut m))?;
                }
                Ok(a)
            }
        }
        d.deserialize_map(V)
    }
}

/// A JSON number as serde_json classifies it, before any conversion: what it hands a visitor
/// (`visit_u64` / `visit_i64` / `visit_f64`), and what [`Num::parse`] makes of a literal's
/// bytes. Every number either parser reads becomes a [`Loose`] or an [`Id`] from here.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A non-negative integer literal below 2^64.
    U64(u64),
    /// A negative integer literal down to -2^63.
    I64(i64),
    /// Anything else: a fraction or exponent, `-0`, or an integer beyond the two above,
    /// rounded to the nearest `f64` (infinite when it overflows, where serde_json errs).
    F64(f64),
}

impl Num {
    /// Reads a whole JSON number literal exactly as serde_json (with `float_roundtrip`)
    /// does. `None` when the bytes are not a JSON number: leading zeros, `+`, `.5`, `1.`,
    /// `inf`, hex, surrounding spaces.
    pub fn parse(b: &[u8]) -> Option<Num> {
        match Num::parse_prefix(b) {
            Some((n, len)) if len == b.len() => Some(n),
            _ => None,
        }
    }

    /// Reads the JSON number at the start of `b` (the longest that the grammar
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` matches) and returns it with its length.
    /// `None` when `b` does not start with one, or starts with a leading zero followed by a
    /// digit. The caller checks what follows.
    #[inline]
    pub(crate) fn parse_prefix(b: &[u8]) -> Option<(Num, usize)> {
        let neg = b.first() == Some(&b'-');
        let start = neg as usize;
        // The integer part, accumulated while it is scanned (wrapping; checked below when
        // it is too long to be sure).
        let mut m: u64 = 0;
        let mut i = start;
        while let Some(&c) = b.get(i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            m = m.wrapping_mul(10).wrapping_add(d as u64);
            i += 1;
        }
        let n = i - start;
        if n == 0 || (n > 1 && b[start] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = b.get(i) {
            let end = fraction_end(b, i)?;
            return Some((Num::F64(parse_f64(&b[..end])), end));
        }
        if n > 19 {
            // 10^19 - 1 is the longest that cannot overflow u64.
            let exact = b[start..i].iter().try_fold(0u64, |v, &c| v.checked_mul(10)?.checked_add((c - b'0') as u64));
            match exact {
                Some(v) => m = v,
                None => return Some((Num::F64(parse_f64(&b[..i])), i)),
            }
        }
        let num = if !neg {
            Num::U64(m)
        } else if m == 0 {
            Num::F64(-0.0)
        } else if m <= 1 << 63 {
            Num::I64((m as i64).wrapping_neg())
        } else {
            // serde_json: `-(significand as f64)`, the same correctly rounded value.
            Num::F64(-(m as f64))
        };
        Some((num, i))
    }
}

/// The length of the JSON number at the start of `b`, checking only the grammar (as
/// serde_json does for a `RawValue`): `1e400` passes. `None` when `b` does not start with one.
#[inline]
pub(crate) fn number_len(b: &[u8]) -> Option<usize> {
    let start = (b.first() == Some(&b'-')) as usize;
    let i = start + digits(b, start);
    if i == start || (i - start > 1 && b[start] == b'0') {
        return None;
    }
    match b.get(i) {
        Some(b'.' | b'e' | b'E') => fraction_end(b, i),
        _ => Some(i),
    }
}

/// The end of a number's fraction and exponent, `(\.[0-9]+)?([eE][+-]?[0-9]+)?`, starting
/// at `i` (just after the integer part).
#[inline]
fn fraction_end(b: &[u8], mut i: usize) -> Option<usize> {
    if b.get(i) == Some(&b'.') {
        let n = digits(b, i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        let n = digits(b, i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
}

/// The number of ASCII digits in `b` from `i` on.
#[inline(always)]
fn digits(b: &[u8], i: usize) -> usize {
    b.get(i..).map_or(0, |t| t.iter().take_while(|c| c.is_ascii_digit()).count())
}

/// The nearest f64 of a literal that matched the number grammar (Rust's parser rounds
/// correctly, as serde_json's `float_roundtrip` does).
#[cold]
fn parse_f64(b: &[u8]) -> f64 {
    // Both fail only on bytes outside the grammar, which the callers have ruled out.
    std::str::from_utf8(b).ok().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN)
}

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
        let d = (digits[i] - b'0') as i64;
        // 18 digits cannot overflow, and an overflow-checked multiply is a call into a
        // 128-bit multiply on wasm32: checked only past them.
        int = if i < 18 { int * 10 + d } else { int.checked_mul(10)?.checked_add(d)? };
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
    // frac_ns <= 1000 (999 rounded up).
    let ns = if int <= (i64::MAX - 1000) / 1000 {
        int * 1000 + frac_ns
    } else {
        int.checked_mul(1000)?.checked_add(frac_ns)?
    };
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
        let e: RawEvent =
            serde_json::from_str(r#"{"name": "a\u00e9\"b", "args": {"external id": 4, "x": [1]}}"#).unwrap();
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
}

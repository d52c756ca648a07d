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

#[cfg(test)]
mod tests;

pub use crate::trace::number::*;
pub use crate::trace::{Args, Id, Loose};

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
        OutMsgNelems = b"Out msg nelems",
        GroupSize = b"Group size",
        Dtype = b"dtype",
        /// Autograd: a forward op and its backward share a sequence number.
        SequenceNumber = b"Sequence number",
        /// `[memory]` events (profile_memory=True).
        Addr = b"Addr",
        Bytes = b"Bytes",
        TotalAllocated = b"Total Allocated",
        TotalReserved = b"Total Reserved",
        DeviceId = b"Device Id",
        /// The op's FLOPs, counted by the profiler (`with_flops=True`).
        Flops = b"flops",
        /// A kernel's FLOPs and GB moved, as Inductor's analysis writes them on kernels.
        KernelFlop = b"kernel_flop",
        KernelNumGb = b"kernel_num_gb",
        /// The kernel a launch call launched (on ROCm's runtime calls).
        Kernel = b"kernel",
        /// A replayed row's graph and graph node (CUDA 12+).
        GraphId = b"graph id",
        GraphNodeId = b"graph node id",
        /// A `cuda_sync` row's event (Kineto's CudaSyncActivity, CUDA only).
        WaitOnStream = b"wait_on_stream",
        WaitOnRecord = b"wait_on_cuda_event_record_corr_id",
    }
}

/// A member value read as one of the kinds the key tables store. Implemented by the serde
/// visitors (over `MapAccess`) and by the scanner's cursor, so that [`event_member`] and
/// [`arg_member`] are the one place that says how each key is read.
pub(crate) trait Values<'a> {
    type Error;
    /// A string, as raw bytes, written into `into`. (In place rather than returned: a
    /// returned `Result<Text>` went through the stack in the scanner, its error byte beside the
    /// pointer, and was copied on in pieces that the CPU could not forward from the stores:
    /// a stall worth about 5% of a native read, 500 MB, one thread.)
    fn text(&mut self, into: &mut Text<'a>) -> Result<(), Self::Error>;
    /// A pid or tid, written into `into` (in place, as `text`).
    fn id(&mut self, into: &mut Id<'a>) -> Result<(), Self::Error>;
    /// A number, numeric string or boolean; `null` is `None`. Into `into`, as `text`.
    fn number(&mut self, into: &mut Option<Loose>) -> Result<(), Self::Error>;
    /// Any value, kept as its raw JSON text. Into `into`, as `text`.
    fn raw(&mut self, into: &mut Option<&'a [u8]>) -> Result<(), Self::Error>;
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
        Some(EventKey::Ph) => v.text(&mut ev.ph)?,
        Some(EventKey::Cat) => v.text(&mut ev.cat)?,
        Some(EventKey::Name) => v.text(&mut ev.name)?,
        Some(EventKey::Pid) => v.id(&mut ev.pid)?,
        Some(EventKey::Tid) => v.id(&mut ev.tid)?,
        Some(EventKey::Ts) => v.raw(&mut ev.ts)?,
        Some(EventKey::Dur) => v.raw(&mut ev.dur)?,
        Some(EventKey::Args) => v.args(&mut ev.args)?,
        None => v.skip()?,
    }
    Ok(())
}

/// Reads the value of the `args` member named `key` into `a` (or skips it).
#[inline(always)]
pub(crate) fn arg_member<'a, V: Values<'a>>(a: &mut Args<'a>, key: &[u8], v: &mut V) -> Result<(), V::Error> {
    match ArgKey::of(key) {
        Some(ArgKey::Correlation) => v.number(&mut a.correlation)?,
        Some(ArgKey::ExternalId) => v.number(&mut a.external_id)?,
        Some(ArgKey::Device) => v.number(&mut a.device)?,
        Some(ArgKey::Stream) => v.number(&mut a.stream)?,
        Some(ArgKey::BlocksPerSm) => v.number(&mut a.blocks_per_sm)?,
        Some(ArgKey::OccupancyPct) => v.number(&mut a.occupancy_pct)?,
        Some(ArgKey::InputDims) => v.raw(&mut a.input_dims)?,
        Some(ArgKey::InputType) => v.raw(&mut a.input_type)?,
        Some(ArgKey::ConcreteInputs) => v.raw(&mut a.concrete_inputs)?,
        Some(ArgKey::CollectiveName) => v.raw(&mut a.collective_name)?,
        Some(ArgKey::ProcessGroup) => v.raw(&mut a.process_group)?,
        Some(ArgKey::Seq) => v.number(&mut a.seq)?,
        Some(ArgKey::InMsgNelems) => v.number(&mut a.in_msg_nelems)?,
        Some(ArgKey::OutMsgNelems) => v.number(&mut a.out_msg_nelems)?,
        Some(ArgKey::GroupSize) => v.number(&mut a.group_size)?,
        Some(ArgKey::Dtype) => v.raw(&mut a.dtype)?,
        Some(ArgKey::SequenceNumber) => v.number(&mut a.sequence_number)?,
        Some(ArgKey::Addr) => v.number(&mut a.addr)?,
        Some(ArgKey::Bytes) => v.number(&mut a.bytes)?,
        Some(ArgKey::TotalAllocated) => v.number(&mut a.total_allocated)?,
        Some(ArgKey::TotalReserved) => v.number(&mut a.total_reserved)?,
        Some(ArgKey::DeviceId) => v.number(&mut a.device_id)?,
        Some(ArgKey::Flops) => v.number(&mut a.flops)?,
        Some(ArgKey::KernelFlop) => v.number(&mut a.kernel_flop)?,
        Some(ArgKey::KernelNumGb) => v.number(&mut a.kernel_num_gb)?,
        Some(ArgKey::Kernel) => v.raw(&mut a.kernel)?,
        Some(ArgKey::GraphId) => v.number(&mut a.graph_id)?,
        Some(ArgKey::GraphNodeId) => v.number(&mut a.graph_node_id)?,
        Some(ArgKey::WaitOnStream) => v.number(&mut a.wait_on_stream)?,
        Some(ArgKey::WaitOnRecord) => v.number(&mut a.wait_on_record)?,
        None => v.skip()?,
    }
    Ok(())
}

/// [`Values`] for serde: the next value of a map.
struct NextValue<'m, A>(&'m mut A);

impl<'de, A: MapAccess<'de>> Values<'de> for NextValue<'_, A> {
    type Error = A::Error;
    fn text(&mut self, into: &mut Text<'de>) -> Result<(), A::Error> {
        *into = self.0.next_value()?;
        Ok(())
    }
    fn id(&mut self, into: &mut Id<'de>) -> Result<(), A::Error> {
        *into = self.0.next_value()?;
        Ok(())
    }
    fn number(&mut self, into: &mut Option<Loose>) -> Result<(), A::Error> {
        *into = self.0.next_value()?;
        Ok(())
    }
    fn raw(&mut self, into: &mut Option<&'de [u8]>) -> Result<(), A::Error> {
        *into = Some(self.0.next_value::<&RawValue>()?.get().as_bytes());
        Ok(())
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

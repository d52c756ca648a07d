//! The edge of the format: each Chrome-JSON event, and each top-level metadata value the
//! analysis reads, handed on as the format-neutral [`Event`] / [`Meta`]. Nothing is allocated
//! per event: the neutral event borrows the JSON event's strings and arguments.

use super::event::RawEvent;
use super::sink::JsonSink;
use crate::trace::{micros_to_nanos, Device, Event, GpuKind, Kind, Loose, Meta, Phase, Sink};
use serde::Deserialize;
use serde_json::value::RawValue;

/// A [`Sink`] of neutral events, seen by the JSON reader as a [`JsonSink`].
pub struct Neutral<'s, S>(pub &'s mut S);

impl<S: Sink> JsonSink for Neutral<'_, S> {
    #[inline]
    fn event(&mut self, ev: &RawEvent<'_>, _offset: u64) {
        let ph = ev.ph.bytes();
        // `[memory]` instant events (profile_memory=True); 2021 traces write them without a cat.
        let phase = if ev.name.bytes() == b"[memory]" && matches!(ph, b"i" | b"I") { Phase::Memory } else { phase(ph) };
        let timed = matches!(phase, Phase::Complete | Phase::Memory);
        self.0.event(&Event {
            phase,
            kind: category(ev.cat.bytes()),
            category: ev.cat.bytes(),
            name: ev.name.bytes(),
            process: &ev.pid,
            thread: &ev.tid,
            start: if timed { ev.ts.and_then(micros_to_nanos) } else { None },
            dur: if phase == Phase::Complete { ev.dur.and_then(micros_to_nanos) } else { None },
            args: ev.args.as_ref(),
        });
    }

    fn metadata(&mut self, key: &str, value: &RawValue) {
        if let Some(meta) = metadata(key, value) {
            self.0.metadata(meta);
        }
    }

    fn malformed(&mut self, offset: u64, why: &str) {
        self.0.malformed(offset, why);
    }
}

fn phase(ph: &[u8]) -> Phase {
    match ph {
        b"X" => Phase::Complete,
        b"B" | b"E" => Phase::BeginEnd,
        b"s" | b"f" | b"t" => Phase::Flow,
        b"i" | b"I" | b"n" => Phase::Instant,
        b"C" => Phase::Counter,
        b"M" => Phase::Metadata,
        _ => Phase::Other,
    }
}

/// The kind of row a category names, decided case-insensitively (old traces capitalise).
/// Matched once as written, then (only when it has capitals or spaces) trimmed, lower-cased into
/// a small buffer and matched again, rather than compared with each name in turn (every flow
/// event's `ac2g` went through twenty comparisons).
pub(crate) fn category(cat: &[u8]) -> Kind {
    let kind = lower_case_category(cat);
    if kind != Kind::Unknown || !cat.iter().any(|b| b.is_ascii_uppercase() || b.is_ascii_whitespace()) {
        return kind;
    }
    let c = cat.trim_ascii();
    // Longer than every category named below.
    let mut lower = [0u8; 24];
    let Some(lower) = lower.get_mut(..c.len()) else { return Kind::Unknown };
    for (l, b) in lower.iter_mut().zip(c) {
        *l = b.to_ascii_lowercase();
    }
    lower_case_category(lower)
}

/// [`category`] of a name already trimmed and in lower case.
#[inline(always)]
fn lower_case_category(c: &[u8]) -> Kind {
    match c {
        b"" => Kind::Missing,
        b"kernel" => Kind::Gpu(GpuKind::Kernel),
        b"gpu_memcpy" | b"memcpy" => Kind::Gpu(GpuKind::Memcpy),
        b"gpu_memset" | b"memset" => Kind::Gpu(GpuKind::Memset),
        b"cuda_runtime" | b"runtime" | b"cuda_driver" | b"hip_runtime" => Kind::Runtime,
        b"cpu_op" | b"operator" | b"user_annotation" => Kind::Op,
        b"cuda_sync" => Kind::CudaSync,
        b"gpu_user_annotation" => Kind::GpuAnnotation,
        b"python_function" => Kind::Python,
        b"cpu_instant_event"
        | b"ac2g"
        | b"fwdbwd"
        | b"trace"
        | b"async"
        | b"async_gpu"
        | b"async_cpu_to_gpu"
        | b"python"
        | b"memory"
        | b"overhead"
        | b"cuda_profiler_range"
        | b"gpu_memory"
        | b"kineto" => Kind::Ignored,
        _ => Kind::Unknown,
    }
}

/// The top-level metadata the analysis reads: `deviceProperties` (2021 traces:
/// `computeProperties`) and `distributedInfo`. A value that does not read is left out.
fn metadata(key: &str, value: &RawValue) -> Option<Meta> {
    match key {
        "deviceProperties" | "computeProperties" => {
            let devices = serde_json::from_str::<Vec<DeviceProps>>(value.get()).ok()?;
            Some(Meta::Devices(devices.into_iter().map(DeviceProps::neutral).collect()))
        }
        "distributedInfo" => {
            let d = serde_json::from_str::<DistributedInfo>(value.get()).ok()?;
            let int = |v: Option<Loose>| v.and_then(Loose::as_i64);
            Some(Meta::Distributed { rank: int(d.rank), world_size: int(d.world_size), backend: d.backend })
        }
        _ => None,
    }
}

#[derive(Deserialize)]
struct DeviceProps {
    #[serde(default)]
    id: Option<Loose>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default, rename = "numSms")]
    num_sms: Option<Loose>,
    #[serde(default, rename = "computeMajor")]
    compute_major: Option<Loose>,
    #[serde(default, rename = "computeMinor")]
    compute_minor: Option<Loose>,
    #[serde(default, rename = "totalGlobalMem")]
    total_global_mem: Option<Loose>,
}

impl DeviceProps {
    fn neutral(self) -> Device {
        let int = |v: Option<Loose>| v.and_then(Loose::as_i64);
        Device {
            id: int(self.id),
            name: self.name,
            num_sms: int(self.num_sms),
            compute_major: int(self.compute_major),
            compute_minor: int(self.compute_minor),
            total_global_mem: int(self.total_global_mem),
        }
    }
}

#[derive(Deserialize)]
struct DistributedInfo {
    #[serde(default)]
    backend: Option<String>,
    #[serde(default)]
    rank: Option<Loose>,
    #[serde(default)]
    world_size: Option<Loose>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chain of case-insensitive comparisons `category` replaced, as the reference.
    fn category_by_comparisons(cat: &[u8]) -> Kind {
        const IGNORED: &[&str] = &[
            "cpu_instant_event",
            "ac2g",
            "fwdbwd",
            "trace",
            "async",
            "async_gpu",
            "async_cpu_to_gpu",
            "python",
            "memory",
            "overhead",
            "cuda_profiler_range",
            "gpu_memory",
            "kineto",
        ];
        let c = cat.trim_ascii();
        if c.is_empty() {
            return Kind::Missing;
        }
        let is = |s: &str| c.eq_ignore_ascii_case(s.as_bytes());
        let kinds: [(&[&str], Kind); 8] = [
            (&["kernel"], Kind::Gpu(GpuKind::Kernel)),
            (&["gpu_memcpy", "memcpy"], Kind::Gpu(GpuKind::Memcpy)),
            (&["gpu_memset", "memset"], Kind::Gpu(GpuKind::Memset)),
            (&["cuda_runtime", "runtime", "cuda_driver", "hip_runtime"], Kind::Runtime),
            (&["cpu_op", "operator", "user_annotation"], Kind::Op),
            (&["cuda_sync"], Kind::CudaSync),
            (&["gpu_user_annotation"], Kind::GpuAnnotation),
            (&["python_function"], Kind::Python),
        ];
        kinds
            .iter()
            .find(|(names, _)| names.iter().any(|n| is(n)))
            .map(|&(_, k)| k)
            .unwrap_or(if IGNORED.iter().any(|s| is(s)) { Kind::Ignored } else { Kind::Unknown })
    }

    #[test]
    fn categories_read_as_the_comparisons_did() {
        // Every known name in several cases, padded, empty, near misses, too long, non-ASCII.
        let names = concat!(
            "kernel|Kernel|KERNEL| kernel |gpu_memcpy|Memcpy|gpu_memset|memset|cuda_runtime|Runtime|",
            "cuda_driver|hip_runtime|cpu_op|Operator|user_annotation|cuda_sync|gpu_user_annotation|",
            "python_function|Python_Function|cpu_instant_event|ac2g|fwdbwd|Trace|async|async_gpu|",
            "async_cpu_to_gpu|python|memory|overhead|cuda_profiler_range|gpu_memory|kineto||  |kernels|",
            "kerne|gpu_user_annotation_and_more|cpu_op\u{e9}|\u{130}kernel|",
            "a_category_longer_than_every_known_one|ac2g\t",
        )
        .split('|');
        for n in names {
            assert_eq!(category(n.as_bytes()), category_by_comparisons(n.as_bytes()), "{n:?}");
        }
        assert_eq!(category(b"Kernel"), Kind::Gpu(GpuKind::Kernel));
        assert_eq!(category(b"ac2g"), Kind::Ignored);
        assert_eq!(category(b"gpu_user_annotation_and_more"), Kind::Unknown);
    }
}

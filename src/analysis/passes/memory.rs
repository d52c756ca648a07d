//! Memory over time from `[memory]` events (traces recorded with `profile_memory=True`):
//! allocated and reserved bytes per device, the peak, and the ops that hold the most at the
//! peak. Allocated is the allocator's `Total Allocated` when the trace records it, else the
//! running sum of allocations and frees since the trace began (then marked relative).

use crate::analysis::model::attribution::{Attribution, NO};
use crate::analysis::model::collect::{Collector, NONE};
use crate::analysis::model::frozen::Model;
use crate::report::{MemoryDevice, MemoryView};
use rustc_hash::FxHashMap;

/// Points per device in the series (each the maximum of its time bin).
pub const SERIES_POINTS: usize = 400;

pub fn memory(m: &Model) -> Option<MemoryView> {
    let (c, at) = (m.c, m.at);
    if c.memory.is_empty() {
        return None;
    }
    let mut order: Vec<u32> = (0..c.memory.len() as u32).collect();
    order.sort_by_key(|&i| (c.memory[i as usize].ts, i));
    let t0 = c.memory[order[0] as usize].ts;
    let mut devices: Vec<i32> = c.memory.iter().map(|m| m.device).collect();
    devices.sort_unstable();
    devices.dedup();
    let out = devices
        .into_iter()
        .map(|dev| {
            let events: Vec<usize> = order.iter().map(|&i| i as usize).filter(|&i| c.memory[i].device == dev).collect();
            let relative = events.iter().any(|&i| c.memory[i].total_allocated == NONE);
            // Allocated after each event.
            let mut running = 0i64;
            let points: Vec<(i64, i64, Option<i64>)> = events
                .iter()
                .map(|&i| {
                    let m = &c.memory[i];
                    running = running.saturating_add(m.bytes);
                    let alloc = if relative { running } else { m.total_allocated };
                    (m.ts, alloc, (m.total_reserved != NONE).then_some(m.total_reserved))
                })
                .collect();
            let (peak_k, &(peak_ts, peak, _)) = points
                .iter()
                .enumerate()
                .max_by(|a, b| a.1 .1.cmp(&b.1 .1).then(b.0.cmp(&a.0)))
                .expect("a device has events");
            let peak_reserved = points.iter().filter_map(|p| p.2).max();
            let has_addr = events.iter().all(|&i| c.memory[i].addr != NONE);
            let top_ops = holders(c, at, &events[..=peak_k], has_addr);
            MemoryDevice {
                device: dev as i64,
                peak_allocated_bytes: peak,
                peak_at_us: (peak_ts - t0) as f64 / 1e3,
                peak_reserved_bytes: peak_reserved,
                series: downsample(&points, t0),
                top_ops,
                live_at_peak: has_addr,
                relative,
            }
        })
        .collect();
    Some(MemoryView { events: c.memory.len() as u64, devices: out })
}

/// With addresses: the blocks still allocated at the peak, by the op that allocated them.
/// Without: bytes allocated before the peak, by op.
fn holders(c: &Collector, at: &Attribution, events: &[usize], has_addr: bool) -> Vec<(String, i64)> {
    let mut by_op: FxHashMap<u32, i64> = FxHashMap::default();
    if has_addr {
        let mut live: FxHashMap<i64, (i64, u32)> = FxHashMap::default();
        for &i in events {
            let m = &c.memory[i];
            if m.bytes > 0 {
                live.insert(m.addr, (m.bytes, at.memory_op[i]));
            } else {
                live.remove(&m.addr);
            }
        }
        for (bytes, op) in live.into_values() {
            *by_op.entry(op).or_default() += bytes;
        }
    } else {
        for &i in events {
            if c.memory[i].bytes > 0 {
                *by_op.entry(at.memory_op[i]).or_default() += c.memory[i].bytes;
            }
        }
    }
    let mut v: Vec<(String, i64)> = by_op
        .into_iter()
        .map(|(op, b)| (if op == NO { "(outside any op)".to_string() } else { c.names.get(op).to_string() }, b))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v.truncate(10);
    v
}

/// At most `SERIES_POINTS` points: the time range cut into bins, each keeping its maximum.
fn downsample(points: &[(i64, i64, Option<i64>)], t0: i64) -> Vec<(f64, i64, Option<i64>)> {
    let (Some(first), Some(last)) = (points.first(), points.last()) else { return Vec::new() };
    let range = (last.0 - first.0).max(1);
    let mut bins: Vec<Option<(i64, i64, Option<i64>)>> = vec![None; SERIES_POINTS];
    for p in points {
        let k = (((p.0 - first.0) as i128 * (SERIES_POINTS as i128 - 1)) / range as i128) as usize;
        let b = &mut bins[k.min(SERIES_POINTS - 1)];
        *b = Some(match *b {
            None => *p,
            Some(q) => (q.0.max(p.0), q.1.max(p.1), q.2.max(p.2)),
        });
    }
    bins.into_iter().flatten().map(|(t, a, r)| ((t - t0) as f64 / 1e3, a, r)).collect()
}

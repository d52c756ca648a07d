//! One trace's report <-> its wire form: numbers the views derive (shares, means, names) are
//! left out and derived again.

use super::wire::*;
use crate::analysis::stakes::derived_stake;
use crate::report::*;

pub fn pack_trace(t: &TraceReport) -> WTrace {
    let g = &t.gpu;
    WTrace {
        cv: {
            let c = &t.launch_coverage;
            (c.total_us() > 0.0).then_some([c.op_us, c.graph_us, c.no_op_us, c.external_only_us, c.no_launch_us])
        },
        ef: t.efficiency.as_ref().map(Efficiency::link_subset).filter(|e| !e.coverage.known_us.is_empty()),
        f: t.file.clone(),
        n: t.events,
        j: t.json_bytes,
        d: WDevice {
            n: t.device.name.clone(),
            s: t.device.sm_count,
            c: t.device.compute_capability.clone(),
            m: t.device.memory_gb,
            k: t.device.count,
        },
        r: t.rank,
        w: t.world_size,
        g: t.has_gpu,
        u: [
            g.kernel_time_us,
            g.busy_us,
            g.span_us,
            g.idle_us,
            g.compute_us,
            g.comm_us,
            g.exposed_comm_us,
            g.overlap_pct,
            g.memory_us,
        ],
        rg: t.window.map(|w| (w.start_ns, w.end_ns, w.origin_ns)),
        c: g.kernel_count,
        se: g.est_sm_efficiency_pct,
        oc: g.achieved_occupancy_pct,
        b: t.buckets
            .iter()
            .map(|b| WBucket {
                i: b.id,
                n: (b.name != b.id.name()).then(|| b.name.clone()),
                r: (b.rule != b.id.definition()).then(|| b.rule.clone()),
                t: b.time_us,
                p: unless(b.pct, pct_of(b.time_us, t.gpu.kernel_time_us)),
                c: b.count,
                m: b.matched.iter().map(|m| (m.rule.clone(), m.time_us, m.count)).collect(),
                k: b.top_names.iter().map(|n| (WName::pack(&n.name, &n.short), n.time_us, n.count)).collect(),
            })
            .collect(),
        a: WAttention {
            b: t.attention.backend,
            l: t.attention.library.clone(),
            t: t.attention.time_us,
            a: t.attention.total_us,
            e: t.attention
                .evidence
                .iter()
                .map(|e| WEvidence {
                    b: e.backend,
                    k: e.kind,
                    n: WName::pack(&e.name, &e.short),
                    l: e.library.clone(),
                    t: e.time_us,
                    c: e.count,
                })
                .collect(),
            r: t.attention.not_flash_reasons.clone(),
            f: t.attention.fix.clone(),
        },
        tk: t.top_kernels.iter().map(|r| pack_row(r, g.kernel_time_us)).collect(),
        to: t.top_ops.iter().map(|r| pack_row(r, g.kernel_time_us)).collect(),
        st: t
            .steps
            .iter()
            .map(|s| {
                WStep(
                    s.name.clone(),
                    [s.span_us, s.busy_us, s.idle_us, s.kernel_time_us, s.comm_us, s.exposed_comm_us, s.cpu_us],
                    s.kernel_count,
                )
            })
            .collect(),
        h: t.hints
            .iter()
            .map(|h| WHint {
                i: h.id,
                s: h.severity,
                m: h.message.clone(),
                e: h.evidence.clone(),
                f: h.fix.clone(),
                k: unless(h.stake_us, derived_stake(h.id, t).unwrap_or(f64::NAN)),
            })
            .collect(),
        x: t.diagnostics.iter().map(|d| WDiag(d.id, d.count, d.message.clone(), d.severity)).collect(),
    }
}

/// A number the decoder can derive is left out: `None` when `v` equals `derived` exactly.
fn unless(v: f64, derived: f64) -> Option<f64> {
    (v.to_bits() != derived.to_bits()).then_some(v)
}

/// The analysis' share: integer nanoseconds of the part over the whole, in percent.
fn pct_of(time_us: f64, total_us: f64) -> f64 {
    let (part, whole) = ((time_us * 1000.0).round() as i64, (total_us * 1000.0).round() as i64);
    if whole <= 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

fn mean_of(time_us: f64, count: u64) -> f64 {
    if count > 0 {
        time_us / count as f64
    } else {
        0.0
    }
}

fn pack_row(r: &TopRow, total_us: f64) -> WRow {
    WRow {
        n: WName::pack(&r.name, &r.short),
        t: r.time_us,
        p: unless(r.pct, pct_of(r.time_us, total_us)),
        c: r.count,
        m: unless(r.mean_us, mean_of(r.time_us, r.count)),
        x: unless(r.max_us, r.time_us),
        o: r.op.clone(),
        b: r.bucket,
    }
}

pub fn unpack_trace(w: WTrace) -> TraceReport {
    let u = w.u;
    let total = u[0];
    let carried: Vec<bool> = w.h.iter().map(|h| h.k.is_some()).collect();
    let mut t = TraceReport {
        file: w.f,
        events: w.n,
        json_bytes: w.j,
        device: DeviceInfo { name: w.d.n, sm_count: w.d.s, compute_capability: w.d.c, memory_gb: w.d.m, count: w.d.k },
        rank: w.r,
        world_size: w.w,
        distributed_backend: None,
        has_gpu: w.g,
        gpu: GpuTime {
            kernel_time_us: u[0],
            busy_us: u[1],
            span_us: u[2],
            idle_us: u[3],
            compute_us: u[4],
            comm_us: u[5],
            exposed_comm_us: u[6],
            overlap_pct: u[7],
            memory_us: u[8],
            kernel_count: w.c,
            est_sm_efficiency_pct: w.se,
            achieved_occupancy_pct: w.oc,
            // Not carried: the page does not show it.
            occupancy_unknown_us: 0.0,
        },
        devices: Vec::new(),
        buckets: w
            .b
            .into_iter()
            .map(|b| Bucket {
                id: b.i,
                name: b.n.unwrap_or_else(|| b.i.name().to_string()),
                rule: b.r.unwrap_or_else(|| b.i.definition()),
                time_us: b.t,
                pct: b.p.unwrap_or_else(|| pct_of(b.t, total)),
                count: b.c,
                matched: b.m.into_iter().map(|(rule, time_us, count)| RuleHit { rule, time_us, count }).collect(),
                top_names: b
                    .k
                    .into_iter()
                    .map(|(n, time_us, count)| {
                        let (name, short) = n.unpack();
                        NameTime { name, short, time_us, count }
                    })
                    .collect(),
            })
            .collect(),
        attention: Attention {
            backend: w.a.b,
            library: w.a.l,
            time_us: w.a.t,
            total_us: w.a.a,
            evidence: w
                .a
                .e
                .into_iter()
                .map(|e| {
                    let (name, short) = e.n.unpack();
                    Evidence { backend: e.b, kind: e.k, name, short, library: e.l, time_us: e.t, count: e.c }
                })
                .collect(),
            not_flash_reasons: w.a.r,
            fix: w.a.f,
        },
        top_kernels: w.tk.into_iter().map(|r| unpack_row(r, total)).collect(),
        top_ops: w.to.into_iter().map(|r| unpack_row(r, total)).collect(),
        steps: w
            .st
            .into_iter()
            .map(|WStep(name, v, kernel_count)| Step {
                name,
                span_us: v[0],
                busy_us: v[1],
                idle_us: v[2],
                kernel_time_us: v[3],
                comm_us: v[4],
                exposed_comm_us: v[5],
                cpu_us: v[6],
                kernel_count,
                // The idle causes need the trace; links carry what the views show.
                host_wait_us: 0.0,
                kernel_wait_us: 0.0,
                other_wait_us: 0.0,
            })
            .collect(),
        hints: w
            .h
            .into_iter()
            .map(|h| Hint {
                id: h.i,
                severity: h.s,
                message: h.m,
                evidence: h.e,
                fix: h.f,
                stake_us: h.k.unwrap_or_default(),
            })
            .collect(),
        diagnostics: w
            .x
            .into_iter()
            .map(|WDiag(id, count, message, severity)| Diagnostic { id, count, message, severity })
            .collect(),
        launch: LaunchStats::default(),
        launch_coverage: w.cv.map_or_else(LaunchCoverage::default, |v| LaunchCoverage {
            op_us: v[0],
            graph_us: v[1],
            no_op_us: v[2],
            external_only_us: v[3],
            no_launch_us: v[4],
        }),
        training: false,
        copies: Copies::default(),
        tensor_cores: TensorCoreUse::default(),
        // Full lists and the why views are not carried by links: they need the trace.
        kernels: Vec::new(),
        ops: Vec::new(),
        collectives: Vec::new(),
        idle: Default::default(),
        layers: Vec::new(),
        memory: None,
        timeline: None,
        efficiency: w.ef,
        window: w.rg.filter(|r| r.0 < r.1).map(|(start_ns, end_ns, origin_ns)| TimeWindow {
            start_ns,
            end_ns,
            origin_ns,
        }),
        critical_path: None,
    };
    // Stakes the link left out are the ones the summary gives, derived once it is unpacked.
    for (i, carried) in carried.into_iter().enumerate() {
        if !carried {
            t.hints[i].stake_us = derived_stake(t.hints[i].id, &t).unwrap_or(0.0);
        }
    }
    t
}

fn unpack_row(r: WRow, total_us: f64) -> TopRow {
    let (name, short) = r.n.unpack();
    TopRow {
        pct: r.p.unwrap_or_else(|| pct_of(r.t, total_us)),
        mean_us: r.m.unwrap_or_else(|| mean_of(r.t, r.c)),
        name,
        short,
        time_us: r.t,
        count: r.c,
        max_us: r.x.unwrap_or(r.t),
        op: r.o,
        bucket: r.b,
    }
}

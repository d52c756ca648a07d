//! The bounds check of a decoded link: sizes, counts, numbers and indices.

use super::common::*;
use super::state::*;
use super::wire::*;
use crate::analysis::taxonomy::Bucket as BucketId;
use crate::report::*;

/// The state's bounds, and with a report its indices.
/// Longest rules text a link may carry.
pub const MAX_RULES_BYTES: usize = 4096;

pub fn check_state(s: &ViewState, report: Option<&Report>) -> Result<(), String> {
    for t in [&s.kernels, &s.ops] {
        if t.query.chars().count() > MAX_QUERY || t.query.chars().any(char::is_control) {
            return Err("search text too long or with control characters".into());
        }
        if t.expanded.len() > MAX_ROWS {
            return Err("too many expanded rows".into());
        }
    }
    if s.buckets_open.len() > BucketId::ALL.len() {
        return Err("too many unfolded buckets".into());
    }
    if let Some(c) = &s.compare {
        if c.a.len() > MAX_RANKS || c.b.len() > MAX_RANKS {
            return Err("too many traces compared".into());
        }
        if c.a.iter().any(|i| c.b.contains(i)) {
            return Err("a trace compared with itself".into());
        }
        let sorted = |v: &[u32]| v.windows(2).all(|w| w[0] < w[1]);
        if !sorted(&c.a) || !sorted(&c.b) {
            return Err("a compared set out of order or repeated".into());
        }
    }
    if s.figures
        .fields()
        .iter()
        .any(|f| f.chars().count() > super::state::MAX_FIGURE || f.chars().any(char::is_control))
    {
        return Err("a peak or model figure too long or with control characters".into());
    }
    if s.rules.len() > MAX_RULES_BYTES {
        return Err(format!("bucket rules longer than {MAX_RULES_BYTES} bytes"));
    }
    if let Err(e) = crate::analysis::taxonomy::parse_rules(&s.rules) {
        return Err(format!("bucket rules that cannot be read ({e})"));
    }
    if let Some(r) = report {
        let n = r.traces.len() as u32;
        if s.trace >= n.max(1) {
            return Err(format!("trace {} selected of {n}", s.trace));
        }
        if let Some(c) = &s.compare {
            if c.a.iter().chain(&c.b).any(|&i| i >= n) {
                return Err("compared trace out of range".into());
            }
        }
        if let Some(t) = r.traces.get(s.trace as usize) {
            if s.kernels.expanded.iter().any(|&i| i as usize >= t.top_kernels.len())
                || s.ops.expanded.iter().any(|&i| i as usize >= t.top_ops.len())
            {
                return Err("an expanded row that does not exist".into());
            }
        }
    } else if s.trace as usize >= MAX_TRACES {
        return Err("trace index out of range".into());
    }
    Ok(())
}

struct Budget {
    rows: usize,
}

fn text(s: &str) -> Result<(), String> {
    if s.len() > MAX_STRING {
        return Err(format!("a text of {} bytes (at most {MAX_STRING})", s.len()));
    }
    if s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err("a text with control characters".into());
    }
    Ok(())
}

fn opt_text(s: &Option<String>) -> Result<(), String> {
    s.as_deref().map_or(Ok(()), text)
}

fn num(v: f64) -> Result<(), String> {
    if v.is_finite() && v.abs() <= MAX_TIME {
        Ok(())
    } else {
        Err(format!("a number out of range ({v})"))
    }
}

fn count(v: u64) -> Result<(), String> {
    if v <= MAX_COUNT {
        Ok(())
    } else {
        Err(format!("a count out of range ({v})"))
    }
}

fn rows(b: &mut Budget, n: usize) -> Result<(), String> {
    if n > MAX_ROWS {
        return Err(format!("a table of {n} rows (at most {MAX_ROWS})"));
    }
    b.rows += n;
    if b.rows > MAX_ROWS * 8 {
        return Err("too many rows in all".into());
    }
    Ok(())
}

/// FLOPs and bytes: finite, not negative, below any real trace's.
fn work(v: f64) -> Result<(), String> {
    if v.is_finite() && (0.0..=1e30).contains(&v) {
        Ok(())
    } else {
        Err(format!("a work figure out of range ({v})"))
    }
}

fn check_efficiency(e: &Efficiency) -> Result<(), String> {
    if e.kernels.len() > LINK_KERNELS
        || e.mfu.len() > 1
        || !e.buckets.is_empty()
        || !e.ops.is_empty()
        || e.coverage.known_us.len() > 3
    {
        return Err("efficiency figures beyond what a link carries".into());
    }
    let opt = |v: Option<f64>| v.map_or(Ok(()), num);
    if let Some(p) = &e.peaks {
        text(&p.device)?;
        text(&p.source)?;
        work(p.tbps)?;
        if p.tflops.len() > crate::vocab::Precision::ALL.len() {
            return Err("too many peaks".into());
        }
        p.tflops.iter().try_for_each(|x| work(x.1))?;
    }
    opt_text(&e.unknown_device)?;
    work(e.flops)?;
    work(e.bytes)?;
    work(e.analytic_factor)?;
    let c = &e.coverage;
    [c.unmodelled_us, c.unknown_us, c.graph_us, c.kernel_us, c.communication_us].into_iter().try_for_each(num)?;
    c.known_us.iter().try_for_each(|x| num(x.1))?;
    if !c.unmodelled_ops.is_empty() {
        return Err("efficiency figures beyond what a link carries".into());
    }
    count(c.ops_with_shapes)?;
    for k in &e.kernels {
        text(&k.name)?;
        text(&k.short)?;
        count(k.count)?;
        [k.time_us, k.tflops_per_s, k.tbps, k.recoverable_us].into_iter().try_for_each(num)?;
        [k.flops, k.bytes].into_iter().try_for_each(work)?;
        [k.intensity, k.pct_of_peak, k.pct_of_bandwidth].into_iter().try_for_each(opt)?;
    }
    for m in &e.mfu {
        text(&m.name)?;
        num(m.span_us)?;
        work(m.flops)?;
        [m.mfu_pct, m.analytic_mfu_pct].into_iter().try_for_each(opt)?;
    }
    if let Some(m) = e.model {
        work(m.params)?;
        work(m.tokens_per_step)?;
    }
    Ok(())
}

fn name(n: &WName) -> Result<(), String> {
    match n {
        WName::Same(n) => text(n),
        WName::Both(n, s) => text(n).and_then(|_| text(s)),
    }
}

pub fn check_report(r: &WReport) -> Result<(), String> {
    text(&r.v)?;
    if r.t.len() > MAX_TRACES || r.e.len() > MAX_TRACES {
        return Err(format!("more than {MAX_TRACES} traces"));
    }
    if r.k.len() > MAX_RANKS {
        return Err(format!("more than {MAX_RANKS} ranks"));
    }
    if r.t.is_empty() {
        return Err("no traces".into());
    }
    let mut budget = Budget { rows: 0 };
    for (f, m) in &r.e {
        text(f)?;
        text(m)?;
    }
    if !r.m.is_empty() && r.m.len() != r.k.len() {
        return Err("an MFU per rank that does not match the ranks".into());
    }
    r.m.iter().flatten().try_for_each(|&m| num(m))?;
    for k in &r.k {
        text(&k.0)?;
        for v in [k.2, k.3, k.4, k.5, k.6, k.7, k.8] {
            num(v)?;
        }
    }
    if let Some(j) = &r.j {
        check_job(j, r.k.len(), &mut budget)?;
    }
    for t in &r.t {
        if let Some(e) = &t.ef {
            check_efficiency(e)?;
        }
        t.cv.iter().flatten().try_for_each(|&v| num(v))?;
        text(&t.f)?;
        count(t.n)?;
        count(t.j)?;
        count(t.c)?;
        opt_text(&t.d.n)?;
        opt_text(&t.d.c)?;
        if t.d.k > MAX_ROWS {
            return Err("too many devices".into());
        }
        for v in t.u.iter().chain(&t.se).chain(&t.oc).chain(&t.d.m) {
            num(*v)?;
        }
        rows(&mut budget, t.b.len())?;
        for b in &t.b {
            opt_text(&b.n)?;
            opt_text(&b.r)?;
            num(b.t)?;
            num(b.p.unwrap_or(0.0))?;
            count(b.c)?;
            rows(&mut budget, b.m.len() + b.k.len())?;
            for (rule, t, c) in &b.m {
                text(rule)?;
                num(*t)?;
                count(*c)?;
            }
            for (n, t, c) in &b.k {
                name(n)?;
                num(*t)?;
                count(*c)?;
            }
        }
        let a = &t.a;
        opt_text(&a.l)?;
        opt_text(&a.f)?;
        num(a.t)?;
        num(a.a)?;
        rows(&mut budget, a.e.len() + a.r.len())?;
        for e in &a.e {
            name(&e.n)?;
            opt_text(&e.l)?;
            num(e.t)?;
            count(e.c)?;
        }
        for reason in &a.r {
            text(reason)?;
        }
        for table in [&t.tk, &t.to] {
            rows(&mut budget, table.len())?;
            for row in table {
                name(&row.n)?;
                opt_text(&row.o)?;
                for v in [row.t, row.p.unwrap_or(0.0), row.m.unwrap_or(0.0), row.x.unwrap_or(0.0)] {
                    num(v)?;
                }
                count(row.c)?;
            }
        }
        rows(&mut budget, t.st.len())?;
        for s in &t.st {
            text(&s.0)?;
            for v in s.1 {
                num(v)?;
            }
            count(s.2)?;
        }
        rows(&mut budget, t.h.len())?;
        for h in &t.h {
            text(&h.m)?;
            text(&h.f)?;
            if let Some(k) = h.k {
                num(k)?;
            }
            rows(&mut budget, h.e.len())?;
            for e in &h.e {
                text(e)?;
            }
        }
        rows(&mut budget, t.x.len())?;
        for d in &t.x {
            count(d.1)?;
            text(&d.2)?;
        }
    }
    Ok(())
}

fn check_job(j: &WJob, ranks: usize, budget: &mut Budget) -> Result<(), String> {
    if j.r.len() != ranks {
        return Err(format!("{} ranks in the job view, {ranks} rank rows", j.r.len()));
    }
    if j.n.len() > 16 {
        return Err("too many notes on the job".into());
    }
    for n in &j.n {
        text(n)?;
    }
    count(j.u)?;
    for WRankJob(compute, step, wait, caused, last, top) in &j.r {
        for v in [*compute, step.unwrap_or(0.0), *wait, *caused] {
            num(v)?;
        }
        count(*last)?;
        if top.len() > BucketId::ALL.len() {
            return Err("too many top buckets".into());
        }
        for (_, pct) in top {
            num(*pct)?;
        }
    }
    rows(budget, j.c.len())?;
    for WCollective(name, group, _, _, n, bytes, transfer, wait, skew, last) in &j.c {
        text(name)?;
        opt_text(group)?;
        if *n > ranks || *last >= ranks {
            return Err("a collective on ranks that do not exist".into());
        }
        if bytes.is_some_and(|b| b < 0 || b as u64 > MAX_COUNT) {
            return Err("a message size out of range".into());
        }
        for v in [*transfer, *wait, *skew] {
            num(v)?;
        }
    }
    Ok(())
}

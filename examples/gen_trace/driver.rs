//! Runs the generator: plans the steps for a size, chooses the depth, writes one trace and reports it.

use crate::*;

#[derive(Clone, Copy, PartialEq)]
pub enum Pass {
    Main,
    Bwd,
    Py,
    Gpu,
}

pub fn emit_step<W: Write>(em: &mut Emitter<W>, p: &Prog, out: &StepOut, pass: Pass) {
    match pass {
        Pass::Main => out.main.iter().for_each(|r| em.scope(p, r)),
        Pass::Bwd => out.bwd.iter().for_each(|r| em.scope(p, r)),
        Pass::Py => out.py.iter().for_each(|r| em.scope(p, r)),
        Pass::Gpu => out.gpu.iter().for_each(|g| em.gpu(p, g)),
    }
}

/// Bytes one step takes when it starts from state `st` (nothing is written).
pub fn measure(p: &Prog, cfg: &Cfg, st: &Sim, k: u64) -> (u64, Sim) {
    let mut s = st.clone();
    let mut out = StepOut::default();
    s.step(p, cfg, k, &mut out);
    let mut em = Emitter::new(io::sink());
    for pass in [Pass::Main, Pass::Bwd, Pass::Py, Pass::Gpu] {
        emit_step(&mut em, p, &out, pass);
    }
    em.gpu_step(p, out.num, out.gpu_first, out.gpu_last - out.gpu_first, out.step_ext);
    (em.bytes(), s)
}

/// Number of whole steps whose output comes closest to `size` bytes.
pub fn plan_steps(p: &Prog, cfg: &Cfg, size: u64) -> u64 {
    let fixed = header(cfg).len() as u64 + 6000;
    if size <= fixed {
        return 1;
    }
    let budget = size - fixed;
    let nearest = |per_step: u64| ((budget + per_step / 2) / per_step.max(1)).max(1);
    let s0 = Sim::new(t0(cfg));
    let (b0, s1) = measure(p, cfg, &s0, 0);
    let mut n = nearest(b0);
    for _ in 0..2 {
        if n <= 4 {
            break;
        }
        // ids grow (more digits) along the trace: sample steps across it
        let mut sum = 0;
        for q in 1..=3 {
            let k = n * q / 4;
            let st = Sim::extrapolate(&s0, &s1, k);
            sum += measure(p, cfg, &st, k).0;
        }
        n = nearest(sum / 3);
    }
    n
}

pub fn step_bytes(o: &Opts, rank: u32, world: u32, layers: u32) -> u64 {
    let cfg = Cfg::new(o, rank, world, layers);
    let p = build(&cfg);
    measure(&p, &cfg, &Sim::new(t0(&cfg)), 0).0
}

pub fn choose_layers(o: &Opts, rank: u32, world: u32) -> u32 {
    if let Some(l) = o.layers {
        return l;
    }
    let Some(size) = o.size else { return 12 };
    let (target_steps, max_layers) = match o.steps {
        Some(n) => (n, 96),
        None => (3, 12),
    };
    let per_step = size / target_steps;
    if o.steps.is_none() && per_step >= step_bytes(o, rank, world, 12) {
        return 12;
    }
    let b1 = step_bytes(o, rank, world, 1);
    let b2 = step_bytes(o, rank, world, 2);
    let per_layer = b2.saturating_sub(b1).max(1);
    let fixed = b1.saturating_sub(per_layer);
    let l = (per_step.saturating_sub(fixed) + per_layer / 2) / per_layer;
    (l as u32).clamp(1, max_layers)
}

pub struct Summary {
    pub bytes: u64,
    pub events: u64,
    pub steps: u64,
    pub layers: u32,
    pub secs: f64,
    pub path: String,
}

pub fn generate<W: Write>(o: &Opts, rank: u32, world: u32, w: W) -> io::Result<(Summary, W)> {
    let started = Instant::now();
    let layers = choose_layers(o, rank, world);
    let cfg = Cfg::new(o, rank, world, layers);
    let p = build(&cfg);
    let steps = match o.steps {
        Some(n) => n,
        None => plan_steps(&p, &cfg, o.size.unwrap_or(1)),
    };
    let mut em = Emitter::new(w);
    em.s(header(&cfg).as_bytes());
    let start = t0(&cfg);
    let mut out = StepOut::default();
    let mut gpu_steps: Vec<(u64, u64, u64, u64)> = Vec::new();
    let mut end = start;
    let mut idx_total = 0;
    match o.order {
        Order::Kineto => {
            for pass in [Pass::Main, Pass::Bwd, Pass::Py, Pass::Gpu] {
                if pass == Pass::Py {
                    emit_root_py(&mut em, &cfg, start, end, idx_total);
                }
                let mut sim = Sim::new(start);
                for k in 0..steps {
                    sim.step(&p, &cfg, k, &mut out);
                    emit_step(&mut em, &p, &out, pass);
                    if pass == Pass::Main {
                        gpu_steps.push((out.num, out.gpu_first, out.gpu_last - out.gpu_first, out.step_ext));
                    }
                    em.maybe_flush()?;
                }
                end = end.max(sim.t).max(sim.s_comp).max(sim.s_comm);
                idx_total = sim.idx;
            }
            for &(num, ts, dur, ext) in &gpu_steps {
                em.gpu_step(&p, num, ts, dur, ext);
                em.maybe_flush()?;
            }
            trailer(&mut em, &cfg, start, end, None);
        }
        Order::Step => {
            let mut sim = Sim::new(start);
            for k in 0..steps {
                sim.step(&p, &cfg, k, &mut out);
                for pass in [Pass::Main, Pass::Bwd, Pass::Py, Pass::Gpu] {
                    emit_step(&mut em, &p, &out, pass);
                }
                em.gpu_step(&p, out.num, out.gpu_first, out.gpu_last - out.gpu_first, out.step_ext);
                em.maybe_flush()?;
            }
            end = sim.t.max(sim.s_comp).max(sim.s_comm);
            trailer(&mut em, &cfg, start, end, Some(sim.idx));
        }
    }
    em.flush_buf()?;
    let s = Summary {
        bytes: em.bytes(),
        events: em.events,
        steps,
        layers,
        secs: started.elapsed().as_secs_f64(),
        path: String::new(),
    };
    Ok((s, em.w))
}

pub fn write_one(o: &Opts, rank: u32, world: u32, path: Option<&Path>) -> io::Result<Summary> {
    let (mut s, label) = match path {
        None => {
            let stdout = io::stdout();
            if stdout.is_terminal() {
                return Err(io::Error::other("refusing to write a trace to a terminal: give OUT or redirect stdout"));
            }
            let lock = BufWriter::with_capacity(1 << 20, stdout.lock());
            let s = if o.gzip {
                let enc = flate2::write::GzEncoder::new(lock, flate2::Compression::new(o.gzip_level));
                let (s, enc) = generate(o, rank, world, enc)?;
                enc.finish()?.flush()?;
                s
            } else {
                let (s, mut w) = generate(o, rank, world, lock)?;
                w.flush()?;
                s
            };
            (s, "<stdout>".to_string())
        }
        Some(p) => {
            let f = BufWriter::with_capacity(1 << 20, File::create(p)?);
            let s = if o.gzip {
                let enc = flate2::write::GzEncoder::new(f, flate2::Compression::new(o.gzip_level));
                let (s, enc) = generate(o, rank, world, enc)?;
                let mut f = enc.finish()?;
                f.flush()?;
                f.get_ref().sync_all().ok();
                s
            } else {
                let (s, mut w) = generate(o, rank, world, f)?;
                w.flush()?;
                s
            };
            (s, p.display().to_string())
        }
    };
    s.path = label;
    Ok(s)
}

pub fn report(o: &Opts, s: &Summary, path: Option<&Path>) {
    if o.quiet {
        return;
    }
    let on_disk = path.and_then(|p| std::fs::metadata(p).ok()).map(|m| m.len());
    let gz = match (o.gzip, on_disk) {
        (true, Some(n)) => format!(", {:.1} MB gzip ({:.1}x)", n as f64 / 1e6, s.bytes as f64 / n.max(1) as f64),
        _ => String::new(),
    };
    eprintln!(
        "gen_trace: {}: {:.1} MB JSON{gz}, {} events ({:.0} B/event), {} steps x {} layers, {:?} backend, {:.2} s ({:.0} MB/s)",
        s.path,
        s.bytes as f64 / 1e6,
        s.events,
        s.bytes as f64 / s.events.max(1) as f64,
        s.steps,
        s.layers,
        o.backend,
        s.secs,
        s.bytes as f64 / 1e6 / s.secs.max(1e-9)
    );
}

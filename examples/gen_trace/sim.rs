//! The simulation: times of every event of a step, and what carries from one step to the next.

use crate::*;

#[derive(Clone, Copy)]
pub struct SRec {
    pub tpl: u32,
    pub ts: u64,
    pub dur: u64,
    /// External id (ops, annotations) or Python id (python_function)
    pub id: u64,
    /// Ev Idx
    pub idx: u64,
    /// Python parent id (0 = null)
    pub parent: u64,
    /// step number for ProfilerStep#
    pub num: u64,
}

#[derive(Clone, Copy)]
pub struct GRec {
    pub rt: u32,
    pub ts: u64,
    pub dur: u64,
    pub ext: u64,
    pub corr: u64,
    /// activity template or u32::MAX
    pub act: u32,
    pub ats: u64,
    pub adur: u64,
    pub bytes: u64,
}

#[derive(Default)]
pub struct StepOut {
    pub main: Vec<SRec>,
    pub bwd: Vec<SRec>,
    pub py: Vec<SRec>,
    pub gpu: Vec<GRec>,
    pub num: u64,
    pub gpu_first: u64,
    pub gpu_last: u64,
    pub step_ext: u64,
}

impl StepOut {
    pub fn clear(&mut self) {
        self.main.clear();
        self.bwd.clear();
        self.py.clear();
        self.gpu.clear();
        self.gpu_first = u64::MAX;
        self.gpu_last = 0;
        self.step_ext = 0;
    }
    pub fn vec_mut(&mut self, kind: Kind, th: Th) -> &mut Vec<SRec> {
        match (kind, th) {
            (Kind::Py, _) => &mut self.py,
            (_, Th::Main) => &mut self.main,
            (_, Th::Bwd) => &mut self.bwd,
        }
    }
}

/// Everything that carries from one step to the next. All fields grow by (nearly) the
/// same amount every step, which is what `plan_steps` relies on.
#[derive(Clone, Debug)]
pub struct Sim {
    pub t: u64,
    pub s_comp: u64,
    pub s_comm: u64,
    pub comm_ready: u64,
    pub ext: u64,
    pub corr: u64,
    pub idx: u64,
    pub pyid: u64,
}

pub const FIRST_STEP: u64 = 5;
pub const ROOT_PY_ID: u64 = 1;

impl Sim {
    pub fn new(t0: u64) -> Sim {
        Sim { t: t0, s_comp: t0, s_comm: t0, comm_ready: t0, ext: 0, corr: 8192, idx: 0, pyid: ROOT_PY_ID }
    }

    /// state expected before step k, extrapolated from the first step (for size planning)
    pub fn extrapolate(a: &Sim, b: &Sim, k: u64) -> Sim {
        let f = |x: u64, y: u64| x + (y - x) * k;
        Sim {
            t: f(a.t, b.t),
            s_comp: f(a.s_comp, b.s_comp),
            s_comm: f(a.s_comm, b.s_comm),
            comm_ready: f(a.comm_ready, b.comm_ready),
            ext: f(a.ext, b.ext),
            corr: f(a.corr, b.corr),
            idx: f(a.idx, b.idx),
            pyid: f(a.pyid, b.pyid),
        }
    }

    pub fn step(&mut self, p: &Prog, cfg: &Cfg, k: u64, out: &mut StepOut) {
        out.clear();
        out.num = FIRST_STEP + k;
        let mut rng = Rng::new(mix(mix(cfg.seed, cfg.rank as u64 + 1), k));
        self.run(p, &p.step, out, &mut rng, 0, 0, ROOT_PY_ID);
        // the next step starts right after this one
        self.t += rng.gap();
    }

    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        p: &Prog,
        n: &Node,
        out: &mut StepOut,
        rng: &mut Rng,
        op_ext: u64,
        any_ext: u64,
        py_par: u64,
    ) {
        match n {
            Node::Gap(ns) => self.t += rng.cpu(*ns),
            Node::Scope { tpl, pre, post, kids } => {
                let t = &p.tpls[*tpl as usize];
                let (kind, th) = (t.kind, t.th);
                self.t += rng.gap();
                let ts = self.t;
                let idx = self.idx;
                self.idx += 1;
                let (id, parent) = if kind == Kind::Py {
                    self.pyid += 1;
                    (self.pyid, py_par)
                } else {
                    self.ext += 1;
                    (self.ext, 0)
                };
                if kind == Kind::Step {
                    out.step_ext = id;
                }
                let num = out.num;
                let v = out.vec_mut(kind, th);
                v.push(SRec { tpl: *tpl, ts, dur: 0, id, idx, parent, num });
                let pos = v.len() - 1;
                self.t += rng.cpu(*pre);
                let (oe, ae, pp) = match kind {
                    Kind::Op => (id, id, py_par),
                    Kind::Py => (op_ext, any_ext, id),
                    _ => (op_ext, id, py_par),
                };
                for kid in kids {
                    self.run(p, kid, out, rng, oe, ae, pp);
                }
                self.t += rng.cpu(*post);
                out.vec_mut(kind, th)[pos].dur = self.t - ts;
            }
            Node::Launch { rt, act, comm, cpu, gpu, bytes } => {
                self.t += rng.gap();
                let ts = self.t;
                let dur = rng.cpu(*cpu);
                self.t += dur;
                self.corr += 1;
                let ready = ts + dur + rng.lat();
                let adur = rng.gpu(*gpu);
                let ats = if *comm {
                    let s = (self.s_comm + rng.kgap()).max(ready).max(self.comm_ready);
                    self.s_comm = s + adur;
                    s
                } else {
                    let s = (self.s_comp + rng.kgap()).max(ready);
                    self.s_comp = s + adur;
                    s
                };
                out.gpu_first = out.gpu_first.min(ats);
                out.gpu_last = out.gpu_last.max(ats + adur);
                let ext = if op_ext != 0 { op_ext } else { any_ext };
                out.gpu.push(GRec { rt: *rt, ts, dur, ext, corr: self.corr, act: *act, ats, adur, bytes: *bytes });
            }
            Node::Call { rt, cpu, eff } => {
                self.t += rng.gap();
                let ts = self.t;
                let mut dur = rng.cpu(*cpu);
                match eff {
                    Eff::None => {}
                    Eff::CommWaitsCompute => self.comm_ready = self.s_comp,
                    Eff::ComputeWaitsComm => self.s_comp = self.s_comp.max(self.s_comm),
                    Eff::Sync => {
                        let done = self.s_comp.max(self.s_comm);
                        if done + 1000 > ts + dur {
                            dur = done - ts + 1000 + rng.next() % 2000;
                        }
                    }
                }
                self.t = ts + dur;
                self.corr += 1;
                let ext = if op_ext != 0 { op_ext } else { any_ext };
                out.gpu.push(GRec { rt: *rt, ts, dur, ext, corr: self.corr, act: u32::MAX, ats: 0, adur: 0, bytes: 0 });
            }
        }
    }
}

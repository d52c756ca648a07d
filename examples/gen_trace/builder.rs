//! Builds the step program: interned event templates and the CPU op, runtime and GPU activity nodes.

use crate::*;

pub const COMPUTE_STREAM: u32 = 7;
pub const COMM_STREAM: u32 = 20;

pub type TplKey = (Kind, Th, u32, String, String);

pub struct Bld<'c> {
    pub cfg: &'c Cfg,
    pub tpls: RefCell<Vec<Tpl>>,
    pub map: RefCell<HashMap<TplKey, u32>>,
    pub th: Cell<Th>,
}

pub fn us(x: f64) -> u64 {
    (x * 1000.0) as u64
}

/// `[a, b, c]` list of strings
pub fn slist(items: &[&str]) -> String {
    let v: Vec<String> = items.iter().map(|s| format!("\"{s}\"")).collect();
    format!("[{}]", v.join(", "))
}

/// `[[8, 2048], []]` list of shapes given as "8,2048" / ""
pub fn dlist(items: &[&str]) -> String {
    let v: Vec<String> = items
        .iter()
        .map(|s| {
            if s.is_empty() {
                "[]".to_string()
            } else {
                format!("[{}]", s.split(',').map(|x| x.trim()).collect::<Vec<_>>().join(", "))
            }
        })
        .collect();
    format!("[{}]", v.join(", "))
}

impl<'c> Bld<'c> {
    pub fn new(cfg: &'c Cfg) -> Self {
        Bld { cfg, tpls: RefCell::new(Vec::new()), map: RefCell::new(HashMap::new()), th: Cell::new(Th::Main) }
    }

    pub fn tid(&self, th: Th) -> u64 {
        match th {
            Th::Main => self.cfg.tid_main,
            Th::Bwd => self.cfg.tid_bwd,
        }
    }

    pub fn intern(
        &self,
        kind: Kind,
        th: Th,
        stream: u32,
        name: &str,
        extra: &str,
        make: impl FnOnce(&Self) -> Tpl,
    ) -> u32 {
        let key = (kind, th, stream, name.to_string(), extra.to_string());
        if let Some(&id) = self.map.borrow().get(&key) {
            return id;
        }
        assert!(!name.contains('"') && !name.contains('\\'), "name needs escaping: {name}");
        let t = make(self);
        let mut tpls = self.tpls.borrow_mut();
        let id = tpls.len() as u32;
        tpls.push(t);
        self.map.borrow_mut().insert(key, id);
        id
    }

    /// record_shapes args: `, "Concrete Inputs": [...], "Input type": [...], "Input Strides": [...], "Input Dims": [...]`
    pub fn sh(&self, conc: &[&str], types: &[&str], strides: &[&str], dims: &[&str]) -> String {
        if !self.cfg.shapes {
            return String::new();
        }
        format!(
            ", \"Concrete Inputs\": {}, \"Input type\": {}, \"Input Strides\": {}, \"Input Dims\": {}",
            slist(conc),
            slist(types),
            dlist(strides),
            dlist(dims)
        )
    }

    pub fn cpu_head(&self, cat: &str, name: &str, th: Th) -> Vec<u8> {
        format!(
            "  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {}, \"tid\": {},\n    \"ts\": ",
            self.cfg.pid,
            self.tid(th)
        )
        .into_bytes()
    }

    pub fn scope_tpl(&self, kind: Kind, name: &str, extra: &str) -> u32 {
        let th = self.th.get();
        self.intern(kind, th, 0, name, extra, |b| {
            let cat = match kind {
                Kind::Op => "cpu_op",
                Kind::Py => "python_function",
                _ => "user_annotation",
            };
            Tpl { kind, th, a: b.cpu_head(cat, name, th), b: extra.as_bytes().to_vec(), c: vec![], d: vec![] }
        })
    }

    pub fn op_x(&self, name: &str, extra: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        let tpl = self.scope_tpl(Kind::Op, name, extra);
        Node::Scope { tpl, pre: us(pre), post: us(post), kids }
    }

    /// cpu_op without shapes args
    pub fn op(&self, name: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        self.op_x(name, "", pre, post, kids)
    }

    pub fn ann(&self, name: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        let tpl = self.scope_tpl(Kind::Annot, name, "");
        Node::Scope { tpl, pre: us(pre), post: us(post), kids }
    }

    pub fn py(&self, name: &str, pre: f64, post: f64, kids: Vec<Node>) -> Node {
        let tpl = self.scope_tpl(Kind::Py, name, "");
        Node::Scope { tpl, pre: us(pre), post: us(post), kids }
    }

    pub fn step_tpl(&self) -> u32 {
        let th = self.th.get();
        self.intern(Kind::Step, th, 0, "ProfilerStep#", "", |b| Tpl {
            kind: Kind::Step,
            th,
            a: b"  {\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#".to_vec(),
            b: format!("\", \"pid\": {}, \"tid\": {},\n    \"ts\": ", b.cfg.pid, b.tid(th)).into_bytes(),
            c: vec![],
            d: vec![],
        })
    }

    pub fn gpu_step_tpl(&self) -> u32 {
        self.intern(Kind::Step, Th::Main, COMPUTE_STREAM, "gpu:ProfilerStep#", "", |b| Tpl {
            kind: Kind::Step,
            th: Th::Main,
            a: b"  {\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#".to_vec(),
            b: format!("\", \"pid\": {}, \"tid\": {},\n    \"ts\": ", b.cfg.device, COMPUTE_STREAM).into_bytes(),
            c: vec![],
            d: vec![],
        })
    }

    pub fn rt_tpl(&self, name: &str, cbid: u32) -> u32 {
        let th = self.th.get();
        self.intern(Kind::Rt, th, cbid, name, "", |b| Tpl {
            kind: Kind::Rt,
            th,
            a: b.cpu_head("cuda_runtime", name, th),
            b: format!(",      \"cbid\": {cbid}, \"correlation\": ").into_bytes(),
            c: format!(", \"pid\": {}, \"tid\": {}, \"ts\": ", b.cfg.pid, b.tid(th)).into_bytes(),
            d: vec![],
        })
    }

    pub fn gpu_head(&self, cat: &str, name: &str, stream: u32) -> Vec<u8> {
        format!(
            "  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {}, \"tid\": {stream},\n    \"ts\": ",
            self.cfg.device
        )
        .into_bytes()
    }

    pub fn act_tpl(&self, kind: Kind, name: &str, stream: u32, tail: &str) -> u32 {
        self.intern(kind, Th::Main, stream, name, tail, |b| {
            let cat = match kind {
                Kind::Kernel => "kernel",
                Kind::Memcpy => "gpu_memcpy",
                _ => "gpu_memset",
            };
            let dev = b.cfg.device;
            let mid = if kind == Kind::Kernel {
                format!(",      \"queued\": 0, \"device\": {dev}, \"context\": 1,      \"stream\": {stream}, \"correlation\": ")
            } else {
                format!(",      \"device\": {dev}, \"context\": 1,      \"stream\": {stream}, \"correlation\": ")
            };
            Tpl {
                kind,
                th: Th::Main,
                a: b.gpu_head(cat, name, stream),
                b: mid.into_bytes(),
                c: format!("{tail}\n    }}\n  }},\n").into_bytes(),
                d: format!(", \"pid\": {dev}, \"tid\": {stream}, \"ts\": ").into_bytes(),
            }
        })
    }

    pub fn launch(&self, k: &K, gpu: f64) -> Node {
        let rt = if k.exc { self.rt_tpl("cudaLaunchKernelExC", 430) } else { self.rt_tpl("cudaLaunchKernel", 211) };
        let tail = kernel_tail(k);
        let act = self.act_tpl(Kind::Kernel, &k.name, COMPUTE_STREAM, &tail);
        Node::Launch { rt, act, comm: false, cpu: us(if k.exc { 6.5 } else { 4.5 }), gpu: us(gpu), bytes: 0 }
    }

    pub fn comm_launch(&self, k: &K, extra: &str, gpu: f64) -> Node {
        let rt = self.rt_tpl("cudaLaunchKernel", 211);
        let tail = kernel_tail(k) + extra;
        let act = self.act_tpl(Kind::Kernel, &k.name, COMM_STREAM, &tail);
        Node::Launch { rt, act, comm: true, cpu: us(9.0), gpu: us(gpu), bytes: 0 }
    }

    pub fn memcpy(&self, name: &str, bytes: u64, gpu: f64) -> Node {
        let rt = self.rt_tpl("cudaMemcpyAsync", 41);
        let act = self.act_tpl(Kind::Memcpy, name, COMPUTE_STREAM, "");
        Node::Launch { rt, act, comm: false, cpu: us(7.0), gpu: us(gpu), bytes }
    }

    pub fn memset(&self, bytes: u64, gpu: f64) -> Node {
        let rt = self.rt_tpl("cudaMemsetAsync", 51);
        let act = self.act_tpl(Kind::Memset, "Memset (Device)", COMPUTE_STREAM, "");
        Node::Launch { rt, act, comm: false, cpu: us(4.0), gpu: us(gpu), bytes }
    }

    pub fn call(&self, name: &str, cbid: u32, cpu: f64, eff: Eff) -> Node {
        let rt = self.rt_tpl(name, cbid);
        Node::Call { rt, cpu: us(cpu), eff }
    }
}

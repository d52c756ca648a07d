//! The model's ops: the GPT-style training step (forward in `forward`, backward in `backward`), the optimizer, and the program built from them.

mod backward;
mod forward;

use crate::*;

/// Shapes (as "8,2048,2048") and strides used in record_shapes args.
pub fn dims3(a: u64, b: u64, c: u64) -> String {
    format!("{a},{b},{c}")
}

pub struct Model<'b, 'c> {
    pub b: &'b Bld<'c>,
    pub k: Kernels,
}

impl<'b, 'c> Model<'b, 'c> {
    pub fn cfg(&self) -> &Cfg {
        self.b.cfg
    }

    pub fn as_strided(&self) -> Node {
        self.b.op("aten::as_strided", 1.2, 0.6, vec![])
    }

    pub fn view(&self, from: &str) -> Node {
        let e = self.b.sh(&["", ""], &[BF16, "ScalarList"], &[&contig(from), ""], &[from, ""]);
        self.b.op_x("aten::view", &e, 2.0, 1.0, vec![])
    }

    pub fn transpose(&self, from: &str, strides: &str) -> Node {
        let e = self.b.sh(&["", "1", "2"], &[BF16, "Scalar", "Scalar"], &[strides, "", ""], &[from, "", ""]);
        let kids = vec![self.as_strided()];
        self.b.op_x("aten::transpose", &e, 3.0, 1.0, kids)
    }

    pub fn t(&self, rows: u64, cols: u64) -> Node {
        let d = format!("{rows},{cols}");
        let e = self.b.sh(&[""], &[BF16], &[&format!("{cols},1")], &[&d]);
        let tr = self.transpose(&d, &format!("{cols},1"));
        self.b.op_x("aten::t", &e, 2.5, 1.0, vec![tr])
    }

    pub fn empty(&self) -> Node {
        self.b.op("aten::empty", 2.0, 1.0, vec![])
    }

    /// aten::linear -> aten::t, aten::view, aten::addmm (GEMM), aten::view
    pub fn linear(&self, inf: u64, outf: u64, gemm_us: f64, wide: bool) -> Node {
        let x = dims3(BATCH, SEQ, inf);
        let e = self.b.sh(
            &["", "", ""],
            &[BF16, BF16, BF16],
            &[&contig(&x), &format!("{inf},1"), "1"],
            &[&x, &format!("{outf},{inf}"), &outf.to_string()],
        );
        let ea = self.b.sh(
            &["", "", "", "1", "1"],
            &[BF16, BF16, BF16, "Scalar", "Scalar"],
            &["1", &format!("{inf},1"), &format!("1,{inf}"), "", ""],
            &[&outf.to_string(), &format!("{TOK},{inf}"), &format!("{inf},{outf}"), "", ""],
        );
        let kern = if wide { self.k.gemm_fwd_wide.clone() } else { self.k.gemm_fwd.clone() };
        let l = self.b.launch(&kern, gemm_us);
        let kids = vec![
            self.t(outf, inf),
            self.view(&x),
            self.b.op_x("aten::addmm", &ea, 9.0, 3.0, vec![l]),
            self.view(&format!("{TOK},{outf}")),
        ];
        self.b.op_x("aten::linear", &e, 3.0, 2.0, kids)
    }

    pub fn layer_norm(&self) -> Node {
        let x = dims3(BATCH, SEQ, DM);
        let e = self.b.sh(
            &["", &format!("[{DM}]"), "", "", "1.0000000000000001e-05", "True"],
            &[BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"],
            &[&contig(&x), "", "1", "1", "", ""],
            &[&x, "", &DM.to_string(), &DM.to_string(), "", ""],
        );
        let en = self.b.sh(
            &["", &format!("[{DM}]"), "", "", "1.0000000000000001e-05"],
            &[BF16, "ScalarList", BF16, BF16, "Scalar"],
            &[&contig(&x), "", "1", "1", ""],
            &[&x, "", &DM.to_string(), &DM.to_string(), ""],
        );
        let kl = self.k.ln_fwd.clone();
        let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&kl, 45.0)];
        let nat = self.b.op_x("aten::native_layer_norm", &en, 5.0, 2.0, kids);
        self.b.op_x("aten::layer_norm", &e, 3.0, 1.5, vec![nat])
    }

    pub fn unary(&self, name: &str, kern: &K, gpu: f64, dims: &str, dtype: &str) -> Node {
        let e = self.b.sh(&[""], &[dtype], &[&contig(dims)], &[dims]);
        let l = self.b.launch(kern, gpu);
        let kids = vec![self.empty(), l];
        self.b.op_x(name, &e, 5.0, 2.0, kids)
    }

    pub fn binary(&self, name: &str, kern: &K, gpu: f64, dims: &str, dtype: &str) -> Node {
        let e = self.b.sh(&["", ""], &[dtype, dtype], &[&contig(dims), &contig(dims)], &[dims, dims]);
        let l = self.b.launch(kern, gpu);
        self.b.op_x(name, &e, 6.0, 2.0, vec![l])
    }

    pub fn dropout(&self, dims: &str) -> Node {
        let e = self.b.sh(
            &["", "0.10000000000000001", "True"],
            &[BF16, "Scalar", "Scalar"],
            &[&contig(dims), "", ""],
            &[dims, "", ""],
        );
        let kd = self.k.dropout.clone();
        let l = self.b.launch(&kd, 55.0);
        let kids = vec![self.empty(), self.empty(), l];
        let nat = self.b.op_x("aten::native_dropout", &e, 5.0, 2.0, kids);
        self.b.op_x("aten::dropout", &e, 2.5, 1.0, vec![nat])
    }

    /// aten::to -> aten::_to_copy -> aten::empty_strided, aten::copy_ -> (kernel)
    pub fn to_copy(&self, dims: &str, from: &str, to: &str, inner: Node) -> Node {
        let e = self.b.sh(
            &["", to, "False", "False", ""],
            &[from, "ScalarType", "Scalar", "Scalar", ""],
            &[&contig(dims), "", "", "", ""],
            &[dims, "", "", "", ""],
        );
        let ec = self.b.sh(
            &["", "", "False"],
            &[to, from, "Scalar"],
            &[&contig(dims), &contig(dims), ""],
            &[dims, dims, ""],
        );
        let copy = self.b.op_x("aten::copy_", &ec, 6.0, 2.0, vec![inner]);
        let kids = vec![self.b.op("aten::empty_strided", 2.5, 1.0, vec![]), copy];
        let tc = self.b.op_x("aten::_to_copy", &e, 4.0, 1.5, kids);
        self.b.op_x("aten::to", &e, 2.0, 1.0, vec![tc])
    }
}

impl<'b, 'c> Model<'b, 'c> {
    pub fn optimizer(&self) -> Node {
        let layers = self.cfg().layers as u64;
        let nparams = layers * if self.cfg().mlp == Mlp::SwiGlu { 14 } else { 12 } + 6;
        let launches = (nparams / 24 + 1).max(1);
        let mut kids = Vec::new();
        if self.cfg().world > 1 {
            // DDP: the optimizer's kernels wait for the last all-reduce
            kids.push(self.b.call("cudaStreamWaitEvent", 147, 1.7, Eff::ComputeWaitsComm));
        }
        let tl = self.b.sh(&["", ""], &["TensorList", "Scalar"], &["", ""], &["", ""]);
        kids.push(self.b.op_x("aten::_foreach_add_", &tl, 40.0 + nparams as f64 * 0.6, 3.0, vec![]));
        let mta = self.k.mta.clone();
        for (name, kern) in mta.iter() {
            let per = (layers as f64 * 210.0 + 120.0) / launches as f64;
            let mut inner = Vec::new();
            if *name == "aten::_foreach_sqrt" {
                for _ in 0..(nparams / 8).max(1) {
                    inner.push(self.empty());
                }
            }
            for _ in 0..launches {
                inner.push(self.b.launch(kern, per));
            }
            kids.push(self.b.op_x(name, &tl, 12.0 + nparams as f64 * 0.3, 4.0, inner));
        }
        let inner = self.b.py("torch/optim/adamw.py(472): _multi_tensor_adamw", 30.0, 8.0, kids);
        let inner = self.b.py("torch/optim/adamw.py(209): step", 20.0, 5.0, vec![inner]);
        let ann = self.b.ann("Optimizer.step#AdamW.step", 8.0, 4.0, vec![inner]);
        self.b.py("torch/optim/optimizer.py(485): wrapper", 10.0, 4.0, vec![ann])
    }
}

pub fn contig(dims: &str) -> String {
    // row-major strides of a shape given as "a,b,c"
    if dims.is_empty() {
        return String::new();
    }
    let d: Vec<u64> = dims.split(',').map(|x| x.trim().parse().unwrap_or(1)).collect();
    let mut s = vec![1u64; d.len()];
    for i in (0..d.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * d[i + 1];
    }
    s.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",")
}

pub fn build(cfg: &Cfg) -> Prog {
    let b = Bld::new(cfg);
    let gpu_step = b.gpu_step_tpl();
    let k = kernels();
    let m = Model { b: &b, k };
    let x = format!("{BATCH},{SEQ}");

    // data loading + host-to-device copies
    let loader = {
        let gap = Node::Gap(us(2400.0 * m.cfg().loader_factor));
        let ann = m.b.ann("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 30.0, 10.0, vec![gap]);
        m.b.py("torch/utils/data/dataloader.py(733): __next__", 6.0, 4.0, vec![ann])
    };
    let h2d = |m: &Model| {
        let mc = m.b.memcpy("Memcpy HtoD (Pinned -> Device)", BATCH * SEQ * 8, 7.5);
        let e = m.b.sh(
            &["", "", "True", "False", ""],
            &["long int", "Device", "Scalar", "Scalar", ""],
            &[&format!("{SEQ},1"), "", "", "", ""],
            &[&x, "", "", "", ""],
        );
        let copy = m.b.op_x("aten::copy_", &e, 6.0, 2.0, vec![mc]);
        let tc = m.b.op_x("aten::_to_copy", &e, 4.0, 1.5, vec![m.b.op("aten::empty_strided", 3.0, 1.0, vec![]), copy]);
        m.b.op_x("aten::to", &e, 2.0, 1.0, vec![tc])
    };
    let mut train = Vec::new();
    let nparams = m.cfg().layers as f64 * 12.0 + 6.0;
    train.push(m.b.ann("Optimizer.zero_grad#AdamW.zero_grad", 25.0 + nparams * 2.0, 5.0, vec![]));
    train.extend(m.forward());
    // backward: the main thread waits in Python while the autograd thread runs
    m.b.th.set(Th::Bwd);
    let bwd = m.backward();
    m.b.th.set(Th::Main);
    let eng = m.b.py("torch/autograd/graph.py(824): _engine_run_backward", 15.0, 10.0, bwd);
    let ab = m.b.py("torch/autograd/__init__.py(353): backward", 12.0, 3.0, vec![eng]);
    train.push(m.b.py("torch/_tensor.py(648): backward", 8.0, 3.0, vec![ab]));
    train.push(m.optimizer());
    let train_py = m.b.py("train.py(131): train_step", 10.0, 6.0, train);

    // loss.item(): device-to-host copy, then the host waits for the device
    let d2h = m.b.memcpy("Memcpy DtoH (Device -> Pageable)", 4, 1.6);
    let sync = m.b.call("cudaStreamSynchronize", 131, 3.0, Eff::Sync);
    let lsd = m.b.op("aten::_local_scalar_dense", 5.0, 2.0, vec![d2h, sync]);
    let item = m.b.op("aten::item", 3.0, 1.0, vec![lsd]);
    let prof = {
        let g = Node::Gap(us(20.0));
        m.b.py("torch/profiler/profiler.py(794): step", 5.0, 3.0, vec![g])
    };

    let kids = vec![loader, h2d(&m), h2d(&m), train_py, item, prof];
    let step_tpl = m.b.step_tpl();
    let step = Node::Scope { tpl: step_tpl, pre: us(15.0), post: us(8.0), kids };
    drop(m);
    Prog { tpls: b.tpls.into_inner(), step, gpu_step }
}

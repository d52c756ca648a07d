//! The backward pass on the autograd thread, with one DDP all-reduce per block.

use crate::*;

impl<'b, 'c> Model<'b, 'c> {
    pub fn eval_fn(&self, name: &str, inner: Vec<Node>) -> Node {
        let n = self.b.op(name, 3.0, 2.0, inner);
        self.b.op(&format!("autograd::engine::evaluate_function: {name}"), 4.0, 3.0, vec![n])
    }

    pub fn accumulate_grad(&self) -> Node {
        let inner =
            self.b.op("torch::autograd::AccumulateGrad", 3.0, 2.0, vec![self.b.op("aten::detach", 1.5, 0.8, vec![])]);
        self.b.op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", 2.0, 2.0, vec![inner])
    }

    pub fn mm(&self, kern: &K, gpu: f64, a: &str, b: &str) -> Node {
        let e = self.b.sh(&["", ""], &[BF16, BF16], &[&contig(a), &contig(b)], &[a, b]);
        let l = self.b.launch(kern, gpu);
        self.b.op_x("aten::mm", &e, 8.0, 2.0, vec![l])
    }

    pub fn addmm_bwd(&self, inf: u64, outf: u64, gemm_us: f64, bias: bool) -> Vec<Node> {
        let (kn, kt, kr) = (self.k.gemm_bwd_nn.clone(), self.k.gemm_bwd_nt.clone(), self.k.reduce_sum.clone());
        let g = format!("{TOK},{outf}");
        let w = format!("{outf},{inf}");
        let x = format!("{TOK},{inf}");
        let mut inner = vec![
            self.t(inf, outf),
            self.mm(&kn, gemm_us, &g, &w),
            self.t(TOK, inf),
            self.mm(&kt, gemm_us, &format!("{outf},{TOK}"), &x),
        ];
        if bias {
            let e = self.b.sh(
                &["", "[0]", "True", ""],
                &[BF16, "ScalarList", "Scalar", ""],
                &[&contig(&g), "", "", ""],
                &[&g, "", "", ""],
            );
            let l = self.b.launch(&kr, (outf as f64 / 2048.0) * 14.0 + 8.0);
            inner.push(self.b.op_x("aten::sum", &e, 8.0, 2.0, vec![l]));
        }
        let name = if bias { "AddmmBackward0" } else { "MmBackward0" };
        vec![
            self.eval_fn("UnsafeViewBackward0", vec![self.b.op("aten::reshape", 2.0, 1.0, vec![self.view(&g)])]),
            self.eval_fn(name, inner),
            self.eval_fn("TBackward0", vec![self.t(inf, outf)]),
        ]
    }

    pub fn layer_norm_bwd(&self) -> Node {
        let (ki, kg) = (self.k.ln_bwd_in.clone(), self.k.ln_bwd_gamma.clone());
        let x = dims3(BATCH, SEQ, DM);
        let e = self.b.sh(
            &["", "", &format!("[{DM}]"), "", "", "", "", "[True, True, True]"],
            &[BF16, BF16, "ScalarList", "float", "float", BF16, BF16, "ScalarList"],
            &[&contig(&x), &contig(&x), "", "", "", "1", "1", ""],
            &[
                &x,
                &x,
                "",
                &format!("{BATCH},{SEQ},1"),
                &format!("{BATCH},{SEQ},1"),
                &DM.to_string(),
                &DM.to_string(),
                "",
            ],
        );
        let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&ki, 68.0), self.b.launch(&kg, 38.0)];
        let n = self.b.op_x("aten::native_layer_norm_backward", &e, 8.0, 3.0, kids);
        self.eval_fn("NativeLayerNormBackward0", vec![n])
    }

    pub fn dropout_bwd(&self) -> Node {
        let kd = self.k.dropout_bwd.clone();
        let x = dims3(BATCH, SEQ, DM);
        let e = self.b.sh(
            &["", "", "1.1111111111111112"],
            &[BF16, "bool", "Scalar"],
            &[&contig(&x), &contig(&x), ""],
            &[&x, &x, ""],
        );
        let l = self.b.launch(&kd, 52.0);
        let n = self.b.op_x("aten::native_dropout_backward", &e, 6.0, 2.0, vec![self.empty(), l]);
        self.eval_fn("NativeDropoutBackward0", vec![n])
    }

    pub fn sdpa_bwd(&self) -> Vec<Node> {
        let q = format!("{BATCH},{NH},{SEQ},{HD}");
        let qs = format!("{},{},{},1", SEQ * DM, HD, DM);
        let e4 = |b: &Bld, n: usize, dt: &str| {
            let conc = vec![""; n];
            let types = vec![dt; n];
            let strides = vec![qs.as_str(); n];
            let dims = vec![q.as_str(); n];
            b.sh(&conc, &types, &strides, &dims)
        };
        match self.cfg().backend {
            Backend::Flash => {
                let (k1, k2, k3, kf) = (
                    self.k.flash_bwd_dot.clone(),
                    self.k.flash_bwd.clone(),
                    self.k.flash_bwd_convert.clone(),
                    self.k.fill.clone(),
                );
                let e = e4(self.b, 6, BF16);
                let fill = self.b.launch(&kf, 28.0);
                let zeros = self.b.op(
                    "aten::zeros",
                    3.0,
                    1.0,
                    vec![
                        self.empty(),
                        self.b.op("aten::zero_", 2.0, 1.0, vec![self.b.op("aten::fill_", 4.0, 1.0, vec![fill])]),
                    ],
                );
                let kids = vec![
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.empty(),
                    zeros,
                    self.b.launch(&k1, 32.0),
                    self.b.launch(&k2, 1120.0),
                    self.b.launch(&k3, 24.0),
                ];
                let fb = self.b.op_x("aten::_flash_attention_backward", &e, 10.0, 3.0, kids);
                let kids = vec![
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    fb,
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                ];
                let sb = self.b.op_x("aten::_scaled_dot_product_flash_attention_backward", &e, 5.0, 2.0, kids);
                vec![self.eval_fn("ScaledDotProductFlashAttentionBackward0", vec![sb])]
            }
            Backend::Efficient => {
                let kb = self.k.eff_bwd.clone();
                let e = e4(self.b, 6, BF16);
                let kids = vec![
                    self.empty(),
                    self.empty(),
                    self.empty(),
                    self.empty(),
                    self.b.memset(BATCH * NH * SEQ * 4, 3.5),
                    self.b.launch(&kb, 1650.0),
                ];
                let fb = self.b.op_x("aten::_efficient_attention_backward", &e, 12.0, 3.0, kids);
                let kids = vec![
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    fb,
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                    self.transpose(&q, &qs),
                ];
                let sb = self.b.op_x("aten::_scaled_dot_product_efficient_attention_backward", &e, 5.0, 2.0, kids);
                vec![self.eval_fn("ScaledDotProductEfficientAttentionBackward0", vec![sb])]
            }
            Backend::Cudnn => {
                let kb = self.k.cudnn_bwd.clone();
                let e = e4(self.b, 6, BF16);
                let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&kb, 950.0)];
                let sb = self.b.op_x("aten::_scaled_dot_product_cudnn_attention_backward", &e, 14.0, 3.0, kids);
                vec![self.eval_fn("ScaledDotProductCudnnAttentionBackward0", vec![sb])]
            }
            Backend::Math => {
                let (kg, ks, km, kc) =
                    (self.k.gemm_f32.clone(), self.k.softmax_bwd.clone(), self.k.mul_f32.clone(), self.k.copy.clone());
                let bs = format!("{},{SEQ},{SEQ}", BATCH * NH);
                let s = format!("{BATCH},{NH},{SEQ},{SEQ}");
                let eb = self.b.sh(&["", ""], &["float", "float"], &[&contig(&bs), &contig(&bs)], &[&bs, &bs]);
                let mut v = Vec::new();
                v.push(
                    self.eval_fn("ToCopyBackward0", vec![self.to_copy(&q, "float", "15", self.b.launch(&kc, 55.0))]),
                );
                for name in ["BmmBackward0", "SoftmaxBackward0", "AddBackward0", "BmmBackward0", "MulBackward0"] {
                    let inner = match name {
                        "BmmBackward0" => {
                            let l1 = self.b.launch(&kg, 410.0);
                            let l2 = self.b.launch(&kg, 410.0);
                            vec![
                                self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l1]),
                                self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l2]),
                            ]
                        }
                        "SoftmaxBackward0" => {
                            let l = self.b.launch(&ks, 640.0);
                            let esm = self.b.sh(
                                &["", "", "-1", "6"],
                                &["float", "float", "Scalar", "ScalarType"],
                                &[&contig(&s), &contig(&s), "", ""],
                                &[&s, &s, "", ""],
                            );
                            vec![self.b.op_x("aten::_softmax_backward_data", &esm, 6.0, 2.0, vec![self.empty(), l])]
                        }
                        "MulBackward0" => vec![self.binary("aten::mul", &km, 70.0, &q, "float")],
                        _ => vec![],
                    };
                    v.push(self.eval_fn(name, inner));
                }
                for _ in 0..3 {
                    let l = self.b.launch(&kc, 55.0);
                    let tc = self.to_copy(&q, "float", "15", l);
                    v.push(self.eval_fn("ToCopyBackward0", vec![tc]));
                }
                v
            }
        }
    }

    /// DDP bucket all-reduce issued from the autograd thread (grad hook).
    pub fn allreduce(&self, nelems: u64) -> Node {
        let w = self.cfg().world;
        let ranks: Vec<String> = (0..w).map(|r| r.to_string()).collect();
        let ranks = format!("[{}]", ranks.join(", "));
        let coll = format!(
            ", \"Collective name\": \"allreduce\", \"In msg nelems\": {nelems}, \"Out msg nelems\": {nelems}, \"Group size\": {w}, \"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", \"Process Group Ranks\": \"{ranks}\""
        );
        let rpc_args = format!(
            ", \"Process Group Name\": \"0\", \"Global rank stride\": 1, \"Out msg nelems\": {nelems}, \"Process Group Ranks\": \"{ranks}\", \"Group size\": {w}, \"Global rank start\": 0, \"In msg nelems\": {nelems}, \"In split size\": \"[]\", \"Out split size\": \"[]\", \"dtype\": \"BFloat16\", \"Process Group Description\": \"default_pg\", \"Collective name\": \"allreduce\""
        );
        // ring all-reduce: 2 (w-1)/w * bytes at ~180 GB/s bus bandwidth, plus launch overheads
        let bytes = nelems as f64 * 2.0;
        let gpu_us = 2.0 * (w as f64 - 1.0) / w as f64 * bytes / 180e3 + 25.0;
        let kn = self.k.nccl.clone();
        let launch = self.b.comm_launch(&kn, &coll, gpu_us);
        let kids = vec![
            self.b.call("cudaStreamIsCapturing", 317, 1.2, Eff::None),
            self.b.call("cudaEventRecord", 135, 2.3, Eff::None),
            self.b.call("cudaStreamWaitEvent", 147, 1.6, Eff::CommWaitsCompute),
            self.b.ann("nccl:all_reduce", 12.0, 4.0, vec![launch]),
            self.b.call("cudaEventRecord", 135, 1.5, Eff::None),
        ];
        let rpc = self.b.op_x("record_param_comms", &rpc_args, 18.0, 10.0, kids);
        let e = self.b.sh(
            &["", "", "", "-1"],
            &["TensorList", "Object", "Object", "Scalar"],
            &["", "", "", ""],
            &["", "", "", ""],
        );
        self.b.op_x("c10d::allreduce_", &e, 20.0, 12.0, vec![rpc])
    }

    pub fn block_bwd(&self) -> Vec<Node> {
        let mut v = Vec::new();
        v.push(self.eval_fn("AddBackward0", vec![]));
        v.push(self.dropout_bwd());
        // mlp
        v.extend(self.addmm_bwd(FF, DM, 1000.0, true));
        match self.cfg().mlp {
            Mlp::Gelu => {
                let kg = self.k.gelu_bwd.clone();
                let h = dims3(BATCH, SEQ, FF);
                let e = self.b.sh(&["", "", "none"], &[BF16, BF16, ""], &[&contig(&h), &contig(&h), ""], &[&h, &h, ""]);
                let l = self.b.launch(&kg, 150.0);
                let gb = self.b.op_x("aten::gelu_backward", &e, 6.0, 2.0, vec![self.empty(), l]);
                v.push(self.eval_fn("GeluBackward0", vec![gb]));
                v.extend(self.addmm_bwd(DM, FF, 1010.0, true));
            }
            Mlp::SwiGlu => {
                let (km, ks) = (self.k.mul.clone(), self.k.silu_bwd.clone());
                let h = dims3(BATCH, SEQ, FF);
                let m1 = self.binary("aten::mul", &km, 110.0, &h, BF16);
                let m2 = self.binary("aten::mul", &km, 110.0, &h, BF16);
                v.push(self.eval_fn("MulBackward0", vec![m1, m2]));
                let sb = self.unary("aten::silu_backward", &ks, 140.0, &h, BF16);
                v.push(self.eval_fn("SiluBackward0", vec![sb]));
                v.extend(self.addmm_bwd(DM, FF, 1010.0, true));
                v.extend(self.addmm_bwd(DM, FF, 1010.0, true));
            }
        }
        v.push(self.layer_norm_bwd());
        v.push(self.eval_fn("AddBackward0", vec![]));
        v.push(self.dropout_bwd());
        v.extend(self.addmm_bwd(DM, DM, 265.0, true));
        let x = dims3(BATCH, SEQ, DM);
        v.push(self.eval_fn("ViewBackward0", vec![self.b.op("aten::reshape", 2.0, 1.0, vec![self.view(&x)])]));
        v.push(self.eval_fn("CloneBackward0", vec![]));
        let q = format!("{BATCH},{NH},{SEQ},{HD}");
        let qs = format!("{},{},{},1", SEQ * DM, HD, DM);
        v.push(self.eval_fn("TransposeBackward0", vec![self.transpose(&q, &qs)]));
        v.extend(self.sdpa_bwd());
        for _ in 0..3 {
            v.push(self.eval_fn("TransposeBackward0", vec![self.transpose(&q, &qs)]));
            v.push(self.eval_fn("ViewBackward0", vec![self.b.op("aten::reshape", 2.0, 1.0, vec![self.view(&q)])]));
        }
        let kc = self.k.cat.clone();
        let e = self.b.sh(&["", "2"], &["TensorList", "Scalar"], &["", ""], &["", ""]);
        let l = self.b.launch(&kc, 88.0);
        let cat = self.b.op_x("aten::cat", &e, 8.0, 2.0, vec![l]);
        v.push(self.eval_fn("SplitBackward0", vec![cat]));
        v.extend(self.addmm_bwd(DM, 3 * DM, 760.0, true));
        v.push(self.layer_norm_bwd());
        let nparams = if self.cfg().mlp == Mlp::SwiGlu { 14 } else { 12 };
        for _ in 0..nparams {
            v.push(self.accumulate_grad());
        }
        if self.cfg().world > 1 {
            let per_layer = 4 * DM * DM + 2 * DM * FF + if self.cfg().mlp == Mlp::SwiGlu { DM * FF } else { 0 };
            v.push(self.allreduce(per_layer + 9 * DM));
        }
        v
    }

    pub fn embedding_bwd(&self, rows: u64, memset_us: f64, gpu: f64) -> Node {
        let ke = self.k.emb_bwd.clone();
        let ms = self.b.memset(rows * DM * 2, memset_us);
        let zeros =
            self.b.op("aten::zeros", 3.0, 1.0, vec![self.empty(), self.b.op("aten::zero_", 3.0, 1.0, vec![ms])]);
        let l = self.b.launch(&ke, gpu);
        let e = self.b.sh(
            &["", "", &rows.to_string(), "-1", "False"],
            &[BF16, "long int", "Scalar", "Scalar", "Scalar"],
            &[&contig(&dims3(BATCH, SEQ, DM)), &format!("{SEQ},1"), "", "", ""],
            &[&dims3(BATCH, SEQ, DM), &format!("{BATCH},{SEQ}"), "", "", ""],
        );
        let dense = self.b.op_x("aten::embedding_dense_backward", &e, 10.0, 3.0, vec![zeros, l]);
        let eb = self.b.op_x("aten::embedding_backward", &e, 3.0, 1.0, vec![dense]);
        self.eval_fn("EmbeddingBackward0", vec![eb])
    }

    pub fn backward(&self) -> Vec<Node> {
        let mut v = Vec::new();
        let (kf, kn, kls, kc) =
            (self.k.fill.clone(), self.k.nll_bwd.clone(), self.k.log_softmax_bwd.clone(), self.k.copy_f32.clone());
        // loss
        let lf = self.b.launch(&kf, 1050.0);
        let zeros = self.b.op(
            "aten::zeros",
            3.0,
            1.0,
            vec![self.empty(), self.b.op("aten::zero_", 2.0, 1.0, vec![self.b.op("aten::fill_", 4.0, 1.0, vec![lf])])],
        );
        let ln = self.b.launch(&kn, 15.0);
        let nb = self.b.op("aten::nll_loss_backward", 6.0, 2.0, vec![zeros, ln]);
        v.push(self.eval_fn("NllLossBackward0", vec![nb]));
        let l = self.b.launch(&kls, 2450.0);
        let lb = self.b.op("aten::_log_softmax_backward_data", 6.0, 2.0, vec![self.empty(), l]);
        v.push(self.eval_fn("LogSoftmaxBackward0", vec![lb]));
        let logits = format!("{BATCH},{SEQ},{VOCAB}");
        let l = self.b.launch(&kc, 1200.0);
        let tc = self.to_copy(&logits, "float", "15", l);
        v.push(self.eval_fn("ToCopyBackward0", vec![tc]));
        // lm head (tied with wte)
        v.extend(self.addmm_bwd(DM, VOCAB, 5900.0, false));
        v.push(self.layer_norm_bwd());
        v.push(self.accumulate_grad());
        v.push(self.accumulate_grad());
        for _ in 0..self.cfg().layers {
            v.extend(self.block_bwd());
        }
        v.push(self.dropout_bwd());
        v.push(self.eval_fn("AddBackward0", vec![]));
        v.push(self.embedding_bwd(SEQ, 6.0, 9.0));
        v.push(self.embedding_bwd(VOCAB, 95.0, 330.0));
        v.push(self.accumulate_grad());
        v.push(self.accumulate_grad());
        if self.cfg().world > 1 {
            v.push(self.allreduce(VOCAB * DM + SEQ * DM + 2 * DM));
        }
        v
    }
}

//! The forward pass: attention, the transformer block, embedding, lm head and loss.

use crate::*;

impl<'b, 'c> Model<'b, 'c> {
    pub fn sdpa_fwd(&self) -> Vec<Node> {
        let q = format!("{BATCH},{NH},{SEQ},{HD}");
        let qs = format!("{},{},{},1", SEQ * 3 * DM, HD, 3 * DM);
        let backend = self.cfg().backend;
        let (dt, mask) = match backend {
            Backend::Math => ("float", false),
            Backend::Efficient => (BF16, true),
            _ => (BF16, false),
        };
        let causal = if mask { "False" } else { "True" };
        let mask_t = if mask { BF16 } else { "" };
        let mask_d = if mask { format!("{BATCH},1,{SEQ},{SEQ}") } else { String::new() };
        let mask_s = if mask { format!("{},{},{},1", SEQ * SEQ, SEQ * SEQ, SEQ) } else { String::new() };
        let e = self.b.sh(
            &["", "", "", "", "0.", causal, "", "False"],
            &[dt, dt, dt, mask_t, "Scalar", "Scalar", "", "Scalar"],
            &[&qs, &qs, &qs, &mask_s, "", "", "", ""],
            &[&q, &q, &q, &mask_d, "", "", "", ""],
        );
        let mut pre = Vec::new();
        let mut post = Vec::new();
        let inner = match backend {
            Backend::Flash => {
                let ei = self.b.sh(
                    &["", "", "", "0.", "True", "False", ""],
                    &[BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", ""],
                    &[&qs, &qs, &qs, "", "", "", ""],
                    &[&q, &q, &q, "", "", "", ""],
                );
                let kf = self.k.flash_fwd.clone();
                let kids = vec![
                    self.empty(),
                    self.empty(),
                    self.b.op("aten::empty_like", 2.0, 1.0, vec![]),
                    self.b.launch(&kf, 440.0),
                ];
                let fa = self.b.op_x("aten::_flash_attention_forward", &ei, 8.0, 3.0, kids);
                let tr: Vec<Node> = (0..3).map(|_| self.transpose(&q, &qs)).collect();
                let mut kids = tr;
                kids.push(fa);
                kids.push(self.transpose(&q, &qs));
                self.b.op_x("aten::_scaled_dot_product_flash_attention", &ei, 4.0, 2.0, kids)
            }
            Backend::Efficient => {
                let ei = self.b.sh(
                    &["", "", "", "", "True", "0.", "False", ""],
                    &[BF16, BF16, BF16, BF16, "Scalar", "Scalar", "Scalar", ""],
                    &[&qs, &qs, &qs, &mask_s, "", "", "", ""],
                    &[&q, &q, &q, &mask_d, "", "", "", ""],
                );
                let kf = self.k.eff_fwd.clone();
                let kids = vec![self.empty(), self.empty(), self.b.launch(&kf, 640.0)];
                let fa = self.b.op_x("aten::_efficient_attention_forward", &ei, 9.0, 3.0, kids);
                let mut kids: Vec<Node> = (0..3).map(|_| self.transpose(&q, &qs)).collect();
                kids.push(fa);
                kids.push(self.transpose(&q, &qs));
                self.b.op_x("aten::_scaled_dot_product_efficient_attention", &ei, 4.0, 2.0, kids)
            }
            Backend::Cudnn => {
                let ei = self.b.sh(
                    &["", "", "", "", "True", "0.", "True", "False", ""],
                    &[BF16, BF16, BF16, "", "Scalar", "Scalar", "Scalar", "Scalar", ""],
                    &[&qs, &qs, &qs, "", "", "", "", "", ""],
                    &[&q, &q, &q, "", "", "", "", "", ""],
                );
                let kf = self.k.cudnn_fwd.clone();
                let kids = vec![self.empty(), self.empty(), self.empty(), self.b.launch(&kf, 380.0)];
                self.b.op_x("aten::_scaled_dot_product_cudnn_attention", &ei, 12.0, 3.0, kids)
            }
            Backend::Math => {
                // fp32 attention: q, k, v upcast before, the result cast back after
                for _ in 0..3 {
                    let kc = self.k.copy.clone();
                    let l = self.b.launch(&kc, 55.0);
                    pre.push(self.to_copy(&q, BF16, "6", l));
                }
                let s = format!("{BATCH},{NH},{SEQ},{SEQ}");
                let bs = format!("{},{SEQ},{SEQ}", BATCH * NH);
                let ei = self.b.sh(
                    &["", "", "", "", "0.", "True", "", ""],
                    &["float", "float", "float", "", "Scalar", "Scalar", "", ""],
                    &[&contig(&q), &contig(&q), &contig(&q), "", "", "", "", ""],
                    &[&q, &q, &q, "", "", "", "", ""],
                );
                let (km, kg, ka, ks) =
                    (self.k.mul_f32.clone(), self.k.gemm_f32.clone(), self.k.add_f32.clone(), self.k.softmax.clone());
                let mul = self.binary("aten::mul", &km, 70.0, &q, "float");
                let eb = self.b.sh(&["", ""], &["float", "float"], &[&contig(&bs), &contig(&bs)], &[&bs, &bs]);
                let l1 = self.b.launch(&kg, 420.0);
                let bmm1 = self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l1]);
                let mm1 = self.b.op_x("aten::matmul", &eb, 4.0, 2.0, vec![self.view(&q), bmm1, self.view(&bs)]);
                let add = self.binary("aten::add", &ka, 300.0, &s, "float");
                let esm = self.b.sh(
                    &["", "-1", "False"],
                    &["float", "Scalar", "Scalar"],
                    &[&contig(&s), "", ""],
                    &[&s, "", ""],
                );
                let ls = self.b.launch(&ks, 610.0);
                let sm_inner = self.b.op_x("aten::_softmax", &esm, 5.0, 2.0, vec![ls]);
                let sm = self.b.op_x("aten::softmax", &esm, 2.0, 1.0, vec![sm_inner]);
                let l2 = self.b.launch(&kg, 420.0);
                let bmm2 = self.b.op_x("aten::bmm", &eb, 8.0, 2.0, vec![l2]);
                let mm2 = self.b.op_x("aten::matmul", &eb, 4.0, 2.0, vec![self.view(&s), bmm2, self.view(&bs)]);
                let kt = self.k.copy_f32.clone();
                let lback = self.b.launch(&kt, 55.0);
                post.push(self.to_copy(&q, "float", "15", lback));
                self.b.op_x("aten::_scaled_dot_product_attention_math", &ei, 6.0, 2.0, vec![mul, mm1, add, sm, mm2])
            }
        };
        let sdpa = self.b.op_x("aten::scaled_dot_product_attention", &e, 5.0, 2.0, vec![inner]);
        let mut v = pre;
        v.push(sdpa);
        v.extend(post);
        v
    }

    pub fn block_fwd(&self, _l: u32) -> Node {
        let x = dims3(BATCH, SEQ, DM);
        let qkv = dims3(BATCH, SEQ, 3 * DM);
        let q4 = format!("{BATCH},{SEQ},{NH},{HD}");
        let q4s = format!("{},{},{},1", SEQ * 3 * DM, 3 * DM, HD);
        // attention
        let mut attn = vec![self.linear(DM, 3 * DM, 760.0, true)];
        let es = self.b.sh(
            &["", &DM.to_string(), "2"],
            &[BF16, "Scalar", "Scalar"],
            &[&contig(&qkv), "", ""],
            &[&qkv, "", ""],
        );
        let narrows: Vec<Node> = (0..3)
            .map(|_| {
                let s = self.b.op("aten::slice", 2.0, 1.0, vec![self.as_strided()]);
                self.b.op("aten::narrow", 2.0, 1.0, vec![s])
            })
            .collect();
        attn.push(self.b.op_x("aten::split", &es, 3.0, 1.0, narrows));
        for _ in 0..3 {
            attn.push(self.view(&qkv));
            attn.push(self.transpose(&q4, &q4s));
        }
        attn.extend(self.sdpa_fwd());
        attn.push(self.transpose(&format!("{BATCH},{NH},{SEQ},{HD}"), &format!("{},{},{},1", SEQ * DM, HD, DM)));
        let kc = self.k.copy.clone();
        let lc = self.b.launch(&kc, 48.0);
        let clone = self.b.op(
            "aten::clone",
            4.0,
            2.0,
            vec![self.b.op("aten::empty_like", 2.0, 1.0, vec![]), self.b.op("aten::copy_", 5.0, 2.0, vec![lc])],
        );
        attn.push(self.b.op("aten::contiguous", 2.0, 1.0, vec![clone]));
        attn.push(self.view(&x));
        attn.push(self.linear(DM, DM, 260.0, false));
        attn.push(self.dropout(&x));
        let attn_fwd = self.b.py("model.py(58): forward", 6.0, 4.0, attn);
        let attn_call = self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![attn_fwd]);

        // mlp
        let h = dims3(BATCH, SEQ, FF);
        let mut mlp = Vec::new();
        match self.cfg().mlp {
            Mlp::Gelu => {
                mlp.push(self.linear(DM, FF, 1010.0, true));
                let kg = self.k.gelu.clone();
                let e = self.b.sh(&["", "none"], &[BF16, ""], &[&contig(&h), ""], &[&h, ""]);
                let l = self.b.launch(&kg, 95.0);
                mlp.push(self.b.op_x("aten::gelu", &e, 5.0, 2.0, vec![l]));
            }
            Mlp::SwiGlu => {
                mlp.push(self.linear(DM, FF, 1010.0, true));
                mlp.push(self.linear(DM, FF, 1010.0, true));
                let ks = self.k.silu.clone();
                mlp.push(self.unary("aten::silu", &ks, 95.0, &h, BF16));
                let km = self.k.mul.clone();
                mlp.push(self.binary("aten::mul", &km, 110.0, &h, BF16));
            }
        }
        mlp.push(self.linear(FF, DM, 1000.0, false));
        mlp.push(self.dropout(&x));
        let mlp_fwd = self.b.py("model.py(81): forward", 5.0, 3.0, mlp);
        let mlp_call = self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![mlp_fwd]);

        let ka = self.k.add.clone();
        let kids = vec![
            self.layer_norm(),
            attn_call,
            self.binary("aten::add", &ka, 48.0, &x, BF16),
            self.layer_norm(),
            mlp_call,
            self.binary("aten::add", &ka, 48.0, &x, BF16),
        ];
        let blk = self.b.py("model.py(104): forward", 5.0, 3.0, kids);
        self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![blk])
    }

    pub fn embedding(&self, rows: u64, gpu: f64) -> Node {
        let idx = format!("{BATCH},{SEQ}");
        let e = self.b.sh(
            &["", "", "-1", "False", "False"],
            &[BF16, "long int", "Scalar", "Scalar", "Scalar"],
            &[&format!("{DM},1"), &format!("{SEQ},1"), "", "", ""],
            &[&format!("{rows},{DM}"), &idx, "", "", ""],
        );
        let ki = self.k.index_select.clone();
        let l = self.b.launch(&ki, gpu);
        let kids = vec![
            self.b.op("aten::reshape", 2.5, 1.0, vec![]),
            self.b.op("aten::index_select", 8.0, 2.0, vec![self.empty(), l]),
            self.view(&TOK.to_string()),
        ];
        self.b.op_x("aten::embedding", &e, 3.0, 1.5, kids)
    }

    pub fn forward(&self) -> Vec<Node> {
        let x = dims3(BATCH, SEQ, DM);
        let ka = self.k.add.clone();
        let mut kids = vec![
            self.embedding(VOCAB, 40.0),
            self.b.op("aten::arange", 6.0, 2.0, vec![]),
            self.embedding(SEQ, 8.0),
            self.binary("aten::add", &ka, 48.0, &x, BF16),
            self.dropout(&x),
        ];
        for l in 0..self.cfg().layers {
            kids.push(self.block_fwd(l));
        }
        kids.push(self.layer_norm());
        // lm head (no bias): aten::linear -> aten::t, aten::matmul -> aten::mm
        let e = self.b.sh(
            &["", "", ""],
            &[BF16, BF16, ""],
            &[&contig(&x), &format!("{DM},1"), ""],
            &[&x, &format!("{VOCAB},{DM}"), ""],
        );
        let em = self.b.sh(
            &["", ""],
            &[BF16, BF16],
            &[&format!("{DM},1"), &format!("1,{DM}")],
            &[&format!("{TOK},{DM}"), &format!("{DM},{VOCAB}")],
        );
        let kg = self.k.gemm_fwd_wide.clone();
        let l = self.b.launch(&kg, 5900.0);
        let mm = self.b.op_x("aten::mm", &em, 9.0, 3.0, vec![l]);
        let matmul = self.b.op_x(
            "aten::matmul",
            &e,
            4.0,
            2.0,
            vec![self.view(&x), mm, self.b.op("aten::_unsafe_view", 2.5, 1.0, vec![])],
        );
        let tt = self.t(VOCAB, DM);
        kids.push(self.b.op_x("aten::linear", &e, 3.0, 2.0, vec![tt, matmul]));
        let model_fwd = self.b.py("model.py(160): forward", 8.0, 5.0, kids);
        let call = self.b.py("torch/nn/modules/module.py(1784): _call_impl", 3.0, 2.0, vec![model_fwd]);
        let call = self.b.py("torch/nn/modules/module.py(1773): _wrapped_call_impl", 2.0, 1.0, vec![call]);
        let mut v = Vec::new();
        if self.cfg().world > 1 {
            v.push(self.b.ann("DistributedDataParallel.forward", 25.0, 6.0, vec![call]));
        } else {
            v.push(call);
        }
        // loss: logits.float() then cross entropy
        let logits = format!("{BATCH},{SEQ},{VOCAB}");
        let kc = self.k.copy.clone();
        let lc = self.b.launch(&kc, 1650.0);
        v.push(self.to_copy(&logits, BF16, "6", lc));
        let (kls, kn) = (self.k.log_softmax.clone(), self.k.nll.clone());
        let ls = self.b.launch(&kls, 2300.0);
        let lsi = self.b.op("aten::_log_softmax", 6.0, 2.0, vec![ls]);
        let lso = self.b.op("aten::log_softmax", 3.0, 1.0, vec![lsi]);
        let ln = self.b.launch(&kn, 14.0);
        let nf = self.b.op("aten::nll_loss_forward", 7.0, 2.0, vec![ln]);
        let nl = self.b.op("aten::nll_loss", 2.0, 1.0, vec![nf]);
        let nll = self.b.op("aten::nll_loss_nd", 2.0, 1.0, vec![nl]);
        let lo = format!("{TOK},{VOCAB}");
        let el = self.b.sh(
            &["", "", "", "1", "-100", "0."],
            &["float", "long int", "", "Scalar", "Scalar", "Scalar"],
            &[&contig(&lo), "1", "", "", "", ""],
            &[&lo, &TOK.to_string(), "", "", "", ""],
        );
        v.push(self.b.op_x("aten::cross_entropy_loss", &el, 4.0, 2.0, vec![lso, nll]));
        v
    }

    // ---- backward (autograd thread)
}

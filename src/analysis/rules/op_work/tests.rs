//! Each formula on shapes worked out by hand.

use super::models::{ELEMENTWISE, MEMORY, REDUCTION};
use super::*;

fn inputs(dims: &str, types: &str, concrete: &str) -> Inputs {
    Inputs::parse(dims.as_bytes(), Some(types.as_bytes()), Some(concrete.as_bytes())).expect("dims parse")
}

fn work_of(name: &str, dims: &str, types: &str, concrete: &str) -> Option<Work> {
    work(name, &inputs(dims, types, concrete))
}

const BF16_2: &str = r#"["c10::BFloat16", "c10::BFloat16"]"#;
const BF16_3: &str = r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]"#;

#[test]
fn gemms_count_two_flops_per_multiply_add() {
    let mm = work_of("aten::mm", "[[141, 512], [512, 512]]", BF16_2, r#"["", ""]"#).unwrap();
    assert_eq!(mm.flops, 73_924_608.0);
    assert_eq!(mm.bytes, 813_056.0, "a, b read and the output written, 2 bytes each");
    assert_eq!(mm.precision, Some(Precision::Bf16));
    let addmm =
        work_of("aten::addmm", "[[512], [141, 512], [512, 512], [], []]", BF16_3, r#"["", "", "", "1", "1"]"#).unwrap();
    assert_eq!(addmm.flops, mm.flops, "the bias add is not counted, as in flop_counter");
    assert_eq!(addmm.bytes, 814_080.0);
    let bmm = work_of("aten::bmm", "[[8, 141, 64], [8, 64, 141]]", BF16_2, "[]").unwrap();
    assert_eq!(bmm.flops, 20_358_144.0);
    let fp32 = work_of("aten::mm", "[[32, 1000], [1000, 2048]]", r#"["float", "float"]"#, "[]").unwrap();
    assert_eq!((fp32.flops, fp32.precision), (131_072_000.0, Some(Precision::Fp32)));
    let fp8 = work_of(
        "aten::_scaled_mm",
        "[[64, 128], [128, 256], [], []]",
        r#"["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float"]"#,
        "[]",
    )
    .unwrap();
    assert_eq!((fp8.flops, fp8.precision), (2.0 * 64.0 * 128.0 * 256.0, Some(Precision::Fp8)));
    let grouped = work_of("aten::_grouped_mm", "[[4096, 2048], [8, 2048, 1024], [8]]", BF16_2, "[]").unwrap();
    assert_eq!(grouped.flops, 17_179_869_184.0, "tokens stacked over the experts: 2 * M * K * N");
    assert!(work_of("aten::mm", "[[4, 5], [6, 7]]", BF16_2, "[]").is_none(), "inner sizes differ");
}

#[test]
fn attention_forward_backward_layouts_and_causal() {
    // BERT-small on H100: _flash_attention_forward with q, k, v as [b, s, h, d].
    let dims = "[[1, 141, 8, 64], [1, 141, 8, 64], [1, 141, 8, 64], [], [], [], [], [], [], [], [], [], [], [], []]";
    let concrete = r#"["", "", "", "", "", "141", "141", "0.", "False", "False", "0.125", "", "", "", ""]"#;
    let fwd = work_of("aten::_flash_attention_forward", dims, BF16_3, concrete).unwrap();
    assert_eq!(fwd.flops, 40_716_288.0, "2 * b*h * s_q * s_k * (d + d_v)");
    assert!(!fwd.causal);
    let causal = concrete.replacen(r#""0.", "False""#, r#""0.", "True""#, 1);
    let half = work_of("aten::_flash_attention_forward", dims, BF16_3, &causal).unwrap();
    assert_eq!((half.flops, half.causal), (20_358_144.0, true));
    // The SDPA backward, [b, h, s, d], causal at position 11: 2.5x the forward, halved.
    let q = "[2, 16, 1024, 64]";
    let dims = format!("[{q}, {q}, {q}, {q}, {q}, [2, 16, 1024], [], [], [], [], [], [], [], [], []]");
    let mut c = vec!["\"\""; 15];
    c[11] = "\"True\"";
    let bwd = work_of(
        "aten::_scaled_dot_product_flash_attention_backward",
        &dims,
        r#"["c10::Half", "c10::Half", "c10::Half", "c10::Half", "c10::Half", "float"]"#,
        &format!("[{}]", c.join(", ")),
    )
    .unwrap();
    assert_eq!(bwd.flops, 10_737_418_240.0);
    assert_eq!(bwd.precision, Some(Precision::Fp16));
    // Efficient attention marks causal by its mask type.
    let mut c = vec!["\"\""; 14];
    c[9] = "\"1\"";
    let eff = work_of(
        "aten::_efficient_attention_forward",
        "[[1, 141, 8, 64], [1, 141, 8, 64], [1, 141, 8, 64]]",
        BF16_3,
        &format!("[{}]", c.join(", ")),
    )
    .unwrap();
    assert!(eff.causal && eff.flops == 20_358_144.0);
    // Packed variable-length calls ([total, h, d]) are not guessed.
    let varlen = work_of("aten::_flash_attention_forward", "[[300, 8, 64], [300, 8, 64], [300, 8, 64]]", BF16_3, "[]");
    assert!(varlen.is_none());
}

#[test]
fn convolutions_from_their_concrete_stride_and_padding() {
    // ResNet's first layer on MI300X (miopen_convolution: padding at 3, stride at 4).
    let conv = work_of(
        "aten::miopen_convolution",
        "[[512, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], [], [], []]",
        r#"["c10::BFloat16", "c10::BFloat16", "", "ScalarList", "ScalarList", "ScalarList", "Scalar"]"#,
        r#"["", "", "", "[3, 3]", "[2, 2]", "[1, 1]", "1", "False", "False"]"#,
    )
    .unwrap();
    // Output 512 x 64 x 112 x 112; 2 * 147 multiply-adds per output element.
    assert_eq!(conv.flops, 120_846_286_848.0);
    let out_bytes = 512.0 * 64.0 * 112.0 * 112.0 * 2.0;
    assert_eq!(conv.bytes, (512.0 * 3.0 * 224.0 * 224.0 + 64.0 * 147.0) * 2.0 + out_bytes);
    // Without the concrete stride (older traces) the output size is unknown.
    assert!(work_of("aten::cudnn_convolution", "[[32, 3, 224, 224], [64, 3, 7, 7]]", BF16_2, "[]").is_none());
    // A transposed convolution is not modelled.
    let t = r#"["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"]"#;
    assert!(work_of("aten::convolution", "[[1, 8, 4, 4], [8, 4, 3, 3]]", BF16_2, t).is_none());
    // The backward: grad_input and grad_weight, each the forward's cost; not the bias.
    let bwd = work_of(
        "aten::convolution_backward",
        "[[512, 512, 7, 7], [512, 512, 7, 7], [512, 512, 3, 3], [], [], [], [], [], [], [], []]",
        BF16_3,
        r#"["", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]"#,
    )
    .unwrap();
    assert_eq!(bwd.flops, 236_760_072_192.0);
    let only_weight =
        r#"["", "", "", "[0]", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[False, True, False]"]"#;
    let w = work_of(
        "aten::convolution_backward",
        "[[512, 512, 7, 7], [512, 512, 7, 7], [512, 512, 3, 3]]",
        BF16_3,
        only_weight,
    )
    .unwrap();
    assert_eq!(w.flops, bwd.flops / 2.0);
}

#[test]
fn memory_ops_count_bytes() {
    let add = work_of("aten::add", "[[1, 141, 512], [1, 141, 512], []]", BF16_2, "[]").unwrap();
    assert_eq!((add.flops, add.bytes), (72_192.0, 433_152.0), "two read, one written");
    let add_ = work_of("aten::add_", "[[1, 141, 512], [1, 141, 512], []]", BF16_2, "[]").unwrap();
    assert_eq!(add_.bytes, 288_768.0, "in place: the output is the first input");
    let emb =
        work_of("aten::embedding", "[[30522, 512], [1, 141], [], [], []]", r#"["c10::BFloat16", "long int"]"#, "[]")
            .unwrap();
    assert_eq!((emb.flops, emb.bytes), (0.0, 289_896.0), "the gathered rows read and written, and the indices");
    let norm = work_of(
        "aten::native_layer_norm",
        "[[1, 141, 512], [], [512], [512], []]",
        r#"["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar"]"#,
        "[]",
    )
    .unwrap();
    assert_eq!(norm.bytes, (72_192.0 * 2.0 + 2048.0) + 72_192.0 * 2.0);
    let cat = work_of("aten::cat", "[[[2, 3], [2, 3]], []]", r#"["TensorList", "Scalar"]"#, "[]").unwrap();
    assert_eq!(cat.bytes, 2.0 * 12.0 * 4.0, "a tensor list read and written; unknown element types count 4 bytes");
    assert!(work_of("aten::view", "[[1, 141]]", "[]", "[]").is_none(), "views move nothing");
    let unrecorded = work_of("aten::_foreach_add_", "[[], []]", r#"["TensorList", "Scalar"]"#, "[]");
    assert!(unrecorded.is_none(), "a tensor list written as [] is unknown work, not none");
    assert!(!is_modelled("aten::linear") && is_modelled("aten::addmm"), "composite ops are not counted twice");
}

#[test]
fn unreadable_shapes_are_refused() {
    assert!(Inputs::parse(b"not json", None, None).is_none());
    assert!(Inputs::parse(b"{\"a\": 1}", None, None).is_none());
    let x = Inputs::parse(b"[[1, \"x\"], [2, 3]]", None, None).unwrap();
    assert_eq!(x.dims, vec![Arg::Empty, Arg::Tensor(vec![2, 3])]);
    assert!(work("aten::mm", &x).is_none());
}

#[test]
fn every_modelled_name_has_one_model() {
    let mut all: Vec<&str> = ELEMENTWISE.iter().chain(MEMORY).chain(REDUCTION).copied().collect();
    let n = all.len();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), n, "an op is in two lists: the first match would hide the second");
    for op in all {
        assert!(is_modelled(&format!("aten::{op}")), "{op}");
    }
}

#[test]
fn hostile_shapes_give_no_work_and_no_panic() {
    let big = i64::MAX;
    let conv = work_of(
        "aten::convolution",
        &format!("[[{big}, 3, {big}, {big}], [{big}, 3, {big}, 7]]"),
        BF16_2,
        r#"["", "", "", "[9223372036854775807, 1]", "[9223372036854775807, 3]", "[9223372036854775807, 1]", "False", "[0, 0]", "1"]"#,
    );
    assert!(conv.is_none_or(|w| w.flops.is_finite() && w.bytes.is_finite()));
    let mm = work_of("aten::mm", &format!("[[{big}, {big}], [{big}, {big}]]"), BF16_2, "[]");
    assert!(mm.is_none_or(|w| w.flops.is_finite()), "{mm:?}");
    let q = format!("[{big}, {big}, {big}, 0]");
    let attn = work_of("aten::_scaled_dot_product_flash_attention", &format!("[{q}, {q}, {q}]"), BF16_3, "[]");
    assert!(attn.is_none(), "a zero head size is no work: {attn:?}");
    let stride0 = r#"["", "", "", "[0, 0]", "[0, 0]", "[1, 1]", "False", "[0, 0]", "1"]"#;
    assert!(work_of("aten::convolution", "[[1, 3, 8, 8], [4, 3, 3, 3]]", BF16_2, stride0).is_none(), "stride 0");
}

//! CI gates: `tracesight diff A B --fail-if LIMIT` exits with its own status exactly when a
//! limit is crossed (or cannot be checked), and prints the Markdown verdict for a pull request.

mod common;
use common::Trace;
use std::process::Command;
use tracesight::analysis::job::diff::diff;
use tracesight::analysis::job::gate::{check, Limit};

const GEMM: &str = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64";
const ELEM: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, float*)";

/// One step of 1 ms CPU time (plus `slower_us`) with a GEMM of `gemm_us` and an add of 100 us.
fn run(gemm_us: i64, slower_us: i64) -> Trace {
    let mut t = Trace::new("NVIDIA H100 80GB HBM3", (9, 0));
    t.span("user_annotation", "ProfilerStep#1", 0, 1_000 + slower_us, common::CPU_TID, None);
    t.cpu = 10;
    t.launch(&["aten::mm"], GEMM, 100, gemm_us);
    t.launch(&["aten::add"], ELEM, 200 + gemm_us, 100);
    t
}

fn limits(v: &[&str]) -> Vec<Limit> {
    v.iter().map(|s| Limit::parse(s).unwrap()).collect()
}

#[test]
fn a_limit_fails_exactly_when_crossed() {
    // The GEMM grows 10% (500 -> 550 us); the step 5% (1000 -> 1050 us); the add is unchanged.
    let d = diff(&[run(500, 0).report()], &[run(550, 50).report()]);
    let passed = |l: &[&str]| check(&d, &limits(l)).iter().map(|c| c.passed).collect::<Vec<_>>();
    assert_eq!(passed(&["gemm>+9%", "gemm>+10%", "gemm>+11%"]), [false, true, true]);
    assert_eq!(passed(&["gemm>+49us", "gemm>+50us", "gemm>+0.06ms"]), [false, true, true]);
    assert_eq!(passed(&["step_time>+4.9%", "step_time>+5%"]), [false, true]);
    // A shrink limit is not crossed by growth, and the other way round.
    assert_eq!(passed(&["gemm<-1%", "elementwise>+0%"]), [true, true]);
    let d_faster = diff(&[run(550, 50).report()], &[run(500, 0).report()]);
    assert!(!check(&d_faster, &limits(&["gemm<-5%"]))[0].passed);
    // A figure the diff does not have fails, with the reason.
    let c = &check(&d, &limits(&["attention>+5%"]))[0];
    assert!(!c.passed && c.change.is_none() && c.message.contains("cannot be checked"), "{c:?}");
    // From nothing in A, any growth is past a percentage.
    let mut with_attention = run(500, 0);
    with_attention.launch(&["aten::_flash_attention_forward"], "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t>>(Flash_fwd_params)", 900, 50);
    let d_new = diff(&[run(500, 0).report()], &[with_attention.report()]);
    assert!(!check(&d_new, &limits(&["attention>+1000%"]))[0].passed);
    assert!(check(&d_new, &limits(&["attention>+60us"]))[0].passed);
    let ok = &check(&d, &limits(&["gemm>+20%"]))[0];
    assert!(ok.message.contains("+10.0%") && ok.message.ends_with("ok"), "{}", ok.message);
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tracesight-gate-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_cli_gate_exits_with_its_own_status_and_prints_markdown() {
    let d = tmp("cli");
    let (a, b) = (d.join("base.json"), d.join("new.json"));
    std::fs::write(&a, run(500, 0).bytes()).unwrap();
    std::fs::write(&b, run(550, 50).bytes()).unwrap();
    let gate = |extra: &[&str]| {
        let mut args = vec!["diff".to_string(), a.display().to_string(), b.display().to_string()];
        args.extend(extra.iter().map(|s| s.to_string()));
        Command::new(env!("CARGO_BIN_EXE_tracesight")).args(&args).output().unwrap()
    };
    let held = gate(&["--fail-if", "step_time>+5%", "--fail-if", "gemm>+10%"]);
    assert_eq!(held.status.code(), Some(0), "{}", String::from_utf8_lossy(&held.stderr));
    let md = String::from_utf8(held.stdout).unwrap();
    assert!(md.starts_with("### tracesight diff") && md.contains("All 2 limits hold."), "{md}");
    assert!(md.contains("| GEMM") || md.contains("| matmul"), "{md}");
    let crossed = gate(&["--fail-if", "step_time>+5%", "--fail-if", "gemm>+5%"]);
    assert_eq!(crossed.status.code(), Some(3));
    let md = String::from_utf8(crossed.stdout).unwrap();
    assert!(md.contains("1 of 2 limits failed.") && md.contains("❌ `gemm>+5%"), "{md}");
    // A limit that cannot be read is a usage error, before anything is read.
    let bad = gate(&["--fail-if", "gemm>5"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unit"), "{}", String::from_utf8_lossy(&bad.stderr));
    // Markdown without limits, and JSON with the checks.
    let plain = gate(&["--markdown"]);
    assert_eq!(plain.status.code(), Some(0));
    assert!(String::from_utf8(plain.stdout).unwrap().starts_with("### tracesight diff"));
    let json = gate(&["--json", "--fail-if", "gemm>+5%"]);
    assert_eq!(json.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["checks"][0]["passed"], false);
    assert_eq!(v["diff"]["buckets"][0]["bucket"], "gemm");
    std::fs::remove_dir_all(&d).ok();
}

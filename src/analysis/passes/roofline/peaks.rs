//! Peak dense throughput and memory bandwidth of GPUs, for roofline efficiency and MFU.
//!
//! Every figure is the vendor's, per precision, in TFLOP/s (TOP/s for INT8) and TB/s (1e12 B/s).
//! Convention: **dense** (no 2:4 structured sparsity) matrix-unit rates. NVIDIA datasheets mostly
//! quote tensor rates with sparsity (marked `*`); those are halved here and the source says so.
//! GeForce rates are FP16/BF16 with FP32 accumulate (what PyTorch uses), which on those parts is
//! half the FP16-accumulate rate. FP32 is the CUDA-core rate on NVIDIA (TF32 is its own entry) and
//! the FP32 matrix rate on AMD. A 0.0 means the device has no such rate (or none is published; the
//! source says which). Multi-die packages that the runtime shows as several devices (MI250/MI250X)
//! are given per device, i.e. per GCD.

use crate::vocab::Precision;

/// One device's peaks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DevicePeaks {
    /// Canonical product name, e.g. "NVIDIA H100 SXM5 80GB".
    pub name: &'static str,
    /// Dense peak TFLOP/s per precision, indexed by [`Precision::index`]
    /// (FP64, FP32, TF32, BF16, FP16, FP8, INT8); 0.0 where the device has no such rate.
    pub tflops: [f64; 7],
    /// Memory bandwidth in TB/s (1e12 bytes/s).
    pub tbps: f64,
    /// Where the figures come from: the vendor document's name and its public URL, plus notes.
    pub source: &'static str,
}

impl DevicePeaks {
    /// Dense peak TFLOP/s (TOP/s for INT8) at `p`, or None where the device has no such rate.
    pub fn peak(&self, p: Precision) -> Option<f64> {
        let v = self.tflops[p.index()];
        (v > 0.0).then_some(v)
    }

    /// The roofline ridge point at `p` in FLOP per byte: peak TFLOP/s over TB/s.
    pub fn ridge(&self, p: Precision) -> Option<f64> {
        self.peak(p).filter(|_| self.tbps > 0.0).map(|v| v / self.tbps)
    }
}

const fn d(name: &'static str, tflops: [f64; 7], tbps: f64, source: &'static str) -> DevicePeaks {
    DevicePeaks { name, tflops, tbps, source }
}

// Columns: FP64, FP32, TF32, BF16, FP16, FP8, INT8.
#[rustfmt::skip]
pub static DEVICES: &[DevicePeaks] = &[
    // Volta: FP16 tensor cores only (no TF32/BF16/INT8 tensor path; the datasheet quotes no INT8).
    d("NVIDIA Tesla V100 SXM2", [7.8, 15.7, 0.0, 0.0, 125.0, 0.0, 0.0], 0.9, "NVIDIA V100 Tensor Core GPU datasheet (16 GB and 32 GB SXM2 alike), https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"),
    d("NVIDIA Tesla V100 PCIe", [7.0, 14.0, 0.0, 0.0, 112.0, 0.0, 0.0], 0.9, "NVIDIA V100 Tensor Core GPU datasheet (16 GB and 32 GB PCIe alike), https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"),
    d("NVIDIA Tesla V100S PCIe 32GB", [8.2, 16.4, 0.0, 0.0, 130.0, 0.0, 0.0], 1.134, "NVIDIA V100 Tensor Core GPU datasheet (V100S column), https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf"),
    d("NVIDIA Tesla V100 DGXS 32GB", [7.8, 15.7, 0.0, 0.0, 125.0, 0.0, 0.0], 0.9, "NVIDIA DGX Station datasheet (4x V100, 500 TFLOPS mixed precision = 125 per GPU), https://www.nvidia.com/en-us/data-center/dgx-station/ (URL not re-checked here); the DGXS board is SXM2-class, so FP64/FP32/bandwidth are the V100 SXM2 datasheet's"),
    d("NVIDIA Tesla T4", [0.253, 8.1, 0.0, 0.0, 65.0, 0.0, 130.0], 0.32, "NVIDIA T4 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf; FP16 = mixed FP16/FP32 tensor rate; FP64 not in the datasheet: derived FP32/32 (Turing 1:32, Turing whitepaper)"),
    d("NVIDIA A10", [0.4875, 31.2, 62.5, 125.0, 125.0, 0.0, 250.0], 0.6, "NVIDIA A10 Tensor Core GPU datasheet (dense column), https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a10/pdf/a10-datasheet.pdf; FP64 not in the datasheet: derived FP32/64 (GA10x 1:64, Ampere GA102 whitepaper)"),
    d("NVIDIA A10G", [0.547, 35.0, 35.0, 70.0, 70.0, 0.0, 140.0], 0.6, "No NVIDIA datasheet (AWS-only part); figures as AWS/Baseten quote them, https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/ ; they equal 80 SMs x 1.71 GHz at the GA10x GeForce per-SM rates of the Ampere GA102 whitepaper (FP16/FP32-accumulate half rate); FP64 derived FP32/64"),
    d("NVIDIA A100 PCIe 40GB", [19.5, 19.5, 156.0, 312.0, 312.0, 0.0, 624.0], 1.555, "NVIDIA A100 Tensor Core GPU datasheet (40GB), https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet.pdf; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA A100 SXM4 40GB", [19.5, 19.5, 156.0, 312.0, 312.0, 0.0, 624.0], 1.555, "NVIDIA A100 Tensor Core GPU datasheet (40GB), https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet.pdf; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA A100 PCIe 80GB", [19.5, 19.5, 156.0, 312.0, 312.0, 0.0, 624.0], 1.935, "NVIDIA A100 Tensor Core GPU datasheet (80GB), https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA A100 SXM4 80GB", [19.5, 19.5, 156.0, 312.0, 312.0, 0.0, 624.0], 2.039, "NVIDIA A100 Tensor Core GPU datasheet (80GB), https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA L4", [0.473, 30.3, 60.0, 121.0, 121.0, 242.5, 242.5], 0.3, "NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/; dense (datasheet's sparse figure / 2); FP64 not in the datasheet: derived FP32/64 (AD10x 1:64, Ada whitepaper)"),
    d("NVIDIA L40S", [1.431, 91.6, 183.0, 366.5, 366.5, 733.0, 733.0], 0.864, "NVIDIA L40S GPU datasheet, https://www.nvidia.com/en-us/data-center/l40s/; dense (datasheet's sparse figure / 2); FP64 not in the datasheet: derived FP32/64 (AD10x 1:64, Ada whitepaper)"),
    d("NVIDIA H100 SXM5 80GB", [67.0, 67.0, 494.5, 989.5, 989.5, 1979.0, 1979.0], 3.35, "NVIDIA H100 Tensor Core GPU datasheet (H100 SXM), https://www.nvidia.com/en-us/data-center/h100/; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA H100 PCIe 80GB", [51.0, 51.0, 378.0, 756.5, 756.5, 1513.0, 1513.0], 2.0, "NVIDIA H100 Tensor Core GPU datasheet (H100 PCIe), https://www.nvidia.com/en-us/data-center/h100/; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA H100 NVL 94GB", [60.0, 60.0, 417.5, 835.5, 835.5, 1670.5, 1670.5], 3.9, "NVIDIA H100 Tensor Core GPU datasheet (H100 NVL, per GPU), https://www.nvidia.com/en-us/data-center/h100/; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA H800 SXM5 80GB", [1.0, 67.0, 494.5, 989.5, 989.5, 1979.0, 1979.0], 3.35, "NVIDIA H800 Tensor Core GPU datasheet (SXM), https://www.nvidia.cn/data-center/h800/ (URL not re-checked here); dense (datasheet's sparse figure / 2); FP64 1 TFLOPS (export-limited), tensor rates as H100 SXM"),
    d("NVIDIA H800 PCIe 80GB", [0.8, 51.0, 378.0, 756.5, 756.5, 1513.0, 1513.0], 2.0, "NVIDIA H800 Tensor Core GPU datasheet (PCIe), https://www.nvidia.cn/data-center/h800/ (URL not re-checked here); dense (datasheet's sparse figure / 2); FP64 0.8 TFLOPS (export-limited), tensor rates as H100 PCIe"),
    d("NVIDIA H20 96GB", [1.0, 44.0, 74.0, 148.0, 148.0, 296.0, 296.0], 4.0, "No public NVIDIA datasheet; NVIDIA's partner spec figures as widely reported (dense), e.g. https://willitrunai.com/es/gpus/h20-96gb ; not verified against a vendor document"),
    d("NVIDIA H200 SXM 141GB", [67.0, 67.0, 494.5, 989.5, 989.5, 1979.0, 1979.0], 4.8, "NVIDIA H200 Tensor Core GPU datasheet (H200 SXM), https://www.nvidia.com/en-us/data-center/h200/; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA H200 NVL 141GB", [60.0, 60.0, 417.5, 835.5, 835.5, 1670.5, 1670.5], 4.8, "NVIDIA H200 Tensor Core GPU datasheet (H200 NVL), https://www.nvidia.com/en-us/data-center/h200/; dense (datasheet's sparse figure / 2); FP64 = FP64 Tensor Core rate"),
    d("NVIDIA GH200 96GB HBM3", [67.0, 67.0, 494.5, 989.5, 989.5, 1979.0, 1979.0], 4.0, "NVIDIA GH200 Grace Hopper Superchip datasheet (96GB HBM3 + 480GB LPDDR5X), https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/; dense (datasheet's sparse figure / 2); bandwidth = GPU HBM, not LPDDR5X"),
    d("NVIDIA GH200 144GB HBM3e", [67.0, 67.0, 494.5, 989.5, 989.5, 1979.0, 1979.0], 4.9, "NVIDIA GH200 Grace Hopper Superchip datasheet (144GB HBM3e), https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/; dense (datasheet's sparse figure / 2); bandwidth = GPU HBM"),
    d("NVIDIA B200", [37.0, 75.0, 1125.0, 2250.0, 2250.0, 4500.0, 4500.0], 8.0, "NVIDIA HGX B200 specifications, https://www.nvidia.com/en-us/data-center/hgx/; per GPU = 8-GPU figure / 8; dense (sparse figure / 2); bandwidth from DGX B200 (64 TB/s / 8)"),
    d("NVIDIA B300", [1.25, 75.0, 1125.0, 2250.0, 2250.0, 4500.0, 0.0], 8.0, "NVIDIA HGX B300 specifications, https://www.nvidia.com/en-us/data-center/hgx/; per GPU = 8-GPU figure / 8; dense (sparse figure / 2); INT8 tensor rate cut on Blackwell Ultra and quoted inconsistently between page revisions: 0.0 (not used); GB300 NVL72 quotes slightly higher per-GPU rates at its higher power limit"),
    d("NVIDIA GB200 (B200 GPU)", [40.0, 80.0, 1250.0, 2500.0, 2500.0, 5000.0, 5000.0], 8.0, "NVIDIA GB200 NVL72 specifications, https://www.nvidia.com/en-us/data-center/gb200-nvl72/; per GPU = NVL72 figure / 72; dense (sparse figure / 2); 576 TB/s / 72"),
    d("NVIDIA GeForce RTX 3090", [0.556, 35.6, 35.6, 71.0, 71.0, 0.0, 284.0], 0.936, "NVIDIA Ampere GA102 GPU Architecture whitepaper, https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf; FP16/BF16 with FP32 accumulate; dense; FP64 derived FP32/64"),
    d("NVIDIA GeForce RTX 4090", [1.29, 82.6, 82.6, 165.2, 165.2, 330.3, 660.6], 1.008, "NVIDIA Ada GPU Architecture whitepaper, https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf; FP16/BF16/FP8 with FP32 accumulate; dense; FP64 derived FP32/64"),
    d("NVIDIA GeForce RTX 5090", [1.64, 104.8, 104.8, 209.5, 209.5, 419.0, 838.0], 1.792, "NVIDIA RTX Blackwell GPU Architecture whitepaper, https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf; FP16/BF16/FP8 with FP32 accumulate; dense; FP64 derived FP32/64"),
    d("NVIDIA GeForce RTX 4090 Laptop GPU", [0.62, 39.7, 39.7, 79.4, 79.4, 158.8, 317.5], 0.576, "Derived: NVIDIA RTX 40 laptop specs (76 SMs, boost up to 2040 MHz, 256-bit GDDR6 at 18 Gbps), https://www.nvidia.com/en-us/geforce/laptops/40-series/, times Ada whitepaper per-SM rates (FP32 accumulate, dense); VARIES WITH THE LAPTOP'S POWER LIMIT (80-150 W): upper bound"),
    d("NVIDIA GeForce RTX 4080 Laptop GPU", [0.53, 33.9, 33.9, 67.7, 67.7, 135.4, 270.8], 0.432, "Derived: NVIDIA RTX 40 laptop specs (58 SMs, boost up to 2280 MHz, 192-bit GDDR6 at 18 Gbps), https://www.nvidia.com/en-us/geforce/laptops/40-series/, times Ada whitepaper per-SM rates (FP32 accumulate, dense); VARIES WITH THE LAPTOP'S POWER LIMIT (60-150 W): upper bound"),
    d("NVIDIA GeForce RTX 3080 Laptop GPU", [0.33, 21.0, 21.0, 42.0, 42.0, 0.0, 168.1], 0.448, "Derived: NVIDIA RTX 30 laptop specs (48 SMs, boost up to 1710 MHz, 256-bit GDDR6 at 14 Gbps), https://www.nvidia.com/en-us/geforce/laptops/30-series/, times Ampere GA102 whitepaper GA10x per-SM rates (FP32 accumulate, dense); VARIES WITH THE LAPTOP'S POWER LIMIT (80-150+ W): upper bound"),
    d("NVIDIA Quadro GP100", [5.2, 10.3, 0.0, 0.0, 20.7, 0.0, 0.0], 0.717, "NVIDIA Quadro GP100 datasheet, https://www.nvidia.com/en-us/design-visualization/quadro/ (URL not re-checked here; Pascal: no tensor cores; FP16 = packed half-precision rate)"),
    // AMD: FP32 = FP32 matrix rate; FP64 = FP64 matrix rate where it exists.
    d("AMD Instinct MI100", [11.5, 46.1, 0.0, 92.3, 184.6, 0.0, 184.6], 1.2288, "AMD Instinct MI100 product page, https://www.amd.com/en/products/accelerators/instinct/mi100.html; CDNA 1 has no FP64 matrix rate (FP64 = vector)"),
    d("AMD Instinct MI210", [45.3, 45.3, 0.0, 181.0, 181.0, 0.0, 181.0], 1.6384, "AMD Instinct MI210 product page, https://www.amd.com/en/products/accelerators/instinct/mi200/mi210.html; CDNA 2 has no TF32/FP8"),
    d("AMD Instinct MI250 (one GCD)", [45.25, 45.25, 0.0, 181.05, 181.05, 0.0, 181.05], 1.6384, "AMD Instinct MI250 product page, https://www.amd.com/en/products/accelerators/instinct/mi200/mi250.html; per GCD = package figure / 2 (ROCm shows each of the 2 GCDs as a device, 104 CUs)"),
    d("AMD Instinct MI250X (one GCD)", [47.85, 47.85, 0.0, 191.5, 191.5, 0.0, 191.5], 1.6384, "AMD Instinct MI250X product page, https://www.amd.com/en/products/accelerators/instinct/mi200/mi250x.html; per GCD = package figure / 2 (ROCm shows each of the 2 GCDs as a device, 110 CUs)"),
    d("AMD Instinct MI300X", [163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9], 5.3, "AMD Instinct MI300X product page / data sheet, https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html; dense figures"),
    d("AMD Instinct MI300A", [122.6, 122.6, 490.3, 980.6, 980.6, 1961.2, 1961.2], 5.3, "AMD Instinct MI300A product page / data sheet, https://www.amd.com/en/products/accelerators/instinct/mi300/mi300a.html; dense figures"),
    d("AMD Instinct MI325X", [163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9], 6.0, "AMD Instinct MI325X product page / data sheet, https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html; dense figures"),
    d("AMD Instinct MI350X", [72.1, 144.2, 0.0, 2306.9, 2306.9, 4613.7, 4613.7], 8.0, "AMD Instinct MI350X product page, https://www.amd.com/en/products/accelerators/instinct/mi350/mi350x.html, and AMD CDNA 4 whitepaper, https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-4-architecture-whitepaper.pdf; dense; no TF32 GEMM on CDNA 4 (ROCm Compute Profiler docs)"),
    d("AMD Instinct MI355X", [78.6, 157.3, 0.0, 2516.6, 2516.6, 5033.2, 5033.2], 8.0, "AMD Instinct MI355X product page, https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html, and AMD CDNA 4 whitepaper, https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/white-papers/amd-cdna-4-architecture-whitepaper.pdf; dense; no TF32 GEMM on CDNA 4 (ROCm Compute Profiler docs)"),
];

fn by_name(name: &str) -> Option<&'static DevicePeaks> {
    DEVICES.iter().find(|d| d.name == name)
}

/// The device a trace's `deviceProperties` describe: by name first (as Kineto writes it), else,
/// for empty or generic names, by SM/CU count + compute capability (+ memory size).
pub fn lookup(
    name: &str,
    num_sms: Option<i64>,
    compute: Option<(i64, i64)>,
    total_mem_bytes: Option<i64>,
) -> Option<&'static DevicePeaks> {
    let upper = name.to_ascii_uppercase();
    // Whole tokens, so that "A10" never matches "A100" nor "H20" "H200".
    let toks: Vec<&str> = upper.split(|c: char| !c.is_ascii_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let generic = toks.iter().all(|t| ["AMD", "NVIDIA", "ATI", "RADEON", "GRAPHICS", "DEVICE", "GPU"].contains(t));
    if generic {
        return by_signature(num_sms?, compute?, total_mem_bytes);
    }
    by_name(name_rule(&toks, num_sms, total_mem_bytes)?)
}

fn name_rule(toks: &[&str], num_sms: Option<i64>, mem: Option<i64>) -> Option<&'static str> {
    let has = |t: &str| toks.contains(&t);
    let gb = mem.map(|b| b as f64 / 1e9);
    let big = |token: &str, over_gb: f64| has(token) || gb.is_some_and(|g| g > over_gb);
    Some(match () {
        _ if has("MI355X") => "AMD Instinct MI355X",
        _ if has("MI350X") => "AMD Instinct MI350X",
        _ if has("MI325X") => "AMD Instinct MI325X",
        _ if has("MI300A") => "AMD Instinct MI300A",
        _ if has("MI300X") => "AMD Instinct MI300X", // also "MI300X VF" (SR-IOV function, same chip)
        // ROCm names every gfx90a GCD "MI250X/MI250"; the CU count tells which (104: MI250, 110:
        // MI250X). Without it take the MI250X: the higher peak never overstates efficiency.
        _ if has("MI250X") && !(has("MI250") && num_sms == Some(104)) => "AMD Instinct MI250X (one GCD)",
        _ if has("MI250") => "AMD Instinct MI250 (one GCD)",
        _ if has("MI210") => "AMD Instinct MI210",
        _ if has("MI100") => "AMD Instinct MI100",
        _ if has("GB300") || has("B300") => "NVIDIA B300",
        _ if has("GB200") => "NVIDIA GB200 (B200 GPU)",
        _ if has("B200") => "NVIDIA B200",
        _ if has("GH200") && (has("144G") || has("HBM3E") || gb.is_some_and(|g| g > 110.0)) => {
            "NVIDIA GH200 144GB HBM3e"
        }
        _ if has("GH200") => "NVIDIA GH200 96GB HBM3",
        _ if has("H200") && has("NVL") => "NVIDIA H200 NVL 141GB",
        _ if has("H200") => "NVIDIA H200 SXM 141GB",
        _ if has("H100") && has("NVL") => "NVIDIA H100 NVL 94GB",
        _ if has("H100") && has("PCIE") => "NVIDIA H100 PCIe 80GB",
        _ if has("H100") => "NVIDIA H100 SXM5 80GB",
        _ if has("H800") && has("PCIE") => "NVIDIA H800 PCIe 80GB",
        _ if has("H800") => "NVIDIA H800 SXM5 80GB",
        _ if has("H20") => "NVIDIA H20 96GB",
        _ if has("A100") && has("PCIE") && big("80GB", 50.0) => "NVIDIA A100 PCIe 80GB",
        _ if has("A100") && has("PCIE") => "NVIDIA A100 PCIe 40GB",
        // SXM4 boards, including PG509-200 (the 40 GB HGX board) when memory does not say 80 GB.
        _ if has("A100") && big("80GB", 50.0) => "NVIDIA A100 SXM4 80GB",
        _ if has("A100") => "NVIDIA A100 SXM4 40GB",
        _ if has("A10G") => "NVIDIA A10G",
        _ if has("A10") => "NVIDIA A10",
        _ if has("L40S") => "NVIDIA L40S",
        _ if has("L4") => "NVIDIA L4",
        _ if has("V100S") => "NVIDIA Tesla V100S PCIe 32GB",
        _ if has("V100") && has("DGXS") => "NVIDIA Tesla V100 DGXS 32GB",
        _ if has("V100") && has("PCIE") => "NVIDIA Tesla V100 PCIe",
        _ if has("V100") => "NVIDIA Tesla V100 SXM2",
        _ if has("T4") => "NVIDIA Tesla T4",
        _ if has("GP100") => "NVIDIA Quadro GP100",
        // GeForce: "Ti"/"Super"/"D" variants have other clocks; not in the table.
        _ if has("TI") || has("SUPER") || has("D") => return None,
        _ if has("4090") && has("LAPTOP") => "NVIDIA GeForce RTX 4090 Laptop GPU",
        _ if has("4080") && has("LAPTOP") => "NVIDIA GeForce RTX 4080 Laptop GPU",
        _ if has("3080") && has("LAPTOP") => "NVIDIA GeForce RTX 3080 Laptop GPU",
        _ if has("LAPTOP") => return None,
        _ if has("5090") => "NVIDIA GeForce RTX 5090",
        _ if has("4090") => "NVIDIA GeForce RTX 4090",
        _ if has("3090") => "NVIDIA GeForce RTX 3090",
        _ => return None,
    })
}

/// SMs or CUs, compute capability (gfx major.minor on AMD), memory range in GB, entry name.
type Signature = (i64, (i64, i64), (f64, f64), &'static str);

/// Devices told apart by their hardware signature, for traces whose name says nothing.
/// Where two parts share a signature, the one with the higher peak is listed, so efficiency is
/// never overstated.
#[rustfmt::skip]
const SIGNATURES: &[Signature] = &[
    (304, (9, 4), (150.0, 240.0), "AMD Instinct MI300X"),
    (304, (9, 4), (240.0, 320.0), "AMD Instinct MI325X"),
    (228, (9, 4), (0.0, 1e9), "AMD Instinct MI300A"),
    // MI350X and MI355X share 256 CUs and 288 GB; they differ only in clock (and power limit).
    (256, (9, 5), (0.0, 1e9), "AMD Instinct MI355X"),
    (110, (9, 0), (0.0, 1e9), "AMD Instinct MI250X (one GCD)"),
    // An MI210 also has 104 CUs and 64 GB on gfx90a, and cannot be told from an MI250 GCD here;
    // it does not matter: both run 104 CUs at 1.7 GHz on 4096-bit HBM2e, so the figures agree.
    (104, (9, 0), (0.0, 1e9), "AMD Instinct MI250 (one GCD)"),
    (120, (9, 0), (0.0, 1e9), "AMD Instinct MI100"),
    (132, (9, 0), (0.0, 90.0), "NVIDIA H100 SXM5 80GB"),
    (132, (9, 0), (120.0, 160.0), "NVIDIA H200 SXM 141GB"),
    (114, (9, 0), (0.0, 90.0), "NVIDIA H100 PCIe 80GB"),
    (78, (9, 0), (0.0, 1e9), "NVIDIA H20 96GB"),
    (108, (8, 0), (0.0, 50.0), "NVIDIA A100 SXM4 40GB"),
    (108, (8, 0), (50.0, 1e9), "NVIDIA A100 SXM4 80GB"),
    (72, (8, 6), (0.0, 1e9), "NVIDIA A10"),
    (80, (8, 6), (0.0, 1e9), "NVIDIA A10G"),
    (82, (8, 6), (0.0, 1e9), "NVIDIA GeForce RTX 3090"),
    (58, (8, 9), (0.0, 1e9), "NVIDIA L4"),
    (142, (8, 9), (0.0, 1e9), "NVIDIA L40S"),
    (128, (8, 9), (0.0, 1e9), "NVIDIA GeForce RTX 4090"),
    (40, (7, 5), (0.0, 1e9), "NVIDIA Tesla T4"),
    (148, (10, 0), (0.0, 1e9), "NVIDIA B200"),
    (170, (12, 0), (0.0, 1e9), "NVIDIA GeForce RTX 5090"),
];

fn by_signature(sms: i64, cc: (i64, i64), mem: Option<i64>) -> Option<&'static DevicePeaks> {
    let gb = mem.map(|b| b as f64 / 1e9);
    let (.., name) = SIGNATURES
        .iter()
        .find(|(s, c, (lo, hi), _)| *s == sms && *c == cc && gb.map_or(*lo == 0.0, |g| g >= *lo && g < *hi))?;
    by_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(n: &str) -> Option<&'static str> {
        lookup(n, None, None, None).map(|d| d.name)
    }

    #[test]
    fn kineto_names_resolve() {
        let cases = [
            ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"),
            ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe 80GB"),
            ("NVIDIA H100 NVL", "NVIDIA H100 NVL 94GB"),
            ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 SXM4 80GB"),
            ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 SXM4 40GB"),
            ("NVIDIA A100-PCIE-40GB", "NVIDIA A100 PCIe 40GB"),
            ("NVIDIA A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"),
            ("NVIDIA A100-PG509-200", "NVIDIA A100 SXM4 40GB"),
            ("Tesla V100-SXM2-16GB", "NVIDIA Tesla V100 SXM2"),
            ("Tesla V100-SXM2-32GB", "NVIDIA Tesla V100 SXM2"),
            ("Tesla V100-PCIE-16GB", "NVIDIA Tesla V100 PCIe"),
            ("Tesla V100-DGXS-32GB", "NVIDIA Tesla V100 DGXS 32GB"),
            ("Tesla V100S-PCIE-32GB", "NVIDIA Tesla V100S PCIe 32GB"),
            ("Tesla T4", "NVIDIA Tesla T4"),
            ("NVIDIA A10G", "NVIDIA A10G"),
            ("NVIDIA A10", "NVIDIA A10"),
            ("NVIDIA L4", "NVIDIA L4"),
            ("NVIDIA L40S", "NVIDIA L40S"),
            ("NVIDIA H800", "NVIDIA H800 SXM5 80GB"),
            ("NVIDIA H800 PCIe", "NVIDIA H800 PCIe 80GB"),
            ("NVIDIA H20", "NVIDIA H20 96GB"),
            ("NVIDIA H200", "NVIDIA H200 SXM 141GB"),
            ("NVIDIA H200 NVL", "NVIDIA H200 NVL 141GB"),
            ("NVIDIA GH200 480GB", "NVIDIA GH200 96GB HBM3"),
            ("NVIDIA GH200 144G HBM3e", "NVIDIA GH200 144GB HBM3e"),
            ("NVIDIA B200", "NVIDIA B200"),
            ("NVIDIA B300 SXM6 AC", "NVIDIA B300"),
            ("NVIDIA GB200", "NVIDIA GB200 (B200 GPU)"),
            ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"),
            ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"),
            ("NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090"),
            ("NVIDIA GeForce RTX 4090 Laptop GPU", "NVIDIA GeForce RTX 4090 Laptop GPU"),
            ("NVIDIA GeForce RTX 4080 Laptop GPU", "NVIDIA GeForce RTX 4080 Laptop GPU"),
            ("NVIDIA GeForce RTX 3080 Laptop GPU", "NVIDIA GeForce RTX 3080 Laptop GPU"),
            ("Quadro GP100", "NVIDIA Quadro GP100"),
            ("AMD Instinct MI300X", "AMD Instinct MI300X"),
            ("AMD Instinct MI300X VF", "AMD Instinct MI300X"),
            ("AMD Instinct MI300A", "AMD Instinct MI300A"),
            ("AMD Instinct MI250X/MI250", "AMD Instinct MI250X (one GCD)"),
            ("AMD Instinct MI210", "AMD Instinct MI210"),
            ("AMD Instinct MI100", "AMD Instinct MI100"),
            ("AMD Instinct MI325X", "AMD Instinct MI325X"),
            ("AMD Instinct MI350X", "AMD Instinct MI350X"),
            ("AMD Instinct MI355X", "AMD Instinct MI355X"),
        ];
        for (kineto, want) in cases {
            assert_eq!(name_of(kineto), Some(want), "{kineto}");
        }
        // The shared gfx90a name is told apart by CU count.
        let mi250 = lookup("AMD Instinct MI250X/MI250", Some(104), Some((9, 0)), None).unwrap();
        assert_eq!(mi250.name, "AMD Instinct MI250 (one GCD)");
        let mi250x = lookup("AMD Instinct MI250X/MI250", Some(110), Some((9, 0)), None).unwrap();
        assert_eq!(mi250x.name, "AMD Instinct MI250X (one GCD)");
        // Memory size disambiguates A100 names that do not say it.
        assert_eq!(
            lookup("NVIDIA A100-PG509-200", None, None, Some(85_000_000_000)).unwrap().name,
            "NVIDIA A100 SXM4 80GB"
        );
    }

    #[test]
    fn fallbacks_and_unknowns() {
        let mi300x = lookup("", Some(304), Some((9, 4)), Some(206_141_652_992)).unwrap();
        assert_eq!(mi300x.name, "AMD Instinct MI300X");
        let gcd = lookup("AMD Radeon Graphics", Some(104), Some((9, 0)), Some(68_702_699_520)).unwrap();
        assert_eq!(gcd.name, "AMD Instinct MI250 (one GCD)");
        let mi210 = by_name("AMD Instinct MI210").unwrap();
        for p in Precision::ALL {
            assert!((gcd.tflops[p.index()] - mi210.tflops[p.index()]).abs() < 0.1, "{p:?}");
        }
        assert_eq!(lookup("", Some(132), Some((9, 0)), Some(85_000_000_000)).unwrap().name, "NVIDIA H100 SXM5 80GB");
        assert!(lookup("Some Future GPU", None, None, None).is_none());
        assert!(lookup("Some Future GPU", Some(304), Some((9, 4)), Some(206_141_652_992)).is_none());
        assert!(lookup("", None, None, None).is_none());
        assert!(lookup("", Some(7), Some((1, 0)), None).is_none());
        assert!(name_of("NVIDIA GeForce RTX 4090 Ti").is_none());
        assert!(name_of("NVIDIA GeForce RTX 4070 Laptop GPU").is_none());
    }

    #[test]
    fn every_entry_is_sane_and_reachable() {
        for (i, d) in DEVICES.iter().enumerate() {
            assert!(d.tbps > 0.0, "{}", d.name);
            assert!(d.source.contains("http"), "{}", d.name);
            assert!(DEVICES[..i].iter().all(|e| e.name != d.name), "duplicate {}", d.name);
            let fp32 = d.peak(Precision::Fp32).expect(d.name);
            for p in [Precision::Bf16, Precision::Fp16] {
                assert!(d.peak(p).is_none_or(|v| v >= fp32), "{} {p:?}", d.name);
            }
            assert!(d.tflops.iter().all(|v| *v >= 0.0), "{}", d.name);
        }
        for (.., name) in SIGNATURES {
            assert!(by_name(name).is_some(), "{name}");
        }
    }

    #[test]
    fn peak_and_ridge() {
        let h100 = lookup("NVIDIA H100 80GB HBM3", None, None, None).unwrap();
        assert_eq!(h100.peak(Precision::Bf16), Some(989.5));
        assert!((h100.ridge(Precision::Bf16).unwrap() - 989.5 / 3.35).abs() < 1e-9);
        let mi250 = by_name("AMD Instinct MI250 (one GCD)").unwrap();
        assert_eq!(mi250.peak(Precision::Tf32), None);
        assert_eq!(mi250.ridge(Precision::Fp8), None);
    }
}

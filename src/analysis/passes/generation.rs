//! The GPU's generation as far as tensor cores go, from the compute capability or the name.

use crate::report::TraceReport;

/// Tensor cores by compute capability: none before Volta (7.0), fp16 only on Volta/Turing,
/// TF32 and bf16 from Ampere (8.0).
pub enum Generation {
    NoTensorCores,
    Fp16Only,
    Tf32,
    Amd,
    Unknown,
}

pub fn generation(r: &TraceReport) -> Generation {
    let name = r.device.name.as_deref().unwrap_or("");
    if name.contains("AMD") || name.contains("Instinct") || name.contains("Radeon") || name.starts_with("MI") {
        return Generation::Amd;
    }
    let major =
        r.device.compute_capability.as_deref().and_then(|c| c.split('.').next()).and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(m) if m < 7 => Generation::NoTensorCores,
        Some(7) => Generation::Fp16Only,
        Some(_) => Generation::Tf32,
        None if name.contains("V100") || name.contains("T4") || name.contains("RTX 20") || name.contains("Titan V") => {
            Generation::Fp16Only
        }
        None if name.contains("P100") || name.contains("GP100") || name.contains("K80") || name.contains("GTX") => {
            Generation::NoTensorCores
        }
        None => Generation::Unknown,
    }
}

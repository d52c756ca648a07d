//! The number formats a device's peak throughput is quoted in, and the one an op computes in.

use serde::{Deserialize, Serialize};

/// The precision whose peak an op's FLOPs are measured against. Integer and FP8 GEMMs run on
/// the matrix units at their own rate; FP32 work may run at the TF32 rate when the library
/// chose it (the kernel's name says so), else at the plain FP32 rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    Fp64,
    Fp32,
    Tf32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
}

impl Precision {
    pub const ALL: [Precision; 7] = [
        Precision::Fp64,
        Precision::Fp32,
        Precision::Tf32,
        Precision::Bf16,
        Precision::Fp16,
        Precision::Fp8,
        Precision::Int8,
    ];

    /// The position in [`Precision::ALL`], for tables indexed by precision.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stable id (the JSON value).
    pub fn id(self) -> &'static str {
        match self {
            Precision::Fp64 => "fp64",
            Precision::Fp32 => "fp32",
            Precision::Tf32 => "tf32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
            Precision::Fp8 => "fp8",
            Precision::Int8 => "int8",
        }
    }

    /// The precision of a dtype as PyTorch's profiler writes it in `Input type`
    /// (`c10::BFloat16`, `float`, `c10::Float8_e4m3fn`, `signed char`, ...), or None for
    /// types no op computes in (bool, indices) and names not known.
    pub fn of_dtype(t: &str) -> Option<Precision> {
        let t = t.strip_prefix("c10::").unwrap_or(t);
        Some(match t {
            "double" | "Double" | "c10::complex<double>" => Precision::Fp64,
            "float" | "Float" | "complex<float>" => Precision::Fp32,
            "BFloat16" => Precision::Bf16,
            "Half" | "complex<c10::Half>" => Precision::Fp16,
            "signed char" | "unsigned char" | "Char" | "Byte" | "qint8" | "quint8" => Precision::Int8,
            t if t.starts_with("Float8") => Precision::Fp8,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_as_the_profiler_writes_them() {
        let cases = [
            ("c10::BFloat16", Some(Precision::Bf16)),
            ("c10::Half", Some(Precision::Fp16)),
            ("float", Some(Precision::Fp32)),
            ("double", Some(Precision::Fp64)),
            ("c10::Float8_e4m3fn", Some(Precision::Fp8)),
            ("c10::Float8_e5m2fnuz", Some(Precision::Fp8)),
            ("signed char", Some(Precision::Int8)),
            ("long int", None),
            ("bool", None),
            ("", None),
        ];
        for (t, p) in cases {
            assert_eq!(Precision::of_dtype(t), p, "{t}");
        }
        for (i, p) in Precision::ALL.iter().enumerate() {
            assert_eq!(p.index(), i);
        }
    }
}

//! The one place in the core that uses `unsafe`: classifying 64 bytes at a time with SIMD
//! intrinsics (`core::arch`), for the structural scan in `structural.rs` and the flow reader
//! in `flow.rs`.
//!
//! Why unsafe: the x86_64 intrinsics are `unsafe fn`s (they assume the CPU feature they are
//! compiled for; SSE2 is part of x86_64 itself, so they are always sound there), and the
//! unaligned vector load reads through a raw pointer. Each unsafe block below says why it
//! holds. Everything else in `input` keeps `#![forbid(unsafe_code)]`'s rule (as `deny`, so
//! that this module alone can allow it; see docs/architecture.md).
//!
//! [`classify_scalar`] is the reference: the tests and `structural`'s differential tests
//! compare every vector version with it.
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

/// One bit per byte of a 64-byte block (bit i = byte i) for each character looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Masks {
    pub quote: u64,
    pub backslash: u64,
    pub open: u64,
    pub close: u64,
}

/// The reference for [`classify`]: one byte at a time.
#[cfg(test)]
pub fn classify_scalar(b: &[u8; 64], open: u8, close: u8) -> Masks {
    let mut m = Masks::default();
    for (i, &c) in b.iter().enumerate() {
        let bit = 1u64 << i;
        match c {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            c if c == open => m.open |= bit,
            c if c == close => m.close |= bit,
            _ => {}
        }
    }
    m
}

/// The first quote or backslash in `b` (the end, or first escape, of a string). SSE2 on
/// x86_64, NEON on aarch64 (Apple silicon, Graviton, Grace), simd128 in wasm built with it
/// (the page); elsewhere two 8-byte words at a time in plain integer registers (SWAR). (simd128 here once made an older Firefox ESR read 2.3x
/// slower; see docs/performance.md for how it reads in the current browsers.)
#[inline(always)]
pub fn first_quote_or_backslash(b: &[u8; 16]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let hits = sse2::quote_or_backslash(b);
        (hits != 0).then(|| hits.trailing_zeros() as usize)
    }
    #[cfg(target_arch = "aarch64")]
    {
        // Four bits per byte (NEON has no byte mask move; see `neon::nibbles`).
        let hits = neon::quote_or_backslash(b);
        (hits != 0).then(|| hits.trailing_zeros() as usize / 4)
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        let hits = simd128::quote_or_backslash(b);
        (hits != 0).then(|| hits.trailing_zeros() as usize)
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        swar::first_quote_or_backslash(b)
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use core::arch::wasm32::*;

    #[inline(always)]
    pub fn quote_or_backslash(b: &[u8; 16]) -> u32 {
        // SAFETY: the load reads the 16 bytes of a 16-byte array; wasm's loads need no
        // alignment.
        let v = unsafe { v128_load(b.as_ptr() as *const v128) };
        let hit = v128_or(u8x16_eq(v, u8x16_splat(b'"')), u8x16_eq(v, u8x16_splat(b'\\')));
        u8x16_bitmask(hit) as u32
    }

    #[inline(always)]
    pub fn bytes_in<const N: usize>(b: &[u8; 64], chars: [u8; N]) -> [u64; N] {
        let mut m = [0u64; N];
        for k in 0..4 {
            // SAFETY: the load reads 16 bytes at offset 16k < 64 of a 64-byte array; wasm's
            // loads need no alignment.
            let v = unsafe { v128_load(b.as_ptr().add(16 * k) as *const v128) };
            for (m, &x) in m.iter_mut().zip(&chars) {
                *m |= u64::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(x)))) << (16 * k);
            }
        }
        m
    }
}

/// The reference for [`first_quote_or_backslash`].
#[cfg(test)]
pub fn first_quote_or_backslash_scalar(b: &[u8; 16]) -> Option<usize> {
    b.iter().position(|&c| c == b'"' || c == b'\\')
}

/// Eight bytes per step in a u64: the classic zero-byte test, whose lowest flagged byte is
/// always a true zero (a flag above it may be a borrow's false one, so only the first counts).
#[cfg_attr(
    any(target_arch = "x86_64", target_arch = "aarch64", all(target_arch = "wasm32", target_feature = "simd128")),
    allow(dead_code)
)]
pub(crate) mod swar {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;

    #[inline(always)]
    fn zero_bytes(v: u64) -> u64 {
        v.wrapping_sub(ONES) & !v & HIGHS
    }

    #[inline(always)]
    pub fn first_quote_or_backslash(b: &[u8; 16]) -> Option<usize> {
        for (k, w) in b.chunks_exact(8).enumerate() {
            let v = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            let hits = zero_bytes(v ^ (ONES * b'"' as u64)) | zero_bytes(v ^ (ONES * b'\\' as u64));
            if hits != 0 {
                return Some(8 * k + hits.trailing_zeros() as usize / 8);
            }
        }
        None
    }
}

/// Whether [`classify`] uses vector instructions on this target (else it is the scalar one,
/// and a caller may do better with memchr): SSE2 on x86_64, NEON on aarch64, simd128 in wasm
/// built with it (the page, `scripts/build-web.sh`).
pub const VECTOR: bool =
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64", all(target_arch = "wasm32", target_feature = "simd128")));

/// [`classify_scalar`], 16 bytes per instruction where the target has SIMD.
#[inline(always)]
pub fn classify(b: &[u8; 64], open: u8, close: u8) -> Masks {
    let [quote, backslash, open, close] = bytes_in(b, [b'"', b'\\', open, close]);
    Masks { quote, backslash, open, close }
}

/// One mask per byte value of `chars` (bit i = `b[i]` is that value), each 64-byte block
/// loaded once for them all: SIMD where [`VECTOR`], else one byte at a time.
#[inline(always)]
pub fn bytes_in<const N: usize>(b: &[u8; 64], chars: [u8; N]) -> [u64; N] {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::bytes_in(b, chars)
    }
    #[cfg(target_arch = "aarch64")]
    {
        neon::bytes_in(b, chars)
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd128::bytes_in(b, chars)
    }
    #[cfg(not(any(
        target_arch = "x86_64",
        target_arch = "aarch64",
        all(target_arch = "wasm32", target_feature = "simd128")
    )))]
    {
        bytes_in_scalar(b, chars)
    }
}

/// The reference for [`bytes_in`].
#[cfg_attr(
    any(target_arch = "x86_64", target_arch = "aarch64", all(target_arch = "wasm32", target_feature = "simd128")),
    allow(dead_code)
)]
pub fn bytes_in_scalar<const N: usize>(b: &[u8; 64], chars: [u8; N]) -> [u64; N] {
    chars.map(|x| b.iter().enumerate().filter(|&(_, &c)| c == x).fold(0, |m, (i, _)| m | 1 << i))
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use core::arch::x86_64::*;

    #[inline(always)]
    pub fn quote_or_backslash(b: &[u8; 16]) -> u32 {
        // SAFETY: SSE2 is always present on x86_64; the load reads the 16 bytes of a 16-byte
        // array (unaligned loads are allowed by loadu).
        unsafe {
            let v = _mm_loadu_si128(b.as_ptr() as *const __m128i);
            let hit = _mm_or_si128(
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
            );
            _mm_movemask_epi8(hit) as u16 as u32
        }
    }

    #[inline(always)]
    pub fn bytes_in<const N: usize>(b: &[u8; 64], chars: [u8; N]) -> [u64; N] {
        let mut m = [0u64; N];
        for k in 0..4 {
            // SAFETY: SSE2 is always present on x86_64; the load reads 16 bytes at offset
            // 16k < 64 of a 64-byte array (unaligned loads are allowed by loadu).
            let v = unsafe { _mm_loadu_si128(b.as_ptr().add(16 * k) as *const __m128i) };
            for (m, &x) in m.iter_mut().zip(&chars) {
                // SAFETY: SSE2 is always present on x86_64; register-only operations.
                let hits = unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(x as i8))) };
                *m |= (hits as u16 as u64) << (16 * k);
            }
        }
        m
    }
}

/// NEON is part of aarch64 (every 64-bit ARM CPU has it, and Rust's aarch64 targets assume it),
/// so these need no runtime check. NEON has no instruction that gathers one bit per byte
/// (SSE2's `movemask`): a 16-byte compare becomes four bits per byte by a narrowing shift, and
/// 64 bytes one bit per byte by masking each byte with its bit and adding neighbours (simdjson's
/// ARM64 kernel does both).
#[cfg(target_arch = "aarch64")]
mod neon {
    use core::arch::aarch64::*;

    /// Each byte of a compare's result (0 or 0xFF) as four bits of a u64, in byte order.
    #[inline(always)]
    fn nibbles(hit: uint8x16_t) -> u64 {
        // SAFETY: NEON is always present on aarch64; register-only operations.
        unsafe { vget_lane_u64::<0>(vreinterpret_u64_u8(vshrn_n_u16::<4>(vreinterpretq_u16_u8(hit)))) }
    }

    #[inline(always)]
    pub fn quote_or_backslash(b: &[u8; 16]) -> u64 {
        // SAFETY: NEON is always present on aarch64; the load reads the 16 bytes of a 16-byte
        // array (NEON loads need no alignment).
        let hit = unsafe {
            let v = vld1q_u8(b.as_ptr());
            vorrq_u8(vceqq_u8(v, vdupq_n_u8(b'"')), vceqq_u8(v, vdupq_n_u8(b'\\')))
        };
        nibbles(hit)
    }

    /// One bit per byte of four compares' results (0 or 0xFF per byte), 64 bytes in order.
    #[inline(always)]
    fn bits(v: [uint8x16_t; 4]) -> u64 {
        const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
        // SAFETY: NEON is always present on aarch64; the load reads a 16-byte array.
        unsafe {
            let w = vld1q_u8(WEIGHTS.as_ptr());
            let [a, b, c, d] = v.map(|x| vandq_u8(x, w));
            // Each add of neighbours halves the bytes: 64 -> 32 -> 16 -> 8, each byte then the
            // bits of eight input bytes, in order.
            let ab = vpaddq_u8(a, b);
            let cd = vpaddq_u8(c, d);
            let abcd = vpaddq_u8(ab, cd);
            vgetq_lane_u64::<0>(vreinterpretq_u64_u8(vpaddq_u8(abcd, abcd)))
        }
    }

    #[inline(always)]
    pub fn bytes_in<const N: usize>(b: &[u8; 64], chars: [u8; N]) -> [u64; N] {
        // SAFETY: NEON is always present on aarch64; each load reads 16 bytes at offset
        // 16k < 64 of a 64-byte array.
        let v: [uint8x16_t; 4] = core::array::from_fn(|k| unsafe { vld1q_u8(b.as_ptr().add(16 * k)) });
        // SAFETY: register-only NEON operations.
        chars.map(|x| bits(v.map(|v| unsafe { vceqq_u8(v, vdupq_n_u8(x)) })))
    }
}

//! The deterministic random numbers.

/// splitmix64: tiny, fast, deterministic everywhere.
#[derive(Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut r = Rng(seed ^ 0x5851_F42D_4C95_7F2D);
        r.next();
        r
    }
    #[inline]
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// base * (1 +- rel)
    #[inline]
    pub fn around(&mut self, base: u64, rel: f64) -> u64 {
        let x = base as f64 * (1.0 + rel * (2.0 * self.unit() - 1.0));
        if x < 1.0 {
            1
        } else {
            x as u64
        }
    }
    /// Host-side work: +-25 %, and one call in 100 is slow (page faults, GIL, allocator).
    #[inline]
    pub fn cpu(&mut self, base: u64) -> u64 {
        if base == 0 {
            return 0;
        }
        let v = self.around(base, 0.25);
        if self.next().is_multiple_of(100) {
            v * (2 + self.next() % 4)
        } else {
            v
        }
    }
    /// Device work is steady: +-3 %.
    #[inline]
    pub fn gpu(&mut self, base: u64) -> u64 {
        self.around(base, 0.03)
    }
    /// Gap between sibling host events: 0.3 .. 2.3 us.
    #[inline]
    pub fn gap(&mut self) -> u64 {
        300 + self.next() % 2000
    }
    /// Gap between back-to-back kernels on one stream: 0.8 .. 2.4 us.
    #[inline]
    pub fn kgap(&mut self) -> u64 {
        800 + self.next() % 1600
    }
    /// Launch latency: from the launch call returning to the earliest kernel start.
    #[inline]
    pub fn lat(&mut self) -> u64 {
        1500 + self.next() % 3500
    }
}

pub fn mix(a: u64, b: u64) -> u64 {
    let mut r = Rng::new(a ^ b.wrapping_mul(0xD6E8_FEB8_6659_FD93));
    r.next()
}

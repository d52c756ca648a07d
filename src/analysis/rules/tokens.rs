//! Token matching: names are matched on tokens, never raw substrings, so `aten::to` does not
//! match `aten::topk`, `cos` does not match `using`, and `flash` in vLLM's
//! `reshape_and_cache_flash_kernel` is only a word of a KV-cache kernel's name.
//!
//! A name is split into lowercase alphanumeric runs (`s16816gemm`), and each run again at
//! camelCase and letter/digit boundaries (`s`, `16816`, `gemm`). A pattern is one or more
//! space-separated tokens that must appear consecutively in either split; a token may start or
//! end with `*` to match a token suffix or prefix (`*gemm` matches `sgemm`), or both (`*gemm*`).

/// The tokens of a name, in both splits.
pub struct Tokens {
    runs: Vec<String>,
    parts: Vec<String>,
}

impl Tokens {
    pub fn new(name: &str) -> Tokens {
        let mut runs = Vec::new();
        let mut parts = Vec::new();
        for run in name.split(|c: char| !c.is_ascii_alphanumeric()).filter(|r| !r.is_empty()) {
            runs.push(run.to_ascii_lowercase());
            let b = run.as_bytes();
            let mut start = 0;
            for i in 1..b.len() {
                let (p, c) = (b[i - 1], b[i]);
                let camel = p.is_ascii_lowercase() && c.is_ascii_uppercase();
                // "HTTPServer" -> "HTTP", "Server": an upper followed by upper+lower.
                let acronym = p.is_ascii_uppercase()
                    && c.is_ascii_uppercase()
                    && b.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
                let digit = p.is_ascii_digit() != c.is_ascii_digit();
                if camel || acronym || digit {
                    parts.push(run[start..i].to_ascii_lowercase());
                    start = i;
                }
            }
            parts.push(run[start..].to_ascii_lowercase());
        }
        Tokens { runs, parts }
    }

    /// Whether `pattern` (space-separated tokens, `*` wildcards at token ends) occurs.
    pub fn matches(&self, pattern: &str) -> bool {
        let pat: Vec<&str> = pattern.split(' ').collect();
        seq_match(&self.runs, &pat) || seq_match(&self.parts, &pat)
    }

    pub fn any(&self, patterns: &[&str]) -> Option<usize> {
        patterns.iter().position(|p| self.matches(p))
    }
}

fn token_match(tok: &str, pat: &str) -> bool {
    match (pat.strip_prefix('*'), pat.strip_suffix('*')) {
        (Some(inner), _) if inner.ends_with('*') => tok.contains(&inner[..inner.len() - 1]),
        (Some(suffix), _) => tok.ends_with(suffix),
        (None, Some(prefix)) => tok.starts_with(prefix),
        (None, None) => tok == pat,
    }
}

fn seq_match(toks: &[String], pat: &[&str]) -> bool {
    if pat.is_empty() || toks.len() < pat.len() {
        return false;
    }
    (0..=toks.len() - pat.len()).any(|i| pat.iter().zip(&toks[i..]).all(|(p, t)| token_match(t, p)))
}

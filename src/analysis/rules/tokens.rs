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
        // One token (nearly every pattern): read once, tried on each token without a list.
        if !pattern.as_bytes().contains(&b' ') {
            let pat = TokenPattern::new(pattern);
            let one = |t: &String| pat.matches(t);
            return self.runs.iter().any(one) || self.parts.iter().any(one);
        }
        // A few tokens: split into an array on the stack, not a list (a pattern of more is
        // split into a list).
        let mut few = [""; 8];
        let mut n = 0;
        for (slot, p) in few.iter_mut().zip(pattern.split(' ')) {
            *slot = p;
            n += 1;
        }
        let many: Vec<&str>;
        let pat = if n < few.len() {
            &few[..n]
        } else {
            many = pattern.split(' ').collect();
            &many[..]
        };
        seq_match(&self.runs, pat) || seq_match(&self.parts, pat)
    }

    pub fn any(&self, patterns: &[&str]) -> Option<usize> {
        patterns.iter().position(|p| self.matches(p))
    }
}

/// One token of a pattern, its wildcards read.
enum TokenPattern<'p> {
    Contains(&'p str),
    Suffix(&'p str),
    Prefix(&'p str),
    Exact(&'p str),
}

impl<'p> TokenPattern<'p> {
    fn new(pat: &'p str) -> Self {
        match (pat.strip_prefix('*'), pat.strip_suffix('*')) {
            (Some(inner), _) if inner.ends_with('*') => TokenPattern::Contains(&inner[..inner.len() - 1]),
            (Some(suffix), _) => TokenPattern::Suffix(suffix),
            (None, Some(prefix)) => TokenPattern::Prefix(prefix),
            (None, None) => TokenPattern::Exact(pat),
        }
    }

    fn matches(&self, tok: &str) -> bool {
        match *self {
            TokenPattern::Contains(p) => tok.contains(p),
            TokenPattern::Suffix(p) => tok.ends_with(p),
            TokenPattern::Prefix(p) => tok.starts_with(p),
            TokenPattern::Exact(p) => tok == p,
        }
    }
}

fn token_match(tok: &str, pat: &str) -> bool {
    TokenPattern::new(pat).matches(tok)
}

fn seq_match(toks: &[String], pat: &[&str]) -> bool {
    if pat.is_empty() || toks.len() < pat.len() {
        return false;
    }
    (0..=toks.len() - pat.len()).any(|i| pat.iter().zip(&toks[i..]).all(|(p, t)| token_match(t, p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The matcher as first written (the pattern split into a list per call, each token's
    /// wildcards read per token): the reference for the one that reads a pattern once.
    fn reference(t: &Tokens, pattern: &str) -> bool {
        let pat: Vec<&str> = pattern.split(' ').collect();
        let seq = |toks: &[String]| {
            toks.len() >= pat.len()
                && (0..=toks.len() - pat.len()).any(|i| pat.iter().zip(&toks[i..]).all(|(p, t)| token_match(t, p)))
        };
        seq(&t.runs) || seq(&t.parts)
    }

    #[test]
    fn patterns_of_one_a_few_and_many_tokens_match_as_the_reference_does() {
        let names = [
            "aten::topk",
            "ProfilerStep#12",
            "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_relu_bf16_64x64_32x6_tn_align8>(Params)",
            "HTTPServer.moe_router.topk",
            "a b c d e f g h i j",
            "",
        ];
        let patterns = [
            "topk",
            "to",
            "top*",
            "*k",
            "*op*",
            "*",
            "**",
            "",
            "profiler step",
            "step 12",
            "*gemm relu",
            "s 16816 gemm",
            "moe router topk",
            "a b c d e f g h",
            "a b c d e f g h i",
            "b c d e f g h i j",
            "a b c d e f g h i j k",
            "http server",
            "server moe",
        ];
        let mut matched = 0;
        for name in names {
            let t = Tokens::new(name);
            for p in patterns {
                assert_eq!(t.matches(p), reference(&t, p), "{name:?} {p:?}");
                matched += t.matches(p) as usize;
            }
        }
        // Both answers occur, for one-token and many-token patterns alike.
        assert!(matched > 10 && matched < names.len() * patterns.len() - 10, "{matched}");
        assert!(Tokens::new("a b c d e f g h i j").matches("b c d e f g h i j"));
        assert!(!Tokens::new("a b c d e f g h i j").matches("a b c d e f g h i j k"));
    }
}

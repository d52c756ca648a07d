//! The user's own rules (`pattern => bucket` lines), tried before the built-in ones.

use crate::analysis::rules::kernel_name::KernelName;
use crate::analysis::rules::tokens::Tokens;
use crate::vocab::Bucket;

/// A rule of the user's own: kernels whose name matches `pattern` (token syntax, see
/// [`Tokens`]) go to `bucket`, before any built-in rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRule {
    pub pattern: String,
    pub bucket: Bucket,
}

impl UserRule {
    pub fn matches(&self, name: &KernelName) -> bool {
        let t = Tokens::new(&name.match_text());
        self.pattern.split('|').any(|p| t.matches(p.trim()))
    }
}

/// What one of the user's rules does to a report's kernels (first matching rule wins, as in
/// the analysis): the kernels it takes, and from which buckets.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleEffect {
    /// Distinct kernel names it matches.
    pub kernels: u64,
    pub calls: u64,
    pub time_us: f64,
    /// Time it moves out of each other bucket (largest first).
    pub moves: Vec<(Bucket, f64)>,
}

/// The effect of `rules` on `kernels` (demangled name, current bucket, time, calls), checked
/// live in the page before the trace is analysed again with them.
pub fn rule_effects<'a>(
    rules: &[UserRule],
    kernels: impl IntoIterator<Item = (&'a str, Bucket, f64, u64)>,
) -> Vec<RuleEffect> {
    let mut out = vec![RuleEffect::default(); rules.len()];
    if rules.is_empty() {
        return out; // nothing to match: no kernel name to parse
    }
    for (name, bucket, time_us, calls) in kernels {
        let name = KernelName::parse_demangled(name.to_string());
        let Some(i) = rules.iter().position(|r| r.matches(&name)) else { continue };
        let e = &mut out[i];
        e.kernels += 1;
        e.calls += calls;
        e.time_us += time_us;
        if bucket != rules[i].bucket {
            match e.moves.iter_mut().find(|m| m.0 == bucket) {
                Some(m) => m.1 += time_us,
                None => e.moves.push((bucket, time_us)),
            }
        }
    }
    for e in &mut out {
        e.moves.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    out
}

/// Reads rules, one per line: `pattern => bucket_id`; `#` starts a comment. Errors name the
/// line.
pub fn parse_rules(text: &str) -> Result<Vec<UserRule>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let Some((pattern, bucket)) = line.split_once("=>") else {
            return Err(format!("line {}: expected `pattern => bucket`, found `{line}`", n + 1));
        };
        let id = bucket.trim();
        let bucket = Bucket::ALL.iter().copied().find(|b| b.id() == id).ok_or_else(|| {
            let ids: Vec<&str> = Bucket::ALL.iter().map(|b| b.id()).collect();
            format!("line {}: unknown bucket `{id}` (one of: {})", n + 1, ids.join(", "))
        })?;
        let pattern = pattern.trim().to_ascii_lowercase();
        if pattern.is_empty() {
            return Err(format!("line {}: empty pattern", n + 1));
        }
        out.push(UserRule { pattern, bucket });
    }
    Ok(out)
}

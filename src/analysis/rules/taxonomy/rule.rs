//! The one shape every naming rule has: a matcher over a name and what the rule concludes
//! when it matches, with the few words shown as the reason. Kernel names, op contexts, leaf
//! ops, tensor-core use, attention scopes and the interned names' flags are all tables of
//! [`Rule`]s; only the conclusion's type differs.

// The contiguous NFA alone, not `AhoCorasick`, which carries every automaton's code: the
// index added 103 kB to the worker's wasm this way, 159 kB that way (35 / 54 kB gzipped).
use aho_corasick::automaton::{Automaton, OverlappingState};
use aho_corasick::nfa::contiguous::NFA;
use aho_corasick::Input;
use rustc_hash::FxHashMap;
use std::cell::OnceCell;

use crate::analysis::rules::kernel_name::KernelName;
use crate::analysis::rules::tokens::Tokens;

/// What a rule looks at in a name.
#[derive(Debug, Clone, Copy)]
pub enum Match {
    /// Any of these token patterns occurs (see [`Tokens`]).
    Any(&'static [&'static str]),
    /// Every entry has a pattern that occurs; an entry lists alternatives separated by `|`.
    All(&'static [&'static str]),
    /// A kernel's base name is in one of these namespaces (any level).
    Namespace(&'static [&'static str]),
    /// A kernel in one of these namespaces (any level) whose function name has one of these
    /// token patterns: a family known by its structure, whatever its top namespace.
    Scoped(&'static [&'static str], &'static [&'static str]),
    /// The name starts with one of these.
    Prefix(&'static [&'static str]),
    /// The name is `aten::<name>` for one of these names, exactly.
    Aten(&'static [&'static str]),
    /// The name is one of these, exactly.
    Exact(&'static [&'static str]),
    /// The name contains one of these, byte for byte (case counts).
    Contains(&'static [&'static str]),
}

/// One rule: when the name matches, the rule concludes `then`, for the reason `why`.
#[derive(Debug)]
pub struct Rule<T> {
    pub when: Match,
    pub then: T,
    /// The family, in a few words: shown as the rule that matched.
    pub why: &'static str,
}

impl<T> Rule<T> {
    pub const fn new(when: Match, then: T, why: &'static str) -> Self {
        Rule { when, then, why }
    }
}

/// A name being matched: its text, its tokens (split on first use), and for a kernel its
/// parsed name (namespaces; tokens of the base name and wrapped names).
pub struct Subject<'a> {
    text: &'a str,
    kernel: Option<&'a KernelName>,
    /// The text token rules read (a kernel's base and wrapped names), made once.
    token_text: OnceCell<std::borrow::Cow<'a, str>>,
    tokens: OnceCell<Tokens>,
    lowercase: OnceCell<String>,
}

impl<'a> Subject<'a> {
    /// An op, module or annotation name.
    pub fn name(text: &'a str) -> Self {
        Subject { text, kernel: None, token_text: OnceCell::new(), tokens: OnceCell::new(), lowercase: OnceCell::new() }
    }

    /// A kernel: token rules read its base and wrapped names, not the signature.
    pub fn kernel(name: &'a KernelName) -> Self {
        let (text, kernel) = (name.full.as_str(), Some(name));
        Subject { text, kernel, token_text: OnceCell::new(), tokens: OnceCell::new(), lowercase: OnceCell::new() }
    }

    pub fn tokens(&self) -> &Tokens {
        self.tokens.get_or_init(|| Tokens::new(self.token_text()))
    }

    /// The text the tokens are taken from, in lowercase: every token is a piece of it.
    fn lowercase(&self) -> &str {
        self.lowercase.get_or_init(|| self.token_text().to_ascii_lowercase())
    }

    fn token_text(&self) -> &str {
        self.token_text.get_or_init(|| match self.kernel {
            Some(k) => k.match_text().into(),
            None => self.text.into(),
        })
    }
}

impl Match {
    pub fn matches(&self, s: &Subject) -> bool {
        match self {
            Match::Any(p) => s.tokens().any(p).is_some(),
            Match::All(groups) => groups.iter().all(|g| g.split('|').any(|p| s.tokens().matches(p))),
            Match::Namespace(ns) => s.kernel.is_some_and(|k| k.namespaces().any(|n| ns.contains(&n))),
            Match::Scoped(ns, f) => s.kernel.is_some_and(|k| {
                let function = k.base.rsplit("::").next().unwrap_or("");
                k.namespaces().any(|n| ns.contains(&n)) && Tokens::new(function).any(f).is_some()
            }),
            Match::Prefix(p) => p.iter().any(|p| s.text.starts_with(p)),
            Match::Aten(names) => s.text.strip_prefix("aten::").is_some_and(|n| names.contains(&n)),
            Match::Exact(names) => names.contains(&s.text),
            Match::Contains(p) => p.iter().any(|p| s.text.contains(p)),
        }
    }

    /// The literals of which a name's lowercased text must hold one for this to match, where
    /// it is made of token patterns: each pattern's (its first token's) without wildcards, for
    /// an `Any`, or an `All`'s first group. None for any other matcher, or a pattern with no
    /// literal (`*`).
    fn literals(&self) -> Option<Vec<&'static str>> {
        let patterns: Vec<&'static str> = match *self {
            Match::Any(p) => p.to_vec(),
            Match::All(groups) => groups.first()?.split('|').collect(),
            _ => return None,
        };
        let literal = |p: &'static str| {
            let token = p.split(' ').next().unwrap_or("").trim_matches('*');
            (!token.is_empty()).then_some(token)
        };
        patterns.into_iter().map(literal).collect::<Option<Vec<_>>>().filter(|l| !l.is_empty())
    }

    /// How the rule reads in the tables of docs/definitions.md.
    pub fn describe(&self) -> String {
        let list =
            |items: &[&str], f: &dyn Fn(&str) -> String| items.iter().map(|x| f(x)).collect::<Vec<_>>().join(", ");
        match self {
            Match::Any(p) => p.join(", "),
            Match::All(g) => {
                g.iter().map(|x| format!("({})", x.replace('|', " or "))).collect::<Vec<_>>().join(" and ")
            }
            Match::Namespace(ns) => list(ns, &|n| format!("{n}::")),
            Match::Scoped(ns, f) => format!("{} with {}", list(ns, &|n| format!("{n}::")), f.join(", ")),
            Match::Prefix(p) => list(p, &|x| format!("{x}*")),
            Match::Aten(n) => list(n, &|x| format!("aten::{x}")),
            Match::Exact(n) => n.join(", "),
            Match::Contains(p) => list(p, &|x| format!("*{x}*")),
        }
    }
}

/// The first rule of `rules` that `s` matches (its index).
pub fn first<T>(rules: &[Rule<T>], s: &Subject) -> Option<usize> {
    rules.iter().position(|r| r.when.matches(s))
}

/// A large table with the literals its rules need: [`first`] without trying every rule on
/// every name. A token pattern matches inside one of the name's tokens, and the tokens are
/// pieces of the name's lowercased text; so a rule of token patterns can only match a name
/// whose lowercased text holds the literal of one of its patterns (`gemm` of `*gemm*`, of a
/// pattern of several tokens its first one's). One Aho-Corasick pass finds the literals a name
/// holds; rules that need one it lacks are not tried, the others are, in table order: the same
/// rule as [`first`]. (Each rule tried on each distinct kernel name cost about 30 us a name:
/// a trace of 40 k distinct kernel names took 1.4 s.)
pub struct Index<T: 'static> {
    rules: &'static [Rule<T>],
    /// None where the automaton could not be built: every rule is then tried.
    literals: Option<NFA>,
    /// For each rule, the literals (ids) of which a name must hold one, an `Any`'s one for
    /// each of its patterns; None: tried on every name.
    needs: Vec<Option<Vec<u32>>>,
}

impl<T> Index<T> {
    pub fn new(rules: &'static [Rule<T>]) -> Index<T> {
        let mut ids: FxHashMap<&'static str, u32> = FxHashMap::default();
        let mut literals: Vec<&'static str> = Vec::new();
        let mut id = |l: &'static str| {
            *ids.entry(l).or_insert_with(|| {
                literals.push(l);
                literals.len() as u32 - 1
            })
        };
        let needs = rules.iter().map(|r| r.when.literals().map(|ls| ls.into_iter().map(&mut id).collect())).collect();
        Index { rules, literals: NFA::new(&literals).ok(), needs }
    }

    /// What [`first`] gives for the table.
    pub fn first(&self, s: &Subject) -> Option<usize> {
        let Some(nfa) = &self.literals else { return first(self.rules, s) };
        let mut held = vec![false; nfa.patterns_len()];
        let (input, mut state) = (Input::new(s.lowercase()), OverlappingState::start());
        while let (Ok(()), Some(m)) = (nfa.try_find_overlapping(&input, &mut state), state.get_match()) {
            held[m.pattern().as_usize()] = true;
        }
        let held = |l: &u32| held[*l as usize];
        self.rules.iter().zip(&self.needs).position(|(rule, needs)| match (&rule.when, needs) {
            // An `Any`'s literals are its patterns', in order: only those with theirs are tried.
            (Match::Any(patterns), Some(ls)) => patterns.iter().zip(ls).any(|(p, l)| held(l) && s.tokens().matches(p)),
            (when, Some(ls)) => ls.iter().any(held) && when.matches(s),
            (when, None) => when.matches(s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_matcher_reads_its_own_part_of_the_name() {
        let op = |m: Match, s: &str| m.matches(&Subject::name(s));
        // Tokens: `aten::to` is not `aten::topk`.
        assert!(op(Match::Any(&["topk*"]), "aten::topk"));
        assert!(!op(Match::Any(&["to"]), "aten::topk"));
        assert!(op(Match::All(&["moe|router", "topk"]), "router.topk"));
        assert!(!op(Match::All(&["moe|router", "topk"]), "router.sort"));
        // Aten and Exact are whole names; Prefix and Contains are text, case counts.
        assert!(op(Match::Aten(&["mm"]), "aten::mm"));
        assert!(!op(Match::Aten(&["mm"]), "aten::mm_out"));
        assert!(op(Match::Exact(&["cudaFree"]), "cudaFree"));
        assert!(!op(Match::Exact(&["cudaFree"]), "cudaFreeHost"));
        assert!(op(Match::Prefix(&["ProfilerStep#"]), "ProfilerStep#3"));
        assert!(!op(Match::Contains(&["Launch"]), "LAUNCH"));
        // Namespaces are a kernel's: an op name has none.
        assert!(!op(Match::Namespace(&["deep_ep"]), "deep_ep::dispatch"));
        let k = KernelName::parse("void deep_ep::intranode::dispatch<8>(int*)");
        assert!(Match::Namespace(&["intranode"]).matches(&Subject::kernel(&k)));
        // Scoped: the namespace and the function's own name, not a namespace's.
        assert!(Match::Scoped(&["intranode"], &["dispatch*"]).matches(&Subject::kernel(&k)));
        let ns_only = KernelName::parse("void dispatch::intranode::barrier<8>(int*)");
        assert!(!Match::Scoped(&["intranode"], &["dispatch*"]).matches(&Subject::kernel(&ns_only)));
    }

    #[test]
    fn the_first_matching_rule_decides() {
        let rules = [Rule::new(Match::Any(&["gemm*"]), 1, "a"), Rule::new(Match::Any(&["*gemm*"]), 2, "b")];
        assert_eq!(first(&rules, &Subject::name("gemm_kernel")), Some(0));
        assert_eq!(first(&rules, &Subject::name("sgemm_kernel")), Some(1));
        assert_eq!(first(&rules, &Subject::name("copy")), None);
    }
}

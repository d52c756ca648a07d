//! The indexed rule tables ([`rule::Index`]) against the same tables tried rule by rule, on
//! names made from every pattern of each table.

use super::*;

/// The kernel families' real names, from the family tests.
fn family_names() -> Vec<String> {
    super::tests::FAMILIES.iter().flat_map(|(_, cases)| cases.iter().map(|(n, _)| n.to_string())).collect()
}

/// The patterns and names a matcher lists.
fn patterns(m: &Match) -> Vec<&'static str> {
    match *m {
        Any(p) => p.to_vec(),
        All(groups) => groups.iter().flat_map(|g| g.split('|')).collect(),
        Match::Aten(n) | Match::Prefix(n) | Match::Exact(n) | Match::Contains(n) => n.to_vec(),
        Match::Namespace(_) | Match::Scoped(..) => Vec::new(),
    }
}

/// Kernel names that hold each pattern of the kernel and tensor-core tables (wildcards filled,
/// tokens joined as a library would), in three spellings, beside the families' real names.
fn names_for_every_pattern() -> Vec<String> {
    let mut names = family_names();
    let whens = KERNEL_RULES.iter().map(|r| &r.when).chain(TENSOR_CORE_RULES.iter().map(|r| &r.when));
    for p in whens.flat_map(patterns) {
        let word = p.replace('*', "x").replace(' ', "_");
        names.push(format!("void at::native::{word}_kernel<float, 128>(float*, int)"));
        names.push(format!("{}Kernel", word.to_uppercase()));
        names.push(format!("triton_poi_fused_{word}_0"));
    }
    names
}

#[test]
fn the_indexed_tables_give_the_rule_each_rule_tried_in_turn_gives() {
    let names = names_for_every_pattern();
    let mut matched = std::collections::BTreeSet::new();
    for name in &names {
        let k = KernelName::parse(name);
        let subject = Subject::kernel(&k);
        let rule = rule::first(KERNEL_RULES, &subject);
        assert_eq!(KERNEL_INDEX.first(&subject), rule, "{name}");
        // The index on a subject of its own, whose tokens no rule has split yet.
        let tc = rule::first(TENSOR_CORE_RULES, &subject);
        assert_eq!(TENSOR_CORE_INDEX.first(&Subject::kernel(&k)), tc, "{name}");
        matched.extend(rule);
    }
    // Not a comparison of Nones: most of the table's rules are what some name matched.
    assert!(matched.len() * 10 > KERNEL_RULES.len() * 7, "{} of {} rules matched", matched.len(), KERNEL_RULES.len());
}

#[test]
fn the_indexed_op_tables_give_the_rule_each_rule_tried_in_turn_gives() {
    use leaf_rules::{LEAF_OP_INDEX, LEAF_OP_RULES};
    use op_rules::{OP_CONTEXT_INDEX, OP_CONTEXT_RULES};
    let whens = OP_CONTEXT_RULES.iter().map(|r| &r.when).chain(LEAF_OP_RULES.iter().map(|r| &r.when));
    let mut names =
        vec!["ProfilerStep#12".to_string(), "aten::mm".to_string(), "Optimizer.step#AdamW.step".to_string()];
    for p in whens.flat_map(patterns) {
        let word = p.replace('*', "x").replace(' ', "_");
        names.push(format!("aten::{word}"));
        names.push(word.clone());
        names.push(format!("nn.Module: {}Block_3", word.to_uppercase()));
    }
    let (mut context, mut leaf) = (std::collections::BTreeSet::new(), std::collections::BTreeSet::new());
    for name in &names {
        let c = rule::first(OP_CONTEXT_RULES, &Subject::name(name));
        assert_eq!(OP_CONTEXT_INDEX.first(&Subject::name(name)), c, "{name}");
        let l = rule::first(LEAF_OP_RULES, &Subject::name(name));
        assert_eq!(LEAF_OP_INDEX.first(&Subject::name(name)), l, "{name}");
        context.extend(c);
        leaf.extend(l);
    }
    assert!(context.len() * 10 > OP_CONTEXT_RULES.len() * 7, "{} of {}", context.len(), OP_CONTEXT_RULES.len());
    assert!(leaf.len() * 10 > LEAF_OP_RULES.len() * 7, "{} of {}", leaf.len(), LEAF_OP_RULES.len());
}

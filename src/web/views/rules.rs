//! Your own bucket rules: `pattern => bucket` lines, checked live against this trace's kernels
//! (what each rule takes, and from which bucket), kept in the browser's local storage, applied
//! by analysing the trace again, and carried in share links.

use super::widgets::{bucket_class, swatch};
use crate::analysis::rules::taxonomy::{parse_rules, rule_effects, RuleEffect, UserRule};
use crate::report::TraceReport;
use crate::web::format;
use crate::web::state::saved::{save_rules, saved_rules};
use leptos::prelude::*;

const EXAMPLE: &str = "# one rule per line, first match wins; * at a token's end\nmy_fused_mlp* => gemm\n";

type Checked = Result<Vec<(UserRule, RuleEffect)>, String>;

fn check(text: &str, trace: &TraceReport) -> Checked {
    let rules = parse_rules(text)?;
    if text.len() > crate::web::view_state::MAX_RULES_BYTES {
        return Err(format!(
            "longer than {} bytes: a share link could not carry it",
            crate::web::view_state::MAX_RULES_BYTES
        ));
    }
    // Every kernel when the report has them (a trace), else the top ones (a share link).
    let rows: Vec<_> = if trace.kernels.is_empty() {
        trace.top_kernels.iter().map(|k| (k.name.as_str(), k.bucket, k.time_us, k.count)).collect()
    } else {
        trace.kernels.iter().map(|k| (k.name.as_str(), k.bucket, k.time_us, k.count)).collect()
    };
    let effects = rule_effects(&rules, rows);
    Ok(rules.into_iter().zip(effects).collect())
}

#[component]
pub fn RulesSection(
    trace: super::widgets::TraceRef,
    /// The rules this report was made with.
    applied: String,
    /// Analyses the trace again with new rules (None: no trace to read, e.g. a share link).
    on_apply: Option<Callback<String>>,
) -> impl IntoView {
    let start = if applied.is_empty() { saved_rules() } else { applied.clone() };
    let text = RwSignal::new(start);
    let checked = Memo::new(move |_| text.with(|t| check(t, &trace)));
    let changed = {
        let applied = applied.clone();
        move || text.with(|t| t.trim() != applied.trim())
    };
    let changed = Signal::derive(changed);
    let changed = move || changed.get();
    let has_applied = !applied.trim().is_empty();
    let can_apply = move || on_apply.is_some() && checked.with(|c| c.is_ok()) && changed();
    let apply = move |_| {
        if let Some(cb) = on_apply {
            let t = text.get_untracked();
            save_rules(&t);
            cb.run(t);
        }
    };
    let ids: Vec<&str> = crate::analysis::rules::taxonomy::Bucket::ALL.iter().map(|b| b.id()).collect();
    view! {
        <section class="panel" aria-labelledby="rules-h" data-testid="rules">
            <h2 id="rules-h">"Your bucket rules"</h2>
            <p class="muted">{format!(
                "pattern => bucket, one per line, tried before the built-in rules; kept in this browser and carried in share links; the CLI reads the same file with --rules. Buckets: {}.",
                ids.join(", "))}</p>
            <textarea class="rules-text" data-testid="rules-text" rows="4" spellcheck="false" placeholder=EXAMPLE
                prop:value=move || text.get()
                on:input:target=move |ev| text.set(ev.target().value())></textarea>
            <RulesCheck checked />
            <div class="rules-actions">
                <button type="button" class="button primary" data-testid="rules-apply" disabled=move || !can_apply() on:click=apply>
                    "Apply: analyse again"
                </button>
                {on_apply.is_none().then(|| view! { <span class="muted">"Open the trace itself to apply rules: this view has the summary only."</span> })}
                {move || (has_applied && !changed()).then(|| view! { <span class="muted" data-testid="rules-applied">"This report was made with the rules above."</span> })}
            </div>
        </section>
    }
}

/// What each rule takes from this trace and from which bucket, or why the rules cannot be read.
#[component]
fn RulesCheck(checked: Memo<Checked>) -> impl IntoView {
    move || {
        match checked.get() {
        Err(e) => view! { <p class="notice warning" data-testid="rules-error">{e}</p> }.into_any(),
        Ok(rows) if rows.is_empty() => view! {
            <p class="muted">"No rules yet. A rule sends kernels whose name matches the pattern to a bucket, before any built-in rule."</p>
        }
        .into_any(),
        Ok(rows) => view! {
            <table class="data" data-testid="rules-check">
                <thead><tr><th scope="col">"Pattern"</th><th scope="col">"Bucket"</th><th scope="col" class="num">"Kernels"</th>
                    <th scope="col" class="num">"Time"</th><th scope="col">"Moves from"</th></tr></thead>
                <tbody>
                    {rows.into_iter().map(|(rule, e)| view! {
                        <tr class:unused=e.kernels == 0>
                            <td><code>{rule.pattern.clone()}</code></td>
                            <td>{swatch(bucket_class(rule.bucket))}{rule.bucket.name()}</td>
                            <td class="num">{format::count(e.kernels)}</td>
                            <td class="num">{format::us(e.time_us)}</td>
                            <td>{moves(&e)}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        }
        .into_any(),
    }
    }
}

/// Where a rule's kernels were before it: each bucket with the time the rule takes from it.
fn moves(e: &RuleEffect) -> String {
    if e.kernels == 0 {
        "no kernel in this trace matches".to_string()
    } else if e.moves.is_empty() {
        "nothing: already in this bucket".to_string()
    } else {
        e.moves.iter().map(|(b, t)| format!("{} {}", b.name(), format::us(*t))).collect::<Vec<_>>().join(", ")
    }
}

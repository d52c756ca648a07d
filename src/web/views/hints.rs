use crate::report::{Diagnostic, Hint};
use crate::web::format;
use leptos::prelude::*;

/// Hints as cards in the report's order (largest GPU time at stake first), each with the time
/// at stake and the numbers that triggered it.
#[component]
pub fn HintCards(hints: Vec<Hint>) -> impl IntoView {
    let empty = hints.is_empty();
    view! {
        <section class="panel" aria-labelledby="hints-h" data-testid="hints">
            <h2 id="hints-h">"Hints"</h2>
            {empty.then(|| view! { <p class="empty">"Nothing stands out: no hint rule fired for this trace."</p> })}
            <div class="hint-grid">
                {hints.into_iter().map(|h| view! {
                    <article class=format!("hint hint-{}", h.severity.as_str())>
                        <header>
                            <span class=format!("badge sev-{}", h.severity.as_str())>{h.severity.as_str()}</span>
                            <code class="muted">{h.id.id()}</code>
                            <span class="num muted" data-testid="hint-stake">{format!("{} at stake", format::us(h.stake_us))}</span>
                        </header>
                        <p class="hint-msg">{super::widgets::rich(&h.message)}</p>
                        {(!h.evidence.is_empty()).then(|| view! {
                            <ul class="evidence">{h.evidence.iter().map(|e| view! { <li class="num">{e.clone()}</li> }).collect_view()}</ul>
                        })}
                        {(!h.fix.is_empty()).then(|| view! { <p class="hint-fix"><strong>"Try: "</strong>{super::widgets::rich(&h.fix)}</p> })}
                    </article>
                }).collect_view()}
            </div>
        </section>
    }
}

/// What the reader noticed about the file itself, folded away.
#[component]
pub fn Diagnostics(diagnostics: Vec<Diagnostic>) -> impl IntoView {
    let n = diagnostics.len();
    view! {
        <section class="panel diagnostics">
            <details data-testid="diagnostics">
                <summary><h2>{format!("Diagnostics ({n})")}</h2></summary>
                {if n == 0 {
                    view! { <p class="empty">"The file was read without surprises."</p> }.into_any()
                } else {
                    view! {
                        <table class="data">
                            <thead><tr><th scope="col">"Severity"</th><th scope="col">"Id"</th><th scope="col" class="num">"Count"</th><th scope="col">"Explanation"</th></tr></thead>
                            <tbody>{diagnostics.into_iter().map(|d| view! {
                                <tr>
                                    <td><span class=format!("badge sev-{}", d.severity.as_str())>{d.severity.as_str()}</span></td>
                                    <td><code>{d.id.id()}</code></td>
                                    <td class="num">{d.count}</td>
                                    <td>{d.message}</td>
                                </tr>
                            }).collect_view()}</tbody>
                        </table>
                    }.into_any()
                }}
            </details>
        </section>
    }
}

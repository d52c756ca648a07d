use super::widgets::{backend_class, backend_label};
use crate::analysis::rules::taxonomy::Backend;
use crate::report::Attention;
use crate::web::format;
use leptos::prelude::*;

const FLASH_SNIPPET: &str = concat!(
    "from torch.nn.attention import sdpa_kernel, SDPBackend\n\n",
    "with sdpa_kernel(SDPBackend.FLASH_ATTENTION):  # raises an error naming why flash cannot run\n",
    "    out = model(inputs)",
);

/// The attention verdict, its evidence, and when it is not flash: why, and the fix.
#[component]
pub fn AttentionSection(attention: Attention) -> impl IntoView {
    let a = attention;
    // Fused flash kernels (PyTorch's, the flash-attn package's, or a vendor's own, e.g.
    // AMD's Triton attn_fwd) need no advice; the unfused or slower SDPA backends do.
    let not_flash = a.fix.is_some() || !a.backend.is_fused_flash_like() && a.backend != Backend::None;
    let verdict = match a.backend {
        Backend::None => "No attention kernels or SDPA ops were found in this trace.".to_string(),
        Backend::Flash | Backend::FlashAttn => {
            format!("Attention runs fused flash kernels ({} of GPU time).", format::us(a.time_us))
        }
        Backend::Vendor => format!(
            "Attention runs a fused kernel of {} ({} of GPU time); see the evidence below.",
            a.library.as_deref().unwrap_or("another library"),
            format::us(a.time_us)
        ),
        Backend::Eager => format!(
            "Attention is written by hand (matmul, softmax, matmul), not through SDPA: {} of GPU time.",
            format::us(a.time_us)
        ),
        _ => format!(
            "Attention does not use the flash kernel: {} of GPU time went to the {} backend.",
            format::us(a.time_us),
            backend_label(a.backend)
        ),
    };
    let evidence = a.evidence.iter().map(|e| view! {
        <tr>
            <td>{backend_label(e.backend)}</td>
            <td>{e.kind.to_string()}</td>
            <td class="name"><span class="kname" title=e.name.clone()>{if e.short.is_empty() { e.name.clone() } else { e.short.clone() }}</span></td>
            <td class="num">{format::us(e.time_us)}</td>
            <td class="num">{format::count(e.count)}</td>
        </tr>
    }).collect_view();
    let has_evidence = !a.evidence.is_empty();
    view! {
        <section class="panel" aria-labelledby="attn-h">
            <h2 id="attn-h">"Attention backend"</h2>
            <p class="verdict">
                <span class=format!("badge backend-{}", backend_class(a.backend)) data-testid="attention-backend"
                      data-backend=a.backend.id()>{backend_label(a.backend)}</span>
                " " {verdict}
            </p>
            {(a.total_us > a.time_us && a.time_us > 0.0).then(|| view! {
                <p class="muted">{format!("All attention work (every backend, incl. unfused math under SDPA): {}.", format::us(a.total_us))}</p>
            })}
            {has_evidence.then(|| view! {
                <table class="data">
                    <caption>"Evidence"</caption>
                    <thead><tr><th scope="col">"Backend"</th><th scope="col">"Matched"</th><th scope="col">"Name"</th>
                        <th scope="col" class="num">"Time"</th><th scope="col" class="num">"Count"</th></tr></thead>
                    <tbody>{evidence}</tbody>
                </table>
            })}
            {(not_flash && !a.not_flash_reasons.is_empty()).then(|| view! {
                <div class="reasons">
                    <h3>"Why flash may not have been chosen"</h3>
                    <ul>{a.not_flash_reasons.iter().map(|r| view! { <li>{r.clone()}</li> }).collect_view()}</ul>
                </div>
            })}
            {not_flash.then(|| view! {
                <div class="fix">
                    <h3>"Try"</h3>
                    {a.fix.as_deref().map(|fix| view! { <p>{super::widgets::rich(fix)}</p> })}
                    <pre><code>{FLASH_SNIPPET}</code></pre>
                </div>
            })}
        </section>
    }
}

//! The served directory's traces: the list (as a page and as JSON, refreshed by list.js as a
//! job writes new files) and the check that a requested path is one of them.

use crate::files::is_trace_name;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// How deep the listing looks into subdirectories (a run per directory, ranks inside).
const DEPTH: usize = 4;
/// The most traces listed.
const MAX_LISTED: usize = 10_000;

pub struct Entry {
    /// The path under the directory, with `/` between parts.
    pub rel: String,
    pub bytes: u64,
    /// Seconds since the epoch of its last change.
    pub modified: u64,
}

/// Every trace under `dir`, sorted by path.
pub fn traces(dir: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    walk(dir, "", DEPTH, &mut out);
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    out
}

fn walk(dir: &Path, prefix: &str, depth: usize, out: &mut Vec<Entry>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let (Ok(meta), Some(name)) = (e.metadata(), e.file_name().to_str().map(str::to_string)) else { continue };
        if out.len() >= MAX_LISTED || name.starts_with('.') {
            continue;
        }
        let rel = format!("{prefix}{name}");
        if meta.is_dir() && depth > 1 {
            walk(&e.path(), &format!("{rel}/"), depth - 1, out);
        } else if meta.is_file() && is_trace_name(&e.path()) {
            let modified =
                meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs());
            out.push(Entry { rel, bytes: meta.len(), modified });
        }
    }
}

/// The file `rel` names, if it is a trace inside `dir` (links followed, then checked).
pub fn resolve(dir: &Path, rel: &str) -> Option<PathBuf> {
    if rel.split('/').any(|p| p == ".." || p.starts_with('.')) || rel.contains('\\') {
        return None;
    }
    let path = dir.join(rel).canonicalize().ok()?;
    (path.starts_with(dir) && path.is_file() && is_trace_name(&path)).then_some(path)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// `rel` for a URL path: every byte but unreserved ones and `/` percent-encoded.
pub fn url_path(rel: &str) -> String {
    let mut s = String::new();
    for b in rel.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The page that opens a trace: the site with a `?trace=` link to it (its path encoded as a
/// query value, so it is encoded twice).
fn open_link(rel: &str) -> String {
    format!("/app/?trace={}", url_path(&format!("/files/{}", url_path(rel))).replace('/', "%2F"))
}

fn row(e: &Entry) -> String {
    let size = crate::text::fmt_bytes(e.bytes as i64);
    format!(
        "<tr><td><input type=\"checkbox\" value=\"{v}\"></td><td><a href=\"{link}\">{name}</a></td><td class=\"n\">{size}</td><td class=\"t\" data-t=\"{t}\"></td></tr>",
        v = escape(&url_path(&e.rel)),
        link = escape(&open_link(&e.rel)),
        name = escape(&e.rel),
        t = e.modified
    )
}

pub fn page(dir: &Path) -> String {
    let list = traces(dir);
    let rows: String = list.iter().map(row).collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>tracesight: {dir}</title>\
<link rel=\"icon\" href=\"/app/icon.svg\" type=\"image/svg+xml\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'\">\
<style>body{{font:14px system-ui,sans-serif;margin:2em}}td{{padding:2px 10px}}.n{{text-align:right}}</style></head><body>\
<h1>tracesight</h1><p>Traces under <code>{dir}</code> ({n}; new ones appear as they are written). \
Click one to analyse it in the page, or tick several ranks and <button id=\"open\">open them together</button>.</p>\
<table><thead><tr><th></th><th>trace</th><th>size</th><th>modified</th></tr></thead><tbody id=\"traces\">{rows}</tbody></table>\
<p id=\"none\"{hidden}>No *.json or *.json.gz traces here yet.</p><script src=\"/list.js\"></script></body></html>",
        dir = escape(&dir.display().to_string()),
        n = list.len(),
        hidden = if list.is_empty() { "" } else { " hidden" },
    )
}

pub fn json(dir: &Path) -> String {
    let rows: Vec<serde_json::Value> = traces(dir)
        .iter()
        .map(|e| {
            serde_json::json!({
                "path": e.rel, "bytes": e.bytes, "modified": e.modified,
                "url": format!("/files/{}", url_path(&e.rel)), "open": open_link(&e.rel), "row": row(e),
            })
        })
        .collect();
    serde_json::Value::Array(rows).to_string()
}

/// Keeps the list current (the rows come from the server, already escaped) and opens the
/// ticked traces together as ranks.
pub const SCRIPT: &str = r#"
const body = document.getElementById('traces');
const when = () => body.querySelectorAll('td.t').forEach(td => {
  td.textContent = new Date(Number(td.dataset.t) * 1000).toLocaleString();
});
async function refresh() {
  try {
    const list = await (await fetch('/list.json', { cache: 'no-store' })).json();
    const ticked = new Set([...body.querySelectorAll('input:checked')].map(i => i.value));
    body.innerHTML = list.map(e => e.row).join('');
    body.querySelectorAll('input').forEach(i => { i.checked = ticked.has(i.value); });
    document.getElementById('none').hidden = list.length > 0;
    when();
  } catch (e) { /* the server stopped: keep what is shown */ }
}
document.getElementById('open').addEventListener('click', () => {
  const ticked = [...body.querySelectorAll('input:checked')].map(i => i.value);
  if (ticked.length) {
    location.href = '/app/?' + ticked.map(v => 'trace=' + encodeURIComponent('/files/' + v)).join('&');
  }
});
when();
setInterval(refresh, 3000);
"#;

//! The documentation stays true: the taxonomy, hint and diagnostic tables in
//! docs/definitions.md are generated from the code (`UPDATE_DOCS=1 cargo test --test readme`
//! rewrites them), the README stays a short page for users, and every relative link in the
//! README and docs/ names a file that exists.

use std::path::Path;
use tracesight::analysis::passes::{diagnostics, hints_doc};
use tracesight::analysis::rules::taxonomy;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The README is for users; definitions, internals and figures live in docs/.
const README_MAX_LINES: usize = 250;

fn section(text: &str, name: &str) -> Option<(usize, usize)> {
    let start = format!("<!-- {name}:start -->\n");
    let end = format!("<!-- {name}:end -->");
    let a = text.find(&start)? + start.len();
    let b = text[a..].find(&end)? + a;
    Some((a, b))
}

#[test]
fn generated_tables_match_the_code() {
    let path = Path::new(ROOT).join("docs/definitions.md");
    let mut doc = std::fs::read_to_string(&path).unwrap();
    let tables = [
        ("taxonomy", taxonomy::markdown()),
        ("hints", hints_doc::markdown()),
        ("diagnostics", diagnostics::markdown()),
    ];
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    for (name, text) in tables {
        let (a, b) = section(&doc, name).unwrap_or_else(|| panic!("docs/definitions.md has no {name} section markers"));
        if update {
            doc.replace_range(a..b, &text);
        } else {
            assert_eq!(
                &doc[a..b],
                text,
                "docs/definitions.md's {name} table is out of date: run UPDATE_DOCS=1 cargo test --test readme"
            );
        }
    }
    if update {
        std::fs::write(path, doc).unwrap();
    }
}

#[test]
fn readme_is_short() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= README_MAX_LINES, "README.md has {lines} lines, at most {README_MAX_LINES}: move detail to docs/");
}

/// `](target)` links that are relative paths (no scheme, no pure `#anchor`).
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !target.contains("://") && !target.starts_with('#') && !target.starts_with("mailto:") {
            out.push(target.split('#').next().unwrap_or("").to_string());
        }
    }
    out
}

#[test]
fn relative_links_name_existing_files() {
    let mut pages = vec![Path::new(ROOT).join("README.md")];
    for e in std::fs::read_dir(Path::new(ROOT).join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            pages.push(p);
        }
    }
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for link in relative_links(&text) {
            let target = page.parent().unwrap().join(&link);
            assert!(target.exists(), "{} links to {link}, which does not exist", page.display());
            checked += 1;
        }
    }
    // The README links to every page of docs/.
    assert!(checked >= pages.len(), "only {checked} relative links in {} pages", pages.len());
}

#[test]
fn link_finder_reads_markdown_links() {
    let links = relative_links("see [a](docs/a.md#x), [b](https://x.y/z), [c](#here) and ![s](img.png)");
    assert_eq!(links, vec!["docs/a.md".to_string(), "img.png".to_string()]);
}

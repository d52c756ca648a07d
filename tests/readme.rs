//! The README's taxonomy, hint and diagnostic tables are generated from the code; this test
//! keeps them current (`UPDATE_README=1 cargo test --test readme` rewrites them).

use tracesight::analysis::{diagnostics, hints, taxonomy};

fn section(readme: &str, name: &str) -> Option<(usize, usize)> {
    let start = format!("<!-- {name}:start -->\n");
    let end = format!("<!-- {name}:end -->");
    let a = readme.find(&start)? + start.len();
    let b = readme[a..].find(&end)? + a;
    Some((a, b))
}

#[test]
fn readme_tables_match_the_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let mut readme = std::fs::read_to_string(path).unwrap();
    let tables =
        [("taxonomy", taxonomy::markdown()), ("hints", hints::markdown()), ("diagnostics", diagnostics::markdown())];
    let update = std::env::var_os("UPDATE_README").is_some();
    for (name, text) in tables {
        let (a, b) = section(&readme, name).unwrap_or_else(|| panic!("README has no {name} section markers"));
        if update {
            readme.replace_range(a..b, &text);
        } else {
            assert_eq!(
                &readme[a..b],
                text,
                "README's {name} table is out of date: run UPDATE_README=1 cargo test --test readme"
            );
        }
    }
    if update {
        std::fs::write(path, readme).unwrap();
    }
}

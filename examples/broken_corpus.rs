//! Writes the broken-input corpus (tests/common/corpus.rs) to a folder, for measuring the
//! CLI on each entry (scripts/broken-rss.sh): `cargo run --release --example broken_corpus DIR`.
#[path = "../tests/common/corpus.rs"]
mod corpus;

use std::io::BufWriter;

fn main() -> std::io::Result<()> {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "bench-data/broken".into()));
    std::fs::create_dir_all(&dir)?;
    for (name, bytes) in corpus::small() {
        std::fs::write(dir.join(name), bytes)?;
    }
    std::fs::write(dir.join("gzip-bomb-4gib.json.gz"), corpus::gzip_bomb(64))?;
    std::fs::write(dir.join("names-past-limit.json"), corpus::many_names(tracesight::limits::MAX_NAMES + 10))?;
    corpus::tiny_events(10_000_000, &mut BufWriter::new(std::fs::File::create(dir.join("tiny-events-10m.json"))?))?;
    println!("{}", dir.display());
    Ok(())
}

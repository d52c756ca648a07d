//! Limit probes for `scripts/bench.sh`: each runs one stage of the CLI's read alone on a file,
//! so the CLI's MB/s can be set beside what that stage allows on the same file and machine.
//!
//!   probe events FILE.json      the Chrome-JSON reader and its event scanner, with a sink that
//!                               drops every event (no analysis): the parse alone
//!   probe inflate FILE.json.gz  gzip inflate alone, the decoded bytes thrown away (the CLI's
//!                               own gzip reader, `input::Gunzip`, on its flate2 backend)
//!
//! Prints the decoded bytes and the events counted on stdout; bench.sh times the process.

use serde_json::value::RawValue;
use std::fs::File;
use std::io::{BufReader, Read};
use std::process::ExitCode;
use tracesight::input::formats::chrome_json::{JsonSink, PushReader, RawEvent};

/// Counts what the reader finds and keeps nothing.
#[derive(Default)]
struct Drop {
    events: u64,
    malformed: u64,
}

impl JsonSink for Drop {
    fn event(&mut self, ev: &RawEvent<'_>, _offset: u64) {
        // Keeps the parse from being optimised away.
        std::hint::black_box(ev);
        self.events += 1;
    }
    fn metadata(&mut self, _key: &str, _value: &RawValue) {}
    fn malformed(&mut self, _offset: u64, _why: &str) {
        self.malformed += 1;
    }
}

fn events(path: &str) -> std::io::Result<String> {
    let mut f = File::open(path)?;
    let mut buf = vec![0u8; tracesight::input::formats::chrome_json::CHUNK];
    let (mut push, mut sink, mut total) = (PushReader::new(), Drop::default(), 0u64);
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        push.feed(&buf[..n], &mut sink);
    }
    Ok(format!("{total} bytes, {} events, {} malformed", sink.events, sink.malformed))
}

fn inflate(path: &str) -> std::io::Result<String> {
    let mut d = tracesight::input::Gunzip::new(BufReader::with_capacity(1 << 20, File::open(path)?));
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        match d.read(&mut buf)? {
            0 => break,
            n => total += n as u64,
        }
    }
    Ok(format!("{total} bytes inflated"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let run = match (args.first().map(String::as_str), args.get(1)) {
        (Some("events"), Some(p)) => events(p),
        (Some("inflate"), Some(p)) => inflate(p),
        _ => {
            eprintln!("usage: probe events FILE.json | probe inflate FILE.json.gz");
            return ExitCode::from(2);
        }
    };
    match run {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("probe: {e}");
            ExitCode::FAILURE
        }
    }
}

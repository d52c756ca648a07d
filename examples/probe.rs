//! Limit probes for `scripts/bench.sh`: each runs one stage of the CLI's read alone on a file,
//! so the CLI's MB/s can be set beside what that stage allows on the same file and machine.
//!
//!   probe events FILE.json      the Chrome-JSON reader and its event scanner, with a sink that
//!                               drops every event (no analysis): the parse alone
//!   probe structural FILE.json  the vectorised structural scan alone (`Structure`: which bytes
//!                               are inside strings, the braces outside them counted, nothing
//!                               read out): what any reader that must know where strings are
//!                               does per byte at least, a limit on the parse's speed
//!   probe inflate FILE.json.gz  gzip inflate alone, the decoded bytes thrown away (the CLI's
//!                               own gzip reader, `input::Gunzip`, on its flate2 backend)
//!   probe memory FILE.json [MB] [TIMES]
//!                               the parse alone from memory: the first MB (default 16) of the
//!                               trace's events, cut after a whole event, parsed TIMES (default
//!                               15) times; prints its own MB/s (no file reads, no page faults:
//!                               for comparing scanner builds side by side)
//!
//! Prints the decoded bytes and the events counted on stdout; bench.sh times the process.

use serde_json::value::RawValue;
use std::fs::File;
use std::io::{BufReader, Read};
use std::process::ExitCode;
use tracesight::input::formats::chrome_json::{JsonSink, PushReader, RawEvent, Structure};

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

fn structural(path: &str) -> std::io::Result<String> {
    let mut f = File::open(path)?;
    let chunk = tracesight::input::formats::chrome_json::CHUNK;
    // A piece's last bytes short of a 64-byte block are moved to the front, read on after.
    let (mut buf, mut held) = (vec![0u8; chunk + 64], 0);
    let (mut s, mut total) = (Structure::default(), 0u64);
    loop {
        let n = f.read(&mut buf[held..held + chunk])?;
        if n == 0 {
            break;
        }
        total += n as u64;
        let read = s.blocks(&buf[..held + n]);
        buf.copy_within(read..held + n, 0);
        held = held + n - read;
    }
    s.end(&buf[..held]);
    Ok(format!("{total} bytes, {} quotes, {} {{ and {} }} outside strings", s.quotes, s.opens, s.closes))
}

fn memory(path: &str, mb: Option<&String>, times: Option<&String>) -> std::io::Result<String> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, what.to_string());
    let size = mb.map_or(Ok(16), |m| m.parse::<usize>()).map_err(|_| bad("MB must be a whole number"))? << 20;
    let times = times.map_or(Ok(15), |t| t.parse::<usize>()).map_err(|_| bad("TIMES must be a whole number"))?;
    // What comes before the events (metadata) is read too: a MB more than the piece.
    let mut data = Vec::new();
    File::open(path)?.take((size + (1 << 20)) as u64).read_to_end(&mut data)?;
    // The events from the first `{` after "traceEvents" to the last whole event within `size`.
    let key = data.windows(13).position(|w| w == b"\"traceEvents\"").ok_or_else(|| bad("no traceEvents"))?;
    let start = key + data[key..].iter().position(|&c| c == b'{').ok_or_else(|| bad("no event"))?;
    let piece = &data[start..data.len().min(start + size)];
    // An event's end is a `}` before the `,` that parts it from the next.
    let end = piece.windows(2).rposition(|w| w == b"},").ok_or_else(|| bad("no whole event"))?;
    let mut body = b"[".to_vec();
    body.extend_from_slice(&piece[..=end]);
    body.push(b']');
    let clock = std::time::Instant::now();
    let mut sink = Drop::default();
    for _ in 0..times {
        PushReader::new().feed(&body, &mut sink);
    }
    let secs = clock.elapsed().as_secs_f64();
    let mb_s = (body.len() * times) as f64 / secs / 1e6;
    Ok(format!("{} bytes x {times}, {} events, {} malformed: {mb_s:.0} MB/s", body.len(), sink.events, sink.malformed))
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
        (Some("structural"), Some(p)) => structural(p),
        (Some("inflate"), Some(p)) => inflate(p),
        (Some("memory"), Some(p)) => memory(p, args.get(2), args.get(3)),
        _ => {
            eprintln!(
                "usage: probe events FILE.json | probe structural FILE.json | probe inflate FILE.json.gz | probe memory FILE.json [MB] [TIMES]"
            );
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

//! Reading one plain-JSON trace in parts, on several threads (the CLI) or browser workers (the
//! page), with the result of one reading. The file is cut at event boundaries; each part is
//! read into its own collector; the parts are joined in file order. A cut is a guess until the
//! part before it, read by the real state machine, ends exactly there (in the events array,
//! right after a comma, nothing held): a `},{` inside a string cannot fool it. Whenever
//! something does not fit (a cut inside a string, a limit reached inside a part), the file is
//! read on from where the parts joined so far end, in one go ([`Joined::rest_from`]), or whole
//! (the page). No file access here: callers hand in bytes.

use crate::analysis::model::collect::{Collector, NotJoinable};
use crate::input::formats::chrome_json::{Neutral, PushReader};
use crate::input::{formats::Format, sniff, Encoding};
use crate::trace::{Ending, Fatal, Outcome};
use serde::{Deserialize, Serialize};

/// Files smaller than this are read in one go: splitting would not pay for itself.
pub const MIN_SPLIT_BYTES: u64 = 32 << 20;
/// Bytes at the top of a file that [`layout`] wants to see.
pub const HEAD_BYTES: usize = 1 << 20;
/// Bytes read at a target offset to find a cut near it (events are far smaller).
pub const CUT_WINDOW: usize = 1 << 16;

/// Where the events of a splittable file are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The events are an object's `traceEvents` array (else the file is a bare array).
    pub in_object: bool,
    /// No cut goes before this offset: Kineto writes `deviceProperties` first, whose `},{`
    /// between devices is no cut between events.
    pub events_at: u64,
}

/// How a file may be split, from its first bytes (up to [`HEAD_BYTES`]); None when it is not
/// one to split: gzip, a tracesight report, not a JSON object or array.
pub fn layout(head: &[u8]) -> Option<Layout> {
    // Only plain Chrome-JSON traces are cut between events.
    if sniff::encoding(head) == Encoding::Gzip || sniff::format(head) != Format::ChromeJson {
        return None;
    }
    let in_object = match head.iter().find(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0xEF | 0xBB | 0xBF)) {
        Some(b'{') => true,
        Some(b'[') => false,
        _ => return None,
    };
    let events_at = memchr::memmem::find(head, b"\"traceEvents\"").unwrap_or(0) as u64;
    Some(Layout { in_object, events_at })
}

/// The offsets near which to cut a `size`-byte file for `threads` threads that take the parts
/// in file order, each the next one as it finishes one (the CLI): parts of `part_bytes` while
/// more than twice as many as there are threads are left; then each a share of what is left,
/// the rest over twice the threads, down to a sixteenth of `part_bytes` (guided scheduling). The threads then
/// finish together: with parts of one size, one thread read the last part alone while the
/// others waited (500 MB on two threads in 32 MB parts: about 40 ms of a 0.57 s reading).
pub fn part_targets(size: u64, part_bytes: u64, threads: usize, layout: Layout) -> Vec<u64> {
    let (part, ways) = (part_bytes.max(1), 2 * threads.max(1) as u64);
    let least = (part / 16).max(1);
    let (mut at, mut targets) = (0, Vec::new());
    loop {
        let rest = size - at;
        let len = (rest / ways).clamp(least, part);
        if len >= rest {
            return targets;
        }
        at += len;
        targets.push(at.max(layout.events_at + 1));
    }
}

/// The offsets near which cuts are looked for, to make `parts` parts of a `size`-byte file.
pub fn targets(size: u64, parts: u64, layout: Layout) -> Vec<u64> {
    (1..parts).map(|k| (size * k / parts).max(layout.events_at + 1)).collect()
}

/// The first place in `window` that looks like a cut between two events: right after the
/// comma of `}` `,` `{` (whitespace allowed between) followed by one whole JSON value and a
/// `,` or `]`. Only a candidate: the reading of the part before checks it.
pub fn cut_in(window: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b',', window).find_map(|c| {
        let before = window[..c].iter().rev().find(|b| !b.is_ascii_whitespace());
        let after = window[c + 1..].iter().find(|b| !b.is_ascii_whitespace());
        (before == Some(&b'}') && after == Some(&b'{') && value_then_comma(&window[c + 1..])).then_some(c + 1)
    })
}

/// Whether `w` starts with one whole JSON value followed by `,` or `]` (a `},{` inside a
/// string is seldom followed by that).
fn value_then_comma(w: &[u8]) -> bool {
    let mut values = serde_json::Deserializer::from_slice(w).into_iter::<serde::de::IgnoredAny>();
    if !matches!(values.next(), Some(Ok(_))) {
        return false;
    }
    let end = values.byte_offset();
    matches!(w[end..].iter().find(|b| !b.is_ascii_whitespace()), Some(b',' | b']'))
}

/// The cuts of a file: `0`, the cuts found, `size`; fewer than three means "do not split".
pub fn cuts(size: u64, found: impl IntoIterator<Item = Option<u64>>) -> Vec<u64> {
    let mut cuts = vec![0u64];
    for c in found.into_iter().flatten() {
        if c < size && c > *cuts.last().unwrap_or(&0) {
            cuts.push(c);
        }
    }
    cuts.push(size);
    cuts
}

/// One part to read: bytes `from..to` of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartJob {
    pub from: u64,
    pub to: u64,
    pub last: bool,
    pub in_object: bool,
}

impl PartJob {
    /// The parts between consecutive `cuts`.
    pub fn all(cuts: &[u64], layout: Layout) -> Vec<PartJob> {
        let n = cuts.len().saturating_sub(1);
        (0..n)
            .map(|k| PartJob { from: cuts[k], to: cuts[k + 1], last: k + 1 == n, in_object: layout.in_object })
            .collect()
    }
}

/// What a part gave: a part before the last ends between events.
#[derive(Serialize, Deserialize)]
pub enum Part {
    Middle { collector: Collector, events: u64, stray_commas: u64 },
    Last { collector: Collector, outcome: Outcome },
}

impl Part {
    /// The part in a compact binary form, to hand to another worker.
    pub fn encode(&self) -> Vec<u8> {
        postcard::to_allocvec(self).unwrap_or_default()
    }

    /// A part from [`Part::encode`]'s bytes; None when they are not such bytes.
    pub fn decode(bytes: &[u8]) -> Option<Part> {
        postcard::from_bytes(bytes).ok()
    }
}

/// Reads one part: fed the bytes `from..to` in order, in chunks of any size.
pub struct PartReader {
    reader: PushReader,
    collector: Collector,
    job: PartJob,
}

impl PartReader {
    pub fn new(job: PartJob) -> PartReader {
        let (reader, collector) = if job.from == 0 {
            (PushReader::new(), Collector::default())
        } else {
            (PushReader::resume_after_comma(job.from, job.in_object), Collector::for_later_part())
        };
        PartReader { reader, collector, job }
    }

    pub fn feed(&mut self, bytes: &[u8]) {
        self.reader.feed(bytes, &mut Neutral(&mut self.collector));
    }

    /// False once the part cannot be read as one reading would (a syntax error, say).
    pub fn wants_more(&self) -> bool {
        self.reader.wants_more()
    }

    /// What a part read as it streamed in gave, once where it ends is known (`to`, and whether
    /// it is the last): see [`PartReader::finish`].
    pub fn finish_at(mut self, to: u64, last: bool) -> Option<Part> {
        (self.job.to, self.job.last) = (to, last);
        self.finish()
    }

    /// What the part gave; None when it does not end where a part may (the file is then read
    /// whole).
    pub fn finish(mut self) -> Option<Part> {
        if self.job.last {
            let outcome = self.reader.finish(&mut Neutral(&mut self.collector), Ending::Eof).ok()?;
            return Some(Part::Last { collector: self.collector, outcome });
        }
        self.reader.settle(&mut Neutral(&mut self.collector));
        if self.reader.after_event_comma() != Some(self.job.in_object) {
            return None;
        }
        let (events, stray_commas) = (self.reader.events(), self.reader.stray_commas());
        Some(Part::Middle { collector: self.collector, events, stray_commas })
    }
}

/// The parts joined so far, in file order.
#[derive(Default)]
pub struct Joined {
    all: Option<Collector>,
    events: u64,
    stray_commas: u64,
    outcome: Option<Outcome>,
}

impl Joined {
    /// Appends the next part of the file; refused, and nothing changed, where it cannot be
    /// joined exactly.
    pub fn push(&mut self, part: Part) -> Result<(), NotJoinable> {
        if self.outcome.is_some() {
            return Err(NotJoinable);
        }
        let (collector, events, stray_commas, outcome) = match part {
            Part::Middle { collector, events, stray_commas } => (collector, events, stray_commas, None),
            Part::Last { collector, outcome } => (collector, 0, 0, Some(outcome)),
        };
        match &mut self.all {
            None => self.all = Some(collector),
            Some(all) => all.join(collector)?,
        }
        self.events += events;
        self.stray_commas += stray_commas;
        self.outcome = outcome.map(|o| counted_in(o, self.events, self.stray_commas));
        Ok(())
    }

    /// The file's size and where the next part pushed ends: the joined lists then grow to their
    /// length extrapolated to the whole file (`collect::Progress`), not by doubling at each
    /// part. Capacity only.
    pub fn progress(&mut self, read: u64, total: u64) {
        if let Some(all) = &mut self.all {
            all.progress = crate::analysis::model::collect::Progress { read, total };
        }
    }

    /// The whole file's collector and reading, once its last part is in.
    pub fn finish(self) -> Option<(Collector, Outcome)> {
        Some((self.all?, self.outcome?))
    }

    /// The rest of the file, from `from` (where the parts joined so far end, the start of the
    /// first part that could not be joined; 0 when none was), to be read in one go into what
    /// they collected: the parts before it are not read again. Exact because a joined part
    /// leaves the collector as one reading leaves it at its end (what the join is checked
    /// for), and a part's start is where the part before it was seen to end.
    pub fn rest_from(self, from: u64, in_object: bool) -> Rest {
        let reader = if from == 0 { PushReader::new() } else { PushReader::resume_after_comma(from, in_object) };
        let collector = self.all.unwrap_or_default();
        Rest { reader, collector, events: self.events, stray_commas: self.stray_commas }
    }
}

/// The rest of a file read in one go after the parts joined before it ([`Joined::rest_from`]).
pub struct Rest {
    reader: PushReader,
    collector: Collector,
    events: u64,
    stray_commas: u64,
}

impl Rest {
    pub fn feed(&mut self, bytes: &[u8]) {
        self.reader.feed(bytes, &mut Neutral(&mut self.collector));
    }

    /// How far into the file the bytes fed reach, of its size (as `Analysis::progress`).
    pub fn progress(&mut self, read: u64, total: u64) {
        self.collector.progress = crate::analysis::model::collect::Progress { read, total };
    }

    /// Whether more bytes can change the result.
    pub fn wants_more(&self) -> bool {
        self.reader.wants_more()
    }

    /// The whole file's collector and reading, the joined parts' events counted in.
    pub fn finish(mut self) -> (Collector, Result<Outcome, Fatal>) {
        let read = self.reader.finish(&mut Neutral(&mut self.collector), Ending::Eof);
        (self.collector, read.map(|o| counted_in(o, self.events, self.stray_commas)))
    }
}

/// The last part's reading with the parts' before it counted in: the whole file's.
fn counted_in(mut o: Outcome, events: u64, stray_commas: u64) -> Outcome {
    o.events += events;
    o.stray_commas += stray_commas;
    o
}

//! The report as `tracesight --json` prints it and the page exports it: serde_json's pretty
//! layout (two-space indents, `": "`), byte for byte, written faster. serde_json's own pretty
//! formatter writes the indent one level at a time, a write per level on every line; here a
//! line's comma, break and indent are one slice. A 500 MB trace's report (39 MB of JSON, mostly
//! the critical path's steps) took 0.76x the time to write, and it is written on one thread
//! after the analysis (docs/performance.md).

use serde::Serialize;
use std::io;

/// A comma, a line break and the indents of the first 64 levels.
const LINE: [u8; 2 + 2 * 64] = {
    let mut line = [b' '; 2 + 2 * 64];
    (line[0], line[1]) = (b',', b'\n');
    line
};

/// serde_json's `PrettyFormatter` with two-space indents, each line written at once.
#[derive(Default)]
struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    /// The break before a member or an item at the current depth: `,\n` then the indent
    /// (without the comma before the first).
    fn line<W: ?Sized + io::Write>(&self, w: &mut W, first: bool) -> io::Result<()> {
        let (from, to) = (usize::from(first), 2 + 2 * self.depth);
        match LINE.get(from..to) {
            Some(line) => w.write_all(line),
            None => {
                w.write_all(&LINE[from..2])?;
                (0..self.depth).try_for_each(|_| w.write_all(b"  "))
            }
        }
    }

    fn open<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    fn close<W: ?Sized + io::Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.line(w, true)?;
        }
        w.write_all(bracket)
    }
}

impl serde_json::ser::Formatter for Pretty {
    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.line(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.line(w, first)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, _: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `value` as pretty JSON (no newline after it).
pub fn write_pretty<W: io::Write>(w: W, value: &impl Serialize) -> serde_json::Result<()> {
    value.serialize(&mut serde_json::Serializer::with_formatter(w, Pretty::default()))
}

/// `value` as pretty JSON.
pub fn to_pretty_string(value: &impl Serialize) -> serde_json::Result<String> {
    let mut out = Vec::new();
    write_pretty(&mut out, value)?;
    // serde_json writes only valid UTF-8.
    Ok(String::from_utf8(out).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_layout_is_serde_jsons_pretty_one_byte_for_byte() {
        // Empty containers, nesting past the indents written at once, escapes, numbers.
        let mut deep = json!(["bottom", {}]);
        for k in 0..80 {
            deep = if k % 2 == 0 { json!([deep, 1]) } else { json!({ "k": deep, "e": [] }) };
        }
        let values = [
            json!({}),
            json!([]),
            json!(null),
            json!({ "a": [], "b": {}, "c": [1, 2.5, -0.0, 1e300], "d": "tab\t\"quote\" ü", "e": [[], [{}]] }),
            deep,
        ];
        for v in &values {
            assert_eq!(to_pretty_string(v).unwrap(), serde_json::to_string_pretty(v).unwrap(), "{v}");
        }
    }
}

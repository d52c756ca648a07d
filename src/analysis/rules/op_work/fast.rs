//! A quick reader for the op arguments as the profiler writes them: `Input Dims` as lists of
//! small non-negative integers, `Input type` / `Concrete Inputs` as lists of plain strings.
//! Anything else (a sign, a fraction, an exponent, an escape, a null, deeper nesting, a
//! leading zero, more than 18 digits) is not read here (None): the caller then asks
//! serde_json, so the result is always serde_json's. serde_json's generic `Value` path was a
//! twentieth of a one-thread read of a trace with shapes.

/// The subset of JSON read here.
pub(super) enum Node {
    /// A non-negative integer of at most 18 digits (so it fits an i64).
    Int(i64),
    Arr(Vec<Node>),
}

/// `"` and `\` (written so, for scripts/check_layers.py's reading of quotes).
const QUOTE: u8 = 0x22;
const BACKSLASH: u8 = 0x5c;

/// Nesting read here: the list, an argument, a tensor list's tensor.
const DEPTH: usize = 3;

struct Cur<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cur<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn int(&mut self) -> Option<i64> {
        let from = self.at;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
        let digits = &self.b[from..self.at];
        let leading_zero = digits.len() > 1 && digits[0] == b'0';
        if digits.is_empty() || digits.len() > 18 || leading_zero || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(digits.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    }

    /// The items of a list whose `[` is at the cursor, each read by `item`.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        if self.peek() != Some(b'[') {
            return None;
        }
        self.at += 1;
        self.ws();
        let mut out = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Some(out);
        }
        loop {
            self.ws();
            out.push(item(self)?);
            self.ws();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    fn node(&mut self, depth: usize) -> Option<Node> {
        match self.peek()? {
            b'[' if depth < DEPTH => self.list(|c| c.node(depth + 1)).map(Node::Arr),
            b'0'..=b'9' => self.int().map(Node::Int),
            _ => None,
        }
    }

    fn string(&mut self) -> Option<String> {
        if self.peek() != Some(QUOTE) {
            return None;
        }
        let from = self.at + 1;
        let len = self.b[from..].iter().position(|&c| c == QUOTE || c == BACKSLASH || c < 0x20)?;
        if self.b[from + len] != QUOTE {
            return None;
        }
        self.at = from + len + 1;
        std::str::from_utf8(&self.b[from..from + len]).ok().map(str::to_string)
    }

    /// Whole input read: only whitespace left.
    fn end<T>(mut self, v: T) -> Option<T> {
        self.ws();
        (self.at == self.b.len()).then_some(v)
    }
}

/// A list of nested lists of integers (`Input Dims`); None: not in the subset read here.
pub(super) fn lists(raw: &[u8]) -> Option<Vec<Node>> {
    let mut c = Cur { b: raw, at: 0 };
    c.ws();
    let list = c.list(|c| c.node(1))?;
    c.end(list)
}

/// A list of plain strings; None: not in the subset read here.
pub(super) fn strings(raw: &[u8]) -> Option<Vec<String>> {
    let mut c = Cur { b: raw, at: 0 };
    c.ws();
    let list = c.list(Cur::string)?;
    c.end(list)
}

#[cfg(test)]
mod tests {
    use super::super::Inputs;

    /// serde_json's reading alone, as `Inputs::parse` read them before this reader.
    fn by_serde(dims: &[u8], types: &[u8]) -> Option<Inputs> {
        Some(Inputs {
            dims: Inputs::dims_by_serde(dims)?,
            types: Inputs::strings_by_serde(types),
            concrete: Vec::new(),
        })
    }

    /// Every input, in the subset or not, reads as serde_json reads it.
    #[test]
    fn reads_as_serde_json_does() {
        let dims: &[&str] = &[
            "[[8, 2048, 4096], [4096, 4096]]",
            "[]",
            " [ ] ",
            "[[]]",
            "[[], [1]]",
            "[[[1, 2], [3]], []]",
            "[[[1, 2], 3], [4]]",
            "[[1, [2]]]",
            "[[[[1]]]]",
            "[[-1, 2]]",
            "[[-0]]",
            "[[0]]",
            "[[01]]",
            "[[1.0]]",
            "[[1e3]]",
            "[[9223372036854775807]]",
            "[[9223372036854775808]]",
            "[[123456789012345678]]",
            "[[1234567890123456789]]",
            "[[1,]]",
            "[[1] [2]]",
            "[[1]] x",
            "[[1]]\n",
            "\t[[1]]",
            "[null, [2]]",
            "[[\"a\"]]",
            "[1, 2]",
            "{}",
            "null",
            "",
            "[",
            "[[1]",
            "[[1, 2],\r\n [3]]",
            "[[ 1 , 2 ] ]",
        ];
        let types: &[&str] = &[
            "[\"c10::BFloat16\", \"float\"]",
            "[]",
            "[\"\", \"\"]",
            "[\"a\\\"b\"]",
            "[\"a\\u0041\"]",
            "[null, \"x\"]",
            "[1, \"x\"]",
            "null",
            "[\"a\" \"b\"]",
            "[\"tab\there\"]",
            "[\"é\"]",
            "[\"a\"] ,",
            "",
        ];
        for d in dims {
            for t in types {
                let got = Inputs::parse(d.as_bytes(), Some(t.as_bytes()), None);
                let want = by_serde(d.as_bytes(), t.as_bytes());
                match (got, want) {
                    (None, None) => {}
                    (Some(g), Some(w)) => {
                        assert_eq!((g.dims, g.types), (w.dims, w.types), "dims {d:?} types {t:?}");
                    }
                    (g, w) => panic!("dims {d:?} types {t:?}: {} here, {} by serde", g.is_some(), w.is_some()),
                }
            }
        }
        // The subset itself is read here, not handed on: the quick path is the one tested.
        assert!(super::lists(b"[[8, 2048], [], [[1], [2, 3]]]").is_some());
        assert!(super::strings(b"[\"c10::Half\", \"\"]").is_some());
        assert!(super::lists(b"[[-1]]").is_none() && super::strings(b"[null]").is_none());
    }
}

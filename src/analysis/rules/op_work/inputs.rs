//! What the profiler recorded about an op's inputs, parsed from its raw JSON.

use super::fast::Node;
use crate::vocab::Precision;

/// One argument as `Input Dims` records it.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    Tensor(Vec<i64>),
    List(Vec<Vec<i64>>),
    /// A scalar, None, or a 0-d tensor (all written `[]`).
    Empty,
}

/// What the profiler recorded about an op's inputs.
#[derive(Debug, Default)]
pub struct Inputs {
    pub dims: Vec<Arg>,
    pub types: Vec<String>,
    pub concrete: Vec<String>,
}

impl Inputs {
    /// Parses the raw JSON of the three arguments; None when `Input Dims` is not a list.
    /// The usual forms are read by [`super::fast`], the rest by serde_json, with one result.
    pub fn parse(dims: &[u8], types: Option<&[u8]>, concrete: Option<&[u8]>) -> Option<Inputs> {
        let strings = |r: Option<&[u8]>| {
            r.map_or_else(Vec::new, |r| super::fast::strings(r).unwrap_or_else(|| Self::strings_by_serde(r)))
        };
        let dims = match super::fast::lists(dims).map(|l| Self::dims_of(&l)) {
            Some(d) => d,
            None => Self::dims_by_serde(dims)?,
        };
        Some(Inputs { dims, types: strings(types), concrete: strings(concrete) })
    }

    /// The arguments read by [`super::fast`], as [`Inputs::dims_by_serde`] reads them.
    fn dims_of(list: &[Node]) -> Vec<Arg> {
        let shape = |v: &Node| -> Option<Vec<i64>> {
            let Node::Arr(a) = v else { return None };
            a.iter().map(|d| if let Node::Int(n) = d { Some(*n) } else { None }).collect()
        };
        list.iter()
            .map(|v| match v {
                Node::Arr(a) if a.is_empty() => Arg::Empty,
                Node::Arr(a) if matches!(a[0], Node::Arr(_)) => Arg::List(a.iter().filter_map(shape).collect()),
                Node::Arr(_) => shape(v).map_or(Arg::Empty, Arg::Tensor),
                Node::Int(_) => Arg::Empty,
            })
            .collect()
    }

    /// A list's strings (anything else in it as ""); none when it is not a list.
    pub(super) fn strings_by_serde(raw: &[u8]) -> Vec<String> {
        serde_json::from_slice::<Vec<serde_json::Value>>(raw)
            .map(|v| v.into_iter().map(|s| s.as_str().unwrap_or_default().to_string()).collect())
            .unwrap_or_default()
    }

    pub(super) fn dims_by_serde(dims: &[u8]) -> Option<Vec<Arg>> {
        let raw: Vec<serde_json::Value> = serde_json::from_slice(dims).ok()?;
        let shape = |v: &serde_json::Value| -> Option<Vec<i64>> { v.as_array()?.iter().map(|d| d.as_i64()).collect() };
        let dims = raw
            .iter()
            .map(|v| match v.as_array() {
                Some(a) if a.is_empty() => Arg::Empty,
                Some(a) if a[0].is_array() => Arg::List(a.iter().filter_map(shape).collect()),
                Some(_) => shape(v).map_or(Arg::Empty, Arg::Tensor),
                None => Arg::Empty,
            })
            .collect();
        Some(dims)
    }

    pub(super) fn tensor(&self, i: usize) -> Option<&[i64]> {
        match self.dims.get(i) {
            Some(Arg::Tensor(t)) => Some(t),
            _ => None,
        }
    }

    pub(super) fn elem(&self, i: usize) -> f64 {
        self.types.get(i).map_or(4.0, |t| dtype_bytes(t))
    }

    pub(super) fn bytes_of(&self, i: usize) -> f64 {
        self.tensor(i).map_or(0.0, |t| numel(t) * self.elem(i))
    }

    /// Bytes of every tensor argument (lists included).
    pub(super) fn all_bytes(&self) -> f64 {
        (0..self.dims.len())
            .map(|i| match &self.dims[i] {
                Arg::Tensor(t) => numel(t) * self.elem(i),
                Arg::List(l) => l.iter().map(|t| numel(t)).sum::<f64>() * self.elem(i),
                Arg::Empty => 0.0,
            })
            .sum()
    }

    /// The largest tensor argument's bytes (a list's, all of them: what `cat` writes): the
    /// output of an elementwise op, a norm or a copy.
    pub(super) fn largest_bytes(&self) -> f64 {
        (0..self.dims.len())
            .map(|i| match &self.dims[i] {
                Arg::List(l) => l.iter().map(|t| numel(t)).sum::<f64>() * self.elem(i),
                _ => self.bytes_of(i),
            })
            .fold(0.0, f64::max)
    }

    pub(super) fn precision(&self, i: usize) -> Option<Precision> {
        self.types.get(i).and_then(|t| Precision::of_dtype(t))
    }

    /// A concrete list argument (`"[2, 2]"`), or a single int broadcast to `n`.
    pub(super) fn ints(&self, i: usize, n: usize) -> Option<Vec<i64>> {
        let s = self.concrete.get(i)?.trim();
        let v: Vec<i64> = match s.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            Some(inner) => inner.split(',').map(|x| x.trim().parse().ok()).collect::<Option<_>>()?,
            None => vec![s.parse().ok()?],
        };
        match v.len() {
            1 => Some(vec![v[0]; n]),
            l if l == n => Some(v),
            _ => None,
        }
    }

    pub(super) fn flag(&self, i: usize) -> bool {
        self.concrete.get(i).is_some_and(|s| s == "True" || s == "1")
    }
}

pub(super) fn numel(t: &[i64]) -> f64 {
    t.iter().map(|&d| d.max(0) as f64).product()
}

/// Bytes per element of a dtype as `Input type` writes it.
pub fn dtype_bytes(t: &str) -> f64 {
    let t = t.strip_prefix("c10::").unwrap_or(t);
    match t {
        "double" | "long int" | "long" | "int64_t" | "complex<float>" => 8.0,
        "float" | "int" | "unsigned int" => 4.0,
        "Half" | "BFloat16" | "short int" | "short" => 2.0,
        "bool" | "signed char" | "unsigned char" | "qint8" | "quint8" => 1.0,
        t if t.starts_with("Float8") => 1.0,
        _ => 4.0,
    }
}

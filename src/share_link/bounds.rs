//! The generic bounds every decoded link meets before it is read into the report's types:
//! whatever the schema, each text, number and list is bounded, so a new report field needs no
//! check of its own. Indices between parts are checked in `check`.

use super::common::*;
use serde_json::Value;

/// At most this many values (numbers, texts, lists, objects) in a whole link.
pub const MAX_VALUES: usize = 200_000;
/// Numbers beyond this magnitude are not plausible (times, FLOPs, bytes).
pub const MAX_NUMBER: f64 = 1e30;

/// Every text at most [`MAX_STRING`] bytes without control characters (but newline and tab),
/// every list at most [`MAX_LIST`] items, every number within [`MAX_NUMBER`] and every
/// integer an i64, and at most [`MAX_VALUES`] values in all. Iterative: no recursion.
pub fn check_bounds(root: &Value) -> Result<(), String> {
    let mut stack = vec![root];
    let mut seen = 0usize;
    while let Some(v) = stack.pop() {
        seen += 1;
        if seen > MAX_VALUES {
            return Err(format!("more than {MAX_VALUES} values"));
        }
        match v {
            Value::String(s) => text(s)?,
            Value::Number(n) => number(n)?,
            Value::Array(a) => {
                if a.len() > MAX_LIST {
                    return Err(format!("a list of {} items (at most {MAX_LIST})", a.len()));
                }
                stack.extend(a);
            }
            Value::Object(o) => {
                for (k, v) in o {
                    text(k)?;
                    stack.push(v);
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
    }
    Ok(())
}

fn text(s: &str) -> Result<(), String> {
    if s.len() > MAX_STRING {
        return Err(format!("a text of {} bytes (at most {MAX_STRING})", s.len()));
    }
    if s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err("a text with control characters".into());
    }
    Ok(())
}

fn number(n: &serde_json::Number) -> Result<(), String> {
    if n.is_u64() && n.as_i64().is_none() {
        return Err(format!("a count out of range ({n})"));
    }
    match n.as_f64() {
        Some(v) if v.is_finite() && v.abs() <= MAX_NUMBER => Ok(()),
        _ => Err(format!("a number out of range ({n})")),
    }
}

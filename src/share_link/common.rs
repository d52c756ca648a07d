//! The bounds on what a link may hold, and the serde helpers the state and the wire form share.

/// The longest fragment accepted (characters after `#`).
pub const MAX_FRAGMENT: usize = 64 * 1024;
/// The most JSON a fragment may inflate to.
pub const MAX_INFLATED: usize = 1 << 20;
/// At most this many traces, and rows in any one table.
pub const MAX_TRACES: usize = 64;
/// At most this many rows in a link's ranks view (each a few numbers).
pub const MAX_RANKS: usize = 1024;
pub const MAX_ROWS: usize = 1000;
/// The longest string (name, message) accepted, in bytes.
pub const MAX_STRING: usize = 16 * 1024;
/// The longest search text kept in the view state.
pub const MAX_QUERY: usize = 200;
/// Counts above this are not plausible profiler output.
pub const MAX_COUNT: u64 = 1 << 53;
/// Times (microseconds) beyond this magnitude are not plausible.
pub const MAX_TIME: f64 = 1e15;

pub fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
pub fn is_true(v: &bool) -> bool {
    *v
}
pub fn yes() -> bool {
    true
}
pub fn is_false(v: &bool) -> bool {
    !*v
}
pub fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
pub fn is_zero_u(v: &u64) -> bool {
    *v == 0
}

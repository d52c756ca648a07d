//! The bounds on what a link may hold, and the serde helpers of the view state.

/// The longest fragment accepted (characters after `#`). Chromium and Firefox open URLs far
/// longer; 80 KiB keeps the 8 DLRM ranks' whole job (66,097 characters with the job's critical
/// path and the per-op launch hint) in one link, and the inflated size stays bounded below.
pub const MAX_FRAGMENT: usize = 80 * 1024;
/// The most JSON a fragment may inflate to.
pub const MAX_INFLATED: usize = 1 << 20;
/// At most this many traces, and rows in any one table.
pub const MAX_TRACES: usize = 64;
/// At most this many rows in a link's ranks view (each a few numbers).
pub const MAX_RANKS: usize = 1024;
/// At most this many rows in a table of the view state (unfolded rows).
pub const MAX_ROWS: usize = 1000;
/// At most this many items in any one list of a link (the ranks view's rows are the longest).
pub const MAX_LIST: usize = MAX_RANKS;
/// The longest string (name, message) accepted, in bytes.
pub const MAX_STRING: usize = 16 * 1024;
/// The longest search text kept in the view state.
pub const MAX_QUERY: usize = 200;

pub fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
pub fn is_true(v: &bool) -> bool {
    *v
}
pub fn yes() -> bool {
    true
}

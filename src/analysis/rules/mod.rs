//! Naming rules: the taxonomy of kernels and ops, and the classification of each row by them.

pub mod kernel_name;
pub(super) mod name_flags;
pub mod op_work;
pub mod taxonomy;
pub mod tokens;

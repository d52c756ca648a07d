//! The names of each kernel family, as its library emits them (token patterns, see
//! [`Tokens`](crate::analysis::rules::tokens::Tokens)), for the table in `kernel_rules`.

mod attention;
mod comm;
mod data;
mod gemm;
mod layers;

pub use attention::*;
pub use comm::*;
pub use data::*;
pub use gemm::*;
pub use layers::*;

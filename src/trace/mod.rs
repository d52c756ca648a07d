//! What a reading is made of, whatever the format: the typed, format-neutral events
//! ([`Event`], [`Meta`]) an importer hands to a [`Sink`], and how the reading ended
//! ([`Outcome`], [`End`], [`Fatal`]). The formats themselves live in `input::formats`; the
//! collector (the analysis' sink) sees only these types.

#![forbid(unsafe_code)]

mod event;
pub mod number;
mod outcome;
mod value;

pub use event::*;
pub use number::micros_to_nanos;
pub use outcome::*;
pub use value::*;

//! The page's state: which screen it shows, the finished analysis, the per-file progress
//! rows ([`Page`], with the user's actions and what the workers' events do), and the view
//! state of the report on screen ([`ViewSignals`]). `app::App` makes it; the views read it.

mod events;
mod open;
mod page;
pub mod saved;
mod stage;
mod view;

pub use open::first_stage;
pub use page::Page;
pub use stage::*;
pub use view::ViewSignals;

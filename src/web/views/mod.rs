//! The screens and the report's sections. Each renders from data it is given; the page's
//! state lives in `web::state` (made by `app::App`). Small pieces several sections share are
//! in `widgets`.

mod attention;
mod buckets;
mod compare;
mod critical_path;
mod efficiency;
mod error;
mod hints;
mod job;
mod progress;
mod report;
mod rules;
mod start;
mod summary;
mod tables;
mod timeline;
mod why;
mod widgets;

pub use error::ErrorScreen;
pub use progress::ProgressScreen;
pub use report::ReportScreen;
pub use start::StartScreen;

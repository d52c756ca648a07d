//! The screens and the report's sections. Each renders from data it is given; the state
//! lives in `app::App`.

mod attention;
mod buckets;
mod compare;
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
pub use rules::saved_rules;
pub use start::StartScreen;
pub use timeline::RangeRequest;

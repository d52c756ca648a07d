//! Exports of a Report: its JSON as the CLI prints it, a Markdown summary (for GitHub issues and
//! chat) and the tables as CSV. Pure functions of the Report, shared by the CLI and the web page.

#![forbid(unsafe_code)]

pub mod csv;
pub mod diff_md;
pub mod json;
pub mod markdown;
pub mod roofline;

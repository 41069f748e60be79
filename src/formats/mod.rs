//! The file formats a learner or another program reads and writes: the JSON scenario, the share
//! link in the URL fragment with the page's query options, the trace export (JSON, CSV) with its
//! Markdown handout, and the worksheet with its answer key.

pub mod page;
pub mod permalink;
pub mod report;
pub mod scenario;
pub mod worksheet;

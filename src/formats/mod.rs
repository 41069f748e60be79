//! The file formats a learner or another program reads and writes: the JSON scenario, the share
//! link in the URL fragment, and the trace export (JSON, CSV) with its Markdown handout.

pub mod permalink;
pub mod report;
pub mod scenario;

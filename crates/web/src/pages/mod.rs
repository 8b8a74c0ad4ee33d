//! The HTML pages (maud templates: every interpolated value is escaped). Each
//! module renders one page's main region from the data its module computed; the
//! frame around it is `layout`.

pub mod layout;
pub mod memory_page;
pub mod misc;
pub mod search_page;
pub mod timeline_page;
pub mod tree_page;

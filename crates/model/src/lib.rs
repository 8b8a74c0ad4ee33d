//! gitloom-model: what a memory is, independent of where it is stored.
//!
//! Memory files (YAML frontmatter + markdown body), their tiers and store paths,
//! `##` sections with line spans, `[[wikilinks]]`, `related:` edges and entity
//! mentions. Pure: no I/O, no git, no SQLite. Everything here is deterministic and
//! cheap enough to run on every file of a store during a rebuild.
//!
//! Not here: reading or writing files (`gitloom-store`), indexing (`gitloom-index`).
#![forbid(unsafe_code)]

pub mod body;
pub mod cite;
pub mod entity;
pub mod memory;
pub mod path;
pub mod text;
pub mod when;

pub use body::{Section, WikiLink};
pub use cite::{Citation, SOURCES_KEY};
pub use entity::{EntityRef, fold_name};
pub use memory::{Frontmatter, MAX_MEMORY_BYTES, Memory, MemoryError, Related, TimelineEntry};
pub use path::{Area, PathError, StorePath, Tier, is_committable, normalise_topic, slugify};
pub use text::{Word, content_terms, is_stopword, norms, words};
pub use when::When;

//! gitloom-web: a web view of a store, for people.
//!
//! Server-rendered pages (maud templates, a few lines of JavaScript for keyboard
//! shortcuts, no build step, everything served from the binary) under `/ui`:
//!
//! - the topic tree with counts (`/ui/n/<store>/`),
//! - a memory: frontmatter as a card, the body rendered, the supersession chain both
//!   ways, links out and in, the session transcripts it came from, and its history
//!   with each commit's diff (`/ui/n/<store>/m/<path>`),
//! - search: `retrieve` with explain — which arm found each hit, raw score and rank,
//!   why it is evidence, why an answer abstained (`/ui/n/<store>/search?q=`),
//! - the commit timeline with what each commit added or changed, and each commit's
//!   diffs (`/ui/n/<store>/timeline`, `/ui/n/<store>/c/<sha>`),
//! - `?at=` (a sha, `HEAD~3`, a date) on every page: the store as it was then.
//!
//! [`router`] builds the axum routes over a [`Source`]: `gitloom serve` mounts them
//! behind the API's own key check (a sign-in form keeps the key in an HttpOnly
//! cookie), `gitloom ui` over a [`LocalSource`] on loopback. Memory bodies are user
//! content: every value is escaped by the templates, markdown is rendered with raw
//! HTML and script links neutralised (`markdown.rs`), and a Content-Security-Policy
//! forbids anything inline or from elsewhere.
//!
//! Read-only by design: no page writes to a store (writes go through the API, the
//! CLI or MCP). Not here: the HTTP API, accounts, argument parsing.
#![forbid(unsafe_code)]

pub mod diff;
mod error;
pub mod history;
pub mod links;
pub mod markdown;
pub mod memory;
pub mod moment;
mod pages;
mod routes;
pub mod search;
mod source;
pub mod tree;
pub mod urls;

pub use error::WebError;
pub use routes::{KEY_COOKIE, router};
pub use source::{LOCAL_STORE, LocalSource, Source, Viewer};

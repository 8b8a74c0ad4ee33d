//! A memory's links, both ways (the `related` op).

use gitloom_index::LinkRow;

use crate::engine::Engine;
use crate::error::Result;

impl Engine {
    /// (links out of `path`, links into it), from the index at HEAD.
    pub fn links(&self, path: &str) -> Result<(Vec<LinkRow>, Vec<LinkRow>)> {
        self.ensure_synced()?;
        let index = self.index();
        Ok((index.links_from(path)?, index.links_to(path)?))
    }
}

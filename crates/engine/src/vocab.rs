//! The store's term aliases (`vocab/*.md`, format in `gitloom_index::Vocab`): read
//! from git at the indexed commit and handed to the index, which widens lexical
//! queries with them. Re-read only when the `vocab/` tree changes.

use gitloom_index::{Index, Vocab};
use gitloom_store::ObjectId;

use crate::engine::Engine;
use crate::error::Result;

impl Engine {
    /// Loads the alias groups of `tree` into `index` unless it already has them.
    pub(crate) fn refresh_vocab(&self, index: &mut Index, tree: ObjectId) -> Result<()> {
        let root = tree.to_string();
        if index.vocab_tree() == Some(root.as_str()) {
            return Ok(());
        }
        let sub = self.store.subtree(tree, "vocab")?;
        let key = sub.map(|s| s.to_string()).unwrap_or_default();
        if index.vocab_key() == Some(key.as_str()) {
            index.set_vocab_tree(root);
            return Ok(());
        }
        let mut groups = Vec::new();
        if let Some(sub) = sub {
            for entry in self.store.walk(sub)? {
                if !entry.path.ends_with(".md") {
                    continue;
                }
                let file = format!("vocab/{}", entry.path);
                let bytes = self.store.read_blob(entry.blob)?;
                let text = String::from_utf8_lossy(&bytes);
                let (g, problems) = Vocab::parse_file(&file, &text);
                groups.extend(g);
                for p in problems {
                    self.warn(p);
                }
            }
        }
        index.set_vocab(key, Vocab::new(groups));
        index.set_vocab_tree(root);
        Ok(())
    }

    /// The alias groups in force at HEAD.
    pub fn vocab(&self) -> Result<Vocab> {
        self.ensure_synced()?;
        Ok(self.index().vocab().clone())
    }
}

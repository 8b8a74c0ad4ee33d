//! Read-only memory maps of files this crate writes or verifies: the MiniLM weights
//! and the persisted vector arena. The one module of the workspace that uses `unsafe`
//! (ARCHITECTURE.md, "Decisions").
//!
//! Why map rather than read: a cold `gitloom retrieve` needs a few hundred kilobytes of
//! the 90 MB of weights (the rows of the query's tokens in the embedding table, which is
//! half the file) and one pass over the int8 part of the arena; reading both files
//! whole cost most of a cold query (ARCHITECTURE.md, BENCHMARKS.md "Speed").
//!
//! The hazard of a map is the file changing under it: bytes changing while they are
//! read as `&[u8]`, or a truncation (then a read past the end raises SIGBUS). Neither
//! file is ever written in place: `install.rs` stages a whole model directory and
//! renames it over the old one, and `arena_file.rs` writes a new arena beside the old
//! and renames it over; a renamed-over or deleted file keeps its inode (and the map its
//! bytes) until the last map of it goes. Only someone editing these files by hand while
//! a process has them open can break that, which is the stance ripgrep takes for the
//! files it searches.
#![allow(unsafe_code)]

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use crate::EmbedError;

/// A read-only map of a whole file, with the path it came from.
pub(crate) struct MappedFile {
    map: Mmap,
    path: PathBuf,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("path", &self.path)
            .field("len", &self.map.len())
            .finish()
    }
}

impl MappedFile {
    /// Maps `path` read-only. `populate` asks the kernel to fault every page in at once
    /// (cheaper than one fault per page when all of it will be read).
    pub(crate) fn open(path: &Path, populate: bool) -> Result<MappedFile, EmbedError> {
        let file = File::open(path).map_err(EmbedError::io(path, "open"))?;
        let mut options = memmap2::MmapOptions::new();
        if populate {
            options.populate();
        }
        // SAFETY: the map is read-only and private to this process. The files mapped
        // here (model weights, arena files) are only ever replaced by rename, never
        // written or truncated in place (see the module doc), so the bytes behind the
        // map do not change while it lives. Every use of the bytes is bounds-checked
        // slicing of `&[u8]`; nothing is reinterpreted without `bytemuck`'s checks.
        let map = unsafe { options.map(&file) }.map_err(EmbedError::io(path, "map"))?;
        Ok(MappedFile {
            map,
            path: path.to_path_buf(),
        })
    }

    /// The file's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }
}

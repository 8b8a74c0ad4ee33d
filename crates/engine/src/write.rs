//! Writes: validate everything, commit once, sync once.

use std::path::{Path, PathBuf};

use gitloom_model::{Area, Memory, StorePath};
use gitloom_store::Batch;
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{EngineError, Result};
use crate::sync::SyncReport;

/// Largest transcript or vocabulary file accepted (they are not parsed as memories).
pub const MAX_OTHER_BYTES: usize = 16 * 1024 * 1024;

/// What a write did.
#[derive(Debug, Clone, Serialize)]
pub struct WriteOutcome {
    /// The new commit, or `None` when the batch changed nothing.
    pub commit: Option<String>,
    pub paths: Vec<String>,
    pub message: String,
    pub sync: SyncReport,
}

/// Checks one file before it may be committed; returns the bytes to commit (a
/// memory without `created:` gets one).
pub(crate) fn validate(
    path: &StorePath,
    bytes: &[u8],
    now: jiff::Timestamp,
) -> Result<Vec<u8>, String> {
    validate_parsed(path, bytes, now).map(|(bytes, _)| bytes)
}

/// [`validate`], with the memory the bytes to commit parse to, when it has it (they
/// are the bytes it parsed: nothing was inserted).
fn validate_parsed(
    path: &StorePath,
    bytes: &[u8],
    now: jiff::Timestamp,
) -> Result<(Vec<u8>, Option<Memory>), String> {
    path.check_new().map_err(|e| e.to_string())?;
    match path.area() {
        Area::Tier(_) => {
            let memory = Memory::parse(path.as_str(), bytes).map_err(|e| e.to_string())?;
            if memory.front.created.is_none() {
                return Ok((insert_created(bytes, now), None));
            }
            Ok((bytes.to_vec(), Some(memory)))
        }
        Area::Sessions | Area::Vocab => {
            if bytes.len() > MAX_OTHER_BYTES {
                return Err(format!(
                    "{path}: {} bytes; at most {MAX_OTHER_BYTES} are accepted",
                    bytes.len()
                ));
            }
            let text =
                std::str::from_utf8(bytes).map_err(|e| format!("{path}: not valid UTF-8 ({e})"))?;
            if text.contains('\0') {
                return Err(format!("{path}: contains a NUL byte"));
            }
            Ok((bytes.to_vec(), None))
        }
    }
}

/// Adds `created:` as the last frontmatter line, leaving every other byte as the
/// user wrote it (a full re-render would reorder their keys).
fn insert_created(bytes: &[u8], now: jiff::Timestamp) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let stamp = format!("created: {}\n", now.strftime("%Y-%m-%dT%H:%M:%SZ"));
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i > 0 && matches!(line.trim_end(), "---" | "...") {
            let mut out = String::with_capacity(text.len() + stamp.len());
            out.push_str(&text[..offset]);
            out.push_str(&stamp);
            out.push_str(&text[offset..]);
            return out.into_bytes();
        }
        offset += line.len();
    }
    bytes.to_vec()
}

/// Checks that a path may be written anew (see [`StorePath::check_new`]): a front-end
/// calls it on a request's parameters before accepting the work.
pub fn check_new_path(path: &StorePath) -> Result<()> {
    Ok(path.check_new()?)
}

impl Engine {
    /// Writes one file (a whole memory file for the tiers) as one commit.
    pub fn write(
        &self,
        path: &str,
        content: &[u8],
        message: Option<String>,
    ) -> Result<WriteOutcome> {
        let path = StorePath::parse(path)?;
        let message = message.unwrap_or_else(|| format!("remember: {path}"));
        self.write_batch(vec![(path, Some(content.to_vec()))], message, None)
    }

    /// Deletes one memory as one commit.
    pub fn delete(&self, path: &str) -> Result<WriteOutcome> {
        let path = StorePath::parse(path)?;
        let message = format!("forget: {path}");
        self.write_batch(vec![(path, None)], message, None)
    }

    /// Writes a batch as one commit: every file is validated first and nothing is
    /// written if any is refused.
    pub fn write_batch(
        &self,
        files: Vec<(StorePath, Option<Vec<u8>>)>,
        message: String,
        time: Option<jiff::Timestamp>,
    ) -> Result<WriteOutcome> {
        self.write_batch_on(None, files, message, time)
    }

    /// [`Engine::write_batch`] for changes computed from the store at commit `base`
    /// (read-modify-write): if another writer changed one of these paths since,
    /// nothing is written and the error is [`gitloom_store::StoreError::Stale`], so
    /// the caller re-reads and recomputes instead of overwriting that change.
    pub fn write_batch_on(
        &self,
        base: Option<gitloom_store::ObjectId>,
        files: Vec<(StorePath, Option<Vec<u8>>)>,
        message: String,
        time: Option<jiff::Timestamp>,
    ) -> Result<WriteOutcome> {
        let paths = files.iter().map(|(p, _)| p.to_string()).collect();
        let batch = self.validated(base, files, message, time)?;
        // Alone, or with the writes that arrive meanwhile (`group.rs`).
        self.commit_batch(batch, paths)
    }

    /// [`Engine::write_batch_on`] without the index sync: the commit is in git, and
    /// the index catches up at the next read (or an explicit [`Engine::sync`]). For a
    /// writer making many commits in a row (ingestion, one per session) that reads
    /// nothing from the index in between, so it syncs once at the end.
    pub fn commit_batch_on(
        &self,
        base: Option<gitloom_store::ObjectId>,
        files: Vec<(StorePath, Option<Vec<u8>>)>,
        message: String,
        time: Option<jiff::Timestamp>,
    ) -> Result<Option<String>> {
        let batch = self.validated(base, files, message, time)?;
        let outcome = self.store.commit(&batch)?;
        Ok(outcome.map(|o| o.commit.to_string()))
    }

    /// Imports every `*.md` below `src` (paths relative to it) as one commit.
    /// Everything is validated before anything is written; hidden directories
    /// (`.git`, `.gitloom`) are skipped and symbolic links are not followed.
    pub fn import_dir(&self, src: &Path) -> Result<WriteOutcome> {
        let mut files = Vec::new();
        collect_markdown(src, src, &mut files)?;
        files.sort();
        if files.is_empty() {
            return Err(EngineError::Usage(format!(
                "no .md files found below {}",
                src.display()
            )));
        }
        let now = jiff::Timestamp::now();
        let mut errors = Vec::new();
        let mut batch = Vec::with_capacity(files.len());
        for (rel, abs) in files {
            let path = match StorePath::parse(&rel) {
                Ok(p) => p,
                Err(e) => {
                    errors.push(format!("{}: {e}", abs.display()));
                    continue;
                }
            };
            let bytes = std::fs::read(&abs).map_err(|source| EngineError::Io {
                what: "cannot read",
                path: abs.clone(),
                source,
            })?;
            match validate(&path, &bytes, now) {
                Ok(b) => batch.push((path, Some(b))),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::Invalid(errors));
        }
        let message = format!("import: {} files from {}", batch.len(), src.display());
        self.write_batch(batch, message, None)
    }
}

impl Engine {
    /// Every file of a batch validated (and normalised) before anything is written:
    /// one refused file refuses the batch, with every error listed. The memories
    /// parsed are kept for the sync that indexes them (`parsed.rs`).
    fn validated(
        &self,
        base: Option<gitloom_store::ObjectId>,
        files: Vec<(StorePath, Option<Vec<u8>>)>,
        message: String,
        time: Option<jiff::Timestamp>,
    ) -> Result<Batch> {
        let now = time.unwrap_or_else(jiff::Timestamp::now);
        let mut errors = Vec::new();
        let mut changes = Vec::with_capacity(files.len());
        let mut parsed = Vec::new();
        for (path, bytes) in files {
            match bytes {
                Some(b) => match validate_parsed(&path, &b, now) {
                    Ok((b, memory)) => {
                        if let Some(m) = memory {
                            parsed.push((path.to_string(), b.clone(), m));
                        }
                        changes.push((path, Some(b)));
                    }
                    Err(e) => errors.push(e),
                },
                None => changes.push((path, None)),
            }
        }
        if !errors.is_empty() {
            return Err(EngineError::Invalid(errors));
        }
        for (path, bytes, memory) in parsed {
            self.parsed.keep(&path, bytes, memory);
        }
        Ok(Batch {
            changes,
            message,
            time,
            allow_dirty_overwrite: false,
            base,
        })
    }
}

fn collect_markdown(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|source| EngineError::Io {
        what: "cannot read directory",
        path: dir.to_owned(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| EngineError::Io {
            what: "cannot read directory",
            path: dir.to_owned(),
            source,
        })?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(|source| EngineError::Io {
            what: "cannot stat",
            path: path.clone(),
            source,
        })?;
        if kind.is_dir() {
            collect_markdown(root, &path, out)?;
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, path));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_is_inserted_without_touching_the_rest() {
        let now: jiff::Timestamp = "2026-01-02T03:04:05Z".parse().expect("valid");
        let out = insert_created(b"---\ntitle: t\nzeta: 1\n---\nbody\n", now);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "---\ntitle: t\nzeta: 1\ncreated: 2026-01-02T03:04:05Z\n---\nbody\n"
        );
    }
}

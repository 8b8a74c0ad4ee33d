//! An [`Arena`] persisted in a file, with two strings per key (the engine stores each
//! unit's path and label), read back in place through a memory map.
//!
//! A cold process that opens a ready arena maps the file and checks its layout; the
//! rows are not copied or decoded, and a query's scan touches the int8 section. The file is written beside the old one and renamed over
//! it (never changed in place: `mapped.rs` relies on that), so a reader sees the old
//! arena or the new one, whole. A file that is missing, truncated, of another format
//! version, model, dimension or tag is not used: the caller rebuilds it.
//!
//! Layout (little-endian; every section starts on a 64-byte boundary):
//!
//! ```text
//! magic "GLARENA1" | u32 version | u32 dim | u64 rows | u64 keys (label pairs)
//! | u32 model length | u32 tag length | model | tag
//! | keys u32 × rows | kinds u8 × rows | qscale f32 × rows | quant i8 × rows × dim
//! | label offsets u32 × (2 × keys + 1) | label bytes (UTF-8)
//! ```
//!
//! Format 1 also held every row in f32 (and each row's inverse norm) for rescoring; a
//! format 1 file is of another version, so it is rebuilt once, from the vectors the
//! engine keeps.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::EmbedError;
use crate::arena::{Arena, Mapped};
use crate::mapped::MappedFile;

const MAGIC: &[u8; 8] = b"GLARENA1";
const VERSION: u32 = 2;
const ALIGN: usize = 64;

/// Two strings per key of an arena: an owner and a label.
#[derive(Clone)]
pub struct Labels {
    inner: LabelsInner,
}

#[derive(Clone)]
enum LabelsInner {
    Owned(Vec<(String, String)>),
    Mapped {
        file: Arc<MappedFile>,
        offsets: Range<usize>,
        bytes: Range<usize>,
    },
}

impl std::fmt::Debug for Labels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Labels({} keys)", self.len())
    }
}

impl Labels {
    /// Labels held in memory, key = index.
    pub fn new(pairs: Vec<(String, String)>) -> Labels {
        Labels {
            inner: LabelsInner::Owned(pairs),
        }
    }

    /// How many keys have labels.
    pub fn len(&self) -> usize {
        match &self.inner {
            LabelsInner::Owned(v) => v.len(),
            LabelsInner::Mapped { offsets, .. } => (offsets.len() / 4).saturating_sub(1) / 2,
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (owner, label) of `key`; `None` past the end (or for bytes that are not
    /// UTF-8, which a file this crate wrote never holds).
    pub fn get(&self, key: usize) -> Option<(&str, &str)> {
        Some((self.owner(key)?, self.label(key)?))
    }

    /// The owner of `key` (see [`Labels::get`]).
    pub fn owner(&self, key: usize) -> Option<&str> {
        std::str::from_utf8(self.owner_bytes(key)?).ok()
    }

    /// The label of `key` (see [`Labels::get`]).
    pub fn label(&self, key: usize) -> Option<&str> {
        std::str::from_utf8(self.text(key.checked_mul(2)?.checked_add(1)?)?).ok()
    }

    /// The owner of `key` as bytes, not checked for UTF-8: for comparing owners (byte
    /// order is `str` order), which a search does many times over, for one answer.
    pub fn owner_bytes(&self, key: usize) -> Option<&[u8]> {
        self.text(key.checked_mul(2)?)
    }

    /// The `i`-th string's bytes: key `k`'s owner is string `2k`, its label `2k + 1`.
    fn text(&self, i: usize) -> Option<&[u8]> {
        match &self.inner {
            LabelsInner::Owned(v) => {
                let (owner, label) = v.get(i / 2)?;
                Some(if i.is_multiple_of(2) { owner } else { label }.as_bytes())
            }
            LabelsInner::Mapped {
                file,
                offsets,
                bytes,
            } => {
                let b = file.bytes();
                let off = |i: usize| -> Option<usize> {
                    let at = offsets.start + i.checked_mul(4)?;
                    let raw = b.get(at..at.checked_add(4)?)?;
                    Some(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]) as usize)
                };
                if i.checked_add(1)? >= offsets.len() / 4 {
                    return None;
                }
                b.get(bytes.clone())?.get(off(i)?..off(i + 1)?)
            }
        }
    }
}

/// An arena with its labels, as stored in a file.
#[derive(Debug, Clone)]
pub struct StoredArena {
    pub arena: Arena,
    pub labels: Labels,
    /// The model id the vectors are of.
    pub model: String,
    /// The caller's mark of what the arena reflects (the engine: build and commit).
    pub tag: String,
}

/// Why an arena file was not used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArenaMiss {
    /// There is no file.
    Missing,
    /// The file is not a usable arena (the reason names the problem).
    Invalid(String),
}

impl StoredArena {
    /// Opens an arena file written by [`StoredArena::write`], in place.
    pub fn open(path: &Path) -> Result<StoredArena, ArenaMiss> {
        if !path.exists() {
            return Err(ArenaMiss::Missing);
        }
        let file = MappedFile::open(path, false).map_err(|e| ArenaMiss::Invalid(e.to_string()))?;
        parse(file).map_err(ArenaMiss::Invalid)
    }

    /// Writes `arena` with `labels` (one pair per key) to `path`: a temporary file
    /// beside it, renamed over it.
    pub fn write(
        path: &Path,
        arena: &Arena,
        labels: &[(&str, &str)],
        model: &str,
        tag: &str,
    ) -> Result<(), EmbedError> {
        let all = RowRun {
            arena,
            rows: 0..arena.len(),
            key: None,
        };
        StoredArena::write_runs(path, arena.dim(), &[all], labels, model, tag)
    }

    /// Writes the rows of `runs`, in order, with `labels`: the same bytes as
    /// [`StoredArena::write`] of an arena that held those rows under those keys, without
    /// building that arena first (a sync's merge writes the unchanged rows straight from
    /// the mapped file of the commit before). Every run's arena must be of dimension
    /// `dim` and hold its rows.
    pub fn write_runs(
        path: &Path,
        dim: usize,
        runs: &[RowRun<'_>],
        labels: &[(&str, &str)],
        model: &str,
        tag: &str,
    ) -> Result<(), EmbedError> {
        for run in runs {
            if run.arena.dim() != dim || run.rows.end > run.arena.len() {
                return Err(EmbedError::invalid(
                    path,
                    format!(
                        "rows {:?} of an arena of {} rows of dimension {}, written as dimension {dim}",
                        run.rows,
                        run.arena.len(),
                        run.arena.dim()
                    ),
                ));
            }
        }
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(d) = dir {
            std::fs::create_dir_all(d).map_err(EmbedError::io(d, "create directory"))?;
        }
        let mut tmp_name = path.as_os_str().to_owned();
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        let tmp = PathBuf::from(tmp_name);
        let result = write_to(&tmp, dim, runs, labels, model, tag).and_then(|()| {
            std::fs::rename(&tmp, path).map_err(EmbedError::io(path, "rename into place"))
        });
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }
}

/// Rows of one arena to write: `rows` of `arena`, under `key`, or under the keys they
/// have (`None`).
#[derive(Debug, Clone)]
pub struct RowRun<'a> {
    pub arena: &'a Arena,
    pub rows: Range<usize>,
    pub key: Option<u32>,
}

/// The runs with neighbours of one arena joined: rows `a..b` then `b..c` of the same
/// arena are one slice of each section, so the largest sections of a merge are written
/// in a few long slices rather than one per memory.
fn spans<'a>(runs: &[RowRun<'a>]) -> Vec<(&'a Arena, Range<usize>)> {
    let mut out: Vec<(&'a Arena, Range<usize>)> = Vec::new();
    for run in runs.iter().filter(|r| !r.rows.is_empty()) {
        match out.last_mut() {
            Some((a, rows)) if std::ptr::eq(*a, run.arena) && rows.end == run.rows.start => {
                rows.end = run.rows.end;
            }
            _ => out.push((run.arena, run.rows.clone())),
        }
    }
    out
}

/// A buffered file writer that pads each section to [`ALIGN`].
struct Sections {
    w: std::io::BufWriter<std::fs::File>,
    at: usize,
}

impl Sections {
    fn bytes(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.w.write_all(b)?;
        self.at += b.len();
        Ok(())
    }

    fn f32s(&mut self, v: &[f32]) -> std::io::Result<()> {
        self.le_words(v, |x| x.to_le_bytes())
    }

    fn u32s(&mut self, v: &[u32]) -> std::io::Result<()> {
        self.le_words(v, |x| x.to_le_bytes())
    }

    /// Four-byte values in little-endian order. On a little-endian CPU they are their
    /// own bytes, written as they lie (a slice longer than the buffer goes straight to
    /// the file, without a copy); elsewhere converted in pieces.
    fn le_words<T: bytemuck::Pod>(
        &mut self,
        v: &[T],
        le: impl Fn(&T) -> [u8; 4],
    ) -> std::io::Result<()> {
        if cfg!(target_endian = "little") {
            return self.bytes(bytemuck::cast_slice(v));
        }
        for piece in v.chunks(1 << 14) {
            let bytes: Vec<u8> = piece.iter().flat_map(&le).collect();
            self.bytes(&bytes)?;
        }
        Ok(())
    }

    fn end_section(&mut self) -> std::io::Result<()> {
        let padding = self.at.next_multiple_of(ALIGN) - self.at;
        self.bytes(&[0u8; ALIGN][..padding])
    }
}

fn write_to(
    path: &Path,
    dim: usize,
    runs: &[RowRun<'_>],
    labels: &[(&str, &str)],
    model: &str,
    tag: &str,
) -> Result<(), EmbedError> {
    let mut offsets = Vec::with_capacity(labels.len() * 2 + 1);
    let mut text = Vec::new();
    offsets.push(0u32);
    for (a, b) in labels {
        for s in [a, b] {
            text.extend_from_slice(s.as_bytes());
            let end = u32::try_from(text.len())
                .map_err(|_| EmbedError::invalid(path, "arena labels exceed 4 GiB"))?;
            offsets.push(end);
        }
    }
    let rows: usize = runs.iter().map(|r| r.rows.len()).sum();
    let spans = spans(runs);
    let file = std::fs::File::create(path).map_err(EmbedError::io(path, "create"))?;
    let mut s = Sections {
        w: std::io::BufWriter::with_capacity(1 << 20, file),
        at: 0,
    };
    (|| -> std::io::Result<()> {
        s.bytes(MAGIC)?;
        s.bytes(&VERSION.to_le_bytes())?;
        s.bytes(&(dim as u32).to_le_bytes())?;
        s.bytes(&(rows as u64).to_le_bytes())?;
        s.bytes(&(labels.len() as u64).to_le_bytes())?;
        s.bytes(&(model.len() as u32).to_le_bytes())?;
        s.bytes(&(tag.len() as u32).to_le_bytes())?;
        s.bytes(model.as_bytes())?;
        s.bytes(tag.as_bytes())?;
        s.end_section()?;
        for run in runs {
            match run.key {
                None => s.u32s(&run.arena.keys()[run.rows.clone()])?,
                Some(k) => s.u32s(&vec![k; run.rows.len()])?,
            }
        }
        s.end_section()?;
        for (a, r) in &spans {
            s.bytes(&a.kinds()[r.clone()])?;
        }
        s.end_section()?;
        for (a, r) in &spans {
            s.f32s(&a.qscale()[r.clone()])?;
        }
        s.end_section()?;
        for (a, r) in &spans {
            s.bytes(bytemuck::cast_slice(&a.quant()[r.start * dim..r.end * dim]))?;
        }
        s.end_section()?;
        s.u32s(&offsets)?;
        s.end_section()?;
        s.bytes(&text)?;
        s.w.flush()
    })()
    .map_err(EmbedError::io(path, "write"))
}

/// Reads the header and locates every section; checks that the sizes add up to the
/// file's and that each section casts to its type.
fn parse(file: MappedFile) -> Result<StoredArena, String> {
    let b = file.bytes();
    let u32_at = |at: usize| -> Result<u32, String> {
        let r = b.get(at..at + 4).ok_or("truncated header")?;
        Ok(u32::from_le_bytes([r[0], r[1], r[2], r[3]]))
    };
    let u64_at = |at: usize| -> Result<u64, String> {
        let r = b.get(at..at + 8).ok_or("truncated header")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(r);
        Ok(u64::from_le_bytes(a))
    };
    if b.get(..8) != Some(&MAGIC[..]) {
        return Err("not an arena file".into());
    }
    let version = u32_at(8)?;
    if version != VERSION {
        return Err(format!(
            "arena format {version} (this build reads {VERSION})"
        ));
    }
    let dim = u32_at(12)? as usize;
    let rows = usize::try_from(u64_at(16)?).map_err(|_| "row count too large")?;
    let keys = usize::try_from(u64_at(24)?).map_err(|_| "key count too large")?;
    let (model_len, tag_len) = (u32_at(32)? as usize, u32_at(36)? as usize);
    let text = |r: Range<usize>| -> Result<String, String> {
        let s = b.get(r).ok_or("truncated header")?;
        String::from_utf8(s.to_vec()).map_err(|_| "header is not UTF-8".to_string())
    };
    let model = text(40..40 + model_len)?;
    let tag = text(40 + model_len..40 + model_len + tag_len)?;
    let mut at = (40 + model_len + tag_len).next_multiple_of(ALIGN);
    let mut take = |len: usize| -> Range<usize> {
        let r = at..at + len;
        at = (at + len).next_multiple_of(ALIGN);
        r
    };
    let overflow = || "section sizes overflow".to_string();
    let r_keys = take(rows.checked_mul(4).ok_or_else(overflow)?);
    let r_kinds = take(rows);
    let r_qscale = take(rows * 4);
    let r_quant = take(rows.checked_mul(dim).ok_or_else(overflow)?);
    let r_offsets = take(keys.checked_mul(8).ok_or_else(overflow)? + 4);
    let label_start = r_offsets.end.next_multiple_of(ALIGN);
    if label_start > b.len() {
        return Err(format!(
            "truncated: {} bytes, sections need at least {label_start}",
            b.len()
        ));
    }
    let last =
        |i: usize| -> Result<usize, String> { Ok(u32_at(r_offsets.start + i * 4)? as usize) };
    let label_len = last(2 * keys)?;
    if label_start + label_len != b.len() {
        return Err(format!(
            "{} bytes where the header implies {}",
            b.len(),
            label_start + label_len
        ));
    }
    let casts = bytemuck::try_cast_slice::<u8, u32>(&b[r_keys.clone()]).is_ok()
        && bytemuck::try_cast_slice::<u8, f32>(&b[r_qscale.clone()]).is_ok()
        && cfg!(target_endian = "little");
    if !casts {
        return Err("sections do not cast in place on this machine".into());
    }
    let bad_key = bytemuck::try_cast_slice::<u8, u32>(&b[r_keys.clone()])
        .map_err(|e| e.to_string())?
        .iter()
        .any(|&k| k as usize >= keys);
    if bad_key {
        return Err("a row names a key with no labels".into());
    }
    let file = Arc::new(file);
    let labels = Labels {
        inner: LabelsInner::Mapped {
            file: file.clone(),
            offsets: r_offsets,
            bytes: label_start..label_start + label_len,
        },
    };
    let mapped = Mapped {
        file,
        keys: r_keys,
        kinds: r_kinds,
        quant: r_quant,
        qscale: r_qscale,
    };
    Ok(StoredArena {
        arena: Arena::mapped(dim, mapped),
        labels,
        model,
        tag,
    })
}

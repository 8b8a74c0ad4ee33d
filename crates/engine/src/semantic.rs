//! The two semantic arms: cosine of the query against cue vectors and against body
//! (section) vectors, scored in one pass over one contiguous arena.
//!
//! Vectors come from a cache keyed by (model id, hash of the text) that lives apart
//! from the rebuildable index, so a rebuild or schema bump recomputes none of them
//! and identical texts share one vector.
//!
//! The arena of the store's own index is persisted beside it
//! (`.gitloom/arena-<model>.bin`, [`gitloom_embed::StoredArena`]) and kept in step by
//! sync: a sync writes the rows of the files it did not touch straight from the
//! previous arena's map, with the new units' vectors where a full build would put
//! them, then maps the new file (`ArenaMerge`), so a cold process, and this one, map a
//! ready arena instead of reading every vector out of `vectors.db`. The
//! file names the build and commit it reflects; one that is missing or names anything
//! else is rebuilt from the vector cache by the first query that needs it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use gitloom_embed::{
    Arena, ArenaMiss, EmbedStats, Embedder, Labels, RowRun, ScanHit, ScanJob, StoredArena,
    VectorCache, chunk, embed_cached, max_words_for_tokens,
};
use gitloom_index::{EmbedUnit, Index, UnitKind};
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, Result};
use crate::sync::ArenaUpdate;

/// A progress callback: (what, done, total).
pub type Progress = dyn Fn(&str, usize, usize) + Send + Sync;

/// Cut-offs of the semantic arms for one embedding model (plan item R4): a hit is
/// kept if its cosine is at least `floor` and at least
/// `best - margin * (best - median)` of the candidates scanned.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct SemanticCut {
    pub cue_floor: f32,
    pub body_floor: f32,
    pub margin: f32,
}

impl SemanticCut {
    /// No cut: every candidate scanned is kept (an infinite margin puts the adaptive
    /// cut below any floor; the floors are below any cosine). For score fusion,
    /// which ranks by the cosines themselves.
    pub const KEEP_ALL: SemanticCut = SemanticCut {
        cue_floor: -1.0,
        body_floor: -1.0,
        margin: f32::INFINITY,
    };

    /// Defaults per model id; unknown models get a permissive floor (rank, don't cut).
    pub fn for_model(model_id: &str) -> SemanticCut {
        if model_id.starts_with("minilm-l6-v2") {
            SemanticCut {
                cue_floor: 0.30,
                body_floor: 0.25,
                margin: 0.75,
            }
        } else if model_id.starts_with("static-") {
            SemanticCut {
                cue_floor: 0.45,
                body_floor: 0.40,
                margin: 0.6,
            }
        } else {
            SemanticCut {
                cue_floor: 0.0,
                body_floor: 0.0,
                margin: 1.0,
            }
        }
    }
}

/// One arm's best cosine per file, best first, with the unit that produced it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SemanticHits {
    pub cues: Vec<(String, f32, String)>,
    pub bodies: Vec<(String, f32, String)>,
    /// Body hits under the cut, best first: not candidates on their own, but they
    /// can corroborate another arm's (see `RetrieveConfig::corroborate`).
    pub bodies_below: Vec<(String, f32, String)>,
    /// The body cosine the cut was made at.
    pub body_cutoff: f32,
}

struct Built {
    commit: String,
    arena: Arena,
    /// Arena key → (path, label).
    labels: Labels,
}

impl Built {
    fn new(commit: &str, arena: Arena, labels: Labels) -> Built {
        Built {
            commit: commit.to_owned(),
            arena,
            labels,
        }
    }

    /// The arena rows (cues and body chunks) of `path`, found by binary search: keys
    /// are in path order and each key's rows contiguous and in key order, as a full
    /// build makes them and [`merge`] keeps them (its test holds it to a full build).
    /// A path's keys and rows are few (a cue or two, a few body chunks), so their ends
    /// are found by galloping from their starts rather than by a search of the rest.
    fn rows_of(&self, path: &str) -> std::ops::Range<usize> {
        // Compared as bytes (their order is the strings'): no probe checks UTF-8.
        let path_of = |k: usize| self.labels.owner_bytes(k).unwrap_or_default();
        let path = path.as_bytes();
        let first = lower_bound(self.labels.len(), |k| path_of(k) < path);
        let end =
            first + lower_bound_near(self.labels.len() - first, |i| path_of(first + i) == path);
        let key_of = |row: usize| self.arena.meta(row).map_or(u32::MAX, |(k, _)| k) as usize;
        let rows = self.arena.len();
        let start = lower_bound(rows, |r| key_of(r) < first);
        start..start + lower_bound_near(rows - start, |i| key_of(start + i) < end)
    }
}

/// [`lower_bound`] for an answer expected near 0: probes 0, 1, 3, 7, … until
/// `before` is false, then searches the last step. The same answer whenever
/// `before` is true on a prefix, in O(log answer) probes instead of O(log n).
fn lower_bound_near(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut step) = (0, 1);
    loop {
        // Every index under `lo` is known to be `before`.
        let probe = lo + step - 1;
        if probe >= n || !before(probe) {
            let hi = probe.min(n);
            return lo + lower_bound(hi - lo, |i| before(lo + i));
        }
        lo = probe + 1;
        step *= 2;
    }
}

/// The first of `0..n` for which `before` is false, `before` being true on a prefix.
fn lower_bound(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

pub(crate) struct Semantic {
    pub(crate) embedder: Arc<dyn Embedder>,
    cache: VectorCache,
    built: Mutex<Option<Arc<Built>>>,
    queries: Mutex<HashMap<String, Vec<f32>>>,
    /// The store's own index and where its arena is persisted (other indexes, such as
    /// time travel's, get an arena in memory only).
    main_index: PathBuf,
    arena_path: PathBuf,
    /// Where an arena built at query time reports its embedding: a store embedded by
    /// another model (MiniLM at another precision, say) re-embeds every text on its
    /// first query, minutes at 10k memories, which should not look like a hang.
    progress: Option<Arc<Progress>>,
}

/// Units with their texts' vectors: what [`Semantic::embed_units`] found or computed.
pub(crate) struct Embedded {
    units: Vec<EmbedUnit>,
    /// Per text (a cue, or a chunk of a body): the unit it belongs to.
    owners: Vec<usize>,
    vectors: Vec<Vec<f32>>,
    pub(crate) stats: EmbedStats,
}

fn kind_code(kind: UnitKind) -> u8 {
    match kind {
        UnitKind::Cue => 0,
        UnitKind::Body => 1,
    }
}

fn key(unit: usize) -> Result<u32> {
    u32::try_from(unit).map_err(|_| EngineError::Usage("too many embedding units".into()))
}

fn embed_err(e: impl std::fmt::Display) -> EngineError {
    EngineError::Embed(e.to_string())
}

/// The texts of units, chunked to the model's window: (unit index, text).
fn chunks(embedder: &dyn Embedder, units: &[EmbedUnit]) -> Vec<(usize, String)> {
    let max_words = max_words_for_tokens(embedder.max_tokens());
    let mut out = Vec::with_capacity(units.len());
    for (i, u) in units.iter().enumerate() {
        if u.text.trim().is_empty() {
            continue;
        }
        match u.kind {
            UnitKind::Cue => out.push((i, u.text.clone())),
            UnitKind::Body => out.extend(chunk(&u.text, max_words).into_iter().map(|c| (i, c))),
        }
    }
    out
}

impl Semantic {
    /// Opens the vector cache; `index_path` is the store's own index, whose arena is
    /// persisted in `arena_dir`.
    pub(crate) fn open(
        embedder: Arc<dyn Embedder>,
        cache_path: &Path,
        index_path: &Path,
        arena_dir: &Path,
    ) -> Result<(Semantic, Option<String>)> {
        let (cache, status) =
            VectorCache::open(cache_path).map_err(|e| EngineError::Embed(e.to_string()))?;
        let warning = match status {
            gitloom_embed::CacheStatus::Reset { reason } => Some(format!(
                "vector cache {} was unusable ({reason}); vectors will be recomputed",
                cache_path.display()
            )),
            _ => None,
        };
        let model_hash = blake3::hash(embedder.model_id().as_bytes()).to_hex();
        let arena_path = arena_dir.join(format!("arena-{}.bin", &model_hash[..16]));
        Ok((
            Semantic {
                embedder,
                cache,
                built: Mutex::new(None),
                queries: Mutex::new(HashMap::new()),
                main_index: index_path.to_path_buf(),
                arena_path,
                progress: None,
            },
            warning,
        ))
    }

    pub(crate) fn model_id(&self) -> &str {
        self.embedder.model_id()
    }

    /// Reports the embedding of an arena built at query time to `progress`.
    pub(crate) fn with_progress(mut self, progress: Option<Arc<Progress>>) -> Semantic {
        self.progress = progress;
        self
    }

    /// Embeds (or finds in the cache) the units of `paths` (all when `None`).
    pub(crate) fn embed_units(
        &self,
        index: &Index,
        paths: Option<&[String]>,
        progress: Option<&Progress>,
    ) -> Result<Embedded> {
        let units = index.embed_units(paths)?;
        self.vectors(units, progress)
    }

    /// Vectors of the units' texts (chunked to the model's window), from the cache or
    /// the model.
    fn vectors(&self, units: Vec<EmbedUnit>, progress: Option<&Progress>) -> Result<Embedded> {
        let texts = chunks(self.embedder.as_ref(), &units);
        let refs: Vec<&str> = texts.iter().map(|(_, t)| t.as_str()).collect();
        let cb = |done: usize, total: usize| {
            if let Some(p) = progress {
                p("embedding", done, total);
            }
        };
        let (vectors, stats) = embed_cached(self.embedder.as_ref(), &self.cache, &refs, Some(&cb))
            .map_err(embed_err)?;
        Ok(Embedded {
            owners: texts.into_iter().map(|(u, _)| u).collect(),
            units,
            vectors,
            stats,
        })
    }

    /// The arena for `commit` of `index`: the one in memory, else (for the store's own
    /// index) the persisted one if it reflects this build and commit, else built from
    /// the index's units and the vector cache (embedding whatever is missing) and,
    /// for the store's own index, persisted.
    fn arena(
        &self,
        index: &Index,
        commit: &str,
        progress: Option<&Progress>,
    ) -> Result<Arc<Built>> {
        let mut guard = self.built.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = guard.as_ref()
            && b.commit == commit
        {
            return Ok(b.clone());
        }
        let main = index.path() == self.main_index;
        if main && let Some(b) = self.load_stored(commit) {
            let b = Arc::new(b);
            *guard = Some(b.clone());
            return Ok(b);
        }
        let progress = progress.or(self.progress.as_deref());
        let embedded = self.embed_units(index, None, progress)?;
        let built = Arc::new(self.build(commit, &embedded)?);
        if main {
            self.persist(&built);
        }
        *guard = Some(built.clone());
        Ok(built)
    }

    /// What the persisted arena's tag must say for `commit`.
    fn tag(commit: &str) -> String {
        format!("{} {commit}", crate::BUILD)
    }

    /// The persisted arena, if it is of this model, dimension, build and commit.
    fn load_stored(&self, commit: &str) -> Option<Built> {
        match StoredArena::open(&self.arena_path) {
            Ok(s)
                if s.model == self.embedder.model_id()
                    && s.arena.dim() == self.embedder.dim()
                    && s.tag == Self::tag(commit) =>
            {
                Some(Built::new(commit, s.arena, s.labels))
            }
            Ok(_) | Err(ArenaMiss::Missing) => None,
            Err(ArenaMiss::Invalid(reason)) => {
                tracing::warn!(path = %self.arena_path.display(), %reason, "arena file not used; rebuilding it");
                None
            }
        }
    }

    /// Writes `built` as the persisted arena. A failure (read-only or full disk) costs
    /// only time: the next cold process rebuilds it.
    fn persist(&self, built: &Built) {
        let labels: Vec<(&str, &str)> = (0..built.labels.len())
            .filter_map(|k| built.labels.get(k))
            .collect();
        if let Err(e) = StoredArena::write(
            &self.arena_path,
            &built.arena,
            &labels,
            self.embedder.model_id(),
            &Self::tag(&built.commit),
        ) {
            tracing::warn!("cannot persist the vector arena: {e}");
            return;
        }
        self.remove_other_arenas();
    }

    /// Removes the arena files of other models beside this one's (a model whose
    /// vectors changed, such as MiniLM moving to int8, leaves its old file: 80 MB at
    /// 10,000 memories). A process still reading one keeps its mapping; a store used
    /// with two embedders in turn rebuilds each one's arena from the vector cache.
    fn remove_other_arenas(&self) {
        let (Some(dir), Some(own)) = (self.arena_path.parent(), self.arena_path.file_name()) else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let is_arena = name
                .to_str()
                .is_some_and(|n| n.starts_with("arena-") && n.ends_with(".bin"));
            if is_arena && name != own {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }

    /// An arena of all of `embedded`'s units, in their order (key = unit index).
    fn build(&self, commit: &str, embedded: &Embedded) -> Result<Built> {
        let mut arena = Arena::with_capacity(self.embedder.dim(), embedded.vectors.len());
        for (unit, v) in embedded.owners.iter().zip(&embedded.vectors) {
            arena
                .push(key(*unit)?, kind_code(embedded.units[*unit].kind), v)
                .map_err(embed_err)?;
        }
        let labels = embedded
            .units
            .iter()
            .map(|u| (u.path.clone(), u.label.clone()))
            .collect();
        Ok(Built::new(commit, arena, Labels::new(labels)))
    }

    /// Brings the persisted arena from `old_commit` to `commit` after a sync of the
    /// store's own index: `changed` names every path upserted or removed (`None`: the
    /// sync was full) and `embedded` holds the units of the upserted (or all) paths.
    /// Without a previous arena for `old_commit` this is a full build.
    pub(crate) fn after_sync(
        &self,
        index: &Index,
        old_commit: Option<&str>,
        commit: &str,
        changed: Option<&[String]>,
        embedded: Option<Embedded>,
    ) -> Result<ArenaUpdate> {
        let mut guard = self.built.lock().unwrap_or_else(|p| p.into_inner());
        let previous = match (changed, old_commit) {
            (Some(_), Some(old)) => match guard.as_ref() {
                Some(b) if b.commit == old => Some(b.clone()),
                _ => self.load_stored(old).map(Arc::new),
            },
            _ => None,
        };
        let dim = self.embedder.dim();
        let (built, how) = match (previous, changed, embedded) {
            (Some(prev), Some(changed), new) => {
                let none = Embedded {
                    units: Vec::new(),
                    owners: Vec::new(),
                    vectors: Vec::new(),
                    stats: EmbedStats::default(),
                };
                let plan = ArenaMerge::new(&prev, changed, &new.unwrap_or(none), dim)?;
                // Written straight from the previous arena's rows and mapped back; in
                // memory, and not written again, only when the file cannot be written.
                let merged = match self.persist_merge(&prev, &plan, commit) {
                    Some(written) => written,
                    None => plan.build(&prev, commit, dim)?,
                };
                *guard = Some(Arc::new(merged));
                return Ok(ArenaUpdate::Merged);
            }
            (_, None, Some(all)) => (self.build(commit, &all)?, ArenaUpdate::Built),
            _ => {
                let all = self.embed_units(index, None, None)?;
                (self.build(commit, &all)?, ArenaUpdate::Built)
            }
        };
        self.persist(&built);
        *guard = Some(Arc::new(built));
        Ok(how)
    }

    /// Writes the arena `plan` makes of `prev` as the persisted arena of `commit`
    /// without building it in memory first, then maps it: at 10,000 memories that copy
    /// was 84 MB a sync process (and a server) held beside the map (peak RSS of a sync
    /// 189 → 117 MB; no faster, the kernel's write of the file is most of it now).
    /// `None` when it cannot be written or read back: the caller builds it in memory.
    fn persist_merge(&self, prev: &Built, plan: &ArenaMerge, commit: &str) -> Option<Built> {
        let labels: Vec<(&str, &str)> = plan
            .labels
            .iter()
            .map(|(p, l)| (p.as_str(), l.as_str()))
            .collect();
        let written = StoredArena::write_runs(
            &self.arena_path,
            self.embedder.dim(),
            &plan.runs(prev),
            &labels,
            self.embedder.model_id(),
            &Self::tag(commit),
        );
        if let Err(e) = written {
            tracing::warn!("cannot persist the vector arena: {e}");
            return None;
        }
        self.remove_other_arenas();
        self.load_stored(commit)
    }

    /// Embeds a query, once per distinct text per process.
    pub(crate) fn embed_query(&self, query: &str) -> Result<Vec<f32>> {
        if let Some(v) = self
            .queries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(query)
        {
            return Ok(v.clone());
        }
        let v = self
            .embedder
            .embed_query(query)
            .map_err(|e| EngineError::Embed(e.to_string()))?;
        let mut q = self.queries.lock().unwrap_or_else(|p| p.into_inner());
        if q.len() > 4096 {
            q.clear();
        }
        q.insert(query.to_owned(), v.clone());
        Ok(v)
    }

    /// The arena the semantic arms scan for `commit` of `index` (see
    /// [`Semantic::arena`]): once it is in hand the scan reads nothing of the index, so
    /// it can run on another thread while the lexical arm reads the index.
    pub(crate) fn scanner(&self, index: &Index, commit: &str) -> Result<Scanner> {
        Ok(Scanner(self.arena(index, commit, None)?))
    }
}

/// One arena, ready to be scanned by the semantic arms ([`Semantic::scanner`]).
pub(crate) struct Scanner(Arc<Built>);

impl Scanner {
    /// Rows in the arena (cues and body chunks).
    pub(crate) fn rows(&self) -> usize {
        self.0.arena.len()
    }

    /// Scores the query against every cue and body vector in one pass; returns each
    /// arm's best cosine per file after the adaptive cut `cut`, and the body cutoff
    /// (the bar the judge raises body evidence to).
    pub(crate) fn search(
        &self,
        query_vec: &[f32],
        depth: usize,
        cut: SemanticCut,
        keep: &dyn Fn(&str) -> bool,
    ) -> SemanticHits {
        if self.0.arena.is_empty() {
            return SemanticHits::default();
        }
        let per_kind = self.0.arena.scan_per_kind(query_vec, per_kind_top(depth));
        self.hits(per_kind, depth, cut, keep)
    }

    /// [`Scanner::search`]'s scan as a job that two threads can share: the worker
    /// begins it with [`ScanJob::help`], the caller, once its own arm is done, does
    /// what is left and ranks it with [`Scanner::search_job`].
    pub(crate) fn scan_job(&self, query_vec: &[f32], depth: usize) -> ScanJob {
        self.0.arena.scan_job(query_vec, per_kind_top(depth))
    }

    /// [`Scanner::search`] of a [`Scanner::scan_job`] of the same query and depth: the
    /// same hits, bit for bit, however the job was shared. `None` if another thread
    /// panicked in one of the job's pieces.
    pub(crate) fn search_job(
        &self,
        job: &ScanJob,
        depth: usize,
        cut: SemanticCut,
        keep: &dyn Fn(&str) -> bool,
    ) -> Option<SemanticHits> {
        let per_kind = job.finish()?;
        Some(self.hits(per_kind, depth, cut, keep))
    }

    /// Each arm's best cosine per file from the scan's per-kind hits, after the cut.
    fn hits(
        &self,
        per_kind: BTreeMap<u8, Vec<ScanHit>>,
        depth: usize,
        cut: SemanticCut,
        keep: &dyn Fn(&str) -> bool,
    ) -> SemanticHits {
        let mut out = SemanticHits::default();
        for (kind, hits) in per_kind {
            let floor = if kind == 0 {
                cut.cue_floor
            } else {
                cut.body_floor
            };
            let mut list = best_per_path(&self.0.labels, &hits, keep);
            list.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let cosines: Vec<f32> = list.iter().map(|x| x.1).collect();
            let cutoff = adaptive_cutoff(&cosines, floor, cut.margin);
            let below = list.split_off(list.partition_point(|x| x.1 >= cutoff));
            list.truncate(depth);
            if kind == 0 {
                out.cues = owned(list);
            } else {
                out.bodies = owned(list);
                out.bodies_below = owned(below);
                out.body_cutoff = cutoff;
            }
        }
        out
    }
}

/// Rows the scan keeps per kind for `depth` files: several rows per file (cues,
/// chunks), so it over-fetches, and each file's best is kept after.
fn per_kind_top(depth: usize) -> usize {
    depth.saturating_mul(4)
}

impl Semantic {
    /// The best cue and body cosine (`[cue, body]`, as the scan gives it, over every
    /// row of the file) of each of `paths` that has vectors: for candidates another arm
    /// found that [`Semantic::search`]'s head did not reach, so score fusion weighs
    /// their cosine instead of none.
    pub(crate) fn cosines_of(
        &self,
        index: &Index,
        commit: &str,
        query_vec: &[f32],
        paths: &[&str],
    ) -> Result<HashMap<String, [Option<f32>; 2]>> {
        let built = self.arena(index, commit, None)?;
        // Every path's rows scored in one call: the query is prepared once, not
        // once per path.
        let ranges: Vec<(&str, std::ops::Range<usize>)> = paths
            .iter()
            .map(|&p| (p, built.rows_of(p)))
            .filter(|(_, r)| !r.is_empty())
            .collect();
        let rows: Vec<usize> = ranges.iter().flat_map(|(_, r)| r.clone()).collect();
        let hits = built.arena.score_rows(query_vec, &rows);
        let mut out: HashMap<String, [Option<f32>; 2]> = HashMap::with_capacity(ranges.len());
        // The hits come in the rows' order, so each path's are the next run of them.
        let mut next = hits.iter().peekable();
        for (path, range) in &ranges {
            let best = out.entry((*path).to_owned()).or_default();
            while let Some(h) = next.next_if(|h| range.contains(&h.row)) {
                let slot = &mut best[usize::from(h.kind != 0)];
                *slot = Some(slot.map_or(h.cosine, |c| c.max(h.cosine)));
            }
        }
        Ok(out)
    }
}

/// Each kept path's best hit among `hits` (best first, as a scan returns them):
/// `(path, cosine, label)`, in no particular order. A path's first hit of its
/// highest cosine gives the label; `keep` is asked once per path, not per hit.
fn best_per_path<'a>(
    labels: &'a Labels,
    hits: &[ScanHit],
    keep: &dyn Fn(&str) -> bool,
) -> Vec<(&'a str, f32, &'a str)> {
    // Path (as bytes: a path's strings are checked for UTF-8 once, when it is first
    // met, not at every hit) → its place in `best`, or `None` for a path `keep`
    // refused or one that is not UTF-8.
    let mut at: HashMap<&[u8], Option<usize>> = HashMap::with_capacity(hits.len());
    let mut best: Vec<(&str, f32, &str)> = Vec::with_capacity(hits.len());
    for h in hits {
        let key = h.key as usize;
        let Some(owner) = labels.owner_bytes(key) else {
            continue;
        };
        let slot = *at.entry(owner).or_insert_with(|| {
            let path = std::str::from_utf8(owner).ok().filter(|p| keep(p))?;
            best.push((path, f32::MIN, ""));
            Some(best.len() - 1)
        });
        // The label is read only when it is kept: a path's first hit, as hits come
        // best first.
        if let Some(b) = slot.and_then(|i| best.get_mut(i))
            && h.cosine > b.1
            && let Some(label) = labels.label(key)
        {
            (b.1, b.2) = (h.cosine, label);
        }
    }
    // A path none of whose labels could be read (never in a file this build wrote).
    best.retain(|b| b.1 > f32::MIN);
    best
}

/// A cut list of [`best_per_path`] with its strings owned.
fn owned(list: Vec<(&str, f32, &str)>) -> Vec<(String, f32, String)> {
    list.into_iter()
        .map(|(p, c, l)| (p.to_owned(), c, l.to_owned()))
        .collect()
}

/// `max(floor, best - margin * (best - median))` over scores sorted best first: cut
/// where the distribution falls off, never below the model's absolute floor.
pub fn adaptive_cutoff(sorted: &[f32], floor: f32, margin: f32) -> f32 {
    let Some(&best) = sorted.first() else {
        return floor;
    };
    let median = sorted[sorted.len() / 2];
    floor.max(best - margin * (best - median))
}

impl Semantic {
    /// Texts the index would embed (cues, body chunks) and how many of them the
    /// vector cache lacks, for `gitloom doctor`. Embeds nothing.
    pub(crate) fn coverage(&self, index: &Index) -> Result<(usize, usize)> {
        let units = index.embed_units(None)?;
        let texts = chunks(self.embedder.as_ref(), &units);
        let hashes: Vec<String> = texts
            .iter()
            .map(|(_, t)| gitloom_embed::text_hash(t))
            .collect();
        let refs: Vec<&str> = hashes.iter().map(String::as_str).collect();
        let have = self
            .cache
            .get_many(self.embedder.model_id(), &refs)
            .map_err(|e| EngineError::Embed(e.to_string()))?;
        let missing = refs.iter().filter(|h| !have.contains_key(**h)).count();
        Ok((refs.len(), missing))
    }
}

impl Semantic {
    /// Vectors of arbitrary texts, through the vector cache (consolidation compares
    /// whole memories this way).
    pub(crate) fn embed_texts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        embed_cached(self.embedder.as_ref(), &self.cache, texts, None)
            .map(|(v, _)| v)
            .map_err(|e| EngineError::Embed(e.to_string()))
    }
}

/// Where the rows of a merged arena come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The previous arena (a path the sync did not touch).
    Previous,
    /// [`ArenaMerge::fresh`] (a changed path's new units).
    Fresh,
}

/// The arena a full build of `commit` would give, as runs of rows: from `prev` (of the
/// commit before) and the new units of the paths in `changed`. Rows of untouched paths
/// are taken in order, the changed paths' units are put where their path sorts (units,
/// and so rows, are in path order in a full build), keys renumbered.
struct ArenaMerge {
    /// The new units' rows, quantised once, each under its final key.
    fresh: Arena,
    /// (source, its rows, their key), in the merged arena's order.
    runs: Vec<(Source, std::ops::Range<usize>, u32)>,
    /// Key → (path, label) of the merged arena.
    labels: Vec<(String, String)>,
}

impl ArenaMerge {
    fn new(prev: &Built, changed: &[String], new: &Embedded, dim: usize) -> Result<ArenaMerge> {
        let changed: HashSet<&str> = changed.iter().map(String::as_str).collect();
        // Rows of each new unit, in order.
        let mut new_rows: Vec<Vec<usize>> = vec![Vec::new(); new.units.len()];
        for (text, &unit) in new.owners.iter().enumerate() {
            new_rows[unit].push(text);
        }
        let mut plan = ArenaMerge {
            fresh: Arena::with_capacity(dim, new.vectors.len()),
            runs: Vec::with_capacity(prev.labels.len() + new.units.len()),
            labels: Vec::with_capacity(prev.labels.len() + new.units.len()),
        };
        let mut next_new = 0;
        let mut push_new_before = |path: Option<&str>, plan: &mut ArenaMerge| -> Result<()> {
            while let Some(u) = new.units.get(next_new)
                && path.is_none_or(|p| u.path.as_str() < p)
            {
                let k = key(plan.labels.len())?;
                plan.labels.push((u.path.clone(), u.label.clone()));
                let start = plan.fresh.len();
                for &t in &new_rows[next_new] {
                    plan.fresh
                        .push(k, kind_code(u.kind), &new.vectors[t])
                        .map_err(embed_err)?;
                }
                plan.runs.push((Source::Fresh, start..plan.fresh.len(), k));
                next_new += 1;
            }
            Ok(())
        };
        let mut row = 0;
        let n = prev.arena.len();
        for old_key in 0..prev.labels.len() {
            let Some((path, label)) = prev.labels.get(old_key) else {
                continue;
            };
            // This unit's rows (they are contiguous and in key order).
            let start = row;
            while row < n
                && prev
                    .arena
                    .meta(row)
                    .is_some_and(|(k, _)| k as usize == old_key)
            {
                row += 1;
            }
            if changed.contains(path) {
                continue;
            }
            push_new_before(Some(path), &mut plan)?;
            let k = key(plan.labels.len())?;
            plan.labels.push((path.to_owned(), label.to_owned()));
            plan.runs.push((Source::Previous, start..row, k));
        }
        push_new_before(None, &mut plan)?;
        Ok(plan)
    }

    /// The arena a run's rows are in.
    fn source<'a>(&'a self, prev: &'a Built, source: Source) -> &'a Arena {
        match source {
            Source::Previous => &prev.arena,
            Source::Fresh => &self.fresh,
        }
    }

    /// The runs as the arena file's writer takes them.
    fn runs<'a>(&'a self, prev: &'a Built) -> Vec<RowRun<'a>> {
        self.runs
            .iter()
            .map(|(source, rows, k)| RowRun {
                arena: self.source(prev, *source),
                rows: rows.clone(),
                key: Some(*k),
            })
            .collect()
    }

    /// The merged arena in memory, each row bit for bit as the file holds it.
    fn build(&self, prev: &Built, commit: &str, dim: usize) -> Result<Built> {
        let total = self.runs.iter().map(|(_, r, _)| r.len()).sum();
        let mut arena = Arena::with_capacity(dim, total);
        for (source, rows, k) in &self.runs {
            let from = self.source(prev, *source);
            for r in rows.clone() {
                arena.push_row_of(from, r, *k).map_err(embed_err)?;
            }
        }
        Ok(Built::new(commit, arena, Labels::new(self.labels.clone())))
    }
}

/// The merged arena in memory (see [`ArenaMerge`]).
#[cfg(test)]
fn merge(
    prev: &Built,
    changed: &[String],
    new: &Embedded,
    commit: &str,
    dim: usize,
) -> Result<Built> {
    ArenaMerge::new(prev, changed, new, dim)?.build(prev, commit, dim)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Galloping finds what the binary search finds, for every answer and length.
    #[test]
    fn lower_bound_near_agrees_with_lower_bound() {
        for n in 0..70 {
            for answer in 0..=n {
                let before = |i: usize| i < answer;
                assert_eq!(
                    lower_bound_near(n, before),
                    lower_bound(n, before),
                    "{n} {answer}"
                );
                assert_eq!(lower_bound_near(n, before), answer);
            }
        }
    }

    fn unit(path: &str, kind: UnitKind, label: &str) -> EmbedUnit {
        EmbedUnit {
            path: path.into(),
            kind,
            label: label.into(),
            text: String::new(),
        }
    }

    /// Units with `rows` texts each (0 for a blank unit), vectors derived from the
    /// path and label so a unit's vectors are the same whichever set it is in.
    fn embedded(units: Vec<(EmbedUnit, usize)>) -> Embedded {
        let mut e = Embedded {
            units: Vec::new(),
            owners: Vec::new(),
            vectors: Vec::new(),
            stats: EmbedStats::default(),
        };
        for (i, (u, rows)) in units.into_iter().enumerate() {
            for r in 0..rows {
                let h = blake3::hash(format!("{}|{}|{r}", u.path, u.label).as_bytes());
                e.vectors.push(
                    h.as_bytes()[..8]
                        .iter()
                        .map(|&b| f32::from(b) - 100.0)
                        .collect(),
                );
                e.owners.push(i);
            }
            e.units.push(u);
        }
        e
    }

    #[test]
    fn a_merged_arena_equals_a_full_build() {
        let (c, b) = (UnitKind::Cue, UnitKind::Body);
        let old = embedded(vec![
            (unit("a.md", c, "q1"), 1),
            (unit("a.md", b, ""), 2),
            (unit("c.md", c, "q2"), 1),
            (unit("c.md", b, "s"), 0),
            (unit("e.md", b, ""), 3),
            (unit("g.md", c, "q3"), 1),
        ]);
        let sem_dim = 8;
        let build = |e: &Embedded| -> Built {
            let mut arena = Arena::new(sem_dim);
            for (u, v) in e.owners.iter().zip(&e.vectors) {
                arena
                    .push(key(*u).expect("key"), kind_code(e.units[*u].kind), v)
                    .expect("push");
            }
            Built::new(
                "x",
                arena,
                Labels::new(
                    e.units
                        .iter()
                        .map(|u| (u.path.clone(), u.label.clone()))
                        .collect(),
                ),
            )
        };
        let prev = build(&old);
        // c.md changed (now two cues), e.md removed, b.md and h.md new, a.md and g.md untouched.
        let new = embedded(vec![
            (unit("b.md", b, ""), 1),
            (unit("c.md", c, "q2"), 1),
            (unit("c.md", c, "q4"), 1),
            (unit("h.md", b, ""), 2),
        ]);
        let changed: Vec<String> = ["b.md", "c.md", "e.md", "h.md"].map(String::from).to_vec();
        let merged = merge(&prev, &changed, &new, "y", sem_dim).expect("merge");
        let all = embedded(vec![
            (unit("a.md", c, "q1"), 1),
            (unit("a.md", b, ""), 2),
            (unit("b.md", b, ""), 1),
            (unit("c.md", c, "q2"), 1),
            (unit("c.md", c, "q4"), 1),
            (unit("g.md", c, "q3"), 1),
            (unit("h.md", b, ""), 2),
        ]);
        let full = build(&all);
        assert_eq!(merged.arena.len(), full.arena.len());
        for r in 0..full.arena.len() {
            assert_eq!(merged.arena.meta(r), full.arena.meta(r), "row {r}");
            assert_eq!(merged.arena.row(r), full.arena.row(r), "row {r}");
        }
        assert_eq!(merged.labels.len(), full.labels.len());
        for k in 0..full.labels.len() {
            assert_eq!(merged.labels.get(k), full.labels.get(k), "key {k}");
        }
        // Binary search finds the same rows of a path as a scan of every row does,
        // and none for a path with no units (d.md and z.md never, e.md removed).
        for path in [
            "a.md", "b.md", "c.md", "d.md", "e.md", "g.md", "h.md", "z.md",
        ] {
            let scanned: Vec<usize> = (0..merged.arena.len())
                .filter(|&r| {
                    merged
                        .arena
                        .meta(r)
                        .and_then(|(k, _)| merged.labels.get(k as usize))
                        .is_some_and(|(p, _)| p == path)
                })
                .collect();
            let found: Vec<usize> = merged.rows_of(path).collect();
            assert_eq!(found, scanned, "{path}");
        }
        assert_eq!(merged.rows_of("a.md").len(), 3);
        assert!(merged.rows_of("e.md").is_empty());

        // What a sync writes, straight from the runs, is the file of the merged arena,
        // byte for byte, and reads back as it.
        let dir = tempfile::tempdir().expect("tempdir");
        let (from_runs, from_arena) = (dir.path().join("runs.bin"), dir.path().join("arena.bin"));
        let plan = ArenaMerge::new(&prev, &changed, &new, sem_dim).expect("plan");
        let labels: Vec<(&str, &str)> = (0..merged.labels.len())
            .filter_map(|k| merged.labels.get(k))
            .collect();
        StoredArena::write_runs(&from_runs, sem_dim, &plan.runs(&prev), &labels, "m", "t")
            .expect("write runs");
        StoredArena::write(&from_arena, &merged.arena, &labels, "m", "t").expect("write");
        let bytes = |p: &Path| std::fs::read(p).expect("read");
        assert_eq!(bytes(&from_runs), bytes(&from_arena));
        let back = StoredArena::open(&from_runs).expect("open");
        for r in 0..full.arena.len() {
            assert_eq!(back.arena.meta(r), full.arena.meta(r), "row {r}");
            assert_eq!(back.arena.row(r), full.arena.row(r), "row {r}");
        }
        // A run that is not of the arena's dimension, or past its end, is refused.
        let wrong = RowRun {
            arena: &prev.arena,
            rows: 0..prev.arena.len() + 1,
            key: None,
        };
        assert!(StoredArena::write_runs(&from_runs, sem_dim, &[wrong], &labels, "m", "t").is_err());
        let wrong = RowRun {
            arena: &prev.arena,
            rows: 0..1,
            key: None,
        };
        assert!(StoredArena::write_runs(&from_runs, 4, &[wrong], &labels, "m", "t").is_err());
    }

    /// A scanner over `files` files of a few cue and body rows each, random vectors,
    /// some repeated so that cosines tie.
    fn scanner(files: usize, dim: usize, seed: u64) -> Scanner {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut arena = Arena::new(dim);
        let mut labels = Vec::new();
        let mut last: Vec<f32> = vec![1.0; dim];
        for f in 0..files {
            for (unit, kind) in [(0, 0u8), (1, 0), (2, 1)] {
                let k = key(labels.len()).expect("key");
                labels.push((format!("facts/f{f:05}.md"), format!("unit {unit}")));
                for _ in 0..=(f + unit) % 3 {
                    if rng.f32() >= 0.15 {
                        last = (0..dim).map(|_| rng.f32() - 0.5).collect();
                    }
                    arena.push(k, kind, &last).expect("push");
                }
            }
        }
        Scanner(Arc::new(Built::new("c", arena, Labels::new(labels))))
    }

    /// The scan as a job gives `search`'s hits, whether this thread did every piece
    /// (the worker had not begun) or shared them with another thread.
    #[test]
    fn a_scan_job_searches_as_the_scan_does() {
        let s = scanner(700, 48, 0x2545_f491_4f6c_dd1d);
        assert!(s.rows() > 4096, "{} rows", s.rows());
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        let keep = |p: &str| !p.ends_with('7');
        for round in 0..12 {
            let q: Vec<f32> = (0..48).map(|_| rng.f32() - 0.5).collect();
            let depth = [50, 3, 200][round % 3];
            let cut = if round % 2 == 0 {
                SemanticCut::KEEP_ALL
            } else {
                SemanticCut::for_model("minilm-l6-v2")
            };
            let want = s.search(&q, depth, cut, &keep);
            assert!(!want.cues.is_empty() || round % 2 == 1, "round {round}");

            let want = Some(want);
            let job = s.scan_job(&q, depth);
            assert_eq!(s.search_job(&job, depth, cut, &keep), want, "one thread");

            let job = s.scan_job(&q, depth);
            let got = std::thread::scope(|t| {
                let worker = t.spawn(|| job.help());
                let got = s.search_job(&job, depth, cut, &keep);
                worker.join().expect("no panic");
                got
            });
            assert_eq!(got, want, "shared, round {round}");
        }
    }

    #[test]
    fn keep_all_cuts_nothing_even_when_every_score_is_equal() {
        let k = SemanticCut::KEEP_ALL;
        assert_eq!(
            adaptive_cutoff(&[0.9, 0.5, 0.1], k.body_floor, k.margin),
            -1.0
        );
        assert_eq!(
            adaptive_cutoff(&[0.4, 0.4, 0.4], k.cue_floor, k.margin),
            -1.0
        );
        assert_eq!(adaptive_cutoff(&[-0.2], k.cue_floor, k.margin), -1.0);
    }

    #[test]
    fn cutoff_follows_the_distribution_and_respects_the_floor() {
        assert_eq!(adaptive_cutoff(&[], 0.3, 0.5), 0.3);
        let c = adaptive_cutoff(&[0.9, 0.5, 0.4, 0.3, 0.2], 0.1, 0.5);
        assert!((c - 0.65).abs() < 1e-6, "{c}");
        // A corpus with nothing relevant: everything under the floor is cut.
        assert_eq!(adaptive_cutoff(&[0.2, 0.19, 0.18], 0.3, 0.5), 0.3);
    }
}

//! Metering: per tenant and namespace, requests by op, writes, ingested messages and
//! model tokens spent on the operator's behalf; storage bytes are measured when
//! asked (`GET /v1/usage`, `gitloom admin usage`).
//!
//! **Each node keeps its own totals and writes only its own record**,
//! `accounts/<tenant>/usage/<node>.json` in the data directory or the bucket, so
//! nodes never contend for one object; a tenant's usage is the sum over every
//! node's record (this node's own from memory, being the freshest). The node id is
//! kept in the data directory (claimed under an flock, so two processes on one
//! directory never share one): a restarted node reads its record back and goes on
//! counting from it, and a deleted account's records go with its data.
//!
//! **No count is lost to a crash either.** Every count is appended to a journal in
//! the data directory (`usage/<node>.journal`, one line, no fsync: a killed process
//! loses nothing the kernel has, only a power cut could) before the request is
//! answered; records are written from memory every [`FLUSH_EVERY`] and at shutdown,
//! each naming the last journal line it includes, and a starting node replays the
//! lines its record does not include.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use gitloom_remote::{Blob, BlobRead, BlobVersion, Location};
use serde::{Deserialize, Serialize};

use crate::names;

/// How often records are written (and at shutdown).
pub const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// The counts of one tenant in one namespace (or outside any namespace).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Authenticated requests, by op (or by route for those that are no op:
    /// `list_namespaces`, `create_namespace`, `delete_namespace`, `get_job`,
    /// `cancel_job`, `usage`).
    #[serde(default)]
    pub requests: BTreeMap<String, u64>,
    /// Write ops that succeeded.
    #[serde(default)]
    pub writes: u64,
    /// Conversation messages ingested.
    #[serde(default)]
    pub ingested_messages: u64,
    /// Tokens a language model was paid for on the operator's behalf.
    #[serde(default)]
    pub model_tokens: u64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        for (op, n) in &other.requests {
            *self.requests.entry(op.clone()).or_default() += n;
        }
        self.writes += other.writes;
        self.ingested_messages += other.ingested_messages;
        self.model_tokens += other.model_tokens;
    }

    /// Every request, whatever its op.
    pub fn total_requests(&self) -> u64 {
        self.requests.values().sum()
    }
}

/// One event to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    Request(&'a str),
    Write,
    Messages(u64),
    ModelTokens(u64),
}

/// What `GET /v1/usage` answers for one tenant.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub account: String,
    /// Per namespace, with its storage bytes (of namespaces that exist now).
    pub namespaces: BTreeMap<String, NamespaceUsage>,
    /// Requests made outside any namespace (listing, jobs, usage).
    pub account_requests: Counts,
    pub total: NamespaceUsage,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct NamespaceUsage {
    #[serde(flatten)]
    pub counts: Counts,
    pub requests_total: u64,
    /// Bytes the namespace occupies: its directory on this disk (git history, work
    /// tree and index), or its objects in the bucket.
    pub storage_bytes: u64,
}

/// The key under which requests outside any namespace are kept in a record.
const OUTSIDE: &str = "";

/// One node's record for one tenant.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Record {
    node: String,
    /// The last journal line this record includes.
    #[serde(default)]
    journal_seq: u64,
    namespaces: BTreeMap<String, Counts>,
}

/// Where records are kept.
#[derive(Debug, Clone)]
enum Sink {
    Dir(PathBuf),
    Bucket(Location),
}

struct Node {
    /// tenant → namespace → counts, this node's totals.
    totals: BTreeMap<String, BTreeMap<String, Counts>>,
    /// Tenants changed since their record was last written.
    dirty: std::collections::BTreeSet<String>,
    /// Versions of this node's records in the bucket (it is their only writer).
    versions: BTreeMap<String, Option<BlobVersion>>,
    journal: Option<std::fs::File>,
    seq: u64,
}

/// This node's meter.
pub struct Usage {
    node: String,
    sink: Sink,
    data: PathBuf,
    state: Mutex<Node>,
    /// Held for the process's life: the node id is this process's alone.
    _claim: Option<std::fs::File>,
}

impl std::fmt::Debug for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Usage").field("node", &self.node).finish()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("usage records: {0}")]
pub struct UsageError(String);

fn err(context: impl std::fmt::Display) -> impl FnOnce(&dyn std::fmt::Display) -> UsageError {
    move |e| UsageError(format!("{context}: {e}"))
}

/// Claims a node id in `data/usage`: the first `node-<k>` whose lock no other process
/// holds, with its id (made once, then kept).
fn claim_node(data: &Path) -> Result<(String, std::fs::File), UsageError> {
    let dir = data.join("usage");
    std::fs::create_dir_all(&dir).map_err(|e| err(dir.display())(&e))?;
    for k in 0..64 {
        let lock_path = dir.join(format!("node-{k}.lock"));
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| err(lock_path.display())(&e))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => continue,
            Err(std::fs::TryLockError::Error(e)) => return Err(err(lock_path.display())(&e)),
        }
        let id_path = dir.join(format!("node-{k}.id"));
        let id = match std::fs::read_to_string(&id_path) {
            Ok(s) if !s.trim().is_empty() => s.trim().to_owned(),
            _ => {
                let mut b = [0u8; 8];
                getrandom::fill(&mut b).map_err(|e| UsageError(e.to_string()))?;
                let id = format!(
                    "n{}",
                    b.iter().map(|x| format!("{x:02x}")).collect::<String>()
                );
                std::fs::write(&id_path, &id).map_err(|e| err(id_path.display())(&e))?;
                id
            }
        };
        return Ok((id, lock));
    }
    Err(UsageError(format!(
        "{}: 64 processes already meter this data directory",
        dir.display()
    )))
}

impl Usage {
    /// The meter of a node whose data directory is `data`; records go beside the
    /// accounts (`storage`, or `data`).
    pub fn open(data: &Path, storage: Option<&Location>) -> Result<Usage, UsageError> {
        let (node, claim) = claim_node(data)?;
        let sink = match storage {
            Some(l) => Sink::Bucket(l.clone()),
            None => Sink::Dir(data.to_path_buf()),
        };
        let usage = Usage {
            node,
            sink,
            data: data.to_path_buf(),
            state: Mutex::new(Node {
                totals: BTreeMap::new(),
                dirty: Default::default(),
                versions: BTreeMap::new(),
                journal: None,
                seq: 0,
            }),
            _claim: Some(claim),
        };
        usage.recover()?;
        Ok(usage)
    }

    /// A meter that only reads (`gitloom admin usage`): it claims no node id and
    /// counts nothing; its counts are every node's records.
    pub fn reader(data: &Path, storage: Option<&Location>) -> Usage {
        Usage {
            // Never a node's id (those start with `n` and hold hex digits only).
            node: "-".to_owned(),
            sink: match storage {
                Some(l) => Sink::Bucket(l.clone()),
                None => Sink::Dir(data.to_path_buf()),
            },
            data: data.to_path_buf(),
            state: Mutex::new(Node {
                totals: BTreeMap::new(),
                dirty: Default::default(),
                versions: BTreeMap::new(),
                journal: None,
                seq: 0,
            }),
            _claim: None,
        }
    }

    /// This node's id.
    pub fn node(&self) -> &str {
        &self.node
    }

    fn journal_path(&self) -> PathBuf {
        self.data
            .join("usage")
            .join(format!("{}.journal", self.node))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, Node> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Loads this node's records and replays the journal lines they do not include.
    fn recover(&self) -> Result<(), UsageError> {
        let lines = read_journals(&self.data, &self.node)?;
        let tenants: std::collections::BTreeSet<String> =
            lines.iter().map(|l| l.1.clone()).collect();
        let mut max_seq = lines.iter().map(|l| l.0).max().unwrap_or(0);
        for tenant in tenants {
            let record_seq = self.ensure_loaded(&tenant)?;
            max_seq = max_seq.max(record_seq);
            let mut st = self.state();
            let counts = st.totals.entry(tenant.clone()).or_default();
            let mut replayed = false;
            for (seq, _, ns, ev) in lines.iter().filter(|l| l.1 == tenant) {
                if *seq <= record_seq {
                    continue;
                }
                if let Some(ev) = parse_event(ev) {
                    apply(counts.entry(ns.clone()).or_default(), ev);
                    replayed = true;
                }
            }
            if replayed {
                st.dirty.insert(tenant);
            }
        }
        let mut st = self.state();
        st.seq = st.seq.max(max_seq);
        Ok(())
    }

    /// Adds this node's stored record of `tenant` to its totals the first time the
    /// tenant is met in this process; returns the last journal line it includes.
    fn ensure_loaded(&self, tenant: &str) -> Result<u64, UsageError> {
        if self.state().versions.contains_key(tenant) {
            return Ok(0);
        }
        // Read without the lock (it may be a request to the bucket).
        let (record, version) = self.read_own(tenant)?;
        let mut st = self.state();
        if st.versions.contains_key(tenant) {
            return Ok(0);
        }
        let counts = st.totals.entry(tenant.to_owned()).or_default();
        for (ns, c) in &record.namespaces {
            counts.entry(ns.clone()).or_default().add(c);
        }
        st.versions.insert(tenant.to_owned(), version);
        Ok(record.journal_seq)
    }

    fn record_blob(
        &self,
        location: &Location,
        tenant: &str,
        node: &str,
    ) -> Result<Blob, UsageError> {
        location
            .within(&format!("accounts/{tenant}/usage"))
            .and_then(|l| l.blob(&format!("{node}.json")))
            .map_err(|e| UsageError(e.to_string()))
    }

    /// This node's record of a tenant, as stored.
    fn read_own(&self, tenant: &str) -> Result<(Record, Option<BlobVersion>), UsageError> {
        match &self.sink {
            Sink::Dir(data) => {
                let path = record_path(data, tenant, &self.node);
                match std::fs::read(&path) {
                    Ok(b) => Ok((
                        serde_json::from_slice(&b).map_err(|e| err(path.display())(&e))?,
                        None,
                    )),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        Ok((Record::default(), None))
                    }
                    Err(e) => Err(err(path.display())(&e)),
                }
            }
            Sink::Bucket(l) => {
                let blob = self.record_blob(l, tenant, &self.node)?;
                match blob.read(None).map_err(|e| UsageError(e.to_string()))? {
                    BlobRead::Found { bytes, version } => Ok((
                        serde_json::from_slice(&bytes).map_err(|e| err(blob.path())(&e))?,
                        Some(version),
                    )),
                    _ => Ok((Record::default(), None)),
                }
            }
        }
    }

    /// Counts `event` for `tenant` in `namespace` (`None`: outside any namespace).
    /// The journal line is written before this returns.
    pub fn record(&self, tenant: &str, namespace: Option<&str>, event: Event<'_>) {
        let ns = namespace.unwrap_or(OUTSIDE);
        if let Err(e) = self.ensure_loaded(tenant) {
            // Counted from zero on top of what is stored, which the next successful
            // load adds back; nothing is lost but the sum shown meanwhile.
            tracing::warn!(error = %e, "cannot read this node's usage record");
        }
        let mut st = self.state();
        st.seq += 1;
        let seq = st.seq;
        if st.journal.is_none() {
            let path = self.journal_path();
            match std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
            {
                Ok(f) => st.journal = Some(f),
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot open the usage journal")
                }
            }
        }
        if let Some(j) = st.journal.as_mut() {
            let line = format!("{seq}\t{tenant}\t{ns}\t{}\n", event_text(event));
            if let Err(e) = j.write_all(line.as_bytes()) {
                tracing::warn!(error = %e, "cannot append to the usage journal");
            }
        }
        apply(
            st.totals
                .entry(tenant.to_owned())
                .or_default()
                .entry(ns.to_owned())
                .or_default(),
            event,
        );
        st.dirty.insert(tenant.to_owned());
    }

    /// Writes the records of every tenant counted since the last flush. The journal
    /// is set aside first (counts made meanwhile go to a fresh one) and deleted once
    /// every record it fed is written; the lock is not held while writing.
    pub fn flush(&self) -> Result<(), UsageError> {
        let (records, seq) = {
            let mut st = self.state();
            // A tenant whose stored record could not be read yet is not written: its
            // record would lose what was stored.
            let (tenants, unloaded): (Vec<String>, Vec<String>) = std::mem::take(&mut st.dirty)
                .into_iter()
                .partition(|t| st.versions.contains_key(t));
            st.dirty.extend(unloaded);
            let seq = st.seq;
            let records: Vec<(String, Record, Option<BlobVersion>)> = tenants
                .into_iter()
                .map(|t| {
                    let record = Record {
                        node: self.node.clone(),
                        journal_seq: seq,
                        namespaces: st.totals.get(&t).cloned().unwrap_or_default(),
                    };
                    let version = st.versions.get(&t).cloned().flatten();
                    (t, record, version)
                })
                .collect();
            if st.journal.take().is_some() {
                let from = self.journal_path();
                let to = from.with_extension(format!("journal.{seq}"));
                if let Err(e) = std::fs::rename(&from, &to) {
                    tracing::warn!(path = %from.display(), error = %e, "cannot set the usage journal aside");
                }
            }
            (records, seq)
        };
        let mut failed = None;
        let mut written = Vec::new();
        for (tenant, record, version) in records {
            match self.write_own(&tenant, &record, version.as_ref()) {
                Ok(v) => written.push((tenant, v)),
                Err(e) => {
                    self.state().dirty.insert(tenant);
                    failed = Some(e);
                }
            }
        }
        {
            let mut st = self.state();
            for (tenant, v) in written {
                st.versions.insert(tenant, v);
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        // Every count up to `seq` is in a record: journals set aside up to it go.
        for (path, until) in self.old_journals() {
            if until <= seq {
                let _ = std::fs::remove_file(path);
            }
        }
        Ok(())
    }

    /// Journals set aside by flushes that have not all been written, with the last
    /// line each holds.
    fn old_journals(&self) -> Vec<(PathBuf, u64)> {
        old_journals(&self.data, &self.node)
    }

    fn write_own(
        &self,
        tenant: &str,
        record: &Record,
        version: Option<&BlobVersion>,
    ) -> Result<Option<BlobVersion>, UsageError> {
        let body = serde_json::to_vec_pretty(record).map_err(|e| UsageError(e.to_string()))?;
        match &self.sink {
            Sink::Dir(data) => {
                let path = record_path(data, tenant, &self.node);
                let dir = path.parent().unwrap_or(data);
                std::fs::create_dir_all(dir).map_err(|e| err(dir.display())(&e))?;
                let mut tmp =
                    tempfile::NamedTempFile::new_in(dir).map_err(|e| err(dir.display())(&e))?;
                tmp.write_all(&body).map_err(|e| err(path.display())(&e))?;
                tmp.persist(&path)
                    .map_err(|e| err(path.display())(&e.error))?;
                Ok(None)
            }
            Sink::Bucket(l) => {
                let blob = self.record_blob(l, tenant, &self.node)?;
                let mut expected = version.cloned();
                for _ in 0..4 {
                    match blob
                        .replace(expected.as_ref(), body.clone())
                        .map_err(|e| UsageError(e.to_string()))?
                    {
                        Some(v) => return Ok(Some(v)),
                        // This node is the record's only writer; a version we do not
                        // know is one we wrote and lost track of (a failed reply):
                        // ours is the newer total, so it replaces it.
                        None => {
                            expected =
                                match blob.read(None).map_err(|e| UsageError(e.to_string()))? {
                                    BlobRead::Found { version, .. } => Some(version),
                                    _ => None,
                                }
                        }
                    }
                }
                Err(UsageError(format!(
                    "{}: could not be replaced",
                    blob.path()
                )))
            }
        }
    }

    /// Every node's counts for `tenant`, per namespace (this node's from memory).
    pub fn counts(&self, tenant: &str) -> Result<BTreeMap<String, Counts>, UsageError> {
        names::validate_tenant(tenant).map_err(UsageError)?;
        self.ensure_loaded(tenant)?;
        let mut out: BTreeMap<String, Counts> =
            self.state().totals.get(tenant).cloned().unwrap_or_default();
        let records = self.other_records(tenant)?;
        for record in &records {
            for (ns, c) in &record.namespaces {
                out.entry(ns.clone()).or_default().add(c);
            }
        }
        // Other nodes on this data directory: what they counted since their last
        // record, from their journals (so a local count is exact at once).
        for (node, lines) in self.other_journals()? {
            let done = records
                .iter()
                .find(|r| r.node == node)
                .map_or(0, |r| r.journal_seq);
            for (seq, t, ns, ev) in &lines {
                if t == tenant
                    && *seq > done
                    && let Some(ev) = parse_event(ev)
                {
                    apply(out.entry(ns.clone()).or_default(), ev);
                }
            }
        }
        Ok(out)
    }

    /// The journal lines of every other node of this data directory, by node.
    fn other_journals(&self) -> Result<Vec<(String, Vec<JournalLine>)>, UsageError> {
        let Ok(entries) = std::fs::read_dir(self.data.join("usage")) else {
            return Ok(Vec::new());
        };
        let mut nodes: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .filter_map(|n| n.split_once(".journal").map(|(node, _)| node.to_owned()))
            .filter(|n| *n != self.node)
            .collect();
        nodes.sort();
        nodes.dedup();
        nodes
            .into_iter()
            .map(|n| Ok((n.clone(), read_journals(&self.data, &n)?)))
            .collect()
    }

    /// The records other nodes wrote for `tenant`.
    fn other_records(&self, tenant: &str) -> Result<Vec<Record>, UsageError> {
        let mut out = Vec::new();
        match &self.sink {
            Sink::Dir(data) => {
                let dir = data.join("accounts").join(tenant).join("usage");
                let Ok(entries) = std::fs::read_dir(&dir) else {
                    return Ok(out);
                };
                for e in entries.flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name == format!("{}.json", self.node) || !name.ends_with(".json") {
                        continue;
                    }
                    let bytes = std::fs::read(e.path()).map_err(|x| err(e.path().display())(&x))?;
                    match serde_json::from_slice::<Record>(&bytes) {
                        Ok(r) => out.push(r),
                        Err(x) => {
                            tracing::warn!(path = %e.path().display(), error = %x, "unreadable usage record skipped")
                        }
                    }
                }
            }
            Sink::Bucket(l) => {
                let at = l
                    .within(&format!("accounts/{tenant}/usage"))
                    .map_err(|e| UsageError(e.to_string()))?;
                for name in at.list_objects().map_err(|e| UsageError(e.to_string()))? {
                    if name == format!("{}.json", self.node) || !name.ends_with(".json") {
                        continue;
                    }
                    let blob = at.blob(&name).map_err(|e| UsageError(e.to_string()))?;
                    if let BlobRead::Found { bytes, .. } =
                        blob.read(None).map_err(|e| UsageError(e.to_string()))?
                    {
                        match serde_json::from_slice::<Record>(&bytes) {
                            Ok(r) => out.push(r),
                            Err(x) => {
                                tracing::warn!(path = %blob.path(), error = %x, "unreadable usage record skipped")
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Forgets a tenant (its account was deleted with its records).
    pub fn forget_tenant(&self, tenant: &str) {
        let mut st = self.state();
        st.totals.remove(tenant);
        st.dirty.remove(tenant);
        st.versions.remove(tenant);
    }
}

/// A tenant's usage as `GET /v1/usage` and `gitloom admin usage` show it: every
/// node's counts, and (with `storage`) the bytes each namespace occupies now.
pub fn report(
    usage: &Usage,
    namespaces: &crate::namespaces::Namespaces,
    tenant: &str,
    account: &str,
    storage: bool,
) -> Result<Report, UsageError> {
    let mut counts = usage.counts(tenant)?;
    let outside = counts.remove(OUTSIDE).unwrap_or_default();
    let live = namespaces
        .list(tenant)
        .map_err(|e| UsageError(e.to_string()))?;
    for name in &live {
        counts.entry(name.clone()).or_default();
    }
    let mut report = Report {
        account: account.to_owned(),
        account_requests: outside.clone(),
        ..Report::default()
    };
    report.total.counts.add(&outside);
    for (name, c) in counts {
        let storage_bytes = if storage && live.contains(&name) {
            namespaces
                .storage_bytes(tenant, &name)
                .map_err(|e| UsageError(e.to_string()))?
        } else {
            0
        };
        report.total.counts.add(&c);
        report.total.storage_bytes += storage_bytes;
        report.namespaces.insert(
            name,
            NamespaceUsage {
                requests_total: c.total_requests(),
                counts: c,
                storage_bytes,
            },
        );
    }
    report.account_requests = outside;
    report.total.requests_total = report.total.counts.total_requests();
    Ok(report)
}

/// One journal line: sequence number, tenant, namespace, event.
type JournalLine = (u64, String, String, String);

/// Journals of `node` set aside by flushes, with the last line each holds.
fn old_journals(data: &Path, node: &str) -> Vec<(PathBuf, u64)> {
    let prefix = format!("{node}.journal.");
    let Ok(entries) = std::fs::read_dir(data.join("usage")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let seq = name.strip_prefix(&prefix)?.parse().ok()?;
            Some((e.path(), seq))
        })
        .collect()
}

/// Every line of `node`'s journals (those set aside and the current one). A torn
/// last line (a process killed mid-write) is skipped.
fn read_journals(data: &Path, node: &str) -> Result<Vec<JournalLine>, UsageError> {
    let mut paths: Vec<PathBuf> = old_journals(data, node).into_iter().map(|j| j.0).collect();
    paths.push(data.join("usage").join(format!("{node}.journal")));
    let mut lines = Vec::new();
    for path in paths {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(err(path.display())(&e)),
        };
        // Only whole lines: the last one of a process killed mid-write is torn.
        for line in text
            .split_inclusive('\n')
            .filter_map(|l| l.strip_suffix('\n'))
        {
            let mut f = line.split('\t');
            let (Some(seq), Some(t), Some(ns), Some(ev), None) =
                (f.next(), f.next(), f.next(), f.next(), f.next())
            else {
                continue;
            };
            let Ok(seq) = seq.parse::<u64>() else {
                continue;
            };
            lines.push((seq, t.to_owned(), ns.to_owned(), ev.to_owned()));
        }
    }
    Ok(lines)
}

fn record_path(data: &Path, tenant: &str, node: &str) -> PathBuf {
    data.join("accounts")
        .join(tenant)
        .join("usage")
        .join(format!("{node}.json"))
}

fn apply(c: &mut Counts, event: Event<'_>) {
    match event {
        Event::Request(op) => *c.requests.entry(op.to_owned()).or_default() += 1,
        Event::Write => c.writes += 1,
        Event::Messages(n) => c.ingested_messages += n,
        Event::ModelTokens(n) => c.model_tokens += n,
    }
}

fn event_text(event: Event<'_>) -> String {
    match event {
        Event::Request(op) => format!("r:{op}"),
        Event::Write => "w".to_owned(),
        Event::Messages(n) => format!("m:{n}"),
        Event::ModelTokens(n) => format!("t:{n}"),
    }
}

fn parse_event(text: &str) -> Option<Event<'_>> {
    match text.split_once(':') {
        Some(("r", op)) => Some(Event::Request(op)),
        Some(("m", n)) => n.parse().ok().map(Event::Messages),
        Some(("t", n)) => n.parse().ok().map(Event::ModelTokens),
        None if text == "w" => Some(Event::Write),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_survive_a_restart_with_or_without_a_flush() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let u = Usage::open(dir.path(), None).expect("open");
            for _ in 0..3 {
                u.record("alice", Some("notes"), Event::Request("retrieve"));
            }
            u.record("alice", Some("notes"), Event::Write);
            u.flush().expect("flush");
            u.record("alice", None, Event::Request("usage"));
            u.record("alice", Some("notes"), Event::Messages(7));
            // Dropped without a flush: as a killed process would be.
        }
        let u = Usage::open(dir.path(), None).expect("reopen");
        let c = u.counts("alice").expect("counts");
        assert_eq!(c["notes"].requests["retrieve"], 3);
        assert_eq!(c["notes"].writes, 1);
        assert_eq!(c["notes"].ingested_messages, 7);
        assert_eq!(c[""].requests["usage"], 1);
        // Replayed once, not twice, after the next flush and restart.
        u.flush().expect("flush");
        drop(u);
        let u = Usage::open(dir.path(), None).expect("reopen");
        assert_eq!(
            u.counts("alice").expect("counts")["notes"].ingested_messages,
            7
        );
    }

    #[test]
    fn two_nodes_on_one_directory_are_two_records() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = Usage::open(dir.path(), None).expect("a");
        let b = Usage::open(dir.path(), None).expect("b");
        assert_ne!(a.node(), b.node());
        a.record("t", Some("n"), Event::Request("get"));
        b.record("t", Some("n"), Event::Request("get"));
        b.flush().expect("flush");
        assert_eq!(a.counts("t").expect("counts")["n"].requests["get"], 2);
    }
}

//! The probe: a hand-written store (`DIR/memories/**/*.md`) and a JSONL file of queries.
//!
//! Every memory file becomes a [`Doc`] unchanged, its path relative to `memories/`. Each query
//! line is `{"id","query","gold":[paths],"shape","abstain"}`; `abstain` must be true exactly
//! when `gold` is empty, and every gold path must be in the corpus.
//!
//! Every query is asked at the store's last write: the newest `updated` (else `created`)
//! of its memories. Asked at the clock, the results would drift as time passes: once
//! 24 September 2026 was past, the talk given that day read as ended and sank for
//! "what's my talk about".

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;

use crate::metrics::Label;
use crate::run::{Dataset, EvalQuery, Group, check_only, selected};
use crate::{Doc, EvalError, read_file};

/// One line of `queries.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct ProbeQuery {
    pub id: String,
    pub query: String,
    pub gold: Vec<String>,
    pub shape: String,
    pub abstain: bool,
}

/// Every `*.md` under `dir/memories`, sorted by path.
pub fn load_corpus(dir: &Path) -> Result<Vec<Doc>, EvalError> {
    let root = dir.join("memories");
    if !root.is_dir() {
        return Err(EvalError::data(
            &root,
            "not a directory (expected the store's memories/ under --corpus)",
        ));
    }
    let mut docs = Vec::new();
    walk(&root, &root, &mut docs)?;
    docs.sort_by(|a, b| a.path.cmp(&b.path));
    if docs.is_empty() {
        return Err(EvalError::data(&root, "holds no .md files"));
    }
    Ok(docs)
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<Doc>) -> Result<(), EvalError> {
    let entries = std::fs::read_dir(dir).map_err(|source| EvalError::Read {
        path: dir.to_owned(),
        source,
    })?;
    for e in entries {
        let e = e.map_err(|source| EvalError::Read {
            path: dir.to_owned(),
            source,
        })?;
        let path = e.path();
        let ft = e.file_type().map_err(|source| EvalError::Read {
            path: path.clone(),
            source,
        })?;
        if ft.is_dir() {
            walk(root, &path, out)?;
        } else if path.extension().is_some_and(|x| x == "md") {
            let rel = path
                .strip_prefix(root)
                .map_err(|_| EvalError::data(&path, "outside the corpus root"))?;
            let parts: Option<Vec<&str>> =
                rel.components().map(|c| c.as_os_str().to_str()).collect();
            let rel = parts
                .ok_or_else(|| EvalError::data(&path, "file name is not UTF-8"))?
                .join("/");
            let bytes = read_file(&path)?;
            let content =
                String::from_utf8(bytes).map_err(|_| EvalError::data(&path, "not UTF-8"))?;
            out.push(Doc { path: rel, content });
        }
    }
    Ok(())
}

/// Parses `queries.jsonl`; errors name the line.
pub fn load_queries(file: &Path) -> Result<Vec<ProbeQuery>, EvalError> {
    let bytes = read_file(file)?;
    let text = String::from_utf8(bytes).map_err(|_| EvalError::data(file, "not UTF-8"))?;
    let mut out = Vec::new();
    let mut ids = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let ctx = format!("line {}", i + 1);
        let q: ProbeQuery =
            serde_json::from_str(line).map_err(|e| EvalError::json(file, &ctx, e))?;
        if !ids.insert(q.id.clone()) {
            return Err(EvalError::data(
                file,
                format!("{ctx}: duplicate query id {:?}", q.id),
            ));
        }
        if q.abstain != q.gold.is_empty() {
            return Err(EvalError::data(
                file,
                format!(
                    "{ctx}: query {:?} has abstain={} but {} gold paths",
                    q.id,
                    q.abstain,
                    q.gold.len()
                ),
            ));
        }
        out.push(q);
    }
    if out.is_empty() {
        return Err(EvalError::data(file, "holds no queries"));
    }
    Ok(out)
}

/// The probe as one group; `only` selects query ids.
pub fn load(
    corpus_dir: &Path,
    queries_file: &Path,
    only: Option<&[String]>,
) -> Result<Dataset, EvalError> {
    let docs = load_corpus(corpus_dir)?;
    let queries = load_queries(queries_file)?;
    let present: Vec<&str> = queries.iter().map(|q| q.id.as_str()).collect();
    check_only(only, &present, "probe query")?;
    let paths: BTreeSet<&str> = docs.iter().map(|d| d.path.as_str()).collect();
    for q in &queries {
        if let Some(g) = q.gold.iter().find(|g| !paths.contains(g.as_str())) {
            return Err(EvalError::data(
                queries_file,
                format!("query {:?}: gold path {g:?} is not in the corpus", q.id),
            ));
        }
    }
    let asked_at = last_write(&docs);
    let queries = queries
        .into_iter()
        .filter(|q| selected(only, &q.id))
        .map(|q| EvalQuery {
            label: if q.abstain {
                Label::Unanswerable
            } else {
                Label::answerable(dedup(q.gold))
            },
            id: q.id,
            query: q.query,
            shape: q.shape,
            asked_at,
        })
        .collect();
    Ok(Dataset {
        name: "probe".into(),
        granularity: None,
        groups: vec![Group {
            id: "probe".into(),
            docs,
            queries,
            ids: BTreeMap::new(),
        }],
        notes: BTreeMap::new(),
    })
}

/// The newest `updated` (else `created`) of the memories that parse, in seconds.
fn last_write(docs: &[Doc]) -> Option<i64> {
    docs.iter()
        .filter_map(|d| gitloom_model::Memory::parse(&d.path, d.content.as_bytes()).ok())
        .filter_map(|m| m.front.updated.or(m.front.created))
        .map(|w| w.unix_seconds())
        .max()
}

pub(crate) fn dedup(v: Vec<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    v.into_iter().filter(|x| seen.insert(x.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{RunOptions, run_probe, testing::Overlap};

    fn data_dir() -> Option<std::path::PathBuf> {
        crate::data_root::data_dir("probe")
    }

    #[test]
    fn bad_query_lines_name_file_and_problem() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("q.jsonl");
        let cases = [
            (
                r#"{"id":"a","query":"x","gold":[],"shape":"s"}"#,
                "missing field `abstain`",
            ),
            (
                r#"{"id":"a","query":"x","gold":"p.md","shape":"s","abstain":true}"#,
                "invalid type",
            ),
            (r#"{"id":"a","query":"x","gold":["#, "truncated JSON"),
            (
                r#"{"id":"a","query":"x","gold":["p"],"shape":"s","abstain":true}"#,
                "abstain=true but 1 gold",
            ),
            (
                "{\"id\":\"a\",\"query\":\"x\",\"gold\":[],\"shape\":\"s\",\"abstain\":true}\n{\"id\":\"a\",\"query\":\"y\",\"gold\":[],\"shape\":\"s\",\"abstain\":true}",
                "duplicate query id",
            ),
        ];
        for (text, want) in cases {
            std::fs::write(&f, text).expect("write");
            let e = load_queries(&f).expect_err(text).to_string();
            assert!(
                e.contains(want) && e.contains("q.jsonl"),
                "{e:?} should mention {want:?}"
            );
        }
    }

    #[test]
    fn probe_end_to_end_with_toy_backend() {
        let Some(dir) = data_dir() else { return };
        let dir = dir.as_path();
        let out = tempfile::tempdir().expect("tempdir");
        let log = out.path().join("per-query.jsonl");
        let calls = std::cell::Cell::new(0);
        let progress = |done: usize, total: usize| {
            assert!(done <= total);
            calls.set(calls.get() + 1);
        };
        let opts = RunOptions {
            per_query: Some(log.clone()),
            progress: Some(&progress),
            build: "test-build".into(),
            ..RunOptions::default()
        };
        let mut b = Overlap::default();
        let r = run_probe(&mut b, dir, &dir.join("queries.jsonl"), &opts).expect("run");
        assert_eq!(b.loads, 1);
        assert_eq!(calls.get(), 50);
        assert_eq!(
            (
                r.metrics.queries,
                r.metrics.answerable,
                r.metrics.unanswerable
            ),
            (50, 40, 10)
        );
        assert_eq!(r.by_shape.len(), 7);
        let v = r.to_json();
        for k in [
            "dataset",
            "queries",
            "answerable",
            "unanswerable",
            "p_at_1",
            "p_at_5",
            "recall_at_5",
            "recall_at_10",
            "recall_at_20",
            "recall_all_at_5",
            "ndcg_at_5",
            "ndcg_at_10",
            "mrr",
            "abstention",
            "corpus_return_ratio",
            "latency_ms",
            "by_shape",
            "arm_attribution",
            "build",
        ] {
            assert!(v.get(k).is_some(), "missing {k}");
        }
        for k in ["precision", "recall", "f1"] {
            assert!(v["abstention"][k].is_number(), "abstention.{k}");
        }
        for k in ["p50", "p95"] {
            assert!(v["latency_ms"][k].is_number());
        }
        for a in crate::ARMS {
            assert!(v["arm_attribution"][a].is_number(), "arm {a}");
        }
        assert!(v["by_shape"]["lookup"]["recall_at_5"].is_number());
        assert_eq!(v["build"], "test-build");
        assert_eq!(v["dataset"], "probe");
        // The toy backend finds something for most queries.
        let r10 = r.metrics.recall_at_10.unwrap_or_default();
        assert!(r10 > 0.3, "{r10}");
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
            .expect("log")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 50);
        for k in [
            "id",
            "query",
            "shape",
            "gold",
            "hits",
            "abstained",
            "explain",
        ] {
            assert!(lines[0].get(k).is_some(), "per-query missing {k}");
        }
    }

    #[test]
    fn only_selects_queries_and_rejects_unknown_ids() {
        let Some(dir) = data_dir() else { return };
        let dir = dir.as_path();
        let q = dir.join("queries.jsonl");
        let ds = load(dir, &q, Some(&["a01".to_owned(), "a02".to_owned()])).expect("load");
        assert_eq!(ds.groups[0].queries.len(), 2);
        assert_eq!(ds.groups[0].docs.len(), 42);
        let e = load(dir, &q, Some(&["nope".to_owned()])).expect_err("unknown id");
        assert!(matches!(e, EvalError::NothingSelected(_)));
    }
}

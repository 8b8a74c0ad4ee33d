//! The CI gate: compare a report with a baseline and list what got worse.
//!
//! The baseline file (`eval/baseline.json`) holds one report per named run:
//! `{"probe": {...report...}, "locomo_conv26": {...report...}, ...}`.
//!
//! Every number in the baseline is checked against the same path in the new report:
//! - rates (default): a drop of more than the tolerance (0.02 absolute unless overridden by
//!   leaf name or dotted path) is a regression; for `corpus_return_ratio` a *rise* is;
//! - counts (`queries`, `answerable`, `unanswerable`, `skipped`): must be equal (otherwise the
//!   data or the loader changed and the baseline is stale);
//! - not gated: `latency_ms`, `notes`, `limit`, abstention's `tp`/`fp`/`fn`/`tn`, `build`.
//!
//! Strings other than `build` (`dataset`, `granularity`) must be equal. A metric that is in
//! the baseline but missing from the report is a regression; a new metric is not.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde_json::Value;

use crate::EvalError;

/// What to gate and how much slack to allow.
#[derive(Debug, Clone)]
pub struct GateConfig {
    pub default_tolerance: f64,
    /// Leaf name (`mrr`) or dotted path (`by_shape.temporal.mrr`) -> absolute tolerance.
    /// A dotted path wins over a leaf name.
    pub tolerances: BTreeMap<String, f64>,
    /// Keys whose whole subtree is not gated.
    pub ignore: Vec<String>,
    /// Rates where higher is worse.
    pub lower_is_better: Vec<String>,
    /// Numbers that must not change at all.
    pub exact: Vec<String>,
}

impl Default for GateConfig {
    fn default() -> Self {
        let s = |v: &[&str]| v.iter().map(|x| (*x).to_owned()).collect();
        GateConfig {
            default_tolerance: 0.02,
            tolerances: BTreeMap::new(),
            ignore: s(&[
                "latency_ms",
                "notes",
                "limit",
                "build",
                "tp",
                "fp",
                "fn",
                "tn",
            ]),
            lower_is_better: s(&["corpus_return_ratio"]),
            exact: s(&["queries", "answerable", "unanswerable", "skipped"]),
        }
    }
}

/// One metric that got worse (or vanished, or changed when it must not).
#[derive(Debug, Clone, PartialEq)]
pub struct Regression {
    /// Dotted path, e.g. `by_shape.temporal.recall_at_5`.
    pub metric: String,
    pub baseline: Value,
    /// `None` when the metric is missing from the report.
    pub now: Option<Value>,
    /// now - baseline, for numbers.
    pub delta: Option<f64>,
    pub tolerance: f64,
    pub reason: &'static str,
}

impl fmt::Display for Regression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let now = self.now.as_ref().map_or_else(|| "missing".to_owned(), show);
        write!(
            f,
            "{}: baseline {} now {}",
            self.metric,
            show(&self.baseline),
            now
        )?;
        if let Some(d) = self.delta {
            write!(f, " delta {d:+.4} (tolerance {})", self.tolerance)?;
        }
        write!(f, " [{}]", self.reason)
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => format!("{x:.4}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// A printable table of regressions; empty string when there are none.
pub fn format_regressions(regs: &[Regression]) -> String {
    if regs.is_empty() {
        return String::new();
    }
    let w = regs
        .iter()
        .map(|r| r.metric.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut s = format!(
        "{:<w$}  {:>10}  {:>10}  {:>9}  reason\n",
        "metric", "baseline", "now", "delta"
    );
    for r in regs {
        let now = r.now.as_ref().map_or_else(|| "missing".to_owned(), show);
        let delta = r
            .delta
            .map_or_else(|| "-".to_owned(), |d| format!("{d:+.4}"));
        s.push_str(&format!(
            "{:<w$}  {:>10}  {:>10}  {:>9}  {}\n",
            r.metric,
            show(&r.baseline),
            now,
            delta,
            r.reason
        ));
    }
    s
}

/// Regressions of `now` against `baseline` (both report JSON), sorted by metric path.
pub fn compare(baseline: &Value, now: &Value, cfg: &GateConfig) -> Vec<Regression> {
    let mut out = Vec::new();
    walk(baseline, Some(now), &mut Vec::new(), cfg, &mut out);
    out.sort_by(|a, b| a.metric.cmp(&b.metric));
    out
}

fn walk<'a>(
    base: &'a Value,
    now: Option<&Value>,
    path: &mut Vec<&'a str>,
    cfg: &GateConfig,
    out: &mut Vec<Regression>,
) {
    let leaf = path.last().copied().unwrap_or("");
    if cfg.ignore.iter().any(|i| i == leaf) {
        return;
    }
    let dotted = path.join(".");
    let tolerance = cfg
        .tolerances
        .get(&dotted)
        .or_else(|| cfg.tolerances.get(leaf))
        .copied()
        .unwrap_or(cfg.default_tolerance);
    let reg = |now: Option<&Value>, delta, reason| Regression {
        metric: dotted.clone(),
        baseline: base.clone(),
        now: now.cloned(),
        delta,
        tolerance,
        reason,
    };
    match base {
        Value::Object(map) => {
            for (k, v) in map {
                let child = now.and_then(|n| n.get(k));
                if child.is_none() && !matches!(v, Value::Object(_)) {
                    path.push(k);
                    let leaf_ignored = cfg.ignore.iter().any(|i| i == k);
                    if !leaf_ignored && !matches!(v, Value::Null) {
                        out.push(Regression {
                            metric: path.join("."),
                            baseline: v.clone(),
                            now: None,
                            delta: None,
                            tolerance: cfg.default_tolerance,
                            reason: "missing",
                        });
                    }
                    path.pop();
                    continue;
                }
                path.push(k);
                walk(v, child, path, cfg, out);
                path.pop();
            }
        }
        Value::Number(b) => {
            let Some(b) = b.as_f64() else { return };
            let Some(n) = now.and_then(Value::as_f64) else {
                out.push(reg(
                    now,
                    None,
                    if now.is_none() {
                        "missing"
                    } else {
                        "not a number"
                    },
                ));
                return;
            };
            let delta = n - b;
            if cfg.exact.iter().any(|e| e == leaf) {
                if delta != 0.0 {
                    out.push(reg(now, Some(delta), "count changed"));
                }
            } else if cfg.lower_is_better.iter().any(|e| e == leaf) {
                if delta > tolerance + 1e-12 {
                    out.push(reg(now, Some(delta), "rose"));
                }
            } else if -delta > tolerance + 1e-12 {
                out.push(reg(now, Some(delta), "dropped"));
            }
        }
        Value::String(_) | Value::Bool(_) => {
            if now != Some(base) {
                out.push(reg(
                    now,
                    None,
                    if now.is_none() { "missing" } else { "changed" },
                ));
            }
        }
        Value::Null | Value::Array(_) => {}
    }
}

fn read_baseline(file: &Path) -> Result<Value, EvalError> {
    let bytes = crate::read_file(file)?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| EvalError::json(file, "", e))?;
    if !v.is_object() {
        return Err(EvalError::Baseline {
            path: file.to_owned(),
            problem: "should be a JSON object of named reports".into(),
        });
    }
    Ok(v)
}

/// Compares `now` with the report named `section` in the baseline file.
pub fn check_baseline(
    file: &Path,
    section: &str,
    now: &Value,
    cfg: &GateConfig,
) -> Result<Vec<Regression>, EvalError> {
    let base = read_baseline(file)?;
    let Some(section_value) = base.get(section) else {
        let names: Vec<&String> = base
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        return Err(EvalError::Baseline {
            path: file.to_owned(),
            problem: format!("no report named {section:?} (has {names:?})"),
        });
    };
    Ok(compare(section_value, now, cfg))
}

/// Stores `report` as `section` in the baseline file (created if absent), other sections kept.
pub fn write_baseline(file: &Path, section: &str, report: &Value) -> Result<(), EvalError> {
    let mut base = if file.exists() {
        read_baseline(file)?
    } else {
        Value::Object(Default::default())
    };
    if let Value::Object(m) = &mut base {
        m.insert(section.to_owned(), report.clone());
    }
    let text = serde_json::to_string_pretty(&base).map_err(|e| EvalError::Write {
        path: file.to_owned(),
        source: std::io::Error::other(e.to_string()),
    })?;
    std::fs::write(file, text + "\n").map_err(|source| EvalError::Write {
        path: file.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({
            "dataset": "probe", "build": "old", "queries": 50, "answerable": 40,
            "p_at_1": 0.80, "mrr": 0.85, "corpus_return_ratio": 0.10,
            "abstention": {"precision": 0.9, "recall": 0.5, "f1": 0.64, "tp": 5},
            "latency_ms": {"p50": 3.0, "p95": 9.0},
            "by_shape": {"lookup": {"p_at_1": 0.9, "queries": 18}},
            "notes": {"x": 1}
        })
    }

    #[test]
    fn within_tolerance_passes() {
        let mut now = base();
        now["p_at_1"] = json!(0.79);
        now["mrr"] = json!(0.99);
        now["corpus_return_ratio"] = json!(0.05);
        now["build"] = json!("new");
        now["latency_ms"]["p95"] = json!(500.0);
        now["abstention"]["tp"] = json!(1);
        now["notes"] = json!({});
        now["by_shape"]["lookup"]["p_at_1"] = json!(0.885);
        now["new_metric"] = json!(0.0);
        assert_eq!(compare(&base(), &now, &GateConfig::default()), vec![]);
    }

    #[test]
    fn drop_beyond_tolerance_fails() {
        let mut now = base();
        now["p_at_1"] = json!(0.70);
        now["by_shape"]["lookup"]["p_at_1"] = json!(0.5);
        now["corpus_return_ratio"] = json!(0.2);
        let regs = compare(&base(), &now, &GateConfig::default());
        let names: Vec<&str> = regs.iter().map(|r| r.metric.as_str()).collect();
        assert_eq!(
            names,
            ["by_shape.lookup.p_at_1", "corpus_return_ratio", "p_at_1"]
        );
        let p = regs.iter().find(|r| r.metric == "p_at_1").expect("p_at_1");
        assert!((p.delta.expect("delta") + 0.10).abs() < 1e-9);
        assert_eq!(p.reason, "dropped");
        let table = format_regressions(&regs);
        assert!(
            table.contains("p_at_1") && table.contains("-0.1000") && table.contains("0.8000"),
            "{table}"
        );
        assert!(
            p.to_string()
                .contains("baseline 0.8000 now 0.7000 delta -0.1000"),
            "{p}"
        );
    }

    #[test]
    fn missing_metric_and_changed_counts_fail() {
        let mut now = base();
        now.as_object_mut().expect("obj").remove("mrr");
        now["abstention"].as_object_mut().expect("obj").remove("f1");
        now["queries"] = json!(49);
        now["dataset"] = json!("locomo");
        let regs = compare(&base(), &now, &GateConfig::default());
        let got: Vec<(&str, &str)> = regs.iter().map(|r| (r.metric.as_str(), r.reason)).collect();
        assert_eq!(
            got,
            [
                ("abstention.f1", "missing"),
                ("dataset", "changed"),
                ("mrr", "missing"),
                ("queries", "count changed")
            ]
        );
        // A whole missing section fails for each of its metrics.
        let mut now = base();
        now.as_object_mut().expect("obj").remove("by_shape");
        let regs = compare(&base(), &now, &GateConfig::default());
        assert_eq!(regs.len(), 2);
    }

    #[test]
    fn per_metric_tolerance() {
        let mut cfg = GateConfig::default();
        cfg.tolerances.insert("by_shape.lookup.p_at_1".into(), 0.5);
        let mut now = base();
        now["by_shape"]["lookup"]["p_at_1"] = json!(0.5);
        assert!(compare(&base(), &now, &cfg).is_empty());
    }

    #[test]
    fn baseline_file_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("baseline.json");
        write_baseline(&f, "probe", &base()).expect("write");
        write_baseline(&f, "locomo_conv26", &json!({"mrr": 0.5})).expect("write");
        assert!(
            check_baseline(&f, "probe", &base(), &GateConfig::default())
                .expect("check")
                .is_empty()
        );
        let regs = check_baseline(
            &f,
            "locomo_conv26",
            &json!({"mrr": 0.1}),
            &GateConfig::default(),
        )
        .expect("check");
        assert_eq!(regs.len(), 1);
        let e =
            check_baseline(&f, "nope", &base(), &GateConfig::default()).expect_err("no section");
        assert!(e.to_string().contains("no report named \"nope\""), "{e}");
        std::fs::write(&f, "{\"probe\": ").expect("w");
        assert!(
            check_baseline(&f, "probe", &base(), &GateConfig::default())
                .expect_err("eof")
                .to_string()
                .contains("truncated")
        );
    }
}

//! Maintenance commands: `gc`, `doctor` (and `consolidate`).

use anyhow::{Result, bail};
use clap::Args;
use gitloom_engine::{GcOptions, Repack, Severity};

use crate::cli::Cli;
use crate::render::outln;

#[derive(Debug, Args)]
pub struct GcArgs {
    /// Show what would expire and whether a repack is due; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Repack and prune the object store now, whatever the cadence.
    #[arg(long, conflicts_with = "no_repack")]
    pub repack: bool,
    /// Never repack in this run.
    #[arg(long)]
    pub no_repack: bool,
    /// Repack once this many commits were made since the last repack.
    #[arg(long, default_value_t = gitloom_engine::gc::DEFAULT_REPACK_EVERY)]
    pub repack_every: usize,
    /// Judge expiry as of this time (RFC 3339) instead of now.
    #[arg(long)]
    pub now: Option<String>,
    /// `git prune --expire` value for unreachable loose objects.
    #[arg(long, default_value = "2.weeks.ago")]
    pub prune_expire: String,
}

pub fn gc(cli: &Cli, args: &GcArgs) -> Result<()> {
    let storage = crate::open_storage(cli)?;
    let now = match &args.now {
        Some(s) => Some(
            s.parse::<jiff::Timestamp>()
                .map_err(|e| anyhow::anyhow!("--now {s:?} is not an RFC 3339 time: {e}"))?,
        ),
        None => None,
    };
    let opts = GcOptions {
        now,
        dry_run: args.dry_run,
        repack: if args.repack {
            Repack::Always
        } else if args.no_repack {
            Repack::Never
        } else {
            Repack::Auto
        },
        repack_every: args.repack_every,
        prune_expire: args.prune_expire.clone(),
    };
    let report = storage.write(|e| e.gc(&opts))?;
    crate::flush_warnings(storage.engine());
    if cli.json {
        return crate::print_json(&report);
    }
    let verb = if report.dry_run {
        "would expire"
    } else {
        "expired"
    };
    outln!("{verb} {} incident(s)", report.expired.len())?;
    for e in &report.expired {
        outln!("  {} ({} {})", e.path, e.by, e.at)?;
    }
    if let Some(c) = &report.commit {
        outln!("commit {c}")?;
    }
    for s in &report.skipped {
        outln!("  skipped {s}")?;
    }
    match &report.repack {
        Some(r) => outln!(
            "repacked: {} loose objects ({} KiB) and {} pack(s) ({} KiB) -> {} loose, {} pack(s) ({} KiB) in {:.0} ms",
            r.before.loose,
            r.before.loose_kib,
            r.before.packs,
            r.before.pack_kib,
            r.after.loose,
            r.after.packs,
            r.after.pack_kib,
            r.ms
        )?,
        None => outln!(
            "repack {} ({} commit(s) since the last one)",
            if report.repack_due { "due" } else { "not due" },
            report.commits_since_repack
        )?,
    }
    Ok(())
}

pub fn doctor(cli: &Cli) -> Result<()> {
    let storage = crate::open_storage(cli)?;
    let report = storage.read(|e| e.doctor())?;
    crate::flush_warnings(storage.engine());
    if cli.json {
        crate::print_json(&report)?;
    } else {
        for p in &report.problems {
            let sev = match p.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            match &p.path {
                Some(path) => outln!("{sev} [{}] {path}: {}", p.check, p.message)?,
                None => outln!("{sev} [{}] {}", p.check, p.message)?,
            }
            outln!("    fix: {}", p.fix)?;
        }
        outln!(
            "{} ({} problem(s); {} files indexed at {})",
            if report.ok { "ok" } else { "NOT OK" },
            report.problems.len(),
            report.files_indexed,
            &report.commit[..12.min(report.commit.len())]
        )?;
    }
    if !report.ok {
        let errors = report
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        bail!("doctor found {errors} error(s)");
    }
    Ok(())
}

#[derive(Debug, Args)]
pub struct ConsolidateArgs {
    /// Print the plan (clusters, what stays, what retires); change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Cosine of cue texts or bodies at or above which memories may merge.
    #[arg(long, default_value_t = 0.92)]
    pub threshold: f32,
    /// Without an embedder: token overlap (Jaccard) at or above which memories may merge.
    #[arg(long, default_value_t = 0.6)]
    pub lexical_threshold: f32,
}

pub fn consolidate(cli: &Cli, args: &ConsolidateArgs) -> Result<()> {
    let storage = crate::open_storage(cli)?;
    let opts = gitloom_engine::ConsolidateOptions {
        dry_run: args.dry_run,
        vector_threshold: args.threshold,
        lexical_threshold: args.lexical_threshold,
        ..gitloom_engine::ConsolidateOptions::default()
    };
    let report = storage.write(|e| e.consolidate(&opts))?;
    crate::flush_warnings(storage.engine());
    if cli.json {
        return crate::print_json(&report);
    }
    let verb = if report.dry_run {
        "would merge"
    } else {
        "merged"
    };
    outln!(
        "{verb} {} cluster(s) among {} memories ({})",
        report.merges.len(),
        report.memories,
        report.measure
    )?;
    for m in &report.merges {
        outln!("  keep {} ({:.3}, {})", m.keep, m.similarity, m.agreement)?;
        for r in &m.retire {
            outln!("    retire {r}")?;
        }
    }
    if let Some(c) = &report.commit {
        outln!(
            "commit {c} (undo with `git revert {}`)",
            &c[..12.min(c.len())]
        )?;
    }
    Ok(())
}

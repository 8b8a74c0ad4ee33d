//! A memory: its frontmatter as a card, its body rendered, the supersession chain
//! both ways, links out and in, the transcripts it came from, and its history with
//! the diff of each commit.

use maud::{Markup, PreEscaped, html};

use gitloom_index::LinkKind;
use gitloom_model::Frontmatter;

use crate::diff::{FileDiff, LineKind};
use crate::markdown;
use crate::memory::{LinkView, Linked, MemoryView, Message, Source};
use crate::moment::{short, when};
use crate::urls::Urls;

pub fn memory(urls: &Urls, v: &MemoryView) -> Markup {
    let title = v
        .memory()
        .map(|m| m.front.title.clone())
        .unwrap_or_else(|| v.path.to_string());
    html! {
        nav.crumbs aria-label="Breadcrumbs" { (crumbs(urls, v.path.as_str())) }
        h1 { (title) }
        p { code.path { (v.path) } }
        @match (&v.content, &v.parsed) {
            (None, _) => {
                p.notice role="note" { "This file is not in the store at this moment. Its history up to here is below." }
            }
            (Some(_), Some(Ok(m))) => {
                (card(urls, v, &m.front))
                section aria-labelledby="body-h" {
                    h2 id="body-h" { "Body" }
                    article.body { (PreEscaped(markdown::render(&m.body, &|t, _| wiki_href(urls, v, t)))) }
                }
                (chain(urls, v))
                (links(urls, v))
                (sources(urls, &v.sources))
            }
            (Some(text), Some(Err(e))) => {
                p.problem role="alert" { "This memory does not parse: " (e) }
                pre.raw { (text) }
            }
            (Some(text), None) => {
                @if v.path.as_str().starts_with("sessions/") {
                    h2 { "Transcript" }
                    (transcript(&crate::memory::transcript_messages(text)))
                } @else {
                    article.body { (PreEscaped(markdown::render(text, &|_, _| None))) }
                }
            }
        }
        (history(urls, v))
    }
}

/// `facts / work / file.md`, each directory a link to its topic.
fn crumbs(urls: &Urls, path: &str) -> Markup {
    let parts: Vec<&str> = path.split('/').collect();
    html! {
        a href=(urls.tree(None)) { "Topics" }
        @for i in 0..parts.len().saturating_sub(1) {
            " / "
            a href=(urls.tree(Some(&parts[..=i].join("/")))) { (parts[i]) }
        }
    }
}

fn wiki_href(urls: &Urls, v: &MemoryView, target: &str) -> Option<String> {
    v.outgoing
        .iter()
        .find(|l| l.row.kind == LinkKind::Wiki && l.row.target_raw == target)
        .and_then(|l| l.row.resolved.as_deref())
        .map(|p| urls.memory(p))
}

fn card(urls: &Urls, v: &MemoryView, f: &Frontmatter) -> Markup {
    let resolved = |raw: &str| -> Option<String> {
        v.outgoing
            .iter()
            .find(|l| l.row.target_raw == raw && l.row.kind != LinkKind::Wiki)
            .and_then(|l| l.row.resolved.clone())
    };
    html! {
        section.card aria-label="Frontmatter" {
            dl {
                @if let Some(s) = &f.summary { dt { "summary" } dd { (s) } }
                @if !f.tags.is_empty() {
                    dt { "tags" }
                    dd { ul.chips { @for t in &f.tags { li { (t) } } } }
                }
                @if !f.cues.is_empty() {
                    dt { "cues" }
                    dd { ul.cues { @for c in &f.cues { li { a href=(urls.search(Some(c))) { (c) } } } } }
                }
                @if !f.entities.is_empty() {
                    dt { "entities" }
                    dd { ul.chips { @for e in &f.entities {
                        li {
                            a href=(urls.search(Some(&e.name))) { (e.name) }
                            @if let Some(k) = &e.kind { " " span.kind { (k) } }
                            @if let Some(r) = &e.role { " " span.role { "(" (r) ")" } }
                        }
                    } } }
                }
                @if !f.related.is_empty() {
                    dt { "related" }
                    dd { ul { @for r in &f.related {
                        li {
                            @if let Some(l) = &r.label { span.label { (l) } ": " }
                            (target(urls, &r.target, resolved(&r.target).as_deref()))
                        }
                    } } }
                }
                @if !f.supersedes.is_empty() {
                    dt { "supersedes" }
                    dd { ul { @for s in &f.supersedes { li { (target(urls, s, resolved(s).as_deref())) } } } }
                }
                @for (k, val) in [("created", &f.created), ("updated", &f.updated), ("valid_from", &f.valid_from), ("valid_to", &f.valid_to), ("expires_at", &f.expires_at)] {
                    @if let Some(w) = val { dt { (k) } dd { time { (w.to_string()) } } }
                }
                @if let Some(t) = &f.ttl { dt { "ttl" } dd { (t) } }
                @if let Some(c) = f.confidence { dt { "confidence" } dd { (format!("{c:.2}")) } }
                @if let Some(s) = &f.source { dt { "source" } dd { code { (s) } } }
                @if !f.timeline.is_empty() {
                    dt { "timeline" }
                    dd { ul { @for t in &f.timeline { li { time { (t.date.to_string()) } " — " (t.text) } } } }
                }
                @for (k, val) in &f.extra {
                    dt { (k) }
                    dd { (extra_value(val)) }
                }
            }
        }
    }
}

fn extra_value(v: &serde_json::Value) -> Markup {
    match v {
        serde_json::Value::String(s) => html! { (s) },
        serde_json::Value::Array(items) if items.iter().all(|i| i.is_string()) => html! {
            ul { @for i in items { li { code { (i.as_str().unwrap_or_default()) } } } }
        },
        other => html! { code { (other.to_string()) } },
    }
}

/// A link target as written, linked when it resolves, marked when it dangles.
fn target(urls: &Urls, raw: &str, resolved: Option<&str>) -> Markup {
    html! {
        @match resolved {
            Some(p) => a href=(urls.memory(p)) { (raw) },
            None => { span.dangling title="no memory by this name at this moment" { (raw) } }
        }
    }
}

fn linked(urls: &Urls, l: &Linked) -> Markup {
    html! {
        a href=(urls.memory(&l.path)) { (l.title.as_deref().unwrap_or(&l.path)) }
        " " code.path { (l.path) }
    }
}

fn chain(urls: &Urls, v: &MemoryView) -> Markup {
    html! {
        section.chain aria-labelledby="chain-h" {
            h2 id="chain-h" { "Supersession" }
            @if v.older.is_empty() && v.newer.is_empty() {
                p.muted { "Supersedes nothing and is superseded by nothing." }
            } @else {
                ol.chain {
                    @for (depth, l) in v.older.iter().rev() {
                        li.older { span.step { "older " (depth) } " " (linked(urls, l)) }
                    }
                    li.this aria-current="true" { span.step { "this" } " " strong { (v.memory().map(|m| m.front.title.as_str()).unwrap_or(v.path.as_str())) } }
                    @for (depth, l) in &v.newer {
                        li.newer { span.step { "newer " (depth) } " " (linked(urls, l)) }
                    }
                }
            }
        }
    }
}

fn kind(k: LinkKind) -> &'static str {
    k.as_str()
}

fn link_rows(urls: &Urls, rows: &[LinkView], incoming: bool) -> Markup {
    html! {
        @if rows.is_empty() {
            p.muted { "None." }
        } @else {
            ul.links {
                @for l in rows {
                    li {
                        span.kind { (kind(l.row.kind)) }
                        @if let Some(lab) = &l.row.label { " " span.label { (lab) } }
                        " "
                        @match &l.other {
                            Some(o) => { (linked(urls, o)) }
                            None => { span.dangling title="dangling: no memory by this name at this moment" { (l.row.target_raw) } }
                        }
                        @if !incoming {
                            @if let Some(s) = &l.row.section { " § " (s) }
                        }
                    }
                }
            }
        }
    }
}

fn links(urls: &Urls, v: &MemoryView) -> Markup {
    html! {
        section.linksec aria-labelledby="links-h" {
            h2 id="links-h" { "Links" }
            div.two {
                div { h3 { "Out" } (link_rows(urls, &v.outgoing, false)) }
                div { h3 { "In" } (link_rows(urls, &v.incoming, true)) }
            }
        }
    }
}

fn sources(urls: &Urls, sources: &[Source]) -> Markup {
    html! {
        section.sources aria-labelledby="src-h" {
            h2 id="src-h" { "Where it came from" }
            @if sources.is_empty() {
                p.muted { "No source recorded." }
            }
            @for s in sources {
                @match (&s.path, &s.messages) {
                    (Some(p), Some(ms)) => {
                        details.transcript open {
                            summary { "Session " a href=(urls.memory(p)) { (p) } }
                            (transcript(ms))
                        }
                    }
                    (Some(p), None) => {
                        p { code { (s.raw) } " — the transcript " code { (p) } " is not in the store at this moment." }
                    }
                    (None, _) => { p { "Source: " (s.raw) } }
                }
            }
        }
    }
}

fn transcript(ms: &[Message]) -> Markup {
    html! {
        ol.messages {
            @for m in ms {
                li.msg.cited[m.cited] id={ "m" (m.index) } data-role=(m.role) {
                    span.role { "m" (m.index) " " (m.role) }
                    @if m.cited { " " span.citebadge { "cited" } }
                    div.text { (PreEscaped(markdown::render(&m.text, &|_, _| None))) }
                }
            }
        }
    }
}

fn history(urls: &Urls, v: &MemoryView) -> Markup {
    html! {
        section.history aria-labelledby="hist-h" {
            h2 id="hist-h" { "History" }
            @if v.versions.is_empty() {
                p.muted { "No commit changed this file up to this moment." }
            }
            ol.versions {
                @for (i, ver) in v.versions.iter().enumerate() {
                    @let sha = ver.commit.id.to_string();
                    li.item {
                        details open[i == 0] {
                            summary {
                                time { (when(ver.commit.time)) } " "
                                span.summary { (ver.commit.summary) } " "
                                span.counts { "+" (ver.diff.added) " −" (ver.diff.removed) }
                                @if ver.content.is_none() { " " span.kind { "deleted" } }
                            }
                            p.actions {
                                "commit " a href=(urls.commit(&sha)) { code { (short(&sha)) } }
                                " · "
                                a href=(urls.at(&sha).memory(v.path.as_str())) { "this memory as of then" }
                            }
                            (diff(&ver.diff))
                        }
                    }
                }
            }
        }
    }
}

/// A unified diff, one line per row.
pub fn diff(d: &FileDiff) -> Markup {
    html! {
        @if d.lines.is_empty() {
            p.muted { "No change in content." }
        } @else {
            pre.diff aria-label={ "diff: " (d.added) " lines added, " (d.removed) " removed" } {
                @for l in &d.lines {
                    @let (class, mark) = match l.kind {
                        LineKind::Hunk => ("hunk", ""),
                        LineKind::Context => ("ctx", " "),
                        LineKind::Added => ("add", "+"),
                        LineKind::Removed => ("del", "-"),
                    };
                    span class=(class) { (mark) (l.text) "\n" }
                }
            }
        }
    }
}

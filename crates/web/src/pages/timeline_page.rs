//! The commit timeline (one line per commit: an ingested session, a write, a gc)
//! with the memories each added, changed or deleted; and one commit with its diffs.

use maud::{Markup, html};

use crate::diff::FileDiff;
use crate::history::{CommitChanges, TimelinePage, Touched};
use crate::moment::{short, when};
use crate::pages::memory_page::diff;
use crate::urls::Urls;

pub fn timeline(urls: &Urls, page: &TimelinePage, skip: usize, per_page: usize) -> Markup {
    html! {
        h1 { "Timeline" }
        p.lede { "Newest first. Each line is one commit: an ingested session, a write, a gc." }
        ol.timeline start=(skip + 1) {
            @for c in &page.commits { (line(urls, c)) }
        }
        nav.pager aria-label="Pages" {
            @if skip > 0 { a href=(urls.timeline(skip.saturating_sub(per_page))) rel="prev" { "← newer" } }
            @if page.more { a href=(urls.timeline(skip + per_page)) rel="next" { "older →" } }
        }
    }
}

fn line(urls: &Urls, c: &CommitChanges) -> Markup {
    let sha = c.commit.id.to_string();
    let memories: Vec<&Touched> = c.files.iter().filter(|t| t.is_memory()).collect();
    let sessions: Vec<&Touched> = c.files.iter().filter(|t| t.is_session()).collect();
    html! {
        li.item.commit {
            div.head {
                time { (when(c.commit.time)) } " "
                a.summary href=(urls.commit(&sha)) { (c.commit.summary) } " "
                code.sha { (short(&sha)) } " "
                a.travel href=(urls.at(&sha).tree(None)) { "store as of then" }
            }
            @if !memories.is_empty() {
                ul.touched {
                    @for t in &memories {
                        li class=(t.kind.as_str()) {
                            span.mark aria-label=(t.kind.as_str()) { (t.kind.mark()) } " "
                            a href=(urls.at(&sha).memory(&t.path)) { (t.title.as_deref().unwrap_or(&t.path)) }
                            " " code.path { (t.path) }
                        }
                    }
                }
            }
            @for s in &sessions {
                p.session { "transcript " a href=(urls.at(&sha).memory(&s.path)) { (s.path) } }
            }
            @if memories.is_empty() && sessions.is_empty() && !c.files.is_empty() {
                p.muted { (c.files.len()) " other file(s)" }
            }
        }
    }
}

pub fn commit(urls: &Urls, c: &CommitChanges, diffs: &[FileDiff]) -> Markup {
    let sha = c.commit.id.to_string();
    html! {
        h1 { (c.commit.summary) }
        p { "commit " code { (sha) } " · " time { (when(c.commit.time)) }
            @if let Some(p) = c.commit.parent { " · parent " a href=(urls.commit(&p.to_string())) { code { (short(&p.to_string())) } } }
            " · " a href=(urls.at(&sha).tree(None)) { "store as of this commit" } }
        @if c.commit.message.trim() != c.commit.summary.trim() {
            pre.message { (c.commit.message) }
        }
        h2 { (c.files.len()) " file(s) changed" }
        ol.files {
            @for (t, d) in c.files.iter().zip(diffs) {
                li.item {
                    details open {
                        summary {
                            span.mark { (t.kind.mark()) } " "
                            (t.title.as_deref().unwrap_or(&t.path)) " " code.path { (t.path) }
                            " " span.counts { "+" (d.added) " −" (d.removed) }
                        }
                        p.actions { a href=(urls.at(&sha).memory(&t.path)) { "open as of this commit" } }
                        (diff(d))
                    }
                }
            }
        }
    }
}

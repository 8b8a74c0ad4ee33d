//! The topic tree with counts, and the memories of the chosen topic.

use maud::{Markup, html};

use crate::tree::{TopicFile, TopicNode, TopicTree};
use crate::urls::Urls;

/// The tree page's main region.
pub fn tree(urls: &Urls, tree: &TopicTree, topic: Option<&str>, files: &[TopicFile]) -> Markup {
    html! {
        h1 { "Topics" }
        p.lede {
            (tree.memories) " memories"
            " · " (tree.sessions) " session transcripts"
            @if tree.vocab > 0 { " · " (tree.vocab) " vocabulary files" }
        }
        div.split {
            nav.tree aria-label="Topic tree" {
                ul {
                    @for tier in &tree.tiers { (node(urls, tier, topic)) }
                }
            }
            section.files aria-labelledby="files-h" {
                @match topic {
                    Some(t) => {
                        h2 id="files-h" { (t) }
                        @if let Some(n) = tree.find(t) {
                            p.muted { (n.direct) " here, " (n.total) " with its subtopics" }
                        }
                        @if files.is_empty() {
                            p { "No memories directly in this topic." }
                        } @else {
                            ul.items {
                                @for f in files { (file(urls, f)) }
                            }
                        }
                    }
                    None => {
                        h2 id="files-h" { "Choose a topic" }
                        p { "Pick a tier or topic on the left to list its memories, search above, or read the "
                            a href=(urls.timeline(0)) { "timeline" } " of what each session added." }
                    }
                }
            }
        }
    }
}

fn node(urls: &Urls, n: &TopicNode, selected: Option<&str>) -> Markup {
    let here = selected.is_some_and(|s| s.trim_matches('/') == n.topic);
    html! {
        li {
            a href=(urls.tree(Some(&n.topic))) aria-current=[here.then_some("true")] {
                span.name { (n.name) }
                " "
                span.count title={ (n.direct) " directly, " (n.total) " in all" } { (n.total) }
            }
            @if !n.children.is_empty() {
                ul { @for c in &n.children { (node(urls, c, selected)) } }
            }
        }
    }
}

fn file(urls: &Urls, f: &TopicFile) -> Markup {
    html! {
        li.item {
            a href=(urls.memory(&f.path)) {
                @match &f.title {
                    Ok(t) => { (t) }
                    Err(_) => { (f.path) }
                }
            }
            " "
            code.path { (f.path) }
            @if let Err(e) = &f.title {
                p.problem { "does not parse: " (e) }
            }
        }
    }
}

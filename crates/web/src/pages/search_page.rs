//! Search: `retrieve` with explain — each hit with the arms that found it (raw
//! score and rank), why it is evidence, and when the answer abstained, why.

use maud::{Markup, html};

use crate::search::{SearchForm, SearchView, arm_measure, why_evidence};
use crate::urls::Urls;

pub fn search(urls: &Urls, form: &SearchForm, view: Option<&SearchView>) -> Markup {
    html! {
        h1 { "Search" }
        form.searchform method="get" action=(urls.now().search(None)) {
            div.field {
                label for="sq" { "Question" }
                input id="sq" type="search" name="q" value=(form.query) autofocus[view.is_none()];
            }
            div.field {
                label for="tier" { "Tier" }
                select id="tier" name="tier" {
                    option value="" selected[form.tier.as_deref().unwrap_or("").is_empty()] { "any" }
                    @for t in ["facts", "incidents", "rules", "skills"] {
                        option value=(t) selected[form.tier.as_deref() == Some(t)] { (t) }
                    }
                }
            }
            div.field {
                label for="topic" { "Topic" }
                input id="topic" type="text" name="topic" value=[form.topic.as_deref()] placeholder="e.g. work";
            }
            div.field {
                label for="limit" { "Hits" }
                input id="limit" type="number" name="limit" min="1" max=(crate::search::MAX_LIMIT) value=(form.limit.unwrap_or(10));
            }
            @if let Some(at) = &urls.at { input type="hidden" name="at" value=(at); }
            button type="submit" { "Retrieve" }
        }
        @if let Some(v) = view { (results(urls, v)) }
    }
}

fn results(urls: &Urls, v: &SearchView) -> Markup {
    let r = &v.retrieval;
    html! {
        section.results aria-labelledby="res-h" aria-live="polite" {
            h2 id="res-h" {
                @if r.abstained { "No answer: abstained" } @else { (r.hits.len()) " hit(s)" }
            }
            p.muted { "question shape: " strong { (r.shape.as_str()) } }
            @for w in &r.warnings { p.warning role="note" { "warning: " (w) } }
            @if r.abstained {
                div.abstained role="status" {
                    p { strong { "Why it abstained" } }
                    ul { @for why in &v.abstained_because { li { (why) } } }
                }
            }
            ol.hits {
                @for (i, h) in r.hits.iter().enumerate() {
                    li.hit.item {
                        h3 {
                            span.rank { (i + 1) ". " }
                            a href=(urls.memory(&h.path)) { (if h.title.is_empty() { &h.path } else { &h.title }) }
                        }
                        p { code.path { (h.path) } " · fused score " (format!("{:.4}", h.score)) }
                        @if !h.snippet.is_empty() { blockquote.snippet { (h.snippet) } }
                        table.arms {
                            caption { "Arms that found it" }
                            thead { tr { th scope="col" { "arm" } th scope="col" { "raw score" } th scope="col" { "rank" } th scope="col" { "measures" } } }
                            tbody {
                                @for (arm, s) in &h.arms {
                                    tr { th scope="row" { (arm.as_str()) } td { (format!("{:.4}", s.score)) } td { (s.rank) } td { (arm_measure(*arm)) } }
                                }
                            }
                        }
                        div.why {
                            p { strong { "Why it is here" } }
                            ul { @for line in why_evidence(h, &v.bars) { li { (line) } } }
                            @if !h.matched_terms.is_empty() {
                                p { "matched terms: " @for t in &h.matched_terms { code { (t) } " " }
                                    @if let Some(c) = h.coverage { "(coverage " (format!("{c:.2}")) ")" } }
                            }
                            @if let Some(c) = &h.matched_cue { p { "matched cue: " q { (c) } } }
                            @if let Some(m) = &h.matched_said { p { "matched what was said: " (m) } }
                            @if !h.entities.is_empty() { p { "entities of the question it mentions: " (h.entities.join(", ")) } }
                            @if let Some(s) = &h.section { p { "section: " (s.heading) " (lines " (s.start_line) "–" (s.end_line) ")" } }
                        }
                    }
                }
            }
            @if let Some(arms) = &r.explain {
                details.explain {
                    summary { "Every arm's candidates (explain)" }
                    @for a in arms {
                        h3 { (a.arm.as_str()) " — " (a.candidates.len()) " candidate(s), " (arm_measure(a.arm)) }
                        @if !a.candidates.is_empty() {
                            ol.candidates {
                                @for (path, score) in a.candidates.iter().take(20) {
                                    li { code { (format!("{score:.4}")) } " " a href=(urls.memory(path)) { (path) }
                                        @if r.hits.iter().any(|h| &h.path == path) { " " span.kind { "hit" } } }
                                }
                            }
                        }
                    }
                    p.muted { "timings: "
                        @for (k, ms) in &r.timings_ms { (k) " " (format!("{ms:.1}")) " ms · " } }
                }
            }
        }
    }
}

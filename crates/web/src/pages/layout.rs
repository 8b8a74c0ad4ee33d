//! The frame every page shares: header with the store's navigation and search box,
//! the time-travel form (`?at=`) with a banner when the page is in the past, the
//! main region, and a footer naming the keyboard shortcuts.

use maud::{DOCTYPE, Markup, html};

use crate::moment::{Moment, short, when};
use crate::urls::{BASE, Urls};

/// Which section of the navigation the page belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Stores,
    Tree,
    Search,
    Timeline,
    Memory,
    Commit,
    Other,
}

/// What the frame needs from a page.
pub struct Frame<'a> {
    pub title: String,
    /// The store's addresses (none on the store list and login pages).
    pub urls: Option<&'a Urls>,
    pub moment: Option<&'a Moment>,
    pub nav: Nav,
    /// The search box's text.
    pub query: &'a str,
    /// This page's address without its query string, and the parameters the
    /// time-travel form keeps (all but `at`).
    pub here: String,
    pub keep: Vec<(&'static str, String)>,
    /// A signed-in viewer gets a sign-out button.
    pub signed_in: bool,
}

impl<'a> Frame<'a> {
    pub fn new(title: impl Into<String>, nav: Nav) -> Frame<'a> {
        Frame {
            title: title.into(),
            urls: None,
            moment: None,
            nav,
            query: "",
            here: format!("{BASE}/"),
            keep: Vec::new(),
            signed_in: false,
        }
    }

    pub fn store(mut self, urls: &'a Urls, moment: &'a Moment) -> Frame<'a> {
        self.urls = Some(urls);
        self.moment = Some(moment);
        self
    }

    pub fn here(mut self, here: String, keep: Vec<(&'static str, String)>) -> Frame<'a> {
        self.here = here;
        self.keep = keep;
        self
    }
}

impl Nav {
    /// The page kind, on `<main data-page>` (for styles and tests).
    pub fn as_str(self) -> &'static str {
        match self {
            Nav::Stores => "stores",
            Nav::Tree => "tree",
            Nav::Search => "search",
            Nav::Timeline => "timeline",
            Nav::Memory => "memory",
            Nav::Commit => "commit",
            Nav::Other => "other",
        }
    }
}

fn current(nav: Nav, item: Nav) -> Option<&'static str> {
    (nav == item).then_some("page")
}

/// The whole document around `main`.
pub fn page(f: &Frame<'_>, main: Markup) -> Markup {
    let build = gitloom_engine::BUILD;
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (f.title) " · gitloom" }
                link rel="stylesheet" href={ (BASE) "/static/app.css?v=" (build) };
                script src={ (BASE) "/static/app.js?v=" (build) } defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    nav aria-label="Main" {
                        a.brand href={ (BASE) "/" } aria-current=[current(f.nav, Nav::Stores)] { "gitloom" }
                        @if let Some(u) = f.urls {
                            span.store { (u.store) }
                            a href=(u.tree(None)) accesskey="t" aria-current=[current(f.nav, Nav::Tree)] { "Tree" }
                            a href=(u.timeline(0)) accesskey="l" aria-current=[current(f.nav, Nav::Timeline)] { "Timeline" }
                        }
                        @if f.signed_in {
                            form.signout method="post" action={ (BASE) "/logout" } {
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                    @if let Some(u) = f.urls {
                        form.search role="search" method="get" action=(u.now().search(None)) {
                            label.visually-hidden for="q" { "Search memories" }
                            input id="q" type="search" name="q" value=(f.query) placeholder="Ask the memory… ( / )" autocomplete="off";
                            @if let Some(at) = &u.at { input type="hidden" name="at" value=(at); }
                            button type="submit" { "Search" }
                        }
                        (at_form(f, u))
                    }
                }
                @if let (Some(m), Some(u)) = (f.moment, f.urls) {
                    @if !m.is_now() { (past_banner(f, m, u)) }
                }
                main id="main" tabindex="-1" data-page=(f.nav.as_str()) { (main) }
                footer {
                    p {
                        "Keys: " kbd { "/" } " search · " kbd { "t" } " tree · " kbd { "l" } " timeline · "
                        kbd { "a" } " as of · " kbd { "j" } "/" kbd { "k" } " next/previous item"
                    }
                    p.build { "gitloom " (build) }
                }
            }
        }
    }
}

/// "As of": any revision or date; empty means now.
fn at_form(f: &Frame<'_>, u: &Urls) -> Markup {
    html! {
        form.at method="get" action=(f.here) {
            label for="at" { "As of" }
            input id="at" type="text" name="at" value=[u.at.as_deref()] placeholder="now — or 2026-08-01, HEAD~3, a sha" autocomplete="off" spellcheck="false";
            @for (k, v) in &f.keep { input type="hidden" name=(k) value=(v); }
            button type="submit" { "Travel" }
        }
    }
}

fn past_banner(f: &Frame<'_>, m: &Moment, u: &Urls) -> Markup {
    let now = u.now().with(
        f.here.clone(),
        &f.keep
            .iter()
            .map(|(k, v)| (*k, Some(v.as_str())))
            .collect::<Vec<_>>(),
    );
    html! {
        div.past role="status" {
            "Showing the store as of "
            strong { (u.at.as_deref().unwrap_or_default()) }
            @if let Some(c) = m.commit {
                ": commit " code { (short(&c.to_string())) }
                @if let Some(t) = m.time { ", " (when(t)) }
                @if !m.summary.is_empty() { " — " q { (m.summary) } }
            }
            ". " a href=(now) { "Back to now" }
        }
    }
}

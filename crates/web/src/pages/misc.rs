//! The pages outside a store: the list of stores, sign-in, and errors.

use maud::{Markup, html};

use crate::error::WebError;
use crate::urls::{BASE, Urls};

pub fn stores(names: &[String]) -> Markup {
    html! {
        h1 { "Stores" }
        @if names.is_empty() {
            p { "This account has no namespaces yet. Create one with the API: "
                code { "POST /v1/namespaces {\"name\": \"notes\"}" } "." }
        } @else {
            ul.items {
                @for n in names {
                    li.item { a href=(Urls::new(n, None).tree(None)) { (n) } }
                }
            }
        }
    }
}

pub fn login(next: &str, problem: Option<&str>) -> Markup {
    html! {
        h1 { "Sign in" }
        p { "The web view uses the same API keys as the HTTP API (" code { "gitloom admin create-key" } ")." }
        @if let Some(p) = problem { p.problem role="alert" { (p) } }
        form.login method="post" action={ (BASE) "/login" } {
            input type="hidden" name="next" value=(next);
            div.field {
                label for="key" { "API key" }
                input id="key" type="password" name="key" autocomplete="current-password" required autofocus;
            }
            button type="submit" { "Sign in" }
        }
    }
}

pub fn error(e: &WebError, back: Option<&str>) -> Markup {
    html! {
        h1 { (e.status.as_u16()) " " (e.status.canonical_reason().unwrap_or("error")) }
        p.problem role="alert" { (e.message) }
        p.muted { "code: " code { (e.code) } }
        @if let Some(b) = back { p { a href=(b) { "Back" } } }
    }
}

//! Memory bodies rendered as HTML, safely: a body is user content (it can come from a
//! conversation), so nothing in it may run or load in the viewer's browser.
//!
//! pulldown-cmark parses and writes the HTML (its writer escapes every text node and
//! attribute). What it would pass through untouched is neutralised on the event
//! stream before the writer sees it, which covers every way markdown can carry
//! markup: raw HTML blocks are shown as code, inline raw HTML as text, link targets
//! with a scheme other than http, https or mailto lose their link, and images become
//! plain links (the page loads nothing from elsewhere; its Content-Security-Policy
//! says so too). A sanitiser such as ammonia would re-parse HTML we generate
//! ourselves; filtering the events is complete here because no other path produces
//! markup.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};

/// Turns a `[[wikilink]]` target (`path`, title or slug; `#section` split off) into
/// the page it leads to, or `None` when it leads nowhere (dangling).
pub type WikiResolver<'a> = dyn Fn(&str, Option<&str>) -> Option<String> + 'a;

/// Renders `body` (markdown) to HTML that is safe to embed in a page.
pub fn render(body: &str, wiki: &WikiResolver<'_>) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_WIKILINKS;
    let events = neutralise(Parser::new_ext(body, options), wiki);
    let mut out = String::with_capacity(body.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

/// The event stream with every way to smuggle markup or a script removed.
fn neutralise<'a>(parser: Parser<'a>, wiki: &WikiResolver<'_>) -> Vec<Event<'a>> {
    let mut out = Vec::new();
    // For each open link or image: whether its start was kept (so its end is too).
    let mut open: Vec<bool> = Vec::new();
    for event in parser {
        match event {
            Event::Start(Tag::HtmlBlock) => out.push(Event::Start(Tag::CodeBlock(
                CodeBlockKind::Fenced(CowStr::Borrowed("html")),
            ))),
            Event::End(TagEnd::HtmlBlock) => out.push(Event::End(TagEnd::CodeBlock)),
            Event::Html(raw) | Event::InlineHtml(raw) => out.push(Event::Text(raw)),
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let href = match link_type {
                    LinkType::WikiLink { .. } => {
                        let (target, section) = match dest_url.split_once('#') {
                            Some((t, s)) => (t, Some(s)),
                            None => (dest_url.as_ref(), None),
                        };
                        wiki(target, section)
                    }
                    _ => safe_href(&dest_url).map(str::to_owned),
                };
                match href {
                    Some(href) => {
                        open.push(true);
                        out.push(Event::Start(Tag::Link {
                            link_type,
                            dest_url: CowStr::from(href),
                            title,
                            id,
                        }));
                    }
                    None => open.push(false),
                }
            }
            Event::Start(Tag::Image {
                dest_url,
                title,
                id,
                ..
            }) => match safe_href(&dest_url) {
                Some(href) => {
                    open.push(true);
                    out.push(Event::Start(Tag::Link {
                        link_type: LinkType::Inline,
                        dest_url: CowStr::from(href.to_owned()),
                        title,
                        id,
                    }));
                    out.push(Event::Text(CowStr::Borrowed("image: ")));
                }
                None => open.push(false),
            },
            Event::End(TagEnd::Link | TagEnd::Image) => {
                if open.pop().unwrap_or(false) {
                    out.push(Event::End(TagEnd::Link));
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `url` when following it cannot run anything: a relative reference, or an
/// absolute one with the http, https or mailto scheme. Browsers ignore ASCII
/// whitespace and control characters inside a scheme (`java\tscript:`), so those are
/// dropped before the scheme is read.
pub fn safe_href(url: &str) -> Option<&str> {
    let cleaned: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .collect();
    let scheme_end = cleaned.find(':');
    let first_delim = cleaned.find(['/', '?', '#']);
    let has_scheme = match (scheme_end, first_delim) {
        (Some(colon), Some(delim)) => colon < delim,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if !has_scheme {
        return Some(url);
    }
    let scheme = cleaned[..scheme_end.unwrap_or_default()].to_ascii_lowercase();
    matches!(scheme.as_str(), "http" | "https" | "mailto").then_some(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_wiki(_: &str, _: Option<&str>) -> Option<String> {
        None
    }

    #[test]
    fn raw_html_is_shown_not_run() {
        let html = render(
            "<script>alert(1)</script>\n\nhi <img src=x onerror=alert(2)> there\n",
            &no_wiki,
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(
            html.contains("&lt;img src=x onerror=alert(2)&gt;"),
            "{html}"
        );
    }

    #[test]
    fn script_links_lose_their_link_and_images_load_nothing() {
        let html = render(
            "[a](javascript:alert(1)) [b](JaVa\tScRiPt:alert(1)) [c](data:text/html,x) [d](https://example.org/x) [e](../other.md)\n\n![pic](https://example.org/p.png) ![bad](javascript:x)",
            &no_wiki,
        );
        assert!(!html.to_lowercase().contains("javascript"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.org/x">d</a>"#),
            "{html}"
        );
        assert!(html.contains(r#"<a href="../other.md">e</a>"#), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.org/p.png">image: pic</a>"#),
            "{html}"
        );
        // The link text of a refused link stays readable.
        assert!(html.contains('a') && html.contains("bad"), "{html}");
    }

    #[test]
    fn wikilinks_go_where_the_resolver_says() {
        let wiki = |target: &str, section: Option<&str>| -> Option<String> {
            (target == "Mellow")
                .then(|| format!("/m/facts/pets/mellow.md#{}", section.unwrap_or("")))
        };
        let html = render("See [[Mellow#vet|the cat]] and [[Nobody]].", &wiki);
        assert!(
            html.contains(r#"<a href="/m/facts/pets/mellow.md#vet">the cat</a>"#),
            "{html}"
        );
        assert!(
            html.contains("Nobody") && !html.contains("href=\"Nobody"),
            "{html}"
        );
    }
}

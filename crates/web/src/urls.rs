//! The web view's addresses, built in one place so every link carries the page's
//! moment (`?at=`) forward and every path segment and query value is encoded.

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// Where the pages are mounted.
pub const BASE: &str = "/ui";

/// Characters escaped in a path segment (RFC 3986 path, minus `/` which separates
/// the segments of a store path and is kept).
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'%')
    .add(b'\\')
    .add(b'^')
    .add(b'|')
    .add(b'[')
    .add(b']');

/// Addresses within one store, at one moment.
#[derive(Debug, Clone)]
pub struct Urls {
    pub store: String,
    /// `?at=` as given (kept verbatim so the address bar reads as typed).
    pub at: Option<String>,
}

impl Urls {
    pub fn new(store: &str, at: Option<&str>) -> Urls {
        Urls {
            store: store.to_owned(),
            at: at.map(str::to_owned),
        }
    }

    /// The same store, now (HEAD).
    pub fn now(&self) -> Urls {
        Urls::new(&self.store, None)
    }

    /// The same store at another moment.
    pub fn at(&self, at: &str) -> Urls {
        Urls::new(&self.store, Some(at))
    }

    /// The store's root: `/ui/n/<store>`.
    pub fn root(&self) -> String {
        format!("{BASE}/n/{}", encode_path(&self.store))
    }

    pub fn tree(&self, topic: Option<&str>) -> String {
        self.with(format!("{}/", self.root()), &[("topic", topic)])
    }

    pub fn memory(&self, path: &str) -> String {
        self.with(format!("{}/m/{}", self.root(), encode_path(path)), &[])
    }

    pub fn search(&self, q: Option<&str>) -> String {
        self.with(format!("{}/search", self.root()), &[("q", q)])
    }

    pub fn timeline(&self, skip: usize) -> String {
        let skip = (skip > 0).then(|| skip.to_string());
        self.with(
            format!("{}/timeline", self.root()),
            &[("skip", skip.as_deref())],
        )
    }

    /// A commit's page. Commits are absolute, so the moment is carried only to keep
    /// the viewer's place.
    pub fn commit(&self, commit: &str) -> String {
        self.with(format!("{}/c/{}", self.root(), encode_path(commit)), &[])
    }

    /// `path` with `params` and this moment's `at` as the query string.
    pub fn with(&self, path: String, params: &[(&str, Option<&str>)]) -> String {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in params {
            if let Some(v) = v.filter(|v| !v.is_empty()) {
                q.append_pair(k, v);
            }
        }
        if let Some(at) = &self.at {
            q.append_pair("at", at);
        }
        let q = q.finish();
        if q.is_empty() {
            path
        } else {
            format!("{path}?{q}")
        }
    }
}

/// Percent-encodes a store path (or any text) for use in a URL path, keeping `/`.
pub fn encode_path(p: &str) -> String {
    utf8_percent_encode(p, PATH).to_string()
}

/// The login page, returning to `next` afterwards.
pub fn login(next: Option<&str>) -> String {
    let mut q = form_urlencoded::Serializer::new(String::new());
    if let Some(n) = next {
        q.append_pair("next", n);
    }
    let q = q.finish();
    if q.is_empty() {
        format!("{BASE}/login")
    } else {
        format!("{BASE}/login?{q}")
    }
}

/// `next` when it is an address of these pages (never another site: no open
/// redirect through the login form), else the list of stores.
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n)
            if n.starts_with(&format!("{BASE}/"))
                && !n.starts_with("//")
                && !n.contains(['\\', '\r', '\n']) =>
        {
            n.to_owned()
        }
        _ => format!("{BASE}/"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_carry_the_moment_and_encode_what_they_must() {
        let u = Urls::new("notes", Some("HEAD~1"));
        assert_eq!(
            u.tree(Some("facts/work")),
            "/ui/n/notes/?topic=facts%2Fwork&at=HEAD%7E1"
        );
        assert_eq!(
            u.memory("facts/a b#c.md"),
            "/ui/n/notes/m/facts/a%20b%23c.md?at=HEAD%7E1"
        );
        assert_eq!(
            u.now().search(Some("who & why")),
            "/ui/n/notes/search?q=who+%26+why"
        );
        assert_eq!(u.now().timeline(0), "/ui/n/notes/timeline");
    }

    #[test]
    fn the_login_form_returns_only_to_these_pages() {
        assert_eq!(safe_next(Some("/ui/n/x/")), "/ui/n/x/");
        assert_eq!(safe_next(Some("https://evil.example/")), "/ui/");
        assert_eq!(safe_next(Some("//evil.example/ui/")), "/ui/");
        assert_eq!(safe_next(Some("/ui/\r\nSet-Cookie: x")), "/ui/");
        assert_eq!(safe_next(None), "/ui/");
    }
}

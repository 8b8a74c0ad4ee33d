//! The web view mounted in `gitloom serve`: a page needs an account's key (the
//! API's own check, rate limit included), a browser signs in once and keeps the key
//! in an HttpOnly cookie, and an account sees only its own namespaces.

mod common;

use common::*;
use serde_json::json;

fn no_redirects() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .new_agent()
}

/// (status, headers, body) of a GET, with an optional cookie header.
fn page(url: &str, cookie: Option<&str>) -> (u16, ureq::http::HeaderMap, String) {
    let mut req = no_redirects().get(url);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    let mut r = req.call().expect("request sent");
    let headers = r.headers().clone();
    (
        r.status().as_u16(),
        headers,
        r.body_mut().read_to_string().expect("body"),
    )
}

fn sign_in(server: &TestServer, key: &str, next: &str) -> (u16, ureq::http::HeaderMap, String) {
    let form = format!("key={}&next={}", key, next.replace('/', "%2F"));
    let mut r = no_redirects()
        .post(&server.url("/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .send(&form)
        .expect("request sent");
    let headers = r.headers().clone();
    (
        r.status().as_u16(),
        headers,
        r.body_mut().read_to_string().expect("body"),
    )
}

#[test]
fn pages_need_a_key_and_a_browser_signs_in_with_a_cookie() {
    let server = start();
    let key = server.account("acme");
    let (s, body, _) = post(
        Some(&key),
        &server.url("/v1/namespaces"),
        &json!({"name": "notes"}),
    );
    assert_eq!(s, 201, "{body}");
    let (s, body, _) = post(
        Some(&key),
        &server.url("/v1/namespaces/notes/memories"),
        &json!({"title": "Cat", "body": "The cat is Miso.", "topic": "pets"}),
    );
    assert_eq!(s, 200, "{body}");

    // No key: to the sign-in page, which will come back here.
    let (status, headers, _) = page(&server.url("/ui/n/notes/?topic=facts/pets"), None);
    assert_eq!(status, 303);
    assert_eq!(
        headers["location"],
        "/ui/login?next=%2Fui%2Fn%2Fnotes%2F%3Ftopic%3Dfacts%2Fpets"
    );
    let (status, _, body) = page(&server.url("/ui/login?next=/ui/n/notes/"), None);
    assert_eq!(status, 200);
    assert!(body.contains(r#"type="password""#), "{body}");

    // A wrong key is refused on the form, and sets nothing.
    let (status, headers, body) = sign_in(&server, "glk_wrong", "/ui/n/notes/");
    assert_eq!(status, 401, "{body}");
    assert!(headers.get("set-cookie").is_none());
    assert!(body.contains("That key is not valid."), "{body}");

    // The right key: an HttpOnly cookie scoped to /ui, and back to the page.
    let (status, headers, _) = sign_in(&server, &key, "/ui/n/notes/");
    assert_eq!(status, 303);
    assert_eq!(headers["location"], "/ui/n/notes/");
    let cookie = headers["set-cookie"].to_str().expect("cookie").to_owned();
    assert!(
        cookie.contains("HttpOnly")
            && cookie.contains("Path=/ui")
            && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().expect("name=value").to_owned();
    let (status, _, body) = page(&server.url("/ui/n/notes/?topic=facts/pets"), Some(&pair));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Cat"), "{body}");
    let (status, _, body) = page(&server.url("/ui/"), Some(&pair));
    assert_eq!(status, 200);
    assert!(
        body.contains(r#"href="/ui/n/notes/""#),
        "the account's namespaces: {body}"
    );

    // Signing out sends a removal cookie.
    let mut r = no_redirects()
        .post(&server.url("/ui/logout"))
        .header("cookie", &pair)
        .send("")
        .expect("request sent");
    assert_eq!(r.status().as_u16(), 303);
    let removal = r.headers()["set-cookie"]
        .to_str()
        .expect("cookie")
        .to_owned();
    assert!(
        removal.starts_with("gitloom_key=;") && removal.contains("Max-Age=0"),
        "{removal}"
    );
    let _ = r.body_mut().read_to_string();

    // The login form never sends the browser to another site.
    let (status, headers, _) = sign_in(&server, &key, "https://evil.example/");
    assert_eq!(status, 303);
    assert_eq!(headers["location"], "/ui/");
}

#[test]
fn an_account_sees_only_its_own_namespaces() {
    let server = start();
    let acme = server.account("acme");
    let other = server.account("other");
    let (s, _, _) = post(
        Some(&acme),
        &server.url("/v1/namespaces"),
        &json!({"name": "secret"}),
    );
    assert_eq!(s, 201);
    let bearer = |key: &str, url: &str| {
        let mut r = no_redirects()
            .get(&server.url(url))
            .header("Authorization", &format!("Bearer {key}"))
            .call()
            .expect("request sent");
        (
            r.status().as_u16(),
            r.body_mut().read_to_string().expect("body"),
        )
    };
    let (status, _) = bearer(&acme, "/ui/n/secret/");
    assert_eq!(status, 200);
    let (status, body) = bearer(&other, "/ui/n/secret/");
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("namespace_not_found"), "{body}");
    let (status, body) = bearer(&other, "/ui/");
    assert_eq!(status, 200);
    assert!(!body.contains("secret"), "{body}");
    // A name that is no namespace name is refused before any file is opened.
    let (status, body) = bearer(&acme, "/ui/n/..%2F..%2Fetc/");
    assert_eq!(status, 400, "{body}");
    assert!(
        !body.contains(&server.data.path().display().to_string()),
        "{body}"
    );
}

#[test]
fn pages_count_against_the_keys_rate_limit() {
    let server = start_with(|c| {
        c.rate = gitloom_server::RateLimit {
            per_second: 0.001,
            burst: 2.0,
        }
    });
    let key = server.account("acme");
    let cookie = format!("{}={key}", gitloom_web::KEY_COOKIE);
    assert_eq!(page(&server.url("/ui/"), Some(&cookie)).0, 200);
    assert_eq!(page(&server.url("/ui/"), Some(&cookie)).0, 200);
    let (status, _, body) = page(&server.url("/ui/"), Some(&cookie));
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("too many requests"), "{body}");
}

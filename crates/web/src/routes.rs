//! The routes: sign-in, the static assets, and one handler per page. A handler
//! authenticates, reads the store on a blocking thread through the [`Source`], and
//! renders; every error is an HTML page with its status.

use std::sync::Arc;

use axum::Router;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use gitloom_engine::Engine;
use maud::Markup;
use serde::Deserialize;

use crate::error::WebError;
use crate::history;
use crate::links::GraphCache;
use crate::memory::memory_view;
use crate::moment::Moment;
use crate::pages::layout::{Frame, Nav, page};
use crate::pages::{memory_page, misc, search_page, timeline_page, tree_page};
use crate::search::{SearchForm, search};
use crate::source::{Source, Viewer, read_with};
use crate::tree::{topic_files, topic_tree};
use crate::urls::{self, BASE, Urls};

/// The cookie holding the viewer's API key after signing in.
pub const KEY_COOKIE: &str = "gitloom_key";
/// Commits per timeline page.
const PER_PAGE: usize = 50;

const CSS: &str = include_str!("../assets/app.css");
const JS: &str = include_str!("../assets/app.js");

/// The pages' shared state.
pub struct Web<S> {
    source: S,
    graphs: GraphCache,
}

type St<S> = State<Arc<Web<S>>>;

/// The web view's routes under `/ui`, over `source`.
pub fn router<S: Source>(source: S) -> Router {
    let web = Arc::new(Web {
        source,
        graphs: GraphCache::default(),
    });
    Router::new()
        .route(BASE, get(|| async { Redirect::to(&format!("{BASE}/")) }))
        .route(&format!("{BASE}/"), get(stores::<S>))
        .route(
            &format!("{BASE}/login"),
            get(login_form::<S>).post(login::<S>),
        )
        .route(&format!("{BASE}/logout"), post(logout))
        .route(
            &format!("{BASE}/static/app.css"),
            get(|| asset(CSS, "text/css; charset=utf-8")),
        )
        .route(
            &format!("{BASE}/static/app.js"),
            get(|| asset(JS, "text/javascript; charset=utf-8")),
        )
        .route(&format!("{BASE}/n/{{ns}}"), get(store_root))
        .route(&format!("{BASE}/n/{{ns}}/"), get(tree::<S>))
        .route(&format!("{BASE}/n/{{ns}}/m/{{*path}}"), get(memory::<S>))
        .route(&format!("{BASE}/n/{{ns}}/search"), get(search_page::<S>))
        .route(&format!("{BASE}/n/{{ns}}/timeline"), get(timeline::<S>))
        .route(&format!("{BASE}/n/{{ns}}/c/{{commit}}"), get(commit::<S>))
        .route(&format!("{BASE}/{{*rest}}"), get(no_page))
        .with_state(web)
        .layer(axum::middleware::map_response(security_headers))
}

/// Headers on every response of the view: nothing from elsewhere may load or run
/// (the body renderer already removes it; this is the second wall), pages are not
/// framed, cached or sent as a referrer, and the build is named (O2).
async fn security_headers(mut res: Response) -> Response {
    let h = res.headers_mut();
    let set = |h: &mut HeaderMap, k: header::HeaderName, v: &'static str| {
        h.entry(k).or_insert(HeaderValue::from_static(v));
    };
    set(
        h,
        header::CONTENT_SECURITY_POLICY,
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    set(h, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(h, header::REFERRER_POLICY, "no-referrer");
    set(h, header::X_FRAME_OPTIONS, "DENY");
    set(h, header::CACHE_CONTROL, "no-store");
    h.insert(
        "x-gitloom-build",
        HeaderValue::from_static(gitloom_engine::BUILD),
    );
    res
}

async fn asset(body: &'static str, content_type: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            // Addressed with `?v=<build>`, so a new build is a new address.
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        body,
    )
        .into_response()
}

async fn no_page(uri: Uri) -> Response {
    let e = WebError::not_found(format!("there is no page {}", uri.path()));
    error_page(&e, false)
}

async fn store_root(Path(ns): Path<String>) -> Redirect {
    Redirect::permanent(&Urls::new(&ns, None).tree(None))
}

fn html_response(status: StatusCode, markup: Markup) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        markup.into_string(),
    )
        .into_response()
}

fn error_page(e: &WebError, signed_in: bool) -> Response {
    let mut frame = Frame::new(format!("{} {}", e.status.as_u16(), e.code), Nav::Other);
    frame.signed_in = signed_in;
    html_response(
        e.status,
        page(&frame, misc::error(e, Some(&format!("{BASE}/")))),
    )
}

/// The key a request presents: `Authorization: Bearer KEY` (scripts) or the
/// sign-in cookie (browsers).
fn presented_key(headers: &HeaderMap) -> Option<String> {
    if let Some(key) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
    {
        return Some(key.trim().to_owned());
    }
    CookieJar::from_headers(headers)
        .get(KEY_COOKIE)
        .map(|c| c.value().to_owned())
}

/// The viewer, or the response to send instead: a sign-in redirect when no valid key
/// came with a request that needs one, else the error's page (e.g. 429).
async fn viewer<S: Source>(
    web: &Web<S>,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<Viewer, Response> {
    let key = presented_key(headers);
    match web.source.authenticate(key.as_deref()).await {
        Ok(v) => Ok(v),
        Err(e) if e.status == StatusCode::UNAUTHORIZED => {
            let next = uri.path_and_query().map(|p| p.as_str());
            Err(Redirect::to(&urls::login(next)).into_response())
        }
        Err(e) => Err(error_page(&e, false)),
    }
}

/// Runs `f` on the store's engine on a blocking thread.
async fn on_store<S: Source, T: Send + 'static>(
    web: &Arc<Web<S>>,
    viewer: Viewer,
    store: String,
    f: impl FnOnce(&Web<S>, &Engine) -> Result<T, WebError> + Send + 'static,
) -> Result<T, WebError> {
    let web = web.clone();
    tokio::task::spawn_blocking(move || {
        read_with(&web.source, &viewer, &store, |engine| f(&web, engine))
    })
    .await
    .map_err(WebError::internal)?
}

/// Renders a page's result: the page in its frame, or the error's page.
fn respond(result: Result<(Frame<'_>, Markup), WebError>, signed_in: bool) -> Response {
    match result {
        Ok((mut frame, main)) => {
            frame.signed_in = signed_in;
            html_response(StatusCode::OK, page(&frame, main))
        }
        Err(e) => error_page(&e, signed_in),
    }
}

/// Drops empty values: an empty form field means "not given".
fn given(v: Option<String>) -> Option<String> {
    v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

fn number(name: &str, v: Option<String>) -> Result<Option<usize>, WebError> {
    given(v)
        .map(|s| {
            s.parse::<usize>().map_err(|_| {
                WebError::bad_request(
                    "invalid_params",
                    format!("{name} must be a whole number, not {s:?}"),
                )
            })
        })
        .transpose()
}

#[derive(Debug, Deserialize)]
struct NextQuery {
    next: Option<String>,
}

async fn login_form<S: Source>(State(web): St<S>, Query(q): Query<NextQuery>) -> Response {
    if !web.source.needs_key() {
        return Redirect::to(&urls::safe_next(q.next.as_deref())).into_response();
    }
    let next = urls::safe_next(q.next.as_deref());
    html_response(
        StatusCode::OK,
        page(&Frame::new("Sign in", Nav::Other), misc::login(&next, None)),
    )
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    key: String,
    next: Option<String>,
}

async fn login<S: Source>(
    State(web): St<S>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    let next = urls::safe_next(form.next.as_deref());
    let key = form.key.trim().to_owned();
    match web.source.authenticate(Some(&key)).await {
        Ok(_) => {
            let https = headers
                .get("x-forwarded-proto")
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
            let cookie = Cookie::build((KEY_COOKIE, key))
                .path(BASE)
                .http_only(true)
                .same_site(SameSite::Lax)
                .secure(https)
                .build();
            (CookieJar::new().add(cookie), Redirect::to(&next)).into_response()
        }
        Err(e) => {
            let problem = if e.status == StatusCode::UNAUTHORIZED {
                "That key is not valid.".to_owned()
            } else {
                e.message.clone()
            };
            html_response(
                if e.status == StatusCode::UNAUTHORIZED {
                    StatusCode::UNAUTHORIZED
                } else {
                    e.status
                },
                page(
                    &Frame::new("Sign in", Nav::Other),
                    misc::login(&next, Some(&problem)),
                ),
            )
        }
    }
}

async fn logout() -> Response {
    // A removal cookie (empty, Max-Age=0, expired) for the one the sign-in set.
    let mut gone = Cookie::build((KEY_COOKIE, ""))
        .path(BASE)
        .http_only(true)
        .build();
    gone.make_removal();
    (CookieJar::new().add(gone), Redirect::to(&urls::login(None))).into_response()
}

async fn stores<S: Source>(State(web): St<S>, headers: HeaderMap, uri: Uri) -> Response {
    let viewer = match viewer(&web, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let signed_in = web.source.needs_key();
    let w = web.clone();
    let names = tokio::task::spawn_blocking(move || w.source.stores(&viewer))
        .await
        .map_err(WebError::internal)
        .and_then(|r| r);
    match names {
        // One store: go straight to it.
        Ok(names) if names.len() == 1 && !web.source.needs_key() => {
            Redirect::to(&Urls::new(&names[0], None).tree(None)).into_response()
        }
        Ok(names) => respond(
            Ok((Frame::new("Stores", Nav::Stores), misc::stores(&names))),
            signed_in,
        ),
        Err(e) => error_page(&e, signed_in),
    }
}

#[derive(Debug, Deserialize)]
struct TreeQuery {
    at: Option<String>,
    topic: Option<String>,
}

async fn tree<S: Source>(
    State(web): St<S>,
    headers: HeaderMap,
    uri: Uri,
    Path(ns): Path<String>,
    Query(q): Query<TreeQuery>,
) -> Response {
    let viewer = match viewer(&web, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let (at, topic) = (given(q.at), given(q.topic));
    let store = ns.clone();
    let result = on_store(&web, viewer, ns, move |_, engine| {
        let moment = Moment::resolve(engine, at.as_deref())?;
        let commit = moment.commit()?;
        let tree = topic_tree(engine.store(), commit)?;
        let files = match &topic {
            Some(t) => topic_files(engine.store(), commit, t)?,
            None => Vec::new(),
        };
        Ok((moment, tree, topic, files))
    })
    .await;
    let signed_in = web.source.needs_key();
    match result {
        Ok((moment, tree, topic, files)) => {
            let urls = Urls::new(&store, moment.at.as_deref());
            let main = tree_page::tree(&urls, &tree, topic.as_deref(), &files);
            let keep: Vec<(&'static str, String)> =
                topic.iter().map(|t| ("topic", t.clone())).collect();
            let title = topic.clone().unwrap_or_else(|| "Topics".to_owned());
            let here = urls.root() + "/";
            let frame = Frame::new(title, Nav::Tree)
                .store(&urls, &moment)
                .here(here, keep);
            respond(Ok((frame, main)), signed_in)
        }
        Err(e) => error_page(&e, signed_in),
    }
}

#[derive(Debug, Deserialize)]
struct AtQuery {
    at: Option<String>,
}

async fn memory<S: Source>(
    State(web): St<S>,
    headers: HeaderMap,
    uri: Uri,
    Path((ns, path)): Path<(String, String)>,
    Query(q): Query<AtQuery>,
) -> Response {
    let viewer = match viewer(&web, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let at = given(q.at);
    let store = ns.clone();
    let p = path.clone();
    let result = on_store(&web, viewer, ns, move |web, engine| {
        let moment = Moment::resolve(engine, at.as_deref())?;
        let view = memory_view(&web.graphs, &store, engine, &moment, &p)?;
        Ok((moment, view, store))
    })
    .await;
    match result {
        Ok((moment, view, store)) => {
            let urls = Urls::new(&store, moment.at.as_deref());
            let main = memory_page::memory(&urls, &view);
            let title = view
                .memory()
                .map(|m| m.front.title.clone())
                .unwrap_or_else(|| view.path.to_string());
            let here = format!(
                "{}/m/{}",
                urls.root(),
                urls::encode_path(view.path.as_str())
            );
            let frame = Frame::new(title, Nav::Memory)
                .store(&urls, &moment)
                .here(here, Vec::new());
            respond(Ok((frame, main)), web.source.needs_key())
        }
        Err(e) => error_page(&e, web.source.needs_key()),
    }
}

#[derive(Debug, Deserialize)]
struct SearchQuery {
    q: Option<String>,
    at: Option<String>,
    tier: Option<String>,
    topic: Option<String>,
    limit: Option<String>,
}

async fn search_page<S: Source>(
    State(web): St<S>,
    headers: HeaderMap,
    uri: Uri,
    Path(ns): Path<String>,
    Query(q): Query<SearchQuery>,
) -> Response {
    let viewer = match viewer(&web, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let signed_in = web.source.needs_key();
    let limit = match number("limit", q.limit) {
        Ok(l) => l,
        Err(e) => return error_page(&e, signed_in),
    };
    let form = SearchForm {
        query: given(q.q).unwrap_or_default(),
        limit,
        tier: given(q.tier),
        topic: given(q.topic),
    };
    let at = given(q.at);
    let store = ns.clone();
    let f = form.clone();
    let result = on_store(&web, viewer, ns, move |_, engine| {
        let moment = Moment::resolve(engine, at.as_deref())?;
        let view = if f.query.is_empty() {
            None
        } else {
            Some(search(engine, &moment, &f)?)
        };
        Ok((moment, view))
    })
    .await;
    match result {
        Ok((moment, view)) => {
            let urls = Urls::new(&store, moment.at.as_deref());
            let main = search_page::search(&urls, &form, view.as_ref());
            let mut keep = vec![("q", form.query.clone())];
            keep.extend(form.tier.iter().map(|t| ("tier", t.clone())));
            keep.extend(form.topic.iter().map(|t| ("topic", t.clone())));
            keep.extend(form.limit.map(|l| ("limit", l.to_string())));
            let title = if form.query.is_empty() {
                "Search".to_owned()
            } else {
                form.query.clone()
            };
            let here = format!("{}/search", urls.root());
            let mut frame = Frame::new(title, Nav::Search)
                .store(&urls, &moment)
                .here(here, keep);
            frame.query = &form.query;
            respond(Ok((frame, main)), signed_in)
        }
        Err(e) => error_page(&e, signed_in),
    }
}

#[derive(Debug, Deserialize)]
struct TimelineQuery {
    at: Option<String>,
    skip: Option<String>,
}

async fn timeline<S: Source>(
    State(web): St<S>,
    headers: HeaderMap,
    uri: Uri,
    Path(ns): Path<String>,
    Query(q): Query<TimelineQuery>,
) -> Response {
    let viewer = match viewer(&web, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let signed_in = web.source.needs_key();
    let skip = match number("skip", q.skip) {
        Ok(s) => s.unwrap_or(0),
        Err(e) => return error_page(&e, signed_in),
    };
    let at = given(q.at);
    let store = ns.clone();
    let result = on_store(&web, viewer, ns, move |_, engine| {
        let moment = Moment::resolve(engine, at.as_deref())?;
        let page = history::timeline(engine.store(), moment.commit()?, skip, PER_PAGE)?;
        Ok((moment, page))
    })
    .await;
    match result {
        Ok((moment, tl)) => {
            let urls = Urls::new(&store, moment.at.as_deref());
            let main = timeline_page::timeline(&urls, &tl, skip, PER_PAGE);
            let keep = if skip > 0 {
                vec![("skip", skip.to_string())]
            } else {
                Vec::new()
            };
            let here = format!("{}/timeline", urls.root());
            let frame = Frame::new("Timeline".to_owned(), Nav::Timeline)
                .store(&urls, &moment)
                .here(here, keep);
            respond(Ok((frame, main)), signed_in)
        }
        Err(e) => error_page(&e, signed_in),
    }
}

async fn commit<S: Source>(
    State(web): St<S>,
    headers: HeaderMap,
    uri: Uri,
    Path((ns, commit)): Path<(String, String)>,
    Query(q): Query<AtQuery>,
) -> Response {
    let viewer = match viewer(&web, &headers, &uri).await {
        Ok(v) => v,
        Err(r) => return r,
    };
    let signed_in = web.source.needs_key();
    let at = given(q.at);
    let store = ns.clone();
    let result = on_store(&web, viewer, ns, move |_, engine| {
        let moment = Moment::resolve(engine, at.as_deref())?;
        let id = engine.store().resolve(&commit)?;
        let changes = history::commit(engine.store(), id)?;
        let diffs = changes
            .files
            .iter()
            .map(|t| history::file_diff(engine.store(), t))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((moment, changes, diffs))
    })
    .await;
    match result {
        Ok((moment, changes, diffs)) => {
            let urls = Urls::new(&store, moment.at.as_deref());
            let main = timeline_page::commit(&urls, &changes, &diffs);
            let sha = changes.commit.id.to_string();
            let here = urls.commit(&sha);
            let here = here.split('?').next().unwrap_or_default().to_owned();
            let frame = Frame::new(changes.commit.summary.clone(), Nav::Commit)
                .store(&urls, &moment)
                .here(here, Vec::new());
            respond(Ok((frame, main)), signed_in)
        }
        Err(e) => error_page(&e, signed_in),
    }
}

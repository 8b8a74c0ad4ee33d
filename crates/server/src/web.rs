//! The web view (`gitloom-web`) in `gitloom serve`, at `/ui`: each account sees its
//! own namespaces, and a page is authenticated by the API's own key check (the
//! [`Auth`] extractor: the same accounts, the same rate limit per key).

use axum::extract::FromRequestParts;
use axum::http::{HeaderValue, Request, StatusCode, header};
use gitloom_engine::Engine;
use gitloom_web::{Source, Viewer, WebError};

use crate::AppState;
use crate::http::{ApiError, Auth};

/// The server's accounts and namespaces as the web view's [`Source`].
pub struct WebSource {
    state: AppState,
}

impl WebSource {
    pub fn new(state: AppState) -> WebSource {
        WebSource { state }
    }
}

fn web_error(e: ApiError) -> WebError {
    if e.status.is_server_error() {
        // Logged, not shown: a server error's message may name server paths.
        WebError::internal(format!("{}: {}", e.code, e.message))
    } else {
        WebError::new(e.status, e.code, e.message)
    }
}

impl Source for WebSource {
    fn needs_key(&self) -> bool {
        true
    }

    async fn authenticate(&self, key: Option<&str>) -> Result<Viewer, WebError> {
        let unauthorized = || {
            WebError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "a valid API key is required",
            )
        };
        let mut req = Request::new(());
        if let Some(key) = key {
            let value =
                HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| unauthorized())?;
            req.headers_mut().insert(header::AUTHORIZATION, value);
        }
        let (mut parts, ()) = req.into_parts();
        Auth::from_request_parts(&mut parts, &self.state)
            .await
            .map(|a| Viewer { account: a.account })
            .map_err(web_error)
    }

    fn stores(&self, viewer: &Viewer) -> Result<Vec<String>, WebError> {
        self.state
            .namespaces
            .list(&viewer.account)
            .map_err(|e| web_error(e.into()))
    }

    fn read(
        &self,
        viewer: &Viewer,
        store: &str,
        read: &mut dyn FnMut(&Engine),
    ) -> Result<(), WebError> {
        let ns = self
            .state
            .namespaces
            .get(&viewer.account, store)
            .map_err(|e| web_error(e.into()))?;
        ns.read(|engine| read(engine))
            .map_err(|e| web_error(e.into()))
    }
}

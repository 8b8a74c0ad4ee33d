//! Where the pages read from: a [`Source`] says who may look and hands a store's
//! engine to a page. `gitloom serve` implements it over its accounts and namespaces
//! (with the API's key check); `gitloom ui` uses [`LocalSource`], one store and no
//! key, on loopback only.

use std::future::Future;

use gitloom_engine::Engine;
use gitloom_remote::Storage;

use crate::error::WebError;

/// Who is looking: the account a key belongs to (`local` for `gitloom ui`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    pub account: String,
}

/// The stores behind the pages.
pub trait Source: Send + Sync + 'static {
    /// Whether a viewer must present a key (a login page then asks for one).
    fn needs_key(&self) -> bool;

    /// Checks a key the way the API does (the same accounts, the same rate limit).
    /// `None` when no key was presented.
    fn authenticate(
        &self,
        key: Option<&str>,
    ) -> impl Future<Output = Result<Viewer, WebError>> + Send;

    /// The stores (namespaces) the viewer may read. Blocks.
    fn stores(&self, viewer: &Viewer) -> Result<Vec<String>, WebError>;

    /// Runs `read` on the engine of `store`, brought up to date first (for object
    /// storage: revalidated against its head). Blocks; called on a blocking thread.
    fn read(
        &self,
        viewer: &Viewer,
        store: &str,
        read: &mut dyn FnMut(&Engine),
    ) -> Result<(), WebError>;
}

/// Runs a typed read through [`Source::read`].
pub(crate) fn read_with<S: Source + ?Sized, T>(
    source: &S,
    viewer: &Viewer,
    store: &str,
    f: impl FnOnce(&Engine) -> Result<T, WebError>,
) -> Result<T, WebError> {
    let mut f = Some(f);
    let mut out = None;
    source.read(viewer, store, &mut |engine| {
        if let Some(f) = f.take() {
            out = Some(f(engine));
        }
    })?;
    out.unwrap_or_else(|| Err(WebError::internal("the source did not run the read")))
}

/// The name [`LocalSource`] gives its one store in URLs.
pub const LOCAL_STORE: &str = "local";

/// One store on this machine (or one namespace in object storage, through its
/// mirror), shown without a key: for `gitloom ui`, which listens on loopback only.
pub struct LocalSource {
    storage: Storage,
}

impl LocalSource {
    pub fn new(storage: Storage) -> LocalSource {
        LocalSource { storage }
    }
}

impl Source for LocalSource {
    fn needs_key(&self) -> bool {
        false
    }

    async fn authenticate(&self, _key: Option<&str>) -> Result<Viewer, WebError> {
        Ok(Viewer {
            account: LOCAL_STORE.to_owned(),
        })
    }

    fn stores(&self, _viewer: &Viewer) -> Result<Vec<String>, WebError> {
        Ok(vec![LOCAL_STORE.to_owned()])
    }

    fn read(
        &self,
        _viewer: &Viewer,
        store: &str,
        read: &mut dyn FnMut(&Engine),
    ) -> Result<(), WebError> {
        if store != LOCAL_STORE {
            return Err(WebError::new(
                axum::http::StatusCode::NOT_FOUND,
                "namespace_not_found",
                format!("no store {store:?} here (this view shows one store, {LOCAL_STORE:?})"),
            ));
        }
        self.storage
            .read_with(|engine| {
                read(engine);
                Ok::<(), gitloom_remote::RemoteError>(())
            })
            .map_err(WebError::internal)
    }
}

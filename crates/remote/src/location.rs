//! Where namespaces live: an `s3://bucket/prefix` URL, the object store it names, and
//! the object paths of one namespace under it.

use std::sync::Arc;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::error::{RemoteError, Result, storage};

/// A bucket and a prefix in it, opened.
#[derive(Clone)]
pub struct Location {
    url: String,
    pub(crate) store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Location").field("url", &self.url).finish()
    }
}

impl Location {
    /// Opens `s3://bucket/prefix`, configured from the standard AWS environment
    /// variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
    /// `AWS_ENDPOINT_URL` for S3-compatible servers, `AWS_ALLOW_HTTP=true` for a
    /// plain-http endpoint).
    pub fn from_url(url: &str) -> Result<Location> {
        Location::from_url_with(url, &[])
    }

    /// [`Location::from_url`] with settings that take precedence over the
    /// environment, by `object_store`'s S3 key names (`aws_endpoint`,
    /// `aws_allow_http`, `aws_region`, ...). An unknown key is an error.
    pub fn from_url_with(url: &str, overrides: &[(&str, &str)]) -> Result<Location> {
        let bad = |reason: &str| RemoteError::BadLocation {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let rest = url
            .strip_prefix("s3://")
            .ok_or_else(|| bad("only s3://bucket/prefix is supported"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("the bucket name is empty"));
        }
        crate::install_crypto_provider();
        let mut builder = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(bucket);
        for (key, value) in overrides {
            let key: object_store::aws::AmazonS3ConfigKey = key
                .parse()
                .map_err(|e: object_store::Error| bad(&format!("setting {key:?}: {e}")))?;
            builder = builder.with_config(key, *value);
        }
        let store = builder.build().map_err(|e| bad(&e.to_string()))?;
        Location::new(url, Arc::new(store), prefix)
    }

    /// A location over any object store (tests use [`object_store::memory::InMemory`]).
    pub fn new(url: &str, store: Arc<dyn ObjectStore>, prefix: &str) -> Result<Location> {
        let prefix = prefix.trim_matches('/');
        let prefix = ObjectPath::parse(prefix).map_err(|e| RemoteError::BadLocation {
            url: url.to_owned(),
            reason: format!("bad prefix {prefix:?}: {e}"),
        })?;
        Ok(Location {
            url: url.to_owned(),
            store,
            prefix,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The location `<prefix>/<sub>` in the same bucket: a server keeps each
    /// account's namespaces under `accounts/<account>`. `sub` is a relative path of
    /// plain segments (no `.`/`..`, no empty ones).
    pub fn within(&self, sub: &str) -> Result<Location> {
        let bad = |reason: &str| RemoteError::BadLocation {
            url: format!("{}/{sub}", self.url.trim_end_matches('/')),
            reason: reason.to_owned(),
        };
        let mut prefix = self.prefix.clone();
        for part in sub.split('/') {
            if part.is_empty() || part == "." || part == ".." {
                return Err(bad("a sub-location is made of plain, non-empty segments"));
            }
            let part = object_store::path::PathPart::parse(part)
                .map_err(|e| bad(&format!("bad segment {part:?}: {e}")))?;
            prefix = prefix.join(part);
        }
        Ok(Location {
            url: format!("{}/{sub}", self.url.trim_end_matches('/')),
            store: self.store.clone(),
            prefix,
        })
    }

    /// The object `<prefix>/<name>` (one plain segment), read and replaced by
    /// compare-and-swap.
    pub fn blob(&self, name: &str) -> Result<crate::Blob> {
        let part =
            object_store::path::PathPart::parse(name).map_err(|e| RemoteError::BadLocation {
                url: self.url.clone(),
                reason: format!("bad object name {name:?}: {e}"),
            })?;
        Ok(crate::Blob {
            location: self.clone(),
            path: self.prefix.clone().join(part),
        })
    }

    /// True when `namespace` has a head (has been created or written).
    pub fn namespace_exists(&self, namespace: &Namespace) -> Result<bool> {
        let head = self.path(namespace, "head.json");
        crate::block_on(crate::blob::exists(self.store.as_ref(), &head))
    }

    /// The namespaces here that have a head, by name.
    pub fn list_namespaces(&self) -> Result<Vec<Namespace>> {
        let root = self.prefix.clone().join("namespaces");
        let listing = crate::block_on(self.store.list_with_delimiter(Some(&root)))
            .map_err(storage(format!("listing {root}")))?;
        let mut out = Vec::new();
        for dir in listing.common_prefixes {
            // A directory whose first push never moved a head (a crash between the
            // pack and the head) is not a namespace.
            let Some(name) = dir.filename().and_then(|n| Namespace::parse(n).ok()) else {
                continue;
            };
            if self.namespace_exists(&name)? {
                out.push(name);
            }
        }
        out.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        Ok(out)
    }

    /// Deletes a namespace: its head first (so no reader is ever sent to a missing
    /// pack), then its packs. False when it had no head.
    pub fn delete_namespace(&self, namespace: &Namespace) -> Result<bool> {
        use futures_util::StreamExt;
        let head = self.path(namespace, "head.json");
        if !self.namespace_exists(namespace)? {
            return Ok(false);
        }
        crate::block_on(self.store.delete(&head)).map_err(storage(format!("deleting {head}")))?;
        let dir = self.path(namespace, "");
        let store = self.store.clone();
        crate::block_on(async move {
            let mut objects = store.list(Some(&dir));
            while let Some(meta) = objects.next().await {
                let meta = meta.map_err(storage(format!("listing {dir}")))?;
                match store.delete(&meta.location).await {
                    Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(storage(format!("deleting {}", meta.location))(e)),
                }
            }
            Ok(())
        })?;
        Ok(true)
    }

    /// Deletes everything under this location: each namespace as
    /// [`Location::delete_namespace`] does (head first, so no node is sent to a
    /// missing pack), then every other object (an account's usage records). Returns
    /// how many objects were deleted.
    pub fn delete_all(&self) -> Result<usize> {
        use futures_util::StreamExt;
        for ns in self.list_namespaces()? {
            self.delete_namespace(&ns)?;
        }
        let root = self.prefix.clone();
        let store = self.store.clone();
        crate::block_on(async move {
            let mut deleted = 0;
            let mut objects = store.list(Some(&root));
            while let Some(meta) = objects.next().await {
                let meta = meta.map_err(storage(format!("listing {root}")))?;
                match store.delete(&meta.location).await {
                    Ok(()) => deleted += 1,
                    Err(object_store::Error::NotFound { .. }) => {}
                    Err(e) => return Err(storage(format!("deleting {}", meta.location))(e)),
                }
            }
            Ok(deleted)
        })
    }

    /// The names of the objects directly under this location (not below it).
    pub fn list_objects(&self) -> Result<Vec<String>> {
        let root = self.prefix.clone();
        let listing = crate::block_on(self.store.list_with_delimiter(Some(&root)))
            .map_err(storage(format!("listing {root}")))?;
        let mut out: Vec<String> = listing
            .objects
            .iter()
            .filter_map(|o| o.location.filename().map(str::to_owned))
            .collect();
        out.sort();
        Ok(out)
    }

    /// Total size in bytes and count of the objects under this location.
    pub fn size(&self) -> Result<(u64, usize)> {
        use futures_util::StreamExt;
        let root = self.prefix.clone();
        let store = self.store.clone();
        crate::block_on(async move {
            let (mut bytes, mut count) = (0u64, 0usize);
            let mut objects = store.list(Some(&root));
            while let Some(meta) = objects.next().await {
                let meta = meta.map_err(storage(format!("listing {root}")))?;
                bytes += meta.size;
                count += 1;
            }
            Ok((bytes, count))
        })
    }

    /// `<prefix>/namespaces/<name>/<rest>`.
    pub(crate) fn path(&self, namespace: &Namespace, rest: &str) -> ObjectPath {
        let mut p = self.prefix.clone();
        for part in ["namespaces", namespace.as_str()] {
            p = p.join(part);
        }
        for part in rest.split('/').filter(|p| !p.is_empty()) {
            p = p.join(part);
        }
        p
    }
}

/// A namespace name: 1–64 of `[A-Za-z0-9._-]`, not starting with a dot, so it is a
/// safe single path segment both in the bucket and in a cache directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Namespace(String);

impl Namespace {
    pub fn parse(name: &str) -> Result<Namespace> {
        let bad = |reason: &str| RemoteError::BadNamespace {
            name: name.to_owned(),
            reason: reason.to_owned(),
        };
        if name.is_empty() || name.len() > 64 {
            return Err(bad("must be 1 to 64 characters"));
        }
        if name.starts_with('.') {
            return Err(bad("may not start with a dot"));
        }
        if let Some(c) = name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
        {
            return Err(bad(&format!(
                "{c:?} is not allowed (use letters, digits, '.', '_', '-')"
            )));
        }
        Ok(Namespace(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Namespace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_are_single_safe_segments() {
        assert!(Namespace::parse("team-a.v2_x").is_ok());
        for bad in ["", ".hidden", "a/b", "..", "a b", &"x".repeat(65)] {
            assert!(Namespace::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn only_s3_urls_are_accepted() {
        let err = Location::from_url("gs://bucket/p").expect_err("gs refused");
        assert!(err.to_string().contains("only s3://"), "{err}");
        let err = Location::from_url("s3:///p").expect_err("empty bucket refused");
        assert!(err.to_string().contains("bucket name is empty"), "{err}");
    }
}

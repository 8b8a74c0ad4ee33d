"""The API's error codes as exceptions.

The server answers every error with ``{"error": {"code", "message"}}`` and a stable
code; each code has a class here, grouped under the kind of failure, so callers can
catch as broadly (``GitloomError``, ``NotFound``) or as narrowly
(``NamespaceNotFound``) as they like. A code this client does not know yet raises the
class of its HTTP status, with the code kept in ``.code``.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Type


class GitloomError(Exception):
    """An error answered by the server (or the transport under it)."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "",
        status: Optional[int] = None,
        body: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.body = body or {}

    def __str__(self) -> str:
        where = f"{self.status} " if self.status else ""
        code = f"{self.code}: " if self.code else ""
        return f"{where}{code}{self.message}"


class TransportError(GitloomError):
    """The server could not be reached, or its answer was not the API's JSON."""


class BadRequest(GitloomError):
    """400: the request is at fault (parameters, path, name, revision, body)."""


class InvalidParams(BadRequest):
    pass


class InvalidPath(BadRequest):
    pass


class InvalidName(BadRequest):
    pass


class InvalidRequest(BadRequest):
    pass


class BadRevision(BadRequest):
    pass


class MalformedJson(BadRequest):
    pass


class UnsupportedMediaType(BadRequest):
    pass


class PayloadTooLarge(BadRequest):
    pass


class Unauthorized(GitloomError):
    """401: no valid API key."""


class NotFound(GitloomError):
    """404: the memory, namespace, job, op or route does not exist."""


class MemoryNotFound(NotFound):
    pass


class NamespaceNotFound(NotFound):
    pass


class JobNotFound(NotFound):
    pass


class UnknownOp(NotFound):
    pass


class NoSuchRoute(NotFound):
    pass


class MethodNotAllowed(GitloomError):
    pass


class Conflict(GitloomError):
    """409: another write got there first, or the work tree has edits."""


class NamespaceExists(Conflict):
    pass


class InvalidMemory(GitloomError):
    """422: the memory file does not parse (the message names the line)."""


class RateLimited(GitloomError):
    """429: too many requests for this key; ``retry_after`` is in seconds."""

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after = retry_after


class UpstreamFailed(GitloomError):
    """502: the embedding or chat model the server calls failed."""


class EmbeddingFailed(UpstreamFailed):
    pass


class ModelFailed(UpstreamFailed):
    pass


class Unavailable(GitloomError):
    """503: object storage failed or the namespace is too contended; retry later."""


class StorageUnavailable(Unavailable):
    pass


class Contended(Unavailable):
    pass


class ServerError(GitloomError):
    """500: the server failed."""


class Internal(ServerError):
    pass


#: Every code the API answers with, and its class.
CODES: Dict[str, Type[GitloomError]] = {
    "invalid_params": InvalidParams,
    "invalid_path": InvalidPath,
    "invalid_name": InvalidName,
    "invalid_request": InvalidRequest,
    "bad_revision": BadRevision,
    "malformed_json": MalformedJson,
    "unsupported_media_type": UnsupportedMediaType,
    "payload_too_large": PayloadTooLarge,
    "unauthorized": Unauthorized,
    "not_found": MemoryNotFound,
    "namespace_not_found": NamespaceNotFound,
    "job_not_found": JobNotFound,
    "unknown_op": UnknownOp,
    "no_such_route": NoSuchRoute,
    "method_not_allowed": MethodNotAllowed,
    "conflict": Conflict,
    "namespace_exists": NamespaceExists,
    "invalid_memory": InvalidMemory,
    "rate_limited": RateLimited,
    "embedding_failed": EmbeddingFailed,
    "model_failed": ModelFailed,
    "storage_unavailable": StorageUnavailable,
    "contended": Contended,
    "internal": Internal,
}

_BY_STATUS: Dict[int, Type[GitloomError]] = {
    400: BadRequest,
    401: Unauthorized,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: InvalidMemory,
    429: RateLimited,
    502: UpstreamFailed,
    503: Unavailable,
}

_RETRY_IN = re.compile(r"retry in ([0-9]+(?:\.[0-9]+)?)\s*s")


def retry_after(headers: Any, message: str) -> Optional[float]:
    """Seconds to wait before retrying: the ``Retry-After`` header, else what the
    message says (``retry in 0.25s``), else ``None``."""
    value = headers.get("retry-after") if headers is not None else None
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            pass
    m = _RETRY_IN.search(message or "")
    return float(m.group(1)) if m else None


def from_response(status: int, body: Any, headers: Any = None) -> GitloomError:
    """The exception for an error response."""
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        code = str(err.get("code", ""))
        message = str(err.get("message", ""))
    else:
        code, message = "", f"HTTP {status}: {body!r}"[:500]
    cls = CODES.get(code) or _BY_STATUS.get(status) or (
        ServerError if status >= 500 else GitloomError
    )
    kw: Dict[str, Any] = {"code": code, "status": status, "body": body if isinstance(body, dict) else None}
    if issubclass(cls, RateLimited):
        return cls(message, retry_after=retry_after(headers, message), **kw)
    return cls(message, **kw)

"""What the blocking and the asyncio clients share: configuration, how a request
is built, how an answer is read, and when to retry. Only the sending differs."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from typing import Any, Dict, Optional
from urllib.parse import quote

import httpx

from . import errors

DEFAULT_URL = "http://127.0.0.1:8080"


@dataclass
class Config:
    base_url: str
    api_key: Optional[str]
    timeout: float
    #: Retries of a request answered 429 (rate limited) before giving up.
    max_retries: int
    #: First backoff when the server names no wait; doubled on each retry.
    backoff: float
    #: Longest single wait between retries.
    max_backoff: float

    @staticmethod
    def make(
        base_url: Optional[str],
        api_key: Optional[str],
        timeout: float,
        max_retries: int,
        backoff: float,
        max_backoff: float,
    ) -> "Config":
        url = (base_url or os.environ.get("GITLOOM_URL") or DEFAULT_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("GITLOOM_API_KEY")
        if max_retries < 0:
            raise ValueError("max_retries must be at least 0")
        return Config(url, key, timeout, max_retries, backoff, max_backoff)

    def headers(self) -> Dict[str, str]:
        h = {"accept": "application/json", "user-agent": "gitloom-python/0.1"}
        if self.api_key:
            h["authorization"] = f"Bearer {self.api_key}"
        return h


def drop_none(params: Dict[str, Any]) -> Dict[str, Any]:
    """Parameters not given are left out, so the server's defaults apply."""
    return {k: v for k, v in params.items() if v is not None}


def segment(name: str) -> str:
    """A namespace name, op or job id as one URL path segment (the server validates
    what it means)."""
    if not name:
        raise errors.InvalidName("an empty name", code="invalid_name")
    return quote(name, safe="")


def read(response: httpx.Response) -> Any:
    """The API's ``result`` (or the whole body where there is none), or raises the
    error's exception."""
    try:
        body = response.json()
    except ValueError:
        raise errors.TransportError(
            f"{response.request.method} {response.request.url.path}: not JSON "
            f"(HTTP {response.status_code}): {response.text[:200]!r}",
            status=response.status_code,
        ) from None
    if response.status_code >= 400:
        raise errors.from_response(response.status_code, body, response.headers)
    if isinstance(body, dict) and "result" in body:
        return body["result"]
    return body


def retry_delay(config: Config, attempt: int, error: errors.RateLimited) -> Optional[float]:
    """How long to wait before retry ``attempt`` (0-based) of a rate-limited request,
    or ``None`` when the retries are spent. A server-named wait is honoured (plus a
    little jitter, so clients do not return in lockstep)."""
    if attempt >= config.max_retries:
        return None
    base = error.retry_after
    if base is None:
        base = config.backoff * (2**attempt)
    base = min(base, config.max_backoff)
    return base + random.uniform(0, base * 0.25 + 0.01)


def transport_error(e: httpx.HTTPError, method: str, path: str) -> errors.TransportError:
    return errors.TransportError(f"{method} {path}: {e}")
